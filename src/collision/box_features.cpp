// collision/box_features.cpp — owns box_contact_from_feature (box_features.hpp): a box–box or
// box–plane contact point rebuilt from the feature id narrow_phase.cpp gave it.
//
// The feature ids decoded here are written by narrow_phase.cpp's box_box and box_plane
// (a change of numbering there must be made here too; tests/box_features_test.cpp compares
// the two on every feature kind):
//   box_plane:  the box vertex, 0..7.
//   box_box:    40·face_pair + point, face_pair = 6·(6·[reference is b] + face_id(reference))
//               + face_id(incident), face_id(axis, side) = 2·axis + [side < 0]; point 0..3 an
//               incident-face vertex, 4 + 4·edge + plane an incident edge crossing a side
//               plane of the reference face, 20 + 2·u_plane + (v_plane − 2) a reference
//               corner (two side planes), 24..39 parallel side planes (not covered);
//               2880 + 12·edge_a + edge_b two edges' closest points;
//               3024 + 8·(face_pair / 6) + vertex the incident box's deepest vertex;
//               3120 + vertex (of a) and 3128 + vertex (of b): a vertex and the other box.
// Every formula below is the one box_box applies to that feature, written without the
// decisions that chose it; decisions still left (a segment's clamping, a vertex clamped into
// the other box) are taken on the values, as the narrow phase takes them.
#include "collision/box_features.hpp"

#include "collision/contact_kernels.hpp"
#include "math/dual.hpp"

