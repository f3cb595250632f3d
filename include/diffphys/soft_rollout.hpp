// diffphys/soft_rollout.hpp — a differentiable soft-body trajectory, mirroring
// diffphys::Rollout (rollout.hpp): run T implicit-Euler steps, then get exact gradients of
// any loss on the states with respect to the initial positions and velocities, every
// per-node external force (the controls) and every parameter in θ.
//
//   SoftRollout rollout(model, params);
//   rollout.run(initial, forces, T);                  // forces: T × 3 nnode (N), or empty
//   SoftGradients g = rollout.backward([&](int t, const SoftState& s, std::span<double> dL_dx,
//                                          std::span<double> dL_dv) {
//     if (t == T) dL_dx[3 * tip + 2] += 2 * (s.positions[3 * tip + 2] - target);
//   });
//
// Gradients come from the implicit function theorem at each step's minimiser (docs/
// soft-bodies.md): with ∇Φ(x*; x_t, v_t, θ, f_t) = 0 and H = ∇²Φ(x*), one solve H w = x̄*
// per step gives p̄ = −(∂∇Φ/∂p)ᵀ w for every input p. The backward pass re-runs each segment
// from its checkpoint (√T memory) and refactorises H at the minimiser (numeric factorisation
// only; the symbolic analysis is reused). Valid where the step converged: non-convergence is
// reported in `solver_converged` and the statuses.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "diffphys/soft.hpp"

namespace diffphys::soft {

struct SoftRolloutOptions {
  // Every state is kept if all fit in memory_budget bytes, else one every
  // checkpoint_interval steps (0: ⌈√T⌉, grown until the budget holds).
  int checkpoint_interval = 0;
  std::size_t memory_budget = std::size_t{256} << 20;
};

struct SoftGradients {
  std::vector<double> initial_positions;   // (3 nnode) dL/dx_0 (0 at pinned nodes)
  std::vector<double> initial_velocities;  // (3 nnode) dL/dv_0
  std::vector<double> controls;            // (T × 3 nnode) dL/df_t
  std::vector<double> params;              // (nparam) dL/dθ, SoftParamLayout
  bool solver_converged = true;            // every forward step converged
  int indefinite_steps = 0;                // steps whose Hessian at x* was not positive definite
  // dL/dθ of one named slice.
  std::span<const double> param(const SoftModel& model, std::string_view name) const;
};

// dL/dx_t and dL/dv_t for any t in [0, T]: add into the spans (3 nnode each).
using SoftLossGradient = std::function<void(int step, const SoftState& state, std::span<double> dL_dx,
                                            std::span<double> dL_dv)>;

class SoftRollout {
 public:
  // Copies the model; `params` is referenced and must outlive the rollout (change it only
  // between run() and the next run()).
  SoftRollout(const SoftModel& model, const SoftParams& params, SoftRolloutOptions options = {});
  // Not copyable or movable: the workspace refers to the rollout's own copy of the model.
  SoftRollout(const SoftRollout&) = delete;
  SoftRollout& operator=(const SoftRollout&) = delete;

  // Throws Error for mismatched sizes or an infeasible initial state. Pinned nodes of
  // `initial` are reset to their rest positions (prepare_soft_state).
  void run(const SoftState& initial, std::span<const double> controls, int steps);

  int steps() const { return steps_; }
  const SoftState& final_state() const { return final_state_; }
  std::span<const SoftStepStatus> statuses() const { return statuses_; }
  // From storage or recomputed from the nearest checkpoint. Like backward(), it uses the
  // rollout's workspace: one thread at a time per rollout.
  SoftState state(int step) const;
  int checkpoint_interval() const { return interval_; }

  SoftGradients backward(const SoftLossGradient& loss_gradient) const;

 private:
  SoftModel model_;
  const SoftParams& params_;
  SoftRolloutOptions options_;
  mutable SoftWorkspace workspace_;
  int steps_ = 0;
  int interval_ = 1;
  std::vector<SoftState> checkpoints_;
  std::vector<double> controls_;  // steps × 3 nnode (empty: no forces)
  std::vector<SoftStepStatus> statuses_;
  SoftState final_state_;

  std::span<const double> step_controls(int step) const;
};

}  // namespace diffphys::soft
