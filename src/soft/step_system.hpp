// soft/step_system.hpp — the objective of one implicit-Euler step and its sparse Newton
// system (internal; Eigen stays inside src/soft/).
//
//   Φ(x) = Σᵢ mᵢ/(2h²) |xᵢ − x̃ᵢ|² − Σᵢ mᵢ g·xᵢ − f·x + Σ_terms E(x; x_t, θ)
//
// Pinned DOFs are held at their rest positions: their gradient entries are zero and their
// Hessian rows and columns are replaced by the identity, so the factorised matrix is the
// Hessian of Φ restricted to the free DOFs. The sparsity pattern is recorded once (the terms
// emit their blocks in a fixed order, energy_term.hpp), ordered once (AMD) and analysed once;
// every assembly scatters into the same value array and every factorisation reuses the
// symbolic analysis. The matrix is stored already permuted (upper triangle, natural ordering
// in Eigen) because Eigen's SimplicialLDLT would otherwise copy the permuted matrix at every
// factorisation: stepping allocates nothing (no new, no malloc).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "diffphys/soft.hpp"
#include "soft/energy_term.hpp"

namespace diffphys::soft {

// Eigen's SimplicialLDLT on a matrix that is already permuted (natural ordering, upper
// triangle). factorize() would construct an empty temporary matrix (one allocation) per call
// and vectorD() copies D; factorising the stored matrix and reading D in place avoids both.
class PreorderedLDLT
    : public Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Upper, Eigen::NaturalOrdering<int>> {
 public:
  void factorize_stored(const Eigen::SparseMatrix<double>& upper) { this->template factorize_preordered<true>(upper); }
  // D of LDLᵀ by reference (vectorD() returns a copy).
  const Eigen::VectorXd& diagonal() const { return this->m_diag; }
};

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

  // Sparse Hessian P H Pᵀ (upper triangle, CSC), slot map and factorisation.
  Eigen::SparseMatrix<double> hessian;
  std::vector<int> permuted;        // (3 nnode) DOF k is row/column permuted[k] of `hessian`
  std::vector<int> block_slots;     // 9 per recorded block
  std::vector<int> diagonal_slots;  // per DOF
  PreorderedLDLT factorisation;
  bool analysed = false;

  // Buffers (3 nnode).
  std::vector<double> gradient, direction, trial, x, adam_step;
  Eigen::VectorXd rhs, solution;

  void set_problem(const SoftParams& theta, std::span<const double> x_previous,
                   std::span<const double> v_previous, std::span<const double> forces, bool is_dynamic);
  TermInputs inputs(std::span<const double> positions) const;
  double objective(std::span<const double> positions) const;
  // gradient = ∇Φ (pinned entries 0); with hessian, also assembles ∇²Φ into `hessian`.
  void derivatives(std::span<const double> positions, bool with_hessian);
  // LDLᵀ of the assembled Hessian + shift·I on free DOFs; false if not positive definite.
  bool factorise(double shift);
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
