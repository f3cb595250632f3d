// tests/gradient_test.cpp — gradients of whole rollouts (diffphys/rollout.hpp): closed forms
// (projectile, elastic collision swap, bounce height vs restitution and vs drop height — the
// latter through the bounce's time of impact), and
// central finite differences of 100+-step rollouts with respect to the initial state (in
// the tangent layout), controls and every parameter, on a pendulum, a 10-link chain, a
// servo arm, a sphere sliding with friction, a box resting and pushed, a bouncing ball;
// checkpointing equal to storing every state; the health report catching a NaN.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numbers>
#include <fstream>
#include <sstream>
#include <random>
#include <string>

#include "gradcheck_test_helpers.hpp"
#include "diffphys/rollout.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::hinge_chain;
using testing::sphere_body;

constexpr int kTangent = kStateTangentPerBody;

struct Case {
  Scene scene;
  std::vector<double> controls;  // steps × nactuator
  int steps = 100;
};

// Every analytic gradient of the case against central differences (diffphys/gradcheck.hpp);
// returns the number of entries compared.
int expect_gradients_match_central_differences(const Case& c, double tolerance, std::uint32_t seed,
                                               double param_epsilon = 1e-6) {
  GradientCheckOptions options;
  options.param_epsilon = param_epsilon;
  options.steps = c.steps;
  options.tolerance = tolerance;
  options.seed = seed;
  return static_cast<int>(testing::expect_gradients_match_central_differences(c.scene, options, c.controls).entries.size());
}

TEST(Gradient, ProjectileFinalPositionWithRespectToInitialVelocityAndGravity) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  BodySpec ball = sphere_body("ball", {0, 0, 5}, 0.1, 1.0);
  ball.linear_velocity = {1, 2, 3};
  builder.add_body(ball);
  const Scene scene = builder.build();
  Rollout rollout(scene.model, scene.params);
  const int steps = 100;
  rollout.run(scene.state, {}, steps);
  // L = z_T: ∂z_T/∂v_z0 = T, ∂z_T/∂z_0 = 1, ∂z_T/∂g_z = ½ t (t + h) (semi-implicit Euler).
  const Gradients g = rollout.backward([&](int t, const State&, std::span<double> out) {
    if (t == steps) out[kTangent * 1 + 2] += 1.0;
  });
  const double t = steps * builder.dt;
  EXPECT_NEAR(g.initial_state[kTangent + 2], 1.0, 1e-12);
  EXPECT_NEAR(g.initial_state[kTangent + 6 + 2], t, 1e-12);
  EXPECT_NEAR(g.initial_state[kTangent + 6 + 0], 0.0, 1e-12);
  EXPECT_NEAR(g.param(scene.model, "gravity")[2], 0.5 * t * (t + builder.dt), 1e-12);
  EXPECT_NEAR(g.param(scene.model, "body/ball/mass")[0], 0.0, 1e-12);
}

TEST(Gradient, HeadOnElasticCollisionSwapsVelocities) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.gravity = {0, 0, 0};
  BodySpec a = sphere_body("a", {-0.3, 0, 0}, 0.1, 1.0);
  a.linear_velocity = {1.0, 0, 0};
  a.restitution = 1.0;
  a.friction = 0.0;
  BodySpec b = sphere_body("b", {0.3, 0, 0}, 0.1, 1.0);
  b.linear_velocity = {-0.5, 0, 0};
  b.restitution = 1.0;
  b.friction = 0.0;
  builder.add_body(a);
  builder.add_body(b);
  const Scene scene = builder.build();
  Rollout rollout(scene.model, scene.params);
  const int steps = 600;
  rollout.run(scene.state, {}, steps);
  ASSERT_LT(rollout.final_state().linear_velocity[1].x, 0.0);  // the collision happened
  // d(v_T)/d(v_0) for the x components: [[0, 1], [1, 0]].
  for (int output = 1; output <= 2; ++output) {
    const Gradients g = rollout.backward([&](int t, const State&, std::span<double> out) {
      if (t == steps) out[static_cast<std::size_t>(kTangent * output + 6)] += 1.0;
    });
    EXPECT_NEAR(g.initial_state[kTangent * 1 + 6], output == 1 ? 0.0 : 1.0, 1e-6);
    EXPECT_NEAR(g.initial_state[kTangent * 2 + 6], output == 1 ? 1.0 : 0.0, 1e-6);
  }
}

