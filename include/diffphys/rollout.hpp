// diffphys/rollout.hpp — a differentiable trajectory: run T steps, then get exact gradients
// of any loss on the states with respect to the initial state, every control and every
// parameter.
//
//   Rollout rollout(model, params);
//   rollout.run(x0, controls, T);                    // controls: T × nactuator, row-major
//   Gradients g = rollout.backward([&](int t, const State& x, std::span<double> dL_dx) {
//     if (t == T) dL_dx[12 * ball + 2] += 2 * (x.position[ball].z - target);   // any subset of t
//   });
//   g.params (same layout as Params), g.controls (T × nactuator), g.initial_state.
//
// State gradients use the tangent layout of docs/gradients.md: 12 numbers per body (body 0,
// the world, included), [dL/dp (3), dL/dθ (3), dL/dv (3), dL/dω (3)], where θ is a world-
// frame rotation increment: q' = exp(δθ) ⊗ q. The backward pass re-runs each step from its
// stored or recomputed state (checkpointing, √T memory) and runs the stages' VJPs with the
// contact set and the LCP's active set of the forward step held fixed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

inline constexpr int kStateTangentPerBody = 12;

struct RolloutOptions {
  // States kept for the backward pass: every step if they fit in memory_budget bytes, else
  // one every checkpoint_interval steps (0: chosen so that the checkpoints and one segment's
  // step records fit, so that the backward pass re-runs each step once; else ⌈√T⌉, grown
  // until the budget holds), each segment recomputed during backward.
  int checkpoint_interval = 0;
  // Bounds what the rollout keeps that grows with the number of steps: states, step records
  // and solutions, and the per-step logs (kRolloutLogBytesPerStep: statuses, and the
  // backward pass's |x̄_t|, stage gains and contact changes), which are kept only when they
  // fit in a quarter of it. Not inside it: the open-loop controls' copy and dL/du_t
  // (8 bytes per actuator and step each), which are the caller's input and output.
  std::size_t memory_budget = std::size_t{256} << 20;
  double gradient_decay = 1.0;  // α ∈ (0, 1]: x̄_t ← α x̄_t per step back (Degrave et al. 2019)
  double gradient_clip = 0.0;   // clip |x̄_t| to this norm per step (0: off)
  // Keep a record of each step for backward(): its solution (λ, v⁺: ~2 KB a step for a
  // humanoid in contact), so that backward re-runs the step without its velocity solve; when
  // checkpointing, the solutions of one recomputed segment at a time. Kept while the states and
  // the solutions together fit in half the budget left after the per-step logs. Off: backward
  // re-runs every step with its solve.
  bool keep_step_records = true;
  // With keep_step_records: the record of a step is its whole solver Workspace (rows,
  // contacts, factorisations; ~140 KB a step for that humanoid), so that backward reverses
  // the steps without re-running them at all: ~10 % less CPU per gradient for the humanoid in
  // a quiet run, about none on other scenes, at 41–246× the memory and its page faults on a
  // first run (docs/gradients.md, "Memory and long horizons"). The solutions are kept as
  // well: the fallback should the Workspaces outgrow the budget during the run. A rollout
  // whose first step has joint rows only keeps Workspaces whatever this says: no replay skips
  // such a step's solve, which also factorises the joint projection.
  bool keep_step_workspaces = false;
  // dL/dθ too. Off: Gradients::params stays empty, for users who need dL/dx_0 and dL/du_t
  // only (trajectory optimisation, MPC); the backward pass in joint coordinates then skips
  // the parameter terms (the maximal-coordinate one computes and drops them).
  bool parameter_gradients = true;
};

