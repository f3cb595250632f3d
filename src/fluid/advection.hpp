// fluid/advection.hpp — semi-Lagrangian transport of one sampled field (u, v or a cell scalar)
// along a carrier velocity, and its exact VJP (fluid/advection.cpp, fluid/advection_vjp.cpp).
//
// A sample at x takes the value of the field at the departure point (the characteristic traced
// back over h by the midpoint rule, below), bilinearly interpolated, the point clamped into the
// field's sample lattice. MacCormack
// (Selle et al. 2008, eq. 6–8): φ̂ = A(φ), φ̌ = A⁻(φ̂) (A with −h), φ' = φ̂ + ½(φ − φ̌), clamped
// to [min, max] of φ's four samples around the forward departure point. Samples on walls
// (grid.hpp is_interior) are 0 in the result and take no gradient.
#pragma once

#include "fluid/grid.hpp"

namespace diffphys::fluid {

// The departure point of sample (i, j) by the midpoint rule (RK2) back along the carrier:
//   x_mid = x − ½ step U(x),  x_d = x − step Ũ(x_mid),
// U(x) from the faces by the sample's averaging stencil, Ũ bilinear in the u and v lattices.
// A single Euler step (x − step U(x)) would make the departure point's error O(h²) per step
// with the same sign going forward and back, which MacCormack's correction cannot remove
// (measured: first order in time); the midpoint rule's is O(h³).
// Positions in units of Δx (the hot loop divides by nothing).
struct Departure {
  Stencil u_mid, v_mid;  // Ũ's stencils at x_mid
  Stencil stencil;       // the field's stencil at x_d
};

inline Departure departure(const FluidModel& model, FieldKind kind, const Lattice& lat, const double* u,
                           const double* v, double step, int i, int j) {
  Departure d;
  double velocity_x = 0, velocity_y = 0;
  velocity_at_sample(model, kind, u, v, i, j, velocity_x, velocity_y);
  const double cells_per_velocity = step / model.spacing;  // s/m × ... : velocity → cells moved
  const double x = i + lat.offset_x, y = j + lat.offset_y;
  const double x_mid = x - 0.5 * cells_per_velocity * velocity_x;
  const double y_mid = y - 0.5 * cells_per_velocity * velocity_y;
  const Lattice u_lattice{model.nx + 1, model.ny, 0.0, 0.5}, v_lattice{model.nx, model.ny + 1, 0.5, 0.0};
  d.u_mid = locate(u_lattice, x_mid, y_mid);
  d.v_mid = locate(v_lattice, x_mid, y_mid);
  d.stencil = locate(lat, x - cells_per_velocity * interpolate(u_lattice, u, d.u_mid),
                     y - cells_per_velocity * interpolate(v_lattice, v, d.v_mid));
  return d;
}

inline Stencil departure_stencil(const FluidModel& model, FieldKind kind, const Lattice& lat, const double* u,
                                 const double* v, double step, int i, int j) {
  return departure(model, kind, lat, u, v, step, i, j).stencil;
}

// MacCormack's clamp bounds: min and max of the field's four samples of a stencil.
inline void stencil_bounds(const Lattice& lat, const double* field, const Stencil& s, double& low, double& high) {
  const double* row0 = field + lat.index(s.i0, s.j0);
  const double* row1 = row0 + lat.size_x;
  low = std::min(std::min(row0[0], row0[1]), std::min(row1[0], row1[1]));
  high = std::max(std::max(row0[0], row0[1]), std::max(row1[0], row1[1]));
}

// out = A_step(field): `step` is the backtrace time (h forward, −h for MacCormack's reverse).
// `u`, `v`: the carrier's u and v blocks.
// When `low` and `high` are given, they receive the min and max of the four samples around
// each departure point (MacCormack's clamp bounds), so its correction need not trace again.
void advect_semi_lagrangian(const FluidModel& model, FieldKind kind, const double* field, const double* u,
                            const double* v, double step, double* out, double* low = nullptr, double* high = nullptr);

// Adds (∂out/∂field)ᵀ out_bar into field_bar and (∂out/∂(u, v))ᵀ out_bar into u_bar, v_bar —
// the latter through the departure point's dependence on the carrier (the interpolation
// weights' derivative).
void advect_semi_lagrangian_vjp(const FluidModel& model, FieldKind kind, const double* field, const double* u,
                                const double* v, double step, const double* out_bar, double* field_bar, double* u_bar,
                                double* v_bar);

// Scratch of at least the lattice's count each.
struct AdvectionScratch {
  double* hat;
  double* check;
  double* hat_bar;
  double* check_bar;
  double* low;  // MacCormack's clamp bounds per sample
  double* high;
};

// The model's scheme (semi-Lagrangian or MacCormack) with backtrace time h.
void advect(const FluidModel& model, FieldKind kind, const double* field, const double* u, const double* v, double* out,
            const AdvectionScratch& scratch);
// Its VJP: adds into field_bar, u_bar, v_bar (recomputes φ̂ and φ̌ for MacCormack).
void advect_vjp(const FluidModel& model, FieldKind kind, const double* field, const double* u, const double* v,
                const double* out_bar, double* field_bar, double* u_bar, double* v_bar,
                const AdvectionScratch& scratch);

}  // namespace diffphys::fluid
