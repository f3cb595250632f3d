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

// What the backward pass reports of the forward steps, gathered step by step as they run:
// whether every step converged, the first unhealthy state (1-based, as `simulate` counts),
// how many steps changed their contact set and, when the per-step logs are kept, which.
class ForwardHealthLog {
 public:
  // Before a run of `steps` steps; keep_steps: list the steps whose contact set changed.
  void start(std::size_t steps, bool keep_steps);
  void note(int step, const StepStatus& status, std::uint64_t contact_signature);
  bool converged() const { return converged_; }
  void write(const Model& model, GradientHealth& health) const;

 private:
  bool keep_steps_ = true, converged_ = true;
  int first_unhealthy_ = -1, change_count_ = 0, noted_ = 0;
  StepStatus first_unhealthy_status_;
  std::uint64_t previous_signature_ = 0;
  std::vector<int> changes_;
};

// The parameter slices at a value where the loss is not differentiable (a motor's
// max_torque of 0; a restitution of 0 with time of impact) and "x0/<body>" for static bodies.
void note_not_differentiable(const Model& model, const Params& params, std::vector<std::string>& names);

}  // namespace diffphys::adjoint
