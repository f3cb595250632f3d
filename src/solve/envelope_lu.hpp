// solve/envelope_lu.hpp — sparse LU, without pivoting, of an unsymmetric matrix with the
// structure of a Delassus matrix: B_ij = J_i · w_j, where w_j is any 6-per-body column on
// the bodies of row j (w_j = M⁻¹J_jᵀ gives A = J M⁻¹ Jᵀ itself).
//
// The backward pass of the joint projection (adjoint/step_vjp.cpp) solves with
// Sᵀ = J_t M⁻¹ Lᵀ Gᵀ, which differs from the symmetric positive definite A_t by O(h·ω):
// close enough to A_t that no pivoting is needed, too far for a fixed-point iteration
// preconditioned by A_t to converge in fewer than ~10 sweeps. The profile is the envelope of
// envelope_ldlt.hpp (George & Liu ch. 4), kept for the lower triangle by rows and for the
// upper by columns; fill stays inside it, so the cost is linear in a chain's length.
#pragma once

#include <span>
#include <vector>

#include "solve/mlcp.hpp"

namespace diffphys::solve {

struct EnvelopeLuWorkspace {
  std::vector<int> first;         // (rows) first structural column of each row (= row of each column)
  std::vector<int> start;         // (rows + 1) offsets of row i's lower / column i's upper envelope
  std::vector<int> last;          // (rows) last row reaching each column
  std::vector<int> body_first;    // (nbody) scratch
  std::vector<double> lower;      // row i: L_i,first_i .. L_i,i−1 and U_ii at the diagonal slot
  std::vector<double> upper;      // column j: U_first_j,j .. U_j−1,j (diagonal slot unused)
  std::vector<double> column, row;  // scratch of one step of the factorisation
};

// The first structural column of each row (the earliest row sharing one of its dynamic
// bodies) and the envelope's row offsets: shared with envelope_ldlt.
void envelope_structure(std::span<const ConstraintRow> rows, std::span<const double> inverse_mass,
                        std::vector<int>& body_first, std::vector<int>& first_column, std::vector<int>& row_start);

// Factorises B_ij = J_i · columns_j (bodies of rows[j]), each diagonal entry scaled by
// 1 + regularisation as envelope_ldlt does (redundant joint rows). False if a pivot vanishes.
bool envelope_lu_factorize(std::span<const ConstraintRow> rows, std::span<const RowResponse> columns,
                           std::span<const double> inverse_mass, EnvelopeLuWorkspace& workspace,
                           double regularisation = 1e-11);
// x ← B⁻¹ x.
void envelope_lu_solve(const EnvelopeLuWorkspace& workspace, std::span<double> x);

}  // namespace diffphys::solve
