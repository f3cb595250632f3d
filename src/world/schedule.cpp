// world/schedule.cpp — Schedule (schedule.hpp): the world's parts and couplings stepped in
// order, the tape of a rollout and its reverse. The memory policy is the rigid Rollout's
// (adjoint/rollout.cpp): the per-step logs (statuses, per-step norms) when they fit in a
// quarter of the budget, else only their summaries (a status recomputed on demand); in the
// rest, every state when they fit, else checkpoints spaced so that one segment's step records
// fit beside them (k = √(T·S/(R+S)) from the first step's records), else every ⌈√T⌉ steps
// (grown until they fit), each segment recomputed in the backward pass; each step's records
// kept when the whole run's fit beside the states (estimated from the first step), else one
// segment's, else each step re-run just before it is reversed.
#include "world/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "adjoint/checkpoint_spacing.hpp"
#include "diffphys/error.hpp"
#include "math/finite.hpp"
#include "world/coupling_kind.hpp"
#include "world/part_kind.hpp"
#include "world/rigid_part.hpp"

namespace diffphys::world {
namespace {

// The parts a world holds, in the order they step (the registry's, world/part_kind.hpp), and
// the couplings between them (world/coupling_kind.hpp).
void make_parts(const World& world, std::vector<std::unique_ptr<Part>>& parts, std::vector<std::unique_ptr<Coupling>>& couplings) {
  for (const WorldLayout::PartRange& range : world.layout().parts) parts.push_back(kind_of(range).make_part(world));
  for (const CouplingKind& kind : coupling_kinds())
    if (kind.held_by(world)) kind.make(world, parts, couplings);
}

// The loss's and the controller's view of a tangent vector: each held kind's spans of its range.
WorldStateGradient gradient_view(const World& world, std::span<double> tangent) {
  const std::span<double> none = tangent.first(0);
  WorldStateGradient gradient{tangent, none, none, none, none, none};
  for (const WorldLayout::PartRange& range : world.layout().parts)
    kind_of(range).view_gradient(world, tangent.subspan(static_cast<std::size_t>(range.tangent_offset), static_cast<std::size_t>(range.tangent_size)),
                                 gradient);
  return gradient;
}

}  // namespace

Schedule::Schedule(const World& world, const WorldParams& params, RolloutOptions options)
    : world_(world), params_(params), options_(options) {
  if (!(options_.gradient_decay > 0 && options_.gradient_decay <= 1))
    throw Error(message("world rollout: gradient_decay must lie in (0, 1], got ", options_.gradient_decay));
  if (!(options_.gradient_clip >= 0))
    throw Error(message("world rollout: gradient_clip must be non-negative, got ", options_.gradient_clip));
  if (options_.checkpoint_interval < 0)
    throw Error(message("world rollout: checkpoint_interval must be non-negative, got ", options_.checkpoint_interval));
  make_parts(world_, parts_, couplings_);
  for (std::size_t i = 0; i < parts_.size(); ++i)
    parts_[i]->configure(std::any_of(couplings_.begin(), couplings_.end(),
                                       [&](const auto& c) { return c->target() == static_cast<int>(i); }),
                         options_);
  lagged_ = std::any_of(couplings_.begin(), couplings_.end(), [](const auto& c) { return c->lags(); });
}

Schedule::~Schedule() = default;

void Schedule::begin_parts(WorldState& initial, int steps, bool keep_logs) {
  for (const auto& part : parts_) part->begin(params_, initial, steps, keep_logs);
  for (const auto& coupling : couplings_) coupling->begin(params_, initial);
}

void Schedule::forward_step(const WorldState& before, const WorldState* previous, WorldState& after,
                            std::span<const double> controls, int slot, int status_step) const {
  const StepInputs in{before, lagged_ ? previous : nullptr, after, controls};
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    parts_[i]->reset_step_params(slot);
    for (const auto& coupling : couplings_)
      if (coupling->target() == static_cast<int>(i)) coupling->apply(in, slot);
    parts_[i]->step(in, slot, status_step);
  }
  after.time = parts_.back()->time(after);
}

