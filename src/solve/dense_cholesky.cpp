// solve/dense_cholesky.cpp — see dense_cholesky.hpp.
#include "solve/dense_cholesky.hpp"

#include <cmath>

namespace diffphys::solve {

bool cholesky_factorize(double* matrix, std::size_t size, std::size_t stride) {
  for (std::size_t j = 0; j < size; ++j) {
    double diagonal = matrix[j * stride + j];
    for (std::size_t l = 0; l < j; ++l) diagonal -= matrix[j * stride + l] * matrix[j * stride + l];
    if (!(diagonal > 0.0) || !std::isfinite(diagonal)) return false;
    const double pivot = std::sqrt(diagonal);
    matrix[j * stride + j] = pivot;
    for (std::size_t i = j + 1; i < size; ++i) {
      double value = matrix[i * stride + j];
      for (std::size_t l = 0; l < j; ++l) value -= matrix[i * stride + l] * matrix[j * stride + l];
      matrix[i * stride + j] = value / pivot;
    }
  }
  return true;
}

void cholesky_forward(const double* factor, std::size_t size, std::size_t stride, double* x) {
  for (std::size_t i = 0; i < size; ++i) {
    double value = x[i];
    for (std::size_t l = 0; l < i; ++l) value -= factor[i * stride + l] * x[l];
    x[i] = value / factor[i * stride + i];
  }
}

void cholesky_backward(const double* factor, std::size_t size, std::size_t stride, double* x) {
  for (std::size_t i = size; i-- > 0;) {
    double value = x[i];
    for (std::size_t l = i + 1; l < size; ++l) value -= factor[l * stride + i] * x[l];
    x[i] = value / factor[i * stride + i];
  }
}

void cholesky_solve(const double* factor, std::size_t size, std::size_t stride, double* x) {
  cholesky_forward(factor, size, stride, x);
  cholesky_backward(factor, size, stride, x);
}

}  // namespace diffphys::solve
