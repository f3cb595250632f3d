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
// per step gives p̄ = −(∂∇Φ/∂p)ᵀ w for every input p. The forward pass keeps each step's
// Cholesky factor of H at its minimiser (when it fits the memory budget), so the backward
// pass solves with it directly; otherwise it re-runs each checkpoint segment (√T memory) and
// keeps the segment's factors, or, past the budget, refactorises H at each minimiser.
// Closed loop (SoftController), gradient decay and clipping and the health report mirror
// diffphys::Rollout (rollout.hpp, docs/gradients.md). Valid where the step converged:
// non-convergence is reported in `solver_converged`, the health report and the statuses.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/soft.hpp"

namespace diffphys::soft {

struct SoftRolloutOptions {
  // Every state is kept if all fit in memory_budget bytes, else one every
  // checkpoint_interval steps (0: ⌈√T⌉, grown until the budget holds).
  int checkpoint_interval = 0;
  std::size_t memory_budget = std::size_t{256} << 20;
  // α ∈ (0, 1]: the adjoints (x̄_t, v̄_t) are scaled by α at every step back (Degrave et al.
  // 2019), as RolloutOptions::gradient_decay.
  double gradient_decay = 1.0;
  double gradient_clip = 0.0;  // clip |(x̄_t, v̄_t)| to this norm at every step (0: off)
  // Keep each step's Cholesky factor of ∇²Φ at its minimiser beside the states when they fit
  // memory_budget together (else those of one checkpoint segment at a time, recomputed with
  // it; else none: backward refactorises).
  bool keep_step_records = true;
};

// What the backward pass saw (as diffphys::GradientHealth).
struct SoftGradientHealth {
  std::vector<double> state_gradient_norm;  // (T + 1) |(dL/dx_t, dL/dv_t)|, after clipping
  int first_non_finite_step = -1;           // first step (counting back) where a NaN/Inf appeared
  // "loss gradient", "implicit solve", "mixed derivatives", "controller" or "parameters".
  std::string first_non_finite_stage;
  int clipped_steps = 0;
  std::vector<int> non_converged_steps;  // forward steps whose Newton solve did not converge
  std::vector<int> indefinite_steps;     // steps whose Hessian at x* was not positive definite
  bool solver_converged = true;          // every forward step converged
  int refactorised_steps = 0;            // steps whose factor was not kept (recomputed in backward)
};

struct SoftGradients {
  std::vector<double> initial_positions;   // (3 nnode) dL/dx_0 (0 at pinned nodes)
  std::vector<double> initial_velocities;  // (3 nnode) dL/dv_0
  std::vector<double> controls;            // (T × 3 nnode) dL/df_t
  std::vector<double> params;              // (nparam) dL/dθ, SoftParamLayout
  bool solver_converged = true;            // every forward step converged
  int indefinite_steps = 0;                // steps whose Hessian at x* was not positive definite
  SoftGradientHealth health;
  // dL/dθ of one named slice.
  std::span<const double> param(const SoftModel& model, std::string_view name) const;
};

// dL/dx_t and dL/dv_t for any t in [0, T]: add into the spans (3 nnode each).
using SoftLossGradient = std::function<void(int step, const SoftState& state, std::span<double> dL_dx,
                                            std::span<double> dL_dv)>;

// Feedback inside a rollout (closed loop): f_t = π(t, x_t, v_t), the per-node external forces
// (3 nnode, N; zeroed before each call; entries of pinned nodes are ignored). run() calls
// act() once per step going forward and stores the forces (recomputed segments reuse them).
// backward() calls act_backward() exactly once per step, for t = T−1 down to 0, with
// f̄_t = dL/df_t; the controller adds (∂π/∂x_t)ᵀ f̄_t into dL_dx and (∂π/∂v_t)ᵀ f̄_t into
// dL_dv, and accumulates the gradient of its own parameters.
class SoftController {
 public:
  virtual ~SoftController() = default;
  virtual void act(int step, const SoftState& state, std::span<double> forces) = 0;
  virtual void act_backward(int step, const SoftState& state, std::span<const double> force_gradient,
                            std::span<double> dL_dx, std::span<double> dL_dv) = 0;
};

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
  // Closed loop: the forces of step t are controller.act(t, x_t). The controller is
  // referenced until the next run() and must outlive backward().
  void run(const SoftState& initial, SoftController& controller, int steps);
  // The forces used at each step (steps × 3 nnode): the given ones (empty if none), or the
  // controller's.
  std::span<const double> controls() const { return controls_; }

  int steps() const { return steps_; }
  const SoftState& final_state() const { return final_state_; }
  std::span<const SoftStepStatus> statuses() const { return statuses_; }
  // From storage or recomputed from the nearest checkpoint. Like backward(), it uses the
  // rollout's workspace: one thread at a time per rollout.
  SoftState state(int step) const;
  int checkpoint_interval() const { return interval_; }
  // Bytes of the states kept by the last run() (checkpoints).
  std::size_t stored_state_bytes() const;
  // Bytes of the Cholesky factors kept by the last run() (0 if it did not keep them).
  std::size_t stored_record_bytes() const { return factors_.size() * sizeof(double); }

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
  SoftController* controller_ = nullptr;
  std::vector<double> factors_;          // steps × factor size: each step's factor at x*, when kept
  std::vector<char> factor_definite_;    // (steps) whether that Hessian was positive definite
  std::size_t factor_size_ = 0;          // doubles per factor

  std::span<const double> step_controls(int step) const;
  void forward(const SoftState& initial, std::span<const double> controls, int steps);
  // One step that leaves the workspace holding ∇²Φ's factor at the minimiser, copied to
  // `factor` (when not empty); returns the status, `definite` whether no shift was needed.
  SoftStepStatus recorded_step(int step, const SoftState& in, SoftState& out, std::span<double> factor,
                               char& definite) const;
};

}  // namespace diffphys::soft