std::size_t Schedule::state_bytes(const WorldState& state) const {
  std::size_t bytes = 0;
  for (const auto& part : parts_) bytes += part->state_bytes(state);
  return bytes;
}

std::size_t Schedule::record_bytes(int slot) const {
  std::size_t bytes = 0;
  for (const auto& part : parts_) bytes += part->record_bytes(slot);
  return bytes;
}

std::size_t Schedule::stored_state_bytes() const {
  if (checkpoints_.empty()) return 0;
  // Lagged: the state before every checkpoint but the first (x_0 has none).
  const std::size_t previous = lagged_ && !checkpoint_previous_.empty() ? checkpoint_previous_.size() - 1 : 0;
  return (checkpoints_.size() + previous) * state_bytes(checkpoints_.front());
}

void Schedule::begin(WorldState& state) {
  begin_parts(state, 0, true);
  simulated_any_ = false;
}

WorldStepStatus Schedule::step(WorldState& state, std::span<const double> controls) {
  forward_step(state, simulated_any_ ? &simulated_previous_ : nullptr, scratch_after_, controls, kScratchSlot, kStatusOnly);
  std::swap(simulated_previous_, state);  // x_t becomes x_{t−1}
  std::swap(state, scratch_after_);
  simulated_any_ = true;
  WorldStepStatus status;
  for (const auto& part : parts_) part->fill_status(0, status);
  return status;
}

std::span<const Contact> Schedule::rigid_contacts() const {
  for (const auto& part : parts_)
    if (const auto* rigid = dynamic_cast<const RigidPart*>(part.get())) return rigid->contacts();
  return {};
}

std::span<const double> Schedule::step_controls(int step) const {
  if (!controls_given_) return {};
  const auto per_step = static_cast<std::size_t>(world_.layout().control_count);
  return std::span<const double>(controls_).subspan(static_cast<std::size_t>(step) * per_step, per_step);
}

