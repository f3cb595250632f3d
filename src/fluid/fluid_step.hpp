// fluid/fluid_step.hpp — the step with its record and the step's VJP (fluid/fluid_step.cpp,
// fluid/fluid_step_vjp.cpp). The record holds what the VJP would otherwise recompute: the
// viscous stage's output u* (for dL/dν), its input u_f (advected and forced: for
// Crank–Nicolson's explicit half and dL/dν) and the advected scalars (for dL/dβ), so the
// backward pass never re-runs the forward stages.
#pragma once

#include <span>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid {

// Doubles in a step's record: u* (nu + nv), u_f (nu + nv), advected scalars (nscalar × ncell).
inline std::size_t step_record_size(const FluidModel& model) {
  return 2 * static_cast<std::size_t>(model.velocity_count()) +
         static_cast<std::size_t>(model.scalar_count) * model.cell_count();
}

// fluid_step, also filling `record` (step_record_size, or empty: not kept).
FluidStepStatus fluid_step_recorded(const FluidModel& model, const FluidParams& params, const FluidState& in,
                                    std::span<const double> controls, FluidState& out, FluidWorkspace& workspace,
                                    std::span<double> record);

// The step's adjoint: from x̄_{t+1} = (velocities_bar_out, scalars_bar_out), adds x̄_t into
// velocities_bar_in, scalars_bar_in, ū_t into controls_bar (when not empty) and θ̄ into
// params_bar. `record`: this step's (fluid_step_recorded; empty: the forward stages re-run). Runs the adjoint solves
// (projection, viscosity) at the model's tolerance; `status` gets their iterations.
// `obstacle_forces_bar` (2 per obstacle, or empty): ∂L/∂ of the step's obstacle forces
// (FluidWorkspace::obstacle_forces), for a loss on drag or lift.
void fluid_step_vjp(const FluidModel& model, const FluidParams& params, const FluidState& in,
                    std::span<const double> controls, std::span<const double> record,
                    std::span<const double> velocities_bar_out, std::span<const double> scalars_bar_out,
                    std::span<double> velocities_bar_in, std::span<double> scalars_bar_in,
                    std::span<double> controls_bar, std::span<double> params_bar, FluidWorkspace& workspace,
                    FluidStepStatus& status, std::span<const double> obstacle_forces_bar = {});

// Shared by the step and its VJP: advection of velocity and scalars, the forces (controls and
// buoyancy) and the obstacles' penalization (fluid/obstacles.hpp) into impl.forced — the
// viscous stage's input; advected scalars into `scalars_out`, the obstacles' forces into
// `obstacle_forces` unless it is empty.
void advect_and_force(const FluidModel& model, const FluidParams& params, const FluidState& in,
                      std::span<const double> controls, double* scalars_out, FluidWorkspace::Impl& impl,
                      std::span<double> obstacle_forces);

}  // namespace diffphys::fluid
