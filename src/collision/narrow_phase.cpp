// collision/narrow_phase.cpp — owns the contact geometry of every pair of primitives
// {sphere, capsule, box, plane} (collide) and their world bounding boxes (bounding_box).
//
// Conventions are those of narrow_phase.hpp: the normal points from shape b towards shape
// a, the gap is the signed distance along it (negative = penetration), and a contact's
// position is the midpoint of the two closest surface points. Each pair is written once,
// for the canonical order sphere < capsule < box < plane; collide() swaps the arguments and
// negates the normals for the other order, so collide(b, a) mirrors collide(a, b).
//
// Everything works on fixed-size local buffers (nothing allocates) and every tie is broken
// by a fixed rule (lower index, positive side), so the output depends on the inputs only.
#include "collision/narrow_phase.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace diffphys::collision {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Lengths below this are treated as zero, m.
constexpr double kTinyLength = 1e-12;
constexpr double kTinySquaredLength = kTinyLength * kTinyLength;
// Two directions whose cross product (as a fraction of their lengths) is below this are
// parallel: their cross product is not used as a separating axis.
constexpr double kParallelSine = 1e-6;
// Capsules whose axes make an angle with sine below this are parallel for the two-point
// manifold of capsule–capsule (a capsule lying on another).
constexpr double kCapsuleParallelSine = 1e-3;
// Separating-axis choice: an edge–edge axis replaces the best face axis only when it
// separates more by this fraction of |separation| (plus the tie tolerance below); the
// face manifold is the more stable one (the same bias as ODE's dBoxBox "fudge factor").
constexpr double kEdgeAxisRelativeBias = 0.05;
// Separations closer than this fraction of the shapes' size count as equal, so that e.g.
// two stacked boxes pick the same reference face whatever the rounding.
constexpr double kRelativeTieTolerance = 1e-6;
// Candidate points of one manifold before reduction (box clipping yields at most 8).
constexpr int kMaxCandidates = 16;

double clamp01(double t) { return std::clamp(t, 0.0, 1.0); }

// Sign with sign(0) = +1, so that ties always pick the positive side.
double side_of(double value) { return value < 0.0 ? -1.0 : 1.0; }

Vec3 unit_axis(int axis) {
  Vec3 result;
  result[axis] = 1.0;
  return result;
}

Vec3 to_local(const PosedShape& shape, const Vec3& world_point) {
  return shape.rotation.transpose_times(world_point - shape.position);
}
Vec3 to_world(const PosedShape& shape, const Vec3& local_point) {
  return shape.position + shape.rotation * local_point;
}

// 0 at the start of a segment (t = 0), 1 inside, 2 at its end (t = 1): part of feature ids.
int segment_feature(double t) { return t <= 0.0 ? 0 : (t >= 1.0 ? 2 : 1); }

// Collects the contacts of one pair; positions are midpoints of the two surface points.
class ContactWriter {
 public:
  explicit ContactWriter(ContactPoint* out) : out_(out) {}

  void add(const Vec3& point_on_a, const Vec3& point_on_b, const Vec3& normal, double gap,
           int feature) {
    add(ContactPoint{(point_on_a + point_on_b) * 0.5, normal, gap, feature});
  }
  void add(const ContactPoint& contact) {
    if (count_ < kMaxPairContacts) out_[count_++] = contact;
  }
  int count() const { return count_; }

 private:
  ContactPoint* out_;
  int count_ = 0;
};

// ---------------------------------------------------------------------------------------
// Small geometric kernels.

struct SegmentClosestPoints {
  double s = 0.0, t = 0.0;  // parameters on the first and second segment, in [0, 1]
  Vec3 on_first, on_second;
};

