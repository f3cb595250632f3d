// tests/time_of_impact_test.cpp — bounces at their time of impact inside the step
// (rigid/time_of_impact.hpp, adjoint/time_of_impact_vjp.hpp): the velocity target's partial
// derivatives and the split integration's VJP against central differences on randomised
// inputs; whole-step Jacobians of randomised bounces (sphere on the plane with spin and
// friction, two spheres, a spinning box landing on a corner) against central differences;
// the exact straight-line bounce without gravity; resting contacts and joints untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "adjoint/step_vjp.hpp"
#include "adjoint/time_of_impact_vjp.hpp"
#include "diffphys/jacobians.hpp"
#include "diffphys/rollout.hpp"
#include "rigid/integrate.hpp"
#include "rigid/step_workspace.hpp"
#include "rigid/time_of_impact.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::sphere_body;

double uniform(std::mt19937_64& rng, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(rng);
}

Vec3 random_vec3(std::mt19937_64& rng, double scale) {
  return {uniform(rng, -scale, scale), uniform(rng, -scale, scale), uniform(rng, -scale, scale)};
}

TEST(TimeOfImpact, TargetPartialsMatchCentralDifferences) {
  std::mt19937_64 rng(11);
  const double h = 0.01;
  for (int trial = 0; trial < 200; ++trial) {
    const double start_speed = uniform(rng, 0.05, 5.0), free_speed = start_speed + uniform(rng, -0.2, 0.2);
    // A gap the free motion closes within the step (or a penetration: τ = 0).
    const double gap = trial % 5 == 0 ? -uniform(rng, 0.0, 1e-3) : uniform(rng, 0.02, 0.98) * h * free_speed;
    const double restitution = uniform(rng, 0.05, 1.0);
    const rigid::ImpactTarget target = rigid::impact_target(gap, start_speed, free_speed, restitution, h);
    ASSERT_GE(target.time, 0.0);
    ASSERT_LE(target.time, h);
    const double inputs[4] = {gap, start_speed, free_speed, restitution};
    const double target_partials[4] = {target.d_gap, target.d_start_speed, target.d_free_speed, target.d_restitution};
    const double time_partials[4] = {target.time_d_gap, 0.0, target.time_d_free_speed, 0.0};
    for (int k = 0; k < 4; ++k) {
      const double epsilon = 1e-7 * std::max(1.0, std::abs(inputs[k]));
      double up[4] = {gap, start_speed, free_speed, restitution}, down[4] = {gap, start_speed, free_speed, restitution};
      up[k] += epsilon;
      down[k] -= epsilon;
      if (k == 0 && gap > 0 && down[0] <= 0) continue;
      const rigid::ImpactTarget plus = rigid::impact_target(up[0], up[1], up[2], up[3], h);
      const rigid::ImpactTarget minus = rigid::impact_target(down[0], down[1], down[2], down[3], h);
      const double numeric_target = (plus.target - minus.target) / (2 * epsilon);
      const double numeric_time = (plus.time - minus.time) / (2 * epsilon);
      EXPECT_NEAR(target_partials[k], numeric_target, 1e-6 * std::max(1.0, std::abs(numeric_target))) << "input " << k;
      EXPECT_NEAR(time_partials[k], numeric_time, 1e-6 * std::max(1.0, std::abs(numeric_time))) << "input " << k;
    }
    // The ends: τ = 0 is the usual bounce minus the free forces over the step; the adjoint
    // function returns exactly these partials times the seeds.
    const adjoint::ImpactTargetAdjoint seeded = adjoint::impact_target_vjp(gap, start_speed, free_speed, restitution, h, 2.0, -3.0);
    EXPECT_DOUBLE_EQ(seeded.gap, 2.0 * target.d_gap - 3.0 * target.time_d_gap);
    EXPECT_DOUBLE_EQ(seeded.free_speed, 2.0 * target.d_free_speed - 3.0 * target.time_d_free_speed);
    EXPECT_DOUBLE_EQ(seeded.start_speed, 2.0 * target.d_start_speed);
    EXPECT_DOUBLE_EQ(seeded.restitution, 2.0 * target.d_restitution);
  }
  // s = 1.9 at t − h/2 and s_f = 2.0 at t + h/2 (the free forces add 0.1 over a step), e = ½.
  // τ = h: the approach speed at t + h is 2.05, the rebound 1.025 is carried back to t + h/2.
  const rigid::ImpactTarget at_end = rigid::impact_target(h * 2.0, 1.9, 2.0, 0.5, h);
  EXPECT_DOUBLE_EQ(at_end.time, h);
  EXPECT_NEAR(at_end.target, 0.5 * 2.05 + 0.05, 1e-14);
  // τ = 0: the approach speed at t is 1.95, the rebound 0.975 slows by 0.05 until t + h/2.
  const rigid::ImpactTarget at_start = rigid::impact_target(0.0, 1.9, 2.0, 0.5, h);
  EXPECT_DOUBLE_EQ(at_start.time, 0.0);
  EXPECT_NEAR(at_start.target, 0.5 * 1.95 - 0.05, 1e-14);
}

