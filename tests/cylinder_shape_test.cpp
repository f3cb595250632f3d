// tests/cylinder_shape_test.cpp — ShapeType::Cylinder (model.hpp): exact solid-cylinder mass
// properties from the density, its documented collision stand-in (the capsule of the same
// radius and half length), and gradients through a cylinder's sizes against finite
// differences.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "gradcheck_test_helpers.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

BodySpec cylinder_body(double radius, double half_length, Vec3 position, Quat orientation = {}) {
  BodySpec body;
  body.name = "can";
  body.position = position;
  body.orientation = orientation;
  body.density = 700.0;
  ShapeSpec cylinder;
  cylinder.type = ShapeType::Cylinder;
  cylinder.radius = radius;
  cylinder.half_length = half_length;
  body.shapes.push_back(cylinder);
  return body;
}

TEST(CylinderShape, MassAndInertiaOfASolidCylinder) {
  ModelBuilder builder;
  const double r = 0.1, h = 0.3;
  builder.add_body(cylinder_body(r, h, {0, 0, 1}));
  const Scene scene = builder.build();
  const double mass = 700.0 * std::numbers::pi * r * r * 2 * h;
  EXPECT_NEAR(scene.params.slice(scene.model, "body/can/mass")[0], mass, 1e-12);
  // Ascending principal moments: axial m r²/2, then twice the transverse m (3r² + (2h)²)/12.
  const auto moments = scene.params.slice(scene.model, "body/can/inertia");
  EXPECT_NEAR(moments[0], mass * r * r / 2, 1e-14);
  EXPECT_NEAR(moments[1], mass * (3 * r * r + 4 * h * h) / 12, 1e-14);
  EXPECT_NEAR(moments[2], mass * (3 * r * r + 4 * h * h) / 12, 1e-14);
  EXPECT_EQ(scene.params.slice(scene.model, "shape/can/0/radius")[0], r);
  EXPECT_EQ(scene.params.slice(scene.model, "shape/can/0/half_length")[0], h);
}

TEST(CylinderShape, RestsOnTheGroundAsItsCapsule) {
  // Standing on its end: the capsule stand-in rests one radius higher than a true cylinder.
  ModelBuilder builder;
  const double r = 0.05, h = 0.2;
  builder.add_ground_plane();
  builder.add_body(cylinder_body(r, h, {0, 0, h + r + 0.02}));
  Scene scene = builder.build();
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int step = 0; step < 1500; ++step) simulator.step(scene.controls);
  EXPECT_NEAR(simulator.state().position[1].z, h + r, 2e-3);
  EXPECT_NEAR(norm(simulator.state().linear_velocity[1]), 0.0, 1e-3);
}

TEST(CylinderShape, GradientsThroughCylinderSizesMatchFiniteDifferences) {
  // A cylinder lying on the ground and sliding (as the sphere and box of gradient_test.cpp):
  // the two end contacts persist through the rollout, so the loss is smooth, and the
  // gradients flow through the cylinder's sizes. The sideways part of the slip makes it roll
  // (friction opposes the slip's direction: the slip-aligned pyramid), and the roll's
  // gyroscopic pitch lifts one end from 0.34 s: the rollout stops before that contact event.
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.world_friction = 0.3;
  builder.add_ground_plane();
  BodySpec body = cylinder_body(0.05, 0.15, {0, 0, 0.05}, Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 2));
  body.linear_velocity = {2.0, 0.5, 0};
  body.friction = 0.3;
  builder.add_body(body);
  const Scene scene = builder.build();
  GradientCheckOptions options;
  options.steps = 30;            // still sliding at the end (it stops after ~0.7 s)
  options.param_epsilon = 1e-4;  // two redundant end contacts: residual-level noise
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  bool size_checked = false;
  for (const GradientCheckEntry& entry : report.entries)
    size_checked = size_checked || entry.name.starts_with("shape/can/0/radius");
  EXPECT_TRUE(size_checked);
}

}  // namespace
}  // namespace diffphys