// Closest points of the segments p1 + s (q1 − p1) and p2 + t (q2 − p2), s, t ∈ [0, 1]:
// Ericson, Real-Time Collision Detection (2005) §5.1.9. Point-like segments are handled;
// for parallel segments s starts at 0, which picks one of the equally close pairs.
SegmentClosestPoints closest_points_of_segments(const Vec3& p1, const Vec3& q1, const Vec3& p2,
                                                const Vec3& q2) {
  const Vec3 d1 = q1 - p1;
  const Vec3 d2 = q2 - p2;
  const Vec3 r = p1 - p2;
  const double a = dot(d1, d1);
  const double e = dot(d2, d2);
  const double f = dot(d2, r);
  SegmentClosestPoints result;
  if (a <= kTinySquaredLength && e <= kTinySquaredLength) {
    // Both segments are points: s = t = 0.
  } else if (a <= kTinySquaredLength) {
    result.t = clamp01(f / e);
  } else {
    const double c = dot(d1, r);
    if (e <= kTinySquaredLength) {
      result.s = clamp01(-c / a);
    } else {
      const double b = dot(d1, d2);
      const double denominator = a * e - b * b;  // |d1 × d2|² ≥ 0
      double s = denominator > kParallelSine * kParallelSine * a * e
                     ? clamp01((b * f - c * e) / denominator)
                     : 0.0;
      double t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = clamp01(-c / a);
      } else if (t > 1.0) {
        t = 1.0;
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
double closest_parameter_on_segment(const Vec3& start, const Vec3& end, const Vec3& point) {
  const Vec3 direction = end - start;
  const double length_squared = squared_norm(direction);
  if (length_squared <= kTinySquaredLength) return 0.0;
  return clamp01(dot(point - start, direction) / length_squared);
}

// Contact of two balls (a sphere, or the ball swept along a capsule's segment at its
// closest point). `fallback_normal` serves when the centres coincide.
void add_ball_contact(const Vec3& center_a, double radius_a, const Vec3& center_b, double radius_b,
                      const Vec3& fallback_normal, double margin, int feature,
                      ContactWriter& contacts) {
  const Vec3 offset = center_a - center_b;
  const double distance = norm(offset);
  const double gap = distance - radius_a - radius_b;
  if (gap >= margin) return;
  const Vec3 contact_normal = distance > kTinyLength ? offset / distance : fallback_normal;
  contacts.add(center_a - contact_normal * radius_a, center_b + contact_normal * radius_b,
               contact_normal, gap, feature);
}

// A unit vector perpendicular to `direction` (any fixed one when direction is zero).
Vec3 perpendicular_to(const Vec3& direction) {
  const double length = norm(direction);
  if (length <= kTinyLength) return {1.0, 0.0, 0.0};
  Vec3 tangent1, tangent2;
  orthonormal_basis(direction / length, tangent1, tangent2);
  return tangent1;
}

struct Segment {
  Vec3 start, end;
};
Segment capsule_segment(const PosedShape& capsule) {
  const Vec3 half_axis = capsule.rotation.col(2) * capsule.size.y;
  return {capsule.position - half_axis, capsule.position + half_axis};
}

// Box corner `index` in the box frame: bit k of the index selects the + side of axis k.
Vec3 box_corner(const Vec3& half_extents, int index) {
  return {(index & 1) ? half_extents.x : -half_extents.x,
          (index & 2) ? half_extents.y : -half_extents.y,
          (index & 4) ? half_extents.z : -half_extents.z};
}

// Id of box face (axis, side): 2·axis, +1 on the negative side.
int face_id(int axis, double side) { return 2 * axis + (side < 0.0 ? 1 : 0); }

// Per-axis position of a box-frame point relative to the box (−1 below, 0 within, +1 above
// the slab), encoded as Σ (status_k + 1)·3^k ∈ [0, 27): the box feature (face, edge,
// vertex) nearest to the point. `slack` widens the slab's faces for points on the surface.
int box_region(const Vec3& point, const Vec3& half_extents, double slack) {
  int code = 0;
  int weight = 1;
  for (int k = 0; k < 3; ++k) {
    const int status =
        point[k] > half_extents[k] - slack ? 1 : (point[k] < -half_extents[k] + slack ? -1 : 0);
    code += (status + 1) * weight;
    weight *= 3;
  }
  return code;
}

// box_region's code of the face (axis, side).
int face_region(int axis, double side) {
  int code = 0;
  int weight = 1;
  for (int k = 0; k < 3; ++k) {
    code += (k == axis ? (side > 0.0 ? 2 : 0) : 1) * weight;
    weight *= 3;
  }
  return code;
}

// Keeps at most kMaxPairContacts of the candidate points of one planar manifold: the deepest,
// the one farthest from it, the one spanning the largest triangle with those two, and the
// one adding the most area outside that triangle (the area-maximising reduction of
// Gregorius, "Robust Contact Creation for Physics Simulations", GDC 2015). Distances and
// areas are measured across `normal`. Candidates are visited deepest first (then by index)
// and scores within rounding of the best keep the earlier candidate, so the choice is
// deterministic and prefers deeper points among equals.
void keep_spanning_points(const ContactPoint* candidates, int count, const Vec3& normal,
                          ContactWriter& contacts) {
  if (count <= kMaxPairContacts) {
    for (int i = 0; i < count; ++i) contacts.add(candidates[i]);
    return;
  }
  int order[kMaxCandidates] = {};
  for (int i = 0; i < count; ++i) {
    // Insertion sort by (gap, index).
    int slot = i;
    while (slot > 0 && candidates[order[slot - 1]].gap > candidates[i].gap) {
      order[slot] = order[slot - 1];
      --slot;
    }
    order[slot] = i;
  }
  bool taken[kMaxCandidates] = {};
  // The first untaken candidate (in depth order) whose score is within rounding of the best.
  const auto pick_best = [&](const auto& score) {
    double best_score = -kInfinity;
    for (int k = 0; k < count; ++k)
      if (!taken[order[k]]) best_score = std::max(best_score, score(candidates[order[k]].position));
    const double threshold = best_score - 1e-9 * std::abs(best_score);
    for (int k = 0; k < count; ++k) {
      const int i = order[k];
      if (!taken[i] && score(candidates[i].position) >= threshold) {
        taken[i] = true;
        return i;
      }
    }
    return -1;  // unreachable: at least one candidate scores best_score
  };
  const auto across = [&](const Vec3& v) { return v - normal * dot(v, normal); };

  const int deepest = order[0];
  taken[deepest] = true;
  const Vec3 p0 = candidates[deepest].position;
  const int farthest = pick_best([&](const Vec3& p) { return squared_norm(across(p - p0)); });
  const Vec3 p1 = candidates[farthest].position;
  const int widest =
      pick_best([&](const Vec3& p) { return std::abs(dot(cross(p1 - p0, p - p0), normal)); });
  Vec3 triangle[3] = {p0, p1, candidates[widest].position};
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
  contacts.add(candidates[deepest]);
  contacts.add(candidates[farthest]);
  contacts.add(candidates[widest]);
  contacts.add(candidates[outermost]);
}

// ---------------------------------------------------------------------------------------
// Pairs with a sphere.

void sphere_sphere(const PosedShape& a, const PosedShape& b, double margin,
                   ContactWriter& contacts) {
  add_ball_contact(a.position, a.size.x, b.position, b.size.x, Vec3{0.0, 0.0, 1.0}, margin, 0,
                   contacts);
}

void sphere_capsule(const PosedShape& sphere, const PosedShape& capsule, double margin,
                    ContactWriter& contacts) {
  const Segment segment = capsule_segment(capsule);
  const double t = closest_parameter_on_segment(segment.start, segment.end, sphere.position);
  const Vec3 on_segment = segment.start + (segment.end - segment.start) * t;
  add_ball_contact(sphere.position, sphere.size.x, on_segment, capsule.size.x,
                   perpendicular_to(capsule.rotation.col(2)), margin, segment_feature(t), contacts);
}

// The closest box point to the centre (clamping in the box frame); a centre inside the box
// leaves through the nearest face (ties: lowest axis, positive side).
void sphere_box(const PosedShape& sphere, const PosedShape& box, double margin,
                ContactWriter& contacts) {
  const double radius = sphere.size.x;
  const Vec3& half = box.size;
  const Vec3 center = to_local(box, sphere.position);
  Vec3 on_box;
  for (int k = 0; k < 3; ++k) on_box[k] = std::clamp(center[k], -half[k], half[k]);
  const Vec3 offset = center - on_box;
  const double distance = norm(offset);
  Vec3 normal_local;
  double gap;
  int region;
  if (distance > kTinyLength) {
    normal_local = offset / distance;
    gap = distance - radius;
    region = box_region(center, half, 0.0);
  } else {
    int nearest_axis = 0;
    double nearest_depth = kInfinity;
    for (int k = 0; k < 3; ++k) {
      const double depth = half[k] - std::abs(center[k]);
      if (depth < nearest_depth) {
        nearest_depth = depth;
        nearest_axis = k;
      }
    }
    const double side = side_of(center[nearest_axis]);
    normal_local = unit_axis(nearest_axis) * side;
    gap = -nearest_depth - radius;
    on_box = center;
    on_box[nearest_axis] = side * half[nearest_axis];
    region = face_region(nearest_axis, side);
  }
  if (gap >= margin) return;
  const Vec3 contact_normal = box.rotation * normal_local;
  contacts.add(sphere.position - contact_normal * radius, to_world(box, on_box), contact_normal,
               gap, region);
}

void sphere_plane(const PosedShape& sphere, const PosedShape& plane, double margin,
                  ContactWriter& contacts) {
  const Vec3 plane_normal = plane.rotation.col(2);
  const double height = dot(plane_normal, sphere.position - plane.position);
  const double gap = height - sphere.size.x;
  if (gap >= margin) return;
  contacts.add(sphere.position - plane_normal * sphere.size.x,
               sphere.position - plane_normal * height, plane_normal, gap, 0);
}

// ---------------------------------------------------------------------------------------
// Pairs with a capsule.

// Closest points of the two segments (Ericson §5.1.9). When the axes are parallel and
// their projections overlap, the closest points are not unique: the two ends of the
// overlap are reported instead when both are within the margin, so that a capsule lying
// on another has a two-point support.
void capsule_capsule(const PosedShape& a, const PosedShape& b, double margin,
                     ContactWriter& contacts) {
  const Segment segment_a = capsule_segment(a);
  const Segment segment_b = capsule_segment(b);
  const Vec3 direction_a = segment_a.end - segment_a.start;
  const Vec3 direction_b = segment_b.end - segment_b.start;
  const double length_a_squared = squared_norm(direction_a);
  const double length_b_squared = squared_norm(direction_b);
  const Vec3 axes_cross = cross(direction_a, direction_b);
  const double cross_squared = squared_norm(axes_cross);
  const Vec3 fallback_normal = cross_squared > kTinySquaredLength * length_a_squared
                                   ? axes_cross / std::sqrt(cross_squared)
                                   : perpendicular_to(a.rotation.col(2));

  if (length_a_squared > kTinySquaredLength && length_b_squared > kTinySquaredLength &&
      cross_squared <=
          kCapsuleParallelSine * kCapsuleParallelSine * length_a_squared * length_b_squared) {
    // Parameters on segment a of segment b's ends, and their overlap with [0, 1].
    const double s_of_b_start =
        dot(segment_b.start - segment_a.start, direction_a) / length_a_squared;
    const double s_of_b_end = dot(segment_b.end - segment_a.start, direction_a) / length_a_squared;
    const double overlap_low = std::max(0.0, std::min(s_of_b_start, s_of_b_end));
    const double overlap_high = std::min(1.0, std::max(s_of_b_start, s_of_b_end));
    const double overlap_length = (overlap_high - overlap_low) * std::sqrt(length_a_squared);
    if (overlap_length >
        kParallelSine * (std::sqrt(length_a_squared) + std::sqrt(length_b_squared))) {
      ContactPoint end_contacts[kMaxPairContacts];
      ContactWriter end_writer(end_contacts);
      const double ends[2] = {overlap_low, overlap_high};
      for (int end = 0; end < 2; ++end) {
        const Vec3 on_a = segment_a.start + direction_a * ends[end];
        const double t = closest_parameter_on_segment(segment_b.start, segment_b.end, on_a);
        const Vec3 on_b = segment_b.start + direction_b * t;
        add_ball_contact(on_a, a.size.x, on_b, b.size.x, fallback_normal, margin, 9 + end,
                         end_writer);
      }
      if (end_writer.count() == 2) {
        contacts.add(end_contacts[0]);
        contacts.add(end_contacts[1]);
        return;
      }
    }
  }
  const SegmentClosestPoints closest =
      closest_points_of_segments(segment_a.start, segment_a.end, segment_b.start, segment_b.end);
  add_ball_contact(closest.on_first, a.size.x, closest.on_second, b.size.x, fallback_normal, margin,
                   3 * segment_feature(closest.s) + segment_feature(closest.t), contacts);
}

// Both segment ends when both are within the margin; otherwise the one that is.
void capsule_plane(const PosedShape& capsule, const PosedShape& plane, double margin,
                   ContactWriter& contacts) {
  const Vec3 plane_normal = plane.rotation.col(2);
  const double radius = capsule.size.x;
  const Segment segment = capsule_segment(capsule);
  const Vec3 ends[2] = {segment.start, segment.end};
  const int end_count = squared_norm(segment.end - segment.start) > kTinySquaredLength ? 2 : 1;
  for (int end = 0; end < end_count; ++end) {
    const double height = dot(plane_normal, ends[end] - plane.position);
    const double gap = height - radius;
    if (gap >= margin) continue;
    contacts.add(ends[end] - plane_normal * radius, ends[end] - plane_normal * height, plane_normal,
                 gap, end);
  }
}

// The part of the segment start + t (end − start) inside the prism swept by box face `axis`
// along its normal (Liang–Barsky clipping in the face's two tangent directions), in the box
// frame. Returns false when that part is empty.
bool clip_to_face_prism(const Vec3& half, const Vec3& start, const Vec3& end, int axis,
                        double& t_low, double& t_high) {
  const Vec3 delta = end - start;
  t_low = 0.0;
  t_high = 1.0;
  for (int other : {(axis + 1) % 3, (axis + 2) % 3}) {
    if (std::abs(delta[other]) <= kTinyLength) {
      if (std::abs(start[other]) > half[other]) return false;
      continue;
    }
    double t_enter = (-half[other] - start[other]) / delta[other];
    double t_exit = (half[other] - start[other]) / delta[other];
    if (t_enter > t_exit) std::swap(t_enter, t_exit);
    t_low = std::max(t_low, t_enter);
    t_high = std::min(t_high, t_exit);
  }
  return t_low <= t_high;
}

// Capsule resting on the box face (axis, side), in the box frame: each end of the segment's
// part inside the face's prism, when within the margin, is a contact. The distance to the
// face is linear along the segment, so the deeper end is the closest point of that part.
void capsule_box_face(const PosedShape& box, const Vec3& start, const Vec3& end, double radius,
                      int axis, double side, double t_low, double t_high, double margin,
                      ContactWriter& contacts) {
  const Vec3& half = box.size;
  const Vec3 delta = end - start;
  const Vec3 normal_local = unit_axis(axis) * side;
  const Vec3 contact_normal = box.rotation * normal_local;
  const int end_count = (t_high - t_low) * norm(delta) > kTinyLength ? 2 : 1;
  const double parameters[2] = {t_low, t_high};
  for (int i = 0; i < end_count; ++i) {
    const Vec3 on_segment = start + delta * parameters[i];
    const double gap = side * on_segment[axis] - half[axis] - radius;
    if (gap >= margin) continue;
    Vec3 on_box = on_segment;
    on_box[axis] = side * half[axis];
    contacts.add(to_world(box, on_segment - normal_local * radius), to_world(box, on_box),
                 contact_normal, gap, 200 + 2 * face_id(axis, side) + i);
  }
}

// Capsule against box, in the box frame. First a separating-axis test of the segment
// against the box over the facet normals of their Minkowski sum (the 3 face normals and
// segment × box edge). If the segment is clear of the box, its exact closest pair is the
// best of: each segment end against the box, and the segment against each of the 12 box
// edges (a segment interior point can be closest to a face interior only when the segment
// is parallel to that face, and then an end or an edge crossing is as close). If a face
// next to the closest box point comes as close (the segment's part over that face reaches
// the closest distance), the capsule rests on it: capsule_box_face gives up to 2 points. If the
// segment cuts into the box, the push-out is along the axis of least penetration (face
// axes preferred), with the face points as above or the closest points of the segment and
// the supporting box edge.
void capsule_box(const PosedShape& capsule, const PosedShape& box, double margin,
                 ContactWriter& contacts) {
  const double radius = capsule.size.x;
  const double half_length = capsule.size.y;
  const Vec3& half = box.size;
  const Vec3 center = to_local(box, capsule.position);
  const Vec3 direction = box.rotation.transpose_times(capsule.rotation.col(2));
  const Vec3 start = center - direction * half_length;
  const Vec3 end = center + direction * half_length;

  int best_face_axis = 0;
  double best_face_separation = -kInfinity;
  for (int k = 0; k < 3; ++k) {
    const double separation = std::abs(center[k]) - half[k] - half_length * std::abs(direction[k]);
    if (separation > best_face_separation) {
      best_face_separation = separation;
      best_face_axis = k;
    }
  }
  int best_edge_axis = -1;
  Vec3 best_edge_normal;
  double best_edge_separation = -kInfinity;
  for (int k = 0; k < 3; ++k) {
    const Vec3 edge_normal = cross(direction, unit_axis(k));
    const double length = norm(edge_normal);
    if (length < kParallelSine) continue;
    const Vec3 axis = edge_normal / length;
    const double separation = std::abs(dot(center, axis)) - dot(half, cwise_abs(axis));
    if (separation > best_edge_separation) {
      best_edge_separation = separation;
      best_edge_axis = k;
      best_edge_normal = axis;
    }
  }
  const double separation = std::max(best_face_separation, best_edge_separation);
  // The separation along any axis is a lower bound of the distance.
  if (separation - radius >= margin) return;

  if (separation > 0.0) {
    double best_distance_squared = kInfinity;
    Vec3 on_segment, on_box;
    int segment_status = 0;
    const auto consider = [&](const Vec3& segment_point, const Vec3& box_point, int status) {
      const double distance_squared = squared_norm(segment_point - box_point);
      if (distance_squared < best_distance_squared) {
        best_distance_squared = distance_squared;
        on_segment = segment_point;
        on_box = box_point;
        segment_status = status;
      }
    };
    const auto clamp_to_box = [&](const Vec3& point) {
      Vec3 clamped;
      for (int k = 0; k < 3; ++k) clamped[k] = std::clamp(point[k], -half[k], half[k]);
      return clamped;
    };
    consider(start, clamp_to_box(start), 0);
    consider(end, clamp_to_box(end), 2);
    for (int k = 0; k < 3; ++k) {
      for (int corner = 0; corner < 4; ++corner) {
        Vec3 edge_start;
        edge_start[(k + 1) % 3] = (corner & 1) ? half[(k + 1) % 3] : -half[(k + 1) % 3];
        edge_start[(k + 2) % 3] = (corner & 2) ? half[(k + 2) % 3] : -half[(k + 2) % 3];
        edge_start[k] = -half[k];
        Vec3 edge_end = edge_start;
        edge_end[k] = half[k];
        const SegmentClosestPoints closest =
            closest_points_of_segments(start, end, edge_start, edge_end);
        consider(closest.on_first, closest.on_second, segment_feature(closest.s));
      }
    }
    const double distance = std::sqrt(best_distance_squared);
    if (distance > kTinyLength) {
      const double gap = distance - radius;
      if (gap >= margin) return;
      const double slack = kRelativeTieTolerance * std::max({half.x, half.y, half.z});
      for (int k = 0; k < 3; ++k) {
        if (std::abs(on_box[k]) < half[k] - slack) continue;  // not on a face normal to k
        const double side = side_of(on_box[k]);
        double t_low, t_high;
        if (!clip_to_face_prism(half, start, end, k, t_low, t_high)) continue;
        const double lowest = std::min(side * (start[k] + (end[k] - start[k]) * t_low),
                                       side * (start[k] + (end[k] - start[k]) * t_high)) -
                              half[k];
        if (lowest > distance + slack) continue;  // the closest point is not over this face
        capsule_box_face(box, start, end, radius, k, side, t_low, t_high, margin, contacts);
        return;
      }
      const Vec3 normal_local = (on_segment - on_box) / distance;
      contacts.add(to_world(box, on_segment - normal_local * radius), to_world(box, on_box),
                   box.rotation * normal_local, gap,
                   100 + 3 * box_region(on_box, half, slack) + segment_status);
      return;
    }
  }

  // The segment touches or cuts into the box.
  const bool use_edge =
      best_edge_axis >= 0 &&
      best_edge_separation > best_face_separation +
                                 kEdgeAxisRelativeBias * std::abs(best_face_separation) +
                                 kRelativeTieTolerance * std::max({half.x, half.y, half.z});
  if (!use_edge) {
    const int axis = best_face_axis;
    const double side = side_of(center[axis]);
    double t_low, t_high;
    if (clip_to_face_prism(half, start, end, axis, t_low, t_high)) {
      capsule_box_face(box, start, end, radius, axis, side, t_low, t_high, margin, contacts);
      return;
    }
    // Unreachable in exact arithmetic (a segment inside the box lies in every face's
    // prism); kept so that rounding cannot drop the contact: the deeper end, on the face.
    const Vec3 deeper = side * start[axis] < side * end[axis] ? start : end;
    const Vec3 normal_local = unit_axis(axis) * side;
    Vec3 on_box = deeper;
    on_box[axis] = side * half[axis];
    contacts.add(to_world(box, deeper - normal_local * radius), to_world(box, on_box),
                 box.rotation * normal_local, best_face_separation - radius,
                 200 + 2 * face_id(axis, side));
    return;
  }
  // Edge axis: orient from the box towards the capsule and take the box edge along
  // best_edge_axis that is extreme in that direction.
  const Vec3 axis = dot(center, best_edge_normal) < 0.0 ? -best_edge_normal : best_edge_normal;
  Vec3 edge_start;
  int edge_bits = 0;
  for (int i = 1; i <= 2; ++i) {
    const int other = (best_edge_axis + i) % 3;
    const double side = side_of(axis[other]);
    edge_start[other] = side * half[other];
    if (side > 0.0) edge_bits |= i;
  }
  edge_start[best_edge_axis] = -half[best_edge_axis];
  Vec3 edge_end = edge_start;
  edge_end[best_edge_axis] = half[best_edge_axis];
  const SegmentClosestPoints closest = closest_points_of_segments(start, end, edge_start, edge_end);
  const double gap = best_edge_separation - radius;
  if (gap >= margin) return;
  contacts.add(to_world(box, closest.on_first - axis * radius), to_world(box, closest.on_second),
               box.rotation * axis, gap, 300 + 4 * best_edge_axis + edge_bits);
}

// ---------------------------------------------------------------------------------------
// Pairs with a box.

// Every vertex below the margin (feature = vertex index), reduced to four when more.
void box_plane(const PosedShape& box, const PosedShape& plane, double margin,
               ContactWriter& contacts) {
  const Vec3 plane_normal = plane.rotation.col(2);
  ContactPoint candidates[8];
  int count = 0;
  for (int vertex = 0; vertex < 8; ++vertex) {
    const Vec3 corner = to_world(box, box_corner(box.size, vertex));
    const double height = dot(plane_normal, corner - plane.position);
    if (height >= margin) continue;
    candidates[count++] =
        ContactPoint{corner - plane_normal * (0.5 * height), plane_normal, height, vertex};
  }
  keep_spanning_points(candidates, count, plane_normal, contacts);
}

struct BoxFrame {
  Vec3 center;
  Vec3 axis[3];  // world directions of the box's frame axes
  Vec3 half;     // half extents, m
};
BoxFrame box_frame(const PosedShape& box) {
  return {box.position, {box.rotation.col(0), box.rotation.col(1), box.rotation.col(2)}, box.size};
}
// Half the width of the box's shadow on the unit direction.
double projected_radius(const BoxFrame& box, const Vec3& direction) {
  return box.half.x * std::abs(dot(box.axis[0], direction)) +
         box.half.y * std::abs(dot(box.axis[1], direction)) +
         box.half.z * std::abs(dot(box.axis[2], direction));
}

// A vertex of the incident polygon during clipping. `id` names the point (see
// clipped_point_id); `next_edge` names the line its outgoing polygon edge lies on:
// 0..3 an edge of the incident face, 4..7 a side plane of the reference face.
struct ClipVertex {
  Vec3 point;
  int id = 0;
  int next_edge = 0;
};

// Id of the point where polygon edge `edge` (as next_edge) crosses side plane `plane`:
// incident edge × side plane → 4..19; two perpendicular side planes → the reference
// face's corner, 20..23; parallel side planes (only under rounding) → 24..39.
int clipped_point_id(int edge, int plane) {
  if (edge < 4) return 4 + 4 * edge + plane;
  const int edge_plane = edge - 4;
  const bool edge_on_u = edge_plane < 2;
  const bool plane_on_u = plane < 2;
  if (edge_on_u != plane_on_u) {
    const int u_plane = edge_on_u ? edge_plane : plane;
    const int v_plane = edge_on_u ? plane : edge_plane;
    return 20 + 2 * u_plane + (v_plane - 2);
  }
  return 24 + 4 * edge_plane + plane;
}

// One Sutherland–Hodgman step (Sutherland & Hodgman 1974): keeps the part of the convex
// polygon with dot(plane_normal, x) ≤ plane_offset. Returns the new vertex count.
int clip_polygon(const ClipVertex* polygon, int count, const Vec3& plane_normal,
                 double plane_offset, int plane, ClipVertex* clipped) {
  int clipped_count = 0;
  const auto emit = [&](const ClipVertex& vertex) {
    if (clipped_count < kMaxCandidates) clipped[clipped_count++] = vertex;
  };
  for (int i = 0; i < count; ++i) {
    const ClipVertex& from = polygon[i];
    const ClipVertex& to = polygon[(i + 1) % count];
    const double from_distance = dot(plane_normal, from.point) - plane_offset;
    const double to_distance = dot(plane_normal, to.point) - plane_offset;
    const bool from_inside = from_distance <= 0.0;
    const bool to_inside = to_distance <= 0.0;
    if (from_inside) emit(from);
    if (from_inside != to_inside) {
      const double t = from_distance / (from_distance - to_distance);
      ClipVertex crossing;
      crossing.point = from.point + (to.point - from.point) * t;
      crossing.id = clipped_point_id(from.next_edge, plane);
      // Leaving: the polygon continues along the side plane; entering: along from's edge.
      crossing.next_edge = from_inside ? 4 + plane : from.next_edge;
      emit(crossing);
    }
  }
  return clipped_count;
}

// Box against box by the separating-axis test over the 15 axes (Gottschalk, Lin & Manocha,
// "OBBTree", SIGGRAPH 1996): 3 + 3 face normals and the 9 cross products of edge
// directions (near-parallel ones skipped: the face axes cover them). The axis of largest
// separation (least penetration) wins, face axes preferred (kEdgeAxisRelativeBias) and,
// between equally separating faces, the larger one (then box a's). A face axis gives a reference
// face; the incident face (the other box's face most anti-parallel to it) is clipped against the
// reference face's four side planes (Sutherland–Hodgman) and every clipped point below the margin
// is kept, then reduced to four. An edge axis gives one point: the closest points of the two
// supporting edges (Ericson §5.1.9). Separated boxes (0 ≤ separation < margin) take the same path,
// so contacts report a positive gap along the best separating axis.
void box_box(const PosedShape& shape_a, const PosedShape& shape_b, double margin,
             ContactWriter& contacts) {
  const BoxFrame a = box_frame(shape_a);
  const BoxFrame b = box_frame(shape_b);
  const Vec3 offset = a.center - b.center;  // from b towards a
  const double tie_tolerance = kRelativeTieTolerance * std::max({a.half.x, a.half.y, a.half.z,
                                                                 b.half.x, b.half.y, b.half.z});

  double face_separation[2] = {-kInfinity, -kInfinity};  // [0]: faces of a, [1]: faces of b
  int face_axis[2] = {0, 0};
  for (int k = 0; k < 3; ++k) {
    const double separation_a =
        std::abs(dot(offset, a.axis[k])) - a.half[k] - projected_radius(b, a.axis[k]);
    if (separation_a > face_separation[0]) {
      face_separation[0] = separation_a;
      face_axis[0] = k;
    }
    const double separation_b =
        std::abs(dot(offset, b.axis[k])) - b.half[k] - projected_radius(a, b.axis[k]);
    if (separation_b > face_separation[1]) {
      face_separation[1] = separation_b;
      face_axis[1] = k;
    }
  }
  // Equal separations (a box resting on another): the larger face is the reference, which
  // is also the one a slightly tilted stack picks, so the manifold's ids do not flicker.
  bool reference_is_b;
  if (std::abs(face_separation[1] - face_separation[0]) > tie_tolerance) {
    reference_is_b = face_separation[1] > face_separation[0];
  } else {
    const auto face_area = [](const BoxFrame& box, int axis) {
      return box.half[(axis + 1) % 3] * box.half[(axis + 2) % 3];
    };
    const double area_a = face_area(a, face_axis[0]);
    const double area_b = face_area(b, face_axis[1]);
    reference_is_b = area_b > area_a * (1.0 + kRelativeTieTolerance);
  }
  const double best_face_separation = face_separation[reference_is_b ? 1 : 0];

  int edge_axis_a = -1, edge_axis_b = -1;
  Vec3 edge_normal;
  double edge_separation = -kInfinity;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const Vec3 axis_cross = cross(a.axis[i], b.axis[j]);
      const double length = norm(axis_cross);
      if (length < kParallelSine) continue;
      const Vec3 axis = axis_cross / length;
      const double separation =
          std::abs(dot(offset, axis)) - projected_radius(a, axis) - projected_radius(b, axis);
      if (separation > edge_separation) {
        edge_separation = separation;
        edge_axis_a = i;
        edge_axis_b = j;
        edge_normal = axis;
      }
    }
  }
  const bool use_edge =
      edge_axis_a >= 0 &&
      edge_separation > best_face_separation +
                            kEdgeAxisRelativeBias * std::abs(best_face_separation) + tie_tolerance;
  if ((use_edge ? edge_separation : best_face_separation) >= margin) return;

  if (use_edge) {
    const Vec3 contact_normal = dot(edge_normal, offset) < 0.0 ? -edge_normal : edge_normal;
    // The edge of a extreme along −normal and the edge of b extreme along +normal.
    const auto supporting_edge = [&contact_normal](const BoxFrame& box, int edge_axis,
                                                   double direction, Vec3& edge_start,
                                                   Vec3& edge_end) {
      Vec3 middle = box.center;
      int edge_bits = 0;
      for (int i = 1; i <= 2; ++i) {
        const int other = (edge_axis + i) % 3;
        const double side = side_of(direction * dot(box.axis[other], contact_normal));
        middle += box.axis[other] * (side * box.half[other]);
        if (side > 0.0) edge_bits |= i;
      }
      edge_start = middle - box.axis[edge_axis] * box.half[edge_axis];
      edge_end = middle + box.axis[edge_axis] * box.half[edge_axis];
      return 4 * edge_axis + edge_bits;
    };
    Vec3 a_start, a_end, b_start, b_end;
    const int edge_id_a = supporting_edge(a, edge_axis_a, -1.0, a_start, a_end);
    const int edge_id_b = supporting_edge(b, edge_axis_b, 1.0, b_start, b_end);
    const SegmentClosestPoints closest = closest_points_of_segments(a_start, a_end, b_start, b_end);
    contacts.add(closest.on_first, closest.on_second, contact_normal, edge_separation,
                 2880 + 12 * edge_id_a + edge_id_b);
    return;
  }

  const BoxFrame& reference = reference_is_b ? b : a;
  const BoxFrame& incident = reference_is_b ? a : b;
  const int reference_axis = face_axis[reference_is_b ? 1 : 0];
  const double reference_side =
      side_of(dot(incident.center - reference.center, reference.axis[reference_axis]));
  const Vec3 reference_normal = reference.axis[reference_axis] * reference_side;
  const Vec3 reference_center =
      reference.center + reference_normal * reference.half[reference_axis];

  int incident_axis = 0;
  double best_alignment = -1.0;
  for (int k = 0; k < 3; ++k) {
    const double alignment = std::abs(dot(incident.axis[k], reference_normal));
    if (alignment > best_alignment) {
      best_alignment = alignment;
      incident_axis = k;
    }
  }
  const double incident_side = -side_of(dot(incident.axis[incident_axis], reference_normal));
  const Vec3 incident_center = incident.center + incident.axis[incident_axis] *
                                                     (incident_side * incident.half[incident_axis]);
  const int incident_u = (incident_axis + 1) % 3;
  const int incident_v = (incident_axis + 2) % 3;
  const Vec3 half_u = incident.axis[incident_u] * incident.half[incident_u];
  const Vec3 half_v = incident.axis[incident_v] * incident.half[incident_v];

  ClipVertex polygon[kMaxCandidates];
  ClipVertex scratch[kMaxCandidates];
  polygon[0] = {incident_center + half_u + half_v, 0, 0};
  polygon[1] = {incident_center - half_u + half_v, 1, 1};
  polygon[2] = {incident_center - half_u - half_v, 2, 2};
  polygon[3] = {incident_center + half_u - half_v, 3, 3};
  int count = 4;

  const int reference_u = (reference_axis + 1) % 3;
  const int reference_v = (reference_axis + 2) % 3;
  const Vec3& direction_u = reference.axis[reference_u];
  const Vec3& direction_v = reference.axis[reference_v];
  const double center_u = dot(direction_u, reference_center);
  const double center_v = dot(direction_v, reference_center);
  const Vec3 plane_normals[4] = {direction_u, -direction_u, direction_v, -direction_v};
  const double plane_offsets[4] = {
      center_u + reference.half[reference_u], -center_u + reference.half[reference_u],
      center_v + reference.half[reference_v], -center_v + reference.half[reference_v]};
  for (int plane = 0; plane < 4 && count > 0; ++plane) {
    count =
        clip_polygon(polygon, count, plane_normals[plane], plane_offsets[plane], plane, scratch);
    std::copy(scratch, scratch + count, polygon);
  }

  const int face_pair = 6 * ((reference_is_b ? 6 : 0) + face_id(reference_axis, reference_side)) +
                        face_id(incident_axis, incident_side);
  const Vec3 contact_normal = reference_is_b ? reference_normal : -reference_normal;
  const auto make_contact = [&](const Vec3& on_incident, double gap, int feature) {
    const Vec3 on_reference = on_incident - reference_normal * gap;
    return ContactPoint{(on_incident + on_reference) * 0.5, contact_normal, gap, feature};
  };
  ContactPoint candidates[kMaxCandidates];
  int candidate_count = 0;
  for (int i = 0; i < count; ++i) {
    const double gap = dot(reference_normal, polygon[i].point - reference_center);
    if (gap >= margin) continue;
    candidates[candidate_count++] =
        make_contact(polygon[i].point, gap, 40 * face_pair + polygon[i].id);
  }
  if (candidate_count == 0) {
    // The incident face's clipped part is beyond the margin although the separation along
    // the axis is not (its closest part lies outside the reference face's prism): report
    // the incident box's deepest vertex so the pair is not missed.
    int deepest_vertex = 0;
    double deepest_gap = kInfinity;
    for (int vertex = 0; vertex < 8; ++vertex) {
      Vec3 corner = incident.center;
      for (int k = 0; k < 3; ++k)
        corner += incident.axis[k] * (((vertex >> k) & 1) ? incident.half[k] : -incident.half[k]);
      const double gap = dot(reference_normal, corner - reference_center);
      if (gap < deepest_gap) {
        deepest_gap = gap;
        deepest_vertex = vertex;
      }
    }
    if (deepest_gap >= margin) return;
    Vec3 corner = incident.center;
    for (int k = 0; k < 3; ++k)
      corner +=
          incident.axis[k] * (((deepest_vertex >> k) & 1) ? incident.half[k] : -incident.half[k]);
    contacts.add(make_contact(corner, deepest_gap, 3024 + 8 * (face_pair / 6) + deepest_vertex));
    return;
  }
  keep_spanning_points(candidates, candidate_count, contact_normal, contacts);
}

// ---------------------------------------------------------------------------------------
// Dispatch.

// Canonical argument order of the pair functions.
int shape_rank(ShapeType type) {
  switch (type) {
    case ShapeType::Sphere:
      return 0;
    case ShapeType::Capsule:
      return 1;
    case ShapeType::Box:
      return 2;
    case ShapeType::Plane:
      return 3;
  }
  return 3;
}

// a and b in canonical order (shape_rank(a) ≤ shape_rank(b)).
void collide_ordered(const PosedShape& a, const PosedShape& b, double margin,
                     ContactWriter& contacts) {
  switch (a.type) {
    case ShapeType::Sphere:
      switch (b.type) {
        case ShapeType::Sphere:
          return sphere_sphere(a, b, margin, contacts);
        case ShapeType::Capsule:
          return sphere_capsule(a, b, margin, contacts);
        case ShapeType::Box:
          return sphere_box(a, b, margin, contacts);
        case ShapeType::Plane:
          return sphere_plane(a, b, margin, contacts);
      }
      return;
    case ShapeType::Capsule:
      switch (b.type) {
        case ShapeType::Capsule:
          return capsule_capsule(a, b, margin, contacts);
        case ShapeType::Box:
          return capsule_box(a, b, margin, contacts);
        case ShapeType::Plane:
          return capsule_plane(a, b, margin, contacts);
        case ShapeType::Sphere:
          return;
      }
      return;
    case ShapeType::Box:
      if (b.type == ShapeType::Box) return box_box(a, b, margin, contacts);
      if (b.type == ShapeType::Plane) return box_plane(a, b, margin, contacts);
      return;
    case ShapeType::Plane:
      return;  // plane–plane: infinite planes have no contact points
  }
}

}  // namespace

