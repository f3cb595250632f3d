// solve/polish.hpp — active-set polishing of a mixed-LCP solution.
//
// An interior point stops at a residual of ~tolerance with every λ strictly positive; the
// exact solution of the same active set is one linear solve away. Polishing classifies the
// rows (w = 0 held, or λ = 0), solves (A + F)_𝒜𝒜 λ_𝒜 = −q_𝒜, and keeps the result if it is
// feasible and its residual is no worse. The polished solution is a piecewise-smooth function
// of the data to round-off, which is what the backward pass differentiates (adjoint/
// lcp_vjp.hpp uses the same classification) and what finite differences can check.
#pragma once

#include <span>

#include "solve/mlcp.hpp"

namespace diffphys::solve {

// The active-set rule shared with the backward pass: does row i hold w = 0 at (λ, w)?
// diagonal: A_ii (for a Bound row, the mean A_kk of its group). Ties count as active.
bool row_holds_equality(const ConstraintRow& row, double lambda, double w, double diagonal);

// Replaces (λ, v) by the polished solution when that is at least as good; returns the
// residual of what is kept. workspace.responses/diagonal must be those of `rows`.
double polish_solution(std::span<const ConstraintRow> rows, std::span<const double> free_velocity,
                       double current_residual, MlcpWorkspace& workspace, std::span<double> lambda,
                       std::span<double> velocity);

}  // namespace diffphys::solve
