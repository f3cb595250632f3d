// adjoint/contact_geometry.cpp — owns the dual-number posing of a contact's two shapes and
// the read-out of the contact's derivatives; conventions in contact_geometry.hpp.
//
// Each shape is posed as collision::pose_shape poses it, with its body's pose replaced by
// (p + δp, exp(δθ) ⊗ q) at δ = 0 with δ seeded as the dual directions, and its sizes
// seeded likewise. The values of the dual pose are then set to pose_shape's double values
// bit for bit, so the narrow phase starts from exactly the numbers the forward pass used
// and takes the same decisions (later divisions in dual arithmetic may still round
// differently in the last bit: only an exact tie can notice).
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
  Vec3T<GeometryDual> translation, rotation;
  for (int k = 0; k < 3; ++k) {
    translation[k] = GeometryDual::variable(0.0, first_pose_input + k);
    rotation[k] = GeometryDual::variable(0.0, first_pose_input + 3 + k);
  }
  const Vec3T<GeometryDual> body_position = Vec3T<GeometryDual>(state.position[body]) + translation;
  const QuatT<GeometryDual> body_orientation = QuatT<GeometryDual>::from_rotation_vector(rotation) *
                                               QuatT<GeometryDual>(state.orientation[body]);

  collision::PosedShapeT<GeometryDual> posed;
  posed.type = shape.type;
  posed.orientation =
      (body_orientation * QuatT<GeometryDual>(shape.local_orientation)).normalized();
  posed.rotation = posed.orientation.to_matrix();
  posed.position =
      body_position + body_orientation.rotate(Vec3T<GeometryDual>(shape.local_position));
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

  // The forward pass's values, bit for bit.
  const collision::PosedShape forward = collision::pose_shape(model, params, state, shape_index);
  set_values(posed.position, forward.position);
  set_value(posed.orientation.w, forward.orientation.w);
  set_value(posed.orientation.x, forward.orientation.x);
  set_value(posed.orientation.y, forward.orientation.y);
  set_value(posed.orientation.z, forward.orientation.z);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) set_value(posed.rotation(i, j), forward.rotation(i, j));
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
