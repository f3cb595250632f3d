// diffphys/coupled.hpp — rigid bodies and soft bodies in one scene: the rigid world is
// stepped by the rigid simulator (diffphys::Rollout; two-way: its step, window by window);
// each soft step sees the rigid bodies' poses (nodes attached to points of a body, contact
// with a body's moving shapes); gradients flow back from the soft side into the rigid states and from there
// through the rigid Rollout's backward (docs/soft-bodies.md#rigid-and-soft-bodies-together).
//
//   CoupledRollout rollout(system);
//   rollout.run(system.rigid_state, {}, system.soft_state, {}, T);  // T soft steps
//   CoupledGradients g = rollout.backward([&](int t, const State& rigid, const soft::SoftState& s,
//                                              std::span<double> dL_drigid, std::span<double> dL_dx,
//                                              std::span<double> dL_dv) { ... });
//   g.rigid: dL/d(rigid x_0, controls, θ_rigid); g.soft: dL/d(soft x_0, v_0, f_t, θ_soft).
//
// Each soft frame (soft.hpp, FrameSpec) is bound to a rigid body: its pose slices are set, per
// soft step t, to the body's centre-of-mass pose at the step's end (pose) and start
// (previous_pose). The soft step's implicit-function-theorem backward pass returns dL/d(pose),
// which is mapped to the body's state tangent (docs/gradients.md: dL/dp, dL/dθ with
// q' = exp(δθ) ⊗ q) and added to dL/dx of the rigid rollout at that step.
//
// One-way by default: the soft body's forces do not act on the rigid bodies. With
// CoupledOptions::two_way, the attachment springs' and the contact's forces and torques act
// back on their rigid bodies, staggered by one soft step (the rigid substeps of soft step t
// see the springs at the soft state x_t and the contact reaction of soft step t − 1, through
// the bodies' external force and torque parameters), with the chained gradient
// (docs/soft-bodies.md#two-way-coupling).
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "diffphys/rollout.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_rollout.hpp"

namespace diffphys {

namespace adjoint {
struct StepVjpWorkspace;
}

struct CoupledSystem {
  Model rigid_model;
  Params rigid_params;
  State rigid_state;
  std::vector<double> rigid_controls;  // (nactuator) held every rigid step (a scene's default)
  soft::SoftModel soft_model;
  soft::SoftParams soft_params;
  soft::SoftState soft_state;
  std::vector<int> frame_bodies;  // (soft frames) the rigid body of each soft frame
  int substeps = 1;               // rigid steps per soft step: soft dt = substeps × rigid dt
  bool two_way = false;           // soft forces act on the rigid bodies (CoupledOptions)
};

struct CoupledOptions {
  RolloutOptions rigid;  // one-way: the rigid Rollout's options (two-way keeps every rigid state and record)
  // The attachment and contact reactions act on the rigid bodies (staggered by one soft step).
  bool two_way = false;
};

// Coupled scene files (JSON): {"rigid": <rigid scene>, "soft": <soft scene body>, "coupling":
// {...}} (docs/soft-bodies.md). Errors name the source and the JSON path.
CoupledSystem parse_coupled_scene(std::string_view text, const std::string& source = "<coupled scene>",
                                  const std::string& base_directory = ".");
CoupledSystem load_coupled_scene(const std::string& path);
// A JSON object with top-level "rigid" and "soft" keys.
bool is_coupled_scene_file(const std::string& path);

// Checks that frame_bodies names a dynamic or static rigid body for every soft frame, that
// the time steps agree (soft dt = substeps × rigid dt) and sizes; throws Error.
void validate_coupled_system(const CoupledSystem& system);
// The same checks on the parts (a World's rigid and soft parts, world.hpp).
void validate_coupling(const Model& rigid, const soft::SoftModel& soft, std::span<const int> frame_bodies, int substeps);

struct CoupledGradients {
  Gradients rigid;          // initial_state (12 nbody), controls ((T·substeps) × nactuator), params
  soft::SoftGradients soft;  // frame pose slices of params are 0: they are routed to `rigid`
};

// dL/d(rigid x_t) (12 per body, tangent layout) and dL/d(soft x_t, v_t) for soft steps
// t in [0, T] (rigid step t·substeps): add into the spans.
using CoupledLossGradient = std::function<void(int step, const State& rigid, const soft::SoftState& soft,
                                               std::span<double> dL_drigid, std::span<double> dL_dx,
                                               std::span<double> dL_dv)>;

class CoupledRollout {
 public:
  // Copies the models; the parameters are referenced (change them only between run()s).
  CoupledRollout(const Model& rigid_model, const Params& rigid_params, const soft::SoftModel& soft_model,
                 const soft::SoftParams& soft_params, std::vector<int> frame_bodies, int substeps,
                 CoupledOptions options = {});
  // Options from the system (its two_way flag).
  explicit CoupledRollout(const CoupledSystem& system);
  CoupledRollout(const CoupledRollout&) = delete;
  CoupledRollout& operator=(const CoupledRollout&) = delete;
  ~CoupledRollout();

