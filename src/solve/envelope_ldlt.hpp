// solve/envelope_ldlt.hpp — sparse LDLᵀ of the Delassus matrix A = J M⁻¹ Jᵀ in envelope
// (profile) storage.
//
// Two rows of J couple only when they share a dynamic body, so for a chain of joints listed
// in order A is banded and its envelope holds all the fill: the factorisation costs
// O(rows · bandwidth²), linear in the chain's length, with no dense matrix of the whole
// system (George & Liu, Computer Solution of Large Sparse Positive Definite Systems, ch. 4).
// A relative regularisation on the diagonal (1e-11 by default) keeps redundant joint rows
// solvable.
// The factors live in MlcpWorkspace's envelope_* vectors, reused without allocation.
#pragma once

#include <span>
#include <vector>

#include "solve/mlcp.hpp"

namespace diffphys::solve {

// Builds and factorises A for `rows` into workspace.envelope_* (workspace.responses must be
// current for these rows, in the same order: response i is that of rows[i]). Every diagonal
// entry is scaled by 1 + regularisation. Returns false if a pivot is not positive (A
// numerically singular).
bool envelope_factorize(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace,
                        double regularisation = 1e-11);
// x ← A⁻¹ x with the factors in workspace.
void envelope_solve(const MlcpWorkspace& workspace, std::span<double> x);
// X ← A⁻¹ X for `columns` right-hand sides at once, X row-major (rows × columns): the inner
// loops run along a row of X, independent of each other (the interior point's G⁻¹ B_EI).
void envelope_solve_columns(const MlcpWorkspace& workspace, std::span<double> x, std::size_t columns);

}  // namespace diffphys::solve
