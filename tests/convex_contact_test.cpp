// tests/convex_contact_test.cpp — the convex formulation (Formulation::Convex; solve/convex.hpp,
// rigid/compliance.hpp, adjoint/convex_vjp.hpp): closed forms (spring penetration, isotropic
// friction on an incline at any heading, restitution), uniqueness against a second method
// on redundant rows, the limit of vanishing compliance, islands, gradients against central
// differences, and refused input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "convex_test_support.hpp"
#include "diffphys/gradcheck.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "experiments/quadruped_model.hpp"
#include "gradcheck_test_helpers.hpp"
#include "rigid/compliance.hpp"
#include "rigid/step_workspace.hpp"
#include "solve/convex.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::error_of;
using testing::joint_spec;
using testing::servo_spec;
using testing::slope_travel;
using testing::solve_dual_by_gauss_seidel;
using testing::sphere_body;

ModelBuilder convex_builder(double dt = 1e-3) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.solver.formulation = Formulation::Convex;
  return builder;
}

// A sphere resting on the ground settles where the contact's spring holds its weight: the
// penetration is g/ω² with ω = 1/(ζτ) (rigid/compliance.hpp), whatever the mass.
TEST(ConvexContact, RestingSphereSinksBySpringPenetration) {
  for (const double mass : {0.1, 10.0}) {
    ModelBuilder builder = convex_builder();
    builder.add_ground_plane();
    builder.compliance[static_cast<int>(RowClass::Contact)] = {0.01, 1.0};
    builder.add_body(sphere_body("ball", {0, 0, 0.1}, 0.1, mass));
    const Scene scene = builder.build();
    Simulator simulator(scene.model, scene.params, scene.state);
    for (int i = 0; i < 3000; ++i) ASSERT_TRUE(simulator.step().converged) << "step " << i;
    const double omega = 1.0 / 0.01;
    EXPECT_NEAR(0.1 - simulator.state().position[1].z, 9.81 / (omega * omega), 1e-9) << "mass " << mass;
  }
}

// Isotropic friction (the elliptic cone): at headings 0°, 10° and 45°, a box sticks below
// tan θ = μ and slides with g(sin θ − μ cos θ) above it. Semi-implicit Euler from rest covers
// a h² N(N+1)/2 in N steps; the regularised stick creeps at κ g sin θ h (about 3e-6 m in 2 s).
TEST(ConvexContact, FrictionOnAnInclineIsTheSameAtEveryHeading) {
  const double mu = 0.5, g = 9.81, h = 1e-3;
  for (const double heading_degrees : {0.0, 10.0, 45.0}) {
    const double heading = heading_degrees * std::numbers::pi / 180.0;
    const double stick_angle = std::atan(0.9 * mu);
    int unconverged = 0;
    EXPECT_LT(std::abs(slope_travel(convex_builder(), stick_angle, heading, mu, 2.0, unconverged)), 2e-5)
        << "heading " << heading_degrees;
    const double slide_angle = std::atan(1.5 * mu);
    const double acceleration = g * (std::sin(slide_angle) - mu * std::cos(slide_angle));
    const int steps = 1000;
    const double expected = acceleration * h * h * steps * (steps + 1) / 2.0;
    EXPECT_NEAR(slope_travel(convex_builder(), slide_angle, heading, mu, steps * h, unconverged), expected,
                2e-3 * expected)
        << "heading " << heading_degrees;
    EXPECT_EQ(unconverged, 0) << "heading " << heading_degrees;
  }
}

