// tests/rigid_physics_test.cpp — the rigid simulator against closed forms and conservation
// laws: projectile, pendulum period and energy, collisions with restitution, bounce heights,
// friction on an incline, resting and stacked boxes, Newton's cradle, servos, every joint
// type, determinism, and both solvers agreeing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "diffphys/error.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::hinge_chain;
using testing::run;
using testing::sphere_body;

TEST(Projectile, MatchesTheSemiImplicitEulerClosedFormAndTheContinuousOneToFirstOrder) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  BodySpec ball = sphere_body("ball", {0, 0, 10}, 0.1, 2.0);
  ball.linear_velocity = {3, -1, 5};
  builder.add_body(ball);
  const Scene scene = builder.build();
  const int steps = 1000;
  State final_state;
  run(scene, steps, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    final_state = s;
  });
  const double t = steps * builder.dt, h = builder.dt, g = -9.81;
  // Semi-implicit Euler: z_n = z0 + vz t + g h² n(n+1)/2 = z0 + vz t + ½ g t (t + h).
  EXPECT_NEAR(final_state.position[1].x, 3 * t, 1e-9);
  EXPECT_NEAR(final_state.position[1].y, -1 * t, 1e-9);
  EXPECT_NEAR(final_state.position[1].z, 10 + 5 * t + 0.5 * g * t * (t + h), 1e-9);
  EXPECT_NEAR(final_state.linear_velocity[1].z, 5 + g * t, 1e-9);
  // The continuous solution, within the method's first-order bias ½|g| t h.
  EXPECT_NEAR(final_state.position[1].z, 10 + 5 * t + 0.5 * g * t * t, 0.5 * 9.81 * t * h * 1.001);
}

