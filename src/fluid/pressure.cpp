// fluid/pressure.cpp — PCG with a multigrid V-cycle preconditioner for the Neumann Poisson
// system (fluid/pressure.hpp).
#include "fluid/pressure.hpp"

#include <cmath>

#include "fluid/vector_ops.hpp"

namespace diffphys::fluid {
namespace {

constexpr int kMaxDenseCells = 1024;

void remove_mean(double* x, int n) {
  double mean = 0.0;
  for (int k = 0; k < n; ++k) mean += x[k];
  mean /= n;
  for (int k = 0; k < n; ++k) x[k] -= mean;
}

int neighbour_count(int nx, int ny, int i, int j) {
  return (i > 0) + (i < nx - 1) + (j > 0) + (j < ny - 1);
}

// Bilinear prolongation between cell centres: fine cell (i, j) takes 9/16 of its parent, 3/16 of
// the parent's neighbour on its side in x and in y, 1/16 of the diagonal one; a neighbour
// outside the domain is replaced by the parent (reflection: zero normal gradient).
template <typename Visit>
void for_each_prolongation_weight(int fine_nx, int fine_ny, Visit&& visit) {
  const int coarse_nx = fine_nx / 2, coarse_ny = fine_ny / 2;
  for (int j = 0; j < fine_ny; ++j)
    for (int i = 0; i < fine_nx; ++i) {
      const int parent_i = i / 2, parent_j = j / 2;
      int side_i = parent_i + (i % 2 == 0 ? -1 : 1);
      int side_j = parent_j + (j % 2 == 0 ? -1 : 1);
      if (side_i < 0 || side_i >= coarse_nx) side_i = parent_i;
      if (side_j < 0 || side_j >= coarse_ny) side_j = parent_j;
      const int fine = j * fine_nx + i;
      visit(fine, parent_j * coarse_nx + parent_i, 9.0 / 16);
      visit(fine, parent_j * coarse_nx + side_i, 3.0 / 16);
      visit(fine, side_j * coarse_nx + parent_i, 3.0 / 16);
      visit(fine, side_j * coarse_nx + side_i, 1.0 / 16);
    }
}

}  // namespace

PressureSolver::PressureSolver(const FluidModel& model)
    : sweeps_(model.solver.smoothing_sweeps),
      tolerance_(model.solver.relative_tolerance),
      max_iterations_(model.solver.max_iterations) {
  int nx = model.nx, ny = model.ny;
  double spacing = model.spacing;
  while (true) {
    Level level;
    level.nx = nx;
    level.ny = ny;
    level.inverse_area = 1.0 / (spacing * spacing);
    level.x.assign(static_cast<std::size_t>(nx) * ny, 0.0);
    level.b = level.x;
    level.r = level.x;
    levels_.push_back(std::move(level));
    if (nx % 2 != 0 || ny % 2 != 0 || nx * ny <= 16 || nx < 4 || ny < 4) break;
    nx /= 2;
    ny /= 2;
    spacing *= 2;
  }
  const Level& coarsest = levels_.back();
  const int n = coarsest.nx * coarsest.ny;
  if (n <= kMaxDenseCells) {
    // Dense A + α 11ᵀ (α = 1/(n Δx²)), then its Cholesky factor in place (lower triangle).
    std::vector<double>& m = coarse_factor_;
    m.assign(static_cast<std::size_t>(n) * n, 1.0 / n * coarsest.inverse_area);
    for (int j = 0; j < coarsest.ny; ++j)
      for (int i = 0; i < coarsest.nx; ++i) {
        const int c = j * coarsest.nx + i;
        m[static_cast<std::size_t>(c) * n + c] +=
            neighbour_count(coarsest.nx, coarsest.ny, i, j) * coarsest.inverse_area;
        const auto couple = [&](int other) { m[static_cast<std::size_t>(c) * n + other] -= coarsest.inverse_area; };
        if (i > 0) couple(c - 1);
        if (i < coarsest.nx - 1) couple(c + 1);
        if (j > 0) couple(c - coarsest.nx);
        if (j < coarsest.ny - 1) couple(c + coarsest.nx);
      }
    for (int k = 0; k < n; ++k) {
      double diagonal = m[static_cast<std::size_t>(k) * n + k];
      for (int s = 0; s < k; ++s)
        diagonal -= m[static_cast<std::size_t>(k) * n + s] * m[static_cast<std::size_t>(k) * n + s];
      const double pivot = std::sqrt(diagonal);
      m[static_cast<std::size_t>(k) * n + k] = pivot;
      for (int row = k + 1; row < n; ++row) {
        double value = m[static_cast<std::size_t>(row) * n + k];
        for (int s = 0; s < k; ++s)
          value -= m[static_cast<std::size_t>(row) * n + s] * m[static_cast<std::size_t>(k) * n + s];
        m[static_cast<std::size_t>(row) * n + k] = value / pivot;
      }
    }
  }
  const std::size_t cells = static_cast<std::size_t>(model.nx) * model.ny;
  rhs_.assign(cells, 0.0);
  residual_ = preconditioned_ = direction_ = product_ = rhs_;
}

void PressureSolver::apply(const Level& level, const double* x, double* out) const {
  const int nx = level.nx, ny = level.ny;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int c = j * nx + i;
      double sum = 0.0;
      if (i > 0) sum += x[c] - x[c - 1];
      if (i < nx - 1) sum += x[c] - x[c + 1];
      if (j > 0) sum += x[c] - x[c - nx];
      if (j < ny - 1) sum += x[c] - x[c + nx];
      out[c] = sum * level.inverse_area;
    }
}

