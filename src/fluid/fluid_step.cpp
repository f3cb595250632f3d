// fluid/fluid_step.cpp — one fluid step as its list of stages (diffphys/fluid.hpp):
// advect → forces → obstacles → viscosity → project, state_in → state_out.
#include "fluid/fluid_step.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "fluid/obstacles.hpp"
#include "fluid/workspace.hpp"

namespace diffphys::fluid {
namespace {

void check_sizes(const FluidModel& model, const FluidState& in, std::span<const double> controls) {
  if (static_cast<int>(in.velocities.size()) != model.velocity_count() ||
      in.scalars.size() != static_cast<std::size_t>(model.scalar_count) * model.cell_count())
    throw Error(message("fluid_step: state sizes (", in.velocities.size(), " velocities, ", in.scalars.size(),
                        " scalars) do not match fluid '", model.name, "'"));
  if (!controls.empty() && static_cast<int>(controls.size()) != model.control_count())
    throw Error(message("fluid_step: controls have ", controls.size(), " values, fluid '", model.name, "' takes ",
                        model.control_count(), " (2 per cell) or none"));
}

// max |velocity| over the faces, or NaN if any is not finite.
double max_speed(std::span<const double> velocities) {
  double speed = 0.0;
  for (const double value : velocities) {
    if (!std::isfinite(value)) return std::nan("");
    speed = std::max(speed, std::abs(value));
  }
  return speed;
}

bool all_finite(std::span<const double> values) {
  for (const double value : values)
    if (!std::isfinite(value)) return false;
  return true;
}

}  // namespace

void advect_and_force(const FluidModel& model, const FluidParams& params, const FluidState& in,
                      std::span<const double> controls, double* scalars_out, FluidWorkspace::Impl& impl,
                      std::span<double> obstacle_forces) {
  const int nx = model.nx, ny = model.ny, cells = model.cell_count();
  const double* u = in.velocities.data();
  const double* v = u + model.u_count();
  const AdvectionScratch scratch = impl.advection_scratch();
  double* forced = impl.forced.data();
  advect(model, FieldKind::U, u, u, v, forced, scratch);
  advect(model, FieldKind::V, v, u, v, forced + model.u_count(), scratch);
  for (int k = 0; k < model.scalar_count; ++k)
    advect(model, FieldKind::Cell, in.scalars.data() + static_cast<std::size_t>(k) * cells, u, v,
           scalars_out + static_cast<std::size_t>(k) * cells, scratch);
  const double h = model.dt;
  double* forced_v = forced + model.u_count();
  if (!controls.empty()) {  // cell accelerations averaged to the interior faces
    for (int j = 0; j < ny; ++j)
      for (int i = 1; i < nx; ++i)
        forced[j * (nx + 1) + i] += 0.5 * h * (controls[2 * (j * nx + i - 1)] + controls[2 * (j * nx + i)]);
    for (int j = 1; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        forced_v[j * nx + i] += 0.5 * h * (controls[2 * ((j - 1) * nx + i) + 1] + controls[2 * (j * nx + i) + 1]);
  }
  // Boussinesq buoyancy from the advected scalars, at the v faces.
  for (int k = 0; k < model.scalar_count; ++k) {
    const double beta = params.values[static_cast<std::size_t>(model.layout.buoyancy + k)];
    if (beta == 0.0) continue;
    const double* s = scalars_out + static_cast<std::size_t>(k) * cells;
    for (int j = 1; j < ny; ++j)
      for (int i = 0; i < nx; ++i) forced_v[j * nx + i] += 0.5 * h * beta * (s[(j - 1) * nx + i] + s[j * nx + i]);
  }
  penalize_obstacles(model, params.values, in.time + h, forced, obstacle_forces);
}

FluidStepStatus fluid_step_recorded(const FluidModel& model, const FluidParams& params, const FluidState& in,
                                    std::span<const double> controls, FluidState& out, FluidWorkspace& workspace,
                                    std::span<double> record) {
  check_sizes(model, in, controls);
  FluidWorkspace::Impl& impl = workspace.impl();
  out.velocities.resize(in.velocities.size());
  out.scalars.resize(in.scalars.size());
  out.time = in.time + model.dt;
  FluidStepStatus status;
  const double speed = max_speed(in.velocities);
  status.cfl = speed * model.dt / model.spacing;
  if (!std::isfinite(speed) || !all_finite(in.scalars) || !all_finite(controls)) {
    status.converged = false;
    status.message = message("fluid '", model.name, "': non-finite value in the state or controls at t = ", in.time);
    return status;
  }
  if (status.cfl > model.max_cfl) {
    status.converged = false;
    status.message = message("fluid '", model.name, "': CFL number ", status.cfl, " at t = ", in.time,
                             " exceeds max_cfl ", model.max_cfl, " (the flow is too fast for dt / spacing)");
    return status;
  }
  for (int o = 0; o < model.obstacle_count(); ++o) {
    double center[2];
    if (!obstacle_inside_domain(model, params.values, o, in.time + model.dt, center)) {
      status.converged = false;
      status.message = message("fluid '", model.name, "': obstacle '", model.obstacle_names[static_cast<std::size_t>(o)],
                               "' has left the domain at t = ", in.time + model.dt, " (its center at (", center[0],
                               ", ", center[1], "))");
      return status;
    }
  }
  const double viscosity = params.values[static_cast<std::size_t>(model.layout.viscosity)];

  advect_and_force(model, params, in, controls, out.scalars.data(), impl, impl.obstacle_forces);
  const SolveResult viscous = viscosity_stage(model, viscosity, impl.forced.data(), impl.viscous.data(),
                                              impl.rhs.data(), impl.viscous_scratch());
  if (!record.empty()) {
    const std::size_t faces = static_cast<std::size_t>(model.velocity_count());
    std::copy(impl.viscous.begin(), impl.viscous.end(), record.begin());
    std::copy(impl.forced.begin(), impl.forced.end(), record.begin() + faces);
    std::copy(out.scalars.begin(), out.scalars.end(), record.begin() + 2 * faces);
  }
  const SolveResult pressure = project(model, impl.pressure_solver, impl.viscous.data(), out.velocities.data(),
                                       impl.pressure.data(), impl.divergence.data());

  status.viscosity_iterations = viscous.iterations;
  status.pressure_iterations = pressure.iterations;
  status.pressure_residual = pressure.relative_residual;
  double before = 0.0, after = 0.0;
  // impl.divergence holds −∇·u*; the divergence after, into it.
  for (int c = 0; c < model.cell_count(); ++c) before += impl.divergence[c] * impl.divergence[c];
  cell_divergence(model, out.velocities.data(), impl.divergence.data());
  for (int c = 0; c < model.cell_count(); ++c) after += impl.divergence[c] * impl.divergence[c];
  status.divergence_before = std::sqrt(before / model.cell_count());
  status.divergence_after = std::sqrt(after / model.cell_count());
  if (!viscous.converged || !pressure.converged) {
    status.converged = false;
    status.message = message("fluid '", model.name, "': ", !pressure.converged ? "pressure" : "viscosity",
                             " solve missed its tolerance at t = ", in.time, " (relative residual ",
                             !pressure.converged ? pressure.relative_residual : viscous.relative_residual, " after ",
                             !pressure.converged ? pressure.iterations : viscous.iterations, " iterations)");
  }
  if (!all_finite(out.velocities) || !all_finite(out.scalars)) {
    status.converged = false;
    status.message = message("fluid '", model.name, "': the step from t = ", in.time, " produced a non-finite state");
  }
  return status;
}

FluidStepStatus fluid_step(const FluidModel& model, const FluidParams& params, const FluidState& in,
                           std::span<const double> controls, FluidState& out, FluidWorkspace& workspace) {
  return fluid_step_recorded(model, params, in, controls, out, workspace, {});
}

}  // namespace diffphys::fluid
