// fluid/fluid_part.cpp — FluidPart (fluid_part.hpp): one fluid step per world step and its exact
// adjoint, for the world's schedule (world/schedule.cpp), which owns the tape, checkpoints,
// decay, clipping and the loss for every part.
#include "fluid/fluid_part.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "fluid/fluid_step.hpp"

namespace diffphys::world {

FluidPart::FluidPart(const World& world)
    : model_(world.fluid->model),
      workspace_(model_),
      tangent_offset_(world.layout().fluid_tangent_offset),
      param_offset_(world.layout().fluid_param_offset),
      control_offset_(world.layout().fluid_control_offset) {
  // u faces at i = 0, nx; v faces at j = 0, ny (fluid.hpp's layout).
  const int nx = model_.nx, ny = model_.ny;
  for (int j = 0; j < ny; ++j) {
    wall_faces_.push_back(j * (nx + 1));
    wall_faces_.push_back(j * (nx + 1) + nx);
  }
  for (int i = 0; i < nx; ++i) {
    wall_faces_.push_back(model_.u_count() + i);
    wall_faces_.push_back(model_.u_count() + ny * nx + i);
  }
  scratch_record_.assign(fluid::step_record_size(model_), 0.0);
}

int FluidPart::tangent_size() const { return model_.velocity_count() + model_.scalar_count * model_.cell_count(); }

void FluidPart::begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) {
  params_.values.assign(params.values.begin() + param_offset_, params.values.begin() + param_offset_ + model_.param_count());
  fluid::validate_fluid_params(model_, params_);
  fluid::validate_fluid_state(model_, initial.fluid);
  logs_kept_ = keep_logs;
  statuses_.assign(static_cast<std::size_t>(keep_logs ? std::max(steps, 1) : 1), fluid::FluidStepStatus{});
}

// A step's status, and in the backward pass its |x̄_t|.
std::size_t FluidPart::log_bytes_per_step() const { return sizeof(fluid::FluidStepStatus) + sizeof(double); }

void FluidPart::reserve_records(int slots) {
  const std::size_t size = fluid::step_record_size(model_);
  if (records_.size() < static_cast<std::size_t>(slots)) records_.resize(static_cast<std::size_t>(slots), std::vector<double>(size, 0.0));
}

void FluidPart::release_records() { std::vector<std::vector<double>>().swap(records_); }

std::span<double> FluidPart::record(int slot) {
  return slot < 0 ? std::span<double>(scratch_record_) : std::span<double>(records_[static_cast<std::size_t>(slot)]);
}

std::size_t FluidPart::record_bytes(int slot) const {
  (void)slot;
  return fluid::step_record_size(model_) * sizeof(double);
}

std::size_t FluidPart::state_bytes(const WorldState& state) const {
  return (state.fluid.velocities.size() + state.fluid.scalars.size()) * sizeof(double) + sizeof(fluid::FluidState);
}

std::span<const double> FluidPart::forces(std::span<const double> controls) const {
  // No forces unless controls are given (as FluidRollout with none).
  if (controls.empty()) return {};
  return controls.subspan(static_cast<std::size_t>(control_offset_), static_cast<std::size_t>(model_.control_count()));
}

void FluidPart::step(const StepInputs& in, int slot, int status_step) {
  const fluid::FluidStepStatus status =
      fluid::fluid_step_recorded(model_, params_, in.before.fluid, forces(in.controls), in.after.fluid, workspace_, record(slot));
  // As FluidRollout: a failed step (CFL above max_cfl, a non-finite state, a solve that missed
  // its tolerance) is an error, not a converged step.
  // Numbered as the rigid and soft reports number steps: from 1, with the time the step ends at
  // (status_step is a slot, 0 for every step of a WorldSimulator, so the time says which).
  if (!status.converged)
    throw Error(message("fluid '", model_.name, "': ",
                        status_step != kNoStatus ? "step " + std::to_string(std::llround(in.before.fluid.time / model_.dt) + 1)
                                                 : std::string("a recomputed step"),
                        " (t = ", in.before.fluid.time + model_.dt, " s) failed: ", status.message));
  if (status_step >= 0 || status_step == kStatusOnly)
    statuses_[static_cast<std::size_t>(logs_kept_ && status_step >= 0 ? status_step : 0)] = status;
}

