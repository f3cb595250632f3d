// solve/dense_lu.hpp — LU with partial pivoting of a small dense row-major matrix, in place,
// in caller-owned buffers (no allocation). Used by the interior point when the problem has
// complementarity rows, whose Newton matrix A + F + barrier is not symmetric.
#pragma once

#include <span>

namespace diffphys::solve {

// Factorises the n×n row-major `matrix` in place into P A = L U (unit-diagonal L below,
// U on and above the diagonal). Returns false if a pivot is exactly zero or not finite.
bool lu_factorize(std::span<double> matrix, int n, std::span<int> pivots);
// x ← A⁻¹ x using the factors.
void lu_solve(std::span<const double> factors, int n, std::span<const int> pivots, std::span<double> x);

}  // namespace diffphys::solve