// The split integration p + τ v_f + (h − τ) v⁺, exp((h − τ)ω⁺) exp(τ ω_f) q and its VJP.
TEST(TimeOfImpact, SplitIntegrationVjpMatchesCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 0.01;
  builder.add_body(sphere_body("a", {0, 0, 1}, 0.1, 1.0));
  builder.add_body(box_body("b", {1, 0, 1}, {0.1, 0.2, 0.3}, 2.0));
  const Scene scene = builder.build();
  const Model& model = scene.model;
  const double h = model.dt;
  const int bodies = model.body_count();
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 20; ++trial) {
    State state = scene.state;
    std::vector<double> velocity(static_cast<std::size_t>(6 * bodies), 0.0), free_velocity(velocity);
    rigid::ImpactRecord impacts;
    impacts.any = true;
    impacts.body_time.assign(static_cast<std::size_t>(bodies), 0.0);
    impacts.body_contact.assign(static_cast<std::size_t>(bodies), -1);
    for (int b = 1; b < bodies; ++b) {
      const auto i = static_cast<std::size_t>(b);
      state.position[i] = random_vec3(rng, 2.0);
      state.orientation[i] = Quat::from_rotation_vector(random_vec3(rng, 2.0));
      for (int k = 0; k < 6; ++k) {
        velocity[6 * i + static_cast<std::size_t>(k)] = uniform(rng, -8.0, 8.0);
        free_velocity[6 * i + static_cast<std::size_t>(k)] = uniform(rng, -8.0, 8.0);
      }
      impacts.body_time[i] = uniform(rng, 0.05, 0.95) * h;
      impacts.body_contact[i] = b - 1;  // two contacts, one per body
    }
    // L = w · (x⁺ ⊖ x̄⁺) over the poses, with random weights w.
    std::vector<double> weights(static_cast<std::size_t>(12 * bodies), 0.0), pose_adjoint(static_cast<std::size_t>(6 * bodies), 0.0);
    for (int b = 1; b < bodies; ++b)
      for (int k = 0; k < 6; ++k) {
        const double w = uniform(rng, -1.0, 1.0);
        weights[static_cast<std::size_t>(12 * b + k)] = w;
        pose_adjoint[static_cast<std::size_t>(6 * b + k)] = w;
      }
    State reference;
    reference.resize(bodies);
    rigid::integrate(model, state, velocity, free_velocity, impacts, reference);
    std::vector<double> difference(weights.size());
    const auto loss = [&](const State& in, const std::vector<double>& v, const std::vector<double>& v_free,
                          const rigid::ImpactRecord& record) {
      State out;
      out.resize(bodies);
      rigid::integrate(model, in, v, v_free, record, out);
      state_difference(model, out, reference, difference);
      double sum = 0.0;
      for (std::size_t i = 0; i < weights.size(); ++i) sum += weights[i] * difference[i];
      return sum;
    };
    std::vector<double> state_adjoint(weights.size(), 0.0), velocity_adjoint(velocity.size(), 0.0),
        free_velocity_adjoint(velocity.size(), 0.0), time_adjoint(2, 0.0);
    adjoint::time_of_impact_integrate_vjp(model, velocity, free_velocity, impacts, pose_adjoint, state_adjoint,
                                          velocity_adjoint, free_velocity_adjoint, time_adjoint);
    const double epsilon = 1e-6;
    const auto expect_close = [](double analytic, double numeric, const std::string& what) {
      EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << what;
    };
    // Poses, in the tangent layout (velocities of the state do not enter the integration).
    std::vector<double> tangent(weights.size(), 0.0);
    for (int b = 1; b < bodies; ++b)
      for (int k = 0; k < 6; ++k) {
        const auto j = static_cast<std::size_t>(12 * b + k);
        State plus, minus;
        tangent[j] = epsilon;
        state_retract(model, state, tangent, plus);
        tangent[j] = -epsilon;
        state_retract(model, state, tangent, minus);
        tangent[j] = 0.0;
        const double numeric = (loss(plus, velocity, free_velocity, impacts) - loss(minus, velocity, free_velocity, impacts)) / (2 * epsilon);
        expect_close(state_adjoint[j], numeric, "pose " + std::to_string(j));
      }
    for (std::size_t i = 6; i < velocity.size(); ++i) {
      std::vector<double> up = velocity, down = velocity;
      up[i] += epsilon;
      down[i] -= epsilon;
      expect_close(velocity_adjoint[i], (loss(state, up, free_velocity, impacts) - loss(state, down, free_velocity, impacts)) / (2 * epsilon),
                   "v+ " + std::to_string(i));
      up = free_velocity;
      down = free_velocity;
      up[i] += epsilon;
      down[i] -= epsilon;
      expect_close(free_velocity_adjoint[i], (loss(state, velocity, up, impacts) - loss(state, velocity, down, impacts)) / (2 * epsilon),
                   "v_free " + std::to_string(i));
    }
    for (int b = 1; b < bodies; ++b) {
      rigid::ImpactRecord up = impacts, down = impacts;
      up.body_time[static_cast<std::size_t>(b)] += epsilon * h;
      down.body_time[static_cast<std::size_t>(b)] -= epsilon * h;
      expect_close(time_adjoint[static_cast<std::size_t>(b - 1)] * h,
                   (loss(state, velocity, free_velocity, up) - loss(state, velocity, free_velocity, down)) / (2 * epsilon), "tau");
    }
  }
}

