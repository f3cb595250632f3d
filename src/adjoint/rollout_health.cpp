// adjoint/rollout_health.cpp — the rigid backward passes' health report (rollout_health.hpp).
#include "adjoint/rollout_health.hpp"

#include <algorithm>
#include <cmath>

namespace diffphys::adjoint {

std::uint64_t contact_signature(std::span<const Contact> contacts) {
  std::uint64_t hash = 1469598103934665603ull;
  const auto mix = [&](std::uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  for (const Contact& contact : contacts) {
    mix(static_cast<std::uint64_t>(contact.shape_a));
    mix(static_cast<std::uint64_t>(contact.shape_b));
    mix(static_cast<std::uint64_t>(contact.feature));
  }
  return hash;
}

void ForwardHealthLog::start(std::size_t steps, bool keep_steps) {
  keep_steps_ = keep_steps;
  converged_ = true;
  first_unhealthy_ = -1;
  change_count_ = 0;
  noted_ = 0;
  changes_.clear();
  if (keep_steps) changes_.reserve(steps);  // no allocation while stepping; capacity kept across runs
}

void ForwardHealthLog::note(int step, const StepStatus& status, std::uint64_t contact_signature) {
  converged_ = converged_ && status.converged;
  if (status.health != StateHealth::Ok && first_unhealthy_ < 0) {
    first_unhealthy_ = step + 1;
    first_unhealthy_status_ = status;
  }
  if (noted_++ > 0 && contact_signature != previous_signature_) {
    ++change_count_;
    if (keep_steps_) changes_.push_back(step);
  }
  previous_signature_ = contact_signature;
}

void ForwardHealthLog::write(const Model& model, GradientHealth& health) const {
  if (keep_steps_) health.contact_changes = changes_;
  health.contact_change_count = change_count_;
  health.solver_converged = converged_;
  if (first_unhealthy_ >= 0) {
    health.first_unhealthy_step = first_unhealthy_;
    health.state_health_message = health_message(model, first_unhealthy_status_);
  }
}

void note_not_differentiable(const Model& model, const Params& params, std::vector<std::string>& names) {
  for (int a = 0; a < model.actuator_count(); ++a) {
    const auto i = static_cast<std::size_t>(a);
    if (model.actuators[i].type == ActuatorType::Motor && params.at(model.layout.actuator_max_torque[i]) == 0.0)
      names.push_back("actuator/" + model.actuators[i].name + "/max_torque");
  }
  // A restitution of 0 is where bounces stop being taken at their time of impact (e > 0 only:
  // rigid/time_of_impact.hpp): the step has only one-sided derivatives in e there, and e < 0
  // is outside its domain.
  const auto bodies = static_cast<std::size_t>(model.body_count());
  if (model.solver.time_of_impact)
    for (std::size_t b = 0; b < bodies; ++b) {
      const int offset = model.layout.body_restitution[b];
      if (offset >= 0 && params.at(offset) == 0.0) names.push_back("body/" + model.bodies[b].name + "/restitution");
    }
  // Static bodies (the world, fixed obstacles) are fixed scenery, not differentiated state:
  // their pose reaches the loss through contacts and joint anchors, which the step VJPs do
  // not all follow, so their rows are zeroed at every step and listed as not differentiable.
  for (std::size_t b = 0; b < bodies; ++b)
    if (model.bodies[b].type == BodyType::Static) names.push_back("x0/" + model.bodies[b].name);
}

std::array<double, 3> backward_stage_gain(std::span<const double> next_state_adjoint,
                                          std::span<const double> velocity_adjoint,
                                          std::span<const double> free_velocity_adjoint,
                                          std::span<const double> state_adjoint) {
  const auto norm = [](std::span<const double> values) {
    double squared = 0.0;
    for (const double v : values) squared += v * v;
    return std::sqrt(squared);
  };
  const double input = norm(next_state_adjoint);
  if (!(input > 0)) return {0.0, 0.0, 0.0};
  return {norm(velocity_adjoint) / input, norm(free_velocity_adjoint) / input, norm(state_adjoint) / input};
}

}  // namespace diffphys::adjoint
