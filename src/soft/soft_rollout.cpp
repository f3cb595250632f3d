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
#include "diffphys/soft_rollout.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
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
  if (steps < 0) throw Error(message("soft rollout: steps must be ≥ 0, got ", steps));
  const auto dofs = static_cast<std::size_t>(model_.dof_count());
  if (!controls.empty() && controls.size() != static_cast<std::size_t>(steps) * dofs)
    throw Error(message("soft rollout: expected ", static_cast<std::size_t>(steps) * dofs,
                        " control values (steps × 3 per node) or none, got ", controls.size()));
  validate_soft_params(model_, params_);
  SoftState start = initial;
  prepare_soft_state(model_, start);
  controls_.assign(controls.begin(), controls.end());
  steps_ = steps;
  const std::size_t state_bytes = 2 * dofs * sizeof(double) + sizeof(SoftState);
  interval_ = options_.checkpoint_interval;
  if (interval_ <= 0) {
    if (static_cast<std::size_t>(steps + 1) * state_bytes <= options_.memory_budget) {
      interval_ = 1;
    } else {
      interval_ = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(steps)))));
      while (interval_ < steps && static_cast<std::size_t>(steps / interval_ + 2 + interval_) * state_bytes > options_.memory_budget)
        interval_ *= 2;
    }
  }
  checkpoints_.clear();
  statuses_.clear();
  statuses_.reserve(static_cast<std::size_t>(steps));
  checkpoints_.push_back(start);
  SoftState current = start, next;
  for (int t = 0; t < steps; ++t) {
    statuses_.push_back(soft_step(model_, params_, current, step_controls(t), next, workspace_));
    std::swap(current, next);
    if ((t + 1) % interval_ == 0) checkpoints_.push_back(current);
  }
  final_state_ = current;
}

SoftState SoftRollout::state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("soft rollout: step ", step, " outside [0, ", steps_, "]"));
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
  const auto nodes = static_cast<std::size_t>(model_.node_count);
  const double h = model_.dt;
  SoftGradients result;
  result.params.assign(params_.values.size(), 0.0);
  result.controls.assign(static_cast<std::size_t>(steps_) * dofs, 0.0);
  for (const SoftStepStatus& status : statuses_) result.solver_converged = result.solver_converged && status.converged;

  std::vector<double> adjoint_x(dofs, 0.0), adjoint_v(dofs, 0.0);  // dL/dx_{t+1}, dL/dv_{t+1}
  std::vector<double> target(dofs), w(dofs), previous_bar(dofs), mass_bar(nodes);
  std::vector<double> mixed_params(params_.values.size());
  SoftWorkspace::Impl& system = workspace_.impl();
  const double* gravity = params_.values.data() + model_.layout.gravity;

  // States of the current segment [begin, end], recomputed from its checkpoint.
  std::vector<SoftState> segment;
  const auto at_final = [&]() {
    const SoftState& last = final_state_;
    if (loss_gradient) loss_gradient(steps_, last, adjoint_x, adjoint_v);
  };
  at_final();
  for (int segment_begin = ((steps_ - 1) / interval_) * interval_; steps_ > 0 && segment_begin >= 0; segment_begin -= interval_) {
    const int segment_end = std::min(steps_, segment_begin + interval_);
    // Inner states are recomputed; the segment's end is stored (a checkpoint or the final
    // state), so with every state stored (interval 1) nothing is recomputed.
    segment.assign(1, checkpoints_[static_cast<std::size_t>(segment_begin / interval_)]);
    for (int t = segment_begin; t + 1 < segment_end; ++t) {
      SoftState next;
      soft_step(model_, params_, segment.back(), step_controls(t), next, workspace_);
      segment.push_back(std::move(next));
    }
    segment.push_back(segment_end % interval_ == 0 ? checkpoints_[static_cast<std::size_t>(segment_end / interval_)] : final_state_);
    for (int t = segment_end - 1; t >= segment_begin; --t) {
      const SoftState& before = segment[static_cast<std::size_t>(t - segment_begin)];
      const SoftState& after = segment[static_cast<std::size_t>(t + 1 - segment_begin)];
      // x̄* = x̄_{t+1} + v̄_{t+1}/h on free DOFs.
      for (std::size_t k = 0; k < dofs; ++k)
        target[k] = system.is_pinned_dof(k) ? 0.0 : adjoint_x[k] + adjoint_v[k] / h;
      system.set_problem(params_, before.positions, before.velocities, step_controls(t), true);
      system.derivatives(after.positions, true);
      if (!system.factorise(0.0)) {
        ++result.indefinite_steps;
        double scale = 0.0;
        for (const int slot : system.diagonal_slots) scale = std::max(scale, std::abs(system.hessian.valuePtr()[slot]));
        system.factorise(1e-10 * std::max(1.0, scale));
      }
      system.solve(target, w);
      for (std::size_t k = 0; k < dofs; ++k)
        if (system.is_pinned_dof(k)) w[k] = 0.0;
      // Controls, params and lagged inputs.
      std::copy(w.begin(), w.end(), result.controls.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(t) * dofs));
      std::fill(previous_bar.begin(), previous_bar.end(), 0.0);
      std::fill(mixed_params.begin(), mixed_params.end(), 0.0);
      const TermInputs inputs = system.inputs(after.positions);
      for (const auto& term : system.terms) term->add_mixed_vjp(inputs, w, mixed_params, previous_bar);
      for (std::size_t p = 0; p < mixed_params.size(); ++p) result.params[p] -= mixed_params[p];
      std::fill(mass_bar.begin(), mass_bar.end(), 0.0);
      for (std::size_t k = 0; k < dofs; ++k) {
        if (system.is_pinned_dof(k)) continue;
        const double m = system.masses[k / 3];
        mass_bar[k / 3] -= w[k] * ((after.positions[k] - system.predicted[k]) / (h * h) - gravity[k % 3]);
        result.params[static_cast<std::size_t>(model_.layout.gravity) + k % 3] += m * w[k];
      }
      for (std::size_t i = 0; i < nodes; ++i)
        for (int s = model_.mass_begin[i]; s < model_.mass_begin[i + 1]; ++s)
          result.params[static_cast<std::size_t>(model_.mass_param[static_cast<std::size_t>(s)])] +=
              mass_bar[i] * model_.mass_share[static_cast<std::size_t>(s)];
      // Adjoints of x_t, v_t.
      for (std::size_t k = 0; k < dofs; ++k) {
        const double m = system.is_pinned_dof(k) ? 0.0 : system.masses[k / 3];
        const double through_prediction = m * w[k] / (h * h);
        const double x_bar = through_prediction - previous_bar[k] - adjoint_v[k] / h;
        adjoint_v[k] = through_prediction * h;
        adjoint_x[k] = x_bar;
      }
      if (loss_gradient) loss_gradient(t, before, adjoint_x, adjoint_v);
    }
  }
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