// [A P] of one step against central differences (as tests/step_jacobians_test.cpp does):
// max |analytic − numeric| ≤ tolerance · max(1, max |numeric|) per column.
void expect_step_jacobians_match_central_differences(const Scene& scene, double tolerance, const std::string& label) {
  const Model& model = scene.model;
  const int n = state_tangent_size(model), np = model.param_count();
  std::vector<double> A(static_cast<std::size_t>(n * n)), B, P(static_cast<std::size_t>(n * np));
  StepJacobians jacobians(model);
  State next;
  jacobians.compute(scene.params, scene.state, {}, next, A, B, P);
  Workspace workspace;
  const auto step_to = [&](const Params& params, const State& state) {
    State out = state;
    step(jacobians.model(), params, state, {}, out, workspace);
    return out;
  };
  std::vector<double> plus(static_cast<std::size_t>(n)), minus(static_cast<std::size_t>(n));
  const auto compare_column = [&](const std::vector<double>& analytic, int columns, int column, const State& up,
                                  const State& down, double epsilon, const std::string& name) {
    state_difference(model, up, next, plus);
    state_difference(model, down, next, minus);
    double column_norm = 0.0, error_norm = 0.0;
    for (int i = 0; i < n; ++i) {
      const double numeric = (plus[static_cast<std::size_t>(i)] - minus[static_cast<std::size_t>(i)]) / (2 * epsilon);
      column_norm = std::max(column_norm, std::abs(numeric));
      error_norm = std::max(error_norm, std::abs(numeric - analytic[static_cast<std::size_t>(i * columns + column)]));
    }
    EXPECT_LE(error_norm, tolerance * std::max(1.0, column_norm)) << label << ": " << name;
  };
  const double epsilon = 1e-6;
  std::vector<double> tangent(static_cast<std::size_t>(n), 0.0);
  for (int j = 0; j < n; ++j) {
    if (model.bodies[static_cast<std::size_t>(j / 12)].type == BodyType::Static) continue;
    State up, down;
    tangent[static_cast<std::size_t>(j)] = epsilon;
    state_retract(model, scene.state, tangent, up);
    tangent[static_cast<std::size_t>(j)] = -epsilon;
    state_retract(model, scene.state, tangent, down);
    tangent[static_cast<std::size_t>(j)] = 0.0;
    compare_column(A, n, j, step_to(scene.params, up), step_to(scene.params, down), epsilon, "A column " + std::to_string(j));
  }
  for (int p = 0; p < np; ++p) {
    const double value = scene.params.values[static_cast<std::size_t>(p)];
    const double step_size = value > 0 ? std::max(1e-6 * value, 1e-8) : 1e-6;
    if (value > 0 && value - step_size <= 0) continue;
    Params up = scene.params, down = scene.params;
    up.values[static_cast<std::size_t>(p)] += step_size;
    down.values[static_cast<std::size_t>(p)] -= step_size;
    std::string name = "P column " + std::to_string(p);
    for (const auto& slice : model.layout.slices)
      if (p >= slice.offset && p < slice.offset + slice.size) name += " (" + slice.name + ")";
    compare_column(P, np, p, step_to(up, scene.state), step_to(down, scene.state), step_size, name);
  }
}