int collide(const PosedShape& a, const PosedShape& b, double margin,
            ContactPoint out[kMaxPairContacts]) {
  ContactWriter contacts(out);
  if (shape_rank(a.type) <= shape_rank(b.type)) {
    collide_ordered(a, b, margin, contacts);
    return contacts.count();
  }
  collide_ordered(b, a, margin, contacts);
  for (int i = 0; i < contacts.count(); ++i) out[i].normal = -out[i].normal;
  return contacts.count();
}

Aabb bounding_box(const PosedShape& shape, double margin) {
  Vec3 extent;
  switch (shape.type) {
    case ShapeType::Sphere:
      extent = {shape.size.x, shape.size.x, shape.size.x};
      break;
    case ShapeType::Box:
      for (int i = 0; i < 3; ++i)
        extent[i] = std::abs(shape.rotation(i, 0)) * shape.size.x +
                    std::abs(shape.rotation(i, 1)) * shape.size.y +
                    std::abs(shape.rotation(i, 2)) * shape.size.z;
      break;
    case ShapeType::Capsule:
      extent = cwise_abs(shape.rotation.col(2)) * shape.size.y +
               Vec3{shape.size.x, shape.size.x, shape.size.x};
      break;
    case ShapeType::Plane: {
      constexpr double kHuge = 1e30;
      return {{-kHuge, -kHuge, -kHuge}, {kHuge, kHuge, kHuge}};
    }
  }
  extent += Vec3{margin, margin, margin};
  return {shape.position - extent, shape.position + extent};
}

}  // namespace diffphys::collision
