// tests/narrow_phase_test.cpp — tests of collision/narrow_phase.cpp.
//
// Closed forms, not snapshots: every shape pair in both argument orders against
// hand-computed gaps, normals and midpoints, repeated under random rigid transforms of the
// whole scene (gap invariant, normal and position transformed); the margin; the manifolds
// of resting boxes and capsules; feature ids under small perturbations; and, on random
// poses, agreement with independent distance computations (golden-section search, exact
// box–box distance) and collide(b, a) mirroring collide(a, b).
#include "collision/broad_phase.hpp"
#include "collision/narrow_phase.hpp"
#include "collision/contact_kernels.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace diffphys::collision {
namespace {

constexpr double kTolerance = 1e-9;
const double kSqrt2 = std::sqrt(2.0);

// ---------------------------------------------------------------------------------------
// Building posed shapes.

PosedShape posed(ShapeType type, const Vec3& position, const Quat& orientation, const Vec3& size) {
  PosedShape shape;
  shape.type = type;
  shape.position = position;
  shape.orientation = orientation.normalized();
  shape.rotation = shape.orientation.to_matrix();
  shape.size = size;
  return shape;
}

// The rotation taking +z onto `direction`.
Quat rotation_from_z(const Vec3& direction) {
  const Vec3 unit = normalized(direction);
  const Vec3 axis = cross(Vec3{0, 0, 1}, unit);
  const double sine = norm(axis);
  if (sine < 1e-12) return unit.z > 0 ? Quat::identity() : Quat::from_axis_angle({1, 0, 0}, std::numbers::pi);
  return Quat::from_axis_angle(axis / sine, std::atan2(sine, unit.z));
}

PosedShape make_sphere(const Vec3& center, double radius) {
  return posed(ShapeType::Sphere, center, Quat::identity(), {radius, 0, 0});
}
PosedShape make_box(const Vec3& center, const Vec3& half_extents,
                    const Quat& orientation = Quat::identity()) {
  return posed(ShapeType::Box, center, orientation, half_extents);
}
// A capsule whose segment runs along `axis_direction` through `center`.
PosedShape make_capsule(const Vec3& center, const Vec3& axis_direction, double radius,
                        double half_length) {
  return posed(ShapeType::Capsule, center, rotation_from_z(axis_direction),
               {radius, half_length, 0});
}
PosedShape make_plane(const Vec3& point, const Vec3& normal) {
  return posed(ShapeType::Plane, point, rotation_from_z(normal), {});
}

// The complementarity formulation's limit (4 points a pair) unless told otherwise.
std::vector<ContactPoint> collide_all(const PosedShape& a, const PosedShape& b, double margin,
                                      int max_points = pair_contact_limit(SolverSettings{})) {
  ContactPoint out[kMaxPairContacts];
  const int count = collide(a, b, margin, out, max_points);
  EXPECT_GE(count, 0);
  EXPECT_LE(count, max_points);
  return std::vector<ContactPoint>(out, out + std::clamp(count, 0, kMaxPairContacts));
}

struct RigidTransform {
  Quat rotation;
  Vec3 translation;
  Vec3 apply(const Vec3& point) const { return rotation.rotate(point) + translation; }
};

PosedShape transformed(const PosedShape& shape, const RigidTransform& transform) {
  return posed(shape.type, transform.apply(shape.position), transform.rotation * shape.orientation,
               shape.size);
}

Quat random_rotation(std::mt19937_64& rng) {
  std::normal_distribution<double> gaussian;
  return Quat{gaussian(rng), gaussian(rng), gaussian(rng), gaussian(rng)}.normalized();
}
Vec3 random_vector(std::mt19937_64& rng, double low, double high) {
  std::uniform_real_distribution<double> uniform(low, high);
  return {uniform(rng), uniform(rng), uniform(rng)};
}
Vec3 random_direction(std::mt19937_64& rng) { return random_rotation(rng).rotate({0, 0, 1}); }

// ---------------------------------------------------------------------------------------
// Comparing contacts with expected ones.

struct ExpectedContact {
  Vec3 position;
  Vec3 normal;  // from b towards a, for the order (a, b)
  double gap;
};

void expect_vec_near(const Vec3& actual, const Vec3& expected, double tolerance, const char* what) {
  EXPECT_NEAR(actual.x, expected.x, tolerance) << what;
  EXPECT_NEAR(actual.y, expected.y, tolerance) << what;
  EXPECT_NEAR(actual.z, expected.z, tolerance) << what;
}

// Each expected contact matched to the nearest reported one (by position); normals of the
// reported contacts are multiplied by normal_sign before comparing.
void expect_contacts_match(const std::vector<ContactPoint>& actual,
                           const std::vector<ExpectedContact>& expected, double normal_sign,
                           double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  std::vector<bool> used(actual.size(), false);
  for (const ExpectedContact& want : expected) {
    int nearest = -1;
    for (int i = 0; i < static_cast<int>(actual.size()); ++i) {
      if (used[i]) continue;
      if (nearest < 0 || squared_norm(actual[i].position - want.position) <
                             squared_norm(actual[nearest].position - want.position))
        nearest = i;
    }
    ASSERT_GE(nearest, 0);
    used[nearest] = true;
    const ContactPoint& got = actual[nearest];
    expect_vec_near(got.position, want.position, tolerance, "position");
    expect_vec_near(got.normal * normal_sign, want.normal, tolerance, "normal");
    EXPECT_NEAR(got.gap, want.gap, tolerance) << "gap";
  }
}

// collide(a, b) and collide(b, a) against the expected contacts (given for (a, b)), as posed
// and after random rigid transforms of the whole scene.
void expect_pair(const PosedShape& a, const PosedShape& b, double margin,
                 const std::vector<ExpectedContact>& expected, double tolerance = kTolerance) {
  std::mt19937_64 rng(20240601);
  for (int trial = 0; trial < 8; ++trial) {
    SCOPED_TRACE(trial == 0 ? "as posed" : "random rigid transform #" + std::to_string(trial));
    RigidTransform transform{Quat::identity(), Vec3{}};
    if (trial > 0) transform = {random_rotation(rng), random_vector(rng, -5.0, 5.0)};
    const PosedShape moved_a = transformed(a, transform);
    const PosedShape moved_b = transformed(b, transform);
    std::vector<ExpectedContact> moved_expected;
    for (const ExpectedContact& contact : expected)
      moved_expected.push_back({transform.apply(contact.position),
                                transform.rotation.rotate(contact.normal), contact.gap});
    {
      SCOPED_TRACE("collide(a, b)");
      expect_contacts_match(collide_all(moved_a, moved_b, margin), moved_expected, 1.0, tolerance);
    }
    {
      SCOPED_TRACE("collide(b, a)");
      expect_contacts_match(collide_all(moved_b, moved_a, margin), moved_expected, -1.0, tolerance);
    }
  }
}

std::vector<int> sorted_features(const std::vector<ContactPoint>& contacts) {
  std::vector<int> features;
  for (const ContactPoint& contact : contacts) features.push_back(contact.feature);
  std::sort(features.begin(), features.end());
  return features;
}

// A pose nudged by a small rotation (about the centre) and translation.
PosedShape nudged(const PosedShape& shape, const Vec3& rotation_vector, const Vec3& translation) {
  return posed(shape.type, shape.position + translation,
               Quat::from_rotation_vector(rotation_vector) * shape.orientation, shape.size);
}

// ---------------------------------------------------------------------------------------
// Sphere pairs.

TEST(NarrowPhaseSphereSphere, SeparatedWithinMarginReportsPositiveGap) {
  const PosedShape a = make_sphere({0, 0, 0}, 1.0);
  const PosedShape b = make_sphere({3, 0, 0}, 1.5);
  // Surface points (1, 0, 0) on a and (1.5, 0, 0) on b.
  expect_pair(a, b, 1.0, {{{1.25, 0, 0}, {-1, 0, 0}, 0.5}});
  expect_pair(a, b, 0.4, {});
}

TEST(NarrowPhaseSphereSphere, Penetrating) {
  const PosedShape a = make_sphere({1, 2, 3}, 0.5);
  const PosedShape b = make_sphere({1.6, 2.8, 3}, 0.7);
  // Centres 1 apart along (0.6, 0.8, 0): gap 1 − 1.2; surface points a + 0.5·u, b − 0.7·u.
  const Vec3 u{0.6, 0.8, 0};
  const Vec3 on_a = Vec3{1, 2, 3} + u * 0.5;
  const Vec3 on_b = Vec3{1.6, 2.8, 3} - u * 0.7;
  expect_pair(a, b, 0.01, {{(on_a + on_b) * 0.5, -u, -0.2}});
}

TEST(NarrowPhaseSpherePlane, PenetratingAndTiltedPlane) {
  expect_pair(make_sphere({1, 2, 0.8}, 1.0), make_plane({0, 0, 0}, {0, 0, 1}), 0.01,
              {{{1, 2, -0.1}, {0, 0, 1}, -0.2}});
  const Vec3 n = normalized(Vec3{0, 1, 1});
  const Vec3 center{0, 1, 2};
  const double height = dot(n, center - Vec3{0, 0, 1});  // √2
  expect_pair(make_sphere(center, 0.5), make_plane({0, 0, 1}, n), 2.0,
              {{center - n * ((0.5 + height) / 2), n, height - 0.5}});
}

TEST(NarrowPhaseSpherePlane, Margin) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  expect_pair(make_sphere({0, 0, 1.2}, 1.0), plane, 0.3, {{{0, 0, 0.1}, {0, 0, 1}, 0.2}});
  expect_pair(make_sphere({0, 0, 1.2}, 1.0), plane, 0.1, {});
}

