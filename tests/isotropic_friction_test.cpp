// tests/isotropic_friction_test.cpp — Coulomb friction that does not depend on heading
// (rigid/friction_basis.hpp), with the default settings (4 friction directions, interior
// point). An incline and the body on it are turned about the vertical by 0°, 10° and 45°:
// a box sticks below the friction angle (tan θ = 0.9 μ) and otherwise slides at
// g(sin θ − μ cos θ); a ball rolls at (5/7) g sin θ while tan θ < (7/2) μ (0.9 of it) and slides
// beyond. In a basis fixed by the normal alone, the 4-direction pyramid held only μ/√2 along
// its diagonals, and every case at 45° failed. Then the gradient of a box sliding at 45° —
// its slip turning from across to down the slope — against central differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "diffphys/rollout.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::run;
using testing::sphere_body;

constexpr double kPi = std::numbers::pi;
constexpr double kGravity = 9.81;
constexpr double kAngle = 0.4;  // rad, the slope of the incline
constexpr double kStep = 1e-3;  // s
constexpr int kSteps = 2000;    // 2 s

// The incline through the origin, tilted by kAngle about x and then turned by `heading` about
// the vertical; the body rests on it, turned with it, its centre `height` above the plane.
struct Incline {
  double heading = 0.0;
  Quat turn;  // the incline's rotation: R_z(heading) R_x(kAngle)
  Vec3 normal, downhill, across;

  explicit Incline(double heading_degrees)
      : heading(heading_degrees * kPi / 180.0),
        turn(Quat::from_axis_angle({0, 0, 1}, heading) * Quat::from_axis_angle({1, 0, 0}, kAngle)),
        normal(turn.rotate({0, 0, 1})),
        downhill(turn.rotate({0, -1, 0})),
        across(turn.rotate({1, 0, 0})) {}

  Scene scene(BodySpec body, double height, double friction) const {
    ModelBuilder builder;
    builder.dt = kStep;
    builder.world_friction = friction;
    builder.add_ground_plane(normal, 0.0);
    body.position = normal * height;
    body.orientation = turn;
    body.friction = friction;
    builder.add_body(body);
    return builder.build();
  }
};

struct Motion {
  Vec3 displacement, velocity;  // of the body's centre after kSteps
};

Motion simulate(const Scene& scene) {
  State final_state;
  run(scene, kSteps, [&](const State& s, const StepStatus& status) {
    EXPECT_TRUE(status.converged) << "residual " << status.residual;
    final_state = s;
  });
  return {final_state.position[1] - scene.state.position[1], final_state.linear_velocity[1]};
}

class IsotropicFriction : public ::testing::TestWithParam<double> {};

// Sticking: each step's free motion slips by g (sin θ, along the slope) h, and friction stops it
// exactly (the polished solve holds the tangential velocity at 0 to round-off). What remains is
// the solver's tolerance (1e-10 m/s) acting for 2 s: 2e-10 m. The bound, 1e-8 m, leaves 50 times
// that and is eight orders below the 1.7 m the fixed pyramid slid at 45°.
TEST_P(IsotropicFriction, BoxSticksWhenTanThetaIsNineTenthsOfMu) {
  const Incline incline(GetParam());
  const double friction = std::tan(kAngle) / 0.9;
  const Motion motion = simulate(incline.scene(box_body("box", {}, {0.1, 0.1, 0.1}, 1.0), 0.1, friction));
  EXPECT_LT(norm(motion.displacement), 1e-8);
}

// Sliding from rest: every step's friction impulse is μ λ_n = μ m g cos θ h against the slip,
// so the velocity after n steps is a n h exactly (semi-implicit Euler is exact for a constant
// acceleration); the position s = ½ a t (t + h). The relative bounds, 1e-6 on the velocity and
// on the distance, allow the solver tolerance per step (1e-10 m/s × 2000 steps = 2e-7 m/s
// against a t ≈ 1.9 m/s) with room; the fixed pyramid was off by a factor 1.5 at 45°.
// The slip stays straight down the slope: the velocity across it stays below 1e-9 m/s.
TEST_P(IsotropicFriction, BoxSlidesAtGTimesSinMinusMuCos) {
  const Incline incline(GetParam());
  const double friction = 0.5 * std::tan(kAngle);
  const Motion motion = simulate(incline.scene(box_body("box", {}, {0.1, 0.1, 0.1}, 1.0), 0.1, friction));
  const double acceleration = kGravity * (std::sin(kAngle) - friction * std::cos(kAngle));
  const double t = kSteps * kStep;
  EXPECT_NEAR(dot(motion.velocity, incline.downhill) / (acceleration * t), 1.0, 1e-6);
  EXPECT_NEAR(dot(motion.displacement, incline.downhill) / (0.5 * acceleration * t * (t + kStep)), 1.0, 1e-6);
  EXPECT_LT(std::abs(dot(motion.velocity, incline.across)), 1e-9);
}

