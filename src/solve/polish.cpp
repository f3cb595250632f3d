// solve/polish.cpp — see polish.hpp.
#include "solve/polish.hpp"

#include <algorithm>
#include <cmath>

#include "solve/dense_lu.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {

bool row_holds_equality(const ConstraintRow& row, double lambda, double w, double diagonal) {
  switch (row.type) {
    case RowType::Equality: return true;
    case RowType::Unilateral:
    case RowType::Direction: return diagonal * lambda >= w;
    case RowType::Bound: return lambda >= diagonal * w;
  }
  return true;
}

namespace {

double bound_diagonal(const ConstraintRow& row, std::span<const double> diagonal) {
  double sum = 0.0;
  for (int k = 0; k < row.group_size; ++k) sum += diagonal[static_cast<std::size_t>(row.group + k)];
  return sum / std::max(row.group_size, 1);
}

}  // namespace

double polish_solution(std::span<const ConstraintRow> rows, std::span<const double> free_velocity,
                       double current_residual, MlcpWorkspace& ws, std::span<double> lambda,
                       std::span<double> velocity) {
  const std::size_t count = rows.size();
  // w at the current solution (mlcp_residual fills ws.w).
  mlcp_residual(rows, lambda, velocity, ws);
  ws.equality_rows.clear();  // reused: the active rows
  ws.complementarity_rows.assign(count, -1);  // reused: position of each row in the active set
  for (std::size_t i = 0; i < count; ++i) {
    const ConstraintRow& row = rows[i];
    const double diagonal = row.type == RowType::Bound ? bound_diagonal(row, ws.diagonal) : ws.diagonal[i];
    if (row_holds_equality(row, lambda[i], ws.w[i], diagonal)) {
      ws.complementarity_rows[i] = static_cast<int>(ws.equality_rows.size());
      ws.equality_rows.push_back(static_cast<int>(i));
    }
  }
  const std::size_t n = ws.equality_rows.size();
  if (n == 0) return current_residual;
  ws.schur.assign(n * n, 0.0);
  ws.reduced_q.resize(n);
  double mean_diagonal = 0.0;
  for (std::size_t a = 0; a < n; ++a) {
    const ConstraintRow& row = rows[static_cast<std::size_t>(ws.equality_rows[a])];
    for (std::size_t b = 0; b < n; ++b) {
      const auto j = static_cast<std::size_t>(ws.equality_rows[b]);
      ws.schur[a * n + b] = delassus_entry(row, rows[j], ws.responses[j]);
    }
    mean_diagonal += ws.schur[a * n + a];
    const auto coupled = [&](int column, double value) {
      const int position = ws.complementarity_rows[static_cast<std::size_t>(column)];
      if (position >= 0) ws.schur[a * n + static_cast<std::size_t>(position)] += value;
    };
    if (row.type == RowType::Direction) coupled(row.group, 1.0);
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) coupled(row.normal, row.coefficient);
      for (int k = 0; k < row.group_size; ++k) coupled(row.group + k, -1.0);
    }
    ws.reduced_q[a] = row.rhs - row_times_velocity(row, free_velocity);
  }
  mean_diagonal = mean_diagonal > 0 ? mean_diagonal / static_cast<double>(n) : 1.0;
  // A relative 1e-12 keeps redundant rows (four box corners on a plane) solvable.
  for (std::size_t a = 0; a < n; ++a) ws.schur[a * n + a] += 1e-12 * mean_diagonal;
  ws.pivots.resize(n);
  if (!lu_factorize(ws.schur, static_cast<int>(n), ws.pivots)) return current_residual;
  lu_solve(ws.schur, static_cast<int>(n), ws.pivots, ws.reduced_q);  // now λ_𝒜
  // Candidate: λ_𝒜 from the solve, zero elsewhere; must be feasible.
  ws.rhs_vector.assign(count, 0.0);
  for (std::size_t a = 0; a < n; ++a) {
    const auto i = static_cast<std::size_t>(ws.equality_rows[a]);
    double value = ws.reduced_q[a];
    if (rows[i].type != RowType::Equality) {
      if (value < 0) return current_residual;  // the active set is not that of the solution
    }
    ws.rhs_vector[i] = value;
  }
  ws.scratch.resize(velocity.size());
  apply_impulses(rows, ws.responses, ws.rhs_vector, free_velocity, ws.scratch);
  const double polished_residual = mlcp_residual(rows, ws.rhs_vector, ws.scratch, ws);
  if (!(polished_residual <= current_residual)) {
    mlcp_residual(rows, lambda, velocity, ws);  // leave ws.w as it was
    return current_residual;
  }
  std::copy(ws.rhs_vector.begin(), ws.rhs_vector.end(), lambda.begin());
  std::copy(ws.scratch.begin(), ws.scratch.end(), velocity.begin());
  return polished_residual;
}

}  // namespace diffphys::solve