void Schedule::run(const WorldState& initial, std::span<const double> controls, int steps, WorldController* controller) {
  const WorldLayout& layout = world_.layout();
  const auto per_step = static_cast<std::size_t>(layout.control_count);
  const auto count = static_cast<std::size_t>(steps);
  controller_ = controller;
  steps_ = steps;
  controls_given_ = !controls.empty() || controller != nullptr;
  if (!controls.empty()) {
    controls_.assign(controls.begin(), controls.end());
  } else {
    // The controls as used: a controller's (filled below), or the scene's defaults held.
    const std::vector<double> defaults = world_.default_controls();
    controls_.resize(count * per_step);
    for (std::size_t t = 0; t < count; ++t)
      std::copy(defaults.begin(), defaults.end(), controls_.begin() + static_cast<std::ptrdiff_t>(t * per_step));
  }
  // The per-step logs when they fit in a quarter of the budget; the rest of it is the tape's.
  std::size_t log_bytes = 0;
  for (const auto& part : parts_) log_bytes += part->log_bytes_per_step();
  logs_kept_ = count * log_bytes <= options_.memory_budget / 4;
  tape_budget_ = options_.memory_budget - (logs_kept_ ? count * log_bytes : 0);
  WorldState current = initial;
  begin_parts(current, steps, logs_kept_);

  // Checkpoint spacing: every state if all fit, else ⌈√T⌉ (grown until the budget holds),
  // revised after the first step from the size of its records (below).
  const std::size_t bytes = state_bytes(current) * (lagged_ ? 2 : 1);
  interval_ = adjoint::checkpoint_spacing(options_.checkpoint_interval, steps, bytes, tape_budget_);
  const auto checkpoint_count = [&] {
    return steps == 0 ? std::size_t{1} : (count + static_cast<std::size_t>(interval_) - 1) / static_cast<std::size_t>(interval_);
  };
  checkpoints_.resize(checkpoint_count());
  checkpoint_previous_.resize(lagged_ ? checkpoint_count() : 0);
  const std::size_t state_storage = (count / static_cast<std::size_t>(interval_) + 1) * bytes;
  records_kept_ = options_.keep_step_records && interval_ == 1 && steps > 0;
  record_bytes_ = 0;
  largest_record_bytes_ = 0;

  WorldState previous, next;
  std::size_t checkpoint = 0;
  for (int t = 0; t < steps; ++t) {
    const auto i = static_cast<std::size_t>(t);
    if (i % static_cast<std::size_t>(interval_) == 0) {
      if (lagged_) checkpoint_previous_[checkpoint] = t > 0 ? previous : WorldState{};
      checkpoints_[checkpoint++] = current;
    }
    if (controller_ != nullptr) {
      const std::span<double> row = std::span<double>(controls_).subspan(i * per_step, per_step);
      std::fill(row.begin(), row.end(), 0.0);
      controller_->act(t, current, row);
      for (std::size_t k = 0; k < per_step; ++k)
        if (!std::isfinite(row[k])) {
          const int within = static_cast<int>(k);
          const auto slice = std::find_if(layout.controls.begin(), layout.controls.end(), [&](const NamedSlice& s) {
            return within >= s.offset && within < s.offset + s.size;
          });
          throw Error(message("world rollout: the controller returned a non-finite control ", row[k], " for '", slice->name,
                              "'[", within - slice->offset, "] at step ", t));
        }
    }
    const int slot = records_kept_ ? t : kScratchSlot;
    if (records_kept_)
      for (const auto& part : parts_) part->reserve_records(t + 1);
    forward_step(current, t > 0 ? &previous : nullptr, next, step_controls(t), slot, t);
    if (t == 0 && options_.checkpoint_interval == 0 && interval_ > 1 && options_.keep_step_records) {
      // The states do not all fit: space the checkpoints so that one segment's records fit
      // beside them (estimated from this step's, with room for contacts to come), so that
      // the backward pass re-runs each step once rather than twice.
      const int spacing = adjoint::checkpoint_spacing_with_records(steps, bytes, record_bytes(slot) / 4 * 5, tape_budget_);
      if (spacing > 0 && spacing != interval_) {
        interval_ = spacing;
        checkpoints_.resize(checkpoint_count());
        checkpoint_previous_.resize(lagged_ ? checkpoint_count() : 0);
      }
    }
    if (records_kept_) {
      const std::size_t now = record_bytes(t);
      record_bytes_ += now;
      largest_record_bytes_ = std::max(largest_record_bytes_, now);
      // After the first step, the whole run's records are estimated from it (with room for
      // contacts to come): if they would not fit, none are kept.
      const std::size_t projected = t == 0 ? now * count / 4 * 5 : record_bytes_;
      if (state_storage + projected > tape_budget_) {
        records_kept_ = false;
        record_bytes_ = 0;
        for (const auto& part : parts_) part->release_records();
      }
    }
    std::swap(previous, current);
    std::swap(current, next);
  }
  if (!records_kept_ && steps > 0) largest_record_bytes_ = std::max(largest_record_bytes_, record_bytes(kScratchSlot));
  if (steps == 0) checkpoints_[0] = current;
  final_state_ = std::move(current);
}

void Schedule::recompute(int t, WorldState& current, WorldState& previous) const {
  const auto checkpoint = static_cast<std::size_t>(t / interval_);
  current = checkpoints_[checkpoint];
  previous = lagged_ ? checkpoint_previous_[checkpoint] : WorldState{};
  WorldState next;
  for (int s = static_cast<int>(checkpoint) * interval_; s < t; ++s) {
    forward_step(current, s > 0 ? &previous : nullptr, next, step_controls(s), kScratchSlot, kNoStatus);
    std::swap(previous, current);
    std::swap(current, next);
  }
}

WorldState Schedule::state(int t) const {
  if (t < 0 || t > steps_) throw Error(message("world rollout: step ", t, " outside [0, ", steps_, "]"));
  if (t == steps_) return final_state_;
  WorldState current, previous;
  recompute(t, current, previous);
  return current;
}