// A solid ball (I = 2/5 m r²) rolls without slipping while the friction it needs, (2/7) m g sin θ,
// is within μ m g cos θ: tan θ < (7/2) μ. Rolling, its centre accelerates at (5/7) g sin θ. The
// contact point's free slip is g sin θ h down the slope each step, stopped exactly, so the
// same 1e-6 bound holds as for the sliding box.
TEST_P(IsotropicFriction, BallRollsAtFiveSeventhsGSinThetaWhenTanThetaIsNineTenthsOfSevenHalvesMu) {
  const Incline incline(GetParam());
  const double friction = std::tan(kAngle) / (0.9 * 3.5);
  const Motion motion = simulate(incline.scene(sphere_body("ball", {}, 0.1, 1.0), 0.1, friction));
  const double acceleration = 5.0 / 7.0 * kGravity * std::sin(kAngle);
  EXPECT_NEAR(dot(motion.velocity, incline.downhill) / (acceleration * kSteps * kStep), 1.0, 1e-6);
  EXPECT_LT(std::abs(dot(motion.velocity, incline.across)), 1e-9);
}

// Beyond (7/2) μ the ball slips: its centre slides at g(sin θ − μ cos θ) (friction's torque only
// spins it up).
TEST_P(IsotropicFriction, BallSlidesAtGTimesSinMinusMuCosBeyondSevenHalvesMu) {
  const Incline incline(GetParam());
  const double friction = 0.5 * std::tan(kAngle) / 3.5;
  const Motion motion = simulate(incline.scene(sphere_body("ball", {}, 0.1, 1.0), 0.1, friction));
  const double acceleration = kGravity * (std::sin(kAngle) - friction * std::cos(kAngle));
  EXPECT_NEAR(dot(motion.velocity, incline.downhill) / (acceleration * kSteps * kStep), 1.0, 1e-6);
  EXPECT_LT(std::abs(dot(motion.velocity, incline.across)), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Headings, IsotropicFriction, ::testing::Values(0.0, 10.0, 45.0),
                         [](const ::testing::TestParamInfo<double>& heading) {
                           return "Heading" + std::to_string(static_cast<int>(heading.param));
                         });

// L = c·p_T, the box's centre after T steps: dL/dμ (both bodies' coefficients) and dL/dv_0 from
// the backward pass against central differences. The box starts sliding across the slope and
// down it, so its slip — and the pyramid turned to it — swings round to straight down the slope
// over the run: the gradient must follow that turn (adjoint/friction_basis_vjp.hpp).
// Central differences with step ε have a truncation error ~ε² L‴ and a rounding error ~δ/ε,
// δ ≈ 1e-13 m the round-off of 400 polished steps; ε = 1e-6 (relative for μ, m/s for v_0)
// puts both near 1e-7, and the tolerance is 1e-6 relative to max(1, |numeric|).
double final_position_loss(const Scene& scene, const Params& params, const State& initial, int steps,
                           const Vec3& weights) {
  State current = initial, next = initial;
  Workspace workspace;
  for (int i = 0; i < steps; ++i) {
    const StepStatus status = step(scene.model, params, current, scene.controls, next, workspace);
    EXPECT_TRUE(status.converged) << "residual " << status.residual;
    std::swap(current, next);
  }
  return dot(weights, current.position[1]);
}

TEST(IsotropicFrictionGradient, BoxSlidingAtFortyFiveDegreesMatchesCentralDifferences) {
  const Incline incline(45.0);
  BodySpec box = box_body("box", {}, {0.1, 0.1, 0.1}, 1.0);
  box.linear_velocity = incline.across * 0.4 + incline.downhill * 0.2;
  const Scene scene = incline.scene(box, 0.1, 0.5 * std::tan(kAngle));
  const int steps = 400;
  const Vec3 weights{0.3, -0.7, 0.5};

  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, steps);
  const Gradients gradients = rollout.backward([&](int t, const State&, std::span<double> dL_dx) {
    if (t != steps) return;
    for (int k = 0; k < 3; ++k) dL_dx[kStateTangentPerBody * 1 + static_cast<std::size_t>(k)] += weights[k];
  });
  const auto relative_error = [](double analytic, double numeric) {
    return std::abs(analytic - numeric) / std::max(1.0, std::abs(numeric));
  };
  const double epsilon = 1e-6;
  for (const std::string name : {"body/box/friction", "body/world/friction"}) {
    Params plus = scene.params, minus = scene.params;
    const double value = scene.params.slice(scene.model, name)[0];
    plus.slice(scene.model, name)[0] = value * (1 + epsilon);
    minus.slice(scene.model, name)[0] = value * (1 - epsilon);
    const double numeric = (final_position_loss(scene, plus, scene.state, steps, weights) -
                            final_position_loss(scene, minus, scene.state, steps, weights)) /
                           (2 * epsilon * value);
    const double analytic = gradients.param(scene.model, name)[0];
    EXPECT_LT(relative_error(analytic, numeric), 1e-6) << name << ": analytic " << analytic << ", numeric " << numeric;
    EXPECT_GT(std::abs(numeric), 0.01) << name;  // friction matters here
  }
  for (int k = 0; k < 3; ++k) {
    State plus = scene.state, minus = scene.state;
    plus.linear_velocity[1][k] += epsilon;
    minus.linear_velocity[1][k] -= epsilon;
    const double numeric = (final_position_loss(scene, scene.params, plus, steps, weights) -
                            final_position_loss(scene, scene.params, minus, steps, weights)) /
                           (2 * epsilon);
    const double analytic = gradients.initial_state[kStateTangentPerBody * 1 + 6 + static_cast<std::size_t>(k)];
    EXPECT_LT(relative_error(analytic, numeric), 1e-6) << "v0[" << k << "]: analytic " << analytic << ", numeric " << numeric;
  }
}

}  // namespace
}  // namespace diffphys