TEST(NarrowPhaseSphereBox, FaceEdgeVertexAndInside) {
  const PosedShape box = make_box({0, 0, 0}, {1, 2, 3});
  // Face +x.
  expect_pair(make_sphere({2.5, 0.5, -1}, 1.0), box, 1.0, {{{1.25, 0.5, -1}, {1, 0, 0}, 0.5}});
  // Edge (x = 1, y = 2): centre 1 away along (0.6, 0.8, 0).
  expect_pair(make_sphere({1.6, 2.8, 0}, 0.5), box, 1.0, {{{1.15, 2.2, 0}, {0.6, 0.8, 0}, 0.5}});
  // Vertex (1, 2, 3): centre 2 away along (1, 1, 1)/√3.
  const Vec3 u = normalized(Vec3{1, 1, 1});
  expect_pair(make_sphere(Vec3{1, 2, 3} + u * 2.0, 1.0), box, 1.5,
              {{Vec3{1, 2, 3} + u * 0.5, u, 1.0}});
  // Centre inside, 0.2 from the +x face: pushed out through it.
  expect_pair(make_sphere({0.8, 0.5, 0}, 0.5), box, 0.01, {{{0.65, 0.5, 0}, {1, 0, 0}, -0.7}});
  // Beyond the margin.
  expect_pair(make_sphere({2.5, 0.5, -1}, 1.0), box, 0.4, {});
}

TEST(NarrowPhaseSphereBox, RotatedBox) {
  const Quat orientation = Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 4);
  const PosedShape box = make_box({1, 1, 0}, {1, 1, 1}, orientation);
  // The box's +x face normal is (1, 1, 0)/√2; a sphere 0.5 beyond that face.
  const Vec3 n = normalized(Vec3{1, 1, 0});
  const Vec3 face_point = Vec3{1, 1, 0} + n;
  expect_pair(make_sphere(face_point + n * 0.8, 0.3), box, 1.0, {{face_point + n * 0.25, n, 0.5}});
}

TEST(NarrowPhaseSphereCapsule, SideAndEnd) {
  const PosedShape capsule = make_capsule({0, 0, 0}, {0, 0, 1}, 0.5, 1.0);
  expect_pair(make_sphere({2, 0, 0.5}, 1.0), capsule, 1.0, {{{0.75, 0, 0.5}, {1, 0, 0}, 0.5}});
  expect_pair(make_sphere({0, 0, 3}, 1.0), capsule, 1.0, {{{0, 0, 1.75}, {0, 0, 1}, 0.5}});
  expect_pair(make_sphere({0, 0, 3}, 1.0), capsule, 0.4, {});
  // Capsule along x, sphere penetrating its side.
  expect_pair(make_sphere({0.5, 0.9, 0}, 0.5), make_capsule({0, 0, 0}, {1, 0, 0}, 0.5, 1.0), 0.01,
              {{{0.5, 0.45, 0}, {0, 1, 0}, -0.1}});
}

// ---------------------------------------------------------------------------------------
// Capsule pairs.

TEST(NarrowPhaseCapsulePlane, LyingCapsuleHasTwoPoints) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  expect_pair(make_capsule({0, 0, 0.45}, {1, 0, 0}, 0.5, 1.0), plane, 0.01,
              {{{-1, 0, -0.025}, {0, 0, 1}, -0.05}, {{1, 0, -0.025}, {0, 0, 1}, -0.05}});
}