// What the backward pass saw.
struct GradientHealth {
  std::vector<double> state_gradient_norm;  // (T + 1) |dL/dx_t|
  int first_non_finite_step = -1;           // first step (counting back) where a NaN/Inf appeared
  std::string first_non_finite_stage;       // "loss gradient", "joint projection", "LCP", ...
  std::vector<int> contact_changes;         // steps t whose contact set differs from step t − 1's
  int clipped_steps = 0;
  bool solver_converged = true;             // every forward step converged
  // The first forward step (1-based, as `simulate` counts) whose state was unhealthy
  // (StepStatus::health, docs/robustness.md "State health"), -1 when none; and
  // health_message() of it. A gradient through such a step is not to be trusted.
  int first_unhealthy_step = -1;
  std::string state_health_message;
  // Largest relative residual ‖Kᵀζ − λ̄‖/‖λ̄‖ of the LCP adjoint's sparse LU over the steps
  // (adjoint/lcp_vjp.hpp; 0 when every step used the dense LU). A direct solve: ~1e-14,
  // and above 1e-12 only if refinement and refactorisation could not bring it down.
  double lcp_adjoint_residual = 0.0;
  // Per reversed step t (T entries, t = 0…T−1), the norm of the adjoint after each backward
  // stage of step t relative to the norm of x̄_{t+1} it started from (0 when that was 0):
  // [0] v̄⁺ after the joint projection and integration, [1] v̄_free after the velocity solve
  // (LCP or convex), [2] x̄_t, the whole step's output before the loss, the decay and the
  // clipping. Where a gradient explodes, these say which stage amplifies it
  // (diffphys/gradient_health.hpp). Maximal coordinates only (empty in joint coordinates).
  std::vector<std::array<double, 3>> stage_gain;
  // false when the per-step arrays above (state_gradient_norm, contact_changes, stage_gain)
  // were not kept: a long rollout whose per-step logs would not fit in a quarter of
  // RolloutOptions::memory_budget. The two summaries below are filled either way.
  bool per_step_kept = true;
  int contact_change_count = 0;              // steps whose contact set differs from the step before
  double largest_state_gradient_norm = 0.0;  // max_t |dL/dx_t|
};

struct Gradients {
  std::vector<double> initial_state;  // (12 nbody) dL/dx_0
  std::vector<double> controls;       // (T × nactuator) dL/du_t
  std::vector<double> params;         // (nparam) dL/dθ, Params layout (empty: parameter_gradients off)
  GradientHealth health;
  // Parameter slices at a value where the loss is not differentiable, whose entry in
  // `params` is therefore not a gradient (e.g. a motor's max_torque of 0, meaning unbounded),
  // and "x0/<body>" for each static body: fixed scenery, whose rows of `initial_state` are 0.
  std::vector<std::string> not_differentiable;

  // dL/dθ of one named slice ("body/ball/mass", "gravity", ...).
  std::span<const double> param(const Model& model, std::string_view name) const;
};

// dL/dx_t for any t in [0, T]: add into `gradient` (12 per body).
using LossGradient = std::function<void(int step, const State& state, std::span<double> gradient)>;

// Feedback inside a rollout (closed loop): u_t = π(t, x_t). The rollout calls act() once per
// step going forward and stores the controls (recomputed segments reuse them). Going backward
// it calls
// act_backward() exactly once per step, for t = T−1 down to 0, with ū_t = dL/du_t; the
// controller adds (∂π/∂x_t)ᵀ ū_t into `state_gradient` (tangent layout) and accumulates the
// gradient of its own parameters. A recurrent controller keeps its hidden states itself and
// back-propagates through them in this reverse order (Degrave et al. 2019, §3).
class Controller {
 public:
  virtual ~Controller() = default;
  virtual void act(int step, const State& state, std::span<double> controls) = 0;
  virtual void act_backward(int step, const State& state, std::span<const double> control_gradient,
                            std::span<double> state_gradient) = 0;
};

// A rollout's per-step logs: its StepStatus, and in the backward pass |x̄_t| (8 bytes), the
// stage gains (24) and a contact change (4).
inline constexpr std::size_t kRolloutLogBytesPerStep = sizeof(StepStatus) + 8 + 24 + 4;

class Rollout {
 public:
  // Copies the model (with PGS warm start off); `params` is referenced and must outlive the
  // Rollout — change it only between run() and the next run().
  Rollout(const Model& model, const Params& params, RolloutOptions options = {});

