// adjoint/contact_geometry.cpp — owns the dual-number posing of a contact's two shapes and
// the read-out of the contact's derivatives; conventions in contact_geometry.hpp.
//
// Each shape is posed with pose_shape's double values, bit for bit, and the derivatives of
// that pose with respect to its body's (p + δp, exp(δθ) ⊗ q) at δ = 0, written in closed
// form, as the dual directions; its sizes are seeded likewise. The narrow phase so starts
// from exactly the numbers the forward pass used and takes the same decisions (later
// divisions in dual arithmetic may still round differently in the last bit: only an exact
// tie can notice).
#include "adjoint/contact_geometry.hpp"

#include <cstddef>

#include "collision/detect_contacts.hpp"
#include "collision/narrow_phase.hpp"
#include "math/dual.hpp"

namespace diffphys::adjoint {
namespace {

using GeometryDual = Dual<kContactGeometryInputs>;

// Replaces the value of a dual number, keeping its derivatives.
void set_value(GeometryDual& x, double value) { x.value = value; }
void set_values(Vec3T<GeometryDual>& v, const Vec3& values) {
  for (int k = 0; k < 3; ++k) set_value(v[k], values[k]);
}

// Shape `shape_index` posed on dual numbers: its body's translation and rotation are the
// inputs [first_pose_input, +3) and [first_pose_input + 3, +3), its sizes the inputs
// [first_size_input, +3).
collision::PosedShapeT<GeometryDual> pose_shape_with_tangents(const Model& model,
                                                              const Params& params,
                                                              const State& state, int shape_index,
                                                              int first_pose_input,
                                                              int first_size_input) {
  const Shape& shape = model.shapes[static_cast<std::size_t>(shape_index)];
  const auto body = static_cast<std::size_t>(shape.body);
  // The forward pass's values, bit for bit.
  const collision::PosedShape forward = collision::pose_shape(model, params, state, shape_index);

  // Derivatives at δ = 0, written in closed form (what dual arithmetic through
  // p + δp + exp(δθ) R_b l and exp(δθ) ⊗ q_b ⊗ q_l would give, without its cost):
  //   ∂x/∂δp_j = e_j,  ∂x/∂δθ_j = e_j × (R_b l),
  //   ∂q/∂δθ_j = ½ (0, e_j) ⊗ q  (tangent to the unit sphere: normalising changes nothing),
  //   ∂R/∂δθ_j = [e_j]× R.
  collision::PosedShapeT<GeometryDual> posed;
  posed.type = shape.type;
  const Vec3 lever = state.orientation[body].rotate(shape.local_position);
  const auto rotation_input = static_cast<std::size_t>(first_pose_input + 3);
  for (int k = 0; k < 3; ++k) {
    posed.position[k] = GeometryDual(forward.position[k]);
    posed.position[k].derivative[static_cast<std::size_t>(first_pose_input + k)] = 1.0;
  }
  const Quat& q = forward.orientation;
  posed.orientation = {GeometryDual(q.w), GeometryDual(q.x), GeometryDual(q.y), GeometryDual(q.z)};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) posed.rotation(i, j) = GeometryDual(forward.rotation(i, j));
  for (int j = 0; j < 3; ++j) {
    Vec3 axis;
    axis[j] = 1.0;
    const auto input = rotation_input + static_cast<std::size_t>(j);
    const Vec3 moved = cross(axis, lever);
    for (int k = 0; k < 3; ++k) posed.position[k].derivative[input] = moved[k];
    // ½ (0, a) ⊗ (w, u) = ½ (−a·u, w a + a × u).
    const Vec3 vector_part{q.x, q.y, q.z};
    const Vec3 turned = axis * q.w + cross(axis, vector_part);
    posed.orientation.w.derivative[input] = -0.5 * dot(axis, vector_part);
    posed.orientation.x.derivative[input] = 0.5 * turned.x;
    posed.orientation.y.derivative[input] = 0.5 * turned.y;
    posed.orientation.z.derivative[input] = 0.5 * turned.z;
    for (int c = 0; c < 3; ++c) {
      const Vec3 column_derivative = cross(axis, forward.rotation.col(c));
      for (int r = 0; r < 3; ++r) posed.rotation(r, c).derivative[input] = column_derivative[r];
    }
  }
  const int offset = model.layout.shape_size[static_cast<std::size_t>(shape_index)];
  const auto size_input = [&](int k) {
    return GeometryDual::variable(params.at(offset + k), first_size_input + k);
  };
  switch (shape.type) {
    case ShapeType::Sphere: posed.size.x = size_input(0); break;
    case ShapeType::Box:
      for (int k = 0; k < 3; ++k) posed.size[k] = size_input(k);
      break;
    case ShapeType::Capsule:
      posed.size.x = size_input(0);
      posed.size.y = size_input(1);
      break;
    case ShapeType::Cylinder:  // collides as a capsule, as in collision::pose_shape
      posed.type = ShapeType::Capsule;
      posed.size.x = size_input(0);
      posed.size.y = size_input(1);
      break;
    case ShapeType::Plane: break;
    case ShapeType::ConvexMesh:
      posed.size.x = size_input(0);
      posed.mesh = &model.meshes[static_cast<std::size_t>(shape.mesh)];
      break;
  }

  set_values(posed.size, forward.size);
  return posed;
}

}  // namespace

ContactGeometryJacobian contact_geometry_jacobian(const Model& model, const Params& params,
                                                  const State& state, const Contact& contact) {
  const collision::PosedShapeT<GeometryDual> shape_a = pose_shape_with_tangents(
      model, params, state, contact.shape_a, kBodyATranslationInput, kShapeASizeInput);
  const collision::PosedShapeT<GeometryDual> shape_b = pose_shape_with_tangents(
      model, params, state, contact.shape_b, kBodyBTranslationInput, kShapeBSizeInput);
  collision::ContactPointT<GeometryDual> points[collision::kMaxPairContacts];
  const int count = collision::collide(shape_a, shape_b, model.solver.contact_margin, points);

  ContactGeometryJacobian jacobian;
  for (int i = 0; i < count; ++i) {
    const collision::ContactPointT<GeometryDual>& point = points[i];
    if (point.feature != contact.feature) continue;
    for (int j = 0; j < kContactGeometryInputs; ++j) {
      const auto column = static_cast<std::size_t>(j);
      for (int k = 0; k < 3; ++k) {
        jacobian.position[k][j] = point.position[k].derivative[column];
        jacobian.normal[k][j] = point.normal[k].derivative[column];
      }
      jacobian.gap[j] = point.gap.derivative[column];
    }
    jacobian.found = true;
    break;
  }
  return jacobian;
}

}  // namespace diffphys::adjoint