WorldStepStatus Schedule::status(int t) const {
  if (t < 0 || t >= steps_) throw Error(message("world rollout: step ", t, " outside [0, ", steps_, ")"));
  if (!logs_kept_) {
    // Step t again from its checkpoint, its status kept as the parts' latest.
    WorldState current, previous, next;
    recompute(t, current, previous);
    forward_step(current, t > 0 ? &previous : nullptr, next, step_controls(t), kScratchSlot, kStatusOnly);
  }
  WorldStepStatus status;
  for (const auto& part : parts_) part->fill_status(t, status);
  return status;
}

bool Schedule::converged() const {
  return std::all_of(parts_.begin(), parts_.end(), [](const auto& part) { return part->converged(); });
}

WorldGradients Schedule::backward(const WorldLossGradient& loss_gradient, bool parameter_gradients) const {
  const WorldLayout& layout = world_.layout();
  const auto tangent = static_cast<std::size_t>(layout.tangent_size);
  const auto per_step = static_cast<std::size_t>(layout.control_count);
  WorldGradients result;
  result.controls.assign(static_cast<std::size_t>(steps_) * per_step, 0.0);
  result.params.assign(static_cast<std::size_t>(layout.param_count), 0.0);
  result.per_step_kept = logs_kept_;
  for (const auto& part : parts_) part->begin_backward(steps_, result);
  const auto slice_of = [](const Part& part, std::span<double> values) {
    return values.subspan(static_cast<std::size_t>(part.tangent_offset()), static_cast<std::size_t>(part.tangent_size()));
  };

  // x̄_t once every step after t is reversed: the loss's dL/dx_t added (the static rows of
  // both zeroed), then each part's slice clipped to gradient_clip in norm and its norm noted.
  std::vector<double> loss(tangent, 0.0);
  const auto finish_state_adjoint = [&](int t, const WorldState& state, std::vector<double>& adjoint) {
    std::fill(loss.begin(), loss.end(), 0.0);
    if (loss_gradient) {
      WorldStateGradient gradient = gradient_view(world_, loss);
      loss_gradient(t, state, gradient);
    }
    for (const auto& part : parts_) {
      if (!all_finite(slice_of(*part, loss))) part->note_non_finite(t, "loss gradient", result);
      part->mask_state_adjoint(loss);
      part->mask_state_adjoint(adjoint);
    }
    for (std::size_t k = 0; k < tangent; ++k) adjoint[k] += loss[k];
    for (const auto& part : parts_) {
      const std::span<double> mine = slice_of(*part, adjoint);
      double squared = 0.0;
      for (const double v : mine) squared += v * v;
      double norm = std::sqrt(squared);
      const bool clipped = options_.gradient_clip > 0 && norm > options_.gradient_clip;
      if (clipped) {
        for (double& v : mine) v *= options_.gradient_clip / norm;
        norm = options_.gradient_clip;
      }
      part->note_state_adjoint(t, norm, clipped, result);
    }
  };

  std::vector<double> adjoint(tangent, 0.0), before(tangent, 0.0), carry_in(tangent, 0.0), carry_out(tangent, 0.0);
  finish_state_adjoint(steps_, final_state_, adjoint);
  // Reverses world step t (x_t → x_{t+1}, the parts' records in `slot`) and finishes x̄_t.
  const auto reverse_step = [&](int t, const WorldState& state_t, const WorldState* previous, const WorldState& state_next, int slot) {
    const auto i = static_cast<std::size_t>(t);
    std::copy(carry_in.begin(), carry_in.end(), before.begin());  // x̄_t from step t + 1's lagged couplings
    std::fill(carry_out.begin(), carry_out.end(), 0.0);
    const std::span<double> controls_bar = std::span<double>(result.controls).subspan(i * per_step, per_step);
    const StepAdjoints out{state_t,
                           lagged_ && t > 0 ? previous : nullptr,
                           state_next,
                           std::span<const double>(controls_).subspan(i * per_step, per_step),
                           adjoint,
                           before,
                           t > 0 ? std::span<double>(carry_out) : std::span<double>(),
                           controls_bar,
                           result.params};
    for (std::size_t p = parts_.size(); p-- > 0;) {
      const std::span<double> step_param_bar = parts_[p]->step_vjp(out, t, slot);
      for (std::size_t c = couplings_.size(); c-- > 0;)
        if (couplings_[c]->target() == static_cast<int>(p)) couplings_[c]->apply_vjp(out, slot, step_param_bar);
      parts_[p]->add_param_adjoint(step_param_bar, result.params);
    }
    // Closed loop: u_t = π(x_t), so ū_t also reaches x_t through the controller.
    if (controller_ != nullptr) {
      WorldStateGradient gradient = gradient_view(world_, before);
      controller_->act_backward(t, state_t, controls_bar, gradient);
      for (const auto& part : parts_)
        if (!all_finite(slice_of(*part, before))) part->note_non_finite(t, "controller", result);
    }
    if (options_.gradient_decay != 1.0)
      for (double& v : before) v *= options_.gradient_decay;
    std::swap(adjoint, before);
    std::swap(carry_in, carry_out);
    finish_state_adjoint(t, state_t, adjoint);
  };

  if (records_kept_) {
    // Every state and every step's records were kept: no step is re-run.
    for (int t = steps_ - 1; t >= 0; --t) {
      const auto i = static_cast<std::size_t>(t);
      const WorldState& next = t + 1 < steps_ ? checkpoints_[i + 1] : final_state_;
      reverse_step(t, checkpoints_[i], t > 0 ? &checkpoints_[i - 1] : nullptr, next, t);
    }
  } else {
    // Segment by segment: recompute the segment's states from its checkpoint, keeping each
    // step's records when a segment's worth fits half the budget, else re-run each step for
    // its records just before reversing it.
    const bool segment_records =
        options_.keep_step_records && interval_ > 1 &&
        adjoint::segment_record_layout_bytes(steps_, interval_, state_bytes(checkpoints_.front()) * (lagged_ ? 2 : 1),
                                             largest_record_bytes_) <= static_cast<double>(tape_budget_);
    if (segment_records)
      for (const auto& part : parts_) part->reserve_records(interval_);
    std::vector<WorldState> segment;
    WorldState segment_previous, next;
    for (int start = ((steps_ - 1) / interval_) * interval_; start >= 0 && steps_ > 0; start -= interval_) {
      const auto checkpoint = static_cast<std::size_t>(start / interval_);
      const int end = std::min(start + interval_, steps_);
      segment.assign(1, checkpoints_[checkpoint]);
      segment_previous = lagged_ ? checkpoint_previous_[checkpoint] : WorldState{};
      // The state before x_t: x_{t−1} within the segment, the checkpoint's previous at its start.
      const auto previous_of = [&](int t) -> const WorldState* {
        if (t == 0) return nullptr;
        return t == start ? &segment_previous : &segment[static_cast<std::size_t>(t - 1 - start)];
      };
      const int recomputed_end = segment_records ? end : end - 1;
      for (int t = start; t < recomputed_end; ++t) {
        next = segment.back();
        forward_step(segment[static_cast<std::size_t>(t - start)], previous_of(t), next, step_controls(t),
                     segment_records ? t - start : kScratchSlot, kNoStatus);
        segment.push_back(next);
      }
      for (int t = end - 1; t >= start; --t) {
        const WorldState& state_t = segment[static_cast<std::size_t>(t - start)];
        if (segment_records) {
          reverse_step(t, state_t, previous_of(t), segment[static_cast<std::size_t>(t + 1 - start)], t - start);
        } else {
          forward_step(state_t, previous_of(t), next, step_controls(t), kScratchSlot, kNoStatus);
          reverse_step(t, state_t, previous_of(t), next, kScratchSlot);
        }
      }
    }
  }
  result.initial_state = adjoint;
  for (const auto& part : parts_) part->finish_backward(result.initial_state, result);
  if (!parameter_gradients) result.params.clear();
  return result;
}

}  // namespace diffphys::world
