// solve/envelope_ldlt.cpp — see envelope_ldlt.hpp.
//
// Cost notes (the chain's step spends a third of its time here). The structure pass needs
// only the first row touching each body, one int per body. The factorisation is right-
// looking: column j's entries below the diagonal are gathered into a short dense vector,
// and every row holding column j is then updated by a contiguous multiply–subtract whose
// terms do not depend on each other. (The row-by-row, up-looking order computes each entry
// as a dot product with the entries just computed before it in the same row: a chain of
// dependent additions and store-to-load round trips, measured ~10 % slower on the
// 10-link chain's step.) Inner loops run on plain pointers over contiguous envelope rows.
#include "solve/envelope_ldlt.hpp"

#include "solve/envelope_lu.hpp"

#include <algorithm>
#include <climits>

#include "solve/row_algebra.hpp"

namespace diffphys::solve {

bool envelope_factorize(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace,
                        double regularisation) {
  const std::size_t m = rows.size();
  std::vector<int>& first_column = workspace.envelope_first;
  std::vector<int>& row_start = workspace.envelope_start;
  std::vector<double>& values = workspace.envelope_values;
  std::vector<double>& pivots = workspace.envelope_pivots;
  // First structural column of each row: the earliest row sharing one of its dynamic bodies.
  envelope_structure(rows, mass.inverse_mass, workspace.envelope_body_first, first_column, row_start);
  values.resize(static_cast<std::size_t>(row_start[m]));
  pivots.resize(m);
  double* const envelope = values.data();
  // The Delassus entries, row by row: row i holds columns first_i..i at row_i[c − first_i].
  for (std::size_t i = 0; i < m; ++i) {
    const int first_i = first_column[i];
    const int width = static_cast<int>(i) - first_i;
    double* const row_i = envelope + row_start[i];
    const ConstraintRow& constraint_i = rows[i];
    for (int c = 0; c <= width; ++c) {
      const auto j = static_cast<std::size_t>(first_i + c);
      row_i[c] = delassus_entry(constraint_i, rows[j], workspace.responses[j]);
    }
    row_i[width] *= 1.0 + regularisation;
  }
  // last_row[j]: the last row whose envelope reaches column j (rows j+1..last_row[j] with
  // first ≤ j hold column j): a prefix maximum over the first columns.
  std::vector<int>& last_row = workspace.envelope_last;
  last_row.assign(m, -1);
  for (std::size_t i = 0; i < m; ++i) {
    int& last = last_row[static_cast<std::size_t>(first_column[i])];
    last = std::max(last, static_cast<int>(i));
  }
  for (std::size_t j = 1; j < m; ++j) last_row[j] = std::max(last_row[j], last_row[j - 1]);
  // Right-looking LDLᵀ, column by column: D_j = a_jj; for the rows i > j holding column j,
  // L_ij = a_ij / D_j and a_ik −= L_ij a_kj for j < k ≤ i. The column's unscaled entries
  // u_k = a_kj are gathered first, so each row's update is a contiguous multiply–subtract
  // along the row with no dependency between its terms.
  std::vector<double>& column = workspace.envelope_column;
  for (std::size_t j = 0; j < m; ++j) {
    const int first_j = first_column[j];
    const double pivot = envelope[row_start[j] + static_cast<int>(j) - first_j];
    if (!(pivot > 0.0)) return false;
    pivots[j] = pivot;
    const int last = last_row[j];
    const int below = last - static_cast<int>(j);
    if (below <= 0) continue;
    if (column.size() < static_cast<std::size_t>(below)) column.resize(static_cast<std::size_t>(below));
    double* const u = column.data();  // u[k − j − 1] = a_kj, or 0 if row k does not hold column j
    for (int k = static_cast<int>(j) + 1; k <= last; ++k) {
      const int first_k = first_column[static_cast<std::size_t>(k)];
      u[k - static_cast<int>(j) - 1] =
          first_k <= static_cast<int>(j) ? envelope[row_start[static_cast<std::size_t>(k)] + static_cast<int>(j) - first_k] : 0.0;
    }
    for (int i = static_cast<int>(j) + 1; i <= last; ++i) {
      const int first_i = first_column[static_cast<std::size_t>(i)];
      if (first_i > static_cast<int>(j)) continue;
      double* const row_i = envelope + row_start[static_cast<std::size_t>(i)];
      const double l = u[i - static_cast<int>(j) - 1] / pivot;
      row_i[static_cast<int>(j) - first_i] = l;
      double* const target = row_i + (static_cast<int>(j) + 1 - first_i);  // columns j+1..i
      const int n = i - static_cast<int>(j);
      for (int t = 0; t < n; ++t) target[t] -= l * u[t];
    }
  }
  return true;
}

void envelope_solve(const MlcpWorkspace& workspace, std::span<double> x) {
  const int* const first_column = workspace.envelope_first.data();
  const int* const row_start = workspace.envelope_start.data();
  const double* const values = workspace.envelope_values.data();
  const double* const pivots = workspace.envelope_pivots.data();
  const std::size_t m = workspace.envelope_first.size();
  double* const v = x.data();
  for (std::size_t i = 0; i < m; ++i) {  // L y = b
    const double* const row_i = values + row_start[i];
    const double* const xk = v + first_column[i];
    const int n = static_cast<int>(i) - first_column[i];
    double sum = v[i];
    for (int k = 0; k < n; ++k) sum -= row_i[k] * xk[k];
    v[i] = sum;
  }
  for (std::size_t i = 0; i < m; ++i) v[i] /= pivots[i];  // D z = y
  for (std::size_t i = m; i-- > 0;) {  // Lᵀ x = z
    const double* const row_i = values + row_start[i];
    double* const xk = v + first_column[i];
    const int n = static_cast<int>(i) - first_column[i];
    const double xi = v[i];
    for (int k = 0; k < n; ++k) xk[k] -= row_i[k] * xi;
  }
}

void envelope_solve_columns(const MlcpWorkspace& workspace, std::span<double> x, std::size_t columns) {
  const int* const first_column = workspace.envelope_first.data();
  const int* const row_start = workspace.envelope_start.data();
  const double* const values = workspace.envelope_values.data();
  const double* const pivots = workspace.envelope_pivots.data();
  const std::size_t m = workspace.envelope_first.size();
  double* const v = x.data();
  for (std::size_t i = 0; i < m; ++i) {  // L Y = B
    const double* const row_i = values + row_start[i];
    double* const target = v + i * columns;
    for (int k = first_column[i]; k < static_cast<int>(i); ++k) {
      const double l = row_i[k - first_column[i]];
      const double* const source = v + static_cast<std::size_t>(k) * columns;
      for (std::size_t c = 0; c < columns; ++c) target[c] -= l * source[c];
    }
  }
  for (std::size_t i = 0; i < m; ++i) {  // D Z = Y
    double* const target = v + i * columns;
    for (std::size_t c = 0; c < columns; ++c) target[c] /= pivots[i];
  }
  for (std::size_t i = m; i-- > 0;) {  // Lᵀ X = Z
    const double* const row_i = values + row_start[i];
    const double* const source = v + i * columns;
    for (int k = first_column[i]; k < static_cast<int>(i); ++k) {
      const double l = row_i[k - first_column[i]];
      double* const target = v + static_cast<std::size_t>(k) * columns;
      for (std::size_t c = 0; c < columns; ++c) target[c] -= l * source[c];
    }
  }
}

}  // namespace diffphys::solve
