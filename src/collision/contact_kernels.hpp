// collision/contact_kernels.hpp — geometric kernels shared by the narrow phase's pair
// functions (collision/narrow_phase.cpp for the primitives, collision/convex_mesh_contacts.cpp
// for convex meshes): tolerances, scalar helpers that read the same on double and dual
// numbers, segment closest points, the manifold reduction and polygon clipping.
//
// Internal to the collision stage. Everything is a template on the scalar T (double or
// Dual<18>) or a constant; conventions are those of collision/narrow_phase.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "collision/narrow_phase.hpp"
#include "math/dual.hpp"

namespace diffphys::collision::detail {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Lengths below this are treated as zero, m.
inline constexpr double kTinyLength = 1e-12;
inline constexpr double kTinySquaredLength = kTinyLength * kTinyLength;
// Two directions whose cross product (as a fraction of their lengths) is below this are
// parallel: their cross product is not used as a separating axis.
inline constexpr double kParallelSine = 1e-6;
// Capsules whose axes make an angle with sine below this are parallel for the two-point
// manifold of capsule–capsule (a capsule lying on another).
inline constexpr double kCapsuleParallelSine = 1e-3;
// Separating-axis choice: an edge–edge axis replaces the best face axis only when it
// separates more by this fraction of |separation| (plus the tie tolerance below); the
// face manifold is the more stable one (the same bias as ODE's dBoxBox "fudge factor").
inline constexpr double kEdgeAxisRelativeBias = 0.05;
// Separations closer than this fraction of the shapes' size count as equal, so that e.g.
// two stacked boxes pick the same reference face whatever the rounding.
inline constexpr double kRelativeTieTolerance = 1e-6;
// Candidate points of one manifold before reduction (box clipping yields at most 8).
inline constexpr int kMaxCandidates = 16;
// Candidate points of a convex-mesh face manifold: an incident polygon clipped by a reference
// polygon has at most as many vertices as the two together.
inline constexpr int kMaxManifoldCandidates = 2 * ConvexMesh::kMaxFaceVertices;

// Scalar helpers that read the same for double and dual numbers (std::abs and std::sqrt
// for double, the dual overloads found by argument-dependent lookup otherwise).
template <typename T>
T absolute(const T& x) {
  using std::abs;
  return abs(x);
}
template <typename T>
T square_root(const T& x) {
  using std::sqrt;
  return sqrt(x);
}
template <typename T>
T clamp01(const T& t) {
  return std::clamp(t, T(0.0), T(1.0));
}
// Component-wise |v| (the expression of cwise_abs, on any scalar).
template <typename T>
Vec3T<T> absolute_components(const Vec3T<T>& v) {
  return {v.x < 0 ? -v.x : v.x, v.y < 0 ? -v.y : v.y, v.z < 0 ? -v.z : v.z};
}
// The values of a vector, for decisions and scores.
template <typename T>
Vec3 values_of(const Vec3T<T>& v) {
  return {value_of(v.x), value_of(v.y), value_of(v.z)};
}
template <typename T>
double largest_value(const Vec3T<T>& v) {
  return std::max({value_of(v.x), value_of(v.y), value_of(v.z)});
}

// Sign with sign(0) = +1, so that ties always pick the positive side.
template <typename T>
double side_of(const T& value) {
  return value < 0.0 ? -1.0 : 1.0;
}

template <typename T>
Vec3T<T> unit_axis(int axis) {
  Vec3T<T> result;
  result[axis] = T(1.0);
  return result;
}

template <typename T>
Vec3T<T> to_local(const PosedShapeT<T>& shape, const Vec3T<T>& world_point) {
  return shape.rotation.transpose_times(world_point - shape.position);
}
template <typename T>
Vec3T<T> to_world(const PosedShapeT<T>& shape, const Vec3T<T>& local_point) {
  return shape.position + shape.rotation * local_point;
}

// 0 at the start of a segment (t = 0), 1 inside, 2 at its end (t = 1): part of feature ids.
template <typename T>
int segment_feature(const T& t) {
  return t <= 0.0 ? 0 : (t >= 1.0 ? 2 : 1);
}

// Collects the contacts of one pair; positions are midpoints of the two surface points.
template <typename T>
class ContactWriter {
 public:
  // out has room for kMaxPairContacts; at most `limit` points are written.
  explicit ContactWriter(ContactPointT<T>* out, int limit = kMaxPairContacts) : out_(out), limit_(limit) {}