std::span<double> FluidPart::step_vjp(const StepAdjoints& out, int step, int slot) {
  const auto faces = static_cast<std::size_t>(model_.velocity_count());
  const auto scalars = static_cast<std::size_t>(model_.scalar_count) * static_cast<std::size_t>(model_.cell_count());
  const auto offset = static_cast<std::size_t>(tangent_offset_);
  const std::span<double> controls_bar =
      out.controls_bar.subspan(static_cast<std::size_t>(control_offset_), static_cast<std::size_t>(model_.control_count()));
  // No coupling writes the fluid's θ, so the step θ̄ is the world's: it is added straight into
  // the world's θ̄ (the same order of sums as FluidRollout, hence the same bits), and the step
  // θ̄ returned is empty. A coupling into the fluid would need it in a scratch vector first.
  const std::span<double> params_bar =
      out.params_bar.subspan(static_cast<std::size_t>(param_offset_), static_cast<std::size_t>(model_.param_count()));
  fluid::FluidStepStatus status;
  fluid::fluid_step_vjp(model_, params_, out.before.fluid, forces(out.controls), record(slot),
                        out.after_bar.subspan(offset, faces), out.after_bar.subspan(offset + faces, scalars),
                        out.before_bar.subspan(offset, faces), out.before_bar.subspan(offset + faces, scalars), controls_bar,
                        params_bar, workspace_, status);
  if (result_ != nullptr && !status.converged) {
    result_->fluid_health.unconverged_adjoint_steps.push_back(step);
    result_->fluid_health.solver_converged = false;
  }
  return {};
}

void FluidPart::add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const {
  // step_vjp already added this part's θ̄ (see there); a non-empty step θ̄ would come from a coupling.
  for (std::size_t p = 0; p < step_param_bar.size(); ++p) params_bar[static_cast<std::size_t>(param_offset_) + p] += step_param_bar[p];
}

void FluidPart::begin_backward(int steps, WorldGradients& result) {
  result_ = &result;
  result.fluid_health = fluid::FluidGradientHealth{};
  if (logs_kept_) result.fluid_health.state_gradient_norm.assign(static_cast<std::size_t>(steps) + 1, 0.0);
}

void FluidPart::mask_state_adjoint(std::span<double> world_tangent) const {
  for (const int face : wall_faces_) world_tangent[static_cast<std::size_t>(tangent_offset_ + face)] = 0.0;
}

void FluidPart::note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) {
  if (logs_kept_) result.fluid_health.state_gradient_norm[static_cast<std::size_t>(step)] = norm;
  if (clipped) ++result.fluid_health.clipped_steps;
  if (!std::isfinite(norm)) note_non_finite(step, "fluid step", result);
}

void FluidPart::note_non_finite(int step, const char* stage, WorldGradients& result) {
  fluid::FluidGradientHealth& health = result.fluid_health;
  if (health.first_non_finite_step < 0) {
    health.first_non_finite_step = step;
    health.first_non_finite_stage = stage;
  }
}

void FluidPart::finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const {
  (void)initial_adjoint;  // the wall faces were masked with every x̄_t
  // Every forward step converged (a failed one ended the run with an Error).
  result.solver_converged = result.solver_converged && result.fluid_health.solver_converged;
}

void FluidPart::fill_status(int step, WorldStepStatus& status) const {
  status.fluid = &statuses_[static_cast<std::size_t>(logs_kept_ ? step : 0)];
}

}  // namespace diffphys::world