  // T soft steps (T·substeps rigid steps). rigid_controls: (T·substeps) × nactuator or empty;
  // soft_controls: T × 3 nnode or empty. Throws Error for bad sizes or infeasible states.
  void run(const State& rigid_initial, std::span<const double> rigid_controls, const soft::SoftState& soft_initial,
           std::span<const double> soft_controls, int steps);

  int steps() const { return steps_; }
  int substeps() const { return substeps_; }
  bool two_way() const { return options_.two_way; }
  // Soft state after soft step t (every state is kept), rigid state at rigid step t·substeps.
  const soft::SoftState& soft_state(int step) const;
  const State& rigid_state(int step) const;
  // Every rigid step's status ((T·substeps)).
  std::span<const StepStatus> rigid_statuses() const;
  std::span<const soft::SoftStepStatus> soft_statuses() const { return soft_statuses_; }
  // Soft θ of step t: the soft parameters with the frame poses of that step.
  const soft::SoftParams& soft_step_params(int step) const { return step_params_[static_cast<std::size_t>(step)]; }

  CoupledGradients backward(const CoupledLossGradient& loss_gradient) const;

 private:
  soft::SoftModel soft_model_;
  const soft::SoftParams& soft_params_;
  std::vector<int> frame_bodies_;
  int substeps_ = 1;
  CoupledOptions options_;
  Rollout rigid_;                                // one-way
  Model rigid_model_;                            // two-way: the rigid model (PGS warm start off)
  const Params& rigid_params_;
  std::vector<double> rigid_controls_;           // two-way: (T·substeps) × nactuator
  std::vector<State> rigid_all_states_;          // two-way: (T·substeps + 1)
  std::vector<Workspace> rigid_records_;         // two-way: each rigid step's record
  std::vector<StepStatus> rigid_step_statuses_;  // two-way
  std::vector<Params> window_params_;            // two-way: (T) rigid θ with soft step t's reactions
  mutable soft::SoftWorkspace workspace_;
  int steps_ = 0;
  std::vector<soft::SoftState> soft_states_;     // (T + 1)
  std::vector<soft::SoftParams> step_params_;    // (T) θ with each step's frame poses
  std::vector<double> soft_controls_;            // T × 3 nnode or empty
  std::vector<soft::SoftStepStatus> soft_statuses_;
  std::vector<State> rigid_states_;              // (T + 1) rigid states at soft steps

  void reverse_two_way_window(int step, std::span<const double> arrived, std::vector<double>& running,
                              Gradients& rigid_gradients, std::vector<double>& soft_position_adjoint,
                              std::vector<double>& soft_param_adjoint, adjoint::StepVjpWorkspace& vjp,
                              std::vector<double>& window_bar, std::vector<double>& previous,
                              std::span<double> previous_pose_adjoint, std::vector<double>& pending_previous) const;
  mutable std::vector<double> contact_gradient_, contact_cotangent_, contact_theta_bar_, contact_rotation_bar_;  // scratch
};

}  // namespace diffphys
