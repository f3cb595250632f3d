// fluid/advection_vjp.cpp — the exact VJP of semi-Lagrangian and MacCormack transport
// (fluid/advection.hpp). Bilinear interpolation f(x_d) at the midpoint-rule departure point:
// the field's gradient goes to the four samples with the bilinear weights; the carrier's flows
// back through x_d = x − step Ũ(x_mid) (Ũ's bilinear weights, and its piecewise-linear
// dependence on x_mid: the weights' derivative, 0 in a clamped direction) and through
// x_mid = x − ½ step U(x) (U's averaging stencil, grid.hpp velocity_at_sample_vjp).
#include <cstring>

#include "fluid/advection.hpp"

namespace diffphys::fluid {

void advect_semi_lagrangian_vjp(const FluidModel& model, FieldKind kind, const double* field, const double* u,
                                const double* v, double step, const double* out_bar, double* field_bar, double* u_bar,
                                double* v_bar) {
  const Lattice lat = lattice(model, kind);
  const Lattice u_lattice = lattice(model, FieldKind::U), v_lattice = lattice(model, FieldKind::V);
  for (int j = 0; j < lat.size_y; ++j)
    for (int i = 0; i < lat.size_x; ++i) {
      if (!is_interior(model, kind, i, j)) continue;
      const double bar = out_bar[lat.index(i, j)];
      if (bar == 0.0) continue;
      const Departure d = departure(model, kind, lat, u, v, step, i, j);
      interpolation_vjp(lat, d.stencil, bar, field_bar);
      // x̄_d = ∇f(x_d) bar.
      double df_dx = 0, df_dy = 0;
      interpolation_gradient(lat, field, d.stencil, model.spacing, df_dx, df_dy);
      const double xd_bar = df_dx * bar, yd_bar = df_dy * bar;
      if (xd_bar == 0.0 && yd_bar == 0.0) continue;
      // x_d = x − step Ũ(x_mid): Ũ's face values take −step x̄_d through the bilinear weights,
      // x_mid takes −step (∂Ũ/∂x_mid)ᵀ x̄_d.
      interpolation_vjp(u_lattice, d.u_mid, -step * xd_bar, u_bar);
      interpolation_vjp(v_lattice, d.v_mid, -step * yd_bar, v_bar);
      double du_dx = 0, du_dy = 0, dv_dx = 0, dv_dy = 0;
      interpolation_gradient(u_lattice, u, d.u_mid, model.spacing, du_dx, du_dy);
      interpolation_gradient(v_lattice, v, d.v_mid, model.spacing, dv_dx, dv_dy);
      const double xmid_bar = -step * (du_dx * xd_bar + dv_dx * yd_bar);
      const double ymid_bar = -step * (du_dy * xd_bar + dv_dy * yd_bar);
      // x_mid = x − ½ step U(x).
      velocity_at_sample_vjp(model, kind, i, j, -0.5 * step * xmid_bar, -0.5 * step * ymid_bar, u_bar, v_bar);
    }
}

void advect_vjp(const FluidModel& model, FieldKind kind, const double* field, const double* u, const double* v,
                const double* out_bar, double* field_bar, double* u_bar, double* v_bar,
                const AdvectionScratch& scratch) {
  if (model.advection == AdvectionScheme::SemiLagrangian) {
    advect_semi_lagrangian_vjp(model, kind, field, u, v, model.dt, out_bar, field_bar, u_bar, v_bar);
    return;
  }
  const Lattice lat = lattice(model, kind);
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(lat.count());
  advect_semi_lagrangian(model, kind, field, u, v, model.dt, scratch.hat, scratch.low, scratch.high);
  advect_semi_lagrangian(model, kind, scratch.hat, u, v, -model.dt, scratch.check);
  std::memset(scratch.hat_bar, 0, bytes);
  std::memset(scratch.check_bar, 0, bytes);
  // φ' = clamp(φ̂ + ½(φ − φ̌), low, high): where clamped, the value is the one sample that
  // attains the bound (a selection, locally independent of the carrier); else the sum's terms.
  for (int j = 0; j < lat.size_y; ++j)
    for (int i = 0; i < lat.size_x; ++i) {
      if (!is_interior(model, kind, i, j)) continue;
      const int n = lat.index(i, j);
      const double bar = out_bar[n];
      if (bar == 0.0) continue;
      const double corrected = scratch.hat[n] + 0.5 * (field[n] - scratch.check[n]);
      const double low = scratch.low[n], high = scratch.high[n];
      if (corrected < low || corrected > high) {
        const double bound = corrected < low ? low : high;
        const Stencil s = departure_stencil(model, kind, lat, u, v, model.dt, i, j);
        const int n00 = lat.index(s.i0, s.j0);
        const int nodes[4] = {n00, n00 + 1, n00 + lat.size_x, n00 + lat.size_x + 1};
        for (const int node : nodes)
          if (field[node] == bound) {
            field_bar[node] += bar;
            break;
          }
        continue;
      }
      scratch.hat_bar[n] += bar;
      field_bar[n] += 0.5 * bar;
      scratch.check_bar[n] -= 0.5 * bar;
    }
  advect_semi_lagrangian_vjp(model, kind, scratch.hat, u, v, -model.dt, scratch.check_bar, scratch.hat_bar, u_bar,
                             v_bar);
  advect_semi_lagrangian_vjp(model, kind, field, u, v, model.dt, scratch.hat_bar, field_bar, u_bar, v_bar);
}

}  // namespace diffphys::fluid
