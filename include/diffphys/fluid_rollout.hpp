// diffphys/fluid_rollout.hpp — a differentiable fluid trajectory, mirroring diffphys::Rollout
// and soft::SoftRollout: run T steps, then exact gradients of any loss on the states with
// respect to the initial velocity and scalar fields, every step's per-cell forces (the
// controls) and θ (fluid/viscosity, fluid/buoyancy).
//
//   FluidRollout rollout(model, params);
//   rollout.run(initial, controls, T);              // controls: T × 2 ncell (m/s²), or empty
//   FluidGradients g = rollout.backward([&](int t, const FluidState& s, std::span<double> dL_du,
//                                           std::span<double> dL_ds) {
//     if (t == T) for (int c = 0; c < ncell; ++c) dL_ds[c] += 2 * (s.scalars[c] - target[c]);
//   });
//
// The backward pass runs each step's exact discrete adjoint (src/fluid/fluid_step_vjp.cpp,
// docs/fluids.md): the projection's and the viscous stage's adjoint solves use the same SPD
// operators and relative tolerance as the forward pass. Memory: every state and each step's
// record (its viscous stage's input and output and its advected scalars: 2 (nu + nv) +
// nscalar × ncell doubles) are kept if they fit memory_budget; else one state every
// checkpoint_interval steps (0: ⌈√T⌉, grown until the budget holds), and each segment is
// re-run (states and records) before its reverse sweep — one extra forward pass in all.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid {

struct FluidRolloutOptions {
  int checkpoint_interval = 0;  // 0: automatic (see above); 1: keep everything
  std::size_t memory_budget = std::size_t{256} << 20;
};

struct FluidGradients {
  std::vector<double> initial_velocities;  // (nu + nv) dL/du_0 (0 on the wall faces)
  std::vector<double> initial_scalars;     // (nscalar × ncell) dL/ds_0
  std::vector<double> controls;            // (T × 2 ncell) dL/df_t
  std::vector<double> params;              // (nparam) dL/dθ, FluidParamLayout
  bool solver_converged = true;            // every adjoint solve reached its tolerance
  // dL/dθ of one named slice.
  std::span<const double> param(const FluidModel& model, std::string_view name) const;
};

// dL/du_t and dL/ds_t for any t in [0, T]: add into the spans ((nu + nv) and (nscalar × ncell)).
using FluidLossGradient = std::function<void(int step, const FluidState& state, std::span<double> dL_dvelocities,
                                             std::span<double> dL_dscalars)>;

class FluidRollout {
 public:
  // Copies the model; `params` is referenced and must outlive the rollout.
  FluidRollout(const FluidModel& model, const FluidParams& params, FluidRolloutOptions options = {});
  FluidRollout(const FluidRollout&) = delete;
  FluidRollout& operator=(const FluidRollout&) = delete;

  // Throws Error for bad θ, a bad initial state (validate_fluid_state: sizes, NaN, wall faces,
  // CFL), mismatched controls, or a step that fails (non-finite state, CFL above max_cfl, a
  // solve that misses its tolerance): a failed step is an error, not a converged step.
  void run(const FluidState& initial, std::span<const double> controls, int steps);

  int steps() const { return steps_; }
  const FluidState& final_state() const { return final_state_; }
  std::span<const FluidStepStatus> statuses() const { return statuses_; }
  std::span<const double> controls() const { return controls_; }
  int checkpoint_interval() const { return interval_; }
  // From storage or recomputed from the nearest checkpoint.
  FluidState state(int step) const;
  // Bytes kept by the last run(): checkpointed states and step records.
  std::size_t stored_bytes() const;

  FluidGradients backward(const FluidLossGradient& loss_gradient) const;

 private:
  FluidModel model_;
  const FluidParams& params_;
  FluidRolloutOptions options_;
  mutable FluidWorkspace workspace_;
  int steps_ = 0;
  int interval_ = 1;
  std::vector<FluidState> checkpoints_;  // states 0, k, 2k, ... (every state when k = 1)
  std::vector<double> records_;          // steps × step record when k = 1, else empty
  std::vector<double> controls_;         // steps × 2 ncell, or empty
  std::vector<FluidStepStatus> statuses_;
  FluidState final_state_;

  std::span<const double> step_controls(int step) const;
};

}  // namespace diffphys::fluid
