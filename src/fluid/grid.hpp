// fluid/grid.hpp — indexing of the MAC grid and the sample lattices of its three field kinds
// (u faces, v faces, cell centres), shared by every fluid stage. Layouts: diffphys/fluid.hpp.
#pragma once

#include <algorithm>
#include <cmath>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid {

// Where a field's samples sit: sample (i, j) of a kind is at ((i + offset_x) Δx, (j + offset_y) Δx),
// i ∈ [0, size_x), j ∈ [0, size_y).
enum class FieldKind { U, V, Cell };

struct Lattice {
  int size_x = 0, size_y = 0;
  double offset_x = 0, offset_y = 0;
  int index(int i, int j) const { return j * size_x + i; }
  int count() const { return size_x * size_y; }
};

inline Lattice lattice(const FluidModel& model, FieldKind kind) {
  switch (kind) {
    case FieldKind::U:
      return {model.nx + 1, model.ny, 0.0, 0.5};
    case FieldKind::V:
      return {model.nx, model.ny + 1, 0.5, 0.0};
    case FieldKind::Cell:
      break;
  }
  return {model.nx, model.ny, 0.5, 0.5};
}

// Whether sample (i, j) of a kind is an unknown: every cell; the faces not on a wall.
inline bool is_interior(const FluidModel& model, FieldKind kind, int i, int j) {
  if (kind == FieldKind::U) return i > 0 && i < model.nx;
  if (kind == FieldKind::V) return j > 0 && j < model.ny;
  return true;
}

// Bilinear interpolation stencil at a point (in units of Δx): the lower-left sample (i0, j0),
// the fractions (tx, ty) and whether the point was clamped into the lattice in each direction
// (then the value does not depend on that coordinate).
struct Stencil {
  int i0 = 0, j0 = 0;
  double tx = 0, ty = 0;
  bool clamped_x = false, clamped_y = false;
};

inline void locate_axis(double coordinate, int size, int& lower, double& fraction, bool& clamped) {
  const double top = size - 1;
  clamped = !(coordinate > 0.0 && coordinate < top);
  const double c = std::clamp(coordinate, 0.0, top);
  lower = std::min(static_cast<int>(c), size - 2);
  fraction = c - lower;
}

// x, y in units of Δx from the domain's corner (metres / Δx).
inline Stencil locate(const Lattice& lattice, double x, double y) {
  Stencil s;
  locate_axis(x - lattice.offset_x, lattice.size_x, s.i0, s.tx, s.clamped_x);
  locate_axis(y - lattice.offset_y, lattice.size_y, s.j0, s.ty, s.clamped_y);
  return s;
}

inline double interpolate(const Lattice& lattice, const double* field, const Stencil& s) {
  const double* row0 = field + lattice.index(s.i0, s.j0);
  const double* row1 = row0 + lattice.size_x;
  return (1 - s.ty) * ((1 - s.tx) * row0[0] + s.tx * row0[1]) + s.ty * ((1 - s.tx) * row1[0] + s.tx * row1[1]);
}

// ∂f/∂x and ∂f/∂y (per metre) of the bilinear interpolant at a stencil: piecewise linear in the
// point (the weights' derivative), 0 in a clamped direction.
inline void interpolation_gradient(const Lattice& lattice, const double* field, const Stencil& s, double spacing,
                                   double& df_dx, double& df_dy) {
  const double* row0 = field + lattice.index(s.i0, s.j0);
  const double* row1 = row0 + lattice.size_x;
  df_dx = s.clamped_x ? 0.0 : ((1 - s.ty) * (row0[1] - row0[0]) + s.ty * (row1[1] - row1[0])) / spacing;
  df_dy = s.clamped_y ? 0.0 : ((1 - s.tx) * (row1[0] - row0[0]) + s.tx * (row1[1] - row0[1])) / spacing;
}

// field_bar += (∂interpolate/∂field)ᵀ bar: the bilinear weights.
inline void interpolation_vjp(const Lattice& lattice, const Stencil& s, double bar, double* field_bar) {
  double* row0 = field_bar + lattice.index(s.i0, s.j0);
  double* row1 = row0 + lattice.size_x;
  row0[0] += (1 - s.tx) * (1 - s.ty) * bar;
  row0[1] += s.tx * (1 - s.ty) * bar;
  row1[0] += (1 - s.tx) * s.ty * bar;
  row1[1] += s.tx * s.ty * bar;
}

// The velocity (u, v) at sample (i, j) of a kind, from the staggered faces by the fixed
// averaging stencils (exact at the kind's own component). `u` and `v` point at the u and v blocks.
inline void velocity_at_sample(const FluidModel& model, FieldKind kind, const double* u, const double* v, int i, int j,
                               double& velocity_x, double& velocity_y) {
  const int nx = model.nx;
  const int u_stride = nx + 1;
  if (kind == FieldKind::U) {  // face (i Δx, (j+½) Δx), 1 ≤ i ≤ nx−1: v from the four around it
    velocity_x = u[j * u_stride + i];
    velocity_y = 0.25 * (v[j * nx + i - 1] + v[j * nx + i] + v[(j + 1) * nx + i - 1] + v[(j + 1) * nx + i]);
  } else if (kind == FieldKind::V) {  // face ((i+½) Δx, j Δx), 1 ≤ j ≤ ny−1
    velocity_x = 0.25 * (u[(j - 1) * u_stride + i] + u[(j - 1) * u_stride + i + 1] + u[j * u_stride + i] +
                         u[j * u_stride + i + 1]);
    velocity_y = v[j * nx + i];
  } else {
    velocity_x = 0.5 * (u[j * u_stride + i] + u[j * u_stride + i + 1]);
    velocity_y = 0.5 * (v[j * nx + i] + v[(j + 1) * nx + i]);
  }
}

// Transpose of velocity_at_sample: adds (∂(u,v)/∂faces)ᵀ (bar_x, bar_y) into u_bar, v_bar.
inline void velocity_at_sample_vjp(const FluidModel& model, FieldKind kind, int i, int j, double bar_x, double bar_y,
                                   double* u_bar, double* v_bar) {
  const int nx = model.nx;
  const int u_stride = nx + 1;
  if (kind == FieldKind::U) {
    u_bar[j * u_stride + i] += bar_x;
    const double q = 0.25 * bar_y;
    v_bar[j * nx + i - 1] += q;
    v_bar[j * nx + i] += q;
    v_bar[(j + 1) * nx + i - 1] += q;
    v_bar[(j + 1) * nx + i] += q;
  } else if (kind == FieldKind::V) {
    const double q = 0.25 * bar_x;
    u_bar[(j - 1) * u_stride + i] += q;
    u_bar[(j - 1) * u_stride + i + 1] += q;
    u_bar[j * u_stride + i] += q;
    u_bar[j * u_stride + i + 1] += q;
    v_bar[j * nx + i] += bar_y;
  } else {
    u_bar[j * u_stride + i] += 0.5 * bar_x;
    u_bar[j * u_stride + i + 1] += 0.5 * bar_x;
    v_bar[j * nx + i] += 0.5 * bar_y;
    v_bar[(j + 1) * nx + i] += 0.5 * bar_y;
  }
}

}  // namespace diffphys::fluid