TEST(Pendulum, SmallAnglePeriodMatchesTheCompoundPendulumWithinHalfAPercent) {
  const double length = 1.0, radius = 0.05, mass = 1.0;
  ModelBuilder builder;
  builder.dt = 1e-3;
  const double angle0 = 0.05;
  const Vec3 bob{length * std::sin(angle0), 0, -length * std::cos(angle0)};
  builder.add_body(sphere_body("bob", bob, radius, mass));
  JointSpec hinge;
  hinge.name = "pivot";
  hinge.child = "bob";
  hinge.anchor = {0, 0, 0};
  hinge.axis = {0, 1, 0};
  builder.add_joint(hinge);
  const Scene scene = builder.build();
  const double pivot_inertia = 0.4 * mass * radius * radius + mass * length * length;
  const double expected_period = 2 * std::numbers::pi * std::sqrt(pivot_inertia / (mass * 9.81 * length));

  std::vector<double> crossings;  // times the bob passes x = 0 going in +x... any direction
  double previous_x = bob.x;
  run(scene, 10000, [&](const State& s, const StepStatus&) {
    const double x = s.position[1].x;
    if ((previous_x < 0) != (x < 0)) {
      // Linear interpolation of the crossing time within the step.
      crossings.push_back(s.time - builder.dt * x / (x - previous_x));
    }
    previous_x = x;
  });
  ASSERT_GE(crossings.size(), 8u);
  const double period = 2 * (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  EXPECT_NEAR(period / expected_period, 1.0, 0.005);
}

TEST(Pendulum, FrictionlessEnergyStaysBoundedOverTenSeconds) {
  ModelBuilder builder = hinge_chain(1, 1.0, 1.0, 1.0);
  const Scene scene = builder.build();
  const double initial = kinetic_energy(scene.model, scene.params, scene.state) +
                         potential_energy(scene.model, scene.params, scene.state);
  // Energy scale: the swing's potential drop, m g L/2 (1 − cos 1).
  const double scale = 1.0 * 9.81 * 0.5 * (1 - std::cos(1.0));
  double worst = 0.0, first_second_mean = 0.0, last_second_mean = 0.0;
  int step_index = 0;
  run(scene, 10000, [&](const State& s, const StepStatus&) {
    const double energy = kinetic_energy(scene.model, scene.params, s) + potential_energy(scene.model, scene.params, s);
    worst = std::max(worst, std::abs(energy - initial));
    if (step_index < 1000) first_second_mean += energy / 1000;
    if (step_index >= 9000) last_second_mean += energy / 1000;
    ++step_index;
  });
  EXPECT_LT(worst / scale, 0.01);
  // No secular drift: the mean energy of the last second equals the first's.
  EXPECT_LT(std::abs(last_second_mean - first_second_mean) / scale, 1e-3);
}

struct CollisionCase {
  double mass_a, mass_b, restitution;
};

class HeadOnCollision : public ::testing::TestWithParam<CollisionCase> {};

TEST_P(HeadOnCollision, ConservesMomentumAndGivesTheRestitutionVelocities) {
  const auto [mass_a, mass_b, restitution] = GetParam();
  ModelBuilder builder;
  builder.dt = 1e-4;
  builder.gravity = {0, 0, 0};
  BodySpec a = sphere_body("a", {-0.5, 0, 0}, 0.1, mass_a);
  a.linear_velocity = {2, 0, 0};
  a.restitution = restitution;
  a.friction = 0.0;
  BodySpec b = sphere_body("b", {0.5, 0, 0}, 0.1, mass_b);
  b.restitution = restitution;
  b.friction = 0.0;
  builder.add_body(a);
  builder.add_body(b);
  const Scene scene = builder.build();
  State final_state;
  run(scene, 8000, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    final_state = s;
  });
  const double v = 2.0, total = mass_a + mass_b;
  const double expected_a = (mass_a - restitution * mass_b) / total * v;
  const double expected_b = (1 + restitution) * mass_a / total * v;
  EXPECT_NEAR(final_state.linear_velocity[1].x, expected_a, 1e-6);
  EXPECT_NEAR(final_state.linear_velocity[2].x, expected_b, 1e-6);
  EXPECT_NEAR(mass_a * final_state.linear_velocity[1].x + mass_b * final_state.linear_velocity[2].x, mass_a * v, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Masses, HeadOnCollision,
                         ::testing::Values(CollisionCase{1, 1, 1.0}, CollisionCase{1, 1, 0.5}, CollisionCase{1, 3, 0.8},
                                           CollisionCase{2, 1, 0.0}));

TEST(Bounce, EachBounceReachesRestitutionSquaredOfThePreviousHeight) {
  ModelBuilder builder;
  builder.dt = 1e-4;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, 1.1}, 0.1, 1.0);
  ball.restitution = 0.7;
  builder.add_body(ball);
  const Scene scene = builder.build();
  std::vector<double> apexes{1.0};
  double previous_vz = 0.0;
  run(scene, 40000, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    const double vz = s.linear_velocity[1].z;
    if (previous_vz > 0 && vz <= 0) apexes.push_back(s.position[1].z - 0.1);
    previous_vz = vz;
  });
  ASSERT_GE(apexes.size(), 4u);
  // Bounces at their time of impact map the integrator's conserved energy by e² exactly
  // (rigid/time_of_impact.hpp): the ratio holds to the sampling of the apex (G h² ≈ 1e-7 m).
  for (std::size_t i = 1; i < 4; ++i) EXPECT_NEAR(apexes[i] / apexes[i - 1], 0.49, 0.49 * 1e-4) << "bounce " << i;
}

struct InclineCase {
  double friction_over_tangent;
  int friction_directions;
};

class Incline : public ::testing::TestWithParam<InclineCase> {};

