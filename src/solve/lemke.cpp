// solve/lemke.cpp — see lemke.hpp.
#include "solve/lemke.hpp"

#include <algorithm>
#include <cmath>

namespace diffphys::solve {

bool solve_lemke(std::span<const double> matrix, std::span<const double> q, int n, int max_pivots,
                 LemkeWorkspace& ws, std::span<double> z) {
  std::fill(z.begin(), z.end(), 0.0);
  if (n == 0) return true;
  const int columns = 2 * n + 2;
  const int artificial = 2 * n, rhs = 2 * n + 1;
  ws.tableau.assign(static_cast<std::size_t>(n * columns), 0.0);
  ws.basis.resize(static_cast<std::size_t>(n));
  const auto at = [&](int row, int column) -> double& { return ws.tableau[static_cast<std::size_t>(row * columns + column)]; };
  // I w − M z − 1 z0 = q.
  int most_negative = 0;
  for (int i = 0; i < n; ++i) {
    at(i, i) = 1.0;
    for (int j = 0; j < n; ++j) at(i, n + j) = -matrix[static_cast<std::size_t>(i * n + j)];
    at(i, artificial) = -1.0;
    at(i, rhs) = q[static_cast<std::size_t>(i)];
    ws.basis[static_cast<std::size_t>(i)] = i;
    if (q[static_cast<std::size_t>(i)] < q[static_cast<std::size_t>(most_negative)]) most_negative = i;
  }
  if (q[static_cast<std::size_t>(most_negative)] >= 0) return true;  // z = 0 solves it

  const auto pivot = [&](int row, int column) {
    const double inverse = 1.0 / at(row, column);
    for (int c = 0; c < columns; ++c) at(row, c) *= inverse;
    for (int r = 0; r < n; ++r) {
      if (r == row) continue;
      const double factor = at(r, column);
      if (factor == 0.0) continue;
      for (int c = 0; c < columns; ++c) at(r, c) -= factor * at(row, c);
    }
    ws.basis[static_cast<std::size_t>(row)] = column;
  };

  // z0 enters at the row of the most negative q; then the complement of whatever leaves.
  int leaving = ws.basis[static_cast<std::size_t>(most_negative)];
  pivot(most_negative, artificial);
  for (int iteration = 0; iteration < max_pivots; ++iteration) {
    const int entering = leaving < n ? leaving + n : leaving - n;
    // Minimum-ratio test; ties go to the row whose basic variable is z0 (ends the path),
    // then to the lowest row, so the result is deterministic.
    int row = -1;
    double best_ratio = INFINITY;
    for (int r = 0; r < n; ++r) {
      const double coefficient = at(r, entering);
      if (coefficient <= 1e-12) continue;
      const double ratio = at(r, rhs) / coefficient;
      if (ratio < best_ratio - 1e-12 ||
          (ratio <= best_ratio + 1e-12 && ws.basis[static_cast<std::size_t>(r)] == artificial)) {
        best_ratio = ratio;
        row = r;
      }
    }
    if (row < 0) return false;  // ray termination: no solution found from this start
    leaving = ws.basis[static_cast<std::size_t>(row)];
    pivot(row, entering);
    if (leaving == artificial) {
      for (int r = 0; r < n; ++r) {
        const int variable = ws.basis[static_cast<std::size_t>(r)];
        if (variable >= n && variable < 2 * n) z[static_cast<std::size_t>(variable - n)] = std::max(0.0, at(r, rhs));
      }
      return true;
    }
  }
  return false;
}

}  // namespace diffphys::solve
