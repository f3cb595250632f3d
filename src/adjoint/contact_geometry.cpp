// adjoint/contact_geometry.cpp — owns the dual-number posing of a contact's two shapes and
// the read-out of the contact's derivatives, and the closed forms that replace them for a
// sphere against a sphere, a plane or a box (those of a box's face contact and a capsule's
// end on a plane are in contact_tangents.cpp); conventions in contact_geometry.hpp.
//
// Each shape is posed with pose_shape's double values, bit for bit, and the derivatives of
// that pose with respect to its body's (p + δp, exp(δθ) ⊗ q) at δ = 0, written in closed
// form, as the dual directions; its sizes are seeded likewise. The narrow phase so starts
// from exactly the numbers the forward pass used and takes the same decisions (later
// divisions in dual arithmetic may still round differently in the last bit: only an exact
// tie can notice).
#include "adjoint/contact_geometry.hpp"

#include <algorithm>
#include <cstddef>

#include "adjoint/contact_tangents.hpp"
#include "collision/box_features.hpp"
#include "collision/contact_kernels.hpp"
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
    case ShapeType::Ellipsoid:
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

// ---------------------------------------------------------------------------------------
// Closed forms for the pairs of a sphere with a sphere, a plane or a box (a pile's contacts).
// They propagate one input direction at a time through the same formulas as the narrow
// phase (collision/narrow_phase.cpp: sphere_sphere, sphere_plane, sphere_box), in plain
// doubles: what the dual numbers would compute, without posing 2 × 19 dual numbers of 18
// directions per contact. Cases they do not cover (a sphere centre inside a box, coincident
// centres, another feature) return false and the dual narrow phase runs instead.

// A shape's pose tangent along one input: δc (its position), ω (δR = [ω]× R), δsize.
struct ShapeTangent {
  Vec3 position, spin, size;
};
// The contact's tangent along that input.
struct ContactTangent {
  Vec3 position, normal;
  double gap = 0.0;
};

// The tangent of shape `which` (0: the contact's shape a, 1: b) along input j.
ShapeTangent shape_tangent(int which, const Vec3& lever, int input) {
  ShapeTangent tangent;
  const int pose_first = which == 0 ? kBodyATranslationInput : kBodyBTranslationInput;
  const int size_first = which == 0 ? kShapeASizeInput : kShapeBSizeInput;
  if (input >= pose_first && input < pose_first + 3) {
    tangent.position[input - pose_first] = 1.0;
  } else if (input >= pose_first + 3 && input < pose_first + 6) {
    tangent.spin[input - pose_first - 3] = 1.0;
    tangent.position = cross(tangent.spin, lever);  // ∂x/∂δθ_j = e_j × (R_b l)
  } else if (input >= size_first && input < size_first + 3) {
    tangent.size[input - size_first] = 1.0;
  }
  return tangent;
}

// sphere_sphere (narrow_phase.cpp) for centres at distance > kTinyLength.
struct SphereSphereGeometry {
  Vec3 normal;
  double distance = 0.0;
  const collision::PosedShape *a = nullptr, *b = nullptr;
  ContactTangent tangent(const ShapeTangent& ta, const ShapeTangent& tb) const {
    const double ra = a->size.x, rb = b->size.x;
    const Vec3 offset_tangent = ta.position - tb.position;
    const double distance_tangent = dot(normal, offset_tangent);
    ContactTangent out;
    out.normal = (offset_tangent - normal * distance_tangent) / distance;
    out.gap = distance_tangent - ta.size.x - tb.size.x;
    // position = ½ (c_a − n r_a + c_b + n r_b)
    out.position = (ta.position - out.normal * ra - normal * ta.size.x + tb.position + out.normal * rb +
                    normal * tb.size.x) * 0.5;
    return out;
  }
};

// sphere_plane (narrow_phase.cpp): n = the plane's z axis, h = n·(c − o).
struct SpherePlaneGeometry {
  Vec3 plane_normal;
  double height = 0.0;
  const collision::PosedShape *sphere = nullptr, *plane = nullptr;
  ContactTangent tangent(const ShapeTangent& ts, const ShapeTangent& tp) const {
    const double radius = sphere->size.x;
    const Vec3 normal_tangent = cross(tp.spin, plane_normal);
    const double height_tangent = dot(normal_tangent, sphere->position - plane->position) +
                                  dot(plane_normal, ts.position - tp.position);
    ContactTangent out;
    out.normal = normal_tangent;
    out.gap = height_tangent - ts.size.x;
    // position = ½ (c − n r + c − n h)
    out.position = (ts.position * 2.0 - normal_tangent * (radius + height) - plane_normal * (ts.size.x + height_tangent)) * 0.5;
    return out;
  }
};

