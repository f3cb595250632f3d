// diffphys/coupled.hpp — rigid bodies and soft bodies in one scene file: the coupled scene
// reader and the checks that the two parts fit together. A coupled scene is stepped and
// differentiated as a World (world.hpp: load_world, WorldRollout), whose schedule runs, for
// each soft step, the rigid substeps and then the soft step with each soft frame posed by its
// rigid body (docs/soft-bodies.md#rigid-and-soft-bodies-together).
//
// Each soft frame (soft.hpp, FrameSpec) is bound to a rigid body: its pose slices are set, per
// soft step t, to the body's centre-of-mass pose at the step's end (pose) and start
// (previous_pose). One-way by default: the soft body's forces do not act on the rigid
// bodies. Two-way (`"two_way": true`), the attachment springs' and the contact's forces and
// torques act back on their rigid bodies, staggered by one soft step (the rigid substeps of
// soft step t see the springs at the soft state x_t and the contact reaction of soft step
// t − 1, through the bodies' external force and torque parameters), with the chained gradient
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
  bool two_way = false;           // soft forces act on the rigid bodies
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

}  // namespace diffphys
