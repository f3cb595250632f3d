// collision/convex_mesh_contacts.cpp — owns the contact geometry of convex meshes against every
// shape (declared in convex_mesh_contacts.hpp).
//
// A box and a mesh are both seen as a Polyhedron: a ConvexMesh topology (the box's is a unit
// cube built once) whose coordinates are multiplied per axis by `scale` (a mesh: its uniform
// scale; a box: its half extents), placed in the world. Face normals are those of the
// topology rotated into the world: exact for a uniform scale and for the cube's axis-aligned
// faces.
//
// Every pair works in two phases, so that the dual-number evaluation of the backward pass
// takes exactly the forward pass's decisions (contact set held fixed, DESIGN.md §1):
//  1. decide on plain doubles (the values of the pose and sizes) which features touch —
//     the separating-axis queries over all faces and edges, the closest feature of a hull
//     to a point, the vertices under a plane;
//  2. compute the contact's position, normal and gap from those features in T only.
// Both phases allocate nothing: polygons are clipped in fixed-size stack buffers (a face's
// clipping polygon has at most ConvexMesh::kMaxFaceVertices vertices; a larger face clips
// with the subset of its vertices that diffphys/convex_mesh.hpp describes).
//
// Polyhedron–polyhedron follows Gregorius, "The Separating Axis Test between Convex
// Polyhedra" (GDC 2013): face axes of both, and the edge pairs whose arcs on the Gauss map
// cross (the faces of the Minkowski difference). A face axis gives a reference face whose
// side planes clip the incident face — the most anti-parallel of the other hull's faces
// around its deepest vertex — (the Sutherland–Hodgman step shared with box–box,
// contact_kernels.hpp), then the manifold is reduced to four points; an edge axis gives one
// point. Tie rules and the face bias are those of box–box, so a mesh cube
// against a box gives the box–box contacts.
#include "collision/convex_mesh_contacts.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace diffphys::collision::detail {
namespace {

// The unit cube [-1, 1]³ as a hull: the topology of a box seen as a polyhedron. Built once
// at start-up, so that no step allocates it.
ConvexMesh make_unit_cube() {
  std::array<Vec3, 8> corners;
  for (int i = 0; i < 8; ++i)
    corners[static_cast<std::size_t>(i)] = {(i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0};
  return convex_hull(corners, "unit cube");
}
const ConvexMesh kUnitCube = make_unit_cube();

// Ranges of feature ids, so that the ids of different cases never meet.
constexpr int kPointIdBits = 12;  // a clipped point's id (< 2080) in a face manifold
constexpr int kFacePairModulus = 1 << 17;
constexpr int kDeepestVertexFeature = 1 << 29;
constexpr int kEdgePairFeature = 1 << 30;
constexpr int kEdgeIdModulus = 1 << 15;
// Clipped point ids: incident vertex k → k; incident edge e × side plane p → 32 + 32e + p;
// side plane q × side plane p → 1056 + 32q + p. Side plane q is next_edge kSidePlaneEdge + q.
constexpr int kFaceLimit = ConvexMesh::kMaxFaceVertices;
constexpr int kSidePlaneEdge = kFaceLimit;

template <typename T>
struct Polyhedron {
  const ConvexMesh* topology = nullptr;
  Vec3T<T> scale;     // per axis, on the topology's coordinates
  Vec3T<T> position;  // world
  Mat3T<T> rotation;  // frame → world
  double size = 0.0;  // bounding radius (value), m: the scale of tie tolerances

  Vec3T<T> local_vertex(int i) const {
    const Vec3& v = topology->vertices[static_cast<std::size_t>(i)];
    return {scale.x * v.x, scale.y * v.y, scale.z * v.z};
  }
  Vec3T<T> vertex(int i) const { return position + rotation * local_vertex(i); }
  Vec3T<T> face_normal(int f) const { return rotation * Vec3T<T>(topology->faces[static_cast<std::size_t>(f)].normal); }
  int face_vertex(int f, int k) const {
    const ConvexMesh::Face& face = topology->faces[static_cast<std::size_t>(f)];
    return topology->face_vertices[static_cast<std::size_t>(face.first + k)];
  }
  int face_size(int f) const { return topology->faces[static_cast<std::size_t>(f)].count; }
  // The face's clipping polygon (at most kFaceLimit vertices), for the face manifold.
  int clip_vertex(int f, int k) const {
    const ConvexMesh::Face& face = topology->faces[static_cast<std::size_t>(f)];
    return topology->clip_vertices[static_cast<std::size_t>(face.clip_first + k)];
  }
  int clip_size(int f) const { return topology->faces[static_cast<std::size_t>(f)].clip_count; }
  // A point inside: the scaled centroid of the solid (frame, then world).
  Vec3T<T> local_interior_point() const {
    const Vec3& c = topology->centroid;
    return {scale.x * c.x, scale.y * c.y, scale.z * c.z};
  }
  Vec3T<T> interior_point() const { return position + rotation * local_interior_point(); }
};

template <typename T>
Polyhedron<T> polyhedron_of(const PosedShapeT<T>& shape) {
  Polyhedron<T> polyhedron;
  polyhedron.position = shape.position;
  polyhedron.rotation = shape.rotation;
  if (shape.type == ShapeType::Box) {
    polyhedron.topology = &kUnitCube;
    polyhedron.scale = shape.size;
    polyhedron.size = norm(values_of(shape.size));
  } else {
    polyhedron.topology = shape.mesh;
    polyhedron.scale = {shape.size.x, shape.size.x, shape.size.x};
    double radius = 0.0;
    for (const Vec3& v : shape.mesh->vertices) radius = std::max(radius, norm(v));
    polyhedron.size = radius * value_of(shape.size.x);
  }
  return polyhedron;
}

// The same polyhedron on the values, for the decisions of phase 1.
template <typename T>
Polyhedron<double> polyhedron_values(const Polyhedron<T>& p) {
  Polyhedron<double> values;
  values.topology = p.topology;
  values.scale = values_of(p.scale);
  values.position = values_of(p.position);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) values.rotation(i, j) = value_of(p.rotation(i, j));
  values.size = p.size;
  return values;
}

// min over the polyhedron's vertices of dot(direction, x) (world direction).
double lowest_along(const Polyhedron<double>& p, const Vec3& direction) {
  const Vec3 local = p.rotation.transpose_times(direction);
  const Vec3 scaled{local.x * p.scale.x, local.y * p.scale.y, local.z * p.scale.z};
  double lowest = kInfinity;
  for (const Vec3& v : p.topology->vertices) lowest = std::min(lowest, dot(scaled, v));
  return lowest + dot(direction, p.position);
}

// ---------------------------------------------------------------------------------------
// Separating-axis queries (phase 1, values only).

struct FaceQuery {
  int face = -1;
  double separation = -kInfinity;
};

// The face of `a` along whose normal `b` is farthest out (the largest separation).
FaceQuery query_faces(const Polyhedron<double>& a, const Polyhedron<double>& b) {
  FaceQuery best;
  for (int f = 0; f < a.topology->face_count(); ++f) {
    const Vec3 normal = a.face_normal(f);
    const double separation = lowest_along(b, normal) - dot(normal, a.vertex(a.face_vertex(f, 0)));
    if (separation > best.separation) {
      best.separation = separation;
      best.face = f;
    }
  }
  return best;
}

struct EdgeQuery {
  int edge_a = -1, edge_b = -1;
  double separation = -kInfinity;
  bool flip = false;  // the axis cross(d_a, d_b) points into a: negate it
};

// Do the arcs a–b and c–d of the Gauss map cross? (Gregorius 2013: the edges then build a
// face of the Minkowski difference.) c and d are the negated normals of the second edge.
bool is_minkowski_face(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 b_cross_a = cross(b, a);
  const Vec3 d_cross_c = cross(d, c);
  const double cba = dot(c, b_cross_a);
  const double dba = dot(d, b_cross_a);
  const double adc = dot(a, d_cross_c);
  const double bdc = dot(b, d_cross_c);
  return cba * dba < 0.0 && adc * bdc < 0.0 && cba * bdc > 0.0;
}

EdgeQuery query_edges(const Polyhedron<double>& a, const Polyhedron<double>& b) {
  EdgeQuery best;
  const Vec3 interior_a = a.interior_point();
  for (int i = 0; i < a.topology->edge_count(); ++i) {
    const ConvexMesh::Edge& edge_a = a.topology->edges[static_cast<std::size_t>(i)];
    const Vec3 normal_a0 = a.face_normal(edge_a.face[0]);
    const Vec3 normal_a1 = a.face_normal(edge_a.face[1]);
    const Vec3 start_a = a.vertex(edge_a.vertex[0]);
    const Vec3 direction_a = a.vertex(edge_a.vertex[1]) - start_a;
    for (int j = 0; j < b.topology->edge_count(); ++j) {
      const ConvexMesh::Edge& edge_b = b.topology->edges[static_cast<std::size_t>(j)];
      const Vec3 normal_b0 = b.face_normal(edge_b.face[0]);
      const Vec3 normal_b1 = b.face_normal(edge_b.face[1]);
      if (!is_minkowski_face(normal_a0, normal_a1, -normal_b0, -normal_b1)) continue;
      const Vec3 start_b = b.vertex(edge_b.vertex[0]);
      const Vec3 direction_b = b.vertex(edge_b.vertex[1]) - start_b;
      const Vec3 axis = cross(direction_a, direction_b);
      const double length = norm(axis);
      if (length < kParallelSine * norm(direction_a) * norm(direction_b)) continue;
      Vec3 unit = axis / length;
      const bool flip = dot(unit, start_a - interior_a) < 0.0;
      if (flip) unit = -unit;
      const double separation = dot(unit, start_b - start_a);
      if (separation > best.separation) {
        best = {i, j, separation, flip};
      }
    }
  }
  return best;
}

double face_area(const Polyhedron<double>& p, int f) {
  Vec3 twice_area;
  const int count = p.face_size(f);
  for (int k = 0; k < count; ++k)
    twice_area += cross(p.local_vertex(p.face_vertex(f, k)), p.local_vertex(p.face_vertex(f, (k + 1) % count)));
  return 0.5 * norm(twice_area);
}

// ---------------------------------------------------------------------------------------
// Closest feature of a hull to a point (phase 1), in the hull's scaled frame.

enum class FeatureKind { Face, Edge, Vertex };
struct ClosestFeature {
  FeatureKind kind = FeatureKind::Face;
  int index = 0;  // face, edge or vertex index
  int face = 0;   // a face next to the feature (its normal serves when the distance is 0)
  double distance_squared = kInfinity;
  bool inside = false;  // the point is inside the hull: `index` is the face of least depth
  double depth = 0.0;   // inside: signed distance to that face (≤ 0)
};

// Exact closest point of a convex polyhedron to `point` (scaled local frame): inside, the
// face of largest signed distance; outside, the closest over the polygons of the faces that
// see the point (interior projections, then their edges by Ericson §5.1.2). Ties keep the
// lower face, then the edge met first; edges end in vertices when the parameter is clamped.
ClosestFeature closest_feature(const Polyhedron<double>& p, const Vec3& point) {
  const ConvexMesh& mesh = *p.topology;
  ClosestFeature best;
  double largest = -kInfinity;
  int largest_face = 0;
  for (int f = 0; f < mesh.face_count(); ++f) {
    const Vec3& normal = mesh.faces[static_cast<std::size_t>(f)].normal;
    const double distance = dot(normal, point - p.local_vertex(p.face_vertex(f, 0)));
    if (distance > largest) {
      largest = distance;
      largest_face = f;
    }
  }
  if (largest <= 0.0) {
    best.inside = true;
    best.index = best.face = largest_face;
    best.depth = largest;
    best.distance_squared = largest * largest;
    return best;
  }
  for (int f = 0; f < mesh.face_count(); ++f) {
    const Vec3& normal = mesh.faces[static_cast<std::size_t>(f)].normal;
    const double distance = dot(normal, point - p.local_vertex(p.face_vertex(f, 0)));
    if (distance <= 0.0) continue;
    const int count = p.face_size(f);
    const Vec3 projected = point - normal * distance;
    bool within = true;
    for (int k = 0; k < count && within; ++k) {
      const Vec3 from = p.local_vertex(p.face_vertex(f, k));
      const Vec3 to = p.local_vertex(p.face_vertex(f, (k + 1) % count));
      within = dot(cross(to - from, projected - from), normal) >= 0.0;
    }
    if (within) {
      if (distance * distance < best.distance_squared) {
        best = {FeatureKind::Face, f, f, distance * distance, false, 0.0};
      }
      continue;
    }
    const ConvexMesh::Face& face = mesh.faces[static_cast<std::size_t>(f)];
    for (int k = 0; k < count; ++k) {
      const int edge_index = mesh.face_edges[static_cast<std::size_t>(face.first + k)];
      const ConvexMesh::Edge& edge = mesh.edges[static_cast<std::size_t>(edge_index)];
      const Vec3 start = p.local_vertex(edge.vertex[0]);
      const Vec3 end = p.local_vertex(edge.vertex[1]);
      const double t = closest_parameter_on_segment(start, end, point);
      const double distance_squared = squared_norm(point - (start + (end - start) * t));
      if (distance_squared < best.distance_squared) {
        if (t <= 0.0 || t >= 1.0) {
          best = {FeatureKind::Vertex, edge.vertex[t <= 0.0 ? 0 : 1], f, distance_squared, false, 0.0};
        } else {
          best = {FeatureKind::Edge, edge_index, f, distance_squared, false, 0.0};
        }
      }
    }
  }
  return best;
}

// Feature id of a closest feature (faces, then edges, then vertices).
int feature_id(const ConvexMesh& mesh, const ClosestFeature& feature) {
  switch (feature.kind) {
    case FeatureKind::Face:
      return feature.index;
    case FeatureKind::Edge:
      return mesh.face_count() + feature.index;
    case FeatureKind::Vertex:
      return mesh.face_count() + mesh.edge_count() + feature.index;
  }
  return 0;
}

// Phase 2 of a point against a hull: the closest point on `feature` to `point` (scaled local
// frame, T) and the outward direction there (unit; the face normal when the point is on or
// inside the hull). Returns the signed distance.
template <typename T>
T closest_on_feature(const Polyhedron<T>& p, const ClosestFeature& feature, const Vec3T<T>& point, Vec3T<T>& on_hull,
                     Vec3T<T>& direction) {
  const ConvexMesh& mesh = *p.topology;
  const Vec3T<T> face_normal(mesh.faces[static_cast<std::size_t>(feature.face)].normal);
  if (feature.inside || feature.kind == FeatureKind::Face) {
    const T distance = dot(face_normal, point - p.local_vertex(p.face_vertex(feature.face, 0)));
    on_hull = point - face_normal * distance;
    direction = face_normal;
    return distance;
  }
  if (feature.kind == FeatureKind::Edge) {
    const ConvexMesh::Edge& edge = mesh.edges[static_cast<std::size_t>(feature.index)];
    const Vec3T<T> start = p.local_vertex(edge.vertex[0]);
    const Vec3T<T> end = p.local_vertex(edge.vertex[1]);
    on_hull = start + (end - start) * closest_parameter_on_segment(start, end, point);
  } else {
    on_hull = p.local_vertex(feature.index);
  }
  const Vec3T<T> offset = point - on_hull;
  const T distance = norm(offset);
  direction = distance > kTinyLength ? offset / distance : face_normal;
  return distance;
}

// Liang–Barsky clip of the segment start + t (end − start) to the prism over face f of the
// hull (its side planes), scaled local frame. Decisions on the values; false when empty.
template <typename T>
bool clip_to_face_prism(const Polyhedron<T>& p, int f, const Vec3T<T>& start, const Vec3T<T>& end, T& t_low,
                        T& t_high) {
  const Vec3T<T> normal(p.topology->faces[static_cast<std::size_t>(f)].normal);
  const Vec3T<T> delta = end - start;
  t_low = T(0.0);
  t_high = T(1.0);
  const int count = p.face_size(f);
  for (int k = 0; k < count; ++k) {
    const Vec3T<T> from = p.local_vertex(p.face_vertex(f, k));
    const Vec3T<T> to = p.local_vertex(p.face_vertex(f, (k + 1) % count));
    const Vec3T<T> outward = cross(to - from, normal);  // side plane normal (unnormalised)
    const T rate = dot(outward, delta);
    const T room = dot(outward, from - start);  // inside while rate·t ≤ room
    const double scale = norm(values_of(outward)) * norm(values_of(delta));
    if (absolute(rate) <= kTinyLength * scale) {
      if (room < 0.0) return false;
      continue;
    }
    const T t = room / rate;
    if (rate > 0.0) {
      t_high = std::min(t_high, t);
    } else {
      t_low = std::max(t_low, t);
    }
  }
  return t_low <= t_high;
}

// ---------------------------------------------------------------------------------------
// Face manifold (phase 2): the incident face clipped by the reference face's side planes,
// both through their clipping polygons (at most kFaceLimit vertices each).

template <typename T>
void face_manifold(const Polyhedron<T>& reference, int reference_face, const Polyhedron<T>& incident, int incident_face,
                   bool reference_is_b, double margin, ContactWriter<T>& contacts) {
  const Vec3T<T> reference_normal = reference.face_normal(reference_face);
  const int reference_count = reference.clip_size(reference_face);
  Vec3T<T> reference_polygon[kFaceLimit];
  for (int k = 0; k < reference_count; ++k)
    reference_polygon[k] = reference.vertex(reference.clip_vertex(reference_face, k));

  ClipVertex<T> polygon[kMaxManifoldCandidates];
  ClipVertex<T> scratch[kMaxManifoldCandidates];
  int count = incident.clip_size(incident_face);
  for (int k = 0; k < count; ++k) polygon[k] = {incident.vertex(incident.clip_vertex(incident_face, k)), k, k};
  const auto point_id = [](int next_edge, int plane) {
    return next_edge < kSidePlaneEdge
               ? kFaceLimit + kFaceLimit * next_edge + plane
               : kFaceLimit + kFaceLimit * kFaceLimit + kFaceLimit * (next_edge - kSidePlaneEdge) + plane;
  };
  for (int plane = 0; plane < reference_count && count > 0; ++plane) {
    const Vec3T<T>& from = reference_polygon[plane];
    const Vec3T<T>& to = reference_polygon[(plane + 1) % reference_count];
    const Vec3T<T> side = cross(to - from, reference_normal);
    const Vec3T<T> side_normal = side / norm(side);
    count = clip_polygon(polygon, count, side_normal, dot(side_normal, from), plane, kSidePlaneEdge + plane, scratch,
                         kMaxManifoldCandidates, point_id);
    std::copy(scratch, scratch + count, polygon);
  }

  const int face_pair = static_cast<int>(
      (2 * (static_cast<std::int64_t>(reference_face) * incident.topology->face_count() + incident_face) +
       (reference_is_b ? 1 : 0)) %
      kFacePairModulus);
  const Vec3T<T> contact_normal = reference_is_b ? reference_normal : -reference_normal;
  const Vec3T<T>& reference_point = reference_polygon[0];
  const auto make_contact = [&](const Vec3T<T>& on_incident, const T& gap, int feature) {
    const Vec3T<T> on_reference = on_incident - reference_normal * gap;
    return ContactPointT<T>{(on_incident + on_reference) * 0.5, contact_normal, gap, feature};
  };
  ContactPointT<T> candidates[kMaxManifoldCandidates];
  int candidate_count = 0;
  for (int i = 0; i < count; ++i) {
    const T gap = dot(reference_normal, polygon[i].point - reference_point);
    if (gap >= margin) continue;
    candidates[candidate_count++] = make_contact(polygon[i].point, gap, (face_pair << kPointIdBits) + polygon[i].id);
  }
  if (candidate_count == 0) {
    // The clipped part is beyond the margin though the separation is not (the closest part
    // of the incident hull lies outside the reference face's prism): its deepest vertex.
    const Polyhedron<double> incident_values = polyhedron_values(incident);
    const Vec3 normal_value = values_of(reference_normal);
    const Vec3 point_value = values_of(reference_point);
    int deepest = 0;
    double deepest_gap = kInfinity;
    for (int v = 0; v < incident.topology->vertex_count(); ++v) {
      const double gap = dot(normal_value, incident_values.vertex(v) - point_value);
      if (gap < deepest_gap) {
        deepest_gap = gap;
        deepest = v;
      }
    }
    if (deepest_gap >= margin) return;
    const Vec3T<T> corner = incident.vertex(deepest);
    contacts.add(make_contact(corner, dot(reference_normal, corner - reference_point),
                              kDeepestVertexFeature + (reference_is_b ? 1 << 28 : 0) + deepest % (1 << 27)));
    return;
  }
  keep_spanning_points(candidates, candidate_count, contact_normal, contacts);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Pairs.

template <typename T>
void polyhedron_polyhedron(const PosedShapeT<T>& shape_a, const PosedShapeT<T>& shape_b, double margin,
                           ContactWriter<T>& contacts) {
  const Polyhedron<T> a = polyhedron_of(shape_a);
  const Polyhedron<T> b = polyhedron_of(shape_b);
  const Polyhedron<double> a_values = polyhedron_values(a);
  const Polyhedron<double> b_values = polyhedron_values(b);
  const double tie_tolerance = kRelativeTieTolerance * std::max(a.size, b.size);

  // Phase 1: the axis of largest separation, with box–box's preferences.
  const FaceQuery faces_a = query_faces(a_values, b_values);
  const FaceQuery faces_b = query_faces(b_values, a_values);
  bool reference_is_b;
  if (std::abs(faces_b.separation - faces_a.separation) > tie_tolerance) {
    reference_is_b = faces_b.separation > faces_a.separation;
  } else {
    reference_is_b =
        face_area(b_values, faces_b.face) > face_area(a_values, faces_a.face) * (1.0 + kRelativeTieTolerance);
  }
  const double best_face_separation = reference_is_b ? faces_b.separation : faces_a.separation;
  if (best_face_separation >= margin) return;  // a face axis separates: no edge can be closer
  const EdgeQuery edges = query_edges(a_values, b_values);
  const bool use_edge =
      edges.edge_a >= 0 &&
      edges.separation > best_face_separation + kEdgeAxisRelativeBias * std::abs(best_face_separation) + tie_tolerance;
  if (use_edge && edges.separation >= margin) return;

  // Phase 2.
  if (use_edge) {
    const ConvexMesh::Edge& edge_a = a.topology->edges[static_cast<std::size_t>(edges.edge_a)];
    const ConvexMesh::Edge& edge_b = b.topology->edges[static_cast<std::size_t>(edges.edge_b)];
    const Vec3T<T> start_a = a.vertex(edge_a.vertex[0]), end_a = a.vertex(edge_a.vertex[1]);
    const Vec3T<T> start_b = b.vertex(edge_b.vertex[0]), end_b = b.vertex(edge_b.vertex[1]);
    const Vec3T<T> axis = cross(end_a - start_a, end_b - start_b);
    const Vec3T<T> out_of_a = (edges.flip ? -axis : axis) / norm(axis);
    const SegmentClosestPoints<T> closest = closest_points_of_segments(start_a, end_a, start_b, end_b);
    contacts.add(closest.on_first, closest.on_second, -out_of_a, dot(out_of_a, start_b - start_a),
                 kEdgePairFeature + kEdgeIdModulus * (edges.edge_a % kEdgeIdModulus) + edges.edge_b % kEdgeIdModulus);
    return;
  }
  const Polyhedron<T>& reference = reference_is_b ? b : a;
  const Polyhedron<T>& incident = reference_is_b ? a : b;
  const Polyhedron<double>& reference_values = reference_is_b ? b_values : a_values;
  const Polyhedron<double>& incident_values = reference_is_b ? a_values : b_values;
  const int reference_face = reference_is_b ? faces_b.face : faces_a.face;
  const Vec3 reference_normal = reference_values.face_normal(reference_face);
  // The incident face: of the faces around the incident hull's deepest vertex along the
  // reference normal, the most anti-parallel one (for a box, simply its most anti-parallel
  // face; for a general hull, the most anti-parallel face may miss the deepest vertex).
  const ConvexMesh& incident_topology = *incident.topology;
  int deepest_vertex = 0;
  double deepest_height = kInfinity;
  for (int v = 0; v < incident_topology.vertex_count(); ++v) {
    const double height = dot(reference_normal, incident_values.vertex(v));
    if (height < deepest_height) {
      deepest_height = height;
      deepest_vertex = v;
    }
  }
  int incident_face = 0;
  double lowest_alignment = kInfinity;
  for (int f = 0; f < incident_topology.face_count(); ++f) {
    const ConvexMesh::Face& face = incident_topology.faces[static_cast<std::size_t>(f)];
    const auto polygon_begin = incident_topology.face_vertices.begin() + face.first;
    if (std::find(polygon_begin, polygon_begin + face.count, deepest_vertex) == polygon_begin + face.count) continue;
    const double alignment = dot(incident_values.face_normal(f), reference_normal);
    if (alignment < lowest_alignment) {
      lowest_alignment = alignment;
      incident_face = f;
    }
  }
  face_manifold(reference, reference_face, incident, incident_face, reference_is_b, margin, contacts);
}

// Every hull vertex below the margin (feature = vertex index), reduced to four when more; when
// more than kMaxManifoldCandidates are, the deepest of them (a finely tessellated flat base).
template <typename T>
void convex_mesh_plane(const PosedShapeT<T>& mesh, const PosedShapeT<T>& plane, double margin,
                       ContactWriter<T>& contacts) {
  const Polyhedron<T> hull = polyhedron_of(mesh);
  const Polyhedron<double> hull_values = polyhedron_values(hull);
  const Vec3T<T> plane_normal = plane.rotation.col(2);
  const Vec3 normal_value = values_of(plane_normal);
  const Vec3 origin_value = values_of(plane.position);
  int chosen[kMaxManifoldCandidates];
  double chosen_height[kMaxManifoldCandidates];
  int chosen_count = 0;
  for (int v = 0; v < hull.topology->vertex_count(); ++v) {
    const double height = dot(normal_value, hull_values.vertex(v) - origin_value);
    if (height >= margin) continue;
    if (chosen_count < kMaxManifoldCandidates) {
      chosen[chosen_count] = v;
      chosen_height[chosen_count++] = height;
      continue;
    }
    int shallowest = 0;
    for (int k = 1; k < chosen_count; ++k)
      if (chosen_height[k] > chosen_height[shallowest]) shallowest = k;
    if (height < chosen_height[shallowest]) {
      chosen[shallowest] = v;
      chosen_height[shallowest] = height;
    }
  }
  std::sort(chosen, chosen + chosen_count);
  ContactPointT<T> candidates[kMaxManifoldCandidates];
  for (int k = 0; k < chosen_count; ++k) {
    const Vec3T<T> corner = hull.vertex(chosen[k]);
    const T height = dot(plane_normal, corner - plane.position);
    candidates[k] = ContactPointT<T>{corner - plane_normal * (0.5 * height), plane_normal, height, chosen[k]};
  }
  keep_spanning_points(candidates, chosen_count, plane_normal, contacts);
}

// The closest hull feature to the centre (closest_feature); a centre inside leaves through
// the face of least depth.
template <typename T>
void sphere_convex_mesh(const PosedShapeT<T>& sphere, const PosedShapeT<T>& mesh, double margin,
                        ContactWriter<T>& contacts) {
  const Polyhedron<T> hull = polyhedron_of(mesh);
  const T radius = sphere.size.x;
  const Vec3T<T> center = mesh.rotation.transpose_times(sphere.position - mesh.position);
  const ClosestFeature feature = closest_feature(polyhedron_values(hull), values_of(center));
  const double distance_value = feature.inside ? feature.depth : std::sqrt(feature.distance_squared);
  if (distance_value - value_of(radius) >= margin) return;
  Vec3T<T> on_hull, direction;
  const T distance = closest_on_feature(hull, feature, center, on_hull, direction);
  const T gap = distance - radius;
  const Vec3T<T> contact_normal = mesh.rotation * direction;
  contacts.add(sphere.position - contact_normal * radius, mesh.position + mesh.rotation * on_hull, contact_normal, gap,
               feature_id(*hull.topology, feature));
}

// Capsule against a hull, in the hull's scaled frame, as capsule–box does it for a box:
// a separating-axis test of the segment over the hull's face normals and the edge axes
// segment × hull edge (the edges whose Gauss-map arc crosses the segment's great circle).
// Segment clear of the hull: the exact closest pair is the best of each segment end
// against the hull and the segment against each hull edge; if a face next to the closest
// hull point comes as close, the capsule rests on it (the segment's part over the face: up
// to 2 points). Segment cutting in: the axis of least penetration (face axes preferred).
template <typename T>
void capsule_convex_mesh(const PosedShapeT<T>& capsule, const PosedShapeT<T>& mesh, double margin,
                         ContactWriter<T>& contacts) {
  const Polyhedron<T> hull = polyhedron_of(mesh);
  const Polyhedron<double> hull_values = polyhedron_values(hull);
  const ConvexMesh& topology = *hull.topology;
  const T radius = capsule.size.x;
  const Segment<T> world_segment = capsule_segment(capsule);
  const Vec3T<T> start = mesh.rotation.transpose_times(world_segment.start - mesh.position);
  const Vec3T<T> end = mesh.rotation.transpose_times(world_segment.end - mesh.position);
  const Vec3 start_value = values_of(start), end_value = values_of(end);
  const Vec3 direction_value = end_value - start_value;
  const double radius_value = value_of(radius);
  const double slack = kRelativeTieTolerance * hull.size;
  const auto to_world_point = [&](const Vec3T<T>& local) { return mesh.position + mesh.rotation * local; };

  // Phase 1: separating axes (values).
  int best_face = 0;
  double best_face_separation = -kInfinity;
  for (int f = 0; f < topology.face_count(); ++f) {
    const Vec3& normal = topology.faces[static_cast<std::size_t>(f)].normal;
    const double offset = dot(normal, hull_values.local_vertex(hull_values.face_vertex(f, 0)));
    const double separation = std::min(dot(normal, start_value), dot(normal, end_value)) - offset;
    if (separation > best_face_separation) {
      best_face_separation = separation;
      best_face = f;
    }
  }
  int best_edge = -1;
  bool best_edge_flip = false;
  double best_edge_separation = -kInfinity;
  const Vec3 interior = hull_values.local_interior_point();
  for (int e = 0; e < topology.edge_count(); ++e) {
    const ConvexMesh::Edge& edge = topology.edges[static_cast<std::size_t>(e)];
    const double side0 = dot(topology.faces[static_cast<std::size_t>(edge.face[0])].normal, direction_value);
    const double side1 = dot(topology.faces[static_cast<std::size_t>(edge.face[1])].normal, direction_value);
    if (!(side0 * side1 < 0.0)) continue;
    const Vec3 edge_start = hull_values.local_vertex(edge.vertex[0]);
    const Vec3 axis = cross(direction_value, hull_values.local_vertex(edge.vertex[1]) - edge_start);
    const double length = norm(axis);
    if (length < kParallelSine * norm(direction_value) * norm(hull_values.local_vertex(edge.vertex[1]) - edge_start))
      continue;
    Vec3 unit = axis / length;
    const bool flip = dot(unit, edge_start - interior) < 0.0;
    if (flip) unit = -unit;
    const double separation = dot(unit, start_value - edge_start);
    if (separation > best_edge_separation) {
      best_edge_separation = separation;
      best_edge = e;
      best_edge_flip = flip;
    }
  }
  const double separation = std::max(best_face_separation, best_edge_separation);
  if (separation - radius_value >= margin) return;

  // Two contacts where the segment lies over face f (each end of its part inside the face's
  // prism), when within the margin.
  const auto add_face_contacts = [&](int f, const T& t_low, const T& t_high) {
    const Vec3T<T> normal(topology.faces[static_cast<std::size_t>(f)].normal);
    const T offset = dot(normal, hull.local_vertex(hull.face_vertex(f, 0)));
    const Vec3T<T> delta = end - start;
    const int end_count = value_of(t_high - t_low) * norm(values_of(delta)) > kTinyLength ? 2 : 1;
    const T parameters[2] = {t_low, t_high};
    const Vec3T<T> contact_normal = mesh.rotation * normal;
    for (int i = 0; i < end_count; ++i) {
      const Vec3T<T> on_segment = start + delta * parameters[i];
      const T height = dot(normal, on_segment) - offset;
      const T gap = height - radius;
      if (gap >= margin) continue;
      contacts.add(to_world_point(on_segment - normal * radius), to_world_point(on_segment - normal * height),
                   contact_normal, gap, (1 << 28) + 2 * f + i);
    }
  };

  if (separation > 0.0) {
    // The closest pair: each end against the hull, the segment against each hull edge.
    struct Candidate {
      int kind = 0;  // 0: start vs hull, 1: end vs hull, 2: segment vs edge `edge`
      ClosestFeature feature;
      int edge = 0;
      double distance_squared = kInfinity;
    } best;
    for (int end_index = 0; end_index < 2; ++end_index) {
      const ClosestFeature feature = closest_feature(hull_values, end_index == 0 ? start_value : end_value);
      if (feature.distance_squared < best.distance_squared) best = {end_index, feature, 0, feature.distance_squared};
    }
    for (int e = 0; e < topology.edge_count(); ++e) {
      const ConvexMesh::Edge& edge = topology.edges[static_cast<std::size_t>(e)];
      const SegmentClosestPoints<double> closest = closest_points_of_segments(
          start_value, end_value, hull_values.local_vertex(edge.vertex[0]), hull_values.local_vertex(edge.vertex[1]));
      const double distance_squared = squared_norm(closest.on_first - closest.on_second);
      if (distance_squared < best.distance_squared) best = {2, ClosestFeature{}, e, distance_squared};
    }
    const double distance_value = std::sqrt(best.distance_squared);
    if (distance_value > kTinyLength) {
      if (distance_value - radius_value >= margin) return;
      // The closest hull point (values), to find the faces it lies on.
      Vec3 on_hull_value;
      if (best.kind < 2) {
        Vec3T<double> direction;
        closest_on_feature(hull_values, best.feature, best.kind == 0 ? start_value : end_value, on_hull_value,
                           direction);
      } else {
        const ConvexMesh::Edge& edge = topology.edges[static_cast<std::size_t>(best.edge)];
        on_hull_value = closest_points_of_segments(start_value, end_value, hull_values.local_vertex(edge.vertex[0]),
                                                   hull_values.local_vertex(edge.vertex[1]))
                            .on_second;
      }
      for (int f = 0; f < topology.face_count(); ++f) {
        const Vec3& normal = topology.faces[static_cast<std::size_t>(f)].normal;
        const double offset = dot(normal, hull_values.local_vertex(hull_values.face_vertex(f, 0)));
        if (std::abs(dot(normal, on_hull_value) - offset) > slack) continue;  // not on face f
        double t_low_value, t_high_value;
        if (!clip_to_face_prism(hull_values, f, start_value, end_value, t_low_value, t_high_value)) continue;
        const double lowest = std::min(dot(normal, start_value + direction_value * t_low_value),
                                       dot(normal, start_value + direction_value * t_high_value)) -
                              offset;
        if (lowest > distance_value + slack) continue;  // the closest point is not over face f
        T t_low, t_high;
        clip_to_face_prism(hull, f, start, end, t_low, t_high);
        add_face_contacts(f, t_low, t_high);
        return;
      }
      Vec3T<T> on_segment, on_hull;
      int feature;
      if (best.kind < 2) {
        on_segment = best.kind == 0 ? start : end;
        Vec3T<T> direction;
        closest_on_feature(hull, best.feature, on_segment, on_hull, direction);
        feature = 3 * feature_id(topology, best.feature) + 2 * best.kind;
      } else {
        const ConvexMesh::Edge& edge = topology.edges[static_cast<std::size_t>(best.edge)];
        const SegmentClosestPoints<T> closest = closest_points_of_segments(
            start, end, hull.local_vertex(edge.vertex[0]), hull.local_vertex(edge.vertex[1]));
        on_segment = closest.on_first;
        on_hull = closest.on_second;
        feature = (1 << 27) + 3 * (4 * best.edge + segment_feature(closest.t)) + segment_feature(closest.s);
      }
      const Vec3T<T> offset = on_segment - on_hull;
      const T distance = norm(offset);
      const Vec3T<T> normal_local = offset / distance;
      contacts.add(to_world_point(on_segment - normal_local * radius), to_world_point(on_hull),
                   mesh.rotation * normal_local, distance - radius, feature);
      return;
    }
  }

  // The segment touches or cuts into the hull.
  const bool use_edge =
      best_edge >= 0 &&
      best_edge_separation > best_face_separation + kEdgeAxisRelativeBias * std::abs(best_face_separation) + slack;
  if (!use_edge) {
    T t_low, t_high;
    if (clip_to_face_prism(hull, best_face, start, end, t_low, t_high)) {
      add_face_contacts(best_face, t_low, t_high);
      return;
    }
    // Unreachable in exact arithmetic (a segment inside the hull lies in every face's
    // prism); kept so that rounding cannot drop the contact: the deeper end.
    const Vec3& normal_value = topology.faces[static_cast<std::size_t>(best_face)].normal;
    const T deeper_end = dot(normal_value, start_value) < dot(normal_value, end_value) ? T(0.0) : T(1.0);
    add_face_contacts(best_face, deeper_end, deeper_end);
    return;
  }
  const ConvexMesh::Edge& edge = topology.edges[static_cast<std::size_t>(best_edge)];
  const Vec3T<T> edge_start = hull.local_vertex(edge.vertex[0]);
  const Vec3T<T> edge_end = hull.local_vertex(edge.vertex[1]);
  const Vec3T<T> axis = cross(end - start, edge_end - edge_start);
  const Vec3T<T> out_of_hull = (best_edge_flip ? -axis : axis) / norm(axis);
  const SegmentClosestPoints<T> closest = closest_points_of_segments(start, end, edge_start, edge_end);
  const T gap = dot(out_of_hull, start - edge_start) - radius;
  if (gap >= margin) return;
  contacts.add(to_world_point(closest.on_first - out_of_hull * radius), to_world_point(closest.on_second),
               mesh.rotation * out_of_hull, gap, (1 << 29) + best_edge);
}

Aabb convex_mesh_bounding_box(const PosedShape& mesh, double margin) {
  Vec3 lower{kInfinity, kInfinity, kInfinity};
  Vec3 upper = -lower;
  for (const Vec3& v : mesh.mesh->vertices) {
    const Vec3 offset = mesh.rotation * (v * mesh.size.x);
    for (int k = 0; k < 3; ++k) {
      lower[k] = std::min(lower[k], offset[k]);
      upper[k] = std::max(upper[k], offset[k]);
    }
  }
  const Vec3 grow{margin, margin, margin};
  return {mesh.position + lower - grow, mesh.position + upper + grow};
}

// The scalars of the narrow phase (collision/narrow_phase.cpp).
#define DIFFPHYS_INSTANTIATE_MESH_PAIRS(T)                                                                       \
  template void convex_mesh_plane<T>(const PosedShapeT<T>&, const PosedShapeT<T>&, double, ContactWriter<T>&);   \
  template void sphere_convex_mesh<T>(const PosedShapeT<T>&, const PosedShapeT<T>&, double, ContactWriter<T>&);  \
  template void capsule_convex_mesh<T>(const PosedShapeT<T>&, const PosedShapeT<T>&, double, ContactWriter<T>&); \
  template void polyhedron_polyhedron<T>(const PosedShapeT<T>&, const PosedShapeT<T>&, double, ContactWriter<T>&);
DIFFPHYS_INSTANTIATE_MESH_PAIRS(double)
DIFFPHYS_INSTANTIATE_MESH_PAIRS(Dual<18>)
#undef DIFFPHYS_INSTANTIATE_MESH_PAIRS

}  // namespace diffphys::collision::detail
