// solve/envelope_ldlt.hpp — sparse LDLᵀ of the Delassus matrix A = J M⁻¹ Jᵀ in envelope
// (profile) storage.
//
// Two rows of J couple only when they share a dynamic body, so for a chain of joints listed
// in order A is banded and its envelope holds all the fill: the factorisation costs
// O(rows · bandwidth²), linear in the chain's length, with no dense matrix of the whole
// system (George & Liu, Computer Solution of Large Sparse Positive Definite Systems, ch. 4).
// A relative regularisation of 1e-11 on the diagonal keeps redundant joint rows solvable.
// The buffers are views of MlcpWorkspace vectors, reused without allocation once grown.
#pragma once

#include <span>
#include <vector>

#include "solve/mlcp.hpp"

namespace diffphys::solve {

class EnvelopeLdlt {
 public:
  EnvelopeLdlt(std::vector<int>& first, std::vector<int>& start, std::vector<double>& values,
               std::vector<double>& diagonal_factor)
      : first_(first), start_(start), values_(values), diagonal_factor_(diagonal_factor) {}

  // Builds and factorises A for `rows` (workspace.responses must be current). Returns false
  // if a pivot is not positive (A numerically singular or not positive definite).
  bool factorize(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace);
  // x ← A⁻¹ x.
  void solve_in_place(std::span<double> x) const;

 private:
  std::vector<int>& first_;
  std::vector<int>& start_;
  std::vector<double>& values_;
  std::vector<double>& diagonal_factor_;
};

}  // namespace diffphys::solve