TEST(NarrowPhaseCapsulePlane, TiltedCapsuleHasOnePoint) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  const double angle = 0.3;
  const Vec3 direction{std::cos(angle), 0, std::sin(angle)};
  const Vec3 center{0, 0, 1};
  const Vec3 lower_end = center - direction;  // half length 1
  const double radius = 0.8;
  const double gap = lower_end.z - radius;  // 1 − sin 0.3 − 0.8 < 0; the upper end is far
  expect_pair(make_capsule(center, direction, radius, 1.0), plane, 0.1,
              {{{lower_end.x, 0, (gap) / 2}, {0, 0, 1}, gap}});
  expect_pair(make_capsule({0, 0, 2}, direction, radius, 1.0), plane, 0.1, {});
}

TEST(NarrowPhaseCapsuleCapsule, CrossedHaveOnePoint) {
  const PosedShape a = make_capsule({0, 0, 0.9}, {1, 0, 0}, 0.5, 1.0);
  const PosedShape b = make_capsule({0, 0, 0}, {0, 1, 0}, 0.5, 1.0);
  expect_pair(a, b, 0.01, {{{0, 0, 0.45}, {0, 0, 1}, -0.1}});
}

TEST(NarrowPhaseCapsuleCapsule, SkewSeparatedWithinMargin) {
  const PosedShape a = make_capsule({0.3, 0.2, 1.05}, {0, 1, 0}, 0.5, 1.0);
  const PosedShape b = make_capsule({0, 0, 0}, {1, 0, 0}, 0.5, 1.0);
  expect_pair(a, b, 0.1, {{{0.3, 0, 0.525}, {0, 0, 1}, 0.05}});
  expect_pair(a, b, 0.04, {});
}

TEST(NarrowPhaseCapsuleCapsule, ParallelOverlapHasTwoPointsAtTheOverlapEnds) {
  // Segments x ∈ [−1, 1] (a) and [−0.5, 1.5] (b): overlap x ∈ [−0.5, 1].
  const PosedShape a = make_capsule({0, 0, 0.9}, {1, 0, 0}, 0.5, 1.0);
  const PosedShape b = make_capsule({0.5, 0, 0}, {1, 0, 0}, 0.5, 1.0);
  expect_pair(a, b, 0.01, {{{-0.5, 0, 0.45}, {0, 0, 1}, -0.1}, {{1, 0, 0.45}, {0, 0, 1}, -0.1}});
  // Antiparallel axes and a sideways offset: normal along the perpendicular offset.
  const PosedShape c = make_capsule({0, 0.3, 0.4}, {-1, 0, 0}, 0.5, 1.0);
  const Vec3 n{0, 0.6, 0.8};
  expect_pair(c, b, 0.01,
              {{Vec3{-0.5, 0, 0} + n * 0.25, n, -0.5}, {Vec3{1, 0, 0} + n * 0.25, n, -0.5}});
}

TEST(NarrowPhaseCapsuleCapsule, CollinearEndToEnd) {
  const PosedShape a = make_capsule({2.05, 0, 0}, {1, 0, 0}, 0.5, 1.0);
  const PosedShape b = make_capsule({0, 0, 0}, {1, 0, 0}, 0.5, 1.0);
  // Closest segment points (1.05, 0, 0) and (1, 0, 0).
  expect_pair(a, b, 0.01, {{{1.025, 0, 0}, {1, 0, 0}, -0.95}});
}

TEST(NarrowPhaseCapsuleBox, LyingFlatOnFaceHasTwoPoints) {
  const PosedShape box = make_box({0, 0, 0}, {2, 1, 0.5});
  expect_pair(make_capsule({0, 0, 0.74}, {1, 0, 0}, 0.25, 1.0), box, 0.05,
              {{{-1, 0, 0.495}, {0, 0, 1}, -0.01}, {{1, 0, 0.495}, {0, 0, 1}, -0.01}});
  // Half over the edge x = 2: the points are the ends of the part above the face.
  expect_pair(make_capsule({2, 0, 0.74}, {1, 0, 0}, 0.25, 1.0), box, 0.05,
              {{{1, 0, 0.495}, {0, 0, 1}, -0.01}, {{2, 0, 0.495}, {0, 0, 1}, -0.01}});
  // Upright against the +x face, separated by 0.05.
  expect_pair(make_capsule({2.3, 0, 0}, {0, 0, 1}, 0.25, 0.4), box, 0.1,
              {{{2.025, 0, -0.4}, {1, 0, 0}, 0.05}, {{2.025, 0, 0.4}, {1, 0, 0}, 0.05}});
  expect_pair(make_capsule({2.3, 0, 0}, {0, 0, 1}, 0.25, 0.4), box, 0.04, {});
}

TEST(NarrowPhaseCapsuleBox, EndNearVertex) {
  const PosedShape box = make_box({0, 0, 0}, {2, 1, 0.5});
  const Vec3 vertex{2, 1, 0.5};
  const Vec3 u = normalized(Vec3{1, 1, 1});
  // Lower segment end 0.5 from the vertex along u; radius 0.25.
  expect_pair(make_capsule(vertex + u * 1.5, u, 0.25, 1.0), box, 0.3,
              {{vertex + u * 0.125, u, 0.25}});
}

TEST(NarrowPhaseCapsuleBox, PenetratingSegment) {
  const PosedShape box = make_box({0, 0, 0}, {2, 1, 0.5});
  // Upright capsule whose lower segment end is 0.1 inside the top face.
  expect_pair(make_capsule({0.3, 0.2, 1.4}, {0, 0, 1}, 0.25, 1.0), box, 0.05,
              {{{0.3, 0.2, 0.325}, {0, 0, 1}, -0.35}});
  // Lying segment 0.1 below the top face: pushed up, two points.
  expect_pair(make_capsule({0, 0, 0.4}, {1, 0, 0}, 0.25, 1.0), box, 0.05,
              {{{-1, 0, 0.325}, {0, 0, 1}, -0.35}, {{1, 0, 0.325}, {0, 0, 1}, -0.35}});
  // Segment cutting the edge (x = 2, z = 0.5) diagonally, 0.05 deep: the push-out is along
  // the edge axis (1, 0, 1)/√2, with the contact between that edge and the segment.
  const Vec3 axis = normalized(Vec3{1, 0, 1});
  const double depth = 0.05;
  const Vec3 edge_point{2, 0, 0.5};
  expect_pair(make_capsule(edge_point - axis * depth, {1, 0, -1}, 0.1, 0.5), box, 0.05,
              {{edge_point - axis * ((depth + 0.1) / 2), axis, -depth - 0.1}});
}

// ---------------------------------------------------------------------------------------
// Box pairs.

