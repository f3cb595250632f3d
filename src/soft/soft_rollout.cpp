// soft/soft_rollout.cpp — SoftRollout: forward with checkpoints, backward by the implicit
// function theorem at every step's minimiser.
//
// Step t maps (x_t, v_t) to x_{t+1} = argmin Φ, v_{t+1} = (x_{t+1} − x_t)/h, where ∇Φ = g =
// M(x − x̃)/h² − M g_grav − f + ∇E(x; x_t, θ) and x̃ = x_t + h v_t. Given the adjoints of
// x_{t+1}, v_{t+1}: x̄* = x̄_{t+1} + v̄_{t+1}/h, solve H w = x̄* (H = ∂g/∂x at x*), then each
// input p gets p̄ += −(∂g/∂p)ᵀ w:
//   x_t: M w/h² (through x̃) − (∂∇E/∂x_t)ᵀ w (lagged terms) − v̄_{t+1}/h
//   v_t: M w/h                     f_t: w
//   θ:   −(∂∇E/∂θ)ᵀ w, and through the masses m̄ᵢ = −wᵢ·((xᵢ − x̃ᵢ)/h² − g_grav),
//        gravity ḡ = Σ mᵢ wᵢ.
// H is factorised once per step, at the minimiser, by the forward pass (newton_minimise with
// factorise_at_solution) and the factor kept with the step (SparseCholesky::save_factor), so
// that the backward pass does one solve per step; see docs/soft-bodies.md for the budget.
#include "diffphys/soft_rollout.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "math/finite.hpp"
#include "soft/soft_step_vjp.hpp"
#include "soft/step_system.hpp"

namespace diffphys::soft {

std::span<const double> SoftGradients::param(const SoftModel& model, std::string_view name) const {
  for (const SoftParamLayout::Slice& slice : model.layout.slices)
    if (slice.name == name)
      return std::span<const double>(params).subspan(static_cast<std::size_t>(slice.offset), static_cast<std::size_t>(slice.size));
  throw Error(message("soft gradients: no parameter slice named '", name, "'"));
}

SoftRollout::SoftRollout(const SoftModel& model, const SoftParams& params, SoftRolloutOptions options)
    : model_(model), params_(params), options_(options), workspace_(model_) {}

std::span<const double> SoftRollout::step_controls(int step) const {
  if (controls_.empty()) return {};
  const auto dofs = static_cast<std::size_t>(model_.dof_count());
  return std::span<const double>(controls_).subspan(static_cast<std::size_t>(step) * dofs, dofs);
}

void SoftRollout::run(const SoftState& initial, std::span<const double> controls, int steps) {
  controller_ = nullptr;
  forward(initial, controls, steps);
}

void SoftRollout::run(const SoftState& initial, SoftController& controller, int steps) {
  controller_ = &controller;
  forward(initial, {}, steps);
}

SoftStepStatus SoftRollout::recorded_step(int step, const SoftState& in, SoftState& out, std::span<double> factor,
                                          char& definite) const {
  SoftWorkspace::Impl& system = workspace_.impl();
  system.factorise_at_solution = true;
  SoftStepStatus status;
  try {
    status = soft_step(model_, params_, in, step_controls(step), out, workspace_);
  } catch (...) {
    system.factorise_at_solution = false;
    throw;
  }
  system.factorise_at_solution = false;
  definite = system.solution_definite ? 1 : 0;
  if (!factor.empty()) system.factorisation.save_factor(factor);
  return status;
}

void SoftRollout::forward(const SoftState& initial, std::span<const double> controls, int steps) {
  if (steps < 0) throw Error(message("soft rollout: steps must be ≥ 0, got ", steps));
  const auto dofs = static_cast<std::size_t>(model_.dof_count());
  if (!controls.empty() && controls.size() != static_cast<std::size_t>(steps) * dofs)
    throw Error(message("soft rollout: expected ", static_cast<std::size_t>(steps) * dofs,
                        " control values (steps × 3 per node) or none, got ", controls.size()));
  validate_soft_params(model_, params_);
  SoftState start = initial;
  prepare_soft_state(model_, start);
  if (controller_ != nullptr)
    controls_.assign(static_cast<std::size_t>(steps) * dofs, 0.0);
  else
    controls_.assign(controls.begin(), controls.end());
  steps_ = steps;
  factor_size_ = workspace_.impl().factorisation.factor_size();
  const std::size_t state_bytes = 2 * dofs * sizeof(double) + sizeof(SoftState);
  const std::size_t factor_bytes = factor_size_ * sizeof(double);
  const auto total_steps = static_cast<std::size_t>(steps);
  // Every state, and every step's factor when they fit too (and every state is kept).
  bool keep_factors =
      options_.keep_step_records && (total_steps + 1) * state_bytes + total_steps * factor_bytes <= options_.memory_budget;
  interval_ = options_.checkpoint_interval;
  if (interval_ <= 0) {
    if (keep_factors || (total_steps + 1) * state_bytes <= options_.memory_budget) {
      interval_ = 1;
    } else {
      interval_ = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(steps)))));
      while (interval_ < steps && static_cast<std::size_t>(steps / interval_ + 2 + interval_) * state_bytes > options_.memory_budget)
        interval_ *= 2;
    }
  }
  keep_factors = keep_factors && interval_ == 1;
  factors_.assign(keep_factors ? total_steps * factor_size_ : 0, 0.0);
  factor_definite_.assign(total_steps, 1);
  checkpoints_.clear();
  statuses_.clear();
  statuses_.reserve(total_steps);
  checkpoints_.push_back(start);
  SoftState current = start, next;
  for (int t = 0; t < steps; ++t) {
    if (controller_ != nullptr) {
      const std::span<double> forces = std::span<double>(controls_).subspan(static_cast<std::size_t>(t) * dofs, dofs);
      controller_->act(t, current, forces);
      for (std::size_t k = 0; k < dofs; ++k)
        if (model_.pinned[k / 3]) forces[k] = 0.0;  // pinned nodes do not move: their forces are moot
    }
    const auto index = static_cast<std::size_t>(t);
    if (keep_factors) {
      statuses_.push_back(recorded_step(t, current, next, std::span<double>(factors_).subspan(index * factor_size_, factor_size_),
                                        factor_definite_[index]));
    } else {
      statuses_.push_back(soft_step(model_, params_, current, step_controls(t), next, workspace_));
    }
    std::swap(current, next);
    if ((t + 1) % interval_ == 0) checkpoints_.push_back(current);
  }
  final_state_ = current;
}

