// adjoint/lcp_vjp.hpp — the vector–Jacobian product of the mixed LCP's solution v⁺.
//
// Implicit differentiation at the solution with the active set held fixed (Amos & Kolter
// 2017; de Avila Belbute-Peres et al. 2018, Appendix B): rows with w = 0 enforced (joint
// rows; complementarity rows whose λ is at least their w — ties count as active, which is
// the sticking side of a friction cone) form 𝒜, the others keep λ = 0, and
//   K λ_𝒜 = −(J_𝒜 v_free − rhs_𝒜),   K = (J M⁻¹ Jᵀ + F)_𝒜𝒜,   v⁺ = v_free + M⁻¹ Jᵀ λ.
// With u = M⁻¹ v̄⁺ and ζ = K⁻ᵀ (J u)_𝒜 the adjoints are
//   v̄_free = v̄⁺ − Jᵀζ,   r̄hs_i = ζ_i,   J̄_i = λ_i (u − M⁻¹Jᵀζ) − ζ_i v⁺,
//   (M⁻¹)‾_b = v̄_free,b (Jᵀλ)_bᵀ,   μ̄ = −ζ_γ λ_normal.
// Only the solution is needed, never the solver's iterations, so it holds whichever solver
// produced λ. A singular K (redundant contacts: four box corners on a plane) is solved with
// a 1e-10 relative Tikhonov term: v⁺ is unique even where λ is not. Joint-rows-only problems
// (K = A, symmetric) reuse the forward's sparse envelope LDLᵀ instead of a dense LU.
#pragma once

#include <span>
#include <vector>

#include "solve/mlcp.hpp"

namespace diffphys::adjoint {

// Adjoint of one row's data (J_i split by body, rhs_i, and the bound row's coefficient μ).
struct RowAdjoint {
  Vec3 linear_a, angular_a, linear_b, angular_b;
  double rhs = 0.0;
  double coefficient = 0.0;
};

struct MassAdjoint {
  std::vector<double> inverse_mass;  // (nbody) adjoint of 1/m
  std::vector<Mat3> inverse_inertia;  // (nbody) adjoint of the world inverse inertia
};

struct LcpVjpWorkspace {
  std::vector<int> active;            // indices of 𝒜
  std::vector<int> position_in_active;  // (rows) index in 𝒜 or −1
  std::vector<double> matrix, rhs, velocity_adjoint_scaled, constraint_response, scaled_constraint_response, impulse;
  std::vector<int> pivots;
  std::vector<solve::RowResponse> responses;
  solve::MlcpWorkspace envelope;  // joint-rows-only problems: the sparse factorisation of A
};

// Given v̄⁺ (6 per body), writes v̄_free (6 per body), the rows' adjoints and the mass
// adjoint (all accumulated: callers zero them first). lambda and velocity are the forward
// solution (λ, v⁺). factorized: for joint-rows-only problems, a workspace already holding the
// envelope factorisation of these rows' A (the forward step's), reused instead of refactorising.
void lcp_vjp(std::span<const solve::ConstraintRow> rows, const solve::MassBlocks& mass,
             std::span<const double> lambda, std::span<const double> velocity,
             std::span<const double> velocity_adjoint, std::span<double> free_velocity_adjoint,
             std::span<RowAdjoint> row_adjoints, MassAdjoint& mass_adjoint, LcpVjpWorkspace& workspace,
             const solve::MlcpWorkspace* factorized = nullptr);

// The active set the VJP uses: true for rows whose w = 0 is enforced.
bool row_is_active(const solve::ConstraintRow& row, double lambda, double w, double diagonal);

}  // namespace diffphys::adjoint