// One Gauss–Seidel sweep over the red cells ((i + j) even) then the black ones, or black then
// red: x_c = (b_c Δx² + Σ x_n) / (number of neighbours).
void PressureSolver::smooth(Level& level, bool red_first) const {
  const int nx = level.nx, ny = level.ny;
  double* x = level.x.data();
  const double* b = level.b.data();
  const double area = 1.0 / level.inverse_area;
  for (int pass = 0; pass < 2; ++pass) {
    const int colour = (pass == 0) == red_first ? 0 : 1;
    for (int j = 0; j < ny; ++j)
      for (int i = (j + colour) % 2; i < nx; i += 2) {
        const int c = j * nx + i;
        double sum = b[c] * area;
        if (i > 0) sum += x[c - 1];
        if (i < nx - 1) sum += x[c + 1];
        if (j > 0) sum += x[c - nx];
        if (j < ny - 1) sum += x[c + nx];
        x[c] = sum / neighbour_count(nx, ny, i, j);
      }
  }
}

// x_l ≈ A_l⁻¹ b_l from x_l = 0.
void PressureSolver::v_cycle(int l) {
  Level& level = levels_[l];
  const int n = level.nx * level.ny;
  for (int k = 0; k < n; ++k) level.x[k] = 0.0;
  if (l + 1 == static_cast<int>(levels_.size())) {
    if (!coarse_factor_.empty()) {
      // L Lᵀ x = b by forward and back substitution.
      const double* m = coarse_factor_.data();
      double* x = level.x.data();
      for (int row = 0; row < n; ++row) {
        double value = level.b[row];
        for (int s = 0; s < row; ++s) value -= m[static_cast<std::size_t>(row) * n + s] * x[s];
        x[row] = value / m[static_cast<std::size_t>(row) * n + row];
      }
      for (int row = n - 1; row >= 0; --row) {
        double value = x[row];
        for (int s = row + 1; s < n; ++s) value -= m[static_cast<std::size_t>(s) * n + row] * x[s];
        x[row] = value / m[static_cast<std::size_t>(row) * n + row];
      }
    } else {
      for (int sweep = 0; sweep < 10 * sweeps_; ++sweep) smooth(level, true);
      for (int sweep = 0; sweep < 10 * sweeps_; ++sweep) smooth(level, false);
    }
    return;
  }
  for (int sweep = 0; sweep < sweeps_; ++sweep) smooth(level, true);
  apply(level, level.x.data(), level.r.data());
  for (int k = 0; k < n; ++k) level.r[k] = level.b[k] - level.r[k];
  Level& coarse = levels_[l + 1];
  for (double& value : coarse.b) value = 0.0;
  for_each_prolongation_weight(level.nx, level.ny, [&](int fine, int parent, double weight) {
    coarse.b[parent] += 0.25 * weight * level.r[fine];
  });
  v_cycle(l + 1);
  for_each_prolongation_weight(
      level.nx, level.ny, [&](int fine, int parent, double weight) { level.x[fine] += weight * coarse.x[parent]; });
  for (int sweep = 0; sweep < sweeps_; ++sweep) smooth(level, false);
}

void PressureSolver::precondition(const double* r, double* z) {
  Level& finest = levels_.front();
  const int n = finest.nx * finest.ny;
  for (int k = 0; k < n; ++k) finest.b[k] = r[k];
  v_cycle(0);
  for (int k = 0; k < n; ++k) z[k] = finest.x[k];
  remove_mean(z, n);
}

SolveResult PressureSolver::solve(const double* b, double* p) {
  Level& finest = levels_.front();
  const int n = finest.nx * finest.ny;
  double* rhs = rhs_.data();
  double* r = residual_.data();
  double* z = preconditioned_.data();
  double* d = direction_.data();
  double* q = product_.data();
  for (int k = 0; k < n; ++k) rhs[k] = b[k];
  remove_mean(rhs, n);
  for (int k = 0; k < n; ++k) {
    p[k] = 0.0;
    r[k] = rhs[k];
  }
  SolveResult result;
  const double rhs_norm = std::sqrt(dot(rhs, rhs, n));
  if (rhs_norm == 0.0) return result;
  const double target = tolerance_ * rhs_norm;
  double residual_norm = rhs_norm;
  precondition(r, z);
  for (int k = 0; k < n; ++k) d[k] = z[k];
  double rz = dot(r, z, n);
  while (residual_norm > target && result.iterations < max_iterations_) {
    apply(finest, d, q);
    const double alpha = rz / dot(d, q, n);
    for (int k = 0; k < n; ++k) {
      p[k] += alpha * d[k];
      r[k] -= alpha * q[k];
    }
    ++result.iterations;
    residual_norm = std::sqrt(dot(r, r, n));
    if (residual_norm <= target) break;
    precondition(r, z);
    const double rz_next = dot(r, z, n);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (int k = 0; k < n; ++k) d[k] = z[k] + beta * d[k];
  }
  // The recurrence's residual drifts from the true one by rounding; report the true one.
  apply(finest, p, q);
  double true_norm = 0.0;
  for (int k = 0; k < n; ++k) true_norm += (rhs[k] - q[k]) * (rhs[k] - q[k]);
  result.relative_residual = std::sqrt(true_norm) / rhs_norm;
  result.converged = residual_norm <= target;
  return result;
}

}  // namespace diffphys::fluid