// A ball dropped with restitution e: each apex is e² of the previous one (Newton's law at
// the time of impact, as in the hard formulation), to within the compliance's effect: the
// bounce row reaches v⁺ = (v̂ + κ v_free)/(1 + κ), short of its target e·s by about
// κ(1 + 1/e) relative, so an apex ratio is low by about 2κ(1 + 1/e) (1.7e-3 at h = 1 ms).
TEST(ConvexContact, BounceApexesFollowRestitutionSquared) {
  ModelBuilder builder = convex_builder();
  builder.add_ground_plane();
  builder.world_restitution = 0.8;
  BodySpec ball = sphere_body("ball", {0, 0, 1.1}, 0.1, 1.0);
  ball.restitution = 0.8;
  builder.add_body(ball);
  const Scene scene = builder.build();
  std::vector<double> apexes;
  double previous_velocity = 0.0;
  testing::run(scene, 4000, [&](const State& state, const StepStatus& status) {
    ASSERT_TRUE(status.converged);
    const double vz = state.linear_velocity[1].z;
    if (previous_velocity > 0 && vz <= 0) apexes.push_back(state.position[1].z - 0.1);
    previous_velocity = vz;
  });
  ASSERT_GE(apexes.size(), 3U);
  const double kappa = rigid::softness(1e-3, {2e-5, 1.0}).value;
  const double predicted_shortfall = 2.0 * kappa * (1.0 + 1.0 / 0.8);
  const double first_drop = 1.0;
  std::vector<double> ratios{apexes[0] / first_drop, apexes[1] / apexes[0], apexes[2] / apexes[1]};
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    EXPECT_LT(ratios[i], 0.64) << "apex " << i;
    EXPECT_NEAR(ratios[i], 0.64 * (1.0 - predicted_shortfall), 0.64 * 0.25 * predicted_shortfall) << "apex " << i;
  }
}

// A hinge whose servo holds it against its own stop (the quadruped's knee): a servo and a
// limit on one coordinate are two rows able to carry the same impulse, which made the hard
// LCP's solution depend on the method. The convex problem has one solution: Newton from two
// different starts and Gauss–Seidel on the dual agree to 1e-10.
TEST(ConvexContact, ServoAgainstItsStopHasOneSolutionWhateverTheMethod) {
  ModelBuilder builder = convex_builder();
  builder.compliance[static_cast<int>(RowClass::Servo)] = {1e-3, 1.0};
  builder.compliance[static_cast<int>(RowClass::Limit)] = {1e-3, 1.0};
  builder.compliance[static_cast<int>(RowClass::Joint)] = {1e-3, 1.0};
  BodySpec leg = box_body("leg", {0.2, 0, 0}, {0.2, 0.02, 0.02}, 0.8);
  leg.shapes[0].collision_mask = 0;
  builder.add_body(leg);
  JointSpec knee = joint_spec("knee", JointType::Revolute, "world", "leg", {0, 0, 0}, {0, 1, 0});
  knee.lower_limit = -0.3;
  knee.upper_limit = 0.0;  // resting on its upper stop
  builder.add_joint(knee);
  // Holding the stop's angle: the servo (4 N·m available) and the stop can each carry the
  // leg's 1.6 N·m of weight, so the hard LCP's split between them is not unique.
  builder.add_actuator(servo_spec("servo", "knee", 0.0, 20.0, 4.0, 10.0));
  const Scene scene = builder.build();
  Workspace workspace;
  State next = scene.state;
  step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
  const Workspace::Impl& record = workspace.impl();
  ASSERT_GT(record.limit_rows_end, record.joint_rows) << "the stop is in the problem";
  ASSERT_GT(record.first_contact_row, record.limit_rows_end) << "the servo is in the problem";
  const solve::MassBlocks mass = record.bodies.mass_blocks();
  solve::ConvexWorkspace convex;
  std::vector<double> lambda(record.rows.size()), from_rest(record.velocity.size()), from_far(record.velocity.size());
  std::vector<double> far(record.velocity.size(), 3.0);
  const std::vector<double> zero(record.velocity.size(), 0.0);
  ASSERT_TRUE(solve::solve_convex(record.rows, mass, record.free_velocity, zero, 100, 1e-13, convex, lambda, from_rest).converged);
  ASSERT_TRUE(solve::solve_convex(record.rows, mass, record.free_velocity, far, 100, 1e-13, convex, lambda, from_far).converged);
  const std::vector<double> dual = solve_dual_by_gauss_seidel(record.rows, mass, record.free_velocity, 200000);
  for (std::size_t i = 0; i < from_rest.size(); ++i) {
    EXPECT_NEAR(from_rest[i], from_far[i], 1e-10) << i;
    EXPECT_NEAR(from_rest[i], dual[i], 1e-10) << i;
    EXPECT_NEAR(from_rest[i], record.velocity[i], 1e-10) << i;
  }
}

