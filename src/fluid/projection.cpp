// fluid/projection.cpp — the pressure projection u_{t+1} = u* − G p, A p = −D u*
// (fluid/pressure.hpp). Self-adjoint, so the backward pass calls the same function on ū.
#include "fluid/pressure.hpp"

namespace diffphys::fluid {

void cell_divergence(const FluidModel& model, const double* w, double* divergence) {
  const int nx = model.nx, ny = model.ny;
  const double* u = w;
  const double* v = w + model.u_count();
  const double inverse_spacing = 1.0 / model.spacing;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      divergence[j * nx + i] =
          (u[j * (nx + 1) + i + 1] - u[j * (nx + 1) + i] + v[(j + 1) * nx + i] - v[j * nx + i]) * inverse_spacing;
}

SolveResult project(const FluidModel& model, PressureSolver& solver, const double* u_star, double* u_out,
                    double* pressure, double* divergence) {
  const int nx = model.nx, ny = model.ny, cells = model.cell_count();
  cell_divergence(model, u_star, divergence);
  for (int c = 0; c < cells; ++c) divergence[c] = -divergence[c];
  const SolveResult result = solver.solve(divergence, pressure);
  const double inverse_spacing = 1.0 / model.spacing;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      const int n = j * (nx + 1) + i;
      u_out[n] =
          i == 0 || i == nx ? 0.0 : u_star[n] - (pressure[j * nx + i] - pressure[j * nx + i - 1]) * inverse_spacing;
    }
  const double* v_star = u_star + model.u_count();
  double* v_out = u_out + model.u_count();
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int n = j * nx + i;
      v_out[n] =
          j == 0 || j == ny ? 0.0 : v_star[n] - (pressure[j * nx + i] - pressure[(j - 1) * nx + i]) * inverse_spacing;
    }
  return result;
}

}  // namespace diffphys::fluid