  // Runs `steps` steps from `initial`; controls: steps × nactuator (row-major), or empty for
  // all-zero controls. Throws Error for mismatched sizes or invalid input.
  void run(const State& initial, std::span<const double> controls, int steps);
  // Closed loop: the controls of step t are controller.act(t, x_t). The controller is
  // referenced until the next run() and must outlive backward(); Gradients::controls still
  // holds dL/du_t, and the controller receives them through act_backward().
  void run(const State& initial, Controller& controller, int steps);
  // The controls used at each step (steps × nactuator): the given ones, or the controller's.
  std::span<const double> controls() const { return controls_; }

  int steps() const { return steps_; }
  const State& final_state() const { return final_state_; }
  // Every step's status, when the per-step logs fit the memory budget (statuses_kept());
  // throws Error otherwise, pointing to status() and converged().
  std::span<const StepStatus> statuses() const;
  bool statuses_kept() const { return logs_kept_; }
  // Step t's status: stored, or recomputed from the nearest checkpoint.
  StepStatus status(int step) const;
  // Every step converged (StepStatus::converged), kept whatever the number of steps.
  bool converged() const { return all_converged_; }
  // x_t, from storage or recomputed from the nearest checkpoint.
  State state(int step) const;
  int checkpoint_interval() const { return interval_; }
  std::size_t stored_state_bytes() const;
  // Bytes of the step records kept by the last run() (0 if it kept none): the two below.
  std::size_t stored_record_bytes() const { return stored_solution_bytes() + stored_workspace_bytes(); }
  // Bytes of the step solutions (λ, v⁺) kept: backward re-runs each step without its
  // velocity solve. 0 when none are kept (checkpoints, a budget they do not fit, or
  // keep_step_records off).
  std::size_t stored_solution_bytes() const { return solutions_kept_ ? solutions_.size() * sizeof(double) : 0; }
  // Bytes of the whole step Workspaces kept (RolloutOptions::keep_step_workspaces): backward
  // then re-runs no step.
  std::size_t stored_workspace_bytes() const { return record_bytes_; }

  Gradients backward(const LossGradient& loss_gradient) const;

 private:
  Model model_;  // the caller's, with PGS warm start off (see SolverSettings::warm_start)
  const Params& params_;
  RolloutOptions options_;
  int steps_ = 0;
  int interval_ = 1;
  std::vector<State> checkpoints_;  // x_0, x_k, x_2k, ...
  std::vector<double> controls_;    // steps × nactuator
  Controller* controller_ = nullptr;  // closed loop: controls_ were computed by it
  // Per-step logs, kept when they fit (logs_kept_), and what the backward pass reports of
  // the forward steps whatever their number.
  bool logs_kept_ = true;
  std::size_t state_budget_ = 0;  // the memory budget less the per-step logs
  std::vector<StepStatus> statuses_;
  std::vector<int> contact_changes_;  // steps whose contact set differs from the step before
  int contact_change_count_ = 0;
  bool all_converged_ = true;
  int first_unhealthy_step_ = -1;  // 1-based, as GradientHealth counts
  StepStatus first_unhealthy_status_;
  State final_state_;
  std::vector<Workspace> records_;  // (steps) each step's Workspace, when kept (keep_step_workspaces)
  bool records_kept_ = false;
  // The records are Workspaces (keep_step_workspaces, or a first step of joint rows only, whose
  // solve no replay skips: it also gives the joint projection its factorisation).
  bool workspace_records_ = false;
  std::size_t record_bytes_ = 0;
  std::size_t largest_record_bytes_ = 0;  // one step's Workspace, the largest seen
  std::size_t largest_solution_bytes_ = 0;  // one step's solution (λ, v⁺), the largest seen
  // Each step's solution (λ, v⁺), when they fit in half the budget beside the states, so
  // that backward re-runs a step without its velocity solve (the step's replay,
  // src/rigid/step_workspace.hpp): the record of RolloutOptions::keep_step_records.
  std::vector<double> solutions_;
  std::vector<std::size_t> solution_start_;  // (steps + 1) offsets in solutions_
  bool solutions_kept_ = false;

  void forward(const State& initial, std::span<const double> controls, int steps);
};

}  // namespace diffphys
