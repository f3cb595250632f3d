// rigid/forces.hpp — the unconstrained velocity update: v_free = v + h M⁻¹ f(x, v, u, θ).
//
// f holds gravity, per-body external force and torque, the gyroscopic torque −ω × Iω,
// motor torques and joint damping (both as J_dofᵀ τ on the joint coordinate, with τ from
// the state at the start of the step). Body damping is implicit: v_free /= 1 + h·c, which
// is stable for any c ≥ 0.
#pragma once

#include <span>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "rigid/body_dynamics.hpp"

namespace diffphys::rigid {

// A motor's torque (or force) is its control clipped to ±max_torque when max_torque > 0 (0
// leaves it free). The side of the clip, −1, 0 or +1, is what a backward pass needs: the
// control's adjoint on 0, max_torque's (times the side) otherwise. Shared by both
// descriptions of a step (here and rigid/articulated.cpp) and their backward passes.
inline int motor_clip_side(double control, double max_torque) {
  if (max_torque > 0 && control > max_torque) return 1;
  if (max_torque > 0 && control < -max_torque) return -1;
  return 0;
}
inline double clipped_motor_torque(double control, double max_torque) {
  const int side = motor_clip_side(control, max_torque);
  return side == 0 ? control : side * max_torque;
}

// free_velocity: (6 nbody) linear then angular per body, world frame; zero for static bodies,
// the state velocity for kinematic ones (nothing acts on a prescribed motion).
void compute_free_velocity(const Model& model, const Params& params, const State& state,
                           std::span<const double> controls, const BodyDynamics& bodies,
                           std::span<double> free_velocity);

}  // namespace diffphys::rigid
