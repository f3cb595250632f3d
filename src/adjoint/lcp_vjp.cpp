// adjoint/lcp_vjp.cpp — see lcp_vjp.hpp for the equations.
#include "adjoint/lcp_vjp.hpp"

#include <algorithm>
#include <cmath>

#include "solve/dense_lu.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/polish.hpp"
#include "solve/row_algebra.hpp"

#include <klu.h>

namespace diffphys::adjoint {

using solve::ConstraintRow;
using solve::RowType;

// Kᵀ in compressed columns, the pattern KLU analysed, and its factorisation. KLU (SuiteSparse;
// Davis & Palamadai Natarajan 2010): AMD ordering of Kᵀ + K, left-looking LU with partial
// pivoting that prefers the diagonal. While the pattern repeats, klu_refactor reuses the
// ordering, the pivot sequence and the factors' storage (no allocation).
struct SparseLcpAdjoint {
  std::vector<int> outer, inner, diagonal_slot, analysed_outer, analysed_inner;
  std::vector<double> values, solution;
  klu_common common;
  klu_symbolic* symbolic = nullptr;
  klu_numeric* numeric = nullptr;

  SparseLcpAdjoint() {
    klu_defaults(&common);
    common.btf = 0;    // one block: a resting pile is connected
    common.scale = -1;  // no row scaling: on these matrices it only moves pivots off the diagonal
  }
  SparseLcpAdjoint(const SparseLcpAdjoint&) = delete;
  SparseLcpAdjoint& operator=(const SparseLcpAdjoint&) = delete;
  ~SparseLcpAdjoint() { release(); }
  void release() {
    if (numeric != nullptr) klu_free_numeric(&numeric, &common);
    if (symbolic != nullptr) klu_free_symbolic(&symbolic, &common);
  }
};

void SparseLcpAdjointDeleter::operator()(SparseLcpAdjoint* solver) const { delete solver; }

bool row_is_active(const ConstraintRow& row, double lambda, double w, double diagonal) {
  return solve::row_holds_equality(row, lambda, w, diagonal);
}

namespace {

// Iterative refinement with residuals accumulated in extended precision (Wilkinson; Higham,
// Accuracy and Stability of Numerical Algorithms, ch. 12): K carries a 1e-10 relative
// Tikhonov term, so its condition reaches ~1e10 and one LU solve in double is only good to
// ~1e-6 in the directions that term decides. Each step solves for the correction with the
// same factors; one or two steps bring the solution to what the rounded data determine,
// whichever LU (dense or sparse) factorised K. `multiply(x, r)` writes r = b − Kᵀx in long
// double; `solve(r)` overwrites r with (Kᵀ)⁻¹r. Returns ‖b − Kᵀx‖/‖b‖ after the last step.
constexpr std::size_t kDenseRefinementRows = 48;

template <typename Multiply, typename Solve>
double refine(std::span<const double> b, std::span<double> x, std::vector<long double>& residual_wide,
              std::vector<double>& correction, Multiply&& multiply, Solve&& solve) {
  const std::size_t n = b.size();
  double b_norm = 0.0;
  for (const double v : b) b_norm += v * v;
  b_norm = std::sqrt(b_norm);
  residual_wide.resize(n);
  correction.resize(n);
  const auto residual_norm = [&] {
    multiply(x, residual_wide);
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      correction[i] = static_cast<double>(residual_wide[i]);
      sum += correction[i] * correction[i];
    }
    return std::sqrt(sum) / (b_norm > 0 ? b_norm : 1.0);
  };
  double relative = residual_norm();
  for (int iteration = 0; iteration < 3 && relative > 0 && std::isfinite(relative); ++iteration) {
    solve(correction);
    double change = 0.0, size = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += correction[i];
      change = std::max(change, std::abs(correction[i]));
      size = std::max(size, std::abs(x[i]));
    }
    relative = residual_norm();
    if (change <= 1e-12 * size) break;  // further steps would move ζ by less than that
  }
  return relative;
}

