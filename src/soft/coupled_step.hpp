// soft/coupled_step.hpp — one step of rigid + soft bodies, the single definition shared by
// CoupledRollout::run (soft/coupled_rollout.cpp, which keeps the tape) and WorldSimulator
// (world/world_simulator.cpp, which keeps no history):
//
//   1. two-way only: the rigid θ of the window = the scene's rigid θ + the reactions of the
//      attachment springs at (x_t, the rigid state at the window's start) and of soft step
//      t − 1's contact at its minimiser x_t, on the bodies' external force and torque slices;
//   2. the window's `substeps` rigid steps with that θ, through the caller's RigidWindow (the
//      rollout records every state and step record; the simulator steps in place);
//   3. the soft step with each frame's pose at the window's start (previous_pose) and end
//      (pose), Newton started where the moving shapes carry the nodes they touch.
//
// The formulas are those of coupled.hpp and docs/soft-bodies.md#two-way-coupling; the
// reverse pass of steps 1 and 3 stays in coupled_rollout.cpp.
#pragma once

#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/state.hpp"

namespace diffphys::coupled {

// What stays constant over the steps. rigid.solver.warm_start must be off (recomputed steps
// are then bit-identical to the forward ones).
struct CoupledStepModel {
  const Model& rigid;
  const soft::SoftModel& soft;
  std::span<const int> frame_bodies;  // (soft frames) the rigid body of each frame
  int substeps = 1;
  bool two_way = false;
};

// The rigid part of one window, as the caller keeps it.
class RigidWindow {
 public:
  virtual ~RigidWindow() = default;
  // Runs the window's substeps with θ = window_params and returns the rigid state at its end.
  virtual const State& run(const Params& window_params) = 0;
};

// Buffers reused from step to step (sized at the first step; no allocation after).
struct CoupledStepScratch {
  std::vector<double> start_positions;   // (3 nnode) where Newton starts
  std::vector<double> contact_gradient;  // (soft θ) ∂E_contact/∂θ of the previous step
};

struct CoupledStepInputs {
  const Params& rigid_params;           // the scene's rigid θ
  const soft::SoftParams& soft_params;  // the scene's soft θ
  const State& rigid_start;             // rigid state at the window's start (rigid step t·S)
  const soft::SoftState& soft_before;   // x_t, v_t
  std::span<const double> soft_forces;  // (3 nnode) or empty
  // Two-way contact reaction: soft step t − 1's θ (with its poses) and x_{t−1}; null at t = 0.
  const soft::SoftParams* previous_step_params = nullptr;
  const soft::SoftState* soft_previous = nullptr;
};

// One coupled step: window_params receives the window's rigid θ (two-way: with the
// reactions; one-way: the scene's), step_params the soft θ with this step's frame poses,
// soft_after x_{t+1}, v_{t+1}. The scene's soft θ must have been validated
// (validate_soft_params) by the caller; the frame poses are checked here (throws Error naming
// the frame if one is not finite). Allocates nothing once `scratch` has grown.
soft::SoftStepStatus coupled_step(const CoupledStepModel& model, const CoupledStepInputs& in, RigidWindow& rigid,
                                  Params& window_params, soft::SoftParams& step_params, soft::SoftState& soft_after,
                                  soft::SoftWorkspace& workspace, CoupledStepScratch& scratch);

// Sets every frame's pose (or previous pose) slice of `params` from its body in `rigid`.
void set_frame_poses(const soft::SoftModel& model, soft::SoftParams& params, std::span<const int> frame_bodies,
                     const State& rigid, bool previous);

// Throws Error naming the node, the obstacle and the distance unless every soft node starts
// strictly outside every shape moving with a rigid body (at the bodies' initial poses).
void check_initial_coupled_state(const CoupledStepModel& model, const soft::SoftParams& soft_params,
                                 const State& rigid_initial, const soft::SoftState& soft_initial);

// Whether some soft obstacle moves with a rigid body.
bool has_moving_contact(const soft::SoftModel& model);

// ∂E_contact/∂θ of a soft step (θ = step_params, minimiser `after`, lagged `before`) into
// `gradient` (resized to the θ size).
void contact_param_gradient(const soft::SoftModel& model, const soft::SoftParams& step_params,
                            const soft::SoftState& after, const soft::SoftState& before, soft::SoftWorkspace& workspace,
                            std::vector<double>& gradient);

}  // namespace diffphys::coupled