// The step from scene.state has at least one body moved to a time of impact strictly inside
// the step, the same contact set under the test's perturbations being the caller's choice.
bool bounces_mid_step(const Scene& scene) {
  Workspace workspace;
  State next = scene.state;
  step(scene.model, scene.params, scene.state, {}, next, workspace);
  const rigid::ImpactRecord& impacts = workspace.impl().impacts;
  if (!impacts.any) return false;
  for (std::size_t b = 0; b < impacts.body_time.size(); ++b)
    if (impacts.body_contact[b] >= 0 && impacts.body_time[b] > 0.05 * scene.model.dt &&
        impacts.body_time[b] < 0.95 * scene.model.dt)
      return true;
  return false;
}

// A body about to hit: the gap at the start is a random fraction of what the free motion
// closes in one step, speeds below 1 m/s so that the gap is inside the contact margin
// (1 cm) and the contact is detected in the step where it closes.
TEST(TimeOfImpact, StepJacobiansOfRandomBouncesMatchCentralDifferences) {
  std::mt19937_64 rng(13);
  const double h = 0.01;
  int checked = 0;
  for (int trial = 0; trial < 3; ++trial) {
    // A spinning sphere landing obliquely on a plane with friction.
    {
      ModelBuilder builder;
      builder.dt = h;
      builder.world_friction = 0.4;
      builder.add_ground_plane();
      const double radius = uniform(rng, 0.05, 0.3), fall_speed = uniform(rng, 0.4, 0.9);
      const double gap = uniform(rng, 0.2, 0.8) * h * (fall_speed + 9.81 * h);
      BodySpec ball = sphere_body("ball", {uniform(rng, -1, 1), uniform(rng, -1, 1), radius + gap}, radius, uniform(rng, 0.5, 2.0));
      ball.linear_velocity = {uniform(rng, -1, 1), uniform(rng, -1, 1), -fall_speed};
      ball.angular_velocity = random_vec3(rng, 5.0);
      ball.restitution = uniform(rng, 0.2, 0.9);
      ball.friction = uniform(rng, 0.2, 0.6);
      builder.add_body(ball);
      const Scene scene = builder.build();
      ASSERT_TRUE(bounces_mid_step(scene)) << "sphere trial " << trial;
      expect_step_jacobians_match_central_differences(scene, 1e-6, "sphere on plane, trial " + std::to_string(trial));
      ++checked;
    }
    // Two spheres meeting off-centre, no gravity, no friction.
    {
      ModelBuilder builder;
      builder.dt = h;
      builder.gravity = {0, 0, 0};
      const double ra = uniform(rng, 0.1, 0.2), rb = uniform(rng, 0.1, 0.2), closing = uniform(rng, 0.4, 0.95);
      // The line of centres is tilted off the velocity: an oblique impact.
      const Vec3 direction = normalized(Vec3{1.0, uniform(rng, -0.3, 0.3), uniform(rng, -0.3, 0.3)});
      const double gap = uniform(rng, 0.2, 0.8) * h * closing * direction.x;
      BodySpec a = sphere_body("a", {0, 0, 0}, ra, uniform(rng, 0.5, 2.0));
      BodySpec b = sphere_body("b", direction * (ra + rb + gap), rb, uniform(rng, 0.5, 2.0));
      a.linear_velocity = {closing, 0, 0};
      a.angular_velocity = random_vec3(rng, 3.0);
      b.angular_velocity = random_vec3(rng, 3.0);
      a.restitution = uniform(rng, 0.2, 0.9);
      a.friction = b.friction = 0.0;
      builder.add_body(a);
      builder.add_body(b);
      const Scene scene = builder.build();
      ASSERT_TRUE(bounces_mid_step(scene)) << "two spheres trial " << trial;
      expect_step_jacobians_match_central_differences(scene, 1e-6, "two spheres, trial " + std::to_string(trial));
      ++checked;
    }
    // A spinning box landing on one corner (no friction: the corner slides as it bounces).
    {
      ModelBuilder builder;
      builder.dt = h;
      builder.add_ground_plane();
      const Vec3 half_extents{uniform(rng, 0.1, 0.3), uniform(rng, 0.1, 0.3), uniform(rng, 0.1, 0.3)};
      const Quat orientation = Quat::from_rotation_vector({uniform(rng, 0.4, 0.7), uniform(rng, 0.4, 0.7), uniform(rng, -1, 1)});
      // The lowest corner sets the height.
      double lowest = 0.0;
      for (int corner = 0; corner < 8; ++corner) {
        const Vec3 local{(corner & 1) ? half_extents.x : -half_extents.x, (corner & 2) ? half_extents.y : -half_extents.y,
                         (corner & 4) ? half_extents.z : -half_extents.z};
        lowest = std::min(lowest, orientation.rotate(local).z);
      }
      const double fall_speed = uniform(rng, 0.4, 0.9);
      const double gap = uniform(rng, 0.3, 0.7) * h * (fall_speed + 9.81 * h);
      BodySpec box = box_body("box", {0, 0, -lowest + gap}, half_extents, uniform(rng, 0.5, 2.0));
      box.orientation = orientation;
      box.linear_velocity = {uniform(rng, -1, 1), uniform(rng, -1, 1), -fall_speed};
      box.angular_velocity = random_vec3(rng, 1.0);
      box.restitution = uniform(rng, 0.3, 0.9);
      box.friction = 0.0;
      builder.world_friction = 0.0;
      builder.add_body(box);
      const Scene scene = builder.build();
      if (!bounces_mid_step(scene)) continue;  // the spin can carry the corner past the step
      expect_step_jacobians_match_central_differences(scene, 1e-6, "box corner, trial " + std::to_string(trial));
      ++checked;
    }
  }
  EXPECT_GE(checked, 7);
}