TEST(NarrowPhaseBoxPlane, RestingBoxHasFourCornerPoints) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  const PosedShape box = make_box({0.3, -0.2, 0.25}, {1, 0.5, 0.25});
  std::vector<ExpectedContact> expected;
  for (double x : {-0.7, 1.3})
    for (double y : {-0.7, 0.3}) expected.push_back({{x, y, 0}, {0, 0, 1}, 0.0});
  expect_pair(box, plane, 0.01, expected);
}

TEST(NarrowPhaseBoxPlane, EdgeDownAndVertexDown) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  // Rotated 45° about x: the lowest edge runs along x at z = −0.01.
  const PosedShape edge_down = make_box({0, 0, 0.5 * kSqrt2 - 0.01}, {1, 0.5, 0.5},
                                        Quat::from_axis_angle({1, 0, 0}, std::numbers::pi / 4));
  expect_pair(edge_down, plane, 0.05,
              {{{-1, 0, -0.005}, {0, 0, 1}, -0.01}, {{1, 0, -0.005}, {0, 0, 1}, -0.01}});
  // Generic rotation: the lowest vertex is centre − Σ_j sign(R_zj) h_j R_j.
  const Quat orientation = Quat::from_axis_angle(normalized(Vec3{1, 2, 3}), 0.7);
  const Mat3 rotation = orientation.to_matrix();
  const Vec3 half{0.6, 0.4, 0.3};
  Vec3 lowest_offset;
  for (int j = 0; j < 3; ++j)
    lowest_offset -= rotation.col(j) * (rotation(2, j) > 0 ? half[j] : -half[j]);
  const Vec3 center = Vec3{0.5, -0.5, 0} - Vec3{0, 0, lowest_offset.z + 0.02};
  const Vec3 lowest = center + lowest_offset;  // at z = −0.02
  expect_pair(make_box(center, half, orientation), plane, 0.01,
              {{lowest + Vec3{0, 0, 0.01}, {0, 0, 1}, -0.02}});
}

TEST(NarrowPhaseBoxPlane, SubmergedBoxKeepsItsFourDeepestVertices) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  std::vector<ExpectedContact> expected;
  for (double x : {-1.0, 1.0})
    for (double y : {-1.0, 1.0}) expected.push_back({{x, y, -3}, {0, 0, 1}, -6.0});
  expect_pair(make_box({0, 0, -5}, {1, 1, 1}), plane, 0.01, expected);
}

TEST(NarrowPhaseBoxBox, SmallBoxOnLargeBoxHasFourPointsAtItsCorners) {
  const PosedShape top = make_box({0.3, 0.1, 0.99}, {0.5, 0.5, 0.5});
  const PosedShape bottom = make_box({0, 0, 0}, {2, 2, 0.5});
  std::vector<ExpectedContact> expected;
  for (double x : {-0.2, 0.8})
    for (double y : {-0.4, 0.6}) expected.push_back({{x, y, 0.495}, {0, 0, 1}, -0.01});
  expect_pair(top, bottom, 0.01, expected);
}

TEST(NarrowPhaseBoxBox, SeparatedFaceToFaceWithinMarginAndBeyond) {
  const PosedShape top = make_box({0.3, 0.1, 1.02}, {0.5, 0.5, 0.5});
  const PosedShape bottom = make_box({0, 0, 0}, {2, 2, 0.5});
  std::vector<ExpectedContact> expected;
  for (double x : {-0.2, 0.8})
    for (double y : {-0.4, 0.6}) expected.push_back({{x, y, 0.51}, {0, 0, 1}, 0.02});
  expect_pair(top, bottom, 0.05, expected);
  expect_pair(top, bottom, 0.01, {});
}

// Twice the area of the convex polygon through the points (projected on xy), in angular order.
double polygon_area_xy(std::vector<Vec3> points) {
  Vec3 center;
  for (const Vec3& p : points) center += p / static_cast<double>(points.size());
  std::sort(points.begin(), points.end(), [&](const Vec3& p, const Vec3& q) {
    return std::atan2(p.y - center.y, p.x - center.x) < std::atan2(q.y - center.y, q.x - center.x);
  });
  double twice_area = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Vec3& p = points[i];
    const Vec3& q = points[(i + 1) % points.size()];
    twice_area += p.x * q.y - q.x * p.y;
  }
  return 0.5 * std::abs(twice_area);
}

TEST(NarrowPhaseBoxBox, BoxTurned45DegreesHasAManifoldInsideBoth) {
  const Quat turn = Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 4);
  const PosedShape top = make_box({0, 0, 0.99}, {0.5, 0.5, 0.5}, turn);
  const PosedShape bottom = make_box({0, 0, 0}, {0.5, 0.5, 0.5});
  for (int order = 0; order < 2; ++order) {
    SCOPED_TRACE(order == 0 ? "collide(top, bottom)" : "collide(bottom, top)");
    const std::vector<ContactPoint> contacts =
        order == 0 ? collide_all(top, bottom, 0.01) : collide_all(bottom, top, 0.01);
    ASSERT_EQ(contacts.size(), 4u);  // the clipped octagon reduced to four points
    std::vector<Vec3> points;
    for (const ContactPoint& contact : contacts) {
      expect_vec_near(contact.normal, Vec3{0, 0, order == 0 ? 1.0 : -1.0}, kTolerance, "normal");
      EXPECT_NEAR(contact.gap, -0.01, kTolerance);
      EXPECT_NEAR(contact.position.z, 0.495, kTolerance);
      // Inside the bottom square |x|, |y| ≤ 0.5 and the turned one |x| + |y| ≤ √2/2.
      EXPECT_LE(std::abs(contact.position.x), 0.5 + kTolerance);
      EXPECT_LE(std::abs(contact.position.y), 0.5 + kTolerance);
      EXPECT_LE(std::abs(contact.position.x) + std::abs(contact.position.y),
                0.5 * kSqrt2 + kTolerance);
      points.push_back(contact.position);
    }
    // The octagon has area 2(√2 − 1) ≈ 0.83; the best four of its vertices span 2 − √2 ≈ 0.59.
    EXPECT_GT(polygon_area_xy(points), 0.55);
  }
}

