// rigid/forces.cpp — see forces.hpp.
#include "rigid/forces.hpp"

#include <algorithm>

#include "rigid/joints.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::rigid {

void compute_free_velocity(const Model& model, const Params& params, const State& state,
                           std::span<const double> controls, const BodyDynamics& bodies,
                           std::span<double> free_velocity) {
  const auto n = static_cast<std::size_t>(model.body_count());
  const double h = model.dt;
  const ParamLayout& layout = model.layout;
  const Vec3 gravity = params.vec3_at(layout.gravity);
  // Accumulate forces and torques into free_velocity's slots first, then convert.
  std::fill(free_velocity.begin(), free_velocity.end(), 0.0);
  for (std::size_t b = 0; b < n; ++b) {
    if (model.bodies[b].type != BodyType::Dynamic) continue;
    const double mass = params.at(layout.body_mass[b]);
    const Vec3 omega = state.angular_velocity[b];
    const Vec3 force = gravity * mass + params.vec3_at(layout.body_force[b]);
    const Vec3 torque = params.vec3_at(layout.body_torque[b]) - cross(omega, bodies.inertia_world[b] * omega);
    solve::add_vec3(free_velocity, static_cast<int>(6 * b), force);
    solve::add_vec3(free_velocity, static_cast<int>(6 * b + 3), torque);
  }
  // A torque τ on a joint coordinate is the generalised force J_dofᵀ τ.
  const auto apply_generalised_force = [&](const solve::ConstraintRow& row, double tau) {
    solve::add_row_transpose(row, tau, free_velocity);
  };
  for (int a = 0; a < model.actuator_count(); ++a) {
    const Actuator& actuator = model.actuators[static_cast<std::size_t>(a)];
    if (actuator.type != ActuatorType::Motor) continue;
    const double tau = clipped_motor_torque(controls[static_cast<std::size_t>(a)],
                                            params.at(layout.actuator_max_torque[static_cast<std::size_t>(a)]));
    apply_generalised_force(coordinate_row(model, state, bodies, actuator.joint, actuator.dof), tau);
  }
  for (int j = 0; j < model.joint_count(); ++j) {
    const double damping = params.at(layout.joint_damping[static_cast<std::size_t>(j)]);
    if (damping == 0.0) continue;
    const int dofs = joint_dof_count(model.joints[static_cast<std::size_t>(j)].type);
    for (int dof = 0; dof < dofs; ++dof) {
      const solve::ConstraintRow row = coordinate_row(model, state, bodies, j, dof);
      apply_generalised_force(row, -damping * coordinate_rate(row, state));
    }
  }
  for (std::size_t b = 0; b < n; ++b) {
    const int o = static_cast<int>(6 * b);
    if (model.bodies[b].type == BodyType::Static) {
      for (int k = 0; k < 6; ++k) free_velocity[static_cast<std::size_t>(o + k)] = 0.0;
      continue;
    }
    if (model.bodies[b].type == BodyType::Kinematic) {
      // Prescribed: its state velocity, whatever acts on it (its inverse mass is 0, so the
      // solve leaves it there and every row sees it).
      for (int k = 0; k < 3; ++k) {
        free_velocity[static_cast<std::size_t>(o + k)] = state.linear_velocity[b][k];
        free_velocity[static_cast<std::size_t>(o + 3 + k)] = state.angular_velocity[b][k];
      }
      continue;
    }
    const Vec3 force = solve::read_vec3(free_velocity, o);
    const Vec3 torque = solve::read_vec3(free_velocity, o + 3);
    const Vec3 linear = (state.linear_velocity[b] + force * (h * bodies.inverse_mass[b])) /
                        (1.0 + h * params.at(layout.body_linear_damping[b]));
    const Vec3 angular = (state.angular_velocity[b] + bodies.inverse_inertia_world[b] * torque * h) /
                         (1.0 + h * params.at(layout.body_angular_damping[b]));
    for (int k = 0; k < 3; ++k) {
      free_velocity[static_cast<std::size_t>(o + k)] = linear[k];
      free_velocity[static_cast<std::size_t>(o + 3 + k)] = angular[k];
    }
  }
}

}  // namespace diffphys::rigid
