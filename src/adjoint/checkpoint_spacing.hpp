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

}  // namespace diffphys::adjoint