// The §3.3 quadruped leaning on its four feet with its knees on their stops (the case that
// stalled the hard solvers, tests/solver_robustness_test.cpp): in the convex formulation every
// step of 1 s converges to the tolerance, and a step's velocities are the same from three
// starting points and by Gauss–Seidel on the dual.
TEST(ConvexContact, LeaningQuadrupedConvergesEveryStepToOneSolution) {
  experiments::QuadrupedModel robot = experiments::build_quadruped();
  set_formulation(robot.scene, Formulation::Convex);
  std::vector<double> targets(experiments::QuadrupedModel::kServos, 0.0);
  for (int leg = 0; leg < experiments::QuadrupedModel::kLegs; ++leg) targets[static_cast<std::size_t>(2 * leg)] = 0.1;
  const Scene& scene = robot.scene;
  State state = scene.state, next = scene.state;
  Workspace workspace;
  const int steps = static_cast<int>(1.0 / scene.model.dt);
  for (int t = 0; t < steps; ++t) {
    const StepStatus status = step(scene.model, scene.params, state, targets, next, workspace);
    ASSERT_TRUE(status.converged) << "step " << t << ": residual " << status.residual;
    std::swap(state, next);
  }
  step(scene.model, scene.params, state, targets, next, workspace);
  const Workspace::Impl& record = workspace.impl();
  ASSERT_GT(record.rows.size(), record.first_contact_row) << "standing on its feet";
  const solve::MassBlocks mass = record.bodies.mass_blocks();
  solve::ConvexWorkspace convex;
  std::vector<double> lambda(record.rows.size()), solved(record.velocity.size());
  const std::vector<double> zero(record.velocity.size(), 0.0);
  for (const std::span<const double> start : {std::span<const double>(zero), std::span<const double>(record.free_velocity)}) {
    ASSERT_TRUE(solve::solve_convex(record.rows, mass, record.free_velocity, start, 100, 1e-12, convex, lambda, solved).converged);
    for (std::size_t i = 0; i < solved.size(); ++i) EXPECT_NEAR(solved[i], record.velocity[i], 1e-10) << i;
  }
  // The same rows with the compliance learning would use (τ = 2 ms for every class), where
  // the dual is conditioned well enough for Gauss–Seidel to get there in reasonable time.
  std::vector<solve::ConstraintRow> rows = record.rows;
  for (solve::ConstraintRow& row : rows) row.softness = rigid::softness(scene.model.dt, {2e-3, 1.0}).value;
  ASSERT_TRUE(solve::solve_convex(rows, mass, record.free_velocity, zero, 100, 1e-13, convex, lambda, solved).converged);
  const std::vector<double> dual = solve_dual_by_gauss_seidel(rows, mass, record.free_velocity, 100000);
  for (std::size_t i = 0; i < dual.size(); ++i) EXPECT_NEAR(dual[i], solved[i], 1e-10) << i;
}

// Bodies that touch nothing in common are separate islands, solved one by one.
TEST(ConvexContact, SeparatePilesAreSeparateIslands) {
  ModelBuilder builder = convex_builder();
  builder.add_ground_plane();
  builder.add_body(sphere_body("a", {0, 0, 0.1}, 0.1, 1.0));
  builder.add_body(sphere_body("b", {0, 0, 0.3}, 0.1, 1.0));  // on a
  builder.add_body(sphere_body("c", {1, 0, 0.1}, 0.1, 1.0));
  builder.add_body(sphere_body("d", {3, 0, 0.5}, 0.1, 1.0));  // in the air
  const Scene scene = builder.build();
  Workspace workspace;
  State next = scene.state;
  ASSERT_TRUE(step(scene.model, scene.params, scene.state, scene.controls, next, workspace).converged);
  const solve::ConvexIslands& islands = workspace.impl().convex.islands;
  EXPECT_EQ(islands.count, 2);
  EXPECT_EQ(islands.island_of_body[1], islands.island_of_body[2]);
  EXPECT_NE(islands.island_of_body[1], islands.island_of_body[3]);
  EXPECT_EQ(islands.island_of_body[4], -1);
}