// Kᵀ ζ = λ̄ (ws.rhs, overwritten by ζ) with a dense LU: Kᵀ built row-major, entry by entry.
void solve_dense(std::span<const ConstraintRow> rows, LcpVjpWorkspace& ws) {
  const std::size_t n = ws.active.size();
  // Kᵀ, built transposed so that the dense LU solves Kᵀ ζ = λ̄ directly.
  ws.matrix.assign(n * n, 0.0);
  const auto transposed = [&](std::size_t row_of_k, std::size_t column_of_k) -> double& {
    return ws.matrix[column_of_k * n + row_of_k];
  };
  double mean_diagonal = 0.0;
  for (std::size_t a = 0; a < n; ++a) {
    const ConstraintRow& row = rows[static_cast<std::size_t>(ws.active[a])];
    for (std::size_t b = 0; b < n; ++b) {
      const auto j = static_cast<std::size_t>(ws.active[b]);
      transposed(a, b) = solve::delassus_entry(row, rows[j], ws.responses[j]);
    }
    mean_diagonal += transposed(a, a);
    const auto coupled = [&](int column, double value) {
      const int position = ws.position_in_active[static_cast<std::size_t>(column)];
      if (position >= 0) transposed(a, static_cast<std::size_t>(position)) += value;
    };
    if (row.type == RowType::Direction) coupled(row.group, 1.0);
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) coupled(row.normal, row.coefficient);
      for (int k = 0; k < row.group_size; ++k) coupled(row.group + k, -1.0);
    }
  }
  mean_diagonal = n > 0 ? mean_diagonal / static_cast<double>(n) : 1.0;
  for (std::size_t a = 0; a < n; ++a) transposed(a, a) += 1e-10 * (mean_diagonal > 0 ? mean_diagonal : 1.0);
  ws.pivots.resize(n);
  if (n > 0) {
    if (n >= kDenseRefinementRows) ws.dense_copy.assign(ws.matrix.begin(), ws.matrix.end());  // Kᵀ for the residuals
    if (solve::lu_factorize(ws.matrix, static_cast<int>(n), ws.pivots)) {
      ws.right_side.assign(ws.rhs.begin(), ws.rhs.end());
      solve::lu_solve(ws.matrix, static_cast<int>(n), ws.pivots, ws.rhs);  // now ζ
      const auto multiply = [&](std::span<const double> x, std::vector<long double>& r) {
        for (std::size_t a = 0; a < n; ++a) {
          long double sum = ws.right_side[a];
          const double* row = ws.dense_copy.data() + a * n;
          for (std::size_t b = 0; b < n; ++b) sum -= static_cast<long double>(row[b]) * x[b];
          r[a] = sum;
        }
      };
      const auto solve = [&](std::vector<double>& r) { solve::lu_solve(ws.matrix, static_cast<int>(n), ws.pivots, r); };
      // Refinement pays only where the Tikhonov term decides directions, which shows as
      // pivots ~1e-10 of the largest, and only on systems large enough (kDenseRefinementRows)
      // for its O(n²) passes to be small beside the O(n³) factorisation: a servo arm's ~20
      // rows keep the single solve, as before.
      double smallest_pivot = std::abs(ws.matrix[0]), largest_pivot = smallest_pivot;
      for (std::size_t a = 1; a < n; ++a) {
        smallest_pivot = std::min(smallest_pivot, std::abs(ws.matrix[a * n + a]));
        largest_pivot = std::max(largest_pivot, std::abs(ws.matrix[a * n + a]));
      }
      ws.relative_residual = 0.0;
      if (n >= kDenseRefinementRows && smallest_pivot < 1e-6 * largest_pivot)
        ws.relative_residual = refine(ws.right_side, ws.rhs, ws.residual_wide, ws.correction, multiply, solve);
    } else {
      std::fill(ws.rhs.begin(), ws.rhs.end(), 0.0);
    }
  }
}

bool body_moves(const solve::MassBlocks& mass, int body) {
  const auto b = static_cast<std::size_t>(body);
  if (mass.inverse_mass[b] != 0.0) return true;
  const Mat3& inverse_inertia = mass.inverse_inertia[b];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      if (inverse_inertia(r, c) != 0.0) return true;
  return false;
}