TEST(Gradient, BounceHeightWithRespectToRestitution) {
  // Apex after one bounce h1 = e² h0: ∂h1/∂e = 2 e h0.
  const double e = 0.6, h0 = 1.0, radius = 0.1;
  ModelBuilder builder;
  builder.dt = 1e-4;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, h0 + radius}, radius, 1.0);
  ball.restitution = e;
  builder.add_body(ball);
  const Scene scene = builder.build();
  Rollout rollout(scene.model, scene.params);
  const double fall = std::sqrt(2 * h0 / 9.81), rise = e * fall;
  const int apex = static_cast<int>(std::round((fall + rise) / builder.dt));
  rollout.run(scene.state, {}, apex);
  const Gradients g = rollout.backward([&](int t, const State&, std::span<double> out) {
    if (t == apex) out[kTangent + 2] += 1.0;
  });
  EXPECT_NEAR(g.param(scene.model, "body/ball/restitution")[0] / (2 * e * h0), 1.0, 0.01);
}

// A ball of radius 0.1 dropped from rest at height h0 (its lowest point) onto the ground.
Scene dropped_ball(double restitution, double h0, double dt, bool time_of_impact) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.solver.time_of_impact = time_of_impact;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, h0 + 0.1}, 0.1, 1.0);
  ball.restitution = restitution;
  builder.add_body(ball);
  return builder.build();
}

struct BounceRun {
  int bounce_step = -1;  // the first step whose velocity points up
  int apex_step = -1;    // the last step of the rise (the discrete maximum of the height)
  double height = 0.0;   // of the lowest point at apex_step
};

BounceRun run_to_the_apex(const Scene& scene, int apex_step = -1) {
  Simulator simulator(scene.model, scene.params, scene.state);
  BounceRun run;
  for (int t = 1; t < 100000; ++t) {
    simulator.step();
    const double vz = simulator.state().linear_velocity[1].z;
    if (run.bounce_step < 0 && vz > 0) run.bounce_step = t;
    if (apex_step < 0 ? (run.bounce_step >= 0 && vz <= 0) : t == apex_step + 1) {
      run.apex_step = t - 1;
      break;
    }
    run.height = simulator.state().position[1].z - 0.1;
  }
  return run;
}

// dh1/dh0 of the simulator: analytic (Rollout) and central differences at the same apex step.
struct DropHeightGradient {
  double analytic = 0.0, numeric = 0.0, height = 0.0;
};

DropHeightGradient drop_height_gradient(double e, double h0, double dt, bool time_of_impact) {
  const Scene scene = dropped_ball(e, h0, dt, time_of_impact);
  const BounceRun run = run_to_the_apex(scene);
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, run.apex_step);
  const Gradients g = rollout.backward([&](int t, const State&, std::span<double> out) {
    if (t == run.apex_step) out[kTangent + 2] += 1.0;
  });
  // h1 is affine in h0 while the bounce stays in its step (the step's τ = g/s_f is linear in
  // the gap): a step of 1e-5 m, checked to leave the bounce step where it is.
  const double epsilon = 1e-5;
  const BounceRun up = run_to_the_apex(dropped_ball(e, h0 + epsilon, dt, time_of_impact), run.apex_step);
  const BounceRun down = run_to_the_apex(dropped_ball(e, h0 - epsilon, dt, time_of_impact), run.apex_step);
  EXPECT_EQ(up.bounce_step, run.bounce_step);
  EXPECT_EQ(down.bounce_step, run.bounce_step);
  return {g.initial_state[kTangent + 2], (up.height - down.height) / (2 * epsilon), run.height};
}