// As the compliance vanishes (τ → 0: κ ~ τ²/h², v̂ → −gap/h), a step with strictly
// complementary rows approaches the hard LCP's: a sphere landing with sideways slip.
TEST(ConvexContact, VanishingComplianceApproachesTheHardStep) {
  const auto landing_step = [](Formulation formulation, double time_constant) {
    ModelBuilder builder;
    builder.solver.formulation = formulation;
    builder.solver.time_of_impact = false;
    builder.compliance[static_cast<int>(RowClass::Contact)] = {time_constant, 1.0};
    builder.add_ground_plane();
    // Touching (gap 0, where both formulations' targets are 0: an open gap would differ by
    // the complementarity rows' floor v_n ≥ 0, docs/simulation.md), approaching, slipping
    // along x, an edge of the hard pyramid (there the pyramid and the cone agree); it sticks.
    BodySpec ball = sphere_body("ball", {0, 0, 0.1}, 0.1, 1.0);
    ball.linear_velocity = {0.3, 0.0, -1.0};
    builder.add_body(ball);
    const Scene scene = builder.build();
    State next = scene.state;
    Workspace workspace;
    step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
    return next;
  };
  const State hard = landing_step(Formulation::Complementarity, 1.0);
  double previous_error = 1.0;
  for (const double tau : {1e-4, 1e-5, 1e-6}) {
    const State soft = landing_step(Formulation::Convex, tau);
    const double error = norm(soft.linear_velocity[1] - hard.linear_velocity[1]) +
                         norm(soft.angular_velocity[1] - hard.angular_velocity[1]);
    EXPECT_LT(error, previous_error * 0.2) << "τ " << tau;  // κ falls 100× per decade
    previous_error = error;
  }
  EXPECT_LT(previous_error, 1e-5);
}

// Gradients through the convex step against central differences: contact making and
// breaking, sticking and sliding, a bounce, a servo on its stop, and every parameter class
// including the compliances.
TEST(ConvexContact, GradientsMatchCentralDifferencesOnContactScenes) {
  GradientCheckOptions options;
  options.steps = 60;
  options.tolerance = 1e-5;
  {  // a box landing on a corner while sliding, then sticking; softer contact
    ModelBuilder builder = convex_builder();
    builder.compliance[static_cast<int>(RowClass::Contact)] = {2e-3, 0.7};
    builder.add_ground_plane();
    BodySpec box = box_body("box", {0, 0, 0.13}, {0.1, 0.08, 0.06}, 1.5);
    box.orientation = Quat::from_axis_angle(normalized(Vec3{1, 0.4, 0}), 0.5);
    box.linear_velocity = {0.4, -0.2, -0.5};
    box.angular_velocity = {0.3, 1.0, -0.5};
    builder.add_body(box);
    testing::expect_gradients_match_central_differences(builder.build(), options);
  }
  {  // a bouncing, spinning ball and a second ball it hits
    ModelBuilder builder = convex_builder();
    builder.add_ground_plane();
    BodySpec ball = sphere_body("ball", {0, 0, 0.13}, 0.1, 1.0);
    ball.restitution = 0.6;
    ball.linear_velocity = {1.0, 0.2, -1.2};
    ball.angular_velocity = {0, 4, 0};
    builder.add_body(ball);
    builder.add_body(sphere_body("other", {0.25, 0.03, 0.1003}, 0.1, 0.5));  // lands in a few steps
    testing::expect_gradients_match_central_differences(builder.build(), options);
  }
  {  // a servo driving a hinge into its stop
    ModelBuilder builder = convex_builder();
    builder.compliance[static_cast<int>(RowClass::Limit)] = {5e-3, 0.5};
    builder.compliance[static_cast<int>(RowClass::Servo)] = {5e-3, 2.0};
    BodySpec leg = box_body("leg", {0.2, 0, 0}, {0.2, 0.02, 0.02}, 0.8);
    leg.shapes[0].collision_mask = 0;
    builder.add_body(leg);
    JointSpec knee = joint_spec("knee", JointType::Revolute, "world", "leg", {0, 0, 0}, {0, 1, 0});
    knee.lower_limit = -0.2;
    knee.upper_limit = 0.05;
    builder.add_joint(knee);
    builder.add_actuator(servo_spec("servo", "knee", 0.4, 20.0, 3.0, 2.0));
    testing::expect_gradients_match_central_differences(builder.build(), options);
  }
}

