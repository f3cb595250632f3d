// adjoint/checkpoint_spacing.hpp — how far apart a rollout keeps its states, shared by the rigid
// Rollout (adjoint/rollout.cpp) and the world's schedule (world/schedule.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace diffphys::adjoint {

// `requested` when > 0; else every state (1) if the steps + 1 states of `state_bytes` each fit
// in `budget`, else ⌈√T⌉, doubled until the checkpoints plus one recomputed segment fit
// (Griewank's √T checkpointing; the last resort keeps a single checkpoint).
inline int checkpoint_spacing(int requested, int steps, std::size_t state_bytes, std::size_t budget) {
  if (requested > 0) return requested;
  const auto count = static_cast<std::size_t>(steps);
  if ((count + 1) * state_bytes <= budget) return 1;
  int interval = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(steps)))));
  while (interval < steps &&
         (count / static_cast<std::size_t>(interval) + 1 + static_cast<std::size_t>(interval)) * state_bytes > budget)
    interval *= 2;
  return interval;
}

// With the backward pass keeping the records of one recomputed segment (`record_bytes` per
// step), so that it re-runs each step once: the spacing k at which the checkpoints and one
// segment's records and states take the least memory,
//   (T/k + 1)·S + k·(R + S),  smallest at k = √(T·S / (R + S)),
// when that fits in `budget`; 0 when no spacing does (the backward pass must then re-run each
// step for its record, twice the forward work).
// The bytes of that layout at spacing `interval`: (⌈T/k⌉ + 1)·S + k·(R + S).
inline double segment_record_layout_bytes(int steps, int interval, std::size_t state_bytes, std::size_t record_bytes) {
  const double state = static_cast<double>(state_bytes);
  return (std::ceil(static_cast<double>(steps) / interval) + 1) * state +
         interval * (static_cast<double>(record_bytes) + state);
}

inline int checkpoint_spacing_with_records(int steps, std::size_t state_bytes, std::size_t record_bytes,
                                           std::size_t budget) {
  if (steps <= 1) return 1;
  const double state = static_cast<double>(state_bytes);
  const double per_segment_step = static_cast<double>(record_bytes) + state;
  const int interval =
      std::clamp(static_cast<int>(std::lround(std::sqrt(static_cast<double>(steps) * state / per_segment_step))), 1, steps);
  return segment_record_layout_bytes(steps, interval, state_bytes, record_bytes) <= static_cast<double>(budget) ? interval
                                                                                                                 : 0;
}

}  // namespace diffphys::adjoint