TEST_P(Incline, BlockSticksBelowTheFrictionAngleAndOtherwiseSlidesAtGSinMinusMuCos) {
  const auto [ratio, directions] = GetParam();
  const double angle = 0.4;  // rad, about the x axis
  const double friction = ratio * std::tan(angle);
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.solver.friction_directions = directions;
  builder.world_friction = friction;
  const Vec3 normal{0, -std::sin(angle), std::cos(angle)};
  builder.add_ground_plane(normal, 0.0);
  BodySpec block = box_body("block", normal * 0.1, {0.1, 0.1, 0.1}, 1.0);
  block.orientation = Quat::from_axis_angle({1, 0, 0}, angle);
  block.friction = friction;
  builder.add_body(block);
  const Scene scene = builder.build();
  const Vec3 start = scene.state.position[1];
  State final_state;
  const int steps = 1000;
  run(scene, steps, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged) << "residual " << status.residual;
    final_state = s;
  });
  const Vec3 downhill{0, -std::cos(angle), -std::sin(angle)};
  const double travelled = dot(final_state.position[1] - start, downhill);
  if (ratio > 1) {
    EXPECT_LT(norm(final_state.position[1] - start), 1e-4);
  } else {
    // From rest, s = ½ a t² with the step's first-order bias: compare the velocity instead.
    const double acceleration = 9.81 * (std::sin(angle) - friction * std::cos(angle));
    const double t = steps * builder.dt;
    EXPECT_NEAR(dot(final_state.linear_velocity[1], downhill) / (acceleration * t), 1.0, 0.01);
    EXPECT_NEAR(travelled / (0.5 * acceleration * t * t), 1.0, 0.01);
  }
}

INSTANTIATE_TEST_SUITE_P(Friction, Incline,
                         ::testing::Values(InclineCase{1.2, 4}, InclineCase{0.5, 4}, InclineCase{0.8, 8},
                                           InclineCase{2.0, 8}, InclineCase{0.0, 4}));

// The default pyramid follows the slip (solver.slip_aligned_friction, rigid/inequality_rows.hpp):
// at headings 0°, 10° and 45° a box sticks below tan θ = μ and slides with g(sin θ − μ cos θ)
// above it, as the convex formulation's elliptic cone does (convex_contact_test.cpp).
// Semi-implicit Euler from rest covers a h² N(N+1)/2 in N steps.
TEST(InclineAtAnyHeading, DefaultPyramidSticksBelowTheFrictionAngleAndSlidesAtGSinMinusMuCos) {
  const double mu = 0.5, g = 9.81, h = 1e-3;
  ModelBuilder defaults;
  defaults.dt = h;
  ASSERT_TRUE(defaults.solver.slip_aligned_friction);
  ASSERT_EQ(defaults.solver.formulation, Formulation::Complementarity);
  ASSERT_EQ(defaults.solver.friction_directions, 4);
  for (const double heading_degrees : {0.0, 10.0, 45.0}) {
    const double heading = heading_degrees * std::numbers::pi / 180.0;
    int unconverged = 0;
    EXPECT_LT(std::abs(testing::slope_travel(defaults, std::atan(0.9 * mu), heading, mu, 2.0, unconverged)), 1e-6)
        << "heading " << heading_degrees;
    const double slide_angle = std::atan(1.5 * mu);
    const double acceleration = g * (std::sin(slide_angle) - mu * std::cos(slide_angle));
    const int steps = 1000;
    const double expected = acceleration * h * h * steps * (steps + 1) / 2.0;
    EXPECT_NEAR(testing::slope_travel(defaults, slide_angle, heading, mu, steps * h, unconverged), expected,
                1e-3 * expected)
        << "heading " << heading_degrees;
    EXPECT_EQ(unconverged, 0) << "heading " << heading_degrees;
  }
}

// What the slip-aligned pyramid mends: with a fixed basis, the 4-direction pyramid is a square
// inscribed in Coulomb's circle and holds 0.9 μλ_n only within 6.8° of one of its vertices, so
// the same box slides at 0.9 μ at some heading (and sticks at others).
TEST(InclineAtAnyHeading, FixedPyramidDependsOnTheHeading) {
  const double mu = 0.5;
  ModelBuilder fixed;
  fixed.solver.slip_aligned_friction = false;
  double least = 1e9, most = 0.0;
  for (int heading_degrees = 0; heading_degrees < 90; heading_degrees += 15) {
    int unconverged = 0;
    const double travel = std::abs(testing::slope_travel(fixed, std::atan(0.9 * mu),
                                                         heading_degrees * std::numbers::pi / 180.0, mu, 1.0, unconverged));
    least = std::min(least, travel);
    most = std::max(most, travel);
  }
  EXPECT_GT(most, 1e-2);
  EXPECT_GT(most, 100 * least);
}

