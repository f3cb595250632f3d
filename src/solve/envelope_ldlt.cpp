// solve/envelope_ldlt.cpp — see envelope_ldlt.hpp.
#include "solve/envelope_ldlt.hpp"

#include <algorithm>

#include "solve/row_algebra.hpp"

namespace diffphys::solve {

bool EnvelopeLdlt::factorize(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace) {
  const std::size_t m = rows.size();
  // First structural column of each row: the earliest row sharing one of its dynamic bodies.
  auto& rows_of_body = workspace.rows_of_body;
  if (rows_of_body.size() < mass.inverse_mass.size()) rows_of_body.resize(mass.inverse_mass.size());
  for (auto& list : rows_of_body) list.clear();
  first_.resize(m);
  start_.resize(m + 1);
  start_[0] = 0;
  for (std::size_t i = 0; i < m; ++i) {
    int first = static_cast<int>(i);
    for (const int body : {rows[i].body_a, rows[i].body_b}) {
      if (mass.inverse_mass[static_cast<std::size_t>(body)] == 0.0) continue;  // static: couples nothing
      auto& list = rows_of_body[static_cast<std::size_t>(body)];
      if (!list.empty()) first = std::min(first, list.front());
      if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
    }
    first_[i] = first;
    start_[i + 1] = start_[i] + static_cast<int>(i) - first + 1;
  }
  values_.resize(static_cast<std::size_t>(start_[m]));
  diagonal_factor_.resize(m);
  // Row i of the envelope holds columns first_[i]..i; entry (i, j) at start_[i] + j − first_[i].
  for (std::size_t i = 0; i < m; ++i) {
    const int base = start_[i] - first_[i];
    for (int j = first_[i]; j <= static_cast<int>(i); ++j)
      values_[static_cast<std::size_t>(base + j)] = delassus_entry(rows[i], rows[static_cast<std::size_t>(j)],
                                                                   workspace.responses[static_cast<std::size_t>(j)]);
    values_[static_cast<std::size_t>(base) + i] *= 1.0 + 1e-11;
  }
  // Row-oriented LDLᵀ: L_ij = (A_ij − Σ_k L_ik D_k L_jk) / D_j, D_i = A_ii − Σ_k L_ik² D_k.
  for (std::size_t i = 0; i < m; ++i) {
    const int first_i = first_[i];
    double* row_i = values_.data() + start_[i];  // row_i[c − first_i] is column c
    for (int j = first_i; j < static_cast<int>(i); ++j) {
      const int first_j = first_[static_cast<std::size_t>(j)];
      const double* row_j = values_.data() + start_[static_cast<std::size_t>(j)];
      double sum = row_i[j - first_i];
      for (int k = std::max(first_i, first_j); k < j; ++k)
        sum -= row_i[k - first_i] * diagonal_factor_[static_cast<std::size_t>(k)] * row_j[k - first_j];
      row_i[j - first_i] = sum / diagonal_factor_[static_cast<std::size_t>(j)];
    }
    double pivot = row_i[static_cast<int>(i) - first_i];
    for (int k = first_i; k < static_cast<int>(i); ++k)
      pivot -= row_i[k - first_i] * row_i[k - first_i] * diagonal_factor_[static_cast<std::size_t>(k)];
    if (!(pivot > 0.0)) return false;
    diagonal_factor_[i] = pivot;
  }
  return true;
}

void EnvelopeLdlt::solve_in_place(std::span<double> x) const {
  const std::size_t m = first_.size();
  for (std::size_t i = 0; i < m; ++i) {  // L y = b
    const double* row_i = values_.data() + start_[i];
    double sum = x[i];
    for (int k = first_[i]; k < static_cast<int>(i); ++k) sum -= row_i[k - first_[i]] * x[static_cast<std::size_t>(k)];
    x[i] = sum;
  }
  for (std::size_t i = 0; i < m; ++i) x[i] /= diagonal_factor_[i];  // D z = y
  for (std::size_t i = m; i-- > 0;) {  // Lᵀ x = z
    const double* row_i = values_.data() + start_[i];
    const double xi = x[i];
    for (int k = first_[i]; k < static_cast<int>(i); ++k) x[static_cast<std::size_t>(k)] -= row_i[k - first_[i]] * xi;
  }
}

}  // namespace diffphys::solve