TEST(Gradient, BounceHeightWithRespectToDropHeight) {
  // Apex after one bounce h1 = e² h0: ∂h1/∂h0 = e². The bounce happens at its time of impact
  // inside the step (rigid/time_of_impact.hpp), so h1 moves smoothly with h0; the discrete
  // simulator's derivative matches its own central differences and approaches e² as h → 0.
  // Drop heights are not multiples of anything: the impacts fall mid-step (at 0.59 and 0.45
  // of the step for h = 1e-4 s, 0.41 and 0.70 for h = 1e-3 s).
  for (const double e : {0.3, 0.6, 0.9}) {
    for (const double h0 : {0.5371, 1.1931}) {
      const DropHeightGradient fine = drop_height_gradient(e, h0, 1e-4, true);
      EXPECT_NEAR(fine.analytic / fine.numeric, 1.0, 1e-6) << "e " << e << ", h0 " << h0;
      EXPECT_NEAR(fine.analytic / (e * e), 1.0, 2e-3) << "e " << e << ", h0 " << h0;
      // The bounce maps the integrator's conserved energy by e² exactly (rigid/time_of_impact.hpp):
      // the discrete apex is e² h0 up to where the apex falls between two steps.
      EXPECT_NEAR(fine.height / (e * e * h0), 1.0, 1e-5) << "e " << e << ", h0 " << h0;
      // The discretisation error is first order in h: ten times the step, about ten times it.
      const DropHeightGradient coarse = drop_height_gradient(e, h0, 1e-3, true);
      EXPECT_NEAR(coarse.analytic / coarse.numeric, 1.0, 1e-6) << "e " << e << ", h0 " << h0;
      EXPECT_NEAR(coarse.analytic / (e * e), 1.0, 2e-2) << "e " << e << ", h0 " << h0;
      std::printf("e %.1f h0 %.4f: dh1/dh0 / e^2 = %.6f (h = 1e-3), %.6f (h = 1e-4); h1 / e^2 h0 = %.6f\n", e, h0,
                  coarse.analytic / (e * e), fine.analytic / (e * e), fine.height / (e * e * h0));
    }
  }
}

TEST(Gradient, BounceHeightWithRespectToDropHeightIsOneWithoutTimeOfImpact) {
  // solver.time_of_impact off: the bounce acts over its whole step, which stays the same
  // under a small change of h0, so h1 − h0 is locally constant: the derivative is 1 (and
  // the simulator's central differences agree) — the reason time of impact is on by default.
  const DropHeightGradient g = drop_height_gradient(0.6, 0.5371, 1e-4, false);
  EXPECT_NEAR(g.analytic, 1.0, 1e-6);
  EXPECT_NEAR(g.numeric, 1.0, 1e-6);
}

TEST(Gradient, StaticBodiesAreFixedSceneryListedAsNotDifferentiable) {
  // The ground reaches the ball through contacts, a hinge's world anchor through the joint:
  // neither is followed fully, so the world's rows are zero and it is listed, not silent.
  ModelBuilder builder = hinge_chain(2, 0.4, 1.0, 0.6);
  builder.add_ground_plane({0, 0, 1}, -0.75);
  BodySpec ball = sphere_body("ball", {0.5, 0, -0.6}, 0.1, 1.0);
  ball.restitution = 0.5;
  builder.add_body(ball);
  const Scene scene = builder.build();
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, std::vector<double>{}, 130);  // the ball lands at ~0.1 s
  ASSERT_GT(rollout.final_state().linear_velocity[3].z, 0.0);  // and has bounced off the ground
  const Gradients g = rollout.backward([&](int t, const State& x, std::span<double> out) {
    for (int b = 0; b < scene.model.body_count(); ++b) out[static_cast<std::size_t>(kTangent * b + 2)] += x.position[static_cast<std::size_t>(b)].z * t;
  });
  EXPECT_NE(std::find(g.not_differentiable.begin(), g.not_differentiable.end(), "x0/world"), g.not_differentiable.end());
  for (int k = 0; k < kTangent; ++k) EXPECT_EQ(g.initial_state[static_cast<std::size_t>(k)], 0.0) << k;
  double dynamic = 0.0;
  for (std::size_t k = kTangent; k < g.initial_state.size(); ++k) dynamic += std::abs(g.initial_state[k]);
  EXPECT_GT(dynamic, 0.0);
}