std::size_t SoftRollout::stored_state_bytes() const {
  // As the budget counts them in forward().
  return checkpoints_.size() * (2 * static_cast<std::size_t>(model_.dof_count()) * sizeof(double) + sizeof(SoftState));
}

SoftState SoftRollout::state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("soft rollout: step ", step, " outside [0, ", steps_, "]"));
  if (step == steps_) return final_state_;
  SoftState current = checkpoints_[static_cast<std::size_t>(step / interval_)];
  SoftState next;
  for (int t = (step / interval_) * interval_; t < step; ++t) {
    soft_step(model_, params_, current, step_controls(t), next, workspace_);
    std::swap(current, next);
  }
  return current;
}

SoftGradients SoftRollout::backward(const SoftLossGradient& loss_gradient) const {
  const auto dofs = static_cast<std::size_t>(model_.dof_count());
  SoftGradients result;
  result.params.assign(params_.values.size(), 0.0);
  result.controls.assign(static_cast<std::size_t>(steps_) * dofs, 0.0);
  SoftGradientHealth& health = result.health;
  health.state_gradient_norm.assign(static_cast<std::size_t>(steps_) + 1, 0.0);
  for (int t = 0; t < steps_; ++t)
    if (!statuses_[static_cast<std::size_t>(t)].converged) health.non_converged_steps.push_back(t);
  health.solver_converged = health.non_converged_steps.empty();
  result.solver_converged = health.solver_converged;

  std::vector<double> adjoint_x(dofs, 0.0), adjoint_v(dofs, 0.0);  // dL/dx_{t+1}, dL/dv_{t+1}
  std::vector<double> loss_x(dofs), loss_v(dofs);
  SoftStepVjpScratch scratch;
  SoftWorkspace::Impl& system = workspace_.impl();

  const auto note_non_finite = [&](int t, const char* stage) {
    if (health.first_non_finite_step < 0) {
      health.first_non_finite_step = t;
      health.first_non_finite_stage = stage;
    }
  };
  // (x̄_t, v̄_t): the user's dL/dx_t, dL/dv_t added, clipping, bookkeeping.
  const auto finish_state_adjoint = [&](int t, const SoftState& state) {
    if (loss_gradient) {
      std::fill(loss_x.begin(), loss_x.end(), 0.0);
      std::fill(loss_v.begin(), loss_v.end(), 0.0);
      loss_gradient(t, state, loss_x, loss_v);
      if (!all_finite(loss_x) || !all_finite(loss_v)) note_non_finite(t, "loss gradient");
      for (std::size_t k = 0; k < dofs; ++k) {
        adjoint_x[k] += loss_x[k];
        adjoint_v[k] += loss_v[k];
      }
    }
    finish_soft_state_adjoint(t, adjoint_x, adjoint_v, options_.gradient_clip, health);
  };

  // Reverses step t (before = x_t, after = x_{t+1}); the workspace holds ∇²Φ's factor at
  // x_{t+1} (`factor_ready`), or it is refactorised here.
  const auto reverse_step = [&](int t, const SoftState& before, const SoftState& after, bool factor_ready, bool definite) {
    system.set_problem(params_, before.positions, before.velocities, step_controls(t), true);
    if (!factor_ready) {
      system.derivatives(after.positions, true);
      definite = system.factorise_for_adjoint();
      ++health.refactorised_steps;
    }
    if (!definite) {
      ++result.indefinite_steps;
      health.indefinite_steps.push_back(t);
    }
    const std::span<double> control_bar = std::span<double>(result.controls).subspan(static_cast<std::size_t>(t) * dofs, dofs);
    if (const char* stage = soft_step_vjp(system, model_, params_, after, adjoint_x, adjoint_v, control_bar, result.params, scratch))
      note_non_finite(t, stage);
    // Closed loop: f_t = π(x_t, v_t), so f̄_t also reaches x_t and v_t through the controller.
    if (controller_ != nullptr) {
      controller_->act_backward(t, before, control_bar, adjoint_x, adjoint_v);
      if (!all_finite(adjoint_x) || !all_finite(adjoint_v)) note_non_finite(t, "controller");
    }
    if (options_.gradient_decay != 1.0)
      for (std::size_t k = 0; k < dofs; ++k) {
        adjoint_x[k] *= options_.gradient_decay;
        adjoint_v[k] *= options_.gradient_decay;
      }
    finish_state_adjoint(t, before);
  };

  finish_state_adjoint(steps_, final_state_);
  const std::size_t factor_bytes = factor_size_ * sizeof(double);
  if (!factors_.empty()) {
    // Every state and every step's factor were kept: no step is re-run, no matrix refactorised.
    for (int t = steps_ - 1; t >= 0; --t) {
      const auto index = static_cast<std::size_t>(t);
      system.factorisation.load_factor(std::span<const double>(factors_).subspan(index * factor_size_, factor_size_));
      const SoftState& after = t + 1 < steps_ ? checkpoints_[index + 1] : final_state_;
      reverse_step(t, checkpoints_[index], after, true, factor_definite_[index] != 0);
    }
  } else {
    // Segment by segment: recompute the segment's states from its checkpoint, with their
    // factors when a segment's worth fits the budget (else refactorise each step at x*).
    const std::size_t state_bytes = 2 * dofs * sizeof(double) + sizeof(SoftState);
    const bool segment_factors =
        options_.keep_step_records &&
        static_cast<std::size_t>(interval_) * (factor_bytes + state_bytes) + checkpoints_.size() * state_bytes <=
            options_.memory_budget;
    std::vector<double> factors(segment_factors ? static_cast<std::size_t>(interval_) * factor_size_ : 0);
    std::vector<char> definite(static_cast<std::size_t>(interval_), 1);
    std::vector<SoftState> segment;
    for (int segment_begin = ((steps_ - 1) / interval_) * interval_; steps_ > 0 && segment_begin >= 0;
         segment_begin -= interval_) {
      const int segment_end = std::min(steps_, segment_begin + interval_);
      // Inner states are recomputed; the segment's end is stored (a checkpoint or the final
      // state). With the factors kept, the last step is re-run too, for its factor.
      segment.assign(1, checkpoints_[static_cast<std::size_t>(segment_begin / interval_)]);
      const int recomputed_end = segment_factors ? segment_end : segment_end - 1;
      for (int t = segment_begin; t < recomputed_end; ++t) {
        SoftState next;
        const auto local = static_cast<std::size_t>(t - segment_begin);
        if (segment_factors)
          recorded_step(t, segment.back(), next, std::span<double>(factors).subspan(local * factor_size_, factor_size_),
                        definite[local]);
        else
          soft_step(model_, params_, segment.back(), step_controls(t), next, workspace_);
        if (t + 1 < segment_end) segment.push_back(std::move(next));
      }
      segment.push_back(segment_end % interval_ == 0 && segment_end / interval_ < static_cast<int>(checkpoints_.size())
                            ? checkpoints_[static_cast<std::size_t>(segment_end / interval_)]
                            : final_state_);
      for (int t = segment_end - 1; t >= segment_begin; --t) {
        const auto local = static_cast<std::size_t>(t - segment_begin);
        if (segment_factors)
          system.factorisation.load_factor(std::span<const double>(factors).subspan(local * factor_size_, factor_size_));
        reverse_step(t, segment[local], segment[local + 1], segment_factors, definite[local] != 0);
      }
    }
  }
  if (!all_finite(result.params)) note_non_finite(0, "parameters");
  for (std::size_t k = 0; k < dofs; ++k)
    if (system.is_pinned_dof(k)) {
      adjoint_x[k] = 0.0;
      adjoint_v[k] = 0.0;
    }
  result.initial_positions = adjoint_x;
  result.initial_velocities = adjoint_v;
  return result;
}

}  // namespace diffphys::soft
