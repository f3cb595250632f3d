// tests/articulated_test.cpp — the step in joint coordinates (rigid/articulated.hpp) and its
// backward pass (adjoint/articulated_vjp.hpp): a pendulum's period against the closed form,
// energy error of first order in h, joints held exactly, agreement with maximal
// coordinates, gradients of whole rollouts against central differences (a 3D tree with
// every term, a cart–pole), checkpointing, and the models it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "gradcheck_test_helpers.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "rigid/step_workspace.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::hinge_chain;
using testing::reduced_tree;

Scene reduced(ModelBuilder builder) {
  builder.solver.coordinates = Coordinates::Reduced;
  return builder.build();
}

// A cart on a prismatic joint along x (force motor) carrying a pole hinged about y, the pole
// released 0.3 rad from upright: de Avila Belbute-Peres et al. 2018's cart–pole (§4.3).
Scene cart_pole() {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.solver.coordinates = Coordinates::Reduced;
  BodySpec cart = box_body("cart", {0, 0, 0}, {0.2, 0.1, 0.05}, 1.0);
  cart.shapes[0].collision_mask = 0;
  cart.linear_velocity = {0.2, 0, 0};
  builder.add_body(cart);
  const Quat tilt = Quat::from_axis_angle({0, 1, 0}, 0.3);
  BodySpec pole = box_body("pole", tilt.rotate({0, 0, 0.5}), {0.02, 0.02, 0.5}, 0.1);
  pole.orientation = tilt;
  pole.shapes[0].collision_mask = 0;
  builder.add_body(pole);
  builder.add_joint(testing::joint_spec("slide", JointType::Prismatic, "world", "cart", {}, {1, 0, 0}));
  builder.add_joint(testing::joint_spec("hinge", JointType::Revolute, "cart", "pole", {}, {0, 1, 0}, 0.01));
  builder.add_actuator(testing::motor_spec("push", "slide", 1.5));
  return builder.build();
}

void expect_gradients_match(const Scene& scene, int steps, std::uint32_t seed, double epsilon = 1e-6) {
  GradientCheckOptions options;
  options.steps = steps;
  options.seed = seed;
  options.param_epsilon = epsilon;
  options.state_epsilon = epsilon;
  EXPECT_GT(testing::expect_gradients_match_central_differences(scene, options).entries.size(), 40u);
}

// Largest distance between each joint's two anchors (and, for a prismatic joint, the
// separation off its axis): what maximal coordinates only approach by projection.
double largest_joint_gap(const Model& model, const State& state) {
  double largest = 0.0;
  for (const Joint& joint : model.joints) {
    const auto p = static_cast<std::size_t>(joint.parent), c = static_cast<std::size_t>(joint.child);
    const Vec3 anchor_p = state.position[p] + state.orientation[p].rotate(joint.anchor_parent);
    const Vec3 anchor_c = state.position[c] + state.orientation[c].rotate(joint.anchor_child);
    Vec3 gap = anchor_c - anchor_p;
    if (joint.type == JointType::Prismatic) {
      const Vec3 axis = state.orientation[p].rotate(joint.axis_parent);
      gap -= axis * dot(gap, axis);
    }
    largest = std::max(largest, norm(gap));
  }
  return largest;
}