TEST(RestingBox, MovesLessThanAMillimetreInTenSeconds) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.add_ground_plane();
  builder.add_body(box_body("box", {0, 0, 0.25}, {0.5, 0.5, 0.25}, 10.0));
  const Scene scene = builder.build();
  State final_state;
  run(scene, 1000, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    final_state = s;
  });
  EXPECT_LT(norm(final_state.position[1] - scene.state.position[1]), 1e-3);
}

TEST(BoxStack, FiveBoxesStayStandingForTenSeconds) {
  for (const SolverType solver : {SolverType::InteriorPoint, SolverType::ProjectedGaussSeidel}) {
    ModelBuilder builder;
    builder.dt = 1e-2;
    builder.solver.type = solver;
    builder.solver.max_iterations = solver == SolverType::InteriorPoint ? 100 : 200;
    builder.solver.tolerance = solver == SolverType::InteriorPoint ? 1e-9 : 1e-5;
    builder.add_ground_plane();
    for (int i = 0; i < 5; ++i) builder.add_body(box_body("box" + std::to_string(i), {0, 0, 0.1 + 0.2 * i}, {0.2, 0.2, 0.1}, 1.0));
    const Scene scene = builder.build();
    State final_state;
    run(scene, 1000, [&](const State& s, const StepStatus&) { final_state = s; });
    for (int i = 1; i <= 5; ++i) {
      EXPECT_LT(norm(final_state.position[static_cast<std::size_t>(i)] - scene.state.position[static_cast<std::size_t>(i)]), 5e-3)
          << "box " << i << (solver == SolverType::InteriorPoint ? " (interior point)" : " (PGS)");
      // Still upright: the body z axis stays vertical.
      EXPECT_GT(final_state.orientation[static_cast<std::size_t>(i)].rotate({0, 0, 1}).z, 0.9999);
    }
  }
}

TEST(NewtonsCradle, PassesMomentumThroughTheRow) {
  ModelBuilder builder;
  builder.dt = 1e-4;
  builder.gravity = {0, 0, 0};
  const double radius = 0.1, gap = 0.002;
  for (int i = 0; i < 5; ++i) {
    BodySpec ball = sphere_body("ball" + std::to_string(i), {(2 * radius + gap) * i, 0, 0}, radius, 1.0);
    ball.restitution = 1.0;
    ball.friction = 0.0;
    if (i == 0) {
      ball.position.x -= 0.05;
      ball.linear_velocity = {1, 0, 0};
    }
    builder.add_body(ball);
  }
  const Scene scene = builder.build();
  State final_state;
  run(scene, 3000, [&](const State& s, const StepStatus&) { final_state = s; });
  for (int i = 1; i <= 4; ++i) EXPECT_NEAR(final_state.linear_velocity[static_cast<std::size_t>(i)].x, 0.0, 1e-3) << i;
  EXPECT_NEAR(final_state.linear_velocity[5].x, 1.0, 1e-3);
}

TEST(Servo, ReachesItsTargetWithinItsTorqueAndVelocityLimits) {
  // A horizontal arm hinged about z (gravity does no work): servo to 1 rad.
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.add_body(box_body("arm", {0.5, 0, 0}, {0.5, 0.05, 0.05}, 2.0));
  JointSpec hinge;
  hinge.name = "shoulder";
  hinge.child = "arm";
  hinge.axis = {0, 0, 1};
  builder.add_joint(hinge);
  ActuatorSpec servo;
  servo.name = "shoulder_servo";
  servo.type = ActuatorType::Servo;
  servo.joint = "shoulder";
  // Gain 3/s asks for at most 3 · 0.8 = 2.4 rad/s² of braking, within the 3 rad/s² that
  // 2 N·m gives this arm, so it can track its velocity command all the way in.
  servo.gain = 3.0;
  servo.max_torque = 2.0;
  servo.max_velocity = 0.8;
  servo.control = 1.0;
  builder.add_actuator(servo);
  const Scene scene = builder.build();
  // Torque about the pivot from the change of angular momentum about it over one step:
  // I_c Δω + r × m Δv (r from the pivot to the centre of mass at the start of the step).
  const double mass = 2.0, center_inertia = mass * (1.0 * 1.0 + 0.1 * 0.1) / 12.0;
  State previous = scene.state;
  double max_rate = 0.0, max_torque = 0.0;
  State final_state;
  run(scene, 5000, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    max_rate = std::max(max_rate, std::abs(joint_velocity(scene.model, s, 0, 0)));
    const double angular_impulse =
        center_inertia * (s.angular_velocity[1].z - previous.angular_velocity[1].z) +
        cross(previous.position[1], (s.linear_velocity[1] - previous.linear_velocity[1]) * mass).z;
    max_torque = std::max(max_torque, std::abs(angular_impulse / builder.dt));
    previous = s;
    final_state = s;
  });
  EXPECT_NEAR(joint_position(scene.model, final_state, 0, 0), 1.0, 1e-4);
  // The servo row holds the start-of-step rate at 0.8; the joint projection then moves
  // velocities by O(h²) (here ~1e-7 relative).
  EXPECT_LE(max_rate, 0.8 * (1 + 1e-6)) << max_rate - 0.8;
  EXPECT_GT(max_rate, 0.8 - 1e-6);  // the velocity limit was reached: the test bites
  EXPECT_LE(max_torque, 2.0 * (1 + 1e-6));
  EXPECT_GT(max_torque, 2.0 * (1 - 1e-3));  // and so was the torque limit
}