TEST(Gradient, PendulumMatchesCentralDifferences) {
  ModelBuilder builder = hinge_chain(1, 0.5, 1.0, 0.7);
  builder.dt = 1e-2;
  Case c{builder.build(), {}, 150};
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 1), 10);
}

TEST(Gradient, TenLinkChainMatchesCentralDifferences) {
  ModelBuilder builder = hinge_chain(10, 0.1, 0.1, 0.8);
  builder.dt = 5e-3;
  Case c{builder.build(), {}, 100};
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 2, 1e-5), 100);
}

TEST(Gradient, ServoArmMatchesCentralDifferencesIncludingControls) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.gravity = {0, 0, -9.81};
  BodySpec upper = box_body("upper", {0, 0, -0.25}, {0.04, 0.04, 0.25}, 2.0);
  BodySpec lower = box_body("lower", {0, 0, -0.75}, {0.04, 0.04, 0.25}, 1.0);
  builder.add_body(upper);
  builder.add_body(lower);
  JointSpec shoulder;
  shoulder.name = "shoulder";
  shoulder.type = JointType::Universal;
  shoulder.child = "upper";
  shoulder.axis = {1, 0, 0};
  shoulder.axis2 = {0, 1, 0};
  builder.add_joint(shoulder);
  JointSpec elbow;
  elbow.name = "elbow";
  elbow.parent = "upper";
  elbow.child = "lower";
  elbow.anchor = {0, 0, -0.5};
  elbow.axis = {0, 1, 0};
  elbow.damping = 0.05;
  builder.add_joint(elbow);
  for (const auto& [name, joint, dof] : {std::tuple{"s0", "shoulder", 0}, std::tuple{"s1", "shoulder", 1}}) {
    ActuatorSpec servo;
    servo.name = name;
    servo.type = ActuatorType::Servo;
    servo.joint = joint;
    servo.dof = dof;
    servo.gain = 5.0;
    servo.max_torque = 50.0;
    servo.max_velocity = 10.0;
    builder.add_actuator(servo);
  }
  ActuatorSpec motor;
  motor.name = "elbow_motor";
  motor.joint = "elbow";
  builder.add_actuator(motor);
  Case c{builder.build(), {}, 100};
  for (int t = 0; t < c.steps; ++t) {
    c.controls.push_back(0.3 * std::sin(0.05 * t));
    c.controls.push_back(-0.2);
    c.controls.push_back(0.5 * std::cos(0.03 * t));
  }
  // The shoulder link's smallest moment (~2e-3 kg·m²) has a tiny gradient: parameter steps of
  // 1e-4 relative keep finite differences above the solver-residual noise.
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 3, 1e-4), 40);
}

TEST(Gradient, SphereSlidingWithFrictionMatchesCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, 0.1}, 0.1, 1.0);
  ball.linear_velocity = {2.0, 0.5, 0};
  ball.friction = 0.3;
  builder.world_friction = 0.3;
  builder.add_body(ball);
  Case c{builder.build(), {}, 100};
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 4), 10);
}