// sphere_box (narrow_phase.cpp) for a centre outside the box: the clamped closest point.
struct SphereBoxGeometry {
  Vec3 center_local, on_box, normal_local, normal;
  double distance = 0.0;
  const collision::PosedShape *sphere = nullptr, *box = nullptr;
  ContactTangent tangent(const ShapeTangent& ts, const ShapeTangent& tb) const {
    const Mat3& rotation = box->rotation;
    const double radius = sphere->size.x;
    // c_local = Rᵀ (c − o), δR = [ω]× R.
    const Vec3 center_tangent =
        rotation.transpose_times(ts.position - tb.position - cross(tb.spin, sphere->position - box->position));
    Vec3 on_box_tangent;
    for (int k = 0; k < 3; ++k) {  // std::clamp(c, −h, h)'s branches
      const double half = box->size[k];
      on_box_tangent[k] = center_local[k] < -half ? -tb.size[k] : (half < center_local[k] ? tb.size[k] : center_tangent[k]);
    }
    const Vec3 offset_tangent = center_tangent - on_box_tangent;
    const double distance_tangent = dot(normal_local, offset_tangent);
    const Vec3 normal_local_tangent = (offset_tangent - normal_local * distance_tangent) / distance;
    ContactTangent out;
    out.gap = distance_tangent - ts.size.x;
    out.normal = cross(tb.spin, normal) + rotation * normal_local_tangent;
    const Vec3 on_box_world = rotation * on_box;
    // position = ½ (c − n r + o + R p_box)
    out.position = (ts.position - out.normal * radius - normal * ts.size.x + tb.position + cross(tb.spin, on_box_world) +
                    rotation * on_box_tangent) * 0.5;
    return out;
  }
};

// Fills the Jacobian from a geometry's tangents. sphere_is_a: the sphere is the contact's
// shape a; otherwise collide() swapped the pair and negated the normal.
template <typename Geometry>
void fill_from_tangents(const Geometry& geometry, bool sphere_is_a, const Vec3& lever_a, const Vec3& lever_b,
                        ContactGeometryJacobian& jacobian) {
  const double normal_sign = sphere_is_a ? 1.0 : -1.0;
  for (int j = 0; j < kContactGeometryInputs; ++j) {
    const ShapeTangent ta = shape_tangent(0, lever_a, j), tb = shape_tangent(1, lever_b, j);
    const ContactTangent t = sphere_is_a ? geometry.tangent(ta, tb) : geometry.tangent(tb, ta);
    for (int k = 0; k < 3; ++k) {
      jacobian.position[k][j] = t.position[k];
      jacobian.normal[k][j] = normal_sign * t.normal[k];
    }
    jacobian.gap[j] = t.gap;
  }
  jacobian.found = true;
}

// The distance within which the forward pass searched the contact's pair: the pair's
// speculative reach when it had one (Contact::margin), else the solver's contact margin (a
// Contact made by hand has margin 0).
double search_margin(const SolverSettings& solver, const Contact& contact) {
  return std::max(solver.contact_margin, contact.margin);
}

