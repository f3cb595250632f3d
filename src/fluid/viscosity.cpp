// fluid/viscosity.cpp — the face Laplacian with wall ghosts and the implicit viscous solve
// (fluid/viscosity.hpp).
#include "fluid/viscosity.hpp"

#include <cmath>

#include "fluid/vector_ops.hpp"

namespace diffphys::fluid {
namespace {

// A face's coupling across a wall: −2 (no-slip ghost 2U − w) or 0 (free-slip ghost w).
double wall_self_coupling(const WallSpec& wall) {
  return wall.type == WallType::NoSlip ? -2.0 : 0.0;
}

// The number of the diagonal of −Δx² L0 at a face (its stencil's centre weight).
double diagonal_count(const FluidModel& model, FieldKind kind, int i, int j) {
  if (kind == FieldKind::U) {
    double count = 2.0;
    count += j > 0 ? 1.0 : -wall_self_coupling(model.walls[static_cast<int>(Side::Bottom)]);
    count += j < model.ny - 1 ? 1.0 : -wall_self_coupling(model.walls[static_cast<int>(Side::Top)]);
    return count;
  }
  double count = 2.0;
  count += i > 0 ? 1.0 : -wall_self_coupling(model.walls[static_cast<int>(Side::Left)]);
  count += i < model.nx - 1 ? 1.0 : -wall_self_coupling(model.walls[static_cast<int>(Side::Right)]);
  return count;
}

}  // namespace

void apply_face_laplacian(const FluidModel& model, const double* w, double* out) {
  const int nx = model.nx, ny = model.ny;
  const double inverse_area = 1.0 / (model.spacing * model.spacing);
  const int stride = nx + 1;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      const int n = j * stride + i;
      if (i == 0 || i == nx) {
        out[n] = 0.0;
        continue;
      }
      double sum = w[n - 1] + w[n + 1] - diagonal_count(model, FieldKind::U, i, j) * w[n];
      if (j > 0) sum += w[n - stride];
      if (j < ny - 1) sum += w[n + stride];
      out[n] = sum * inverse_area;
    }
  const double* wv = w + model.u_count();
  double* outv = out + model.u_count();
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int n = j * nx + i;
      if (j == 0 || j == ny) {
        outv[n] = 0.0;
        continue;
      }
      double sum = wv[n - nx] + wv[n + nx] - diagonal_count(model, FieldKind::V, i, j) * wv[n];
      if (i > 0) sum += wv[n - 1];
      if (i < nx - 1) sum += wv[n + 1];
      outv[n] = sum * inverse_area;
    }
}

void add_wall_term(const FluidModel& model, double scale, double* out) {
  const int nx = model.nx, ny = model.ny;
  const double factor = 2.0 * scale / (model.spacing * model.spacing);  // ghost 2U − w: the 2U
  const WallSpec& bottom = model.walls[static_cast<int>(Side::Bottom)];
  const WallSpec& top = model.walls[static_cast<int>(Side::Top)];
  const WallSpec& left = model.walls[static_cast<int>(Side::Left)];
  const WallSpec& right = model.walls[static_cast<int>(Side::Right)];
  for (int i = 1; i < nx; ++i) {
    if (bottom.type == WallType::NoSlip) out[i] += factor * bottom.tangential_velocity;
    if (top.type == WallType::NoSlip) out[(ny - 1) * (nx + 1) + i] += factor * top.tangential_velocity;
  }
  double* outv = out + model.u_count();
  for (int j = 1; j < ny; ++j) {
    if (left.type == WallType::NoSlip) outv[j * nx] += factor * left.tangential_velocity;
    if (right.type == WallType::NoSlip) outv[j * nx + nx - 1] += factor * right.tangential_velocity;
  }
}

SolveResult solve_viscous_system(const FluidModel& model, double a, const double* rhs, double* x,
                                 const ViscousScratch& scratch) {
  const int n = model.velocity_count();
  const double inverse_area = 1.0 / (model.spacing * model.spacing);
  double* r = scratch.residual;
  double* z = scratch.preconditioned;
  double* p = scratch.direction;
  double* q = scratch.product;
  // q = (I − a L0) x
  const auto apply = [&](const double* in, double* out) {
    apply_face_laplacian(model, in, out);
    for (int k = 0; k < n; ++k) out[k] = in[k] - a * out[k];
  };
  // Jacobi: z = r / diag(I − a L0), the walls' faces (rows of the identity's zeros) left at 0.
  const auto precondition = [&]() {
    const int stride = model.nx + 1;
    for (int k = 0; k < n; ++k) z[k] = 0.0;
    for (int j = 0; j < model.ny; ++j)
      for (int i = 1; i < model.nx; ++i)
        z[j * stride + i] = r[j * stride + i] / (1.0 + a * inverse_area * diagonal_count(model, FieldKind::U, i, j));
    const int offset = model.u_count();
    for (int j = 1; j < model.ny; ++j)
      for (int i = 0; i < model.nx; ++i)
        z[offset + j * model.nx + i] =
            r[offset + j * model.nx + i] / (1.0 + a * inverse_area * diagonal_count(model, FieldKind::V, i, j));
  };
  SolveResult result;
  for (int k = 0; k < n; ++k) x[k] = rhs[k];
  const double rhs_norm = std::sqrt(dot(rhs, rhs, n));
  if (rhs_norm == 0.0) return result;
  apply(x, q);
  for (int k = 0; k < n; ++k) r[k] = rhs[k] - q[k];
  double residual_norm = std::sqrt(dot(r, r, n));
  const double target = model.solver.relative_tolerance * rhs_norm;
  precondition();
  for (int k = 0; k < n; ++k) p[k] = z[k];
  double rz = dot(r, z, n);
  while (residual_norm > target && result.iterations < model.solver.max_iterations) {
    apply(p, q);
    const double alpha = rz / dot(p, q, n);
    for (int k = 0; k < n; ++k) {
      x[k] += alpha * p[k];
      r[k] -= alpha * q[k];
    }
    residual_norm = std::sqrt(dot(r, r, n));
    ++result.iterations;
    precondition();
    const double rz_next = dot(r, z, n);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (int k = 0; k < n; ++k) p[k] = z[k] + beta * p[k];
  }
  result.relative_residual = residual_norm / rhs_norm;
  result.converged = residual_norm <= target;
  return result;
}

SolveResult viscosity_stage(const FluidModel& model, double viscosity, const double* u, double* u_star, double* work,
                            const ViscousScratch& scratch) {
  const int n = model.velocity_count();
  const double nu_h = viscosity * model.dt;
  if (nu_h == 0.0) {
    for (int k = 0; k < n; ++k) u_star[k] = u[k];
    return {};
  }
  const double explicit_share = (1.0 - model.viscosity_theta) * nu_h;
  apply_face_laplacian(model, u, work);
  for (int k = 0; k < n; ++k) work[k] = u[k] + explicit_share * work[k];
  add_wall_term(model, nu_h, work);
  return solve_viscous_system(model, model.viscosity_theta * nu_h, work, u_star, scratch);
}

}  // namespace diffphys::fluid