// The slip-aligned pyramid (rigid/inequality_rows.hpp) turns with the contact's slip: a
// spinning sphere thrown across a slope whose downhill is at 30° about z slides along a
// curving slip, then rolls; the pyramid's axes, and their derivatives through the free
// velocity, the contact offset and the normal, change every step.
TEST(Gradient, SphereSlidingAcrossATurnedSlopeWithSpinMatchesCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  const double slope = 0.3, heading = std::numbers::pi / 6;
  const Vec3 normal{std::sin(slope) * std::cos(heading), std::sin(slope) * std::sin(heading), std::cos(slope)};
  builder.add_ground_plane(normal, 0.0);
  BodySpec ball = sphere_body("ball", normal * 0.1, 0.1, 1.0);
  ball.linear_velocity = cross(normal, Vec3{std::cos(heading), std::sin(heading), 0}) * 1.2;
  ball.angular_velocity = {2.0, -1.0, 0.5};
  ball.friction = 0.2;
  builder.world_friction = 0.2;
  builder.add_body(ball);
  ASSERT_TRUE(builder.solver.slip_aligned_friction);
  Case c{builder.build(), {}, 100};
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 7), 10);
}

TEST(Gradient, BoxRestingAndPushedMatchesCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.add_ground_plane();
  BodySpec box = box_body("box", {0, 0, 0.1}, {0.2, 0.15, 0.1}, 2.0);
  box.force = {6.0, 1.0, 0};  // pushed past the friction threshold μ m g = 0.25 · 2 · 9.81 ≈ 4.9 N
  box.friction = 0.25;
  builder.world_friction = 0.25;
  builder.add_body(box);
  Case c{builder.build(), {}, 100};
  // Four redundant corner contacts: the residual-level noise of the loss (~1e-11) needs
  // parameter steps of 1e-4 relative (no contact event is near).
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 5, 1e-4), 10);
}

TEST(Gradient, BouncingBallBetweenContactsMatchesCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, 0.6}, 0.1, 1.0);
  ball.restitution = 0.5;
  ball.linear_velocity = {0.3, 0, 0};
  builder.add_body(ball);
  Case c{builder.build(), {}, 120};
  EXPECT_GT(expect_gradients_match_central_differences(c, 1e-5, 6), 10);
}

TEST(Gradient, CheckpointingGivesTheSameGradientsAsStoringEveryState) {
  const Scene scene = hinge_chain(3, 0.3, 0.5, 0.7).build();
  // Six ways to the same numbers: every state or a checkpoint every 7 steps, each with the
  // default records, with keep_step_workspaces, or re-run with no record. (A chain's steps
  // have joint rows only: its default records are Workspaces too, of the whole run or of one
  // recomputed segment at a time; Gradient.ReplayedStepsGiveTheSameGradientsAsStepRecords
  // covers replayed solutions.)
  struct Way {
    const char* name;
    int interval;
    bool records, workspaces;
  };
  const Way ways[] = {{"every state, default records", 0, true, false}, {"every state, workspaces", 0, true, true},
                      {"every state, re-run", 0, false, false},           {"checkpoints, default records", 7, true, false},
                      {"checkpoints, workspaces", 7, true, true},         {"checkpoints, re-run", 7, false, false}};
  const auto loss = [](int t, const State&, std::span<double> out) {
    if (t % 10 == 0) out[kTangent * 3 + 0] += 1.0;
  };
  std::vector<Gradients> gradients;
  for (const Way& way : ways) {
    SCOPED_TRACE(way.name);
    RolloutOptions options;
    options.checkpoint_interval = way.interval;
    options.keep_step_records = way.records;
    options.keep_step_workspaces = way.workspaces;
    Rollout rollout(scene.model, scene.params, options);
    rollout.run(scene.state, {}, 100);
    EXPECT_EQ(rollout.checkpoint_interval(), way.interval == 0 ? 1 : 7);
    // The forward pass keeps records only beside every state (a segment's are the backward's);
    // the chain's problems are joint rows only, which no replay skips: its records are
    // Workspaces whether asked or not.
    EXPECT_EQ(rollout.stored_solution_bytes() > 0, way.interval == 0 && way.records);
    EXPECT_EQ(rollout.stored_workspace_bytes() > 0, way.interval == 0 && way.records);
    gradients.push_back(rollout.backward(loss));
    if (way.interval == 0 && way.workspaces) {
      // A second run of the same Rollout reuses its records' buffers and gives the same bits.
      rollout.run(scene.state, {}, 100);
      EXPECT_EQ(rollout.backward(loss).params, gradients.back().params);
    }
  }
  for (std::size_t k = 1; k < gradients.size(); ++k) {
    SCOPED_TRACE(ways[k].name);
    EXPECT_EQ(gradients[0].initial_state, gradients[k].initial_state);
    EXPECT_EQ(gradients[0].params, gradients[k].params);
  }
}