TEST(Motor, ConstantTorqueGivesTheClosedFormAngularAccelerationAndIsClipped) {
  // A horizontal bar hinged at its end about z (gravity does no work): θ(t) = ½ (τ/I) t².
  for (const double max_torque : {0.0, 0.3}) {
    ModelBuilder builder;
    builder.dt = 1e-3;
    builder.add_body(box_body("bar", {0.5, 0, 0}, {0.5, 0.05, 0.05}, 2.0));
    JointSpec hinge;
    hinge.name = "hinge";
    hinge.child = "bar";
    hinge.axis = {0, 0, 1};
    builder.add_joint(hinge);
    ActuatorSpec motor;
    motor.name = "motor";
    motor.type = ActuatorType::Motor;
    motor.joint = "hinge";
    motor.max_torque = max_torque;  // 0: unbounded
    motor.control = 0.5;
    builder.add_actuator(motor);
    const Scene scene = builder.build();
    const double pivot_inertia = 2.0 * (1.0 + 0.01) / 12.0 + 2.0 * 0.25;
    const double torque = max_torque > 0 ? max_torque : 0.5;
    State final_state;
    const int steps = 500;
    run(scene, steps, [&](const State& s, const StepStatus&) { final_state = s; });
    const double t = steps * builder.dt;
    // The joint projection moves velocities by O(h²) relative per step: 1e-6 relative.
    const double expected_rate = torque / pivot_inertia * t;
    EXPECT_NEAR(joint_velocity(scene.model, final_state, 0, 0), expected_rate, 1e-6 * expected_rate);
    // Semi-implicit Euler: θ_n = ½ α h² n(n+1).
    EXPECT_NEAR(joint_position(scene.model, final_state, 0, 0), 0.5 * torque / pivot_inertia * t * (t + builder.dt), 1e-8);
  }
}

TEST(Servo, TooWeakToHoldAgainstGravitySaturatesAtItsTorque) {
  // Arm hinged about y under gravity; holding it horizontal needs m g L/2 = 9.81 N·m.
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.add_body(box_body("arm", {0.5, 0, 0}, {0.5, 0.05, 0.05}, 2.0));
  JointSpec hinge;
  hinge.name = "shoulder";
  hinge.child = "arm";
  hinge.axis = {0, 1, 0};
  hinge.damping = 2.0;  // so that the arm settles instead of swinging about its equilibrium
  builder.add_joint(hinge);
  ActuatorSpec servo;
  servo.name = "servo";
  servo.type = ActuatorType::Servo;
  servo.joint = "shoulder";
  servo.gain = 10.0;
  servo.max_torque = 5.0;
  servo.max_velocity = 2.0;
  builder.add_actuator(servo);
  const Scene scene = builder.build();
  State final_state;
  run(scene, 10000, [&](const State& s, const StepStatus&) { final_state = s; });
  // It sags to where gravity's torque m g (L/2) cos θ equals the bound: cos θ = 5/9.81.
  const double sag = std::acos(5.0 / 9.81);
  EXPECT_NEAR(std::abs(joint_position(scene.model, final_state, 0, 0)), sag, 2e-3);
}