// A box released just above the ground lands on its springs and rests there: without a
// bounce the convex contact's target is the gap's own (it may close within the step). With
// the complementarity formulation's floor v_n ≥ 0 it stopped short and, once less than g·h²
// (9.8 µm at 1 ms) above the ground, hovered there, creeping down at ~κ·g·h per step.
TEST(ConvexContact, BoxDroppedWithoutBounceLandsOnTheSurfaceAndStaysThere) {
  for (const double drop : {1.0e-3, 1.3e-3, 2.9e-3, 7.0e-3}) {
    ModelBuilder builder = convex_builder();
    builder.add_ground_plane();
    builder.add_body(box_body("box", {0, 0, 0.05 + drop}, {0.05, 0.05, 0.05}, 0.5));
    const Scene scene = builder.build();
    State state = scene.state, next = scene.state;
    Workspace workspace;
    for (int k = 0; k < 300; ++k) {
      EXPECT_TRUE(step(scene.model, scene.params, state, scene.controls, next, workspace).converged);
      std::swap(state, next);
    }
    // The spring holds 4.9 N a few nanometres deep (g/ω² per corner share, τ = 2e-5 s).
    EXPECT_NEAR(state.position[1].z, 0.05, 1e-7) << "drop " << drop;
    EXPECT_LT(std::abs(state.linear_velocity[1].z), 1e-7) << "drop " << drop;
  }
}

// Where a contact or a limit starts to act, its target is continuously differentiable in the
// gap: the spring's −g/(h + 2ζ²τ) below the bound, −g/h + βδ/(2h) beyond the band δ, a
// quadratic with matching slopes in between; its τ and ζ derivatives are exact.
TEST(ConvexContact, ContactOnsetTargetIsContinuouslyDifferentiable) {
  const double h = 1e-3, band = 1e-4;
  for (const rigid::RowCompliance compliance : {rigid::RowCompliance{2e-5, 1.0}, rigid::RowCompliance{1e-2, 0.7}}) {
    const auto target = [&](double gap) { return rigid::compliant_gap_target(gap, h, compliance, band); };
    const double d = h + 2 * compliance.damping_ratio * compliance.damping_ratio * compliance.time_constant;
    const double beta = (d - h) / d;
    EXPECT_NEAR(target(-3e-4).value, 3e-4 / d, 1e-15);
    EXPECT_NEAR(target(5e-3).value, -5e-3 / h + beta * band / (2 * h), 1e-12);
    for (const double joint : {0.0, band}) {  // value and slope continuous at both joints
      const double e = 1e-12;
      EXPECT_NEAR(target(joint - e).value, target(joint + e).value, 2.001 * e * std::abs(target(joint).d_gap));
      EXPECT_NEAR(target(joint - e).d_gap, target(joint + e).d_gap, 1e-5 * std::abs(target(joint).d_gap));
    }
    for (const double gap : {-2e-4, -1e-9, 1e-9, 3e-5, 9e-5, 2e-4}) {
      const double e = 1e-10 * std::max(std::abs(gap), 1e-6);
      EXPECT_NEAR(target(gap).d_gap, (target(gap + e).value - target(gap - e).value) / (2 * e),
                  1e-6 * std::abs(target(gap).d_gap))
          << gap;
      const double et = 1e-6 * compliance.time_constant, ez = 1e-6 * compliance.damping_ratio;
      const auto with = [&](double tau, double zeta) {
        return rigid::compliant_gap_target(gap, h, rigid::RowCompliance{tau, zeta}, band).value;
      };
      const double tau = compliance.time_constant, zeta = compliance.damping_ratio;
      EXPECT_NEAR(target(gap).d_time_constant, (with(tau + et, zeta) - with(tau - et, zeta)) / (2 * et),
                  1e-5 * std::abs(target(gap).d_time_constant) + 1e-9)
          << gap;
      EXPECT_NEAR(target(gap).d_damping_ratio, (with(tau, zeta + ez) - with(tau, zeta - ez)) / (2 * ez),
                  1e-5 * std::abs(target(gap).d_damping_ratio) + 1e-9)
          << gap;
    }
  }
}

