// collision/narrow_phase.cpp — owns the contact geometry of every pair of primitives
// {sphere, capsule, box, plane} (collide; their bounds are collision/broad_phase.cpp's); pairs with a convex mesh are dispatched to collision/convex_mesh_contacts.cpp, and the
// kernels both use (clipping, manifold reduction, ...) live in collision/contact_kernels.hpp.
//
// Conventions are those of narrow_phase.hpp: the normal points from shape b towards shape
// a, the gap is the signed distance along it (negative = penetration), and a contact's
// position is the midpoint of the two closest surface points. Each pair is written once,
// for the canonical order sphere < capsule < box < convex mesh < plane; collide() swaps the
// arguments and negates the normals for the other order, so collide(b, a) mirrors
// collide(a, b).
//
// Everything works on fixed-size local buffers (nothing allocates) and every tie is broken
// by a fixed rule (lower index, positive side), so the output depends on the inputs only.
//
// Scalar template: every function is written once on T and instantiated (at the end of
// this file) for double, which the simulation runs, and Dual<18>, which the backward pass
// runs (adjoint/contact_geometry.cpp). Quantities that only decide — tolerances, scores of
// the manifold reduction, sides, feature ids — are plain doubles (value_of); everything a
// contact's position, normal or gap is computed from stays in T. For T = double the
// operations and their order are those of the original double-only code, so the forward
// results are bit-identical.
#include "collision/narrow_phase.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "collision/contact_kernels.hpp"
#include "collision/convex_mesh_contacts.hpp"
#include "collision/ellipsoid_contacts.hpp"
#include "math/dual.hpp"

