// world/part.hpp — the contract of a part of the world (rigid bodies, soft bodies; fluids and
// cameras to come) and of a coupling between parts, as the world's schedule
// (world/schedule.cpp) steps and differentiates them. docs/architecture.md, "What a part
// provides", says the same for a newcomer.
//
// A world step t runs, for each part in the world's order: the part's step θ reset to its
// slice of the world's θ, the couplings into that part (which add or set terms of that θ from
// the other parts' states), then the part's step x_t → x_{t+1}. The backward pass runs the
// same stages in reverse: the part's step VJP (x̄_{t+1} → its share of x̄_t, ū_t and the
// step θ̄), the couplings' VJPs (the step θ̄ → the states and θ they read), then the step θ̄
// into the world's θ̄. The schedule owns the rest once for every part: checkpoints and
// recomputation, the step records' memory budget, gradient decay and clipping, the loss and
// the closed-loop controller.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "diffphys/world.hpp"

namespace diffphys::world {

// The record slot of a step that is not kept (simulation, recomputation before a reverse).
inline constexpr int kScratchSlot = -1;

// Part::step's `status_step`: a step of the forward run (>= 0) has its status kept (as step
// `status_step` when the per-step logs are kept, else as the part's latest) and noted in the
// run's summaries (convergence, state health, contact changes); kNoStatus discards it (a
// recomputed step); kStatusOnly keeps it as the latest without noting it (a step recomputed
// for Schedule::status when the per-step logs were not kept).
inline constexpr int kNoStatus = -1;
inline constexpr int kStatusOnly = -2;

// World step t, forward.
struct StepInputs {
  const WorldState& before;          // x_t
  const WorldState* previous;        // x_{t−1} (nullptr at the first step): for couplings that lag a step
  WorldState& after;                 // x_{t+1}: parts earlier in the world's order have written theirs
  std::span<const double> controls;  // u_t in the world's control layout; empty: the scene's defaults, no forces
};

// World step t, backward. Adjoints are in the world's tangent, control and parameter layouts.
struct StepAdjoints {
  const WorldState& before;
  const WorldState* previous;
  const WorldState& after;
  std::span<const double> controls;  // u_t as used (never empty)
  std::span<double> after_bar;       // x̄_{t+1}: a part's slice is complete when its step VJP runs
  std::span<double> before_bar;      // x̄_t: add into
  std::span<double> previous_bar;    // x̄_{t−1}: add into (empty at the first step)
  std::span<double> controls_bar;    // ū_t: add into
  std::span<double> params_bar;      // θ̄ of the world: add into
};

class Part {
 public:
  virtual ~Part() = default;
  virtual std::string_view kind() const = 0;
  // This part's range of the world's tangent vector (WorldLayout).
  virtual int tangent_offset() const = 0;
  virtual int tangent_size() const = 0;

  // Before a run of `steps` world steps (0: a simulation): reads its θ from the world's
  // vector, checks θ and the initial state (throws Error naming the item), and may prepare
  // the initial state (e.g. pinned soft nodes reset to rest). keep_logs: keep each step's
  // status and, in the backward pass, the per-step norms (log_bytes_per_step() a step); else
  // only the latest status and the run's summaries (the schedule decides from the budget).
  virtual void begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) = 0;
  // The bytes a world step adds to this part's per-step logs when they are kept.
  virtual std::size_t log_bytes_per_step() const = 0;
  // Records kept for the backward pass: at least `slots` of them (grown, never shrunk, so
  // later runs reuse their buffers); release_records() frees them.
  virtual void reserve_records(int slots) = 0;
  virtual void release_records() = 0;
  virtual std::size_t record_bytes(int slot) const = 0;
  virtual std::size_t state_bytes(const WorldState& state) const = 0;

  // Set once by the schedule, after it made the couplings: whether some coupling writes this
  // part's step θ, and the rollout's options (what its records may keep). When no coupling
  // writes it, the step θ is the world's θ: the part keeps no copy of it per record, and
  // step_vjp adds its θ̄ straight into the world's θ̄ and returns an empty step θ̄ (the order
  // of sums of the part's own rollout, hence the same bits).
  virtual void configure(bool coupled, const RolloutOptions& options) {
    (void)coupled;
    (void)options;
  }
  // The step θ of record `slot`, reset to the world's values (couplings then change it).
  virtual void reset_step_params(int slot) = 0;
  // x_t → x_{t+1} (this part's state in in.after) with the step θ of `slot`, whose record
  // keeps what the VJP needs; the status as `status_step` says (kNoStatus, kStatusOnly above).
  virtual void step(const StepInputs& in, int slot, int status_step) = 0;
  // The time of this part's state (the world's time is the last part's).
  virtual double time(const WorldState& state) const = 0;

  // Reverses step t (its record in `slot`): adds into out.before_bar (this part's slice),
  // out.controls_bar, and returns the step θ̄ (this part's layout, the part's scratch),
  // which the couplings into this part read next.
  virtual std::span<double> step_vjp(const StepAdjoints& out, int step, int slot) = 0;
  // The step θ̄ (after the couplings' VJPs) into the world's θ̄.
  virtual void add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const = 0;

  // Before a backward pass of `steps` steps; the health of its gradient goes into `result`
  // (WorldGradients' per-part health) from here to finish_backward.
  virtual void begin_backward(int steps, WorldGradients& result) = 0;
  // The rows of x̄ that are not differentiated state (a static rigid body): zeroed each step.
  virtual void mask_state_adjoint(std::span<double> world_tangent) const { (void)world_tangent; }
  // x̄_t of this part once complete: its norm (after clipping) and whether it was clipped;
  // a non-finite value seen at `stage`.
  virtual void note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) = 0;
  virtual void note_non_finite(int step, const char* stage, WorldGradients& result) = 0;
  // After step 0 is reversed: the initial state's adjoint (world tangent) finished and the
  // forward statuses' summary (convergence, state health, what is not differentiable).
  virtual void finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const = 0;

  // This part's statuses of world step t (per-step logs kept), else of the latest step kept.
  virtual void fill_status(int step, WorldStepStatus& status) const = 0;
  // Whether every forward step of the last run converged.
  virtual bool converged() const = 0;
};

class Coupling {
 public:
  virtual ~Coupling() = default;
  // The index (in the world's order) of the part whose step θ this coupling writes, before
  // that part steps.
  virtual int target() const = 0;
  // Whether it reads x_{t−1} (the schedule then keeps the state before every checkpoint).
  virtual bool lags() const { return false; }
  virtual void begin(const WorldParams& params, const WorldState& initial) = 0;
  // Adds or sets its terms in the target's step θ of `slot`, from in.before, in.previous and
  // the states in in.after of the parts stepped before the target.
  virtual void apply(const StepInputs& in, int slot) = 0;
  // Reverse: reads the target's step θ̄ (and zeroes the entries apply() set, which are not
  // the world's θ), adds into the adjoints of what apply() read.
  virtual void apply_vjp(const StepAdjoints& out, int slot, std::span<double> target_param_bar) = 0;
};

}  // namespace diffphys::world