  void add(const Vec3T<T>& point_on_a, const Vec3T<T>& point_on_b, const Vec3T<T>& normal, const T& gap, int feature) {
    add(ContactPointT<T>{(point_on_a + point_on_b) * 0.5, normal, gap, feature});
  }
  void add(const ContactPointT<T>& contact) {
    if (count_ < limit_) out_[count_++] = contact;
  }
  int count() const { return count_; }
  int limit() const { return limit_; }

 private:
  ContactPointT<T>* out_;
  int limit_;
  int count_ = 0;
};

// ---------------------------------------------------------------------------------------
// Small geometric kernels.

template <typename T>
struct SegmentClosestPoints {
  T s = T(0.0), t = T(0.0);  // parameters on the first and second segment, in [0, 1]
  Vec3T<T> on_first, on_second;
};

// Closest points of the segments p1 + s (q1 − p1) and p2 + t (q2 − p2), s, t ∈ [0, 1]:
// Ericson, Real-Time Collision Detection (2005) §5.1.9. Point-like segments are handled;
// for parallel segments s starts at 0, which picks one of the equally close pairs.
template <typename T>
SegmentClosestPoints<T> closest_points_of_segments(const Vec3T<T>& p1, const Vec3T<T>& q1, const Vec3T<T>& p2,
                                                   const Vec3T<T>& q2) {
  const Vec3T<T> d1 = q1 - p1;
  const Vec3T<T> d2 = q2 - p2;
  const Vec3T<T> r = p1 - p2;
  const T a = dot(d1, d1);
  const T e = dot(d2, d2);
  const T f = dot(d2, r);
  SegmentClosestPoints<T> result;
  if (a <= kTinySquaredLength && e <= kTinySquaredLength) {
    // Both segments are points: s = t = 0.
  } else if (a <= kTinySquaredLength) {
    result.t = clamp01(f / e);
  } else {
    const T c = dot(d1, r);
    if (e <= kTinySquaredLength) {
      result.s = clamp01(-c / a);
    } else {
      const T b = dot(d1, d2);
      const T denominator = a * e - b * b;  // |d1 × d2|² ≥ 0
      T s = denominator > kParallelSine * kParallelSine * a * e ? clamp01((b * f - c * e) / denominator) : T(0.0);
      T t = (b * s + f) / e;
      if (t < 0.0) {
        t = T(0.0);
        s = clamp01(-c / a);
      } else if (t > 1.0) {
        t = T(1.0);
        s = clamp01((b - c) / a);
      }
      result.s = s;
      result.t = t;
    }
  }
  result.on_first = p1 + d1 * result.s;
  result.on_second = p2 + d2 * result.t;
  return result;
}

// Parameter in [0, 1] of the point of segment start + t (end − start) closest to `point`.
template <typename T>
T closest_parameter_on_segment(const Vec3T<T>& start, const Vec3T<T>& end, const Vec3T<T>& point) {
  const Vec3T<T> direction = end - start;
  const T length_squared = squared_norm(direction);
  if (length_squared <= kTinySquaredLength) return T(0.0);
  return clamp01(dot(point - start, direction) / length_squared);
}

// Contact of two balls (a sphere, or the ball swept along a capsule's segment at its
// closest point). `fallback_normal` serves when the centres coincide.
template <typename T>
void add_ball_contact(const Vec3T<T>& center_a, const T& radius_a, const Vec3T<T>& center_b, const T& radius_b,
                      const Vec3T<T>& fallback_normal, double margin, int feature, ContactWriter<T>& contacts) {
  const Vec3T<T> offset = center_a - center_b;
  const T distance = norm(offset);
  const T gap = distance - radius_a - radius_b;
  if (gap >= margin) return;
  const Vec3T<T> contact_normal = distance > kTinyLength ? offset / distance : fallback_normal;
  contacts.add(center_a - contact_normal * radius_a, center_b + contact_normal * radius_b, contact_normal, gap,
               feature);
}

// A unit vector perpendicular to `direction` (any fixed one when direction is zero).
template <typename T>
Vec3T<T> perpendicular_to(const Vec3T<T>& direction) {
  const T length = norm(direction);
  if (length <= kTinyLength) return {T(1.0), T(0.0), T(0.0)};
  Vec3T<T> tangent1, tangent2;
  orthonormal_basis(direction / length, tangent1, tangent2);
  return tangent1;
}

template <typename T>
struct Segment {
  Vec3T<T> start, end;
};
template <typename T>
Segment<T> capsule_segment(const PosedShapeT<T>& capsule) {
  const Vec3T<T> half_axis = capsule.rotation.col(2) * capsule.size.y;
  return {capsule.position - half_axis, capsule.position + half_axis};
}

// Keeps at most contacts.limit() of the candidate points of one planar manifold (all of them
// if they fit): the deepest, the one farthest from it, the one spanning the largest triangle
// with those two, and the one adding the most area outside that triangle (the
// area-maximising reduction of Gregorius, "Robust Contact Creation for Physics Simulations",
// GDC 2015); beyond 4, each next the one farthest from the points kept (farthest-point
// sampling, which spreads the rest over the manifold). Distances and areas are measured
// across `normal`. Candidates are visited deepest first (then by index)
// and scores within rounding of the best keep the earlier candidate, so the choice is
// deterministic and prefers deeper points among equals. The choice is discrete: scores are
// computed on the values of the positions and the normal. count ≤ kMaxManifoldCandidates.
template <typename T>
void keep_spanning_points(const ContactPointT<T>* candidates, int count, const Vec3T<T>& manifold_normal,
                          ContactWriter<T>& contacts) {
  if (count <= contacts.limit()) {
    for (int i = 0; i < count; ++i) contacts.add(candidates[i]);
    return;
  }
  int order[kMaxManifoldCandidates] = {};
  for (int i = 0; i < count; ++i) {
    // Insertion sort by (gap, index).
    int slot = i;
    while (slot > 0 && candidates[order[slot - 1]].gap > candidates[i].gap) {
      order[slot] = order[slot - 1];
      --slot;
    }
    order[slot] = i;
  }
  const Vec3 normal = values_of(manifold_normal);
  Vec3 positions[kMaxManifoldCandidates];
  for (int i = 0; i < count; ++i) positions[i] = values_of(candidates[i].position);
  bool taken[kMaxManifoldCandidates] = {};
  // The first untaken candidate (in depth order) whose score is within rounding of the best.
  const auto pick_best = [&](const auto& score) {
    double best_score = -kInfinity;
    for (int k = 0; k < count; ++k)
      if (!taken[order[k]]) best_score = std::max(best_score, score(positions[order[k]]));
    const double threshold = best_score - 1e-9 * std::abs(best_score);
    for (int k = 0; k < count; ++k) {
      const int i = order[k];
      if (!taken[i] && score(positions[i]) >= threshold) {
        taken[i] = true;
        return i;
      }
    }
    return -1;  // unreachable: at least one candidate scores best_score
  };
  const auto across = [&](const Vec3& v) { return v - normal * dot(v, normal); };

  const int deepest = order[0];
  taken[deepest] = true;
  const Vec3 p0 = positions[deepest];
  const int farthest = pick_best([&](const Vec3& p) { return squared_norm(across(p - p0)); });
  const Vec3 p1 = positions[farthest];
  const int widest = pick_best([&](const Vec3& p) { return std::abs(dot(cross(p1 - p0, p - p0), normal)); });
  Vec3 triangle[3] = {p0, p1, positions[widest]};
  if (dot(cross(triangle[1] - triangle[0], triangle[2] - triangle[0]), normal) < 0.0)
    std::swap(triangle[1], triangle[2]);  // counter-clockwise about the normal
  // Score: how far outside the triangle (minus the smallest signed doubled area over its
  // edges; positive outside).
  const int outermost = pick_best([&](const Vec3& p) {
    double inside = kInfinity;
    for (int edge = 0; edge < 3; ++edge) {
      const Vec3& from = triangle[edge];
      const Vec3& to = triangle[(edge + 1) % 3];
      inside = std::min(inside, dot(cross(to - from, p - from), normal));
    }
    return -inside;
  });
  const int kept[4] = {deepest, farthest, widest, outermost};
  for (int i = 0; i < std::min(4, contacts.limit()); ++i) contacts.add(candidates[kept[i]]);
  while (contacts.count() < contacts.limit()) {
    const int next = pick_best([&](const Vec3& p) {
      double nearest = kInfinity;
      for (int i = 0; i < count; ++i)
        if (taken[i]) nearest = std::min(nearest, squared_norm(across(p - positions[i])));
      return nearest;
    });
    contacts.add(candidates[next]);
  }
}

// A vertex of the incident polygon during clipping. `id` names the point; `next_edge` names
// the line its outgoing polygon edge lies on (an edge of the incident face, or a side plane
// of the reference face: box_box and the convex-mesh pairs number them each their way).
template <typename T>
struct ClipVertex {
  Vec3T<T> point;
  int id = 0;
  int next_edge = 0;
};

// One Sutherland–Hodgman step (Sutherland & Hodgman 1974): keeps the part of the convex
// polygon with dot(plane_normal, x) ≤ plane_offset, writing at most `capacity` vertices.
// Returns the new vertex count. `side_plane_edge` is the next_edge value of a polygon edge
// running along side plane `plane`; point_id(next_edge, plane) names a crossing point.
template <typename T, typename PointId>
int clip_polygon(const ClipVertex<T>* polygon, int count, const Vec3T<T>& plane_normal, const T& plane_offset,
                 int plane, int side_plane_edge, ClipVertex<T>* clipped, int capacity, const PointId& point_id) {
  int clipped_count = 0;
  const auto emit = [&](const ClipVertex<T>& vertex) {
    if (clipped_count < capacity) clipped[clipped_count++] = vertex;
  };
  for (int i = 0; i < count; ++i) {
    const ClipVertex<T>& from = polygon[i];
    const ClipVertex<T>& to = polygon[(i + 1) % count];
    const T from_distance = dot(plane_normal, from.point) - plane_offset;
    const T to_distance = dot(plane_normal, to.point) - plane_offset;
    const bool from_inside = from_distance <= 0.0;
    const bool to_inside = to_distance <= 0.0;
    if (from_inside) emit(from);
    if (from_inside != to_inside) {
      const T t = from_distance / (from_distance - to_distance);
      ClipVertex<T> crossing;
      crossing.point = from.point + (to.point - from.point) * t;
      crossing.id = point_id(from.next_edge, plane);
      // Leaving: the polygon continues along the side plane; entering: along from's edge.
      crossing.next_edge = from_inside ? side_plane_edge : from.next_edge;
      emit(crossing);
    }
  }
  return clipped_count;
}

template <typename T>
struct BoxFrame {
  Vec3T<T> center;
  Vec3T<T> axis[3];  // world directions of the box's frame axes
  Vec3T<T> half;     // half extents, m
};
template <typename T>
BoxFrame<T> box_frame(const PosedShapeT<T>& box) {
  return {box.position, {box.rotation.col(0), box.rotation.col(1), box.rotation.col(2)}, box.size};
}
// Half the width of the box's shadow on the unit direction.
template <typename T>
T projected_radius(const BoxFrame<T>& box, const Vec3T<T>& direction) {
  return box.half.x * absolute(dot(box.axis[0], direction)) +
         box.half.y * absolute(dot(box.axis[1], direction)) +
         box.half.z * absolute(dot(box.axis[2], direction));
}

// The closest points of two disjoint boxes. The distance of two convex polyhedra is attained
// between a vertex of one and the other solid, or between two edges (Ericson, Real-Time
// Collision Detection §5.1.9 and §9.5), so it is the least of the 16 vertex–box distances
// (clamping to the box in its frame) and the 144 edge–edge ones. feature: 3120 + vertex for a
// vertex of a, 3128 + vertex for one of b, 2880 + 12·edge_a + edge_b for two edges (edge
// 4·axis + the signs of the two other axes as bits 1 and 2, box_box's supporting-edge ids).
template <typename T>
struct BoxClosestPair {
  Vec3T<T> on_a, on_b;
  T distance = T(kInfinity);
  int feature = 0;
};
// Box corner `index` in the box frame: bit k of the index selects the + side of axis k.
template <typename T>
Vec3T<T> box_corner(const Vec3T<T>& half_extents, int index) {
  return {(index & 1) ? half_extents.x : -half_extents.x,
          (index & 2) ? half_extents.y : -half_extents.y,
          (index & 4) ? half_extents.z : -half_extents.z};
}
// The same corner in the world.
template <typename T>
Vec3T<T> box_corner(const BoxFrame<T>& box, int index) {
  const Vec3T<T> local = box_corner(box.half, index);
  return box.center + box.axis[0] * local.x + box.axis[1] * local.y + box.axis[2] * local.z;
}
// Box edge `id` in the world: id = 4·axis + bits, bit i (1 or 2) selecting the + side of
// axis (axis + i) mod 3; the edge runs along `axis` from its − end to its + end.
template <typename T>
void box_edge(const BoxFrame<T>& box, int id, Vec3T<T>& start, Vec3T<T>& end) {
  const int axis = id / 4;
  Vec3T<T> middle = box.center;
  for (int i = 1; i <= 2; ++i) {
    const int other = (axis + i) % 3;
    middle += box.axis[other] * ((id & i) ? box.half[other] : -box.half[other]);
  }
  start = middle - box.axis[axis] * box.half[axis];
  end = middle + box.axis[axis] * box.half[axis];
}
template <typename T>
BoxClosestPair<T> closest_points_of_disjoint_boxes(const BoxFrame<T>& a, const BoxFrame<T>& b) {
  BoxClosestPair<T> best;
  const auto consider = [&best](const Vec3T<T>& on_a, const Vec3T<T>& on_b, int feature) {
    const T distance = norm(on_a - on_b);
    if (distance < best.distance) best = {on_a, on_b, distance, feature};
  };
  const auto clamp_into = [](const BoxFrame<T>& box, const Vec3T<T>& point) {
    Vec3T<T> inside = box.center;
    for (int k = 0; k < 3; ++k)
      inside += box.axis[k] * std::clamp(dot(box.axis[k], point - box.center), -box.half[k], box.half[k]);
    return inside;
  };
  for (int vertex = 0; vertex < 8; ++vertex) {
    const Vec3T<T> corner_a = box_corner(a, vertex), corner_b = box_corner(b, vertex);
    consider(corner_a, clamp_into(b, corner_a), 3120 + vertex);
    consider(clamp_into(a, corner_b), corner_b, 3128 + vertex);
  }
  for (int edge_a = 0; edge_a < 12; ++edge_a) {
    Vec3T<T> a_start, a_end;
    box_edge(a, edge_a, a_start, a_end);
    for (int edge_b = 0; edge_b < 12; ++edge_b) {
      Vec3T<T> b_start, b_end;
      box_edge(b, edge_b, b_start, b_end);
      const SegmentClosestPoints<T> closest = closest_points_of_segments(a_start, a_end, b_start, b_end);
      consider(closest.on_first, closest.on_second, 2880 + 12 * edge_a + edge_b);
    }
  }
  return best;
}

}  // namespace diffphys::collision::detail