TEST(Gradient, StepWorkspacesAreDroppedWhenTheyOutgrowTheMemoryBudget) {
  const Scene scene = hinge_chain(3, 0.3, 0.5, 0.7).build();
  RolloutOptions small, unlimited_options;
  small.keep_step_workspaces = unlimited_options.keep_step_workspaces = true;
  small.memory_budget = 200 * 1024;  // the 101 states and their solutions fit, their Workspaces do not
  Rollout rollout(scene.model, scene.params, small);
  rollout.run(scene.state, {}, 100);
  EXPECT_EQ(rollout.checkpoint_interval(), 1);
  EXPECT_EQ(rollout.stored_workspace_bytes(), 0u);
  EXPECT_GT(rollout.stored_solution_bytes(), 0u);
  Rollout unlimited(scene.model, scene.params, unlimited_options);
  unlimited.run(scene.state, {}, 100);
  EXPECT_GT(unlimited.stored_workspace_bytes(), small.memory_budget);
  const auto loss = [](int t, const State&, std::span<double> out) {
    if (t == 100) out[kTangent * 2 + 2] += 1.0;
  };
  EXPECT_EQ(rollout.backward(loss).params, unlimited.backward(loss).params);
}

// Contacts: by default backward replays each step from its stored solution (λ, v⁺) instead of
// solving it again; the gradients are those of whole step Workspaces, bit for bit, with either
// solver and either formulation, and those of full re-runs (no records).
TEST(Gradient, ReplayedStepsGiveTheSameGradientsAsStepRecords) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex})
    for (const SolverType solver : {SolverType::ProjectedGaussSeidel, SolverType::InteriorPoint}) {
      if (formulation == Formulation::Convex && solver == SolverType::ProjectedGaussSeidel) continue;
      SCOPED_TRACE(formulation == Formulation::Convex             ? "convex"
                   : solver == SolverType::ProjectedGaussSeidel ? "PGS"
                                                                : "interior point");
      ModelBuilder builder;
      builder.solver.type = solver;
      builder.solver.formulation = formulation;
      builder.add_ground_plane();
      builder.add_body(sphere_body("low", {0, 0, 0.095}, 0.1, 1.0));
      BodySpec upper = sphere_body("high", {0.03, 0.01, 0.29}, 0.1, 0.5);
      upper.linear_velocity = {0.2, 0, 0};
      upper.friction = 0.4;
      builder.add_body(upper);
      const Scene scene = builder.build();
      RolloutOptions workspaces, rerun, segments, segments_rerun;
      workspaces.keep_step_workspaces = true;
      rerun.keep_step_records = segments_rerun.keep_step_records = false;
      segments.checkpoint_interval = segments_rerun.checkpoint_interval = 7;  // one segment's solutions replayed
      Rollout stored(scene.model, scene.params, workspaces), replaying(scene.model, scene.params),
          rerunning(scene.model, scene.params, rerun), segment_replaying(scene.model, scene.params, segments),
          segment_rerunning(scene.model, scene.params, segments_rerun);
      for (Rollout* rollout : {&stored, &replaying, &rerunning, &segment_replaying, &segment_rerunning})
        rollout->run(scene.state, {}, 40);
      EXPECT_GT(stored.stored_workspace_bytes(), 0u);
      EXPECT_EQ(replaying.stored_workspace_bytes(), 0u);
      EXPECT_GT(replaying.stored_solution_bytes(), 0u);
      EXPECT_EQ(rerunning.checkpoint_interval(), 1);
      EXPECT_EQ(rerunning.stored_record_bytes(), 0u);
      const auto loss = [](int t, const State&, std::span<double> out) {
        if (t % 8 == 0) {
          out[kTangent * 2 + 0] += 1.0;
          out[kTangent * 1 + 2] += 0.5;
        }
      };
      const Gradients a = stored.backward(loss);
      bool nonzero = false;
      for (const double g : a.params) nonzero = nonzero || g != 0.0;
      EXPECT_TRUE(nonzero);
      for (const Rollout* other : {&replaying, &rerunning, &segment_replaying, &segment_rerunning}) {
        const Gradients b = other->backward(loss);
        EXPECT_EQ(a.initial_state, b.initial_state);
        EXPECT_EQ(a.params, b.params);
      }
    }
}

