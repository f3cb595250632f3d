// soft/sparse_cholesky.hpp — owns the sparse Cholesky factorisation of the soft-body Newton
// system: CHOLMOD's supernodal LLᵀ (SuiteSparse, Debian libsuitesparse-dev), wrapped so that
// CHOLMOD's types stay in sparse_cholesky.cpp (internal; never in a public header).
//
// Use: choose_ordering() once on the pattern (CHOLMOD's fill-reducing ordering: AMD, or METIS
// nested dissection when AMD fills badly, postordered), store the matrix in that order, then
// analyse() it once (symbolic factorisation, natural ordering) and factorise() its values as
// often as needed. The matrix is the lower triangle of a symmetric matrix in compressed
// columns, already permuted: CHOLMOD then factorises it in place (no permuted copy), and a
// numeric factorisation allocates only CHOLMOD's own per-call update buffer.
//
// The numeric factor can be copied out (save) and back (load): the soft rollout keeps each
// step's factor at its minimiser so that the backward pass solves without refactorising.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace diffphys::soft {

class SparseCholesky {
 public:
  SparseCholesky();
  ~SparseCholesky();
  SparseCholesky(SparseCholesky&&) noexcept;
  SparseCholesky& operator=(SparseCholesky&&) noexcept;

  // A fill-reducing ordering of the symmetric pattern (lower triangle, compressed columns,
  // diagonal included): position[k] is the row/column DOF k takes in the permuted matrix.
  static std::vector<int> choose_ordering(int size, std::span<const int> column_starts,
                                          std::span<const int> row_indices);

  // Symbolic factorisation of the (already ordered) lower-triangular pattern. The arrays
  // must stay alive and keep their pattern; factorise() reads `values` in place.
  void analyse(int size, std::span<const int> column_starts, std::span<const int> row_indices,
               std::span<double> values);
  // LLᵀ of the matrix + shift·I; false if it is not positive definite.
  bool factorise(double shift);
  // out = A⁻¹ b in the matrix's (permuted) order.
  void solve(std::span<const double> b, std::span<double> out);

  // The numeric factor's size in doubles, and copies of it.
  std::size_t factor_size() const;
  void save_factor(std::span<double> out) const;
  void load_factor(std::span<const double> in);
  double factor_nonzeros() const;  // nnz(L), for reports

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace diffphys::soft