// Kᵀ ζ = λ̄ (ws.rhs, overwritten by ζ) with the sparse LU. Column a of Kᵀ is row a of K: the
// entries K_ab for rows b sharing a moving body with a, plus a's friction-group couplings.
// Rows sharing no moving body have K_ab = 0 exactly in the dense matrix too (their products
// all meet a zero response), so the two matrices hold the same numbers. False if the
// factorisation fails (the caller falls back to the dense LU).
bool solve_sparse(std::span<const ConstraintRow> rows, const solve::MassBlocks& mass, LcpVjpWorkspace& ws) {
  if (!ws.sparse) ws.sparse.reset(new SparseLcpAdjoint);
  SparseLcpAdjoint& sparse = *ws.sparse;
  const std::size_t n = ws.active.size();
  const std::size_t body_count = mass.inverse_mass.size();

  // Active positions touching each moving body, in increasing order (CSR by body).
  ws.body_row_start.assign(body_count + 1, 0);
  const auto for_moving_bodies = [&](const ConstraintRow& row, auto&& visit) {
    if (body_moves(mass, row.body_a)) visit(row.body_a);
    if (row.body_b != row.body_a && body_moves(mass, row.body_b)) visit(row.body_b);
  };
  for (std::size_t a = 0; a < n; ++a)
    for_moving_bodies(rows[static_cast<std::size_t>(ws.active[a])],
                      [&](int body) { ++ws.body_row_start[static_cast<std::size_t>(body) + 1]; });
  for (std::size_t b = 0; b < body_count; ++b) ws.body_row_start[b + 1] += ws.body_row_start[b];
  ws.body_rows.resize(static_cast<std::size_t>(ws.body_row_start[body_count]));
  ws.column_entries.assign(ws.body_row_start.begin(), ws.body_row_start.end() - 1);  // fill cursor per body
  for (std::size_t a = 0; a < n; ++a)
    for_moving_bodies(rows[static_cast<std::size_t>(ws.active[a])], [&](int body) {
      ws.body_rows[static_cast<std::size_t>(ws.column_entries[static_cast<std::size_t>(body)]++)] = static_cast<int>(a);
    });

  // Kᵀ by columns, as in solve_dense: A entries, then couplings, then the regularisation.
  sparse.outer.assign(n + 1, 0);
  sparse.inner.clear();
  sparse.values.clear();
  sparse.diagonal_slot.resize(n);
  ws.column_marker.assign(n, -1);
  ws.column_values.resize(n);
  double mean_diagonal = 0.0;
  for (std::size_t a = 0; a < n; ++a) {
    const ConstraintRow& row = rows[static_cast<std::size_t>(ws.active[a])];
    ws.column_entries.clear();
    const auto touch = [&](std::size_t b) {
      if (ws.column_marker[b] == static_cast<int>(a)) return;
      ws.column_marker[b] = static_cast<int>(a);
      ws.column_entries.push_back(static_cast<int>(b));
      const auto j = static_cast<std::size_t>(ws.active[b]);
      ws.column_values[b] = solve::delassus_entry(row, rows[j], ws.responses[j]);
    };
    for_moving_bodies(row, [&](int body) {
      for (int k = ws.body_row_start[static_cast<std::size_t>(body)]; k < ws.body_row_start[static_cast<std::size_t>(body) + 1]; ++k)
        touch(static_cast<std::size_t>(ws.body_rows[static_cast<std::size_t>(k)]));
    });
    touch(a);  // the diagonal always exists (regularisation), even for a bound row
    mean_diagonal += ws.column_values[a];
    const auto coupled = [&](int column, double value) {
      const int position = ws.position_in_active[static_cast<std::size_t>(column)];
      if (position < 0) return;
      touch(static_cast<std::size_t>(position));
      ws.column_values[static_cast<std::size_t>(position)] += value;
    };
    if (row.type == RowType::Direction) coupled(row.group, 1.0);
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) coupled(row.normal, row.coefficient);
      for (int k = 0; k < row.group_size; ++k) coupled(row.group + k, -1.0);
    }
    std::sort(ws.column_entries.begin(), ws.column_entries.end());
    for (const int b : ws.column_entries) {
      if (b == static_cast<int>(a)) sparse.diagonal_slot[a] = static_cast<int>(sparse.inner.size());
      sparse.inner.push_back(b);
      sparse.values.push_back(ws.column_values[static_cast<std::size_t>(b)]);
    }
    sparse.outer[a + 1] = static_cast<int>(sparse.inner.size());
  }
  mean_diagonal = mean_diagonal / static_cast<double>(n);
  for (std::size_t a = 0; a < n; ++a)
    sparse.values[static_cast<std::size_t>(sparse.diagonal_slot[a])] += 1e-10 * (mean_diagonal > 0 ? mean_diagonal : 1.0);

  const int size = static_cast<int>(n);
  const std::span<const int> outer = sparse.outer, inner = sparse.inner;
  const std::span<const double> values = sparse.values;
  // r = b − Kᵀx in long double, column by column.
  const auto multiply = [&](std::span<const double> x, std::vector<long double>& r) {
    for (std::size_t i = 0; i < n; ++i) r[i] = ws.right_side[i];
    for (std::size_t column = 0; column < n; ++column)
      for (int k = outer[column]; k < outer[column + 1]; ++k)
        r[static_cast<std::size_t>(inner[static_cast<std::size_t>(k)])] -=
            static_cast<long double>(values[static_cast<std::size_t>(k)]) * x[column];
  };
  const auto solve = [&](std::vector<double>& r) {
    klu_solve(sparse.symbolic, sparse.numeric, size, 1, r.data(), &sparse.common);
  };
  // Factorise (analysing the pattern only when it changed, refactorising with the previous
  // pivot sequence when it did not), solve and refine. A refactorisation whose old pivots no
  // longer suit the numbers shows in the residual: then the matrix is factorised afresh.
  bool refactorized = false;
  const auto factorize = [&](bool allow_refactor) {
    refactorized = false;
    const bool same_pattern = sparse.symbolic != nullptr && sparse.outer == sparse.analysed_outer &&
                              sparse.inner == sparse.analysed_inner;
    if (same_pattern && allow_refactor && sparse.numeric != nullptr &&
        klu_refactor(sparse.outer.data(), sparse.inner.data(), sparse.values.data(), sparse.symbolic, sparse.numeric,
                     &sparse.common) == 1) {
      refactorized = true;
      ++ws.sparse_refactorizations;
      return true;
    }
    if (!same_pattern) {
      sparse.release();
      sparse.symbolic = klu_analyze(size, sparse.outer.data(), sparse.inner.data(), &sparse.common);
      if (sparse.symbolic == nullptr) return false;
      ++ws.sparse_analyses;
      sparse.analysed_outer = sparse.outer;
      sparse.analysed_inner = sparse.inner;
    }
    if (sparse.numeric != nullptr) klu_free_numeric(&sparse.numeric, &sparse.common);
    sparse.numeric = klu_factor(sparse.outer.data(), sparse.inner.data(), sparse.values.data(), sparse.symbolic, &sparse.common);
    ++ws.sparse_factorizations;
    return sparse.numeric != nullptr;
  };
  ws.right_side.assign(ws.rhs.begin(), ws.rhs.end());
  const auto solve_and_refine = [&] {
    sparse.solution.assign(ws.right_side.begin(), ws.right_side.end());
    solve(sparse.solution);
    return refine(ws.right_side, sparse.solution, ws.residual_wide, ws.correction, multiply, solve);
  };
  if (!factorize(true)) return false;
  ws.relative_residual = solve_and_refine();
  if (!(ws.relative_residual <= 1e-12) && refactorized) {
    if (!factorize(false)) return false;
    ws.relative_residual = solve_and_refine();
  }
  if (!std::isfinite(ws.relative_residual)) return false;
  std::copy(sparse.solution.begin(), sparse.solution.end(), ws.rhs.begin());  // now ζ
  return true;
}


}  // namespace