// The convex formulation's limit (pair_contact_limit) keeps the whole octagon: its 8 vertices,
// each where an edge of one square crosses an edge of the other, spanning its full area.
TEST(NarrowPhaseBoxBox, BoxTurned45DegreesKeepsTheWholeOctagonWhenAllowedEight) {
  const Quat turn = Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 4);
  const PosedShape top = make_box({0, 0, 0.99}, {0.5, 0.5, 0.5}, turn);
  const PosedShape bottom = make_box({0, 0, 0}, {0.5, 0.5, 0.5});
  SolverSettings convex;
  convex.formulation = Formulation::Convex;
  ASSERT_EQ(pair_contact_limit(convex), 8);
  const std::vector<ContactPoint> contacts = collide_all(top, bottom, 0.01, pair_contact_limit(convex));
  ASSERT_EQ(contacts.size(), 8u);
  std::vector<Vec3> points;
  for (const ContactPoint& contact : contacts) {
    EXPECT_NEAR(contact.gap, -0.01, kTolerance);
    const double x = std::abs(contact.position.x), y = std::abs(contact.position.y);
    EXPECT_NEAR(std::max(x, y), 0.5, kTolerance);  // on an edge of the bottom square
    EXPECT_NEAR(x + y, 0.5 * kSqrt2, kTolerance);  // and on one of the turned square
    points.push_back(contact.position);
  }
  std::sort(points.begin(), points.end(), [](const Vec3& p, const Vec3& q) {
    return std::atan2(p.y, p.x) < std::atan2(q.y, q.x);
  });
  EXPECT_NEAR(polygon_area_xy(points), 2.0 * (kSqrt2 - 1.0), 1e-9);
}

// With every point kept, the manifold moves continuously with the pose: turning the top box
// of examples/scenes/box_stack.json's pair (10°) by 1e-7 rad keeps the same 8 features and
// moves each point by O(1e-7). Reduced to 4, a choice among equally good subsets could jump.
TEST(NarrowPhaseBoxBox, FullOctagonIsContinuousInTheTurn) {
  const PosedShape bottom = make_box({0, 0, 0}, {0.1, 0.1, 0.1});
  const auto octagon = [&](double angle) {
    const PosedShape top = make_box({0.01, 0, 0.199}, {0.1, 0.1, 0.1}, Quat::from_axis_angle({0, 0, 1}, angle));
    return collide_all(top, bottom, 0.01, kMaxPairContacts);
  };
  const double angle = 10.0 * std::numbers::pi / 180.0;
  const std::vector<ContactPoint> base = octagon(angle);
  ASSERT_EQ(base.size(), 8u);
  for (const double turn : {1e-7, -1e-7}) {
    const std::vector<ContactPoint> turned = octagon(angle + turn);
    ASSERT_EQ(turned.size(), base.size());
    for (const ContactPoint& point : base) {
      const auto same = std::find_if(turned.begin(), turned.end(),
                                     [&](const ContactPoint& other) { return other.feature == point.feature; });
      ASSERT_NE(same, turned.end()) << "feature " << point.feature << " lost at turn " << turn;
      EXPECT_LT(norm(same->position - point.position), 1e-6) << "feature " << point.feature;
    }
  }
}

TEST(NarrowPhaseBoxBox, CrossedEdgesHaveOnePointWithTheEdgeDepth) {
  // The bottom box's top edge runs along x at z = √2/2; the top box's bottom edge along y.
  const PosedShape bottom =
      make_box({0, 0, 0}, {0.5, 0.5, 0.5}, Quat::from_axis_angle({1, 0, 0}, std::numbers::pi / 4));
  const double height = kSqrt2 - 0.02;
  const PosedShape top =
      make_box({0, 0, height}, {0.5, 0.5, 0.5}, Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 4));
  expect_pair(top, bottom, 0.01, {{{0, 0, height / 2}, {0, 0, 1}, -0.02}});
  // Separated by 0.03: within a 0.05 margin, not within 0.02.
  const PosedShape raised =
      make_box({0, 0, kSqrt2 + 0.03}, {0.5, 0.5, 0.5}, Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 4));
  expect_pair(raised, bottom, 0.05, {{{0, 0, (kSqrt2 + 0.03) / 2}, {0, 0, 1}, 0.03}});
  expect_pair(raised, bottom, 0.02, {});
}

TEST(NarrowPhase, PlanePlaneHasNoContact) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  EXPECT_TRUE(collide_all(plane, make_plane({0, 0, -1}, {0, 1, 1}), 10.0).empty());
}

// ---------------------------------------------------------------------------------------
// Feature ids.

void expect_features_stable(const PosedShape& a, const PosedShape& b, double margin,
                            std::size_t expected_count) {
  const std::vector<ContactPoint> reference = collide_all(a, b, margin);
  ASSERT_EQ(reference.size(), expected_count);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    // One draw per statement: the order of a call's arguments is unspecified (clang and gcc differ).
    const Vec3 shift = random_direction(rng) * 1e-4;
    const Vec3 turn = random_direction(rng) * 1e-4;
    const PosedShape moved = nudged(a, shift, turn);
    const std::vector<ContactPoint> contacts = collide_all(moved, b, margin);
    EXPECT_EQ(sorted_features(contacts), sorted_features(reference)) << "trial " << trial;
  }
}

TEST(NarrowPhaseFeatures, StableUnderSmallPerturbations) {
  const PosedShape plane = make_plane({0, 0, 0}, {0, 0, 1});
  {
    SCOPED_TRACE("box on plane");
    expect_features_stable(make_box({0, 0, 0.249}, {1, 0.5, 0.25}), plane, 0.01, 4);
  }
  {
    SCOPED_TRACE("box on box");
    expect_features_stable(make_box({0.3, 0.1, 0.99}, {0.5, 0.5, 0.5}),
                           make_box({0, 0, 0}, {2, 2, 0.5}), 0.01, 4);
  }
  {
    SCOPED_TRACE("box on box, reversed order");
    expect_features_stable(make_box({0, 0, 0}, {2, 2, 0.5}),
                           make_box({0.3, 0.1, 0.99}, {0.5, 0.5, 0.5}), 0.01, 4);
  }
  {
    SCOPED_TRACE("crossed box edges");
    const PosedShape bottom =
        make_box({0, 0, 0}, {0.5, 0.5, 0.5}, Quat::from_axis_angle({1, 0, 0}, std::numbers::pi / 4));
    expect_features_stable(
        make_box({0, 0, kSqrt2 - 0.02}, {0.5, 0.5, 0.5}, Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 4)),
        bottom, 0.01, 1);
  }
  {
    SCOPED_TRACE("capsule on plane");
    expect_features_stable(make_capsule({0, 0, 0.45}, {1, 0, 0}, 0.5, 1.0), plane, 0.01, 2);
  }
  {
    SCOPED_TRACE("capsule on capsule");
    expect_features_stable(make_capsule({0, 0, 0.9}, {1, 0, 0}, 0.5, 1.0),
                           make_capsule({0.5, 0, 0}, {1, 0, 0}, 0.5, 1.0), 0.01, 2);
  }
  {
    SCOPED_TRACE("capsule on box");
    expect_features_stable(make_capsule({0, 0, 0.74}, {1, 0, 0}, 0.25, 1.0),
                           make_box({0, 0, 0}, {2, 1, 0.5}), 0.05, 2);
  }
  {
    SCOPED_TRACE("sphere on box edge");
    expect_features_stable(make_sphere({1.6, 2.8, 0}, 0.5), make_box({0, 0, 0}, {1, 2, 3}), 1.0, 1);
  }
}

