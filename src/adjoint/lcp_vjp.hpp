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
//
// Kᵀ ζ = λ̄ is solved exactly either way: a dense LU with partial pivoting for small active
// sets, or, from kSparseAdjointRows active rows up (a pile of spheres: ~1,000), a sparse LU
// (KLU from SuiteSparse, private to lcp_vjp.cpp: AMD fill-reducing ordering, partial pivoting
// preferring the diagonal). K_ij is nonzero only when rows i and j share a moving body (or a
// friction group), so Kᵀ is assembled by columns from per-body row lists with the same
// entries, bit for bit, as the dense matrix. While the sparsity pattern repeats (consecutive
// steps of a resting pile) the ordering, the pivot sequence and the factors' storage are
// reused (klu_refactor, no allocation); a new pattern is analysed and factorised afresh, and
// KLU allocates its factors then. Either LU's solution is improved by iterative refinement
// with residuals in extended precision: the Tikhonov term puts K's condition near 1e10, where
// one double-precision solve is good to ~1e-6 only in the directions that term decides;
// refined, the two LUs agree to ~1e-10 (the dense LU refines only when its pivots show that
// term at work, smallest < 1e-6 × largest, and it has 48 active rows or more). The relative
// residual ‖Kᵀζ − λ̄‖/‖λ̄‖ is kept in relative_residual (the rollout's health report keeps the
// largest of the sparse ones); if a refactorisation misses 1e-12 the matrix is factorised
// afresh with new pivots. A failed sparse factorisation falls back to the dense LU.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "solve/mlcp.hpp"

namespace diffphys::adjoint {

// Adjoint of one row's data (J_i split by body, rhs_i, and the bound row's coefficient μ).
struct RowAdjoint {
  Vec3 linear_a, angular_a, linear_b, angular_b;
  double rhs = 0.0;
  double coefficient = 0.0;
  double softness = 0.0;  // Formulation::Convex: the adjoint of the row's softness κ_i
};

struct MassAdjoint {
  std::vector<double> inverse_mass;  // (nbody) adjoint of 1/m
  std::vector<Mat3> inverse_inertia;  // (nbody) adjoint of the world inverse inertia
};

// How Kᵀ ζ = λ̄ is solved when K is not joint-rows-only (tests compare the two).
enum class LcpAdjointSolve : std::uint8_t { Automatic, Dense, Sparse };
// From this many active rows up, Automatic uses the sparse LU.
inline constexpr std::size_t kSparseAdjointRows = 96;

struct SparseLcpAdjoint;  // KLU's matrix and factorisation, defined in lcp_vjp.cpp
struct SparseLcpAdjointDeleter {
  void operator()(SparseLcpAdjoint* solver) const;
};

struct LcpVjpWorkspace {
  LcpAdjointSolve solve = LcpAdjointSolve::Automatic;
  bool used_sparse = false;         // the last call solved with the sparse LU
  double relative_residual = 0.0;   // of the last dense or sparse solve, after refinement
  // Counts of the sparse path's work, for tests and profiling.
  long sparse_analyses = 0, sparse_factorizations = 0, sparse_refactorizations = 0;
  std::unique_ptr<SparseLcpAdjoint, SparseLcpAdjointDeleter> sparse;
  std::vector<int> body_row_start, body_rows;  // active positions touching each moving body (CSR)
  std::vector<int> column_marker, column_entries;  // scratch of one column of Kᵀ
  std::vector<double> column_values;
  std::vector<double> dense_copy, right_side, correction;  // iterative refinement (both LUs)
  std::vector<long double> residual_wide;
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