TEST(TimeOfImpact, WithoutGravityTheBounceIsExactAndSoIsItsGradient) {
  // A sphere moving at constant velocity onto a plane: z(T) = r + e s (T − t_i), t_i = g₀/s,
  // x(T) = x₀ + v_x T (frictionless). Straight-line motion is integrated exactly, and the
  // bounce at its time of impact is too: the discrete result is the continuous one.
  const double radius = 0.1, e = 0.7, speed = 2.0, gap = 0.1234567, h = 0.01;
  ModelBuilder builder;
  builder.dt = h;
  builder.gravity = {0, 0, 0};
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0.3, 0, radius + gap}, radius, 1.0);
  ball.linear_velocity = {0.5, 0, -speed};
  ball.restitution = e;
  ball.friction = 0.0;
  builder.add_body(ball);
  const Scene scene = builder.build();
  const int steps = 20;
  const double T = steps * h, impact = gap / speed;
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, steps);
  EXPECT_NEAR(rollout.final_state().position[1].z, radius + e * speed * (T - impact), 1e-12);
  EXPECT_NEAR(rollout.final_state().position[1].x, 0.3 + 0.5 * T, 1e-12);
  EXPECT_NEAR(rollout.final_state().linear_velocity[1].z, e * speed, 1e-12);
  const Gradients g = rollout.backward([&](int t, const State&, std::span<double> out) {
    if (t == steps) out[12 + 2] += 1.0;
  });
  // ∂z_T/∂z₀ = −e, ∂z_T/∂v_z0 = −e T (s = −v_z0), ∂z_T/∂e = s (T − t_i), ∂z_T/∂r = 1 + e.
  EXPECT_NEAR(g.initial_state[12 + 2], -e, 1e-9);
  EXPECT_NEAR(g.initial_state[12 + 8], -e * T, 1e-9);
  EXPECT_NEAR(g.param(scene.model, "body/ball/restitution")[0], speed * (T - impact), 1e-9);
  EXPECT_NEAR(g.param(scene.model, "shape/" + scene.model.shapes[1].name + "/radius")[0], 1.0 + e, 1e-9);
}

