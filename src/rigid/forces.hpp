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

// free_velocity: (6 nbody) linear then angular per body, world frame; zero for static bodies.
void compute_free_velocity(const Model& model, const Params& params, const State& state,
                           std::span<const double> controls, const BodyDynamics& bodies,
                           std::span<double> free_velocity);

}  // namespace diffphys::rigid
