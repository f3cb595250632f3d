// adjoint/rollout.cpp — the Rollout of diffphys/rollout.hpp: forward with checkpoints, and
// the backward sweep segment by segment (recompute the segment's states from its
// checkpoint, then reverse its steps one by one through step_vjp).
#include "diffphys/rollout.hpp"

#include <algorithm>
#include <cmath>

#include "adjoint/checkpoint_spacing.hpp"
#include "adjoint/rollout_health.hpp"
#include "adjoint/step_vjp.hpp"
#include "diffphys/error.hpp"
#include "math/finite.hpp"
#include "rigid/articulated.hpp"
#include "rigid/step_solution.hpp"
#include "rigid/step_workspace.hpp"

namespace diffphys {
namespace {

std::size_t state_bytes(const State& state) {
  return state.position.size() * (sizeof(Vec3) * 3 + sizeof(Quat)) + sizeof(State);
}

}  // namespace

std::span<const double> Gradients::param(const Model& model, std::string_view name) const {
  const int index = model.layout.index(name);
  if (params.empty())
    throw Error(message("no gradient for '", name, "': the rollout ran with RolloutOptions::parameter_gradients off"));
  const auto& slice = model.layout.slices[static_cast<std::size_t>(index)];
  return {params.data() + slice.offset, static_cast<std::size_t>(slice.size)};
}

Rollout::Rollout(const Model& model, const Params& params, RolloutOptions options)
    : model_(model), params_(params), options_(options) {
  model_.solver.warm_start = false;
  validate_params(model_, params_);
  if (model_.solver.coordinates == Coordinates::Reduced) rigid::validate_reduced_coordinates(model_);
  if (!(options_.gradient_decay > 0 && options_.gradient_decay <= 1))
    throw Error(message("rollout: gradient_decay must lie in (0, 1], got ", options_.gradient_decay));
  if (!(options_.gradient_clip >= 0))
    throw Error(message("rollout: gradient_clip must be non-negative, got ", options_.gradient_clip));
  if (options_.checkpoint_interval < 0)
    throw Error(message("rollout: checkpoint_interval must be non-negative, got ", options_.checkpoint_interval));
}

std::span<const StepStatus> Rollout::statuses() const {
  if (!logs_kept_)
    throw Error(message("rollout: the statuses of these ", steps_, " steps were not kept (", kRolloutLogBytesPerStep,
                        " bytes a step would exceed a quarter of RolloutOptions::memory_budget = ", options_.memory_budget,
                        " bytes): read status(t), which recomputes step t, or converged()"));
  return statuses_;
}

StepStatus Rollout::status(int t) const {
  if (t < 0 || t >= steps_) throw Error(message("rollout: step ", t, " out of range [0, ", steps_, ")"));
  if (logs_kept_) return statuses_[static_cast<std::size_t>(t)];
  const State state_t = state(t);
  State next = state_t;
  Workspace workspace;
  const auto actuators = static_cast<std::size_t>(model_.actuator_count());
  return step(model_, params_, state_t,
              std::span<const double>(controls_).subspan(static_cast<std::size_t>(t) * actuators, actuators), next,
              workspace);
}

std::size_t Rollout::stored_state_bytes() const {
  return checkpoints_.empty() ? 0 : checkpoints_.size() * state_bytes(checkpoints_.front());
}

void Rollout::run(const State& initial, std::span<const double> controls, int steps) {
  controller_ = nullptr;
  forward(initial, controls, steps);
}

void Rollout::run(const State& initial, Controller& controller, int steps) {
  controller_ = &controller;
  forward(initial, {}, steps);
}

void Rollout::forward(const State& initial, std::span<const double> controls, int steps) {
  validate_state(model_, initial);
  if (steps < 0) throw Error(message("rollout: steps must be non-negative, got ", steps));
  const auto actuators = static_cast<std::size_t>(model_.actuator_count());
  const auto total_steps = static_cast<std::size_t>(steps);
  if (!controls.empty() && controls.size() != total_steps * actuators)
    throw Error(message("rollout: ", controls.size(), " controls given, expected steps × actuators = ", steps, " × ",
                        actuators));
  steps_ = steps;
  controls_.assign(total_steps * actuators, 0.0);
  if (!controls.empty()) std::copy(controls.begin(), controls.end(), controls_.begin());
  // The per-step logs when they fit in a quarter of the budget; the rest of it is the states'.
  logs_kept_ = total_steps * kRolloutLogBytesPerStep <= options_.memory_budget / 4;
  state_budget_ = options_.memory_budget - (logs_kept_ ? total_steps * kRolloutLogBytesPerStep : 0);
  const std::size_t budget = state_budget_;
  // Checkpoint spacing: every state if all fit, else ⌈√T⌉ (grown until the budget holds),
  // revised after the first step from the size of its record (below).
  const std::size_t bytes = state_bytes(initial);
  interval_ = adjoint::checkpoint_spacing(options_.checkpoint_interval, steps, bytes, budget);
  // The checkpoints' States are kept from run to run and assigned, so that a Rollout run
  // again (an optimisation loop) reuses their buffers instead of allocating 4 per state.
  const auto interval = static_cast<std::size_t>(interval_);
  checkpoints_.resize(steps == 0 ? 1 : (total_steps + interval - 1) / interval);
  std::size_t checkpoint = 0;
  if (logs_kept_) {
    statuses_.assign(total_steps, StepStatus{});
    contact_changes_.clear();
    contact_changes_.reserve(total_steps);  // no allocation in the loop; capacity kept from run to run
  } else {
    std::vector<StepStatus>().swap(statuses_);
    std::vector<int>().swap(contact_changes_);
  }
  contact_change_count_ = 0;
  all_converged_ = true;
  first_unhealthy_step_ = -1;
  std::uint64_t previous_signature = 0;
  // Step records: each step's solution (λ, v⁺), appended to one buffer whose capacity later
  // runs reuse; with keep_step_workspaces also one Workspace per step, reused by later runs
  // (no allocation once grown) and dropped as soon as they outgrow the budget beside the states.
  const std::size_t state_storage = (total_steps / static_cast<std::size_t>(interval_) + 1) * bytes;
  records_kept_ = options_.keep_step_records && options_.keep_step_workspaces && interval_ == 1 && steps > 0;
  record_bytes_ = 0;
  largest_solution_bytes_ = 0;
  if (records_.size() > total_steps) records_.resize(total_steps);  // grown one step at a time below
  solutions_kept_ = options_.keep_step_records && interval_ == 1 && steps > 0;
  solutions_.clear();  // keeps its capacity: later runs do not allocate
  solution_start_.assign(1, 0);
  State current = initial, next = initial;
  Workspace workspace;
  for (int t = 0; t < steps; ++t) {
    if (t % interval_ == 0) checkpoints_[checkpoint++] = current;
    const std::span<double> controls_t = std::span<double>(controls_).subspan(static_cast<std::size_t>(t) * actuators, actuators);
    if (controller_ != nullptr) {
      controller_->act(t, current, controls_t);
      for (std::size_t a = 0; a < actuators; ++a)
        if (!std::isfinite(controls_t[a]))
          throw Error(message("rollout: the controller returned a non-finite control ", controls_t[a], " for actuator '",
                              model_.actuators[a].name, "' at step ", t));
    }
    if (records_kept_ && records_.size() <= static_cast<std::size_t>(t)) records_.emplace_back();
    Workspace* step_workspace_at = records_kept_ ? &records_[static_cast<std::size_t>(t)] : &workspace;
    const StepStatus status = step(model_, params_, current, controls_t, next, *step_workspace_at);
    if (t == 0) {
      // A problem of joint rows only is never replayed (its solve also factorises the joint
      // projection): such a rollout's records are Workspaces, step 0's the one just written.
      workspace_records_ = options_.keep_step_workspaces || step_workspace_at->impl().joint_factorization_valid;
      if (!records_kept_ && workspace_records_ && options_.keep_step_records && interval_ == 1) {
        records_kept_ = true;
        if (records_.empty()) records_.emplace_back();
        std::swap(records_[0], workspace);
        step_workspace_at = &records_[0];
      }
    }
    Workspace& step_workspace = *step_workspace_at;
    if (logs_kept_) statuses_[static_cast<std::size_t>(t)] = status;
    all_converged_ = all_converged_ && status.converged;
    if (status.health != StateHealth::Ok && first_unhealthy_step_ < 0) {
      first_unhealthy_step_ = t + 1;
      first_unhealthy_status_ = status;
    }
    const std::uint64_t signature = adjoint::contact_signature(step_workspace.contacts());
    if (t > 0 && signature != previous_signature) {
      ++contact_change_count_;
      if (logs_kept_) contact_changes_.push_back(t);
    }
    previous_signature = signature;
    const std::size_t solution_bytes = rigid::solution_bytes(step_workspace.impl());
    largest_solution_bytes_ = std::max(largest_solution_bytes_, solution_bytes);
    if (t == 0 && options_.checkpoint_interval == 0 && interval_ > 1 && options_.keep_step_records) {
      // The states do not all fit: space the checkpoints so that one segment's records fit
      // beside them (estimated from this step's, with room for contacts to come), so that
      // the backward pass re-runs each step once, with its solve, rather than twice.
      // (Joint coordinates record Workspaces: their steps have no solution to replay.)
      const std::size_t record = workspace_records_ || model_.solver.coordinates == Coordinates::Reduced
                                     ? workspace_bytes(step_workspace.impl())
                                     : solution_bytes;
      const int spacing = adjoint::checkpoint_spacing_with_records(steps, bytes, record / 4 * 5, budget);
      if (spacing > 0 && spacing != interval_) {
        interval_ = spacing;
        checkpoints_.resize((total_steps + static_cast<std::size_t>(interval_) - 1) / static_cast<std::size_t>(interval_));
      }
    }
    if (solutions_kept_) {
      // From the first step, the whole run's solutions are estimated (with room for contacts
      // to come); kept only when they fit in half the budget beside the states.
      if (t == 0 && state_storage + solution_bytes * total_steps / 4 * 5 > budget / 2) {
        solutions_kept_ = false;
      } else {
        solution_start_.push_back(rigid::append_solution(step_workspace.impl(), solutions_));
        if (state_storage + solutions_.capacity() * sizeof(double) > budget / 2) {
          solutions_kept_ = false;
          std::vector<double>().swap(solutions_);
        }
      }
    }
    if (records_kept_) {
      // A step in joint coordinates keeps a record of the same size every step (no contacts).
      const std::size_t bytes_now = t > 0 && model_.solver.coordinates == Coordinates::Reduced
                                        ? largest_record_bytes_
                                        : workspace_bytes(step_workspace.impl());
      record_bytes_ += bytes_now;
      largest_record_bytes_ = std::max(largest_record_bytes_, bytes_now);
      // After the first step, the whole run's records are estimated from it (with room for
      // contacts to come): if they would not fit, none are kept rather than growing memory
      // up to the budget and dropping them.
      const std::size_t projected = t == 0 ? bytes_now * total_steps / 4 * 5 : record_bytes_;
      if (state_storage + projected > budget) {
        records_kept_ = false;
        record_bytes_ = 0;
        std::vector<Workspace>().swap(records_);
      }
    }
    std::swap(current, next);
  }
  if (!records_kept_) largest_record_bytes_ = std::max(largest_record_bytes_, workspace_bytes(workspace.impl()));
  if (steps == 0) checkpoints_[0] = current;
  final_state_ = current;
}

State Rollout::state(int t) const {
  if (t < 0 || t > steps_) throw Error(message("rollout: step ", t, " out of range [0, ", steps_, "]"));
  if (t == steps_) return final_state_;
  const int checkpoint = t / interval_;
  State current = checkpoints_[static_cast<std::size_t>(checkpoint)], next = current;
  const auto actuators = static_cast<std::size_t>(model_.actuator_count());
  Workspace workspace;
  for (int s = checkpoint * interval_; s < t; ++s) {
    step(model_, params_, current, std::span<const double>(controls_).subspan(static_cast<std::size_t>(s) * actuators, actuators),
         next, workspace);
    std::swap(current, next);
  }
  return current;
}

Gradients Rollout::backward(const LossGradient& loss_gradient) const {
  const auto bodies = static_cast<std::size_t>(model_.body_count());
  const std::size_t tangent = kStateTangentPerBody * bodies;
  const auto actuators = static_cast<std::size_t>(model_.actuator_count());
  Gradients gradients;
  gradients.controls.assign(static_cast<std::size_t>(steps_) * actuators, 0.0);
  // Without parameter gradients the joint-coordinate VJP gets an empty span and skips them;
  // the maximal one writes into a scratch vector that is dropped.
  const bool reduced = model_.solver.coordinates == Coordinates::Reduced;
  std::vector<double> discarded_params;
  if (options_.parameter_gradients)
    gradients.params.assign(static_cast<std::size_t>(model_.param_count()), 0.0);
  else if (!reduced)
    discarded_params.assign(static_cast<std::size_t>(model_.param_count()), 0.0);
  const std::span<double> param_adjoint = options_.parameter_gradients ? std::span<double>(gradients.params)
                                                                      : std::span<double>(discarded_params);
  GradientHealth& health = gradients.health;
  health.per_step_kept = logs_kept_;
  if (logs_kept_) {
    health.state_gradient_norm.assign(static_cast<std::size_t>(steps_) + 1, 0.0);
    health.stage_gain.assign(reduced ? 0 : static_cast<std::size_t>(steps_), {0.0, 0.0, 0.0});
    health.contact_changes = contact_changes_;
  }
  health.contact_change_count = contact_change_count_;
  health.solver_converged = all_converged_;
  if (first_unhealthy_step_ >= 0) {
    health.first_unhealthy_step = first_unhealthy_step_;
    health.state_health_message = health_message(model_, first_unhealthy_status_);
  }
  adjoint::note_not_differentiable(model_, params_, gradients.not_differentiable);
  const auto zero_static_rows = [&](std::vector<double>& x) {
    for (std::size_t b = 0; b < bodies; ++b)
      if (model_.bodies[b].type == BodyType::Static)
        std::fill_n(x.begin() + static_cast<std::ptrdiff_t>(kStateTangentPerBody * b), kStateTangentPerBody, 0.0);
  };

  std::vector<double> adjoint(tangent, 0.0), previous(tangent, 0.0);
  const auto note_non_finite = [&](int t, const char* stage) {
    if (health.first_non_finite_step < 0) {
      health.first_non_finite_step = t;
      health.first_non_finite_stage = stage;
    }
  };
  // x̄_t: the user's dL/dx_t, decay, clipping, bookkeeping.
  std::vector<double> loss(tangent, 0.0);
  const auto finish_state_adjoint = [&](int t, const State& state, std::vector<double>& x) {
    std::fill(loss.begin(), loss.end(), 0.0);
    loss_gradient(t, state, loss);
    if (!all_finite(loss)) note_non_finite(t, "loss gradient");
    zero_static_rows(loss);
    zero_static_rows(x);
    double squared = 0.0;
    for (std::size_t k = 0; k < tangent; ++k) {
      x[k] += loss[k];
      squared += x[k] * x[k];
    }
    double norm_value = std::sqrt(squared);
    if (options_.gradient_clip > 0 && norm_value > options_.gradient_clip) {
      for (double& v : x) v *= options_.gradient_clip / norm_value;
      norm_value = options_.gradient_clip;
      ++health.clipped_steps;
    }
    if (logs_kept_) health.state_gradient_norm[static_cast<std::size_t>(t)] = norm_value;
    health.largest_state_gradient_norm = std::max(health.largest_state_gradient_norm, norm_value);
  };

  finish_state_adjoint(steps_, final_state_, adjoint);
  adjoint::StepVjpWorkspace vjp;
  // Reverses step t (x_t → x_{t+1}, its record in `record`) and finishes x̄_t.
  const auto reverse_step = [&](int t, const State& state_t, const Workspace& record, const State& state_next) {
    const std::span<const double> controls_t =
        std::span<const double>(controls_).subspan(static_cast<std::size_t>(t) * actuators, actuators);
    std::fill(previous.begin(), previous.end(), 0.0);
    adjoint::step_vjp(model_, params_, state_t, controls_t, record, state_next, adjoint, previous,
                      std::span<double>(gradients.controls).subspan(static_cast<std::size_t>(t) * actuators, actuators),
                      param_adjoint, vjp);
    if (!all_finite(previous)) note_non_finite(t, vjp.non_finite_stage.empty() ? "step" : vjp.non_finite_stage.c_str());
    if (!reduced && logs_kept_)
      health.stage_gain[static_cast<std::size_t>(t)] =
          adjoint::backward_stage_gain(adjoint, vjp.velocity_adjoint, vjp.free_velocity_adjoint, previous);
    if (vjp.lcp.used_sparse) health.lcp_adjoint_residual = std::max(health.lcp_adjoint_residual, vjp.lcp.relative_residual);
    // Closed loop: u_t = π(x_t), so ū_t also reaches x_t through the controller.
    if (controller_ != nullptr) {
      controller_->act_backward(
          t, state_t, std::span<const double>(gradients.controls).subspan(static_cast<std::size_t>(t) * actuators, actuators),
          previous);
      if (!all_finite(previous)) note_non_finite(t, "controller");
    }
    if (options_.gradient_decay != 1.0)
      for (double& v : previous) v *= options_.gradient_decay;
    std::swap(adjoint, previous);
    finish_state_adjoint(t, state_t, adjoint);
  };

  if (records_kept_) {
    // Every state and every step's record were kept: no step is re-run.
    for (int t = steps_ - 1; t >= 0; --t) {
      const State& next_state = t + 1 < steps_ ? checkpoints_[static_cast<std::size_t>(t + 1)] : final_state_;
      reverse_step(t, checkpoints_[static_cast<std::size_t>(t)], records_[static_cast<std::size_t>(t)], next_state);
    }
  } else {
    // Segment by segment: recompute the segment's states x_s .. x_e from its checkpoint,
    // keeping each step's record when a segment's worth fits the budget — its solution
    // (λ, v⁺), replayed just before the step is reversed, or with keep_step_workspaces (and in
    // joint coordinates and joint-only problems, which no replay skips) its whole Workspace — else
    // re-run each step with its solve just before reversing it. (The forward pass spaced the
    // checkpoints for this from its first step's record; the run's largest record decides.)
    const bool workspace_records = workspace_records_ || reduced;
    const auto segment_fits = [&](std::size_t record_bytes) {
      return options_.keep_step_records && interval_ > 1 &&
             adjoint::segment_record_layout_bytes(steps_, interval_, state_bytes(checkpoints_.front()), record_bytes) <=
                 static_cast<double>(state_budget_);
    };
    const bool segment_records = workspace_records && segment_fits(largest_record_bytes_);
    const bool segment_solutions = !segment_records && !reduced && segment_fits(largest_solution_bytes_);
    std::vector<Workspace> records(segment_records ? static_cast<std::size_t>(interval_) : 0);
    std::vector<double> segment_solution;             // the segment's λ, v⁺ per step, in order
    std::vector<std::size_t> segment_solution_start;  // (steps in segment + 1) offsets into it
    Workspace workspace;
    std::vector<State> segment;
    State next;
    const std::size_t dof = static_cast<std::size_t>(6 * model_.body_count());
    // Step t again from state_t, taking `stored` (λ first, then v⁺) instead of solving.
    const auto replay = [&](int t, const State& state_t, std::span<const double> stored) {
      rigid::set_replay(workspace.impl(), stored, dof);
      next = state_t;
      step(model_, params_, state_t,
           std::span<const double>(controls_).subspan(static_cast<std::size_t>(t) * actuators, actuators), next,
           workspace);
    };
    for (int segment_start = ((steps_ - 1) / interval_) * interval_; segment_start >= 0 && steps_ > 0;
         segment_start -= interval_) {
      const int segment_end = std::min(segment_start + interval_, steps_);
      segment.assign(1, checkpoints_[static_cast<std::size_t>(segment_start / interval_)]);
      segment_solution.clear();
      segment_solution_start.assign(1, 0);
      const int recomputed_end = segment_records || segment_solutions ? segment_end : segment_end - 1;
      for (int t = segment_start; t < recomputed_end; ++t) {
        next = segment.back();
        Workspace& step_workspace = segment_records ? records[static_cast<std::size_t>(t - segment_start)] : workspace;
        step(model_, params_, segment.back(),
             std::span<const double>(controls_).subspan(static_cast<std::size_t>(t) * actuators, actuators), next,
             step_workspace);
        if (segment_solutions)
          segment_solution_start.push_back(rigid::append_solution(step_workspace.impl(), segment_solution));
        segment.push_back(next);
      }
      for (int t = segment_end - 1; t >= segment_start; --t) {
        const auto in_segment = static_cast<std::size_t>(t - segment_start);
        const State& state_t = segment[in_segment];
        if (segment_records) {
          const State& next_state = t + 1 < segment_end ? segment[in_segment + 1] : segment.back();
          reverse_step(t, state_t, records[in_segment], next_state);
          continue;
        }
        std::span<const double> stored;
        if (segment_solutions)
          stored = std::span<const double>(segment_solution)
                       .subspan(segment_solution_start[in_segment],
                                segment_solution_start[in_segment + 1] - segment_solution_start[in_segment]);
        else if (solutions_kept_ && interval_ == 1)
          stored = std::span<const double>(solutions_).subspan(
              solution_start_[static_cast<std::size_t>(t)],
              solution_start_[static_cast<std::size_t>(t) + 1] - solution_start_[static_cast<std::size_t>(t)]);
        replay(t, state_t, stored);
        reverse_step(t, state_t, workspace, next);
      }
    }
  }
  if (!all_finite(gradients.params) && health.first_non_finite_step < 0) note_non_finite(0, "parameters");
  gradients.initial_state = adjoint;
  return gradients;
}

}  // namespace diffphys
