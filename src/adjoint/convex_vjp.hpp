// adjoint/convex_vjp.hpp — the vector–Jacobian product of the convex formulation's solution
// v⁺ (solve/convex.hpp), by implicit differentiation of its optimality condition.
//
// At the minimiser, F = M(v − v_free) − Jᵀγ(y) = 0 with y = R⁻¹(v̂ − J v), γ = Π(y; μ, b).
// Its Jacobian in v is the Hessian H = M + Jᵀ G J (symmetric positive definite), so with
//   u = H⁻¹ v̄⁺,   z = J u,   ξ = (∂Π/∂y)ᵀ z,   η = R⁻¹ ξ    (per row)
// the adjoints are (Amos & Kolter 2017's recipe applied to this problem):
//   v̄_free = M u (a body of zero inverse mass: v̄⁺ − Σ_i η_i J_i,bᵀ),   v̂̄_i = η_i,   J̄_i = γ_i u − η_i v⁺,   μ̄ = zᵀ ∂Π/∂μ,   b̄ = zᵀ ∂Π/∂b,
//   R̄_i = −η_i y_i,   (M⁻¹)‾_b = (M u)_b (Jᵀγ)_bᵀ,
// and through R = κ w for every row of a group, w = A_ii of its first row (a cone's normal):
//   κ̄ = Σ R̄_i w,   w̄ = Σ R̄_i κ → J̄_first += 2 w̄ M⁻¹J_firstᵀ, (M⁻¹)‾_b += w̄ J_first,bᵀ J_first,b.
// The result is exact wherever Π is differentiable (no row exactly on a boundary between
// the pieces of its projection: a cone's tip or surface, a box's ends, max's kink).
// Adjoints go into the same RowAdjoint fields as the mixed LCP's (rhs; a cone's μ on its
// Bound row's coefficient; a box's b on its Bound row's rhs as −b̄, since that row's rhs is −b),
// κ̄ on the group's first row's softness. Every output accumulates (+=).
#pragma once

#include <span>

#include "adjoint/lcp_vjp.hpp"
#include "solve/convex.hpp"

namespace diffphys::adjoint {

struct ConvexVjpWorkspace {
  solve::ConvexWorkspace problem;
  std::vector<double> local_adjoint, u, momentum, constraint_force;  // (6 nbody) or island-local
  std::vector<double> solve_scratch;  // for solving with the forward solve's factorisation
};

// `prepared`, when not null, is the forward solve's workspace for these rows and masses
// (solve_convex ran on them): its groups, responses, compliances and islands are taken
// instead of being computed again, and so is its last factorisation of an island's Hessian when
// it is the Hessian at the solution v⁺ bit for bit (ConvexWorkspace::factor_at_solution_island:
// no projection piece moved since it and no cone slides); otherwise the Hessian is assembled
// and factorised anew at v⁺ (the forward solve's last factorisation is that of its last iterate).
void convex_vjp(std::span<const solve::ConstraintRow> rows, const solve::MassBlocks& mass,
                std::span<const double> velocity, std::span<const double> velocity_adjoint,
                std::span<double> free_velocity_adjoint, std::span<RowAdjoint> row_adjoints,
                MassAdjoint& mass_adjoint, const solve::ConvexWorkspace* prepared, ConvexVjpWorkspace& workspace);

}  // namespace diffphys::adjoint