TEST(NarrowPhaseFeatures, ReferenceFaceCornerKeepsItsIdAsTheBoxTurns) {
  // A small box centred over the corner (2, 2) of a large one: the manifold is the quarter
  // of its bottom face over the large face, whose corner point is cut by two side planes.
  const PosedShape bottom = make_box({0, 0, 0}, {2, 2, 0.5});
  std::vector<int> corner_features;
  for (double yaw : {0.2, 0.5, 0.8, 1.1, 1.4}) {
    SCOPED_TRACE("yaw " + std::to_string(yaw));
    const PosedShape top =
        make_box({2, 2, 0.99}, {0.5, 0.5, 0.5}, Quat::from_axis_angle({0, 0, 1}, yaw));
    const std::vector<ContactPoint> contacts = collide_all(top, bottom, 0.01);
    ASSERT_EQ(contacts.size(), 4u);
    int corner = -1;
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(contacts[i].gap, -0.01, kTolerance);
      EXPECT_LE(contacts[i].position.x, 2 + kTolerance);
      EXPECT_LE(contacts[i].position.y, 2 + kTolerance);
      if (squared_norm(contacts[i].position - Vec3{2, 2, 0.495}) < 1e-18) corner = i;
    }
    ASSERT_GE(corner, 0);
    corner_features.push_back(contacts[corner].feature);
    std::vector<int> features = sorted_features(contacts);
    EXPECT_EQ(std::adjacent_find(features.begin(), features.end()), features.end());
  }
  for (int feature : corner_features) EXPECT_EQ(feature, corner_features.front());
}

TEST(NarrowPhaseFeatures, DistinctWithinAManifold) {
  const std::vector<ContactPoint> contacts = collide_all(
      make_box({0.3, 0.1, 0.99}, {0.5, 0.5, 0.5}), make_box({0, 0, 0}, {2, 2, 0.5}), 0.01);
  std::vector<int> features = sorted_features(contacts);
  ASSERT_EQ(features.size(), 4u);
  EXPECT_EQ(std::adjacent_find(features.begin(), features.end()), features.end());
}

// ---------------------------------------------------------------------------------------
// Random poses against independent distance computations.

// Signed distance of a world point to each shape.
double signed_distance(const PosedShape& shape, const Vec3& point) {
  const Vec3 local = shape.rotation.transpose_times(point - shape.position);
  switch (shape.type) {
    case ShapeType::Sphere:
      return norm(local) - shape.size.x;
    case ShapeType::Capsule:
    case ShapeType::Cylinder: {  // posed cylinders are capsules (model.hpp)
      const double z = std::clamp(local.z, -shape.size.y, shape.size.y);
      return norm(local - Vec3{0, 0, z}) - shape.size.x;
    }
    case ShapeType::Box: {
      const Vec3 q = cwise_abs(local) - shape.size;
      const Vec3 outside{std::max(q.x, 0.0), std::max(q.y, 0.0), std::max(q.z, 0.0)};
      return norm(outside) + std::min(std::max({q.x, q.y, q.z}), 0.0);
    }
    case ShapeType::Plane:
      return local.z;
    case ShapeType::ConvexMesh:
      break;  // convex meshes: tests/convex_mesh_test.cpp
    case ShapeType::Ellipsoid:
      break;  // no closed form: tests/ellipsoid_shape_test.cpp
  }
  return 0.0;
}

// Minimum of a convex function on [0, 1] by golden-section search (Kiefer 1953).
template <typename Function>
double golden_section_minimum(const Function& f) {
  const double ratio = (std::sqrt(5.0) - 1.0) / 2.0;
  double low = 0.0, high = 1.0;
  double left = high - ratio * (high - low), right = low + ratio * (high - low);
  double f_left = f(left), f_right = f(right);
  for (int iteration = 0; iteration < 120; ++iteration) {
    if (f_left <= f_right) {
      high = right;
      right = left;
      f_right = f_left;
      left = high - ratio * (high - low);
      f_left = f(left);
    } else {
      low = left;
      left = right;
      f_left = f_right;
      right = low + ratio * (high - low);
      f_right = f(right);
    }
  }
  return std::min({f_left, f_right, f(0.0), f(1.0)});
}

struct Segment {
  Vec3 start, end;
  Vec3 at(double t) const { return start + (end - start) * t; }
};
Segment core_segment(const PosedShape& capsule) {
  const Vec3 half_axis = capsule.rotation.col(2) * capsule.size.y;
  return {capsule.position - half_axis, capsule.position + half_axis};
}

double point_segment_distance(const Vec3& point, const Segment& segment) {
  return golden_section_minimum([&](double t) { return norm(point - segment.at(t)); });
}
double point_box_distance(const Vec3& point, const PosedShape& box) {
  return std::max(signed_distance(box, point), 0.0);
}
double segment_segment_distance(const Segment& first, const Segment& second) {
  return golden_section_minimum(
      [&](double s) { return point_segment_distance(first.at(s), second); });
}
double segment_box_distance(const Segment& segment, const PosedShape& box) {
  return golden_section_minimum([&](double t) { return point_box_distance(segment.at(t), box); });
}

Vec3 box_vertex(const PosedShape& box, int index) {
  const Vec3 local{(index & 1) ? box.size.x : -box.size.x, (index & 2) ? box.size.y : -box.size.y,
                   (index & 4) ? box.size.z : -box.size.z};
  return box.position + box.rotation * local;
}
std::vector<Segment> box_edges(const PosedShape& box) {
  std::vector<Segment> edges;
  for (int from = 0; from < 8; ++from)
    for (int bit = 1; bit < 8; bit <<= 1)
      if (!(from & bit)) edges.push_back({box_vertex(box, from), box_vertex(box, from | bit)});
  return edges;
}
// Does the segment meet the solid box? (Slab test, Kay & Kajiya 1986.)
bool segment_meets_box(const Segment& segment, const PosedShape& box) {
  const Vec3 start = box.rotation.transpose_times(segment.start - box.position);
  const Vec3 delta = box.rotation.transpose_times(segment.end - segment.start);
  double t_low = 0.0, t_high = 1.0;
  for (int k = 0; k < 3; ++k) {
    if (std::abs(delta[k]) < 1e-15) {
      if (std::abs(start[k]) > box.size[k]) return false;
      continue;
    }
    double t0 = (-box.size[k] - start[k]) / delta[k], t1 = (box.size[k] - start[k]) / delta[k];
    if (t0 > t1) std::swap(t0, t1);
    t_low = std::max(t_low, t0);
    t_high = std::min(t_high, t1);
  }
  return t_low <= t_high;
}

