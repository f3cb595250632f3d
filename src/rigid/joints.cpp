// rigid/joints.cpp — see joints.hpp for the constraint functions and their Jacobians.
#include "rigid/joints.hpp"

#include <algorithm>
#include <cmath>

#include "math/rotation.hpp"

namespace diffphys::rigid {
namespace {

using solve::ConstraintRow;
using solve::RowType;

const Vec3 kUnit[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// World-frame geometry of one joint at the current state.
struct JointFrame {
  Vec3 offset_a, offset_b;  // R_a r_a, R_b r_b: anchor relative to each centre of mass
  Vec3 anchor_a, anchor_b;  // the anchor as carried by each body (equal when satisfied)
};

JointFrame joint_frame(const Joint& joint, const State& state, const BodyDynamics& bodies) {
  const auto a = static_cast<std::size_t>(joint.parent), b = static_cast<std::size_t>(joint.child);
  JointFrame frame;
  frame.offset_a = bodies.rotation[a] * joint.anchor_parent;
  frame.offset_b = bodies.rotation[b] * joint.anchor_child;
  frame.anchor_a = state.position[a] + frame.offset_a;
  frame.anchor_b = state.position[b] + frame.offset_b;
  return frame;
}

ConstraintRow make_row(const Joint& joint) {
  ConstraintRow row;
  row.type = RowType::Equality;
  row.body_a = joint.parent;
  row.body_b = joint.child;
  return row;
}

// Rotation error of a locked joint: the rotation vector of q_b q_restᵀ q_aᵀ (world frame),
// whose rate is ω_b − ω_a to first order.
Vec3 rotation_error(const Joint& joint, const State& state) {
  const Quat& qa = state.orientation[static_cast<std::size_t>(joint.parent)];
  const Quat& qb = state.orientation[static_cast<std::size_t>(joint.child)];
  return rotation_vector(qb * joint.rest_relative.conjugate() * qa.conjugate());
}

// Rows (and errors) of one joint, written through `emit(row, error)`.
template <typename Emit>
void for_each_joint_row(const Joint& joint, const State& state, const BodyDynamics& bodies, Emit&& emit) {
  const Mat3& rotation_a = bodies.rotation[static_cast<std::size_t>(joint.parent)];
  const Mat3& rotation_b = bodies.rotation[static_cast<std::size_t>(joint.child)];
  const JointFrame frame = joint_frame(joint, state, bodies);
  const bool has_point_rows = joint.type != JointType::Prismatic && joint.type != JointType::Planar;
  const bool has_rotation_lock = joint.type == JointType::Fixed || joint.type == JointType::Prismatic;
  if (has_point_rows) {
    const Vec3 separation = frame.anchor_a - frame.anchor_b;
    for (int k = 0; k < 3; ++k) {
      ConstraintRow row = make_row(joint);
      row.linear_a = kUnit[k];
      row.angular_a = cross(frame.offset_a, kUnit[k]);
      row.linear_b = -kUnit[k];
      row.angular_b = -cross(frame.offset_b, kUnit[k]);
      emit(row, separation[k]);
    }
  }
  if (has_rotation_lock) {
    const Vec3 error = rotation_error(joint, state);
    for (int k = 0; k < 3; ++k) {
      ConstraintRow row = make_row(joint);
      row.angular_a = -kUnit[k];
      row.angular_b = kUnit[k];
      emit(row, error[k]);
    }
  }
  switch (joint.type) {
    case JointType::Revolute: {
      Vec3 perpendicular1, perpendicular2;
      orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
      const Vec3 axis = rotation_a * joint.axis_parent;
      for (const Vec3& perpendicular_local : {perpendicular1, perpendicular2}) {
        const Vec3 perpendicular = rotation_b * perpendicular_local;
        ConstraintRow row = make_row(joint);
        row.angular_a = cross(axis, perpendicular);
        row.angular_b = -row.angular_a;
        emit(row, dot(axis, perpendicular));
      }
      break;
    }
    case JointType::Universal: {
      const Vec3 axis1 = rotation_a * joint.axis_parent;
      const Vec3 axis2 = rotation_b * joint.axis2_child;
      ConstraintRow row = make_row(joint);
      row.angular_a = cross(axis1, axis2);
      row.angular_b = -row.angular_a;
      emit(row, dot(axis1, axis2));
      break;
    }
    case JointType::Prismatic: {
      Vec3 normal1, normal2;
      orthonormal_basis(joint.axis_parent, normal1, normal2);
      const Vec3 separation = frame.anchor_b - frame.anchor_a;
      for (const Vec3& normal_local : {normal1, normal2}) {
        const Vec3 normal = rotation_a * normal_local;
        ConstraintRow row = make_row(joint);
        row.linear_a = -normal;
        row.angular_a = cross(normal, separation) - cross(frame.offset_a, normal);
        row.linear_b = normal;
        row.angular_b = cross(frame.offset_b, normal);
        emit(row, dot(separation, normal));
      }
      break;
    }
    case JointType::Planar: {
      // The anchors stay in the plane (the prismatic normal rows' form, with the normal), and
      // the child's axis stays along the parent's (the revolute alignment rows).
      const Vec3 axis = rotation_a * joint.axis_parent;
      const Vec3 separation = frame.anchor_b - frame.anchor_a;
      ConstraintRow row = make_row(joint);
      row.linear_a = -axis;
      row.angular_a = cross(axis, separation) - cross(frame.offset_a, axis);
      row.linear_b = axis;
      row.angular_b = cross(frame.offset_b, axis);
      emit(row, dot(separation, axis));
      Vec3 perpendicular1, perpendicular2;
      orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
      for (const Vec3& perpendicular_local : {perpendicular1, perpendicular2}) {
        const Vec3 perpendicular = rotation_b * perpendicular_local;
        ConstraintRow tilt = make_row(joint);
        tilt.angular_a = cross(axis, perpendicular);
        tilt.angular_b = -tilt.angular_a;
        emit(tilt, dot(axis, perpendicular));
      }
      break;
    }
    case JointType::Fixed:
    case JointType::Ball: break;
  }
}

// The in-plane direction of a planar joint's translation `dof` (0 or 1), parent frame.
const Vec3& plane_direction(const Joint& joint, int dof) {
  return dof == 0 ? joint.axis2_parent : joint.axis3_parent;
}

}  // namespace

int joint_row_count(const Model& model) {
  int count = 0;
  for (const Joint& joint : model.joints) count += joint_constraint_count(joint.type);
  return count;
}

void append_joint_rows(const Model& model, const State& state, const BodyDynamics& bodies,
                       std::vector<ConstraintRow>& rows) {
  // The rows are written member by member into storage grown once: copying a whole row
  // that was just assembled on the stack (push_back) reads it back with wider loads than
  // the stores that built it, and the stalled store forwarding made this a tenth of the
  // chain's step. The other members keep ConstraintRow's defaults, as make_row's do.
  const std::size_t first = rows.size();
  rows.resize(first + static_cast<std::size_t>(joint_row_count(model)));
  ConstraintRow* out = rows.data() + first;
  for (const Joint& joint : model.joints)
    for_each_joint_row(joint, state, bodies, [&](const ConstraintRow& row, double) {
      out->type = row.type;
      out->body_a = row.body_a;
      out->body_b = row.body_b;
      out->linear_a = row.linear_a;
      out->angular_a = row.angular_a;
      out->linear_b = row.linear_b;
      out->angular_b = row.angular_b;
      out->rhs = row.rhs;
      ++out;
    });
}

void set_joint_spring_targets(const Model& model, const State& state, const BodyDynamics& bodies, double slope,
                              std::span<solve::ConstraintRow> rows) {
  std::size_t index = 0;
  for (const Joint& joint : model.joints)
    for_each_joint_row(joint, state, bodies,
                       [&](const ConstraintRow&, double error) { rows[index++].rhs = slope * error; });
}

double joint_position_errors(const Model& model, const State& state, const BodyDynamics& bodies,
                             std::span<double> errors) {
  std::size_t index = 0;
  double largest = 0.0;
  for (const Joint& joint : model.joints)
    for_each_joint_row(joint, state, bodies, [&](const ConstraintRow&, double error) {
      errors[index++] = error;
      largest = std::max(largest, std::abs(error));
    });
  return largest;
}

ConstraintRow coordinate_row(const Model& model, const State& state, const BodyDynamics& bodies, int joint_index,
                             int dof) {
  const Joint& joint = model.joints[static_cast<std::size_t>(joint_index)];
  const Mat3& rotation_a = bodies.rotation[static_cast<std::size_t>(joint.parent)];
  ConstraintRow row = make_row(joint);
  Vec3 axis;
  // A planar joint's translations are prismatic coordinates along its in-plane directions.
  const bool sliding = joint.type == JointType::Prismatic || (joint.type == JointType::Planar && dof < 2);
  switch (sliding ? JointType::Prismatic : joint.type) {
    case JointType::Prismatic: {
      const JointFrame frame = joint_frame(joint, state, bodies);
      axis = rotation_a * (joint.type == JointType::Planar ? plane_direction(joint, dof) : joint.axis_parent);
      const Vec3 separation = frame.anchor_b - frame.anchor_a;
      row.linear_a = -axis;
      row.angular_a = cross(axis, separation) - cross(frame.offset_a, axis);
      row.linear_b = axis;
      row.angular_b = cross(frame.offset_b, axis);
      return row;
    }
    case JointType::Revolute:
    case JointType::Planar: axis = rotation_a * joint.axis_parent; break;
    case JointType::Universal:
      axis = dof == 0 ? rotation_a * joint.axis_parent
                      : bodies.rotation[static_cast<std::size_t>(joint.child)] * joint.axis2_child;
      break;
    case JointType::Ball: axis = kUnit[dof]; break;
    case JointType::Fixed: break;
  }
  row.angular_a = -axis;
  row.angular_b = axis;
  return row;
}

double coordinate_rate(const ConstraintRow& row, const State& state) {
  const auto a = static_cast<std::size_t>(row.body_a), b = static_cast<std::size_t>(row.body_b);
  return dot(row.linear_a, state.linear_velocity[a]) + dot(row.angular_a, state.angular_velocity[a]) +
         dot(row.linear_b, state.linear_velocity[b]) + dot(row.angular_b, state.angular_velocity[b]);
}

double coordinate_value(const Model& model, const State& state, const BodyDynamics& bodies, int joint_index,
                        int dof) {
  const Joint& joint = model.joints[static_cast<std::size_t>(joint_index)];
  const auto a = static_cast<std::size_t>(joint.parent), b = static_cast<std::size_t>(joint.child);
  const bool sliding = joint.type == JointType::Prismatic || (joint.type == JointType::Planar && dof < 2);
  switch (sliding ? JointType::Prismatic : joint.type) {
    case JointType::Prismatic: {
      const JointFrame frame = joint_frame(joint, state, bodies);
      const Vec3& direction = joint.type == JointType::Planar ? plane_direction(joint, dof) : joint.axis_parent;
      return dot(frame.anchor_b - frame.anchor_a, bodies.rotation[a] * direction);
    }
    case JointType::Revolute:
    case JointType::Planar: {
      // q_aᵀ q_b q_restᵀ = rotation by θ about the parent-frame axis.
      const Quat relative = state.orientation[a].conjugate() * state.orientation[b] * joint.rest_relative.conjugate();
      return 2.0 * std::atan2(dot(relative.vec(), joint.axis_parent), relative.w);
    }
    case JointType::Universal: {
      if (dof == 0) {
        // The child's axis 2, seen from the parent, turned about axis 1 by θ1.
        const Vec3 axis2_in_parent = bodies.rotation[a].transpose_times(bodies.rotation[b] * joint.axis2_child);
        return signed_angle(joint.axis2_parent, axis2_in_parent, joint.axis_parent);
      }
      // The parent's axis 1, seen from the child, turned about axis 2 by −θ2.
      const Vec3 axis1_in_child = bodies.rotation[b].transpose_times(bodies.rotation[a] * joint.axis_parent);
      return -signed_angle(joint.axis_child, axis1_in_child, joint.axis2_child);
    }
    case JointType::Ball: {
      const Quat relative = state.orientation[b] * joint.rest_relative.conjugate() * state.orientation[a].conjugate();
      return rotation_vector(relative)[dof];
    }
    case JointType::Fixed: return 0.0;
  }
  return 0.0;
}

}  // namespace diffphys::rigid