struct JointCase {
  JointType type;
  int free_rotations;     // relative rotational freedom
  int free_translations;  // relative translational freedom
};

class JointConstraint : public ::testing::TestWithParam<JointCase> {};

TEST_P(JointConstraint, KeepsItsConstraintAndOnlyItsFreedoms) {
  const JointCase c = GetParam();
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.gravity = {0, 0, -9.81};
  BodySpec base = box_body("base", {0, 0, 0}, {0.2, 0.2, 0.2}, 3.0);
  base.linear_velocity = {0.3, -0.2, 1.0};
  base.angular_velocity = {0.5, 1.0, -0.7};
  builder.add_body(base);
  BodySpec tip = box_body("tip", {0.5, 0.1, -0.2}, {0.3, 0.1, 0.1}, 1.0);
  tip.linear_velocity = {-0.5, 0.8, 0.2};
  tip.angular_velocity = {2.0, -1.0, 3.0};
  builder.add_body(tip);
  JointSpec joint;
  joint.name = "joint";
  joint.type = c.type;
  joint.parent = "base";
  joint.child = "tip";
  joint.anchor = {0.25, 0.05, -0.1};
  joint.axis = normalized(Vec3{0.3, 1, 0.2});
  joint.axis2 = normalized(cross(joint.axis, Vec3{0, 0, 1}));
  builder.add_joint(joint);
  const Scene scene = builder.build();
  const Model& model = scene.model;
  double worst_error = 0.0, largest_relative_rotation = 0.0, largest_anchor_slide = 0.0;
  const Quat rest = scene.state.orientation[1].conjugate() * scene.state.orientation[2];
  run(scene, 2000, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    worst_error = std::max(worst_error, status.joint_error);
    const Quat relative = s.orientation[1].conjugate() * s.orientation[2] * rest.conjugate();
    largest_relative_rotation = std::max(largest_relative_rotation, norm(rotation_vector(relative)));
    const Vec3 anchor_parent = s.position[1] + s.orientation[1].rotate(model.joints[0].anchor_parent);
    const Vec3 anchor_child = s.position[2] + s.orientation[2].rotate(model.joints[0].anchor_child);
    largest_anchor_slide = std::max(largest_anchor_slide, norm(anchor_child - anchor_parent));
  });
  EXPECT_LT(worst_error, 1e-6);
  if (c.free_rotations == 0) EXPECT_LT(largest_relative_rotation, 1e-6);
  else EXPECT_GT(largest_relative_rotation, 0.1);
  if (c.free_translations == 0) EXPECT_LT(largest_anchor_slide, 1e-6);
  else EXPECT_GT(largest_anchor_slide, 0.01);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, JointConstraint,
                         ::testing::Values(JointCase{JointType::Fixed, 0, 0}, JointCase{JointType::Revolute, 1, 0},
                                           JointCase{JointType::Prismatic, 0, 1}, JointCase{JointType::Ball, 3, 0},
                                           JointCase{JointType::Universal, 2, 0}));

TEST(JointConstraint, RevoluteRotatesOnlyAboutItsAxisAndPrismaticSlidesOnlyAlongIt) {
  for (const JointType type : {JointType::Revolute, JointType::Prismatic}) {
    ModelBuilder builder;
    builder.gravity = {0, 0, -9.81};
    BodySpec body = box_body("body", {0.3, 0, -0.3}, {0.1, 0.1, 0.1}, 1.0);
    body.angular_velocity = {1, 2, 3};
    body.linear_velocity = {1, -2, 0.5};
    builder.add_body(body);
    JointSpec joint;
    joint.name = "j";
    joint.type = type;
    joint.child = "body";
    joint.axis = normalized(Vec3{1, 1, 0});
    builder.add_joint(joint);
    const Scene scene = builder.build();
    const Vec3 axis = normalized(Vec3{1, 1, 0});
    // Relative to the initial speeds (√14 rad/s, ~2.3 m/s): round-off level, not drift.
    run(scene, 1000, [&](const State& s, const StepStatus&) {
      if (type == JointType::Revolute) {
        EXPECT_NEAR(norm(cross(s.angular_velocity[1], axis)), 0.0, 1e-8);
        EXPECT_NEAR(norm(cross(s.orientation[1].rotate(axis), axis)), 0.0, 1e-9);
      } else {
        EXPECT_NEAR(norm(s.angular_velocity[1]), 0.0, 1e-8);
        EXPECT_NEAR(norm(cross(s.position[1] - scene.state.position[1], axis)), 0.0, 1e-9);
      }
    });
  }
}