// The true gap where it is known independently: `exact` is false when the shapes
// interpenetrate in a way these reference computations do not measure (then `gap` < 0 only
// says that they overlap).
struct ReferenceGap {
  double gap;
  bool exact;
};

ReferenceGap reference_gap(const PosedShape& a, const PosedShape& b) {
  const auto rank = [](ShapeType type) {
    return type == ShapeType::Sphere    ? 0
           : type == ShapeType::Capsule ? 1
           : type == ShapeType::Box     ? 2
                                        : 3;
  };
  if (rank(a.type) > rank(b.type)) return reference_gap(b, a);
  // A sphere is a capsule with a point segment.
  const auto core = [](const PosedShape& shape) {
    return shape.type == ShapeType::Sphere ? Segment{shape.position, shape.position}
                                           : core_segment(shape);
  };
  const double radius_a = a.size.x;
  if (a.type != ShapeType::Box && b.type != ShapeType::Box) {
    if (b.type == ShapeType::Plane) {
      const Segment segment = core(a);
      return {
          std::min(signed_distance(b, segment.start), signed_distance(b, segment.end)) - radius_a,
          true};
    }
    const double core_distance = segment_segment_distance(core(a), core(b));
    return {core_distance - radius_a - b.size.x, core_distance > 1e-6};
  }
  if (a.type != ShapeType::Box) {  // sphere or capsule against a box
    const double core_distance = segment_box_distance(core(a), b);
    return {core_distance - radius_a, core_distance > 1e-6};
  }
  if (b.type == ShapeType::Plane) {
    double lowest = INFINITY;
    for (int v = 0; v < 8; ++v) lowest = std::min(lowest, signed_distance(b, box_vertex(a, v)));
    return {lowest, true};
  }
  // Box–box: overlapping iff an edge of one meets the other solid; otherwise the distance is
  // attained vertex-to-box or edge-to-edge.
  const std::vector<Segment> edges_a = box_edges(a), edges_b = box_edges(b);
  for (const Segment& edge : edges_a)
    if (segment_meets_box(edge, b)) return {-1.0, false};
  for (const Segment& edge : edges_b)
    if (segment_meets_box(edge, a)) return {-1.0, false};
  double distance = INFINITY;
  for (int v = 0; v < 8; ++v) {
    distance = std::min(distance, point_box_distance(box_vertex(a, v), b));
    distance = std::min(distance, point_box_distance(box_vertex(b, v), a));
  }
  for (const Segment& edge_a : edges_a)
    for (const Segment& edge_b : edges_b)
      distance = std::min(distance, segment_segment_distance(edge_a, edge_b));
  return {distance, true};
}

PosedShape random_shape(ShapeType type, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const Quat orientation = random_rotation(rng);
  switch (type) {
    case ShapeType::Sphere:
      return posed(type, {}, orientation, {0.2 + 0.8 * uniform(rng), 0, 0});
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      return posed(type, {}, orientation,
                   {0.1 + 0.5 * uniform(rng), uniform(rng) < 0.1 ? 0.0 : 0.1 + uniform(rng), 0});
    case ShapeType::Box:
      return posed(type, {}, orientation, random_vector(rng, 0.1, 1.0));
    case ShapeType::Plane:
      return posed(type, {}, orientation, {});
    case ShapeType::ConvexMesh:
    case ShapeType::Ellipsoid:  // tests/convex_mesh_test.cpp, tests/ellipsoid_shape_test.cpp
      break;
  }
  return {};
}

class NarrowPhaseRandomPoses : public ::testing::TestWithParam<std::pair<ShapeType, ShapeType>> {};

TEST_P(NarrowPhaseRandomPoses, AgreeWithReferenceDistancesAndMirrorUnderSwap) {
  const auto [type_a, type_b] = GetParam();
  const double margin = 0.05;
  std::mt19937_64 rng(1000 + 10 * static_cast<int>(type_a) + static_cast<int>(type_b));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int separated_within_margin = 0, overlapping = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    PosedShape a = random_shape(type_a, rng);
    PosedShape b = random_shape(type_b, rng);
    b.position = random_vector(rng, -1.0, 1.0);
    const double reach = bounding_radius(a) + bounding_radius(b);
    // Mostly near contact: distances of the centres spread over [0.3, 1.05] × reach.
    // One draw per statement: the order of an expression's operands is unspecified (clang and
    // gcc differ), and the poses must not depend on the compiler.
    const Vec3 direction = random_direction(rng);
    a.position = b.position + direction * (reach * (0.3 + 0.75 * uniform(rng)));
    if (type_b == ShapeType::Plane) {
      // Centre at height (support depth + target gap), the target gap in [−0.3, 0.1] m.
      const Vec3 normal_in_a = a.rotation.transpose_times(b.rotation.col(2));
      double support = a.size.x;
      if (type_a == ShapeType::Capsule) support += a.size.y * std::abs(normal_in_a.z);
      if (type_a == ShapeType::Box) support = dot(a.size, cwise_abs(normal_in_a));
      const double height = support + 0.4 * uniform(rng) - 0.3;
      const double along_x = 2 * uniform(rng) - 1;
      const double along_y = 2 * uniform(rng) - 1;
      a.position = b.position + b.rotation.col(2) * height + b.rotation.col(0) * along_x + b.rotation.col(1) * along_y;
    }

    const std::vector<ContactPoint> contacts = collide_all(a, b, margin);
    const std::vector<ContactPoint> swapped = collide_all(b, a, margin);
    const ReferenceGap reference = reference_gap(a, b);
    if (reference.exact && reference.gap >= 0.0 && reference.gap < margin)
      ++separated_within_margin;
    if (reference.gap < 0.0) ++overlapping;

    // Well-formed contacts whose surface points are not outside either shape.
    double min_gap = INFINITY;
    for (const ContactPoint& contact : contacts) {
      EXPECT_NEAR(norm(contact.normal), 1.0, 1e-12);
      EXPECT_LT(contact.gap, margin);
      min_gap = std::min(min_gap, contact.gap);
      const Vec3 on_a = contact.position + contact.normal * (0.5 * contact.gap);
      const Vec3 on_b = contact.position - contact.normal * (0.5 * contact.gap);
      EXPECT_LE(signed_distance(a, on_a), 1e-9);
      EXPECT_LE(signed_distance(b, on_b), 1e-9);
    }

    // collide(b, a) mirrors collide(a, b).
    ASSERT_EQ(swapped.size(), contacts.size());
    for (const ContactPoint& contact : contacts) {
      const auto match =
          std::min_element(swapped.begin(), swapped.end(), [&](const auto& p, const auto& q) {
            return squared_norm(p.position - contact.position) <
                   squared_norm(q.position - contact.position);
          });
      expect_vec_near(match->position, contact.position, 1e-9, "swapped position");
      expect_vec_near(match->normal, -contact.normal, 1e-9, "swapped normal");
      EXPECT_NEAR(match->gap, contact.gap, 1e-9);
    }

    const bool box_box = type_a == ShapeType::Box && type_b == ShapeType::Box;
    if (reference.exact) {
      if (reference.gap < margin - 1e-7) {
        ASSERT_FALSE(contacts.empty()) << "true gap " << reference.gap;
      }
      if (box_box) {
        // The separating-axis gap is a lower bound of the distance, exact for face contacts.
        if (!contacts.empty()) {
          EXPECT_LE(min_gap, reference.gap + 1e-9);
        }
      } else {
        if (reference.gap > margin + 1e-7) {
          EXPECT_TRUE(contacts.empty()) << "true gap " << reference.gap;
        }
        if (!contacts.empty()) {
          // A capsule within the tie tolerance of parallel to a box face rests on that face
          // (two points, so the manifold does not flicker; collision/contact_kernels.hpp):
          // its gap and points may then differ from the exact closest pair by up to that
          // tolerance, kRelativeTieTolerance (1e-6) of the shapes' size.
          const double tie_slack = type_b == ShapeType::Box ? collision::detail::kRelativeTieTolerance *
                                                                  std::max({a.size.x, a.size.y, b.size.x, b.size.y, b.size.z})
                                                            : 0.0;
          EXPECT_NEAR(min_gap, reference.gap, 1e-7 + tie_slack);
          // The deepest contact joins the two closest surface points.
          const ContactPoint& deepest =
              *std::min_element(contacts.begin(), contacts.end(),
                                [](const auto& p, const auto& q) { return p.gap < q.gap; });
          EXPECT_NEAR(signed_distance(a, deepest.position + deepest.normal * (0.5 * deepest.gap)),
                      0.0, 1e-7 + tie_slack);
          EXPECT_NEAR(signed_distance(b, deepest.position - deepest.normal * (0.5 * deepest.gap)),
                      0.0, 1e-7 + tie_slack);
        }
      }
    } else {
      ASSERT_FALSE(contacts.empty());
      EXPECT_LT(min_gap, 0.0);
    }
  }
  // The sampling reaches both regimes.
  EXPECT_GT(separated_within_margin, 3);
  EXPECT_GT(overlapping, 30);
}

