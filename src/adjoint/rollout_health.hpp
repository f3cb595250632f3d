// adjoint/rollout_health.hpp — what a backward pass reports about the rigid steps it reversed
// (GradientHealth, Gradients::not_differentiable), shared by the rigid Rollout
// (adjoint/rollout.cpp) and the world's rigid part (world/rigid_part.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys::adjoint {

// FNV-1a over the contact set's discrete identity (which shapes, which features).
std::uint64_t contact_signature(std::span<const Contact> contacts);

// GradientHealth::stage_gain of one reversed step: the norms of v̄⁺ (after the joint projection
// and integration), v̄_free (after the velocity solve) and x̄_t (the step's output) over the norm
// of x̄_{t+1} it started from; zeros when that is 0.
std::array<double, 3> backward_stage_gain(std::span<const double> next_state_adjoint,
                                          std::span<const double> velocity_adjoint,
                                          std::span<const double> free_velocity_adjoint,
                                          std::span<const double> state_adjoint);

// From the forward steps: which steps changed their contact set, whether every step
// converged, the first unhealthy state (1-based, as `simulate` counts).
void note_forward_health(const Model& model, std::span<const StepStatus> statuses,
                         std::span<const std::uint64_t> contact_signatures, GradientHealth& health);

// The parameter slices at a value where the loss is not differentiable (a motor's
// max_torque of 0; a restitution of 0 with time of impact) and "x0/<body>" for static bodies.
void note_not_differentiable(const Model& model, const Params& params, std::vector<std::string>& names);

}  // namespace diffphys::adjoint
