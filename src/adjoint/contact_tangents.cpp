// adjoint/contact_tangents.cpp — owns closed_form_contact_jacobian (contact_tangents.hpp):
// the closed-form Jacobians of a box's face contact and of a capsule's end on a plane.
//
// Everything is a tangent along one of the 18 inputs (contact_geometry.hpp's columns),
// stored per input (Tangent3, for a point or a direction). A body-fixed
// point x of shape i moves by δx = δp_i + δθ_i × (x − p_body_i) + Σ_m s_m r_m δh_m (s its
// coordinates in half extents, r_m the box's axes); a body-fixed direction d turns by
// δθ_i × d. The feature's formulas (collision/box_features.cpp) are differentiated by hand
// from those.
#include "adjoint/contact_tangents.hpp"

#include <cmath>
#include <cstddef>

#include "collision/box_features.hpp"
#include "collision/contact_kernels.hpp"

namespace diffphys::adjoint {
namespace {

constexpr int kInputs = kContactGeometryInputs;

struct Tangent3 {
  Vec3 d[kInputs];
};

// Box vertex `vertex` in half extents (the narrow phase's box_corner of unit half extents).
Vec3 corner_coordinates(int vertex) { return collision::detail::box_corner(Vec3{1.0, 1.0, 1.0}, vertex); }

// The body-fixed point center + Σ_m s_m h_m r_m and its tangent (sizes: with_sizes).
Vec3 fixed_point(const ContactShapeFrame& shape, const Vec3& s, Tangent3& tangent, bool with_sizes = true) {
  const Vec3 x = shape.center + shape.axis[0] * (s.x * shape.half.x) + shape.axis[1] * (s.y * shape.half.y) +
                 shape.axis[2] * (s.z * shape.half.z);
  const Vec3 lever = x - shape.body_origin;
  for (int k = 0; k < 3; ++k) {
    Vec3 unit;
    unit[k] = 1.0;
    tangent.d[shape.pose_first + k] = unit;
    tangent.d[shape.pose_first + 3 + k] = cross(unit, lever);
    if (with_sizes) tangent.d[shape.size_first + k] = shape.axis[k] * s[k];
  }
  return x;
}

// The body-fixed direction sign · r_axis and its tangent.
Vec3 fixed_direction(const ContactShapeFrame& shape, int axis, double sign, Tangent3& tangent) {
  const Vec3 direction = shape.axis[axis] * sign;
  for (int k = 0; k < 3; ++k) {
    Vec3 unit;
    unit[k] = 1.0;
    tangent.d[shape.pose_first + 3 + k] = cross(unit, direction);
  }
  return direction;
}

// The contact of point x (tangent tx) with the face through c (tangent tc) of normal n
// (tangent tn): gap g = n·(x − c), position x − n g/2, normal ±n (box_features.cpp's
// face_contact).
void fill_face_contact(const Vec3& x, const Tangent3& tx, const Vec3& n, const Tangent3& tn, const Vec3& c,
                       const Tangent3& tc, double normal_sign, ContactGeometryJacobian& jacobian) {
  const double gap = dot(n, x - c);
  for (int j = 0; j < kInputs; ++j) {
    const double gap_tangent = dot(tn.d[j], x - c) + dot(n, tx.d[j] - tc.d[j]);
    const Vec3 position_tangent = tx.d[j] - tn.d[j] * (0.5 * gap) - n * (0.5 * gap_tangent);
    for (int k = 0; k < 3; ++k) {
      jacobian.position[k][j] = position_tangent[k];
      jacobian.normal[k][j] = normal_sign * tn.d[j][k];
    }
    jacobian.gap[j] = gap_tangent;
  }
  jacobian.found = true;
}

// The coordinates (in half extents) of the incident face's vertex k.
Vec3 incident_vertex_coordinates(const collision::BoxBoxFeature& id, int k) {
  double u = 0.0, v = 0.0;
  collision::incident_vertex_signs(k, u, v);
  Vec3 s;
  s[id.incident_axis] = id.incident_side;
  s[(id.incident_axis + 1) % 3] = u;
  s[(id.incident_axis + 2) % 3] = v;
  return s;
}

// box_box's face-pair features and deepest vertex.
bool box_box_face_jacobian(const ContactShapeFrame& a, const ContactShapeFrame& b, const collision::BoxBoxFeature& id,
                           ContactGeometryJacobian& jacobian) {
  using Feature = collision::BoxBoxFeature;
  const ContactShapeFrame& reference = id.reference_is_b ? b : a;
  const ContactShapeFrame& incident = id.reference_is_b ? a : b;
  Tangent3 tn, tc, tx;
  const Vec3 n = fixed_direction(reference, id.reference_axis, id.reference_side, tn);
  Vec3 face_coordinates;
  face_coordinates[id.reference_axis] = id.reference_side;
  const Vec3 c = fixed_point(reference, face_coordinates, tc);
  Vec3 x;
  if (id.kind == Feature::Kind::DeepestVertex) {
    x = fixed_point(incident, corner_coordinates(id.vertex), tx);
  } else if (id.point == Feature::FacePoint::IncidentVertex) {
    x = fixed_point(incident, incident_vertex_coordinates(id, id.vertex), tx);
  } else if (id.point == Feature::FacePoint::EdgeCrossing) {
    // x = P0 + (P1 − P0) t on the incident edge, where side plane N·(y − c_ref) = h_w holds.
    // At fixed t, x is body-fixed with coordinates s0 + (s1 − s0) t; t moves so that the
    // plane equation stays 0: δt = −δd|_t / (N·(P1 − P0)).
    const int w = id.plane < 2 ? (id.reference_axis + 1) % 3 : (id.reference_axis + 2) % 3;
    Tangent3 tplane;
    const Vec3 plane_normal = fixed_direction(reference, w, id.plane % 2 == 0 ? 1.0 : -1.0, tplane);
    const Vec3 s0 = incident_vertex_coordinates(id, id.edge);
    const Vec3 s1 = incident_vertex_coordinates(id, (id.edge + 1) % 4);
    Tangent3 unused;
    const Vec3 p0 = fixed_point(incident, s0, unused, false);
    const Vec3 p1 = fixed_point(incident, s1, unused, false);
    const double d0 = dot(plane_normal, p0 - reference.center) - reference.half[w];
    const double d1 = dot(plane_normal, p1 - reference.center) - reference.half[w];
    const double along = d0 - d1;
    if (!(std::abs(along) > 0.0)) return false;
    const double t = d0 / along;
    x = fixed_point(incident, s0 + (s1 - s0) * t, tx);
    Tangent3 tcenter;
    fixed_point(reference, Vec3{}, tcenter, false);
    const double slope = dot(plane_normal, p1 - p0);  // = −along
    const Vec3 edge = p1 - p0;
    for (int j = 0; j < kInputs; ++j) {
      double distance_tangent = dot(tplane.d[j], x - reference.center) + dot(plane_normal, tx.d[j] - tcenter.d[j]);
      if (j == reference.size_first + w) distance_tangent -= 1.0;
      tx.d[j] += edge * (-distance_tangent / slope);
    }
  } else if (id.point == Feature::FacePoint::ReferenceCorner) {
    // x = K + n λ, K the reference face's corner, λ so that m·(x − o) = 0 on the incident
    // face (normal m, centre o): δλ = −[δm·(x − o) + m·(δK + λ δn − δo)] / (m·n).
    Vec3 corner_coordinates = face_coordinates;
    corner_coordinates[(id.reference_axis + 1) % 3] = id.corner_u;
    corner_coordinates[(id.reference_axis + 2) % 3] = id.corner_v;
    Tangent3 tk, tm, to;
    const Vec3 corner = fixed_point(reference, corner_coordinates, tk);
    const Vec3 m = fixed_direction(incident, id.incident_axis, 1.0, tm);
    Vec3 incident_face_coordinates;
    incident_face_coordinates[id.incident_axis] = id.incident_side;
    const Vec3 o = fixed_point(incident, incident_face_coordinates, to);
    const double slope = dot(m, n);
    if (!(std::abs(slope) > 0.0)) return false;
    const double lambda = dot(m, o - corner) / slope;
    x = corner + n * lambda;
    for (int j = 0; j < kInputs; ++j) {
      const double lambda_tangent = -(dot(tm.d[j], x - o) + dot(m, tk.d[j] + tn.d[j] * lambda - to.d[j])) / slope;
      tx.d[j] = tk.d[j] + tn.d[j] * lambda + n * lambda_tangent;
    }
  } else {
    return false;
  }
  fill_face_contact(x, tx, n, tn, c, tc, id.reference_is_b ? 1.0 : -1.0, jacobian);
  return true;
}

}  // namespace

bool closed_form_contact_jacobian(const Contact& contact, const ContactShapeFrame& a, const ContactShapeFrame& b,
                                  ContactGeometryJacobian& jacobian) {
  if (a.type == ShapeType::Box && b.type == ShapeType::Box) {
    const collision::BoxBoxFeature id = collision::decode_box_box_feature(contact.feature);
    if (id.kind != collision::BoxBoxFeature::Kind::FacePoint && id.kind != collision::BoxBoxFeature::Kind::DeepestVertex)
      return false;
    return box_box_face_jacobian(a, b, id, jacobian);
  }
  // Against a plane (normal its z axis, from the plane towards the other shape in the
  // narrow phase's order, which puts the plane second).
  const bool plane_is_b = b.type == ShapeType::Plane;
  if (!plane_is_b && a.type != ShapeType::Plane) return false;
  const ContactShapeFrame& other = plane_is_b ? a : b;
  const ContactShapeFrame& plane = plane_is_b ? b : a;
  Tangent3 tx, tn, tc;
  const Vec3 n = fixed_direction(plane, 2, 1.0, tn);
  const Vec3 c = fixed_point(plane, Vec3{}, tc, false);
  Vec3 x;
  if (other.type == ShapeType::Box) {
    // box_plane: the box's vertex `feature`.
    if (contact.feature < 0 || contact.feature >= 8) return false;
    x = fixed_point(other, corner_coordinates(contact.feature), tx);
  } else if (other.type == ShapeType::Capsule) {
    // capsule_plane: end `feature` (0: −z, 1: +z) of the segment c ± l z (sizes: radius r,
    // half length l), and x = e − n r.
    if (contact.feature < 0 || contact.feature >= 2) return false;
    const double side = contact.feature == 0 ? -1.0 : 1.0;
    const double radius = other.half.x, half_length = other.half.y;
    const Vec3 end = other.center + other.axis[2] * (side * half_length);
    fixed_point(other, Vec3{}, tx, false);  // δp columns; δθ columns about the end:
    for (int k = 0; k < 3; ++k) {
      Vec3 unit;
      unit[k] = 1.0;
      tx.d[other.pose_first + 3 + k] = cross(unit, end - other.body_origin);
    }
    tx.d[other.size_first + 1] = other.axis[2] * side;
    tx.d[other.size_first] = -n;
    for (int j = 0; j < kInputs; ++j) tx.d[j] -= tn.d[j] * radius;
    x = end - n * radius;
  } else {
    return false;
  }
  fill_face_contact(x, tx, n, tn, c, tc, plane_is_b ? 1.0 : -1.0, jacobian);
  return true;
}

}  // namespace diffphys::adjoint
