// solve/dense_cholesky.hpp — Cholesky L Lᵀ of a small dense symmetric positive definite block,
// in place, in caller-owned buffers (no allocation). The block is the leading size × size
// part of a row-major matrix with row stride `stride`, so a caller can factorise a leading
// block of a larger buffer without packing it. Used by iLQR (Q_uu) and by the servos of the
// reduced step (their free block B_ff, forward and backward).
#pragma once

#include <cstddef>

namespace diffphys::solve {

// Writes L over the lower triangle of the block. False if a pivot is not positive or not
// finite (the block is not positive definite).
bool cholesky_factorize(double* matrix, std::size_t size, std::size_t stride);
// x ← (L Lᵀ)⁻¹ x with the factor of cholesky_factorize.
void cholesky_solve(const double* factor, std::size_t size, std::size_t stride, double* x);
// Its two halves: x ← L⁻¹ x and x ← L⁻ᵀ x (a block factorisation applies them separately).
void cholesky_forward(const double* factor, std::size_t size, std::size_t stride, double* x);
void cholesky_backward(const double* factor, std::size_t size, std::size_t stride, double* x);

}  // namespace diffphys::solve
