// fluid/vector_ops.hpp — the few dense vector operations the fluid's CG solves share.
#pragma once

namespace diffphys::fluid {

inline double dot(const double* a, const double* b, int n) {
  double sum = 0.0;
  for (int k = 0; k < n; ++k) sum += a[k] * b[k];
  return sum;
}

}  // namespace diffphys::fluid
