// solve/envelope_lu.cpp — see envelope_lu.hpp. Right-looking Doolittle LU: at column k the
// multipliers L_ik (rows below holding k) and the final U_kj (columns right holding k) are
// gathered into short dense vectors, then the lower rows and upper columns are updated by
// contiguous multiply–subtracts.
#include "solve/envelope_lu.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "solve/row_algebra.hpp"

namespace diffphys::solve {

void envelope_structure(std::span<const ConstraintRow> rows, std::span<const double> inverse_mass,
                        std::vector<int>& body_first, std::vector<int>& first_column, std::vector<int>& row_start) {
  const std::size_t m = rows.size();
  body_first.assign(inverse_mass.size(), INT_MAX);
  first_column.resize(m);
  row_start.resize(m + 1);
  row_start[0] = 0;
  for (std::size_t i = 0; i < m; ++i) {
    int first = static_cast<int>(i);
    for (const int body : {rows[i].body_a, rows[i].body_b}) {
      const auto b = static_cast<std::size_t>(body);
      if (inverse_mass[b] == 0.0) continue;  // static: couples nothing
      if (body_first[b] == INT_MAX) body_first[b] = static_cast<int>(i);
      first = std::min(first, body_first[b]);
    }
    first_column[i] = first;
    row_start[i + 1] = row_start[i] + static_cast<int>(i) - first + 1;
  }
}

bool envelope_lu_factorize(std::span<const ConstraintRow> rows, std::span<const RowResponse> columns,
                           std::span<const double> inverse_mass, EnvelopeLuWorkspace& ws, double regularisation) {
  const std::size_t m = rows.size();
  envelope_structure(rows, inverse_mass, ws.body_first, ws.first, ws.start);
  const int* const first = ws.first.data();
  const int* const start = ws.start.data();
  ws.lower.resize(static_cast<std::size_t>(start[m]));
  ws.upper.resize(static_cast<std::size_t>(start[m]));
  double* const lower = ws.lower.data();
  double* const upper = ws.upper.data();
  // Entries: lower(i, c) = B_ic for c in [first_i, i]; upper(r, i) = B_ri for r in [first_i, i).
  for (std::size_t i = 0; i < m; ++i) {
    const int width = static_cast<int>(i) - first[i];
    for (int c = 0; c <= width; ++c) {
      const auto j = static_cast<std::size_t>(first[i] + c);
      lower[start[i] + c] = delassus_entry(rows[i], rows[j], columns[j]);
      if (c < width) upper[start[i] + c] = delassus_entry(rows[j], rows[i], columns[i]);
    }
    lower[start[i] + width] *= 1.0 + regularisation;
  }
  ws.last.assign(m, -1);
  for (std::size_t i = 0; i < m; ++i) {
    int& last = ws.last[static_cast<std::size_t>(first[i])];
    last = std::max(last, static_cast<int>(i));
  }
  for (std::size_t j = 1; j < m; ++j) ws.last[j] = std::max(ws.last[j], ws.last[j - 1]);

  for (int k = 0; k < static_cast<int>(m); ++k) {
    const double pivot = lower[start[k] + k - first[k]];
    if (!(std::abs(pivot) > 0.0) || !std::isfinite(pivot)) return false;
    const int last = ws.last[static_cast<std::size_t>(k)];
    const int below = last - k;
    if (below <= 0) continue;
    if (ws.column.size() < static_cast<std::size_t>(below)) {
      ws.column.resize(static_cast<std::size_t>(below));
      ws.row.resize(static_cast<std::size_t>(below));
    }
    double* const l = ws.column.data();  // l[i − k − 1] = L_ik, or 0 if row i does not hold column k
    double* const u = ws.row.data();     // u[j − k − 1] = U_kj, or 0 if column j does not hold row k
    for (int i = k + 1; i <= last; ++i) {
      const bool holds = first[i] <= k;
      double& entry = lower[start[i] + k - first[i]];
      if (holds) entry /= pivot;
      l[i - k - 1] = holds ? entry : 0.0;
      u[i - k - 1] = holds ? upper[start[i] + k - first[i]] : 0.0;
    }
    for (int i = k + 1; i <= last; ++i) {
      if (first[i] > k) continue;
      // Row i of the lower envelope, columns k+1..i (the diagonal slot included).
      const double multiplier = l[i - k - 1];
      double* const target = lower + start[i] + (k + 1 - first[i]);
      for (int t = 0; t < i - k; ++t) target[t] -= multiplier * u[t];
      // Column i of the upper envelope, rows k+1..i−1.
      const double factor = u[i - k - 1];
      double* const column_target = upper + start[i] + (k + 1 - first[i]);
      for (int t = 0; t < i - k - 1; ++t) column_target[t] -= l[t] * factor;
    }
  }
  return true;
}

void envelope_lu_solve(const EnvelopeLuWorkspace& ws, std::span<double> x) {
  const std::size_t m = ws.first.size();
  const int* const first = ws.first.data();
  const int* const start = ws.start.data();
  const double* const lower = ws.lower.data();
  const double* const upper = ws.upper.data();
  double* const v = x.data();
  for (std::size_t i = 0; i < m; ++i) {  // L y = b, L unit lower
    const double* const row_i = lower + start[i];
    const double* const yk = v + first[i];
    const int n = static_cast<int>(i) - first[i];
    double sum = v[i];
    for (int k = 0; k < n; ++k) sum -= row_i[k] * yk[k];
    v[i] = sum;
  }
  for (std::size_t j = m; j-- > 0;) {  // U x = y, by columns
    const int n = static_cast<int>(j) - first[j];
    const double xj = v[j] / lower[start[j] + n];
    v[j] = xj;
    const double* const column_j = upper + start[j];
    double* const yk = v + first[j];
    for (int k = 0; k < n; ++k) yk[k] -= column_j[k] * xj;
  }
}

}  // namespace diffphys::solve
