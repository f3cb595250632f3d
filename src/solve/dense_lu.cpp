// solve/dense_lu.cpp — see dense_lu.hpp (Golub & Van Loan, Matrix Computations, Alg. 3.4.1).
#include "solve/dense_lu.hpp"

#include <cmath>
#include <utility>

namespace diffphys::solve {

bool lu_factorize(std::span<double> a, int n, std::span<int> pivots) {
  const auto at = [&](int row, int col) -> double& { return a[static_cast<std::size_t>(row * n + col)]; };
  for (int k = 0; k < n; ++k) {
    int pivot_row = k;
    double largest = std::abs(at(k, k));
    for (int row = k + 1; row < n; ++row)
      if (std::abs(at(row, k)) > largest) {
        largest = std::abs(at(row, k));
        pivot_row = row;
      }
    pivots[static_cast<std::size_t>(k)] = pivot_row;
    if (!(largest > 0.0) || !std::isfinite(largest)) return false;
    if (pivot_row != k)
      for (int col = 0; col < n; ++col) std::swap(at(k, col), at(pivot_row, col));
    const double inverse_pivot = 1.0 / at(k, k);
    for (int row = k + 1; row < n; ++row) {
      const double factor = at(row, k) * inverse_pivot;
      at(row, k) = factor;
      if (factor == 0.0) continue;
      double* target = &at(row, 0);
      const double* source = &at(k, 0);
      for (int col = k + 1; col < n; ++col) target[col] -= factor * source[col];
    }
  }
  return true;
}

void lu_solve(std::span<const double> a, int n, std::span<const int> pivots, std::span<double> x) {
  const auto at = [&](int row, int col) { return a[static_cast<std::size_t>(row * n + col)]; };
  for (int k = 0; k < n; ++k) {
    const int p = pivots[static_cast<std::size_t>(k)];
    if (p != k) std::swap(x[static_cast<std::size_t>(k)], x[static_cast<std::size_t>(p)]);
  }
  for (int row = 0; row < n; ++row) {
    double sum = x[static_cast<std::size_t>(row)];
    for (int col = 0; col < row; ++col) sum -= at(row, col) * x[static_cast<std::size_t>(col)];
    x[static_cast<std::size_t>(row)] = sum;
  }
  for (int row = n - 1; row >= 0; --row) {
    double sum = x[static_cast<std::size_t>(row)];
    for (int col = row + 1; col < n; ++col) sum -= at(row, col) * x[static_cast<std::size_t>(col)];
    x[static_cast<std::size_t>(row)] = sum / at(row, row);
  }
}

}  // namespace diffphys::solve
