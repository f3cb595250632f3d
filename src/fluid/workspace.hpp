// fluid/workspace.hpp — what a FluidWorkspace holds (diffphys/fluid.hpp): the pressure solver
// and every buffer of the step and of its VJP, sized once for a model.
#pragma once

#include <vector>

#include "fluid/advection.hpp"
#include "fluid/pressure.hpp"

namespace diffphys::fluid {

struct FluidWorkspace::Impl {
  explicit Impl(const FluidModel& model);

  int velocity_count, cell_count, scalar_count, lattice_max;
  PressureSolver pressure_solver;
  // (nu + nv) each
  std::vector<double> advected, forced, viscous, rhs, adjoint;
  std::vector<double> solve_residual, solve_direction, solve_preconditioned, solve_product;
  std::vector<double> velocity_bar, viscous_bar, forced_bar;
  // (ncell) each
  std::vector<double> pressure, divergence;
  // (nscalar × ncell)
  std::vector<double> scalars_advected, scalars_bar;
  // (max lattice count) each: MacCormack's φ̂, φ̌, their adjoints and its clamp bounds
  std::vector<double> hat, check, hat_bar, check_bar, low, high;
  // (2 nobstacle) the force of the fluid on each obstacle in the last step (obstacles.hpp)
  std::vector<double> obstacle_forces;

  ViscousScratch viscous_scratch() {
    return {solve_residual.data(), solve_direction.data(), solve_preconditioned.data(), solve_product.data()};
  }
  AdvectionScratch advection_scratch() {
    return {hat.data(), check.data(), hat_bar.data(), check_bar.data(), low.data(), high.data()};
  }
};

}  // namespace diffphys::fluid