TEST(Articulated, PendulumPeriodMatchesTheClosedForm) {
  // A 1 m rod (box 0.2 × 0.2 × 1 m, 1 kg) hinged at its top, released at θ0 = 0.1 rad.
  const double length = 1.0, mass = 1.0, theta0 = 0.1, g = 9.81;
  ModelBuilder builder = hinge_chain(1, length, mass, theta0);
  builder.dt = 1e-3;
  const Scene scene = reduced(builder);
  const double inertia_com = mass * (0.2 * 0.2 + 1.0) * length * length / 12.0;
  const double d = 0.5 * length;
  const double small_amplitude = 2 * std::numbers::pi * std::sqrt((inertia_com + mass * d * d) / (mass * g * d));
  // The finite-amplitude series T = T0 (1 + θ0²/16 + 11 θ0⁴/3072 + …).
  const double expected = small_amplitude * (1 + theta0 * theta0 / 16 + 11 * std::pow(theta0, 4) / 3072);
  std::vector<double> crossings;  // downward zero crossings of θ, interpolated
  double previous_angle = theta0, previous_time = 0.0;
  testing::run(scene, 8000, [&](const State& state, const StepStatus&) {
    // The joint's zero is the build pose, released at θ0 from the vertical.
    const double angle = theta0 + joint_position(scene.model, state, 0, 0);
    if (previous_angle > 0 && angle <= 0)
      crossings.push_back(previous_time + (state.time - previous_time) * previous_angle / (previous_angle - angle));
    previous_angle = angle;
    previous_time = state.time;
  });
  ASSERT_GE(crossings.size(), 4u);
  const double period = (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  EXPECT_NEAR(period / expected, 1.0, 1e-4) << "period " << period << " s, closed form " << expected << " s";
}

TEST(Articulated, EnergyErrorIsFirstOrderInTheStepAndJointsHoldExactly) {
  // A 4-link chain released at 0.8 rad, no damping: symplectic Euler keeps the energy within
  // O(h) of its start, and halving h halves the largest deviation.
  const auto largest_energy_error = [](double dt) {
    ModelBuilder builder = hinge_chain(4, 0.3, 0.5, 0.8, 0);
    builder.dt = dt;
    const Scene scene = reduced(builder);
    const double start = kinetic_energy(scene.model, scene.params, scene.state) +
                         potential_energy(scene.model, scene.params, scene.state);
    double largest = 0.0, gap = 0.0;
    testing::run(scene, static_cast<int>(std::lround(2.0 / dt)), [&](const State& state, const StepStatus&) {
      const double energy = kinetic_energy(scene.model, scene.params, state) + potential_energy(scene.model, scene.params, state);
      largest = std::max(largest, std::abs(energy - start));
      gap = std::max(gap, largest_joint_gap(scene.model, state));
    });
    EXPECT_LT(gap, 1e-12) << "dt " << dt;
    return largest / std::abs(start);
  };
  const double coarse = largest_energy_error(1e-3), fine = largest_energy_error(5e-4);
  EXPECT_LT(coarse, 1e-2);
  EXPECT_NEAR(coarse / fine, 2.0, 0.3) << "relative energy error " << coarse << " at 1 ms, " << fine << " at 0.5 ms";
}

TEST(Articulated, AgreesWithMaximalCoordinates) {
  // The same 3-link chain in both descriptions, 0.5 s at 0.1 ms: both approximate the same
  // motion to O(h), so their joint angles agree to ~1e-3 rad and the gap halves with h.
  const auto largest_angle_difference = [](double dt) {
    ModelBuilder builder = hinge_chain(3, 0.4, 0.8, 0.9, 0);
    builder.dt = dt;
    const Scene maximal = builder.build();
    const Scene joint_space = reduced(builder);
    State a = maximal.state, b = joint_space.state, next = a;
    Workspace wa, wb;
    double largest = 0.0;
    for (int i = 0; i < static_cast<int>(std::lround(0.5 / dt)); ++i) {
      step(maximal.model, maximal.params, a, {}, next, wa);
      std::swap(a, next);
      step(joint_space.model, joint_space.params, b, {}, next, wb);
      std::swap(b, next);
      for (int j = 0; j < 3; ++j)
        largest = std::max(largest, std::abs(joint_position(maximal.model, a, j, 0) - joint_position(joint_space.model, b, j, 0)));
    }
    return largest;
  };
  const double coarse = largest_angle_difference(2e-4), fine = largest_angle_difference(1e-4);
  EXPECT_LT(fine, 2e-3);
  EXPECT_NEAR(coarse / fine, 2.0, 0.4) << coarse << " rad at 0.2 ms, " << fine << " rad at 0.1 ms";
}

TEST(Articulated, TreeGradientsMatchCentralDifferences) {
  // Every parameter, every tangent component of x0 and sampled controls of a 3D tree with
  // revolute and prismatic joints, damping, external forces and a clipped motor.
  expect_gradients_match(reduced_tree(5e-3), 120, 3);
}

TEST(Articulated, CartPoleGradientsMatchCentralDifferences) { expect_gradients_match(cart_pole(), 150, 4); }

TEST(Articulated, TenLinkChainGradientsMatchCentralDifferences) {
  // Differenced with steps of 1e-5 (as the maximal chain's test): at 1e-6 round-off in the
  // loss of this sensitive chain puts the differences of the zero angular damping and of the
  // last link's x0 1e-5 off; at 1e-5 and 1e-4 they agree with the analytic values to 4e-7
  // and 4e-8.
  ModelBuilder builder = hinge_chain(10, 0.1, 0.1, 0.8, 0);
  builder.dt = 5e-3;
  expect_gradients_match(reduced(builder), 100, 5, 1e-5);
}

TEST(Articulated, CheckpointingAndStepRecordsGiveTheSameBits) {
  const Scene scene = reduced_tree(5e-3);
  const auto loss = [](int, const State& state, std::span<double> gradient) {
    for (std::size_t k = 0; k < gradient.size(); ++k) gradient[k] += 1e-3 * static_cast<double>(k % 7) * state.position[k / 12 % state.position.size()].x;
  };
  RolloutOptions workspaces;
  workspaces.keep_step_workspaces = true;
  Rollout with_records(scene.model, scene.params, workspaces);
  with_records.run(scene.state, {}, 200);
  const Gradients a = with_records.backward(loss);
  RolloutOptions options;
  options.checkpoint_interval = 16;
  options.keep_step_records = false;
  Rollout checkpointed(scene.model, scene.params, options);
  checkpointed.run(scene.state, {}, 200);
  const Gradients b = checkpointed.backward(loss);
  EXPECT_GT(with_records.stored_workspace_bytes(), 0u);
  ASSERT_EQ(a.params.size(), b.params.size());
  EXPECT_EQ(0, std::memcmp(a.params.data(), b.params.data(), a.params.size() * sizeof(double)));
  EXPECT_EQ(0, std::memcmp(a.initial_state.data(), b.initial_state.data(), a.initial_state.size() * sizeof(double)));
  EXPECT_EQ(0, std::memcmp(a.controls.data(), b.controls.data(), a.controls.size() * sizeof(double)));
}

TEST(Articulated, WithoutParameterGradientsTheStateAndControlGradientsAreTheSameBits) {
  // Both descriptions: the option only drops dL/dθ.
  for (const Coordinates coordinates : {Coordinates::Reduced, Coordinates::Maximal}) {
    Scene scene = reduced_tree(5e-3);
    scene.model.solver.coordinates = coordinates;
    const auto loss = [](int t, const State&, std::span<double> gradient) {
      for (std::size_t k = 0; k < gradient.size(); ++k) gradient[k] += 1e-3 * static_cast<double>((k + t) % 5);
    };
    Rollout full(scene.model, scene.params);
    full.run(scene.state, {}, 100);
    const Gradients a = full.backward(loss);
    RolloutOptions options;
    options.parameter_gradients = false;
    Rollout partial(scene.model, scene.params, options);
    partial.run(scene.state, {}, 100);
    const Gradients b = partial.backward(loss);
    EXPECT_TRUE(b.params.empty());
    EXPECT_EQ(a.initial_state, b.initial_state);
    EXPECT_EQ(a.controls, b.controls);
    EXPECT_THROW(b.param(scene.model, "gravity"), Error);
  }
}

TEST(Articulated, AWorkspaceServesAnotherModelAtTheSameAddress) {
  // One Workspace, two models of the same counts but different trees (a chain, then a fork),
  // built one after the other into the same storage: the fork is stepped exactly as with a
  // fresh Workspace (the chain's tree is not reused).
  const auto fifty_steps = [](const Scene& scene, Workspace& workspace) {
    State current = scene.state, next = scene.state;
    for (int i = 0; i < 50; ++i) {
      step(scene.model, scene.params, current, scene.controls, next, workspace);
      std::swap(current, next);
    }
    return current;
  };
  ModelBuilder fork;
  for (int i = 0; i < 3; ++i) {
    BodySpec link = box_body("link" + std::to_string(i), {0.1 * i, 0.2 * i, -0.3}, {0.05, 0.05, 0.2}, 1.0);
    link.shapes[0].collision_mask = 0;
    fork.add_body(link);
  }
  fork.add_joint(testing::joint_spec("hinge0", JointType::Revolute, "world", "link0", {0, 0, 0}, {0, 1, 0}));
  fork.add_joint(testing::joint_spec("hinge1", JointType::Revolute, "link0", "link1", {0.1, 0.2, -0.1}, {1, 0, 0}));
  fork.add_joint(testing::joint_spec("hinge2", JointType::Revolute, "link0", "link2", {0.2, 0.4, -0.1}, {0, 0, 1}));
  std::optional<Scene> scene;
  Workspace shared, fresh;
  scene.emplace(reduced(hinge_chain(3, 0.3, 1.0, 0.5, 0)));
  fifty_steps(*scene, shared);
  scene.reset();
  scene.emplace(reduced(fork));
  const State a = fifty_steps(*scene, shared), b = fifty_steps(*scene, fresh);
  for (std::size_t k = 0; k < a.position.size(); ++k) {
    EXPECT_EQ(a.position[k], b.position[k]);
    EXPECT_EQ(a.angular_velocity[k], b.angular_velocity[k]);
  }
}

TEST(Articulated, UnsaturatedServoApproachesItsTargetGeometrically) {
  // A servo strong enough never to saturate sets the joint rate to gain (target − q) at every
  // step, against gravity: q_{n+1} = q_n + h g (target − q_n), so q_n − target = (1 − h g)^n (q_0 − target).
  ModelBuilder builder = hinge_chain(1, 0.5, 1.0, 0.4, 0);
  builder.dt = 1e-3;
  const double gain = 8.0, target = 0.3;
  // (Reaching 2.4 rad/s within the first 1 ms step takes ~200 N·m: the bound is far above.)
  builder.add_actuator(testing::servo_spec("servo", "hinge0", target, gain, 1e4, 50.0));
  const Scene scene = reduced(builder);
  int step_index = 0;
  double largest = 0.0;
  testing::run(scene, 300, [&](const State& state, const StepStatus& status) {
    ++step_index;
    EXPECT_TRUE(status.converged);
    const double expected = target + (0.0 - target) * std::pow(1.0 - builder.dt * gain, step_index);
    largest = std::max(largest, std::abs(joint_position(scene.model, state, 0, 0) - expected));
  });
  EXPECT_LT(largest, 1e-12);
}

TEST(Articulated, SaturatedServoPushesWithItsMaximumTorque) {
  // A horizontal rod held by a servo weaker than gravity's torque about the pivot: in the first
  // step the servo pushes with exactly its bound, so the joint's rate differs from the
  // unservoed fall's by h T / I_pivot.
  const double length = 0.6, mass = 1.0, bound = 1.0, h = 1e-3;
  ModelBuilder free_fall = hinge_chain(1, length, mass, std::numbers::pi / 2, 0);
  free_fall.dt = h;
  ModelBuilder held = free_fall;
  held.add_actuator(testing::servo_spec("servo", "hinge0", 0.0, 10.0, bound, 5.0));
  const auto first_rate = [](const Scene& scene) {
    State next = scene.state;
    Workspace workspace;
    step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
    return joint_velocity(scene.model, next, 0, 0);
  };
  const double falling = first_rate(reduced(free_fall)), holding = first_rate(reduced(held));
  ASSERT_GT(std::abs(falling), h * bound * 1.5);  // gravity beats the servo: it saturates
  const double inertia_pivot = mass * (0.04 + 1.0) * length * length / 12.0 + mass * 0.25 * length * length;
  EXPECT_NEAR(holding - falling, -std::copysign(h * bound / inertia_pivot, falling), 1e-12);
}

TEST(Articulated, ServosAgreeWithMaximalCoordinates) {
  // A 2-link arm on servos (targets reached, a velocity-limited swing) in both descriptions,
  // 0.4 s: both take ω* = clamp(gain (target − q)) at every step, so they agree to O(h).
  const auto largest_difference = [](double dt) {
    ModelBuilder builder = hinge_chain(2, 0.4, 1.0, 0.3, 0);
    builder.dt = dt;
    builder.add_actuator(testing::servo_spec("shoulder", "hinge0", -0.5, 20.0, 50.0, 1.0));
    builder.add_actuator(testing::servo_spec("elbow", "hinge1", 0.8, 20.0, 50.0, 3.0));
    const Scene maximal = builder.build(), joint_space = reduced(builder);
    State a = maximal.state, b = joint_space.state, next = a;
    Workspace wa, wb;
    double largest = 0.0;
    for (int i = 0; i < static_cast<int>(std::lround(0.4 / dt)); ++i) {
      step(maximal.model, maximal.params, a, maximal.controls, next, wa);
      std::swap(a, next);
      step(joint_space.model, joint_space.params, b, joint_space.controls, next, wb);
      std::swap(b, next);
      for (int j = 0; j < 2; ++j)
        largest = std::max(largest, std::abs(joint_position(maximal.model, a, j, 0) - joint_position(joint_space.model, b, j, 0)));
    }
    return largest;
  };
  EXPECT_LT(largest_difference(1e-3), 2e-3);
  EXPECT_LT(largest_difference(5e-4), 0.6 * largest_difference(1e-3));
}

TEST(Articulated, ServoGradientsMatchCentralDifferences) {
  // Three servos — one reaching its rate, one saturated at its torque, one at its velocity
  // limit — and a motor on a 3D tree: targets, gains, torque and velocity bounds included.
  ModelBuilder builder;
  builder.dt = 5e-3;
  builder.solver.coordinates = Coordinates::Reduced;
  const auto link = [&](const std::string& name, Vec3 position, Vec3 half_extents, double mass) {
    BodySpec body = box_body(name, position, half_extents, mass);
    body.shapes[0].collision_mask = 0;
    builder.add_body(body);
  };
  link("upper", {0.2, 0, 0}, {0.2, 0.03, 0.03}, 1.0);
  link("lower", {0.5, 0, -0.1}, {0.03, 0.03, 0.12}, 0.6);
  link("hand", {0.5, 0.1, -0.2}, {0.05, 0.05, 0.05}, 0.3);
  builder.add_joint(testing::joint_spec("shoulder", JointType::Revolute, "world", "upper", {0, 0, 0}, {0, 0.3, 1}, 0.05));
  builder.add_joint(testing::joint_spec("elbow", JointType::Revolute, "upper", "lower", {0.4, 0, 0}, {0, 1, 0}));
  builder.add_joint(testing::joint_spec("wrist", JointType::Prismatic, "lower", "hand", {0.5, 0.1, -0.2}, {0, 1, 0.2}));
  builder.add_actuator(testing::servo_spec("shoulder_servo", "shoulder", 0.4, 6.0, 400.0, 10.0));  // reaches ω*
  builder.add_actuator(testing::servo_spec("elbow_servo", "elbow", -0.8, 10.0, 0.4, 20.0));      // torque-bound
  builder.add_actuator(testing::servo_spec("wrist_servo", "wrist", 0.3, 30.0, 50.0, 0.05));      // rate-bound
  builder.add_actuator(testing::motor_spec("elbow_motor", "elbow", 0.1));
  const Scene scene = builder.build();
  // The three regimes do occur (the first step's servo states).
  State next = scene.state;
  Workspace workspace;
  step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
  const rigid::ArticulatedRecord& record = workspace.impl().articulated;
  ASSERT_EQ(record.servos.size(), 3u);
  EXPECT_EQ(record.servos[0].torque_bound, 0);
  EXPECT_EQ(record.servos[0].rate_bound, 0);
  EXPECT_NE(record.servos[1].torque_bound, 0);
  EXPECT_NE(record.servos[2].rate_bound, 0);
  expect_gradients_match(scene, 60, 6);
}

using testing::error_of;

TEST(Articulated, RefusesWhatItCannotSimulateNamingTheItem) {
  const auto simulate = [](const ModelBuilder& builder) {
    const Scene scene = reduced(builder);
    Simulator simulator(scene.model, scene.params, scene.state);
    simulator.step();
  };
  EXPECT_NE(error_of([&] { simulate(hinge_chain(3, 0.3, 1.0, 0.5)); }).find("shapes 'link0/0' and 'link2/0' may collide"),
            std::string::npos);
  {
    ModelBuilder builder = hinge_chain(2, 0.3, 1.0, 0.5, 0);
    builder.add_body(box_body("loose", {2, 0, 0}, {0.1, 0.1, 0.1}, 1.0));
    EXPECT_NE(error_of([&] { simulate(builder); }).find("body 'loose'"), std::string::npos);
  }
  {
    ModelBuilder builder;
    BodySpec ball = box_body("ball", {0, 0, -0.5}, {0.1, 0.1, 0.1}, 1.0);
    ball.shapes[0].collision_mask = 0;
    builder.add_body(ball);
    builder.add_joint(testing::joint_spec("socket", JointType::Ball, "world", "ball", {}, {0, 0, 1}));
    EXPECT_NE(error_of([&] { simulate(builder); }).find("joint 'socket'"), std::string::npos);
  }
  {
    ModelBuilder builder = hinge_chain(1, 0.3, 1.0, 0.5);
    builder.add_actuator(testing::servo_spec("hold", "hinge0", 0.0, 10, 1, 1));
    builder.add_actuator(testing::servo_spec("hold_too", "hinge0", 0.0, 10, 1, 1));
    EXPECT_NE(error_of([&] { simulate(builder); }).find("actuator 'hold_too'"), std::string::npos);
  }
  {
    // A state with no angle to read: the link turned by π about an axis across its hinge.
    const Scene scene = reduced(hinge_chain(1, 0.3, 1.0, 0.5, 0));
    State flipped = scene.state, next = scene.state;
    flipped.orientation[1] = Quat::from_axis_angle({1, 0, 0}, std::numbers::pi) * flipped.orientation[1];
    Workspace workspace;
    EXPECT_NE(error_of([&] { step(scene.model, scene.params, flipped, scene.controls, next, workspace); })
                  .find("joint 'hinge0'"),
              std::string::npos);
  }
  // A plain step() with such a model refuses too (on its first step).
  ModelBuilder ground = hinge_chain(2, 0.3, 1.0, 0.5);  // link1 may touch the ground
  ground.add_ground_plane({0, 0, 1}, -2.0);
  const Scene scene = reduced(ground);
  State next = scene.state;
  Workspace workspace;
  EXPECT_NE(error_of([&] { step(scene.model, scene.params, scene.state, scene.controls, next, workspace); }).find("may collide"),
            std::string::npos);
}

TEST(Articulated, SceneFilesChooseTheCoordinates) {
  const std::string scene_text = R"({
    "dt": 0.001,
    "solver": {"coordinates": "reduced"},
    "bodies": [{"name": "rod", "position": [0, 0, -0.5], "mass": 1,
                "shapes": [{"type": "box", "half_extents": [0.05, 0.05, 0.5]}]}],
    "joints": [{"name": "pivot", "type": "revolute", "parent": "world", "child": "rod",
                "anchor": [0, 0, 0], "axis": [0, 1, 0]}]
  })";
  const Scene scene = parse_scene(scene_text);
  EXPECT_EQ(scene.model.solver.coordinates, Coordinates::Reduced);
  std::string typo = scene_text;
  typo.replace(typo.find("\"reduced\""), 9, "\"reducd\"");
  const std::string message = error_of([&] { parse_scene(typo); });
  EXPECT_NE(message.find("solver.coordinates"), std::string::npos) << message;
}

}  // namespace
}  // namespace diffphys
