// world/soft_part.cpp — SoftPart (soft_part.hpp): one soft step per world step and its
// implicit-function-theorem reverse, for the world's schedule.
#include "world/soft_part.hpp"

#include <algorithm>

#include "math/finite.hpp"
#include "soft/shape_distance.hpp"
#include "soft/step_system.hpp"

namespace diffphys::world {

SoftPart::SoftPart(const World& world)
    : model_(world.soft->model),
      workspace_(model_),
      tangent_offset_(world.layout().soft_tangent_offset),
      param_offset_(world.layout().soft_param_offset),
      control_offset_(world.layout().soft_control_offset) {}

void SoftPart::begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) {
  params_.values.assign(params.values.begin() + param_offset_, params.values.end());
  soft::validate_soft_params(model_, params_);
  soft::prepare_soft_state(model_, initial.soft);
  logs_kept_ = keep_logs;
  converged_ = true;
  non_converged_steps_.clear();
  statuses_.assign(static_cast<std::size_t>(keep_logs ? std::max(steps, 1) : 1), soft::SoftStepStatus{});
}

// A step's status, and in the backward pass its |x̄_t|.
std::size_t SoftPart::log_bytes_per_step() const { return sizeof(soft::SoftStepStatus) + sizeof(double); }

void SoftPart::reserve_records(int slots) {
  if (records_.size() < static_cast<std::size_t>(slots)) records_.resize(static_cast<std::size_t>(slots));
}

void SoftPart::release_records() { std::vector<Record>().swap(records_); }

std::size_t SoftPart::record_bytes(int slot) const {
  const Record& r = record(slot);
  return sizeof(Record) + (r.params.values.capacity() + r.factor.capacity()) * sizeof(double);
}

std::size_t SoftPart::state_bytes(const WorldState& state) const {
  return (state.soft.positions.size() + state.soft.velocities.size()) * sizeof(double) + sizeof(soft::SoftState);
}

void SoftPart::reset_step_params(int slot) {
  if (!coupled_) return;  // the step θ is the world's (step_theta)
  soft::SoftParams& theta = record(slot).params;
  theta.values.assign(params_.values.begin(), params_.values.end());
}

std::span<const double> SoftPart::forces(std::span<const double> controls) const {
  // No forces unless controls are given (as SoftRollout with none).
  if (controls.empty()) return {};
  return controls.subspan(static_cast<std::size_t>(control_offset_), static_cast<std::size_t>(model_.dof_count()));
}

void SoftPart::step(const StepInputs& in, int slot, int status_step) {
  const soft::SoftParams& theta = step_theta(slot);
  // Newton starts at x_t, except that nodes in contact with (or swallowed by) a shape that
  // moves with its frame start where the shape carries them: x_t would be infeasible once
  // the shape moved (frame poses at the step's start, previous_pose, and end, pose).
  const soft::SoftState& before = in.before.soft;
  start_positions_.assign(before.positions.begin(), before.positions.end());
  const double band = model_.contact.barrier_distance;
  for (int i = 0; i < model_.node_count; ++i) {
    if (model_.pinned[static_cast<std::size_t>(i)]) continue;
    const soft::V3<double> x = soft::load3(before.positions.data() + 3 * i);
    for (const soft::Obstacle& shape : model_.obstacles) {
      if (shape.frame < 0) continue;
      const auto frame = static_cast<std::size_t>(shape.frame);
      const double* pose = theta.values.data() + model_.layout.frame_pose[frame];
      const double* previous = theta.values.data() + model_.layout.frame_previous_pose[frame];
      if (soft::shape_distance(shape, soft::to_frame(pose, x), static_cast<soft::V3<double>*>(nullptr)) >= band) continue;
      const soft::V3<double> carried = soft::from_frame(pose, soft::to_frame(previous, x));
      bool feasible = true;
      for (const soft::Obstacle& other : model_.obstacles)
        if (other.frame < 0 && !(soft::shape_distance(other, carried, static_cast<soft::V3<double>*>(nullptr)) > 0.0))
          feasible = false;
      if (!feasible) continue;
      start_positions_[static_cast<std::size_t>(3 * i)] = carried.x;
      start_positions_[static_cast<std::size_t>(3 * i + 1)] = carried.y;
      start_positions_[static_cast<std::size_t>(3 * i + 2)] = carried.z;
    }
  }
  soft::SoftStepOptions options;
  options.start_positions = start_positions_;
  // A kept record (slot ≥ 0) keeps ∇²Φ's factor at the minimiser for the backward pass.
  soft::SoftWorkspace::Impl& system = workspace_.impl();
  const bool keep_factor = slot >= 0;
  system.factorise_at_solution = keep_factor;
  soft::SoftStepStatus status;
  try {
    status = soft::soft_step(model_, theta, before, forces(in.controls), in.after.soft, workspace_, options);
  } catch (...) {
    system.factorise_at_solution = false;
    throw;
  }
  system.factorise_at_solution = false;
  if (keep_factor) {
    Record& r = record(slot);
    r.factor.resize(system.factorisation.factor_size());
    system.factorisation.save_factor(r.factor);
    r.definite = system.solution_definite;
  }
  if (status_step >= 0 || status_step == kStatusOnly)
    statuses_[static_cast<std::size_t>(logs_kept_ && status_step >= 0 ? status_step : 0)] = status;
  if (status_step >= 0 && !status.converged) {
    converged_ = false;
    if (logs_kept_) non_converged_steps_.push_back(status_step);
  }
}

