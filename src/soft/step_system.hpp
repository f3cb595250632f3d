// soft/step_system.hpp — the objective of one implicit-Euler step and its sparse Newton
// system (internal; Eigen stays inside src/soft/).
//
//   Φ(x) = Σᵢ mᵢ/(2h²) |xᵢ − x̃ᵢ|² − Σᵢ mᵢ g·xᵢ − f·x + Σ_terms E(x; x_t, θ)
//
// Pinned DOFs are held at their rest positions: their gradient entries are zero and their
// Hessian rows and columns are replaced by the identity, so the factorised matrix is the
// Hessian of Φ restricted to the free DOFs. The sparsity pattern is recorded once (the terms
// emit their blocks in a fixed order, energy_term.hpp), ordered once (CHOLMOD: AMD or METIS) and analysed once;
// every assembly scatters into the same value array and every factorisation reuses the
// symbolic analysis. The matrix is stored already permuted (lower triangle, in CHOLMOD's
// fill-reducing order, sparse_cholesky.hpp) so that the factorisation reads it in place:
// stepping allocates nothing through new, and CHOLMOD's numeric factorisation only its own
// per-call update buffer (malloc).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include <Eigen/SparseCore>

#include "diffphys/soft.hpp"
#include "soft/energy_term.hpp"
#include "soft/sparse_cholesky.hpp"

namespace diffphys::soft {

struct SoftWorkspace::Impl {
  explicit Impl(const SoftModel& model);

  const SoftModel* model = nullptr;
  std::vector<std::unique_ptr<EnergyTerm>> terms;

  // The current problem (set_problem).
  const SoftParams* params = nullptr;
  std::span<const double> previous_positions;  // x_t
  std::span<const double> external_forces;     // f (3 nnode) or empty
  bool dynamic = true;                         // false: static equilibrium (no inertia, no lag)
  std::vector<double> masses;                  // (nnode) kg
  std::vector<double> predicted;               // x̃ (3 nnode)

  // Sparse Hessian P H Pᵀ (lower triangle, CSC), slot map and factorisation.
  Eigen::SparseMatrix<double> hessian;
  std::vector<int> permuted;        // (3 nnode) DOF k is row/column permuted[k] of `hessian`
  std::vector<int> block_slots;     // 9 per recorded block
  std::vector<int> diagonal_slots;  // per DOF
  SparseCholesky factorisation;

  // Buffers (3 nnode).
  std::vector<double> gradient, direction, trial, x, adam_step, permuted_rhs, permuted_solution;

  void set_problem(const SoftParams& theta, std::span<const double> x_previous,
                   std::span<const double> v_previous, std::span<const double> forces, bool is_dynamic);
  TermInputs inputs(std::span<const double> positions) const;
  double objective(std::span<const double> positions) const;
  // gradient = ∇Φ (pinned entries 0); with hessian, also assembles ∇²Φ into `hessian`.
  void derivatives(std::span<const double> positions, bool with_hessian);
  // When set, newton_minimise ends by assembling and factorising ∇²Φ at the positions it
  // returns (the minimiser), and `solution_definite` says whether that needed a shift: the
  // factor the implicit-function-theorem backward pass solves with (SoftRollout).
  bool factorise_at_solution = false;
  bool solution_definite = true;

  // LLᵀ of the assembled Hessian + shift·I; false if not positive definite. (Pinned DOFs'
  // identity rows are shifted too: they are decoupled and their right-hand sides are 0.)
  bool factorise(double shift);
  // The backward pass's factorisation of the assembled Hessian: unshifted if positive
  // definite (returns true), else shifted by 10⁻¹⁰·max(1, max |diagonal|) (returns false).
  bool factorise_for_adjoint();
  // out = H⁻¹ b with the current factorisation (pinned entries of b must be 0).
  void solve(std::span<const double> b, std::span<double> out);
  double max_feasible_step(std::span<const double> positions, std::span<const double> step) const;
  bool is_pinned_dof(std::size_t dof) const { return model->pinned[dof / 3] != 0; }
};

// Newton's method on Φ from `positions` (updated in place).
SoftStepStatus newton_minimise(SoftWorkspace::Impl& system, std::span<double> positions,
                               std::vector<double>* objective_history);
// Adam on Φ from `positions` (the first-order variant of Rojas 2020).
SoftStepStatus adam_minimise(SoftWorkspace::Impl& system, std::span<double> positions,
                             const AdamSettings& settings, std::vector<double>* objective_history);

}  // namespace diffphys::soft
