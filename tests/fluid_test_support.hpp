// tests/fluid_test_support.hpp — fluids shared by the fluid tests: the Taylor–Green vortex on
// [0, π]² with free-slip walls, a small box with mixed walls and a moving lid, random states.
#pragma once

#include <cmath>
#include <numbers>
#include <random>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid::testing {

// u = sin x cos y, v = −cos x sin y on [0, π]²: zero normal velocity and zero shear stress on
// every side, so with free-slip walls it is an exact Navier–Stokes solution whose velocity
// decays as exp(−2νt) (k = 1 per direction) and kinetic energy as exp(−4νt).
inline FluidSpec taylor_green_spec(int cells, double viscosity, double dt, AdvectionScheme scheme) {
  FluidSpec spec;
  spec.nx = spec.ny = cells;
  spec.spacing = std::numbers::pi / cells;
  spec.dt = dt;
  spec.viscosity = viscosity;
  spec.scalar_count = 0;
  for (WallSpec& wall : spec.walls) wall.type = WallType::FreeSlip;
  spec.advection = scheme;
  spec.viscosity_theta = 0.5;
  return spec;
}

inline void set_taylor_green(const FluidModel& model, FluidState& state) {
  const int nx = model.nx, ny = model.ny;
  const double h = model.spacing;
  for (int j = 0; j < ny; ++j)
    for (int i = 1; i < nx; ++i) state.velocities[j * (nx + 1) + i] = std::sin(i * h) * std::cos((j + 0.5) * h);
  for (int j = 1; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      state.velocities[model.u_count() + j * nx + i] = -std::cos((i + 0.5) * h) * std::sin(j * h);
}

// A small non-square box: no-slip left and bottom, free-slip right, a no-slip lid moving at
// 0.3 m/s on top; two scalars, the first buoyant.
inline FluidSpec small_box_spec(AdvectionScheme scheme, double theta) {
  FluidSpec spec;
  spec.nx = 6;
  spec.ny = 5;
  spec.spacing = 0.1;
  spec.dt = 0.04;
  spec.viscosity = 0.02;
  spec.scalar_count = 2;
  spec.buoyancy = {0.8, -0.3};
  spec.walls[static_cast<int>(Side::Right)].type = WallType::FreeSlip;
  spec.walls[static_cast<int>(Side::Top)].tangential_velocity = 0.3;
  spec.advection = scheme;
  spec.viscosity_theta = theta;
  spec.solver.relative_tolerance = 1e-14;
  return spec;
}

// Velocities uniform in ±speed on the interior faces (wall faces 0), scalars in [0, 1].
inline void randomise(const FluidModel& model, FluidState& state, unsigned seed, double speed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const int nx = model.nx, ny = model.ny;
  for (int j = 0; j < ny; ++j)
    for (int i = 1; i < nx; ++i) state.velocities[j * (nx + 1) + i] = speed * uniform(random);
  for (int j = 1; j < ny; ++j)
    for (int i = 0; i < nx; ++i) state.velocities[model.u_count() + j * nx + i] = speed * uniform(random);
  for (double& value : state.scalars) value = 0.5 + 0.5 * uniform(random);
}

}  // namespace diffphys::fluid::testing
