// adjoint/joint_coordinates_vjp.cpp — reverse mode of joint_position and joint_velocity
// (diffphys/simulator.hpp), for joint coordinates read outside the step: a policy's
// observation (learn/shac.cpp, MlpPolicy feature maps) back-propagates through them into
// the state. The step's own servo and damping terms use the same pieces
// (adjoint/joints_vjp.hpp's coordinate_value_vjp and coordinate_row_vjp).
#include <cstddef>

#include "adjoint/joints_vjp.hpp"
#include "adjoint/lcp_vjp.hpp"
#include "diffphys/error.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/simulator.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/joints.hpp"

namespace diffphys {
namespace {

void check_joint_coordinate(const Model& model, const State& state, int joint, int dof, std::span<double> state_gradient,
                      const char* what) {
  if (joint < 0 || joint >= model.joint_count())
    throw Error(message(what, ": joint index ", joint, " out of range [0, ", model.joint_count(), ")"));
  const Joint& j = model.joints[static_cast<std::size_t>(joint)];
  if (dof < 0 || dof >= joint_dof_count(j.type))
    throw Error(message(what, ": joint '", j.name, "' has ", joint_dof_count(j.type), " coordinate(s), got dof ", dof));
  const std::size_t expected = static_cast<std::size_t>(kStateTangentPerBody) * state.position.size();
  if (state_gradient.size() != expected)
    throw Error(message(what, ": state_gradient has ", state_gradient.size(), " entries, expected 12 per body = ",
                        expected));
}

void add_tangent_vec3(std::span<double> gradient, std::size_t offset, const Vec3& v) {
  for (int k = 0; k < 3; ++k) gradient[offset + static_cast<std::size_t>(k)] += v[k];
}

// Pose adjoints (position, world-frame rotation increment) into the tangent layout.
void add_tangent_pose(std::span<double> gradient, int body, const adjoint::PoseAdjoint& pose) {
  const std::size_t base = static_cast<std::size_t>(kStateTangentPerBody) * static_cast<std::size_t>(body);
  add_tangent_vec3(gradient, base, pose.position);
  add_tangent_vec3(gradient, base + 3, pose.rotation);
}

rigid::BodyDynamics coordinate_rotations(const State& state) {
  rigid::BodyDynamics bodies;
  bodies.rotation.resize(state.orientation.size());
  for (std::size_t b = 0; b < state.orientation.size(); ++b) bodies.rotation[b] = state.orientation[b].to_matrix();
  return bodies;
}

}  // namespace

void joint_position_vjp(const Model& model, const State& state, int joint, int dof, double value_adjoint,
                        std::span<double> state_gradient) {
  check_joint_coordinate(model, state, joint, dof, state_gradient, "joint_position_vjp");
  adjoint::PoseAdjoint parent, child;
  adjoint::coordinate_value_vjp(model, state, joint, dof, value_adjoint, parent, child);
  const Joint& j = model.joints[static_cast<std::size_t>(joint)];
  add_tangent_pose(state_gradient, j.parent, parent);
  add_tangent_pose(state_gradient, j.child, child);
}

void joint_velocity_vjp(const Model& model, const State& state, int joint, int dof, double value_adjoint,
                        std::span<double> state_gradient) {
  check_joint_coordinate(model, state, joint, dof, state_gradient, "joint_velocity_vjp");
  // rate = J(q) v: v̄ = Jᵀ r̄ onto the velocities, J̄ = v r̄ onto the poses that build J.
  const solve::ConstraintRow row = rigid::coordinate_row(model, state, coordinate_rotations(state), joint, dof);
  const auto a = static_cast<std::size_t>(row.body_a), b = static_cast<std::size_t>(row.body_b);
  const std::size_t base_a = static_cast<std::size_t>(kStateTangentPerBody) * a;
  const std::size_t base_b = static_cast<std::size_t>(kStateTangentPerBody) * b;
  add_tangent_vec3(state_gradient, base_a + 6, row.linear_a * value_adjoint);
  add_tangent_vec3(state_gradient, base_a + 9, row.angular_a * value_adjoint);
  add_tangent_vec3(state_gradient, base_b + 6, row.linear_b * value_adjoint);
  add_tangent_vec3(state_gradient, base_b + 9, row.angular_b * value_adjoint);
  adjoint::RowAdjoint row_adjoint;
  row_adjoint.linear_a = state.linear_velocity[a] * value_adjoint;
  row_adjoint.angular_a = state.angular_velocity[a] * value_adjoint;
  row_adjoint.linear_b = state.linear_velocity[b] * value_adjoint;
  row_adjoint.angular_b = state.angular_velocity[b] * value_adjoint;
  adjoint::PoseAdjoint parent, child;
  adjoint::coordinate_row_vjp(model, state, joint, dof, row_adjoint, parent, child);
  const Joint& j = model.joints[static_cast<std::size_t>(joint)];
  add_tangent_pose(state_gradient, j.parent, parent);
  add_tangent_pose(state_gradient, j.child, child);
}

}  // namespace diffphys