INSTANTIATE_TEST_SUITE_P(AllPairs, NarrowPhaseRandomPoses,
                         ::testing::Values(std::pair{ShapeType::Sphere, ShapeType::Sphere},
                                           std::pair{ShapeType::Sphere, ShapeType::Capsule},
                                           std::pair{ShapeType::Sphere, ShapeType::Box},
                                           std::pair{ShapeType::Sphere, ShapeType::Plane},
                                           std::pair{ShapeType::Capsule, ShapeType::Capsule},
                                           std::pair{ShapeType::Capsule, ShapeType::Box},
                                           std::pair{ShapeType::Capsule, ShapeType::Plane},
                                           std::pair{ShapeType::Box, ShapeType::Box},
                                           std::pair{ShapeType::Box, ShapeType::Plane}),
                         [](const auto& test_info) {
                           return std::string(diffphys::type_name(test_info.param.first)) + "_" +
                                  diffphys::type_name(test_info.param.second);
                         });

// ---------------------------------------------------------------------------------------
// Bounding boxes.

TEST(NarrowPhaseBoundingBox, TightForEachShapeAndGrownByMargin) {
  const double margin = 0.1;
  const Aabb sphere = bounding_box(make_sphere({1, 2, 3}, 0.5), margin);
  expect_vec_near(sphere.lower, {0.4, 1.4, 2.4}, kTolerance, "sphere lower");
  expect_vec_near(sphere.upper, {1.6, 2.6, 3.6}, kTolerance, "sphere upper");

  // Box turned 45° about z: x and y extents (hx + hy)/√2.
  const Aabb box = bounding_box(
      make_box({0, 0, 1}, {1, 2, 3}, Quat::from_axis_angle({0, 0, 1}, std::numbers::pi / 4)), margin);
  const double planar = 3.0 / kSqrt2 + margin;
  expect_vec_near(box.lower, {-planar, -planar, 1 - 3 - margin}, kTolerance, "box lower");
  expect_vec_near(box.upper, {planar, planar, 1 + 3 + margin}, kTolerance, "box upper");

  // Capsule along (1, 1, 0)/√2, half length √2: segment from (−1, −1, 0) to (1, 1, 0).
  const Aabb capsule = bounding_box(make_capsule({0, 0, 0}, {1, 1, 0}, 0.25, kSqrt2), margin);
  expect_vec_near(capsule.lower, {-1.35, -1.35, -0.35}, kTolerance, "capsule lower");
  expect_vec_near(capsule.upper, {1.35, 1.35, 0.35}, kTolerance, "capsule upper");

  const Aabb plane = bounding_box(make_plane({0, 0, 0}, {0, 0, 1}), margin);
  EXPECT_LE(plane.lower.x, -1e30);
  EXPECT_GE(plane.upper.z, 1e30);
}

TEST(NarrowPhaseBoundingBox, ContainsEveryRandomShape) {
  std::mt19937_64 rng(99);
  for (ShapeType type : {ShapeType::Sphere, ShapeType::Capsule, ShapeType::Box}) {
    for (int trial = 0; trial < 50; ++trial) {
      PosedShape shape = random_shape(type, rng);
      shape.position = random_vector(rng, -3.0, 3.0);
      const Aabb bounds = bounding_box(shape, 0.0);
      // Tight: on each face of the bounding box, the shape's support point touches it.
      for (int k = 0; k < 3; ++k) {
        for (double side : {-1.0, 1.0}) {
          Vec3 direction;
          direction[k] = side;
          const double face = side > 0 ? bounds.upper[k] : bounds.lower[k];
          // Signed distance of the shape from that face plane, by its support point.
          double support = 0;
          const Vec3 local_direction = shape.rotation.transpose_times(direction);
          if (type == ShapeType::Sphere) support = shape.size.x;
          if (type == ShapeType::Capsule)
            support = shape.size.x + shape.size.y * std::abs(local_direction.z);
          if (type == ShapeType::Box) support = dot(shape.size, cwise_abs(local_direction));
          EXPECT_NEAR(side * shape.position[k] + support, side * face, 1e-12);
        }
      }
    }
  }
}

}  // namespace
}  // namespace diffphys::collision