namespace diffphys::collision {
namespace {

using namespace detail;

// First id of each range of box_box's features (face pairs from 0: 40 ids for each of 72).
constexpr int kEdgeEdgeFirst = 2880;
constexpr int kDeepestVertexFirst = 3024;
constexpr int kVertexOfAFirst = 3120;
constexpr int kVertexOfBFirst = 3128;
constexpr int kFeaturesEnd = 3136;

// Face id (narrow_phase.cpp's face_id) → axis and side.
void decode_face(int id, int& axis, double& side) {
  axis = id / 2;
  side = (id % 2) != 0 ? -1.0 : 1.0;
}

// The reference face of a face-pair feature, as box_box computes it.
template <typename T>
struct ReferenceFace {
  Vec3T<T> normal, center;
};
template <typename T>
ReferenceFace<T> reference_face(const BoxFrame<T>& reference, int axis, double side) {
  const Vec3T<T> normal = reference.axis[axis] * side;
  return {normal, reference.center + normal * reference.half[axis]};
}

// box_box's make_contact: a point of the incident box and its gap to the reference face.
template <typename T>
ContactPointT<T> face_contact(const ReferenceFace<T>& face, bool reference_is_b, const Vec3T<T>& on_incident,
                              int feature) {
  const T gap = dot(face.normal, on_incident - face.center);
  const Vec3T<T> on_reference = on_incident - face.normal * gap;
  const Vec3T<T> contact_normal = reference_is_b ? face.normal : -face.normal;
  return {(on_incident + on_reference) * 0.5, contact_normal, gap, feature};
}

// A face-pair feature of box_box.
template <typename T>
bool face_pair_contact(const BoxFrame<T>& a, const BoxFrame<T>& b, const BoxBoxFeature& id, int feature,
                       ContactPointT<T>& point) {
  const BoxFrame<T>& reference = id.reference_is_b ? b : a;
  const BoxFrame<T>& incident = id.reference_is_b ? a : b;
  const ReferenceFace<T> face = reference_face(reference, id.reference_axis, id.reference_side);

  // The incident face: centre and half-edge vectors, vertex k as polygon[k] of box_box.
  const Vec3T<T> incident_center =
      incident.center + incident.axis[id.incident_axis] * (id.incident_side * incident.half[id.incident_axis]);
  const int incident_u = (id.incident_axis + 1) % 3;
  const int incident_v = (id.incident_axis + 2) % 3;
  const Vec3T<T> half_u = incident.axis[incident_u] * incident.half[incident_u];
  const Vec3T<T> half_v = incident.axis[incident_v] * incident.half[incident_v];
  const auto incident_vertex = [&](int k) {
    double u = 0.0, v = 0.0;
    incident_vertex_signs(k, u, v);
    return incident_center + half_u * u + half_v * v;
  };
  const int reference_u = (id.reference_axis + 1) % 3;
  const int reference_v = (id.reference_axis + 2) % 3;

  Vec3T<T> on_incident;
  switch (id.point) {
    case BoxBoxFeature::FacePoint::IncidentVertex:
      on_incident = incident_vertex(id.vertex);
      break;
    case BoxBoxFeature::FacePoint::EdgeCrossing: {
      // As clip_polygon computes a crossing (the line is the same whichever piece of the
      // edge was clipped). Side plane: dot(normal, x) ≤ offset inside.
      const int axis = id.plane < 2 ? reference_u : reference_v;
      const Vec3T<T> plane_normal = reference.axis[axis] * (id.plane % 2 == 0 ? 1.0 : -1.0);
      const T plane_offset = dot(plane_normal, face.center) + reference.half[axis];
      const Vec3T<T> from = incident_vertex(id.edge);
      const Vec3T<T> to = incident_vertex((id.edge + 1) % 4);
      const T from_distance = dot(plane_normal, from) - plane_offset;
      const T to_distance = dot(plane_normal, to) - plane_offset;
      const T along = from_distance - to_distance;
      if (!(absolute(value_of(along)) > 0.0)) return false;  // the edge parallel to the plane
      on_incident = from + (to - from) * (from_distance / along);
      break;
    }
    case BoxBoxFeature::FacePoint::ReferenceCorner: {
      // The reference face's corner moved along the reference normal onto the incident
      // face's plane.
      const Vec3T<T> corner = face.center + reference.axis[reference_u] * (id.corner_u * reference.half[reference_u]) +
                              reference.axis[reference_v] * (id.corner_v * reference.half[reference_v]);
      const Vec3T<T>& incident_normal = incident.axis[id.incident_axis];
      const T slope = dot(incident_normal, face.normal);
      if (!(absolute(value_of(slope)) > 0.0)) return false;
      on_incident = corner + face.normal * (dot(incident_normal, incident_center - corner) / slope);
      break;
    }
    case BoxBoxFeature::FacePoint::ParallelPlanes:
      return false;  // only under rounding
  }
  point = face_contact(face, id.reference_is_b, on_incident, feature);
  return true;
}

// The contact of a point of box a and a point of box b on disjoint boxes (box_box's
// closest_points_of_disjoint_boxes): normal along their difference, gap their distance.
template <typename T>
bool closest_pair_contact(const Vec3T<T>& on_a, const Vec3T<T>& on_b, int feature, ContactPointT<T>& point) {
  const T distance = norm(on_a - on_b);
  if (!(value_of(distance) > kTinyLength)) return false;
  point = {(on_a + on_b) * 0.5, (on_a - on_b) / distance, distance, feature};
  return true;
}

// Feature 2880 + 12·edge_a + edge_b where the closest points lie within both edges: box_box's
// edge–edge contact, or the disjoint boxes' closest pair on two edges.
template <typename T>
bool edge_edge_contact(const BoxFrame<T>& a, const BoxFrame<T>& b, const BoxBoxFeature& id, int feature,
                       ContactPointT<T>& point) {
  Vec3T<T> a_start, a_end, b_start, b_end;
  box_edge(a, id.edge_a, a_start, a_end);
  box_edge(b, id.edge_b, b_start, b_end);
  const SegmentClosestPoints<T> closest = closest_points_of_segments(a_start, a_end, b_start, b_end);
  const Vec3T<T> axis_cross = cross(a.axis[id.edge_a / 4], b.axis[id.edge_b / 4]);
  const T length = norm(axis_cross);
  if (!(value_of(length) >= kParallelSine)) return false;
  const Vec3T<T> axis = axis_cross / length;
  const Vec3T<T> offset = a.center - b.center;
  const Vec3T<T> normal = dot(axis, offset) < 0.0 ? -axis : axis;
  const bool within_both_edges = closest.s > 0.0 && closest.s < 1.0 && closest.t > 0.0 && closest.t < 1.0;
  // Clamped to an edge's end, the point is box_box's penetrating edge–edge contact (the gap
  // the separation along the axis) or, at a rounding tie with a vertex, the disjoint boxes'
  // closest pair (the gap their distance); the feature does not say which: not covered.
  if (!within_both_edges) return false;
  // The segment between the lines' closest points runs along the normal: its length along
  // it is box_box's separation |offset·n| − r_a − r_b and, apart, the pair's distance.
  point = {(closest.on_first + closest.on_second) * 0.5, normal, dot(closest.on_first - closest.on_second, normal),
           feature};
  return true;
}

template <typename T>
bool box_box_contact(const PosedShapeT<T>& shape_a, const PosedShapeT<T>& shape_b, int feature,
                     ContactPointT<T>& point) {
  const BoxBoxFeature id = decode_box_box_feature(feature);
  const BoxFrame<T> a = box_frame(shape_a);
  const BoxFrame<T> b = box_frame(shape_b);
  switch (id.kind) {
    case BoxBoxFeature::Kind::FacePoint:
      return face_pair_contact(a, b, id, feature, point);
    case BoxBoxFeature::Kind::EdgeEdge:
      return edge_edge_contact(a, b, id, feature, point);
    case BoxBoxFeature::Kind::DeepestVertex: {
      const ReferenceFace<T> face = reference_face(id.reference_is_b ? b : a, id.reference_axis, id.reference_side);
      point = face_contact(face, id.reference_is_b, box_corner(id.reference_is_b ? a : b, id.vertex), feature);
      return true;
    }
    case BoxBoxFeature::Kind::VertexOfA:
    case BoxBoxFeature::Kind::VertexOfB: {
      // A vertex of one box and its closest point in the other (clamped in its frame).
      const bool vertex_of_a = id.kind == BoxBoxFeature::Kind::VertexOfA;
      const BoxFrame<T>& vertex_box = vertex_of_a ? a : b;
      const BoxFrame<T>& other = vertex_of_a ? b : a;
      const Vec3T<T> corner = box_corner(vertex_box, id.vertex);
      Vec3T<T> inside = other.center;
      for (int k = 0; k < 3; ++k)
        inside += other.axis[k] * std::clamp(dot(other.axis[k], corner - other.center), -other.half[k], other.half[k]);
      return vertex_of_a ? closest_pair_contact(corner, inside, feature, point)
                         : closest_pair_contact(inside, corner, feature, point);
    }
    case BoxBoxFeature::Kind::Unknown:
      return false;
  }
  return false;
}

// box_plane's contact of vertex `feature`.
template <typename T>
bool box_plane_contact(const PosedShapeT<T>& box, const PosedShapeT<T>& plane, int feature, ContactPointT<T>& point) {
  if (feature < 0 || feature >= 8) return false;
  const Vec3T<T> plane_normal = plane.rotation.col(2);
  const Vec3T<T> corner = to_world(box, box_corner(box.size, feature));
  const T height = dot(plane_normal, corner - plane.position);
  point = {corner - plane_normal * (0.5 * height), plane_normal, height, feature};
  return true;
}

// a first, in the narrow phase's canonical order (box before plane).
template <typename T>
bool ordered_contact(const PosedShapeT<T>& a, const PosedShapeT<T>& b, int feature, ContactPointT<T>& point) {
  if (a.type != ShapeType::Box) return false;
  if (b.type == ShapeType::Box) return box_box_contact(a, b, feature, point);
  if (b.type == ShapeType::Plane) return box_plane_contact(a, b, feature, point);
  return false;
}

}  // namespace

BoxBoxFeature decode_box_box_feature(int feature) {
  BoxBoxFeature id;
  if (feature < 0 || feature >= kFeaturesEnd) return id;
  if (feature < kEdgeEdgeFirst) {
    const int face_pair = feature / 40;
    const int point = feature % 40;
    id.kind = BoxBoxFeature::Kind::FacePoint;
    id.reference_is_b = face_pair / 6 >= 6;
    decode_face((face_pair / 6) % 6, id.reference_axis, id.reference_side);
    decode_face(face_pair % 6, id.incident_axis, id.incident_side);
    if (point < 4) {
      id.point = BoxBoxFeature::FacePoint::IncidentVertex;
      id.vertex = point;
    } else if (point < 20) {
      id.point = BoxBoxFeature::FacePoint::EdgeCrossing;
      id.edge = (point - 4) / 4;
      id.plane = (point - 4) % 4;
    } else if (point < 24) {
      // 20 + 2·u_plane + (v_plane − 2): u_plane 0 (+u) or 1 (−u), v_plane 2 (+v) or 3 (−v).
      id.point = BoxBoxFeature::FacePoint::ReferenceCorner;
      id.corner_u = (point - 20) / 2 == 0 ? 1.0 : -1.0;
      id.corner_v = (point - 20) % 2 == 0 ? 1.0 : -1.0;
    } else {
      id.point = BoxBoxFeature::FacePoint::ParallelPlanes;
    }
  } else if (feature < kDeepestVertexFirst) {
    id.kind = BoxBoxFeature::Kind::EdgeEdge;
    id.edge_a = (feature - kEdgeEdgeFirst) / 12;
    id.edge_b = (feature - kEdgeEdgeFirst) % 12;
  } else if (feature < kVertexOfAFirst) {
    const int reference_face_id = (feature - kDeepestVertexFirst) / 8;  // face_pair / 6
    id.kind = BoxBoxFeature::Kind::DeepestVertex;
    id.reference_is_b = reference_face_id >= 6;
    decode_face(reference_face_id % 6, id.reference_axis, id.reference_side);
    id.vertex = (feature - kDeepestVertexFirst) % 8;
  } else {
    const bool of_a = feature < kVertexOfBFirst;
    id.kind = of_a ? BoxBoxFeature::Kind::VertexOfA : BoxBoxFeature::Kind::VertexOfB;
    id.vertex = feature - (of_a ? kVertexOfAFirst : kVertexOfBFirst);
  }
  return id;
}

template <typename T>
bool box_contact_from_feature(const PosedShapeT<T>& a, const PosedShapeT<T>& b, int feature, ContactPointT<T>& point) {
  if (a.type == ShapeType::Plane && b.type == ShapeType::Box) {  // collide's swapped order
    if (!ordered_contact(b, a, feature, point)) return false;
    point.normal = -point.normal;
    return true;
  }
  return ordered_contact(a, b, feature, point);
}

template bool box_contact_from_feature<double>(const PosedShapeT<double>&, const PosedShapeT<double>&, int,
                                               ContactPointT<double>&);
template bool box_contact_from_feature<Dual<18>>(const PosedShapeT<Dual<18>>&, const PosedShapeT<Dual<18>>&, int,
                                                 ContactPointT<Dual<18>>&);

}  // namespace diffphys::collision
