// fluid/fluid_step_vjp.cpp — the step's exact discrete adjoint, its stages in reverse:
// project ᵀ (the same projection: it is symmetric) → viscosity ᵀ (one solve with the same SPD
// operator) → obstacles ᵀ (pointwise) → forces ᵀ (the averaging stencils' transposes; buoyancy's β̄ and s̄) →
// advection ᵀ (fields and carrier).
#include <algorithm>

#include "fluid/fluid_step.hpp"
#include "fluid/obstacles.hpp"
#include "fluid/workspace.hpp"

namespace diffphys::fluid {
namespace {

void zero_wall_faces(const FluidModel& model, double* w) {
  const int nx = model.nx, ny = model.ny;
  for (int j = 0; j < ny; ++j) w[j * (nx + 1)] = w[j * (nx + 1) + nx] = 0.0;
  double* wv = w + model.u_count();
  for (int i = 0; i < nx; ++i) wv[i] = wv[ny * nx + i] = 0.0;
}

}  // namespace

void fluid_step_vjp(const FluidModel& model, const FluidParams& params, const FluidState& in,
                    std::span<const double> controls, std::span<const double> record,
                    std::span<const double> velocities_bar_out, std::span<const double> scalars_bar_out,
                    std::span<double> velocities_bar_in, std::span<double> scalars_bar_in,
                    std::span<double> controls_bar, std::span<double> params_bar, FluidWorkspace& workspace,
                    FluidStepStatus& status, std::span<const double> obstacle_forces_bar) {
  FluidWorkspace::Impl& impl = workspace.impl();
  const int nx = model.nx, ny = model.ny, cells = model.cell_count();
  const double h = model.dt;
  const double viscosity = params.values[static_cast<std::size_t>(model.layout.viscosity)];

  // Forward intermediates: u_f, the advected scalars and u*, from the record or again.
  const double* forced = impl.forced.data();
  const double* scalars_advected = impl.scalars_advected.data();
  const double* viscous = impl.viscous.data();
  if (record.empty()) {
    advect_and_force(model, params, in, controls, impl.scalars_advected.data(), impl, {});
    viscosity_stage(model, viscosity, impl.forced.data(), impl.viscous.data(), impl.rhs.data(), impl.viscous_scratch());
  } else {
    const std::size_t faces = static_cast<std::size_t>(model.velocity_count());
    viscous = record.data();
    forced = record.data() + faces;
    scalars_advected = record.data() + 2 * faces;
  }

  // Projection ᵀ = projection.
  std::copy(velocities_bar_out.begin(), velocities_bar_out.end(), impl.velocity_bar.begin());
  zero_wall_faces(model, impl.velocity_bar.data());
  const SolveResult pressure = project(model, impl.pressure_solver, impl.velocity_bar.data(), impl.viscous_bar.data(),
                                       impl.pressure.data(), impl.divergence.data());
  // Viscosity ᵀ.
  std::fill(impl.forced_bar.begin(), impl.forced_bar.end(), 0.0);
  SolveResult viscous_solve;
  params_bar[static_cast<std::size_t>(model.layout.viscosity)] +=
      viscosity_stage_vjp(model, viscosity, forced, viscous, impl.viscous_bar.data(), impl.forced_bar.data(),
                          impl.rhs.data(), impl.adjoint.data(), impl.viscous_scratch(), viscous_solve);
  status.pressure_iterations = pressure.iterations;
  status.pressure_residual = pressure.relative_residual;
  status.viscosity_iterations = viscous_solve.iterations;
  status.converged = pressure.converged && viscous_solve.converged;

  // Obstacles ᵀ: ∂L/∂(their output) → ∂L/∂(the forced velocities) in place, θ̄ of their slices.
  penalize_obstacles_vjp(model, params.values, in.time + h, forced, impl.forced_bar.data(), obstacle_forces_bar,
                         params_bar);

  // Forces ᵀ.
  const double* forced_bar = impl.forced_bar.data();
  const double* forced_v_bar = forced_bar + model.u_count();
  if (!controls_bar.empty()) {
    for (int j = 0; j < ny; ++j)
      for (int i = 1; i < nx; ++i) {
        const double share = 0.5 * h * forced_bar[j * (nx + 1) + i];
        controls_bar[2 * (j * nx + i - 1)] += share;
        controls_bar[2 * (j * nx + i)] += share;
      }
    for (int j = 1; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const double share = 0.5 * h * forced_v_bar[j * nx + i];
        controls_bar[2 * ((j - 1) * nx + i) + 1] += share;
        controls_bar[2 * (j * nx + i) + 1] += share;
      }
  }
  std::copy(scalars_bar_out.begin(), scalars_bar_out.end(), impl.scalars_bar.begin());
  for (int k = 0; k < model.scalar_count; ++k) {
    const double beta = params.values[static_cast<std::size_t>(model.layout.buoyancy + k)];
    const double* s = scalars_advected + static_cast<std::size_t>(k) * cells;
    double* s_bar = impl.scalars_bar.data() + static_cast<std::size_t>(k) * cells;
    double beta_bar = 0.0;
    for (int j = 1; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const double bar = 0.5 * h * forced_v_bar[j * nx + i];
        beta_bar += bar * (s[(j - 1) * nx + i] + s[j * nx + i]);
        s_bar[(j - 1) * nx + i] += beta * bar;
        s_bar[j * nx + i] += beta * bar;
      }
    params_bar[static_cast<std::size_t>(model.layout.buoyancy + k)] += beta_bar;
  }

  // Advection ᵀ: each field's own gradient and the carrier's, both into x̄_t's velocities.
  const double* u = in.velocities.data();
  const double* v = u + model.u_count();
  double* u_bar = velocities_bar_in.data();
  double* v_bar = u_bar + model.u_count();
  const AdvectionScratch scratch = impl.advection_scratch();
  advect_vjp(model, FieldKind::U, u, u, v, forced_bar, u_bar, u_bar, v_bar, scratch);
  advect_vjp(model, FieldKind::V, v, u, v, forced_v_bar, v_bar, u_bar, v_bar, scratch);
  for (int k = 0; k < model.scalar_count; ++k) {
    const std::size_t offset = static_cast<std::size_t>(k) * cells;
    advect_vjp(model, FieldKind::Cell, in.scalars.data() + offset, u, v, impl.scalars_bar.data() + offset,
               scalars_bar_in.data() + offset, u_bar, v_bar, scratch);
  }
  zero_wall_faces(model, u_bar);
}

}  // namespace diffphys::fluid
