// fluid/fluid_report.cpp — the fluid part's PartReport (world/part_report.hpp): its description
// for `diffphys info` (grid, time step, walls, advection, solver, the scalars, θ and the
// world's slices) and its lines of the `diffphys simulate` summary (pressure and viscous
// iterations, the worst divergence after projection and CFL number, kinetic energy and each
// scalar's mass at the end). A failed fluid step is an Error, so there is nothing to list as
// not converged.
#include <algorithm>
#include <ostream>

#include "world/part_report.hpp"

namespace diffphys::report {

namespace {

using fluid::FluidModel;

const char* wall_text(const fluid::WallSpec& wall) { return wall.type == fluid::WallType::NoSlip ? "no-slip" : "free-slip"; }

class FluidReport final : public PartReport {
 public:
  FluidReport(const World& world, const WorldParams& params) : world_(world), params_(fluid_params(world, params)) {}

  std::string name() const override { return "fluid"; }
  std::string single_heading() const override { return "fluid scene"; }

  void describe(std::ostream& out, const std::string& heading) const override {
    const FluidModel& model = world_.fluid->model;
    out << heading << " (\"" << model.name << "\")\n";
    out << "grid        " << model.nx << " x " << model.ny << " cells of " << number(model.spacing) << " m ("
        << number(model.nx * model.spacing) << " x " << number(model.ny * model.spacing) << " m), MAC faces "
        << model.u_count() << " u + " << model.v_count() << " v\n";
    out << "time step   " << number(model.dt) << " s, max CFL " << number(model.max_cfl) << "\n";
    out << "advection   " << (model.advection == fluid::AdvectionScheme::MacCormack ? "maccormack" : "semi_lagrangian")
        << "; viscosity theta " << number(model.viscosity_theta) << "\n";
    static const char* const sides[4] = {"left", "right", "bottom", "top"};
    out << "walls      ";
    for (int side = 0; side < 4; ++side) {
      const fluid::WallSpec& wall = model.walls[static_cast<std::size_t>(side)];
      out << " " << sides[side] << " " << wall_text(wall);
      if (wall.tangential_velocity != 0.0) out << " moving at " << number(wall.tangential_velocity) << " m/s";
      out << (side < 3 ? "," : "\n");
    }
    out << "solver      PCG + multigrid V-cycle, relative tolerance " << number(model.solver.relative_tolerance) << ", at most "
        << model.solver.max_iterations << " iterations\n";
    const fluid::FluidState& initial = world_.fluid->state;
    out << "scalars     " << model.scalar_count << "\n";
    for (int k = 0; k < model.scalar_count; ++k)
      out << "  " << model.scalar_names[static_cast<std::size_t>(k)] << ": buoyancy "
          << number(params_.values[static_cast<std::size_t>(model.layout.buoyancy + k)]) << " m/s² per unit, initial mass "
          << number_or_zero(fluid::scalar_mass(model, initial, k)) << "\n";
    out << "parameters  fluid/viscosity = " << number(params_.values[static_cast<std::size_t>(model.layout.viscosity)]) << " m²/s\n";
    if (model.obstacle_count() > 0)
      out << "obstacles   " << model.obstacle_count() << " (Brinkman penalization, permeability "
          << number(model.obstacle_permeability) << " s, ramp half-width " << number(model.obstacle_band) << " cells)\n";
    for (int o = 0; o < model.obstacle_count(); ++o) {
      const double* theta = params_.values.data() + model.layout.obstacles + fluid::kObstacleParams * o;
      out << "  " << model.obstacle_names[static_cast<std::size_t>(o)] << ": ellipse at (" << number(theta[0]) << ", "
          << number(theta[1]) << ") m, semi-axes " << number(theta[2]) << " x " << number(theta[3]) << " m, angle "
          << number(theta[4]) << " rad, velocity (" << number(theta[5]) << ", " << number(theta[6]) << ") m/s\n";
    }
    const WorldLayout& layout = world_.layout();
    out << "slices      state/tangent:";
    for (const NamedSlice& slice : layout.state)
      if (slice.name.starts_with("fluid/")) out << " " << slice.name << " (" << slice.size << ")";
    out << "\n            controls: fluid/force (" << model.control_count() << " per step, m/s²)\n";
  }

  std::string scene_summary() const override {
    const FluidModel& model = world_.fluid->model;
    return "fluid, " + std::to_string(model.nx) + " x " + std::to_string(model.ny) + " cells, " +
           std::to_string(model.scalar_count) + (model.scalar_count == 1 ? " scalar" : " scalars");
  }

  void observe(long long, const WorldState&, const WorldStepStatus& status) override {
    const fluid::FluidStepStatus& s = *status.fluid;
    max_pressure_iterations_ = std::max(max_pressure_iterations_, s.pressure_iterations);
    max_viscosity_iterations_ = std::max(max_viscosity_iterations_, s.viscosity_iterations);
    max_divergence_after_ = std::max(max_divergence_after_, s.divergence_after);
    max_cfl_ = std::max(max_cfl_, s.cfl);
  }

  void print_summary(std::ostream& out, const WorldState& final_state) const override {
    const FluidModel& model = world_.fluid->model;
    out << "solver      pressure PCG: max " << max_pressure_iterations_ << " iterations; viscosity: max "
        << max_viscosity_iterations_ << " iterations; max RMS divergence after projection "
        << number_or_zero(max_divergence_after_, 3) << " 1/s; max CFL " << number(max_cfl_, 3) << "\n";
    out << "final       kinetic energy " << number_or_zero(fluid::kinetic_energy(model, final_state.fluid)) << " m⁴/s²";
    for (int k = 0; k < model.scalar_count; ++k)
      out << "; " << model.scalar_names[static_cast<std::size_t>(k)] << " mass "
          << number_or_zero(fluid::scalar_mass(model, final_state.fluid, k));
    out << "\n";
  }

  bool print_failures(std::ostream&) const override { return false; }

 private:
  const World& world_;
  fluid::FluidParams params_;
  int max_pressure_iterations_ = 0, max_viscosity_iterations_ = 0;
  double max_divergence_after_ = 0.0, max_cfl_ = 0.0;
};

}  // namespace

std::unique_ptr<PartReport> make_fluid_report(const World& world, const WorldParams& params) {
  return std::make_unique<FluidReport>(world, params);
}

}  // namespace diffphys::report