std::span<double> SoftPart::step_vjp(const StepAdjoints& out, int step, int slot) {
  const soft::SoftParams& theta = step_theta(slot);
  const auto dofs = static_cast<std::size_t>(model_.dof_count());
  const auto offset = static_cast<std::size_t>(tangent_offset_);
  soft::SoftWorkspace::Impl& system = workspace_.impl();
  // ∇²Φ's factor at x_{t+1}: the record's, else refactorised here.
  const Record& r = record(slot);
  const bool factor_kept = slot >= 0 && !r.factor.empty();
  if (factor_kept) system.factorisation.load_factor(r.factor);
  system.set_problem(theta, out.before.soft.positions, out.before.soft.velocities, forces(out.controls), true);
  bool definite = r.definite;
  if (!factor_kept) {
    system.derivatives(out.after.soft.positions, true);
    definite = system.factorise_for_adjoint();
    if (result_ != nullptr) ++result_->soft_health.refactorised_steps;
  }
  if (!definite && result_ != nullptr) result_->soft_health.indefinite_steps.push_back(step);
  adjoint_x_.assign(out.after_bar.begin() + static_cast<std::ptrdiff_t>(offset),
                    out.after_bar.begin() + static_cast<std::ptrdiff_t>(offset + dofs));
  adjoint_v_.assign(out.after_bar.begin() + static_cast<std::ptrdiff_t>(offset + dofs),
                    out.after_bar.begin() + static_cast<std::ptrdiff_t>(offset + 2 * dofs));
  // Uncoupled, θ̄ goes straight into the world's soft slice (configure).
  if (coupled_) param_bar_.assign(theta.values.size(), 0.0);
  const std::span<double> theta_bar =
      coupled_ ? std::span<double>(param_bar_) : out.params_bar.subspan(static_cast<std::size_t>(param_offset_), theta.values.size());
  const std::span<double> force_bar = out.controls_bar.subspan(static_cast<std::size_t>(control_offset_), dofs);
  if (const char* stage = soft::soft_step_vjp(system, model_, theta, out.after.soft, adjoint_x_, adjoint_v_, force_bar, theta_bar, vjp_);
      stage != nullptr && result_ != nullptr)
    note_non_finite(step, stage, *result_);
  for (std::size_t k = 0; k < dofs; ++k) {
    out.before_bar[offset + k] += adjoint_x_[k];
    out.before_bar[offset + dofs + k] += adjoint_v_[k];
  }
  return coupled_ ? std::span<double>(param_bar_) : std::span<double>();
}

void SoftPart::add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const {
  for (std::size_t p = 0; p < step_param_bar.size(); ++p) params_bar[static_cast<std::size_t>(param_offset_) + p] += step_param_bar[p];
}

void SoftPart::begin_backward(int steps, WorldGradients& result) {
  result_ = &result;
  result.soft_health = soft::SoftGradientHealth{};
  if (logs_kept_) result.soft_health.state_gradient_norm.assign(static_cast<std::size_t>(steps) + 1, 0.0);
}

void SoftPart::note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) {
  if (logs_kept_) result.soft_health.state_gradient_norm[static_cast<std::size_t>(step)] = norm;
  if (clipped) ++result.soft_health.clipped_steps;
}

void SoftPart::note_non_finite(int step, const char* stage, WorldGradients& result) {
  soft::SoftGradientHealth& health = result.soft_health;
  if (health.first_non_finite_step < 0) {
    health.first_non_finite_step = step;
    health.first_non_finite_stage = stage;
  }
}

void SoftPart::finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const {
  // A pinned node does not move whatever x_0 says: its initial-state gradient is 0.
  const auto dofs = static_cast<std::size_t>(model_.dof_count());
  for (std::size_t k = 0; k < dofs; ++k)
    if (model_.pinned[k / 3]) {
      initial_adjoint[static_cast<std::size_t>(tangent_offset_) + k] = 0.0;
      initial_adjoint[static_cast<std::size_t>(tangent_offset_) + dofs + k] = 0.0;
    }
  soft::SoftGradientHealth& health = result.soft_health;
  health.non_converged_steps = non_converged_steps_;
  health.solver_converged = converged_;
  result.solver_converged = result.solver_converged && health.solver_converged;
}

void SoftPart::fill_status(int step, WorldStepStatus& status) const {
  status.soft = &statuses_[static_cast<std::size_t>(logs_kept_ ? step : 0)];
}

}  // namespace diffphys::world