// The closed forms above; false when they do not apply (the caller runs the dual narrow phase).
bool sphere_contact_geometry(const Model& model, const Params& params, const State& state, const Contact& contact,
                             ContactGeometryJacobian& jacobian) {
  const Shape& shape_a = model.shapes[static_cast<std::size_t>(contact.shape_a)];
  const Shape& shape_b = model.shapes[static_cast<std::size_t>(contact.shape_b)];
  const bool sphere_is_a = shape_a.type == ShapeType::Sphere;
  if (!sphere_is_a && shape_b.type != ShapeType::Sphere) return false;
  const ShapeType other_type = sphere_is_a ? shape_b.type : shape_a.type;
  if (other_type != ShapeType::Sphere && other_type != ShapeType::Plane && other_type != ShapeType::Box) return false;
  const collision::PosedShape posed_a = collision::pose_shape(model, params, state, contact.shape_a);
  const collision::PosedShape posed_b = collision::pose_shape(model, params, state, contact.shape_b);
  const Vec3 lever_a = state.orientation[static_cast<std::size_t>(shape_a.body)].rotate(shape_a.local_position);
  const Vec3 lever_b = state.orientation[static_cast<std::size_t>(shape_b.body)].rotate(shape_b.local_position);
  const collision::PosedShape& sphere = sphere_is_a ? posed_a : posed_b;
  const collision::PosedShape& other = sphere_is_a ? posed_b : posed_a;
  const double margin = search_margin(model.solver, contact);
  using collision::detail::kTinyLength;

  if (other_type == ShapeType::Sphere) {  // both spheres: never swapped
    SphereSphereGeometry geometry;
    geometry.a = &posed_a;
    geometry.b = &posed_b;
    const Vec3 offset = posed_a.position - posed_b.position;
    geometry.distance = norm(offset);
    if (!(geometry.distance > kTinyLength) || contact.feature != 0) return false;
    if (geometry.distance - posed_a.size.x - posed_b.size.x >= margin) return false;
    geometry.normal = offset / geometry.distance;
    fill_from_tangents(geometry, true, lever_a, lever_b, jacobian);
    return true;
  }
  if (other_type == ShapeType::Plane) {
    SpherePlaneGeometry geometry;
    geometry.sphere = &sphere;
    geometry.plane = &other;
    geometry.plane_normal = other.rotation.col(2);
    geometry.height = dot(geometry.plane_normal, sphere.position - other.position);
    if (contact.feature != 0 || geometry.height - sphere.size.x >= margin) return false;
    fill_from_tangents(geometry, sphere_is_a, lever_a, lever_b, jacobian);
    return true;
  }
  SphereBoxGeometry geometry;
  geometry.sphere = &sphere;
  geometry.box = &other;
  geometry.center_local = other.rotation.transpose_times(sphere.position - other.position);
  for (int k = 0; k < 3; ++k) geometry.on_box[k] = std::clamp(geometry.center_local[k], -other.size[k], other.size[k]);
  const Vec3 offset = geometry.center_local - geometry.on_box;
  geometry.distance = norm(offset);
  if (!(geometry.distance > kTinyLength)) return false;  // centre inside: the dual path
  if (geometry.distance - sphere.size.x >= margin) return false;
  // box_region(center, half, 0): the feature the forward pass recorded.
  int region = 0, weight = 1;
  for (int k = 0; k < 3; ++k) {
    const double half = other.size[k];
    const int status = geometry.center_local[k] > half ? 1 : (geometry.center_local[k] < -half ? -1 : 0);
    region += (status + 1) * weight;
    weight *= 3;
  }
  if (region != contact.feature) return false;
  geometry.normal_local = offset / geometry.distance;
  geometry.normal = other.rotation * geometry.normal_local;
  fill_from_tangents(geometry, sphere_is_a, lever_a, lever_b, jacobian);
  return true;
}

// The derivatives of a dual contact point.
void fill_from_point(const collision::ContactPointT<GeometryDual>& point, ContactGeometryJacobian& jacobian) {
  for (int j = 0; j < kContactGeometryInputs; ++j) {
    const auto column = static_cast<std::size_t>(j);
    for (int k = 0; k < 3; ++k) {
      jacobian.position[k][j] = point.position[k].derivative[column];
      jacobian.normal[k][j] = point.normal[k].derivative[column];
    }
    jacobian.gap[j] = point.gap.derivative[column];
  }
  jacobian.found = true;
}

// The dual narrow phase of the posed shapes a and b, searched within `margin`: the Jacobians
// of every point it reports, with their features; returns the count.
int pair_geometry_jacobians_dual(const collision::PosedShapeT<GeometryDual>& shape_a,
                                 const collision::PosedShapeT<GeometryDual>& shape_b, const SolverSettings& solver,
                                 double margin, int features[collision::kMaxPairContacts],
                                 ContactGeometryJacobian jacobians[collision::kMaxPairContacts]) {
  collision::ContactPointT<GeometryDual> points[collision::kMaxPairContacts];
  const int count = collision::collide(shape_a, shape_b, margin, points, collision::pair_contact_limit(solver));
  for (int i = 0; i < count; ++i) {
    fill_from_point(points[i], jacobians[i]);
    features[i] = points[i].feature;
  }
  return count;
}

// A box–box or box–plane contact straight from its feature (collision/box_features.hpp),
// without the narrow phase's search; false for the pairs and features it does not cover.
bool box_feature_geometry(const collision::PosedShapeT<GeometryDual>& shape_a,
                          const collision::PosedShapeT<GeometryDual>& shape_b, int feature,
                          ContactGeometryJacobian& jacobian) {
  collision::ContactPointT<GeometryDual> point;
  if (!collision::box_contact_from_feature(shape_a, shape_b, feature, point)) return false;
  fill_from_point(point, jacobian);
  return true;
}

}  // namespace

