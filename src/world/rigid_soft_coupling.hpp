// world/rigid_soft_coupling.hpp — the couplings between the rigid and the soft part of a world
// (world/part.hpp; docs/soft-bodies.md#rigid-and-soft-bodies-together):
//   FramePoses  (into the soft step) each soft frame posed by its rigid body: the pose at the
//               world step's end and, as previous_pose, at its start;
//   Reactions   (into the rigid step, two-way only) the attachment springs' forces at
//               (x_t, the rigid state at t) and the contact reaction of soft step t − 1 at its
//               minimiser x_t, added to the bodies' external force and torque parameters.
#pragma once

#include <vector>

#include "world/part.hpp"
#include "world/rigid_part.hpp"
#include "world/soft_part.hpp"

namespace diffphys::world {

class FramePoses final : public Coupling {
 public:
  FramePoses(const World& world, RigidPart& rigid, SoftPart& soft, int soft_index);
  int target() const override { return soft_index_; }
  void begin(const WorldParams& params, const WorldState& initial) override;
  void apply(const StepInputs& in, int slot) override;
  void apply_vjp(const StepAdjoints& out, int slot, std::span<double> target_param_bar) override;

 private:
  RigidPart& rigid_;
  SoftPart& soft_;
  std::vector<int> frame_bodies_;
  int soft_index_ = 0;
};

class Reactions final : public Coupling {
 public:
  Reactions(const World& world, RigidPart& rigid, SoftPart& soft, int rigid_index);
  int target() const override { return rigid_index_; }
  bool lags() const override { return moving_contact_; }
  void begin(const WorldParams& params, const WorldState& initial) override;
  void apply(const StepInputs& in, int slot) override;
  void apply_vjp(const StepAdjoints& out, int slot, std::span<double> target_param_bar) override;

 private:
  RigidPart& rigid_;
  SoftPart& soft_;
  std::vector<int> frame_bodies_;
  int rigid_index_ = 0;
  bool moving_contact_ = false;
  // Soft step t − 1's θ (its frame poses from the rigid states at t − 1 and t), rebuilt from
  // the states, and ∂E_contact/∂θ there; scratch of the VJP.
  soft::SoftParams previous_step_params_;
  std::vector<double> contact_gradient_, cotangent_, theta_bar_, rotation_bar_;
  void rebuild_previous_step(const WorldState& before, const WorldState& previous);
};

// Sets every frame's pose (or previous pose) slice of `params` from its body in `rigid`.
void set_frame_poses(const soft::SoftModel& model, soft::SoftParams& params, std::span<const int> frame_bodies,
                     const State& rigid, bool previous);

// Throws Error naming the node, the obstacle and the distance unless every soft node starts
// strictly outside every shape moving with a rigid body (at the bodies' initial poses).
void check_initial_coupled_state(const soft::SoftModel& soft, std::span<const int> frame_bodies,
                                 const soft::SoftParams& soft_params, const State& rigid_initial,
                                 const soft::SoftState& soft_initial);

}  // namespace diffphys::world
