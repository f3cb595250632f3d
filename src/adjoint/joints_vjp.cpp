// adjoint/joints_vjp.cpp — hand-derived VJPs of the joint stage; see joints_vjp.hpp for the
// tangent convention (p' = p + δp, q' = exp(δθ) ⊗ q, δθ in the world frame).
//
// Two identities do almost all the work:
//   (1) a world vector u = R c carried by a body (c constant in its frame) moves as
//       δu = δθ × u, so an adjoint ū of u adds θ̄ += u × ū to that body;
//   (2) for c = x × y, x̄ = y × c̄ and ȳ = c̄ × x (both from c̄·(δx × y) = δx·(y × c̄)).
// An anchor carried by body i is p_i + o_i with offset o_i = R_i r_i, so an adjoint ā of it
// adds p̄_i += ā and, by (1), θ̄_i += o_i × ā.
//
// Notation: a = parent, b = child; o_a, o_b the anchor offsets; s = anchor_b − anchor_a.
#include "adjoint/joints_vjp.hpp"

#include <cmath>

namespace diffphys::adjoint {
namespace {

const Vec3 kUnit[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// The world-frame geometry the forward functions read, recomputed from the quaternions.
struct JointGeometry {
  Mat3 rotation_a, rotation_b;
  Vec3 offset_a, offset_b;  // R_a r_a, R_b r_b
  Vec3 anchor_a, anchor_b;  // p + offset
};

JointGeometry joint_geometry(const Joint& joint, const State& state) {
  const auto a = static_cast<std::size_t>(joint.parent), b = static_cast<std::size_t>(joint.child);
  JointGeometry geometry;
  geometry.rotation_a = state.orientation[a].to_matrix();
  geometry.rotation_b = state.orientation[b].to_matrix();
  geometry.offset_a = geometry.rotation_a * joint.anchor_parent;
  geometry.offset_b = geometry.rotation_b * joint.anchor_child;
  geometry.anchor_a = state.position[a] + geometry.offset_a;
  geometry.anchor_b = state.position[b] + geometry.offset_b;
  return geometry;
}

// Identity (1): adjoint of a world vector carried by `body`.
void add_carried_vector_adjoint(PoseAdjoint& body, const Vec3& carried, const Vec3& carried_adjoint) {
  body.rotation += cross(carried, carried_adjoint);
}

// Adjoint of the anchor p + o carried by `body`.
void add_anchor_adjoint(PoseAdjoint& body, const Vec3& offset, const Vec3& anchor_adjoint) {
  body.position += anchor_adjoint;
  add_carried_vector_adjoint(body, offset, anchor_adjoint);
}

}  // namespace

// Adjoint of φ = log(q_b q_restᵀ q_aᵀ), the world-frame rotation vector of the relative
// rotation E (the rotation lock's error, the ball joint's coordinates).
// Under the pose perturbation E' = exp(δθ_b) E exp(−δθ_a) = exp(δθ_b − R_E δθ_a) E, and the
// left derivative of the log map gives δφ = J_l⁻¹(φ)(δθ_b − R_E δθ_a) = J_l⁻¹ δθ_b − J_r⁻¹ δθ_a
// (J_l = R_E J_r), with
//   J_l⁻¹(φ) = I − ½[φ]× + c(θ)[φ]×²,  J_r⁻¹(φ) = I + ½[φ]× + c(θ)[φ]×²,
//   c(θ) = (1 − (θ/2) cot(θ/2)) / θ²,  θ = |φ| ∈ [0, π]  (c → 1/12 at 0, 1/π² at π).
// Transposing ([φ]×ᵀ = −[φ]×): θ̄_b += φ̄ + ½ φ×φ̄ + c φ×(φ×φ̄), θ̄_a −= φ̄ − ½ φ×φ̄ + c φ×(φ×φ̄).
// The forward log flips to the other hemisphere at θ = π: φ jumps there (the wrap).
void relative_rotation_vector_vjp(const Vec3& rotation_vector, const Vec3& rotation_vector_adjoint, PoseAdjoint& parent,
                                  PoseAdjoint& child) {
  const double angle_squared = squared_norm(rotation_vector);
  double coefficient;
  if (angle_squared < 1e-4) {
    // Series of (1 − x cot x)/(4x²), x = θ/2: 1/12 + θ²/720 + θ⁴/30240 (next term ~θ⁶/1.2e6).
    coefficient = 1.0 / 12.0 + angle_squared / 720.0 + angle_squared * angle_squared / 30240.0;
  } else {
    const double angle = std::sqrt(angle_squared);
    const double half = 0.5 * angle;
    coefficient = (1.0 - half * std::cos(half) / std::sin(half)) / angle_squared;
  }
  const Vec3 half_cross = cross(rotation_vector, rotation_vector_adjoint) * 0.5;
  const Vec3 double_cross = cross(rotation_vector, cross(rotation_vector, rotation_vector_adjoint)) * coefficient;
  child.rotation += rotation_vector_adjoint + half_cross + double_cross;
  parent.rotation -= rotation_vector_adjoint - half_cross + double_cross;
}

namespace {

Vec3 relative_rotation_vector(const Joint& joint, const State& state) {
  const Quat& qa = state.orientation[static_cast<std::size_t>(joint.parent)];
  const Quat& qb = state.orientation[static_cast<std::size_t>(joint.child)];
  return rotation_vector(qb * joint.rest_relative.conjugate() * qa.conjugate());
}

// Adjoint of the J entries of the rows of the form (prismatic normal rows, prismatic
// coordinate row; planar normal row and translation rows), for a unit direction n carried by
// the parent:
//   linear_a = −n, angular_a = n × s − o_a × n, linear_b = n, angular_b = o_b × n.
// By (2): n̄ = −l̄_a + l̄_b + s × ḡ_a − ḡ_a × o_a + ḡ_b × o_b, s̄ = ḡ_a × n,
// ō_a = −n × ḡ_a, ō_b = n × ḡ_b; s̄ goes to anchor_b (+) and anchor_a (−); then (1).
void sliding_row_vjp(const JointGeometry& geometry, const Vec3& direction, const RowAdjoint& row_adjoint,
                     PoseAdjoint& parent, PoseAdjoint& child) {
  const Vec3 separation = geometry.anchor_b - geometry.anchor_a;
  const Vec3& angular_a_adjoint = row_adjoint.angular_a;
  const Vec3& angular_b_adjoint = row_adjoint.angular_b;
  const Vec3 direction_adjoint = row_adjoint.linear_b - row_adjoint.linear_a + cross(separation, angular_a_adjoint) -
                                 cross(angular_a_adjoint, geometry.offset_a) +
                                 cross(angular_b_adjoint, geometry.offset_b);
  const Vec3 separation_adjoint = cross(angular_a_adjoint, direction);
  const Vec3 offset_a_adjoint = -cross(direction, angular_a_adjoint);
  const Vec3 offset_b_adjoint = cross(direction, angular_b_adjoint);
  add_carried_vector_adjoint(parent, direction, direction_adjoint);
  add_carried_vector_adjoint(parent, geometry.offset_a, offset_a_adjoint);
  add_carried_vector_adjoint(child, geometry.offset_b, offset_b_adjoint);
  add_anchor_adjoint(child, geometry.offset_b, separation_adjoint);
  add_anchor_adjoint(parent, geometry.offset_a, -separation_adjoint);
}

// Adjoint of the J entries of a row angular_a = u × v, angular_b = −(u × v) (revolute and
// universal alignment rows) with u carried by the parent and v by the child. The linear
// parts are constant (zero). With c = u × v, c̄ = ḡ_a − ḡ_b: ū = v × c̄, v̄ = c̄ × u.
void alignment_row_vjp(const Vec3& parent_vector, const Vec3& child_vector, const RowAdjoint& row_adjoint,
                       PoseAdjoint& parent, PoseAdjoint& child) {
  const Vec3 cross_adjoint = row_adjoint.angular_a - row_adjoint.angular_b;
  add_carried_vector_adjoint(parent, parent_vector, cross(child_vector, cross_adjoint));
  add_carried_vector_adjoint(child, child_vector, cross(cross_adjoint, parent_vector));
}

// Adjoint of φ = u·v, u carried by the parent, v by the child: ū = φ̄ v, v̄ = φ̄ u, so by (1)
// θ̄_a += φ̄ u × v and θ̄_b += φ̄ v × u.
void alignment_error_vjp(const Vec3& parent_vector, const Vec3& child_vector, double error_adjoint, PoseAdjoint& parent,
                         PoseAdjoint& child) {
  const Vec3 torque = cross(parent_vector, child_vector) * error_adjoint;
  parent.rotation += torque;
  child.rotation -= torque;
}

// Adjoint of φ = s·n, n carried by the parent (prismatic normal errors and coordinate):
// s̄ = φ̄ n to anchor_b (+) and anchor_a (−); n̄ = φ̄ s, so θ̄_a += φ̄ n × s.
void sliding_value_vjp(const JointGeometry& geometry, const Vec3& direction, double value_adjoint, PoseAdjoint& parent,
                       PoseAdjoint& child) {
  const Vec3 separation = geometry.anchor_b - geometry.anchor_a;
  const Vec3 separation_adjoint = direction * value_adjoint;
  add_anchor_adjoint(child, geometry.offset_b, separation_adjoint);
  add_anchor_adjoint(parent, geometry.offset_a, -separation_adjoint);
  add_carried_vector_adjoint(parent, direction, separation * value_adjoint);
}

// Gradient with respect to `to` of signed_angle(from, to, axis) (math/rotation.cpp):
// with P = I − axis axisᵀ, f = P from, t = P to, the angle is atan2(Y, X) with
// Y = (f × t)·axis = t·(axis × f) and X = f·t, so ∂/∂to = P (X (axis × f) − Y f) / (X² + Y²).
// Singular where `to` is parallel to the axis (X = Y = 0); wraps at ±π.
Vec3 signed_angle_gradient(const Vec3& from, const Vec3& to, const Vec3& axis) {
  const auto project = [&](const Vec3& v) { return v - axis * dot(axis, v); };
  const Vec3 from_planar = project(from);
  const Vec3 to_planar = project(to);
  const Vec3 turned = cross(axis, from_planar);
  const double y = dot(to_planar, turned);
  const double x = dot(from_planar, to_planar);
  return project(turned * x - from_planar * y) / (x * x + y * y);
}

// The in-plane direction of a planar joint's translation `dof` (0 or 1), parent frame.
const Vec3& plane_direction(const Joint& joint, int dof) {
  return dof == 0 ? joint.axis2_parent : joint.axis3_parent;
}

}  // namespace

void joint_rows_vjp(const Model& model, const State& state, int joint_index, std::span<const RowAdjoint> row_adjoints,
                    PoseAdjoint& parent, PoseAdjoint& child) {
  const Joint& joint = model.joints[static_cast<std::size_t>(joint_index)];
  const JointGeometry geometry = joint_geometry(joint, state);
  std::size_t row = 0;
  if (joint.type != JointType::Prismatic && joint.type != JointType::Planar) {
    // Point rows k: angular_a = o_a × e_k, angular_b = −o_b × e_k (linear parts constant).
    // By (2) ō_a = e_k × ḡ_a, ō_b = −e_k × ḡ_b; then (1) on each offset.
    Vec3 offset_a_adjoint, offset_b_adjoint;
    for (int k = 0; k < 3; ++k, ++row) {
      offset_a_adjoint += cross(kUnit[k], row_adjoints[row].angular_a);
      offset_b_adjoint -= cross(kUnit[k], row_adjoints[row].angular_b);
    }
    add_carried_vector_adjoint(parent, geometry.offset_a, offset_a_adjoint);
    add_carried_vector_adjoint(child, geometry.offset_b, offset_b_adjoint);
  }
  // Rotation-lock rows (fixed, prismatic) are ±e_k: constant, no adjoint.
  if (joint.type == JointType::Fixed || joint.type == JointType::Prismatic) row += 3;
  switch (joint.type) {
    case JointType::Revolute: {
      Vec3 perpendicular1, perpendicular2;
      orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
      const Vec3 axis = geometry.rotation_a * joint.axis_parent;
      for (const Vec3& perpendicular_local : {perpendicular1, perpendicular2})
        alignment_row_vjp(axis, geometry.rotation_b * perpendicular_local, row_adjoints[row++], parent, child);
      break;
    }
    case JointType::Universal:
      alignment_row_vjp(geometry.rotation_a * joint.axis_parent, geometry.rotation_b * joint.axis2_child,
                        row_adjoints[row], parent, child);
      break;
    case JointType::Prismatic: {
      Vec3 normal1, normal2;
      orthonormal_basis(joint.axis_parent, normal1, normal2);
      for (const Vec3& normal_local : {normal1, normal2})
        sliding_row_vjp(geometry, geometry.rotation_a * normal_local, row_adjoints[row++], parent, child);
      break;
    }
    case JointType::Planar: {
      const Vec3 axis = geometry.rotation_a * joint.axis_parent;
      sliding_row_vjp(geometry, axis, row_adjoints[row++], parent, child);
      Vec3 perpendicular1, perpendicular2;
      orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
      for (const Vec3& perpendicular_local : {perpendicular1, perpendicular2})
        alignment_row_vjp(axis, geometry.rotation_b * perpendicular_local, row_adjoints[row++], parent, child);
      break;
    }
    case JointType::Fixed:
    case JointType::Ball:
      break;
  }
}

void joint_errors_vjp(const Model& model, const State& state, int joint_index, std::span<const double> error_adjoints,
                      PoseAdjoint& parent, PoseAdjoint& child) {
  const Joint& joint = model.joints[static_cast<std::size_t>(joint_index)];
  const JointGeometry geometry = joint_geometry(joint, state);
  std::size_t row = 0;
  if (joint.type != JointType::Prismatic && joint.type != JointType::Planar) {
    // φ = anchor_a − anchor_b: ā_a = φ̄, ā_b = −φ̄.
    const Vec3 separation_adjoint{error_adjoints[0], error_adjoints[1], error_adjoints[2]};
    add_anchor_adjoint(parent, geometry.offset_a, separation_adjoint);
    add_anchor_adjoint(child, geometry.offset_b, -separation_adjoint);
    row += 3;
  }
  if (joint.type == JointType::Fixed || joint.type == JointType::Prismatic) {
    const Vec3 lock_adjoint{error_adjoints[row], error_adjoints[row + 1], error_adjoints[row + 2]};
    relative_rotation_vector_vjp(relative_rotation_vector(joint, state), lock_adjoint, parent, child);
    row += 3;
  }
  switch (joint.type) {
    case JointType::Revolute: {
      Vec3 perpendicular1, perpendicular2;
      orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
      const Vec3 axis = geometry.rotation_a * joint.axis_parent;
      for (const Vec3& perpendicular_local : {perpendicular1, perpendicular2})
        alignment_error_vjp(axis, geometry.rotation_b * perpendicular_local, error_adjoints[row++], parent, child);
      break;
    }
    case JointType::Universal:
      alignment_error_vjp(geometry.rotation_a * joint.axis_parent, geometry.rotation_b * joint.axis2_child,
                          error_adjoints[row], parent, child);
      break;
    case JointType::Prismatic: {
      Vec3 normal1, normal2;
      orthonormal_basis(joint.axis_parent, normal1, normal2);
      for (const Vec3& normal_local : {normal1, normal2})
        sliding_value_vjp(geometry, geometry.rotation_a * normal_local, error_adjoints[row++], parent, child);
      break;
    }
    case JointType::Planar: {
      const Vec3 axis = geometry.rotation_a * joint.axis_parent;
      sliding_value_vjp(geometry, axis, error_adjoints[row++], parent, child);
      Vec3 perpendicular1, perpendicular2;
      orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
      for (const Vec3& perpendicular_local : {perpendicular1, perpendicular2})
        alignment_error_vjp(axis, geometry.rotation_b * perpendicular_local, error_adjoints[row++], parent, child);
      break;
    }
    case JointType::Fixed:
    case JointType::Ball:
      break;
  }
}

void coordinate_row_vjp(const Model& model, const State& state, int joint_index, int dof, const RowAdjoint& row_adjoint,
                        PoseAdjoint& parent, PoseAdjoint& child) {
  const Joint& joint = model.joints[static_cast<std::size_t>(joint_index)];
  const JointGeometry geometry = joint_geometry(joint, state);
  // Rotational coordinates: angular_a = −axis, angular_b = axis, so axis̄ = ḡ_b − ḡ_a,
  // and (1) on the body carrying the axis.
  const Vec3 axis_adjoint = row_adjoint.angular_b - row_adjoint.angular_a;
  switch (joint.type) {
    case JointType::Prismatic:
      sliding_row_vjp(geometry, geometry.rotation_a * joint.axis_parent, row_adjoint, parent, child);
      break;
    case JointType::Revolute:
      add_carried_vector_adjoint(parent, geometry.rotation_a * joint.axis_parent, axis_adjoint);
      break;
    case JointType::Planar:
      // Translations: sliding rows along an in-plane direction carried by the parent.
      if (dof < 2)
        sliding_row_vjp(geometry, geometry.rotation_a * plane_direction(joint, dof), row_adjoint, parent, child);
      else
        add_carried_vector_adjoint(parent, geometry.rotation_a * joint.axis_parent, axis_adjoint);
      break;
    case JointType::Universal:
      if (dof == 0)
        add_carried_vector_adjoint(parent, geometry.rotation_a * joint.axis_parent, axis_adjoint);
      else
        add_carried_vector_adjoint(child, geometry.rotation_b * joint.axis2_child, axis_adjoint);
      break;
    case JointType::Ball:   // world axes e_k: constant
    case JointType::Fixed:  // no coordinates
      break;
  }
}

void coordinate_value_vjp(const Model& model, const State& state, int joint_index, int dof, double value_adjoint,
                          PoseAdjoint& parent, PoseAdjoint& child) {
  const Joint& joint = model.joints[static_cast<std::size_t>(joint_index)];
  const JointGeometry geometry = joint_geometry(joint, state);
  switch (joint.type) {
    case JointType::Prismatic:
      sliding_value_vjp(geometry, geometry.rotation_a * joint.axis_parent, value_adjoint, parent, child);
      break;
    case JointType::Planar:
      if (dof < 2) {
        sliding_value_vjp(geometry, geometry.rotation_a * plane_direction(joint, dof), value_adjoint, parent, child);
        break;
      }
      [[fallthrough]];  // the angle about the normal is the revolute angle
    case JointType::Revolute: {
      // θ = 2 atan2(Q.v·h, Q.w), Q = q_aᵀ q_b q_restᵀ, h = axis_parent. The perturbation gives
      // Q' = exp(ε) Q with ε = R_aᵀ(δθ_b − δθ_a) (parent frame), i.e. δQ = (0, ε/2) ⊗ Q:
      // δw = −½ ε·v, δv = ½(w ε + ε × v). With y = v·h, x = w:
      // δθ = 2(x δy − y δx)/(x² + y²) = ε·g,  g = (w² h + w v × h + y v)/(w² + y²),
      // so θ̄_b += θ̄ R_a g and θ̄_a −= θ̄ R_a g. (On the joint, v ∥ h and g = h.)
      const auto a = static_cast<std::size_t>(joint.parent), b = static_cast<std::size_t>(joint.child);
      const Quat relative = state.orientation[a].conjugate() * state.orientation[b] * joint.rest_relative.conjugate();
      const Vec3& h = joint.axis_parent;
      const Vec3 v = relative.vec();
      const double w = relative.w, y = dot(v, h);
      const Vec3 gradient_local = (h * (w * w) + cross(v, h) * w + v * y) / (w * w + y * y);
      const Vec3 torque = geometry.rotation_a * gradient_local * value_adjoint;
      child.rotation += torque;
      parent.rotation -= torque;
      break;
    }
    case JointType::Universal: {
      // dof 0: θ1 = signed_angle(axis2_parent, t, axis_parent), t = R_aᵀ w2, w2 = R_b axis2_child.
      //   δt = R_aᵀ((δθ_b − δθ_a) × w2), so with m = ∂θ1/∂t (parent frame)
      //   δθ1 = (R_a m)·((δθ_b − δθ_a) × w2) = (δθ_b − δθ_a)·(w2 × R_a m).
      // dof 1: θ2 = −signed_angle(axis_child, t, axis2_child), t = R_bᵀ w1, w1 = R_a axis_parent.
      //   δt = R_bᵀ((δθ_a − δθ_b) × w1), so δθ2 = −(δθ_a − δθ_b)·(w1 × R_b m).
      // Either way the relative rotation δθ_b − δθ_a is all that matters.
      Vec3 torque;
      if (dof == 0) {
        const Vec3 carried = geometry.rotation_b * joint.axis2_child;
        const Vec3 seen_from_parent = geometry.rotation_a.transpose_times(carried);
        const Vec3 gradient = signed_angle_gradient(joint.axis2_parent, seen_from_parent, joint.axis_parent);
        torque = cross(carried, geometry.rotation_a * gradient) * value_adjoint;
      } else {
        const Vec3 carried = geometry.rotation_a * joint.axis_parent;
        const Vec3 seen_from_child = geometry.rotation_b.transpose_times(carried);
        const Vec3 gradient = signed_angle_gradient(joint.axis_child, seen_from_child, joint.axis2_child);
        torque = cross(carried, geometry.rotation_b * gradient) * value_adjoint;
      }
      child.rotation += torque;
      parent.rotation -= torque;
      break;
    }
    case JointType::Ball: {
      Vec3 rotation_vector_adjoint;
      rotation_vector_adjoint[dof] = value_adjoint;
      relative_rotation_vector_vjp(relative_rotation_vector(joint, state), rotation_vector_adjoint, parent, child);
      break;
    }
    case JointType::Fixed:
      break;  // the value is the constant 0
  }
}

}  // namespace diffphys::adjoint