TEST(TimeOfImpact, RestingContactsAndJointsKeepTheWholeStep) {
  // A ball resting on the ground (no approach), and a pendulum bob bouncing on the ground:
  // no body is moved to a time of impact, and the option changes nothing for either.
  for (const bool jointed : {false, true}) {
    ModelBuilder builder;
    builder.dt = 0.01;
    builder.add_ground_plane();
    BodySpec ball = sphere_body("ball", {0, 0, jointed ? 0.1 + 0.01 : 0.1}, 0.1, 1.0);
    ball.restitution = 0.8;
    ball.linear_velocity = {0, 0, jointed ? -2.0 : 0.0};
    builder.add_body(ball);
    if (jointed) {
      JointSpec slide;
      slide.name = "slide";
      slide.type = JointType::Prismatic;
      slide.child = "ball";
      slide.axis = {0, 0, 1};
      builder.add_joint(slide);
    }
    Scene scene = builder.build();
    Workspace workspace;
    State with = scene.state, without = scene.state;
    step(scene.model, scene.params, scene.state, {}, with, workspace);
    EXPECT_FALSE(workspace.impl().impacts.any) << (jointed ? "jointed" : "resting");
    scene.model.solver.time_of_impact = false;
    step(scene.model, scene.params, scene.state, {}, without, workspace);
    EXPECT_EQ(with.position[1].z, without.position[1].z) << (jointed ? "jointed" : "resting");
    EXPECT_EQ(with.linear_velocity[1].z, without.linear_velocity[1].z) << (jointed ? "jointed" : "resting");
  }
}

}  // namespace
}  // namespace diffphys