// Stiff rows put a floor under the certificate: y = (v̂ − Jv)/R divides the rounding of Jv by
// a small R. A swinging 6-link chain with the default joint τ = 1e-5 s at h = 5 ms (κ ≈ 4e-6,
// as MuJoCo's humanoid.xml gets) stalled at 1e-10 to 1e-9 m/s, above the 1e-10 tolerance, on
// about half its steps, reported as not converged; a stall within the residual's own rounding
// error now counts as converged, and every step passes. A solve stopped early is still reported.
TEST(ConvexContact, StiffJointsConvergeToTheirRoundingAndAStoppedSolveIsStillReported) {
  ModelBuilder builder = testing::hinge_chain(6, 0.3, 1.0, 0.8, 0u);
  builder.dt = 5e-3;
  builder.solver.formulation = Formulation::Convex;
  const Scene scene = builder.build();
  State state = scene.state, next = scene.state;
  Workspace workspace;
  double worst = 0.0;
  for (int t = 0; t < 400; ++t) {
    const StepStatus status = step(scene.model, scene.params, state, scene.controls, next, workspace);
    ASSERT_TRUE(status.converged) << "step " << t << ": residual " << status.residual;
    worst = std::max(worst, status.residual);
    std::swap(state, next);
  }
  EXPECT_LT(worst, 1e-8) << "a residual this large is not rounding at κ ≈ 4e-6";
  EXPECT_GT(std::abs(state.angular_velocity[1].y), 0.1) << "still swinging";

  // A box landing on a corner, its solve given no iteration from 3 m/s off: a residual far
  // above the rounding bar is still reported, and with iterations it converges.
  ModelBuilder drop = convex_builder();
  drop.add_ground_plane();
  BodySpec box = box_body("box", {0, 0, 0.2}, {0.1, 0.1, 0.1}, 1.0);
  box.orientation = Quat::from_axis_angle(normalized(Vec3{1, 1, 0}), 0.6);
  drop.add_body(box);
  const Scene dropped = drop.build();
  State falling = dropped.state, after = dropped.state;
  Workspace drop_workspace;
  const Workspace::Impl& record = drop_workspace.impl();
  for (int t = 0; t < 1000 && record.rows.size() == record.first_contact_row; ++t) {
    step(dropped.model, dropped.params, falling, dropped.controls, after, drop_workspace);
    std::swap(falling, after);
  }
  ASSERT_GT(record.rows.size(), record.first_contact_row) << "the corner touches";
  const solve::MassBlocks mass = record.bodies.mass_blocks();
  solve::ConvexWorkspace convex;
  std::vector<double> lambda(record.rows.size()), solved(record.velocity.size());
  const std::vector<double> far(record.velocity.size(), 3.0);
  const solve::MlcpResult stopped =
      solve::solve_convex(record.rows, mass, record.free_velocity, far, 0, 1e-10, convex, lambda, solved);
  EXPECT_FALSE(stopped.converged) << "no Newton iteration from 3 m/s off: residual " << stopped.residual;
  EXPECT_GT(stopped.residual, 1.0);
  EXPECT_TRUE(solve::solve_convex(record.rows, mass, record.free_velocity, far, 100, 1e-10, convex, lambda, solved)
                  .converged);
}

// Compliance parameters must be positive and finite: refused at build time and in the scene
// file, naming the item and the value.
TEST(ConvexContact, BadComplianceIsRefused) {
  ModelBuilder builder = convex_builder();
  builder.add_ground_plane();
  builder.compliance[static_cast<int>(RowClass::Contact)] = {0.0, 1.0};
  EXPECT_NE(error_of([&] { (void)builder.build(); }).find("compliance/contact/time_constant' must be positive, got 0"),
            std::string::npos);
  builder.compliance[static_cast<int>(RowClass::Contact)] = {1e-3, -1.0};
  EXPECT_NE(error_of([&] { (void)builder.build(); }).find("compliance/contact/damping_ratio' must be positive, got -1"),
            std::string::npos);
  builder.compliance[static_cast<int>(RowClass::Contact)] = {std::nan(""), 1.0};
  EXPECT_NE(error_of([&] { (void)builder.build(); }).find("compliance/contact/time_constant' must be finite"),
            std::string::npos);
  const std::string text =
      R"({"solver": {"formulation": "convex", "compliance": {"joint": {"damping_ratio": 0}}}, "bodies": []})";
  EXPECT_NE(error_of([&] { (void)parse_scene(text); }).find("solver.compliance.joint.damping_ratio: must be positive"),
            std::string::npos)
      << error_of([&] { (void)parse_scene(text); });
}

}  // namespace
}  // namespace diffphys