// u_t = k0·x + k1·vx of the pendulum's bob (body 1): a linear feedback whose gains are the
// controller's own parameters; it accumulates dL/dk in act_backward.
class LinearFeedback final : public Controller {
 public:
  double k0 = 0.0, k1 = 0.0;
  double gradient_k0 = 0.0, gradient_k1 = 0.0;
  std::vector<int> backward_order;
  void act(int, const State& state, std::span<double> controls) override {
    controls[0] = k0 * state.position[1].x + k1 * state.linear_velocity[1].x;
  }
  void act_backward(int step, const State& state, std::span<const double> control_gradient,
                    std::span<double> state_gradient) override {
    backward_order.push_back(step);
    gradient_k0 += control_gradient[0] * state.position[1].x;
    gradient_k1 += control_gradient[0] * state.linear_velocity[1].x;
    state_gradient[kTangent * 1 + 0] += control_gradient[0] * k0;  // ∂u/∂p_x
    state_gradient[kTangent * 1 + 6] += control_gradient[0] * k1;  // ∂u/∂v_x
  }
};

TEST(Gradient, ClosedLoopControllerGradientsMatchCentralDifferences) {
  ModelBuilder builder = hinge_chain(1, 0.5, 1.0, 0.6);
  builder.dt = 1e-2;
  ActuatorSpec motor;
  motor.name = "hinge_motor";
  motor.joint = "hinge0";
  builder.add_actuator(motor);
  const Scene scene = builder.build();
  const int steps = 120;
  RolloutOptions options;
  options.checkpoint_interval = 11;  // the backward pass recomputes segments with stored controls
  // L = x_T of the bob + Σ_t (z_t of the bob)²/T.
  const auto loss_of = [&](double k0, double k1, double start_x) {
    LinearFeedback controller;
    controller.k0 = k0;
    controller.k1 = k1;
    State initial = scene.state;
    initial.position[1].x += start_x;
    Rollout rollout(scene.model, scene.params, options);
    rollout.run(initial, controller, steps);
    double loss = rollout.final_state().position[1].x;
    for (int t = 0; t <= steps; ++t) loss += std::pow(rollout.state(t).position[1].z, 2) / steps;
    return loss;
  };
  LinearFeedback controller;
  controller.k0 = -3.0;
  controller.k1 = -0.8;
  Rollout rollout(scene.model, scene.params, options);
  rollout.run(scene.state, controller, steps);
  const Gradients g = rollout.backward([&](int t, const State& state, std::span<double> out) {
    out[kTangent * 1 + 2] += 2.0 * state.position[1].z / steps;
    if (t == steps) out[kTangent * 1 + 0] += 1.0;
  });
  std::vector<int> descending(steps);
  for (int t = 0; t < steps; ++t) descending[static_cast<std::size_t>(t)] = steps - 1 - t;
  EXPECT_EQ(controller.backward_order, descending);
  const double h = 1e-6;
  const auto central = [&](auto&& f) { return (f(h) - f(-h)) / (2 * h); };
  const double numeric_k0 = central([&](double e) { return loss_of(-3.0 + e, -0.8, 0.0); });
  const double numeric_k1 = central([&](double e) { return loss_of(-3.0, -0.8 + e, 0.0); });
  const double numeric_x0 = central([&](double e) { return loss_of(-3.0, -0.8, e); });
  EXPECT_NEAR(controller.gradient_k0, numeric_k0, 1e-6 * std::max(1.0, std::abs(numeric_k0)));
  EXPECT_NEAR(controller.gradient_k1, numeric_k1, 1e-6 * std::max(1.0, std::abs(numeric_k1)));
  EXPECT_NEAR(g.initial_state[kTangent * 1 + 0], numeric_x0, 1e-6 * std::max(1.0, std::abs(numeric_x0)));
  EXPECT_GT(std::abs(controller.gradient_k0), 1e-3);  // the feedback matters to the loss
}

