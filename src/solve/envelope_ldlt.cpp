// solve/envelope_ldlt.cpp — see envelope_ldlt.hpp.
#include "solve/envelope_ldlt.hpp"

#include <algorithm>

#include "solve/row_algebra.hpp"

namespace diffphys::solve {

bool envelope_factorize(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace) {
  const std::size_t m = rows.size();
  std::vector<int>& first_column = workspace.envelope_first;
  std::vector<int>& row_start = workspace.envelope_start;
  std::vector<double>& values = workspace.envelope_values;
  std::vector<double>& pivots = workspace.envelope_pivots;
  // First structural column of each row: the earliest row sharing one of its dynamic bodies.
  auto& rows_of_body = workspace.rows_of_body;
  if (rows_of_body.size() < mass.inverse_mass.size()) rows_of_body.resize(mass.inverse_mass.size());
  for (auto& list : rows_of_body) list.clear();
  first_column.resize(m);
  row_start.resize(m + 1);
  row_start[0] = 0;
  for (std::size_t i = 0; i < m; ++i) {
    int first = static_cast<int>(i);
    for (const int body : {rows[i].body_a, rows[i].body_b}) {
      if (mass.inverse_mass[static_cast<std::size_t>(body)] == 0.0) continue;  // static: couples nothing
      auto& list = rows_of_body[static_cast<std::size_t>(body)];
      if (!list.empty()) first = std::min(first, list.front());
      if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
    }
    first_column[i] = first;
    row_start[i + 1] = row_start[i] + static_cast<int>(i) - first + 1;
  }
  values.resize(static_cast<std::size_t>(row_start[m]));
  pivots.resize(m);
  // Row i of the envelope holds columns first_column[i]..i; entry (i, j) at row_start[i] + j − first_column[i].
  for (std::size_t i = 0; i < m; ++i) {
    const int base = row_start[i] - first_column[i];
    for (int j = first_column[i]; j <= static_cast<int>(i); ++j)
      values[static_cast<std::size_t>(base + j)] = delassus_entry(rows[i], rows[static_cast<std::size_t>(j)],
                                                                   workspace.responses[static_cast<std::size_t>(j)]);
    values[static_cast<std::size_t>(base) + i] *= 1.0 + 1e-11;
  }
  // Row-oriented LDLᵀ: L_ij = (A_ij − Σ_k L_ik D_k L_jk) / D_j, D_i = A_ii − Σ_k L_ik² D_k.
  for (std::size_t i = 0; i < m; ++i) {
    const int first_columni = first_column[i];
    double* row_i = values.data() + row_start[i];  // row_i[c − first_columni] is column c
    for (int j = first_columni; j < static_cast<int>(i); ++j) {
      const int first_columnj = first_column[static_cast<std::size_t>(j)];
      const double* row_j = values.data() + row_start[static_cast<std::size_t>(j)];
      double sum = row_i[j - first_columni];
      for (int k = std::max(first_columni, first_columnj); k < j; ++k)
        sum -= row_i[k - first_columni] * pivots[static_cast<std::size_t>(k)] * row_j[k - first_columnj];
      row_i[j - first_columni] = sum / pivots[static_cast<std::size_t>(j)];
    }
    double pivot = row_i[static_cast<int>(i) - first_columni];
    for (int k = first_columni; k < static_cast<int>(i); ++k)
      pivot -= row_i[k - first_columni] * row_i[k - first_columni] * pivots[static_cast<std::size_t>(k)];
    if (!(pivot > 0.0)) return false;
    pivots[i] = pivot;
  }
  return true;
}

void envelope_solve(const MlcpWorkspace& workspace, std::span<double> x) {
  const std::vector<int>& first_column = workspace.envelope_first;
  const std::vector<int>& row_start = workspace.envelope_start;
  const std::vector<double>& values = workspace.envelope_values;
  const std::vector<double>& pivots = workspace.envelope_pivots;
  const std::size_t m = first_column.size();
  for (std::size_t i = 0; i < m; ++i) {  // L y = b
    const double* row_i = values.data() + row_start[i];
    double sum = x[i];
    for (int k = first_column[i]; k < static_cast<int>(i); ++k) sum -= row_i[k - first_column[i]] * x[static_cast<std::size_t>(k)];
    x[i] = sum;
  }
  for (std::size_t i = 0; i < m; ++i) x[i] /= pivots[i];  // D z = y
  for (std::size_t i = m; i-- > 0;) {  // Lᵀ x = z
    const double* row_i = values.data() + row_start[i];
    const double xi = x[i];
    for (int k = first_column[i]; k < static_cast<int>(i); ++k) x[static_cast<std::size_t>(k)] -= row_i[k - first_column[i]] * xi;
  }
}

}  // namespace diffphys::solve
