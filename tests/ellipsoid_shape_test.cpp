// tests/ellipsoid_shape_test.cpp — ShapeType::Ellipsoid (model.hpp): mass and inertia against
// the closed form, its narrow phase (collision/ellipsoid_contacts.cpp) against independent
// conditions — the contact point on the surface with the surface normal there, no surface
// point lower than it on a plane, the closest-point conditions against a sphere, the sphere's
// own contacts when its three radii are equal — resting on the ground at its height, and a
// rollout's gradients through its contact against central differences. (The contact
// Jacobians against finite differences, pair by pair: tests/contact_geometry_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <random>
#include <vector>

#include "collision/narrow_phase.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"
#include "gradcheck_test_helpers.hpp"

namespace diffphys {
namespace {
namespace ellipsoid_test {  // unity builds: helper names unique to this file

using collision::ContactPoint;
using collision::PosedShape;

using EllipsoidRng = std::mt19937_64;

Quat random_rotation(EllipsoidRng& rng) {
  std::normal_distribution<double> gaussian;
  return Quat{gaussian(rng), gaussian(rng), gaussian(rng), gaussian(rng)}.normalized();
}
double uniform(EllipsoidRng& rng, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(rng);
}

PosedShape posed(ShapeType type, const Vec3& position, const Quat& orientation, const Vec3& size,
                 const ConvexMesh* mesh = nullptr) {
  PosedShape shape;
  shape.type = type;
  shape.position = position;
  shape.orientation = orientation;
  shape.rotation = orientation.to_matrix();
  shape.size = size;
  shape.mesh = mesh;
  return shape;
}

// F(x) = |D⁻¹ Rᵀ (x − c)| (1 on the surface) and the outward normal ∝ R D⁻² Rᵀ (x − c).
double surface_level(const PosedShape& e, const Vec3& x) {
  const Vec3 local = e.rotation.transpose_times(x - e.position);
  return norm(Vec3{local.x / e.size.x, local.y / e.size.y, local.z / e.size.z});
}
Vec3 surface_normal(const PosedShape& e, const Vec3& x) {
  const Vec3 local = e.rotation.transpose_times(x - e.position);
  return normalized(e.rotation * Vec3{local.x / (e.size.x * e.size.x), local.y / (e.size.y * e.size.y),
                                      local.z / (e.size.z * e.size.z)});
}

BodySpec ellipsoid_body(const Vec3& radii, const Vec3& position, const Quat& orientation = {}) {
  BodySpec body;
  body.name = "egg";
  body.position = position;
  body.orientation = orientation;
  body.density = 500.0;
  ShapeSpec shape;
  shape.type = ShapeType::Ellipsoid;
  shape.half_extents = radii;
  body.shapes.push_back(shape);
  return body;
}

TEST(EllipsoidShape, MassAndInertiaOfASolidEllipsoid) {
  ModelBuilder builder;
  const Vec3 r{0.3, 0.1, 0.2};
  builder.add_body(ellipsoid_body(r, {0, 0, 1}));
  const Scene scene = builder.build();
  const double mass = 500.0 * 4.0 / 3.0 * std::numbers::pi * r.x * r.y * r.z;
  EXPECT_NEAR(scene.params.slice(scene.model, "body/egg/mass")[0], mass, 1e-12);
  // Ascending principal moments m(b² + c²)/5 ...: about x (0.05), z (0.1), y (0.13), × m/5.
  const auto moments = scene.params.slice(scene.model, "body/egg/inertia");
  EXPECT_NEAR(moments[0], mass * (0.1 * 0.1 + 0.2 * 0.2) / 5, 1e-14);
  EXPECT_NEAR(moments[1], mass * (0.3 * 0.3 + 0.1 * 0.1) / 5, 1e-14);
  EXPECT_NEAR(moments[2], mass * (0.3 * 0.3 + 0.2 * 0.2) / 5, 1e-14);
  const auto radii = scene.params.slice(scene.model, "shape/egg/0/radii");
  EXPECT_EQ(radii[0], r.x);
  EXPECT_EQ(radii[1], r.y);
  EXPECT_EQ(radii[2], r.z);
}

TEST(EllipsoidShape, PlaneContactIsTheLowestSurfacePointForRandomOrientations) {
  EllipsoidRng rng(7);
  const PosedShape ground = posed(ShapeType::Plane, {0, 0, 0}, Quat::identity(), {});
  for (int trial = 0; trial < 20; ++trial) {
    const Vec3 radii{uniform(rng, 0.05, 0.4), uniform(rng, 0.05, 0.4), uniform(rng, 0.05, 0.4)};
    const PosedShape e = posed(ShapeType::Ellipsoid, {0.3, -0.2, 0.0}, random_rotation(rng), radii);
    // Lowest of a grid of surface points x = c + R (a sinθ cosφ, b sinθ sinφ, c cosθ), then of
    // a finer grid around the best (its spacing 5e-5 rad: heights within ~1e-9 m).
    const auto height = [&](double theta, double phi) {
      const Vec3 local{radii.x * std::sin(theta) * std::cos(phi), radii.y * std::sin(theta) * std::sin(phi),
                       radii.z * std::cos(theta)};
      return (e.position + e.rotation * local).z;
    };
    double lowest = 1e30, best_theta = 0.0, best_phi = 0.0;
    const double step = std::numbers::pi / 200;
    for (int i = 0; i <= 200; ++i)
      for (int j = 0; j < 400; ++j)
        if (const double z = height(step * i, step * j); z < lowest)
          lowest = z, best_theta = step * i, best_phi = step * j;
    const double fine = 2 * step / 600;
    const double theta0 = best_theta, phi0 = best_phi;
    for (int i = -600; i <= 600; ++i)
      for (int j = -600; j <= 600; ++j) lowest = std::min(lowest, height(theta0 + fine * i, phi0 + fine * j));
    // Placed just above the plane (within the margin): the gap is the height above it.
    PosedShape lifted = e;
    const double lift = 0.003;
    lifted.position.z = lift - lowest;
    ContactPoint out[collision::kMaxPairContacts];
    ASSERT_EQ(collision::collide(lifted, ground, 0.01, out, 4), 1);
    EXPECT_NEAR(out[0].gap, lift, 1e-9);  // the fine grid's resolution
    EXPECT_NEAR(norm(out[0].normal - Vec3{0, 0, 1}), 0.0, 1e-15);
    const Vec3 on_ellipsoid = out[0].position + out[0].normal * (0.5 * out[0].gap);
    EXPECT_NEAR(surface_level(lifted, on_ellipsoid), 1.0, 1e-12);
    EXPECT_NEAR(norm(surface_normal(lifted, on_ellipsoid) + Vec3{0, 0, 1}), 0.0, 1e-9);
    EXPECT_NEAR(out[0].position.z, 0.5 * out[0].gap, 1e-12);
  }
}

TEST(EllipsoidShape, SphereContactMeetsTheClosestPointConditions) {
  // Apart or overlapping by less than the least radius of curvature: the contact point on the
  // ellipsoid is on its surface, the normal is the surface normal there, and the sphere's
  // centre lies on that normal line at the gap plus the radius.
  EllipsoidRng rng(11);
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Vec3 radii{uniform(rng, 0.1, 0.3), uniform(rng, 0.1, 0.3), uniform(rng, 0.1, 0.3)};
    const PosedShape e = posed(ShapeType::Ellipsoid, {0, 0, 0}, random_rotation(rng), radii);
    const double r = uniform(rng, 0.05, 0.2);
    // A random surface point, pushed out along its normal by r + gap.
    const Quat direction_rotation = random_rotation(rng);
    const Vec3 u = direction_rotation.rotate({0, 0, 1});
    const Vec3 surface = e.rotation * Vec3{radii.x * u.x, radii.y * u.y, radii.z * u.z};
    const double gap = uniform(rng, -0.01, 0.004);
    const Vec3 normal = surface_normal(e, surface);
    const PosedShape ball = posed(ShapeType::Sphere, surface + normal * (r + gap), Quat::identity(), {r, 0, 0});
    ContactPoint out[collision::kMaxPairContacts];
    ASSERT_EQ(collision::collide(ball, e, 0.01, out, 4), 1);
    EXPECT_NEAR(out[0].gap, gap, 1e-10);
    EXPECT_NEAR(norm(out[0].normal - normal), 0.0, 1e-8);
    const Vec3 on_ellipsoid = out[0].position - out[0].normal * (0.5 * out[0].gap);
    EXPECT_NEAR(norm(on_ellipsoid - surface), 0.0, 1e-8);
    ++checked;
  }
  EXPECT_EQ(checked, 40);
}

TEST(EllipsoidShape, WithEqualRadiiItCollidesAsTheSphere) {
  const std::vector<Vec3> corners{{-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {1, 1, -1},
                                  {-1, -1, 1},  {1, -1, 1},  {-1, 1, 1},  {1, 1, 1}};
  const auto cube = std::make_shared<ConvexMesh>(convex_hull(corners, "cube"));
  EllipsoidRng rng(3);
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const double r = uniform(rng, 0.1, 0.3);
    const Vec3 center{uniform(rng, -0.6, 0.6), uniform(rng, -0.6, 0.6), uniform(rng, -0.6, 0.6)};
    const Quat orientation = random_rotation(rng);
    const PosedShape ball = posed(ShapeType::Sphere, center, orientation, {r, 0, 0});
    const PosedShape egg = posed(ShapeType::Ellipsoid, center, orientation, {r, r, r});
    const PosedShape others[6] = {
        posed(ShapeType::Plane, {0, 0, -0.3}, Quat::from_axis_angle({1, 0, 0}, 0.3), {}),
        posed(ShapeType::Sphere, {0.1, 0.0, 0.05}, Quat::identity(), {0.25, 0, 0}),
        posed(ShapeType::Capsule, {0, 0.1, 0}, Quat::from_axis_angle(normalized(Vec3{1, 1, 0}), 0.7), {0.15, 0.3, 0}),
        posed(ShapeType::Box, {0, 0, 0.1}, Quat::from_axis_angle(normalized(Vec3{0, 1, 1}), 0.4), {0.3, 0.2, 0.25}),
        posed(ShapeType::ConvexMesh, {0.05, 0, 0}, Quat::from_axis_angle(normalized(Vec3{1, 0, 1}), 0.9), {0.25, 0, 0}, cube.get()),
        posed(ShapeType::Ellipsoid, {0, 0.05, 0}, Quat::from_axis_angle({0, 0, 1}, 0.2), {0.2, 0.2, 0.2})};
    for (const PosedShape& other : others) {
      PosedShape sphere_other = other;
      if (other.type == ShapeType::Ellipsoid) sphere_other.type = ShapeType::Sphere;  // the same ball
      ContactPoint expected[collision::kMaxPairContacts], got[collision::kMaxPairContacts];
      const int n_expected = collision::collide(ball, sphere_other, 0.01, expected, 4);
      const int n_got = collision::collide(egg, other, 0.01, got, 4);
      // Deep overlaps have no unique answer (a centre inside a box): compare the shallow ones.
      if (n_expected != 1 || expected[0].gap < -0.05) continue;
      ASSERT_EQ(n_got, 1) << type_name(other.type);
      EXPECT_NEAR(got[0].gap, expected[0].gap, 1e-9) << type_name(other.type);
      EXPECT_NEAR(norm(got[0].normal - expected[0].normal), 0.0, 1e-7) << type_name(other.type);
      EXPECT_NEAR(norm(got[0].position - expected[0].position), 0.0, 1e-8) << type_name(other.type);
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(EllipsoidShape, SettlesOnTheGroundOnItsSmallestSemiAxis) {
  // Released tilted about its long axis, it rocks back onto its flattest side (the smallest
  // semi-axis vertical) and comes to rest with its centre at that height.
  ModelBuilder builder;
  builder.add_ground_plane();
  const Vec3 radii{0.2, 0.12, 0.06};
  BodySpec body = ellipsoid_body(radii, {0, 0, 0.1}, Quat::from_axis_angle({1, 0, 0}, 0.3));
  body.angular_damping = 10.0;  // 1/s: the rocking dies out within the run
  builder.add_body(body);
  Scene scene = builder.build();
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int step = 0; step < 5000; ++step) simulator.step(scene.controls);
  // At its smallest semi-axis, less the penetration the contacts tolerate (1e-4 m, the slop).
  EXPECT_NEAR(simulator.state().position[1].z, radii.z, 2e-4);
  EXPECT_NEAR(norm(simulator.state().linear_velocity[1]), 0.0, 1e-4);
  EXPECT_NEAR(norm(simulator.state().angular_velocity[1]), 0.0, 1e-3);
}

TEST(EllipsoidShape, GradientsThroughAnEllipsoidContactMatchFiniteDifferences) {
  // Sliding on the ground on its flat side: the one contact persists through the rollout, and
  // the gradients flow through the ellipsoid's radii and pose.
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.world_friction = 0.3;
  builder.add_ground_plane();
  BodySpec body = ellipsoid_body({0.15, 0.1, 0.05}, {0, 0, 0.05}, Quat::from_axis_angle({0, 0, 1}, 0.4));
  body.linear_velocity = {1.5, 0.4, 0};
  body.friction = 0.3;
  builder.add_body(body);
  const Scene scene = builder.build();
  GradientCheckOptions options;
  options.steps = 30;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  testing::expect_parameter_checked_and_matters(report, "shape/egg/0/radii", 1e-6);
}

}  // namespace ellipsoid_test
}  // namespace
}  // namespace diffphys