TEST(Gradient, HealthReportNamesTheStepOfAnInjectedNan) {
  const Scene scene = hinge_chain(2, 0.3, 0.5, 0.7).build();
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, 50);
  const Gradients g = rollout.backward([](int t, const State&, std::span<double> out) {
    if (t == 50) out[kTangent * 1] += 1.0;
    if (t == 17) out[kTangent * 2 + 4] += std::nan("");
  });
  EXPECT_EQ(g.health.first_non_finite_step, 17);
  EXPECT_EQ(g.health.first_non_finite_stage, "loss gradient");
  EXPECT_GT(g.health.state_gradient_norm[20], 0.0);
  EXPECT_TRUE(std::isnan(g.health.state_gradient_norm[10]));
}

TEST(Gradient, DecayAndClippingShapeTheBackwardFlow) {
  const Scene scene = hinge_chain(1, 0.5, 1.0, 0.3).build();
  RolloutOptions options;
  options.gradient_decay = 0.5;
  Rollout decayed(scene.model, scene.params, options), plain(scene.model, scene.params);
  decayed.run(scene.state, {}, 20);
  plain.run(scene.state, {}, 20);
  const auto loss = [](int t, const State&, std::span<double> out) {
    if (t == 20) out[kTangent + 8] += 1.0;
  };
  const Gradients a = decayed.backward(loss), b = plain.backward(loss);
  // Each step back multiplies by α: 20 steps → α²⁰ relative to no decay.
  EXPECT_NEAR(a.health.state_gradient_norm[0] / b.health.state_gradient_norm[0], std::pow(0.5, 20), 1e-12);
  options.gradient_decay = 1.0;
  options.gradient_clip = 1e-3;
  Rollout clipped(scene.model, scene.params, options);
  clipped.run(scene.state, {}, 20);
  const Gradients c = clipped.backward(loss);
  EXPECT_GT(c.health.clipped_steps, 0);
  for (const double n : c.health.state_gradient_norm) EXPECT_LE(n, 1e-3 * (1 + 1e-12));
}

}  // namespace
}  // namespace diffphys

namespace diffphys {
namespace {

TEST(GradcheckCommand, PrintsTheTableAndExitsZeroWhenGradientsAgree) {
  const std::string output_path = (std::filesystem::temp_directory_path() / "diffphys_gradcheck_output.txt").string();
  const std::string command = std::string(test_paths::cli_program()) + " gradcheck " + test_paths::source_dir() +
                              "/examples/scenes/pendulum.json --steps 30 > " + output_path + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream output(output_path);
  std::stringstream buffer;
  buffer << output.rdbuf();
  const std::string text = buffer.str();
  EXPECT_NE(text.find("body/pendulum/mass[0]"), std::string::npos) << text;
  EXPECT_NE(text.find("all agree"), std::string::npos) << text;
}

}  // namespace
}  // namespace diffphys