ContactShapeFrame contact_shape_frame(const Model& model, const Params& params, const State& state, int shape_index,
                                      bool is_shape_a) {
  const collision::PosedShape posed = collision::pose_shape(model, params, state, shape_index);
  ContactShapeFrame frame;
  frame.type = posed.type;
  frame.center = posed.position;
  for (int k = 0; k < 3; ++k) frame.axis[k] = posed.rotation.col(k);
  frame.half = posed.size;
  frame.body_origin = state.position[static_cast<std::size_t>(model.shapes[static_cast<std::size_t>(shape_index)].body)];
  frame.pose_first = is_shape_a ? kBodyATranslationInput : kBodyBTranslationInput;
  frame.size_first = is_shape_a ? kShapeASizeInput : kShapeBSizeInput;
  return frame;
}

ContactGeometryJacobian contact_geometry_jacobian(const Model& model, const Params& params,
                                                  const State& state, const Contact& contact) {
  ContactGeometryJacobian jacobian;
  if (sphere_contact_geometry(model, params, state, contact, jacobian)) return jacobian;
  if (closed_form_contact_jacobian(contact, contact_shape_frame(model, params, state, contact.shape_a, true),
                                contact_shape_frame(model, params, state, contact.shape_b, false), jacobian))
    return jacobian;
  const collision::PosedShapeT<GeometryDual> shape_a = pose_shape_with_tangents(
      model, params, state, contact.shape_a, kBodyATranslationInput, kShapeASizeInput);
  const collision::PosedShapeT<GeometryDual> shape_b = pose_shape_with_tangents(
      model, params, state, contact.shape_b, kBodyBTranslationInput, kShapeBSizeInput);
  if (box_feature_geometry(shape_a, shape_b, contact.feature, jacobian)) return jacobian;
  int features[collision::kMaxPairContacts];
  ContactGeometryJacobian jacobians[collision::kMaxPairContacts];
  const int count = pair_geometry_jacobians_dual(shape_a, shape_b, model.solver, search_margin(model.solver, contact),
                                                 features, jacobians);
  for (int i = 0; i < count; ++i)
    if (features[i] == contact.feature) return jacobians[i];
  return {};
}

ContactGeometryJacobian contact_geometry_jacobian_dual(const Model& model, const Params& params,
                                                       const State& state, const Contact& contact) {
  int features[collision::kMaxPairContacts];
  ContactGeometryJacobian jacobians[collision::kMaxPairContacts];
  const int count = pair_geometry_jacobians_dual(
      pose_shape_with_tangents(model, params, state, contact.shape_a, kBodyATranslationInput, kShapeASizeInput),
      pose_shape_with_tangents(model, params, state, contact.shape_b, kBodyBTranslationInput, kShapeBSizeInput),
      model.solver, search_margin(model.solver, contact), features, jacobians);
  for (int i = 0; i < count; ++i)
    if (features[i] == contact.feature) return jacobians[i];
  return {};
}

const ContactGeometryJacobian& ContactGeometryAtState::jacobian(const Contact& contact) {
  single_ = {};
  if (sphere_contact_geometry(model_, params_, state_, contact, single_)) return single_;
  if (contact.shape_a != frames_shape_a_ || contact.shape_b != frames_shape_b_) {
    frames_shape_a_ = contact.shape_a;
    frames_shape_b_ = contact.shape_b;
    frame_a_ = contact_shape_frame(model_, params_, state_, contact.shape_a, true);
    frame_b_ = contact_shape_frame(model_, params_, state_, contact.shape_b, false);
  }
  if (closed_form_contact_jacobian(contact, frame_a_, frame_b_, single_)) return single_;
  if (contact.shape_a != shape_a_ || contact.shape_b != shape_b_) {
    shape_a_ = contact.shape_a;
    shape_b_ = contact.shape_b;
    posed_a_ = pose_shape_with_tangents(model_, params_, state_, shape_a_, kBodyATranslationInput, kShapeASizeInput);
    posed_b_ = pose_shape_with_tangents(model_, params_, state_, shape_b_, kBodyBTranslationInput, kShapeBSizeInput);
    count_ = -1;  // the pair's whole dual narrow phase not run yet
  }
  if (box_feature_geometry(posed_a_, posed_b_, contact.feature, single_)) return single_;
  if (count_ < 0)
    count_ = pair_geometry_jacobians_dual(posed_a_, posed_b_, model_.solver, search_margin(model_.solver, contact),
                                          features_, pair_);
  for (int i = 0; i < count_; ++i)
    if (features_[i] == contact.feature) return pair_[i];
  single_ = {};  // found = false, as contact_geometry_jacobian_dual
  return single_;
}

}  // namespace diffphys::adjoint