void lcp_vjp(std::span<const ConstraintRow> rows, const solve::MassBlocks& mass, std::span<const double> lambda, std::span<const double> velocity, std::span<const double> velocity_adjoint,
             std::span<double> free_velocity_adjoint, std::span<RowAdjoint> row_adjoints, MassAdjoint& mass_adjoint,
             LcpVjpWorkspace& ws, const solve::MlcpWorkspace* factorized) {
  const std::size_t count = rows.size();
  const std::size_t dof = velocity.size();
  ws.responses.resize(count);
  ws.position_in_active.assign(count, -1);
  ws.active.clear();
  // Which rows hold w = 0: classify from the solution.
  for (std::size_t i = 0; i < count; ++i) {
    const ConstraintRow& row = rows[i];
    ws.responses[i] = solve::row_response(row, mass);
    double w = solve::row_times_velocity(row, velocity) - row.rhs;
    if (row.type == RowType::Direction) w += lambda[static_cast<std::size_t>(row.group)];
    double diagonal = solve::delassus_entry(row, row, ws.responses[i]);
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) w += row.coefficient * lambda[static_cast<std::size_t>(row.normal)];
      for (int k = 0; k < row.group_size; ++k) w -= lambda[static_cast<std::size_t>(row.group + k)];
      diagonal = 0.0;
      for (int k = 0; k < row.group_size; ++k)
        diagonal += solve::delassus_entry(rows[static_cast<std::size_t>(row.group + k)], rows[static_cast<std::size_t>(row.group + k)],
                                          solve::row_response(rows[static_cast<std::size_t>(row.group + k)], mass));
      diagonal /= std::max(row.group_size, 1);
    }
    if (row_is_active(row, lambda[i], w, diagonal)) {
      ws.position_in_active[i] = static_cast<int>(ws.active.size());
      ws.active.push_back(static_cast<int>(i));
    }
  }
  const std::size_t n = ws.active.size();
  const auto active_lambda = [&](std::size_t i) { return ws.position_in_active[i] >= 0 ? lambda[i] : 0.0; };

  // u = M⁻¹ v̄⁺; λ̄ = (J u)_𝒜; then ζ = K⁻ᵀ λ̄.
  ws.velocity_adjoint_scaled.resize(dof);
  solve::apply_inverse_mass(mass, velocity_adjoint, ws.velocity_adjoint_scaled);
  ws.rhs.resize(n);
  for (std::size_t a = 0; a < n; ++a)
    ws.rhs[a] = solve::row_times_velocity(rows[static_cast<std::size_t>(ws.active[a])], ws.velocity_adjoint_scaled);
  const bool joint_rows_only =
      std::all_of(rows.begin(), rows.end(), [](const ConstraintRow& row) { return row.type == RowType::Equality; });
  ws.used_sparse = false;
  if (joint_rows_only) {
    // K = A: symmetric and sparse, the forward's envelope LDLᵀ solves it in O(rows).
    if (factorized != nullptr) {
      solve::envelope_solve(*factorized, ws.rhs);
    } else {
      solve::compute_responses(rows, mass, ws.envelope);
      if (solve::envelope_factorize(rows, mass, ws.envelope)) {
        solve::envelope_solve(ws.envelope, ws.rhs);
      } else {
        std::fill(ws.rhs.begin(), ws.rhs.end(), 0.0);
      }
    }
  } else {
    const bool sparse = ws.solve == LcpAdjointSolve::Sparse ||
                        (ws.solve == LcpAdjointSolve::Automatic && n >= kSparseAdjointRows);
    ws.used_sparse = sparse && n > 0 && solve_sparse(rows, mass, ws);
    if (!ws.used_sparse) solve_dense(rows, ws);
  }
  const auto zeta = [&](std::size_t i) {
    const int position = ws.position_in_active[i];
    return position >= 0 ? ws.rhs[static_cast<std::size_t>(position)] : 0.0;
  };

  // Jᵀζ, z = M⁻¹Jᵀζ, and the impulse f = Jᵀλ.
  ws.constraint_response.assign(dof, 0.0);
  ws.impulse.assign(dof, 0.0);
  for (std::size_t i = 0; i < count; ++i) {
    solve::add_row_transpose(rows[i], zeta(i), ws.constraint_response);
    solve::add_row_transpose(rows[i], active_lambda(i), ws.impulse);
  }
  ws.scaled_constraint_response.resize(dof);
  solve::apply_inverse_mass(mass, ws.constraint_response, ws.scaled_constraint_response);
  const std::span<const double> z = ws.scaled_constraint_response;

  for (std::size_t i = 0; i < count; ++i) {
    if (ws.position_in_active[i] < 0) continue;
    const ConstraintRow& row = rows[i];
    RowAdjoint& adjoint = row_adjoints[i];
    const double l = lambda[i], s = zeta(i);
    const auto part = [&](int offset) {
      return (solve::read_vec3(ws.velocity_adjoint_scaled, offset) - solve::read_vec3(z, offset)) * l -
             solve::read_vec3(velocity, offset) * s;
    };
    adjoint.linear_a += part(6 * row.body_a);
    adjoint.angular_a += part(6 * row.body_a + 3);
    adjoint.linear_b += part(6 * row.body_b);
    adjoint.angular_b += part(6 * row.body_b + 3);
    adjoint.rhs += s;
    if (row.type == RowType::Bound && row.normal >= 0)
      adjoint.coefficient -= s * active_lambda(static_cast<std::size_t>(row.normal));
  }
  // v̄_free = v̄⁺ − Jᵀζ, and (M⁻¹)‾_b = v̄_free,b f_bᵀ split into its two blocks.
  for (std::size_t b = 0; b < mass.inverse_mass.size(); ++b) {
    const int o = static_cast<int>(6 * b);
    const Vec3 linear_adjoint = solve::read_vec3(velocity_adjoint, o) - solve::read_vec3(ws.constraint_response, o);
    const Vec3 angular_adjoint =
        solve::read_vec3(velocity_adjoint, o + 3) - solve::read_vec3(ws.constraint_response, o + 3);
    solve::add_vec3(free_velocity_adjoint, o, linear_adjoint);
    solve::add_vec3(free_velocity_adjoint, o + 3, angular_adjoint);
    mass_adjoint.inverse_mass[b] += dot(linear_adjoint, solve::read_vec3(ws.impulse, o));
    const Vec3 angular_impulse = solve::read_vec3(ws.impulse, o + 3);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) mass_adjoint.inverse_inertia[b](r, c) += angular_adjoint[r] * angular_impulse[c];
  }
}

}  // namespace diffphys::adjoint
