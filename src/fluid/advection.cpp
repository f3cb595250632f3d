// fluid/advection.cpp — the forward semi-Lagrangian and MacCormack transport of one field
// (fluid/advection.hpp).
#include "fluid/advection.hpp"

namespace diffphys::fluid {

void advect_semi_lagrangian(const FluidModel& model, FieldKind kind, const double* field, const double* u,
                            const double* v, double step, double* out, double* low, double* high) {
  const Lattice lat = lattice(model, kind);
  for (int j = 0; j < lat.size_y; ++j)
    for (int i = 0; i < lat.size_x; ++i) {
      const int n = lat.index(i, j);
      if (!is_interior(model, kind, i, j)) {
        out[n] = 0.0;
        continue;
      }
      const Stencil stencil = departure_stencil(model, kind, lat, u, v, step, i, j);
      out[n] = interpolate(lat, field, stencil);
      if (low != nullptr) stencil_bounds(lat, field, stencil, low[n], high[n]);
    }
}

void advect(const FluidModel& model, FieldKind kind, const double* field, const double* u, const double* v, double* out,
            const AdvectionScratch& scratch) {
  if (model.advection == AdvectionScheme::SemiLagrangian) {
    advect_semi_lagrangian(model, kind, field, u, v, model.dt, out);
    return;
  }
  // Selle et al. 2008: forward, then back from the forward result; the difference estimates
  // the forward step's error, half of which is removed.
  advect_semi_lagrangian(model, kind, field, u, v, model.dt, scratch.hat, scratch.low, scratch.high);
  advect_semi_lagrangian(model, kind, scratch.hat, u, v, -model.dt, scratch.check);
  const Lattice lat = lattice(model, kind);
  for (int j = 0; j < lat.size_y; ++j)
    for (int i = 0; i < lat.size_x; ++i) {
      const int n = lat.index(i, j);
      if (!is_interior(model, kind, i, j)) {
        out[n] = 0.0;
        continue;
      }
      const double corrected = scratch.hat[n] + 0.5 * (field[n] - scratch.check[n]);
      out[n] = std::clamp(corrected, scratch.low[n], scratch.high[n]);
    }
}

}  // namespace diffphys::fluid