namespace diffphys::collision {
namespace {

using namespace detail;  // the shared kernels (collision/contact_kernels.hpp)

// Id of box face (axis, side): 2·axis, +1 on the negative side.
int face_id(int axis, double side) { return 2 * axis + (side < 0.0 ? 1 : 0); }

// Per-axis position of a box-frame point relative to the box (−1 below, 0 within, +1 above
// the slab), encoded as Σ (status_k + 1)·3^k ∈ [0, 27): the box feature (face, edge,
// vertex) nearest to the point. `slack` widens the slab's faces for points on the surface.
template <typename T>
int box_region(const Vec3T<T>& point, const Vec3T<T>& half_extents, double slack) {
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

// ---------------------------------------------------------------------------------------
// Pairs with a sphere.

template <typename T>
void sphere_sphere(const PosedShapeT<T>& a, const PosedShapeT<T>& b, double margin,
                   ContactWriter<T>& contacts) {
  add_ball_contact(a.position, a.size.x, b.position, b.size.x, Vec3T<T>{T(0.0), T(0.0), T(1.0)},
                   margin, 0, contacts);
}

template <typename T>
void sphere_capsule(const PosedShapeT<T>& sphere, const PosedShapeT<T>& capsule, double margin,
                    ContactWriter<T>& contacts) {
  const Segment<T> segment = capsule_segment(capsule);
  const T t = closest_parameter_on_segment(segment.start, segment.end, sphere.position);
  const Vec3T<T> on_segment = segment.start + (segment.end - segment.start) * t;
  add_ball_contact(sphere.position, sphere.size.x, on_segment, capsule.size.x,
                   perpendicular_to(capsule.rotation.col(2)), margin, segment_feature(t), contacts);
}

// The closest box point to the centre (clamping in the box frame); a centre inside the box
// leaves through the nearest face (ties: lowest axis, positive side).
template <typename T>
void sphere_box(const PosedShapeT<T>& sphere, const PosedShapeT<T>& box, double margin,
                ContactWriter<T>& contacts) {
  const T radius = sphere.size.x;
  const Vec3T<T>& half = box.size;
  const Vec3T<T> center = to_local(box, sphere.position);
  Vec3T<T> on_box;
  for (int k = 0; k < 3; ++k) on_box[k] = std::clamp(center[k], -half[k], half[k]);
  const Vec3T<T> offset = center - on_box;
  const T distance = norm(offset);
  Vec3T<T> normal_local;
  T gap;
  int region;
  if (distance > kTinyLength) {
    normal_local = offset / distance;
    gap = distance - radius;
    region = box_region(center, half, 0.0);
  } else {
    int nearest_axis = 0;
    T nearest_depth = T(kInfinity);
    for (int k = 0; k < 3; ++k) {
      const T depth = half[k] - absolute(center[k]);
      if (depth < nearest_depth) {
        nearest_depth = depth;
        nearest_axis = k;
      }
    }
    const double side = side_of(center[nearest_axis]);
    normal_local = unit_axis<T>(nearest_axis) * side;
    gap = -nearest_depth - radius;
    on_box = center;
    on_box[nearest_axis] = side * half[nearest_axis];
    region = face_region(nearest_axis, side);
  }
  if (gap >= margin) return;
  const Vec3T<T> contact_normal = box.rotation * normal_local;
  contacts.add(sphere.position - contact_normal * radius, to_world(box, on_box), contact_normal,
               gap, region);
}

template <typename T>
void sphere_plane(const PosedShapeT<T>& sphere, const PosedShapeT<T>& plane, double margin,
                  ContactWriter<T>& contacts) {
  const Vec3T<T> plane_normal = plane.rotation.col(2);
  const T height = dot(plane_normal, sphere.position - plane.position);
  const T gap = height - sphere.size.x;
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
template <typename T>
void capsule_capsule(const PosedShapeT<T>& a, const PosedShapeT<T>& b, double margin,
                     ContactWriter<T>& contacts) {
  const Segment<T> segment_a = capsule_segment(a);
  const Segment<T> segment_b = capsule_segment(b);
  const Vec3T<T> direction_a = segment_a.end - segment_a.start;
  const Vec3T<T> direction_b = segment_b.end - segment_b.start;
  const T length_a_squared = squared_norm(direction_a);
  const T length_b_squared = squared_norm(direction_b);
  const Vec3T<T> axes_cross = cross(direction_a, direction_b);
  const T cross_squared = squared_norm(axes_cross);
  const Vec3T<T> fallback_normal = cross_squared > kTinySquaredLength * length_a_squared
                                       ? axes_cross / square_root(cross_squared)
                                       : perpendicular_to(a.rotation.col(2));

  if (length_a_squared > kTinySquaredLength && length_b_squared > kTinySquaredLength &&
      cross_squared <=
          kCapsuleParallelSine * kCapsuleParallelSine * length_a_squared * length_b_squared) {
    // Parameters on segment a of segment b's ends, and their overlap with [0, 1].
    const T s_of_b_start = dot(segment_b.start - segment_a.start, direction_a) / length_a_squared;
    const T s_of_b_end = dot(segment_b.end - segment_a.start, direction_a) / length_a_squared;
    const T overlap_low = std::max(T(0.0), std::min(s_of_b_start, s_of_b_end));
    const T overlap_high = std::min(T(1.0), std::max(s_of_b_start, s_of_b_end));
    const T overlap_length = (overlap_high - overlap_low) * square_root(length_a_squared);
    if (overlap_length >
        kParallelSine * (square_root(length_a_squared) + square_root(length_b_squared))) {
      ContactPointT<T> end_contacts[kMaxPairContacts];
      ContactWriter<T> end_writer(end_contacts);
      const T ends[2] = {overlap_low, overlap_high};
      for (int end = 0; end < 2; ++end) {
        const Vec3T<T> on_a = segment_a.start + direction_a * ends[end];
        const T t = closest_parameter_on_segment(segment_b.start, segment_b.end, on_a);
        const Vec3T<T> on_b = segment_b.start + direction_b * t;
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
  const SegmentClosestPoints<T> closest =
      closest_points_of_segments(segment_a.start, segment_a.end, segment_b.start, segment_b.end);
  add_ball_contact(closest.on_first, a.size.x, closest.on_second, b.size.x, fallback_normal, margin,
                   3 * segment_feature(closest.s) + segment_feature(closest.t), contacts);
}

// Both segment ends when both are within the margin; otherwise the one that is.
template <typename T>
void capsule_plane(const PosedShapeT<T>& capsule, const PosedShapeT<T>& plane, double margin,
                   ContactWriter<T>& contacts) {
  const Vec3T<T> plane_normal = plane.rotation.col(2);
  const T radius = capsule.size.x;
  const Segment<T> segment = capsule_segment(capsule);
  const Vec3T<T> ends[2] = {segment.start, segment.end};
  const int end_count = squared_norm(segment.end - segment.start) > kTinySquaredLength ? 2 : 1;
  for (int end = 0; end < end_count; ++end) {
    const T height = dot(plane_normal, ends[end] - plane.position);
    const T gap = height - radius;
    if (gap >= margin) continue;
    contacts.add(ends[end] - plane_normal * radius, ends[end] - plane_normal * height, plane_normal,
                 gap, end);
  }
}

// The part of the segment start + t (end − start) inside the prism swept by box face `axis`
// along its normal (Liang–Barsky clipping in the face's two tangent directions), in the box
// frame. Returns false when that part is empty.
template <typename T>
bool clip_to_face_prism(const Vec3T<T>& half, const Vec3T<T>& start, const Vec3T<T>& end,
                        int axis, T& t_low, T& t_high) {
  const Vec3T<T> delta = end - start;
  t_low = T(0.0);
  t_high = T(1.0);
  for (int other : {(axis + 1) % 3, (axis + 2) % 3}) {
    if (absolute(delta[other]) <= kTinyLength) {
      if (absolute(start[other]) > half[other]) return false;
      continue;
    }
    T t_enter = (-half[other] - start[other]) / delta[other];
    T t_exit = (half[other] - start[other]) / delta[other];
    if (t_enter > t_exit) std::swap(t_enter, t_exit);
    t_low = std::max(t_low, t_enter);
    t_high = std::min(t_high, t_exit);
  }
  return t_low <= t_high;
}

// Capsule resting on the box face (axis, side), in the box frame: each end of the segment's
// part inside the face's prism, when within the margin, is a contact. The distance to the
// face is linear along the segment, so the deeper end is the closest point of that part.
template <typename T>
void capsule_box_face(const PosedShapeT<T>& box, const Vec3T<T>& start, const Vec3T<T>& end,
                      const T& radius, int axis, double side, const T& t_low, const T& t_high,
                      double margin, ContactWriter<T>& contacts) {
  const Vec3T<T>& half = box.size;
  const Vec3T<T> delta = end - start;
  const Vec3T<T> normal_local = unit_axis<T>(axis) * side;
  const Vec3T<T> contact_normal = box.rotation * normal_local;
  const int end_count = (t_high - t_low) * norm(delta) > kTinyLength ? 2 : 1;
  const T parameters[2] = {t_low, t_high};
  for (int i = 0; i < end_count; ++i) {
    const Vec3T<T> on_segment = start + delta * parameters[i];
    const T gap = side * on_segment[axis] - half[axis] - radius;
    if (gap >= margin) continue;
    Vec3T<T> on_box = on_segment;
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
template <typename T>
void capsule_box(const PosedShapeT<T>& capsule, const PosedShapeT<T>& box, double margin,
                 ContactWriter<T>& contacts) {
  const T radius = capsule.size.x;
  const T half_length = capsule.size.y;
  const Vec3T<T>& half = box.size;
  const Vec3T<T> center = to_local(box, capsule.position);
  const Vec3T<T> direction = box.rotation.transpose_times(capsule.rotation.col(2));
  const Vec3T<T> start = center - direction * half_length;
  const Vec3T<T> end = center + direction * half_length;

  int best_face_axis = 0;
  T best_face_separation = T(-kInfinity);
  for (int k = 0; k < 3; ++k) {
    const T separation =
        absolute(center[k]) - half[k] - half_length * absolute(direction[k]);
    if (separation > best_face_separation) {
      best_face_separation = separation;
      best_face_axis = k;
    }
  }
  int best_edge_axis = -1;
  Vec3T<T> best_edge_normal;
  T best_edge_separation = T(-kInfinity);
  for (int k = 0; k < 3; ++k) {
    const Vec3T<T> edge_normal = cross(direction, unit_axis<T>(k));
    const T length = norm(edge_normal);
    if (length < kParallelSine) continue;
    const Vec3T<T> axis = edge_normal / length;
    const T separation = absolute(dot(center, axis)) - dot(half, absolute_components(axis));
    if (separation > best_edge_separation) {
      best_edge_separation = separation;
      best_edge_axis = k;
      best_edge_normal = axis;
    }
  }
  const T separation = std::max(best_face_separation, best_edge_separation);
  // The separation along any axis is a lower bound of the distance.
  if (separation - radius >= margin) return;

  const double slack = kRelativeTieTolerance * largest_value(half);
  if (separation > 0.0) {
    T best_distance_squared = T(kInfinity);
    Vec3T<T> on_segment, on_box;
    int segment_status = 0;
    const auto consider = [&](const Vec3T<T>& segment_point, const Vec3T<T>& box_point,
                              int status) {
      const T distance_squared = squared_norm(segment_point - box_point);
      if (distance_squared < best_distance_squared) {
        best_distance_squared = distance_squared;
        on_segment = segment_point;
        on_box = box_point;
        segment_status = status;
      }
    };
    const auto clamp_to_box = [&](const Vec3T<T>& point) {
      Vec3T<T> clamped;
      for (int k = 0; k < 3; ++k) clamped[k] = std::clamp(point[k], -half[k], half[k]);
      return clamped;
    };
    consider(start, clamp_to_box(start), 0);
    consider(end, clamp_to_box(end), 2);
    for (int k = 0; k < 3; ++k) {
      for (int corner = 0; corner < 4; ++corner) {
        Vec3T<T> edge_start;
        edge_start[(k + 1) % 3] = (corner & 1) ? half[(k + 1) % 3] : -half[(k + 1) % 3];
        edge_start[(k + 2) % 3] = (corner & 2) ? half[(k + 2) % 3] : -half[(k + 2) % 3];
        edge_start[k] = -half[k];
        Vec3T<T> edge_end = edge_start;
        edge_end[k] = half[k];
        const SegmentClosestPoints<T> closest =
            closest_points_of_segments(start, end, edge_start, edge_end);
        consider(closest.on_first, closest.on_second, segment_feature(closest.s));
      }
    }
    const T distance = square_root(best_distance_squared);
    if (distance > kTinyLength) {
      const T gap = distance - radius;
      if (gap >= margin) return;
      for (int k = 0; k < 3; ++k) {
        if (absolute(on_box[k]) < half[k] - slack) continue;  // not on a face normal to k
        const double side = side_of(on_box[k]);
        T t_low, t_high;
        if (!clip_to_face_prism(half, start, end, k, t_low, t_high)) continue;
        const T lowest = std::min(side * (start[k] + (end[k] - start[k]) * t_low),
                                  side * (start[k] + (end[k] - start[k]) * t_high)) -
                         half[k];
        if (lowest > distance + slack) continue;  // the closest point is not over this face
        capsule_box_face(box, start, end, radius, k, side, t_low, t_high, margin, contacts);
        return;
      }
      const Vec3T<T> normal_local = (on_segment - on_box) / distance;
      contacts.add(to_world(box, on_segment - normal_local * radius), to_world(box, on_box),
                   box.rotation * normal_local, gap,
                   100 + 3 * box_region(on_box, half, slack) + segment_status);
      return;
    }
  }

  // The segment touches or cuts into the box.
  const bool use_edge =
      best_edge_axis >= 0 &&
      best_edge_separation >
          best_face_separation + kEdgeAxisRelativeBias * absolute(best_face_separation) + slack;
  if (!use_edge) {
    const int axis = best_face_axis;
    const double side = side_of(center[axis]);
    T t_low, t_high;
    if (clip_to_face_prism(half, start, end, axis, t_low, t_high)) {
      capsule_box_face(box, start, end, radius, axis, side, t_low, t_high, margin, contacts);
      return;
    }
    // Unreachable in exact arithmetic (a segment inside the box lies in every face's
    // prism); kept so that rounding cannot drop the contact: the deeper end, on the face.
    const Vec3T<T> deeper = side * start[axis] < side * end[axis] ? start : end;
    const Vec3T<T> normal_local = unit_axis<T>(axis) * side;
    Vec3T<T> on_box = deeper;
    on_box[axis] = side * half[axis];
    contacts.add(to_world(box, deeper - normal_local * radius), to_world(box, on_box),
                 box.rotation * normal_local, best_face_separation - radius,
                 200 + 2 * face_id(axis, side));
    return;
  }
  // Edge axis: orient from the box towards the capsule and take the box edge along
  // best_edge_axis that is extreme in that direction.
  const Vec3T<T> axis = dot(center, best_edge_normal) < 0.0 ? -best_edge_normal : best_edge_normal;
  Vec3T<T> edge_start;
  int edge_bits = 0;
  for (int i = 1; i <= 2; ++i) {
    const int other = (best_edge_axis + i) % 3;
    const double side = side_of(axis[other]);
    edge_start[other] = side * half[other];
    if (side > 0.0) edge_bits |= i;
  }
  edge_start[best_edge_axis] = -half[best_edge_axis];
  Vec3T<T> edge_end = edge_start;
  edge_end[best_edge_axis] = half[best_edge_axis];
  const SegmentClosestPoints<T> closest =
      closest_points_of_segments(start, end, edge_start, edge_end);
  const T gap = best_edge_separation - radius;
  if (gap >= margin) return;
  contacts.add(to_world(box, closest.on_first - axis * radius), to_world(box, closest.on_second),
               box.rotation * axis, gap, 300 + 4 * best_edge_axis + edge_bits);
}

// ---------------------------------------------------------------------------------------
// Pairs with a box.

// Every vertex below the margin (feature = vertex index), reduced to four when more.
template <typename T>
void box_plane(const PosedShapeT<T>& box, const PosedShapeT<T>& plane, double margin,
               ContactWriter<T>& contacts) {
  const Vec3T<T> plane_normal = plane.rotation.col(2);
  ContactPointT<T> candidates[8];
  int count = 0;
  for (int vertex = 0; vertex < 8; ++vertex) {
    const Vec3T<T> corner = to_world(box, box_corner(box.size, vertex));
    const T height = dot(plane_normal, corner - plane.position);
    if (height >= margin) continue;
    candidates[count++] =
        ContactPointT<T>{corner - plane_normal * (0.5 * height), plane_normal, height, vertex};
  }
  keep_spanning_points(candidates, count, plane_normal, contacts);
}

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

// Box against box by the separating-axis test over the 15 axes (Gottschalk, Lin & Manocha,
// "OBBTree", SIGGRAPH 1996): 3 + 3 face normals and the 9 cross products of edge
// directions (near-parallel ones skipped: the face axes cover them). The axis of largest
// separation (least penetration) wins, face axes preferred (kEdgeAxisRelativeBias) and,
// between equally separating faces, the larger one (then box a's). A face axis gives a reference
// face; the incident face (the other box's face most anti-parallel to it) is clipped against the
// reference face's four side planes (Sutherland–Hodgman) and every clipped point below the margin
// is kept, then reduced to four. An edge axis gives one point: the closest points of the two
// supporting edges (Ericson §5.1.9). Separated boxes (0 ≤ separation < margin) take the same path,
// so contacts report a positive gap along the best separating axis; but where an edge axis
// separates them and the edges' closest points fall off the edges, that gap is only a lower
// bound, and the contact is the boxes' exact closest pair (closest_points_of_disjoint_boxes).
// The feature ids written here (and box_plane's) are decoded by collision/box_features.cpp for
// the backward pass: a change of numbering must be made there too.
template <typename T>
void box_box(const PosedShapeT<T>& shape_a, const PosedShapeT<T>& shape_b, double margin,
             ContactWriter<T>& contacts) {
  const BoxFrame<T> a = box_frame(shape_a);
  const BoxFrame<T> b = box_frame(shape_b);
  const Vec3T<T> offset = a.center - b.center;  // from b towards a
  const double tie_tolerance =
      kRelativeTieTolerance * std::max(largest_value(a.half), largest_value(b.half));

  T face_separation[2] = {T(-kInfinity), T(-kInfinity)};  // [0]: faces of a, [1]: faces of b
  int face_axis[2] = {0, 0};
  for (int k = 0; k < 3; ++k) {
    const T separation_a =
        absolute(dot(offset, a.axis[k])) - a.half[k] - projected_radius(b, a.axis[k]);
    if (separation_a > face_separation[0]) {
      face_separation[0] = separation_a;
      face_axis[0] = k;
    }
    const T separation_b =
        absolute(dot(offset, b.axis[k])) - b.half[k] - projected_radius(a, b.axis[k]);
    if (separation_b > face_separation[1]) {
      face_separation[1] = separation_b;
      face_axis[1] = k;
    }
  }
  // Equal separations (a box resting on another): the larger face is the reference, which
  // is also the one a slightly tilted stack picks, so the manifold's ids do not flicker.
  bool reference_is_b;
  if (absolute(face_separation[1] - face_separation[0]) > tie_tolerance) {
    reference_is_b = face_separation[1] > face_separation[0];
  } else {
    const auto face_area = [](const BoxFrame<T>& box, int axis) {
      return box.half[(axis + 1) % 3] * box.half[(axis + 2) % 3];
    };
    const T area_a = face_area(a, face_axis[0]);
    const T area_b = face_area(b, face_axis[1]);
    reference_is_b = area_b > area_a * (1.0 + kRelativeTieTolerance);
  }
  const T best_face_separation = face_separation[reference_is_b ? 1 : 0];

  int edge_axis_a = -1, edge_axis_b = -1;
  Vec3T<T> edge_normal;
  T edge_separation = T(-kInfinity);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const Vec3T<T> axis_cross = cross(a.axis[i], b.axis[j]);
      const T length = norm(axis_cross);
      if (length < kParallelSine) continue;
      const Vec3T<T> axis = axis_cross / length;
      const T separation =
          absolute(dot(offset, axis)) - projected_radius(a, axis) - projected_radius(b, axis);
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
                            kEdgeAxisRelativeBias * absolute(best_face_separation) + tie_tolerance;
  if ((use_edge ? edge_separation : best_face_separation) >= margin) return;

  if (use_edge) {
    const Vec3T<T> contact_normal = dot(edge_normal, offset) < 0.0 ? -edge_normal : edge_normal;
    // The edge of a extreme along −normal and the edge of b extreme along +normal.
    const auto supporting_edge = [&contact_normal](const BoxFrame<T>& box, int edge_axis,
                                                   double direction, Vec3T<T>& edge_start,
                                                   Vec3T<T>& edge_end) {
      int edge_id = 4 * edge_axis;
      for (int i = 1; i <= 2; ++i)
        if (side_of(direction * dot(box.axis[(edge_axis + i) % 3], contact_normal)) > 0.0) edge_id |= i;
      box_edge(box, edge_id, edge_start, edge_end);
      return edge_id;
    };
    Vec3T<T> a_start, a_end, b_start, b_end;
    const int edge_id_a = supporting_edge(a, edge_axis_a, -1.0, a_start, a_end);
    const int edge_id_b = supporting_edge(b, edge_axis_b, 1.0, b_start, b_end);
    const SegmentClosestPoints<T> closest =
        closest_points_of_segments(a_start, a_end, b_start, b_end);
    const bool within_both_edges = closest.s > 0.0 && closest.s < 1.0 && closest.t > 0.0 && closest.t < 1.0;
    if (edge_separation > 0.0 && !within_both_edges) {
      // Apart, and the supporting edges' lines meet their closest points off the edges: the
      // separation is then only a lower bound and the edges are not the closest features.
      const BoxClosestPair<T> pair = closest_points_of_disjoint_boxes(a, b);
      contacts.add(pair.on_a, pair.on_b, (pair.on_a - pair.on_b) / pair.distance, pair.distance, pair.feature);
      return;
    }
    contacts.add(closest.on_first, closest.on_second, contact_normal, edge_separation,
                 2880 + 12 * edge_id_a + edge_id_b);
    return;
  }

  const BoxFrame<T>& reference = reference_is_b ? b : a;
  const BoxFrame<T>& incident = reference_is_b ? a : b;
  const int reference_axis = face_axis[reference_is_b ? 1 : 0];
  const double reference_side =
      side_of(dot(incident.center - reference.center, reference.axis[reference_axis]));
  const Vec3T<T> reference_normal = reference.axis[reference_axis] * reference_side;
  const Vec3T<T> reference_center =
      reference.center + reference_normal * reference.half[reference_axis];

  int incident_axis = 0;
  T best_alignment = T(-1.0);
  for (int k = 0; k < 3; ++k) {
    const T alignment = absolute(dot(incident.axis[k], reference_normal));
    if (alignment > best_alignment) {
      best_alignment = alignment;
      incident_axis = k;
    }
  }
  const double incident_side = -side_of(dot(incident.axis[incident_axis], reference_normal));
  const Vec3T<T> incident_center =
      incident.center +
      incident.axis[incident_axis] * (incident_side * incident.half[incident_axis]);
  const int incident_u = (incident_axis + 1) % 3;
  const int incident_v = (incident_axis + 2) % 3;
  const Vec3T<T> half_u = incident.axis[incident_u] * incident.half[incident_u];
  const Vec3T<T> half_v = incident.axis[incident_v] * incident.half[incident_v];

  ClipVertex<T> polygon[kMaxCandidates];
  ClipVertex<T> scratch[kMaxCandidates];
  polygon[0] = {incident_center + half_u + half_v, 0, 0};
  polygon[1] = {incident_center - half_u + half_v, 1, 1};
  polygon[2] = {incident_center - half_u - half_v, 2, 2};
  polygon[3] = {incident_center + half_u - half_v, 3, 3};
  int count = 4;

  const int reference_u = (reference_axis + 1) % 3;
  const int reference_v = (reference_axis + 2) % 3;
  const Vec3T<T>& direction_u = reference.axis[reference_u];
  const Vec3T<T>& direction_v = reference.axis[reference_v];
  const T center_u = dot(direction_u, reference_center);
  const T center_v = dot(direction_v, reference_center);
  const Vec3T<T> plane_normals[4] = {direction_u, -direction_u, direction_v, -direction_v};
  const T plane_offsets[4] = {
      center_u + reference.half[reference_u], -center_u + reference.half[reference_u],
      center_v + reference.half[reference_v], -center_v + reference.half[reference_v]};
  for (int plane = 0; plane < 4 && count > 0; ++plane) {
    count = clip_polygon(polygon, count, plane_normals[plane], plane_offsets[plane], plane,
                         4 + plane, scratch, kMaxCandidates, clipped_point_id);
    std::copy(scratch, scratch + count, polygon);
  }

  const int face_pair = 6 * ((reference_is_b ? 6 : 0) + face_id(reference_axis, reference_side)) +
                        face_id(incident_axis, incident_side);
  const Vec3T<T> contact_normal = reference_is_b ? reference_normal : -reference_normal;
  const auto make_contact = [&](const Vec3T<T>& on_incident, const T& gap, int feature) {
    const Vec3T<T> on_reference = on_incident - reference_normal * gap;
    return ContactPointT<T>{(on_incident + on_reference) * 0.5, contact_normal, gap, feature};
  };
  ContactPointT<T> candidates[kMaxCandidates];
  int candidate_count = 0;
  for (int i = 0; i < count; ++i) {
    const T gap = dot(reference_normal, polygon[i].point - reference_center);
    if (gap >= margin) continue;
    candidates[candidate_count++] =
        make_contact(polygon[i].point, gap, 40 * face_pair + polygon[i].id);
  }
  if (candidate_count == 0) {
    // The incident face's clipped part is beyond the margin although the separation along
    // the axis is not (its closest part lies outside the reference face's prism): report
    // the incident box's deepest vertex so the pair is not missed.
    int deepest_vertex = 0;
    T deepest_gap = T(kInfinity);
    for (int vertex = 0; vertex < 8; ++vertex) {
      const T gap = dot(reference_normal, box_corner(incident, vertex) - reference_center);
      if (gap < deepest_gap) {
        deepest_gap = gap;
        deepest_vertex = vertex;
      }
    }
    if (deepest_gap >= margin) return;
    contacts.add(make_contact(box_corner(incident, deepest_vertex), deepest_gap,
                              3024 + 8 * (face_pair / 6) + deepest_vertex));
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
    case ShapeType::Cylinder:  // a cylinder collides as a capsule (model.hpp)
      return 1;
    case ShapeType::Box:
      return 2;
    case ShapeType::ConvexMesh:
      return 3;
    case ShapeType::Plane:
      return 4;
    case ShapeType::Ellipsoid:  // dispatched before the ranks are compared (collide)
      return 5;
  }
  return 4;
}

// a and b in canonical order (shape_rank(a) ≤ shape_rank(b)).
template <typename T>
void collide_ordered(const PosedShapeT<T>& a, const PosedShapeT<T>& b, double margin,
                     ContactWriter<T>& contacts) {
  switch (a.type) {
    case ShapeType::Sphere:
      switch (b.type) {
        case ShapeType::Sphere:
          return sphere_sphere(a, b, margin, contacts);
        case ShapeType::Capsule:
        case ShapeType::Cylinder:
          return sphere_capsule(a, b, margin, contacts);
        case ShapeType::Box:
          return sphere_box(a, b, margin, contacts);
        case ShapeType::Plane:
          return sphere_plane(a, b, margin, contacts);
        case ShapeType::ConvexMesh:
          return sphere_convex_mesh(a, b, margin, contacts);
        case ShapeType::Ellipsoid:  // collide dispatches ellipsoids first
          return;
      }
      return;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      switch (b.type) {
        case ShapeType::Capsule:
        case ShapeType::Cylinder:
          return capsule_capsule(a, b, margin, contacts);
        case ShapeType::Box:
          return capsule_box(a, b, margin, contacts);
        case ShapeType::Plane:
          return capsule_plane(a, b, margin, contacts);
        case ShapeType::ConvexMesh:
          return capsule_convex_mesh(a, b, margin, contacts);
        case ShapeType::Sphere:
        case ShapeType::Ellipsoid:
          return;
      }
      return;
    case ShapeType::Box:
      if (b.type == ShapeType::Box) return box_box(a, b, margin, contacts);
      if (b.type == ShapeType::Plane) return box_plane(a, b, margin, contacts);
      if (b.type == ShapeType::ConvexMesh) return polyhedron_polyhedron(a, b, margin, contacts);
      return;
    case ShapeType::ConvexMesh:
      if (b.type == ShapeType::ConvexMesh) return polyhedron_polyhedron(a, b, margin, contacts);
      if (b.type == ShapeType::Plane) return convex_mesh_plane(a, b, margin, contacts);
      return;
    case ShapeType::Plane:
    case ShapeType::Ellipsoid:
      return;  // plane–plane: infinite planes have no contact points; ellipsoids: see collide
  }
}

}  // namespace

template <typename T>
int collide(const PosedShapeT<T>& a, const PosedShapeT<T>& b, double margin, ContactPointT<T> out[kMaxPairContacts],
            int max_points) {
  ContactWriter<T> contacts(out, std::clamp(max_points, 1, kMaxPairContacts));
  // An ellipsoid against anything: ellipsoid_contacts.cpp, with the ellipsoid first.
  if (a.type == ShapeType::Ellipsoid) {
    ellipsoid_contact(a, b, margin, contacts);
    return contacts.count();
  }
  if (b.type == ShapeType::Ellipsoid) {
    ellipsoid_contact(b, a, margin, contacts);
    for (int i = 0; i < contacts.count(); ++i) out[i].normal = -out[i].normal;
    return contacts.count();
  }
  if (shape_rank(a.type) <= shape_rank(b.type)) {
    collide_ordered(a, b, margin, contacts);
    return contacts.count();
  }
  collide_ordered(b, a, margin, contacts);
  for (int i = 0; i < contacts.count(); ++i) out[i].normal = -out[i].normal;
  return contacts.count();
}

// The scalars the narrow phase runs on: the simulation's double and the backward pass's
// 18-direction dual number (adjoint/contact_geometry.hpp: two body poses and two sizes).
template int collide<double>(const PosedShapeT<double>&, const PosedShapeT<double>&, double,
                             ContactPointT<double>*, int);
template int collide<Dual<18>>(const PosedShapeT<Dual<18>>&, const PosedShapeT<Dual<18>>&,
                               double, ContactPointT<Dual<18>>*, int);

}  // namespace diffphys::collision