TEST(JointLimits, HoldTheCoordinateInsideItsRange) {
  // A single hinge with limits, released 1.2 rad from hanging: it must stop at −0.3 (its
  // coordinates count from the build pose).
  ModelBuilder limited;
  limited.dt = 1e-3;
  BodySpec link = box_body("link", Quat::from_axis_angle({0, 1, 0}, 1.2).rotate({0, 0, -0.5}), {0.05, 0.05, 0.5}, 1.0);
  link.orientation = Quat::from_axis_angle({0, 1, 0}, 1.2);
  limited.add_body(link);
  JointSpec hinge;
  hinge.name = "hinge";
  hinge.child = "link";
  hinge.axis = {0, 1, 0};
  hinge.lower_limit = -0.3;
  hinge.upper_limit = 0.5;
  limited.add_joint(hinge);
  const Scene scene = limited.build();
  double lowest = 1e9, highest = -1e9;
  run(scene, 5000, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    const double angle = joint_position(scene.model, s, 0, 0);
    lowest = std::min(lowest, angle);
    if (s.time > 1.0) highest = std::max(highest, angle);
  });
  // Joint coordinates start at 0 for the build pose, so the limits are relative to it.
  EXPECT_GE(lowest, -0.3 - 1e-3);
  EXPECT_LT(lowest, -0.29);  // it did reach the limit
  EXPECT_LE(highest, 0.5 + 1e-3);
}

TEST(Chain, TenLinksSwingingForTenSecondsKeepEveryJointGapUnderAMicrometre) {
  const Scene scene = hinge_chain(10, 0.1, 0.1, 0.8).build();
  double worst = 0.0;
  run(scene, 10000, [&](const State&, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    worst = std::max(worst, status.joint_error);
  });
  EXPECT_LT(worst, 1e-6);
}

TEST(Determinism, SameInputsGiveBitIdenticalTrajectories) {
  ModelBuilder builder;
  builder.dt = 5e-3;
  builder.add_ground_plane();
  for (int i = 0; i < 6; ++i) {
    BodySpec body = i % 2 ? box_body("b" + std::to_string(i), {0.05 * i, 0.03 * i, 0.3 + 0.25 * i}, {0.1, 0.08, 0.06}, 1.0)
                          : sphere_body("b" + std::to_string(i), {-0.04 * i, 0.02 * i, 0.3 + 0.25 * i}, 0.1, 1.0);
    body.angular_velocity = {0.3 * i, -0.2, 0.1};
    body.restitution = 0.3;
    builder.add_body(body);
  }
  for (const SolverType solver : {SolverType::InteriorPoint, SolverType::ProjectedGaussSeidel}) {
    builder.solver.type = solver;
    const Scene scene = builder.build();
    std::vector<State> first, second;
    run(scene, 400, [&](const State& s, const StepStatus&) { first.push_back(s); });
    run(scene, 400, [&](const State& s, const StepStatus&) { second.push_back(s); });
    for (std::size_t t = 0; t < first.size(); ++t)
      for (std::size_t b = 0; b < first[t].position.size(); ++b) {
        ASSERT_EQ(first[t].position[b], second[t].position[b]);
        ASSERT_EQ(first[t].orientation[b], second[t].orientation[b]);
        ASSERT_EQ(first[t].linear_velocity[b], second[t].linear_velocity[b]);
        ASSERT_EQ(first[t].angular_velocity[b], second[t].angular_velocity[b]);
      }
  }
}

