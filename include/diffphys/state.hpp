// diffphys/state.hpp — State x_t: what evolves during a rollout.
//
// Plain arrays, one entry per body (body 0, the world, included so indices match the
// Model); cheap to copy. A body's position is its centre of mass; its orientation rotates
// body-frame vectors into the world; angular velocity is in the world frame (DESIGN.md §5).
#pragma once

#include <vector>

#include "diffphys/math.hpp"

namespace diffphys {

class Model;

struct State {
  double time = 0.0;                   // s
  std::vector<Vec3> position;          // (nbody) centre of mass in world, m
  std::vector<Quat> orientation;       // (nbody) unit quaternion (w, x, y, z), body → world
  std::vector<Vec3> linear_velocity;   // (nbody) m/s
  std::vector<Vec3> angular_velocity;  // (nbody) rad/s, world frame

  void resize(int body_count);
  int body_count() const { return static_cast<int>(position.size()); }
};

// Throws Error naming the body and field of the first non-finite or non-unit entry, or a
// size mismatch with the model.
void validate_state(const Model& model, const State& state);

}  // namespace diffphys
