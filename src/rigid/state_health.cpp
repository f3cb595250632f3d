// rigid/state_health.cpp — the state-health check of every rigid step and its message
// (rigid/state_health.hpp, docs/robustness.md "State health").
#include "rigid/state_health.hpp"

#include <cmath>
#include <cstddef>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys {

// Named, not anonymous: the library is a unity build.
namespace state_health {

// The first non-finite component of a vector, or 0 when all are finite (0 is finite, so it
// never stands for a non-finite value).
bool first_non_finite(const Vec3& v, double& value) {
  for (int d = 0; d < 3; ++d)
    if (!std::isfinite(v[d])) {
      value = v[d];
      return true;
    }
  return false;
}

bool first_non_finite(const Quat& q, double& value) {
  for (const double component : {q.w, q.x, q.y, q.z})
    if (!std::isfinite(component)) {
      value = component;
      return true;
    }
  return false;
}


}  // namespace state_health

const char* to_string(StateHealth health) {
  switch (health) {
    case StateHealth::Ok:
      return "ok";
    case StateHealth::NonFinite:
      return "non_finite";
    case StateHealth::TooFast:
      return "too_fast";
  }
  return "unknown";
}

std::string health_message(const Model& model, const StepStatus& status) {
  if (status.health == StateHealth::Ok) return {};
  const bool named = status.health_body >= 0 && status.health_body < model.body_count();
  const std::string body = named ? "body '" + model.bodies[static_cast<std::size_t>(status.health_body)].name + "'"
                                 : message("body ", status.health_body);
  if (status.health == StateHealth::NonFinite)
    return message(body, ": non-finite state (", status.health_value, ") after the step");
  if (status.health_angular)
    return message(body, ": angular speed ", significant(status.health_value), " rad/s above solver.max_angular_speed ",
                   model.solver.max_angular_speed, " rad/s");
  return message(body, ": linear speed ", significant(status.health_value), " m/s above solver.max_speed ", model.solver.max_speed,
                 " m/s");
}

namespace rigid {

void check_state_health(const Model& model, const State& state, StepStatus& status) {
  // Squared speeds against squared bounds: no square root for a healthy body.
  const double max_speed_squared = model.solver.max_speed * model.solver.max_speed;
  const double max_angular_squared = model.solver.max_angular_speed * model.solver.max_angular_speed;
  const std::size_t count = state.position.size();
  for (std::size_t b = 0; b < count; ++b) {
    double value = 0.0;
    if (state_health::first_non_finite(state.position[b], value) ||
        state_health::first_non_finite(state.orientation[b], value) ||
        state_health::first_non_finite(state.linear_velocity[b], value) ||
        state_health::first_non_finite(state.angular_velocity[b], value)) {
      status.health = StateHealth::NonFinite;
      status.health_value = value;
    } else if (const double v2 = squared_norm(state.linear_velocity[b]); v2 > max_speed_squared) {
      status.health = StateHealth::TooFast;
      status.health_value = std::sqrt(v2);
    } else if (const double w2 = squared_norm(state.angular_velocity[b]); w2 > max_angular_squared) {
      status.health = StateHealth::TooFast;
      status.health_value = std::sqrt(w2);
      status.health_angular = true;
    } else {
      continue;
    }
    status.health_body = static_cast<int>(b);
    status.converged = false;
    return;
  }
}

}  // namespace rigid
}  // namespace diffphys