// The two solvers solve the same problem: their trajectories agree.
void expect_solvers_agree(ModelBuilder builder, int steps, double tolerance) {
  builder.solver.type = SolverType::InteriorPoint;
  builder.solver.tolerance = 1e-11;
  const Scene interior = builder.build();
  builder.solver.type = SolverType::ProjectedGaussSeidel;
  builder.solver.max_iterations = 2000;
  builder.solver.tolerance = 1e-11;
  const Scene pgs = builder.build();
  std::vector<State> a, b;
  run(interior, steps, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged);
    a.push_back(s);
  });
  run(pgs, steps, [&](const State& s, const StepStatus&) { b.push_back(s); });
  for (std::size_t body = 1; body < a.back().position.size(); ++body) {
    EXPECT_NEAR(norm(a.back().position[body] - b.back().position[body]), 0.0, tolerance) << "body " << body;
    EXPECT_NEAR(norm(a.back().linear_velocity[body] - b.back().linear_velocity[body]), 0.0, tolerance) << "body " << body;
  }
}

TEST(SolverAgreement, ContactFreeChain) { expect_solvers_agree(hinge_chain(3, 0.3, 0.5, 0.7), 500, 1e-7); }

TEST(SolverAgreement, SlidingBoxWithFriction) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.add_ground_plane();
  BodySpec box = box_body("box", {0, 0, 0.1}, {0.1, 0.1, 0.1}, 1.0);
  box.linear_velocity = {1.5, 0.0, 0};
  box.friction = 0.3;
  builder.world_friction = 0.3;
  builder.add_body(box);
  expect_solvers_agree(builder, 300, 1e-6);
}

TEST(SolverAgreement, BouncingSphere) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, 0.5}, 0.1, 1.0);
  ball.restitution = 0.5;
  ball.linear_velocity = {0.5, 0, 0};
  builder.add_body(ball);
  expect_solvers_agree(builder, 1000, 1e-6);
}

TEST(BadInput, IsRefusedWithAMessageNamingTheItemAndTheValue) {
  const auto expect_error = [](auto&& build, const std::string& fragment) {
    try {
      build();
      ADD_FAILURE() << "expected an error containing: " << fragment;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  };
  expect_error([] {
    ModelBuilder builder;
    builder.add_body(sphere_body("ball", {0, 0, 1}, 0.1, -1.0));
    builder.build();
  }, "body 'ball': mass must be positive, got -1");
  expect_error([] {
    ModelBuilder builder;
    builder.dt = 0.0;
    builder.build();
  }, "dt must be positive and finite, got 0");
  expect_error([] {
    ModelBuilder builder;
    builder.add_body(sphere_body("ball", {0, std::nan(""), 1}, 0.1, 1.0));
    builder.build();
  }, "body 'ball': position must be finite");
  expect_error([] {
    ModelBuilder builder;
    builder.add_body(sphere_body("ball", {0, 0, 1}, 0.1, 1.0));
    JointSpec joint;
    joint.name = "elbow";
    joint.child = "forearm";
    builder.add_joint(joint);
    builder.build();
  }, "joint 'elbow': unknown child body 'forearm'");
  expect_error([] {
    ModelBuilder builder;
    BodySpec body = sphere_body("ball", {0, 0, 1}, 0.1, 1.0);
    body.inertia = Vec3{1, 1, 5};
    builder.add_body(body);
    builder.build();
  }, "triangle inequality");
  expect_error([] {
    Scene scene = [] {
      ModelBuilder builder;
      builder.add_body(sphere_body("ball", {0, 0, 1}, 0.1, 1.0));
      return builder.build();
    }();
    scene.params.slice(scene.model, "body/ball/friction")[0] = std::nan("");
    validate_params(scene.model, scene.params);
  }, "parameter 'body/ball/friction' must be finite, got nan");
  expect_error([] {
    Scene scene = [] {
      ModelBuilder builder;
      builder.add_body(sphere_body("ball", {0, 0, 1}, 0.1, 1.0));
      return builder.build();
    }();
    scene.params.slice(scene.model, "body/ball/mass")[0] = -2;
    Simulator simulator(scene.model, scene.params, scene.state);
  }, "parameter 'body/ball/mass' must be positive, got -2");
}

}  // namespace
}  // namespace diffphys
