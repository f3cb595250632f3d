// fluid/fluid_step.hpp — the step with its record (the viscous stage's output u*, which the
// VJP needs for dL/dν) and the step's VJP (fluid/fluid_step.cpp, fluid/fluid_step_vjp.cpp).
#pragma once

#include <span>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid {

// fluid_step, also copying u* into `viscous_record` ((nu + nv), or empty: not kept).
FluidStepStatus fluid_step_recorded(const FluidModel& model, const FluidParams& params, const FluidState& in,
                                    std::span<const double> controls, FluidState& out, FluidWorkspace& workspace,
                                    std::span<double> viscous_record);

// The step's adjoint: from x̄_{t+1} = (velocities_bar_out, scalars_bar_out), adds x̄_t into
// velocities_bar_in, scalars_bar_in, ū_t into controls_bar (when not empty) and θ̄ into
// params_bar. `viscous_record`: this step's u* (empty: recomputed). Runs the adjoint solves
// (projection, viscosity) at the model's tolerance; `status` gets their iterations.
void fluid_step_vjp(const FluidModel& model, const FluidParams& params, const FluidState& in,
                    std::span<const double> controls, std::span<const double> viscous_record,
                    std::span<const double> velocities_bar_out, std::span<const double> scalars_bar_out,
                    std::span<double> velocities_bar_in, std::span<double> scalars_bar_in,
                    std::span<double> controls_bar, std::span<double> params_bar, FluidWorkspace& workspace,
                    FluidStepStatus& status);

// Shared by the step and its VJP: advection of velocity and scalars, then the forces (controls
// and buoyancy) into impl.forced; advected scalars into `scalars_out`.
void advect_and_force(const FluidModel& model, const FluidParams& params, const FluidState& in,
                      std::span<const double> controls, double* scalars_out, FluidWorkspace::Impl& impl);

}  // namespace diffphys::fluid
