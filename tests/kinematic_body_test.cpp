// tests/kinematic_body_test.cpp — kinematic bodies (BodyType::Kinematic, docs/simulation.md
// "Kinematic bodies"): moved by their own state velocity, infinitely massive but moving to
// every constraint row. Closed forms (a box carried by a platform by friction, a spinning
// body, Galilean invariance of a pendulum on a moving pivot, a paddle's hit), the pairs that
// never collide, the state's health, refusals, and every gradient (the kinematic body's x₀
// included) against central differences in both formulations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "diffphys/jacobians.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/trajectory.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_simulator.hpp"
#include "gradcheck_test_helpers.hpp"
#include "test_scenes.hpp"

// A namespace of its own: in a unity build this file shares a translation unit with others.
namespace diffphys::kinematic_body {
namespace {

using testing::box_body;
using testing::error_of;
using testing::sphere_body;

constexpr int kTangent = kStateTangentPerBody;
constexpr double kGravity = 9.81;

const char* formulation_name(Formulation formulation) {
  return formulation == Formulation::Convex ? "convex" : "complementarity";
}

// test_scenes.hpp's box without its mass (a kinematic body has none), moving.
BodySpec kinematic_box(const std::string& name, Vec3 position, Vec3 half_extents, Vec3 linear_velocity) {
  BodySpec body = box_body(name, position, half_extents, 1.0);
  body.mass.reset();
  body.type = BodyType::Kinematic;
  body.linear_velocity = linear_velocity;
  return body;
}

// A platform (top face at z = 0) moving along +x at `speed`, and a box of 1 kg resting on it
// with velocity `box_speed` along x; friction μ = √(μ_a μ_b) = `friction` (both the same).
ModelBuilder box_on_platform(Formulation formulation, double dt, double speed, double box_speed, double friction) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.solver.formulation = formulation;
  BodySpec platform = kinematic_box("platform", {0, 0, -0.05}, {3.0, 3.0, 0.05}, {speed, 0, 0});
  platform.friction = friction;
  builder.add_body(platform);
  BodySpec box = box_body("box", {0, 0, 0.1}, {0.1, 0.1, 0.1}, 1.0);
  box.friction = friction;
  box.linear_velocity = {box_speed, 0, 0};
  builder.add_body(box);
  return builder;
}

// A pendulum: a bob of 1 kg hung 0.5 m to the side of its pivot by a hinge about y; the pivot
// a small sphere, kinematic moving at `pivot_velocity` or static.
ModelBuilder pendulum_on_pivot(Formulation formulation, double dt, BodyType pivot_type, Vec3 pivot_velocity) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.solver.formulation = formulation;
  BodySpec pivot;
  pivot.name = "pivot";
  pivot.type = pivot_type;
  pivot.position = {0, 0, 1};
  pivot.linear_velocity = pivot_velocity;
  ShapeSpec sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = 0.05;
  pivot.shapes.push_back(sphere);
  builder.add_body(pivot);
  BodySpec bob = sphere_body("bob", {0.5, 0, 1}, 0.1, 1.0);
  bob.linear_velocity = pivot_velocity;  // at rest in the pivot's frame
  builder.add_body(bob);
  builder.add_joint(testing::joint_spec("swing", JointType::Revolute, "pivot", "bob", {0, 0, 1}, {0, 1, 0}));
  return builder;
}

// No gravity: a ball (at rest, or moving across the paddle's face at `ball_velocity`) and a
// paddle (restitution 0) moving at `speed` along +x towards it.
ModelBuilder paddle_and_ball(Formulation formulation, double dt, double speed, double restitution,
                             Vec3 ball_velocity = {}) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.gravity = {0, 0, 0};
  builder.solver.formulation = formulation;
  BodySpec paddle = kinematic_box("paddle", {-0.35, 0, 0}, {0.05, 0.3, 0.3}, {speed, 0, 0});
  paddle.friction = 0.3;
  builder.add_body(paddle);
  BodySpec ball = sphere_body("ball", {0, 0, 0}, 0.1, 0.5);
  ball.restitution = restitution;
  ball.friction = 0.3;
  ball.linear_velocity = ball_velocity;
  builder.add_body(ball);
  return builder;
}

// --- Motion by the body's own velocity. ----------------------------------------------

TEST(KinematicBody, SpinningBodyTurnsByItsOwnVelocityAndDoesNotFall) {
  // After n steps of constant ω, q = exp(n h ω) q₀ and p = p₀ + n h v; the velocity stays as
  // the state holds it under gravity, bit for bit.
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    ModelBuilder builder;
    builder.dt = 2e-3;
    builder.solver.formulation = formulation;
    builder.add_ground_plane();
    BodySpec spinner = kinematic_box("spinner", {0, 0, 2}, {0.3, 0.1, 0.05}, {0.4, -0.2, 0.1});
    spinner.angular_velocity = {0.3, -0.5, 1.2};
    spinner.orientation = Quat::from_rotation_vector({0.2, 0.1, -0.4});
    builder.add_body(spinner);
    const Scene scene = builder.build();
    const int b = scene.model.body_index("spinner");
    const auto i = static_cast<std::size_t>(b);
    Simulator simulator(scene.model, scene.params, scene.state);
    const int steps = 400;
    for (int t = 0; t < steps; ++t) ASSERT_TRUE(simulator.step().converged);
    const State& state = simulator.state();
    EXPECT_EQ(state.linear_velocity[i], scene.state.linear_velocity[i]);
    EXPECT_EQ(state.angular_velocity[i], scene.state.angular_velocity[i]);
    const double time = steps * builder.dt;
    EXPECT_NEAR(norm(state.position[i] - (scene.state.position[i] + scene.state.linear_velocity[i] * time)), 0.0, 1e-12);
    const Quat expected = Quat::from_rotation_vector(scene.state.angular_velocity[i] * time) * scene.state.orientation[i];
    EXPECT_NEAR(std::abs(dot(Vec3{state.orientation[i].x, state.orientation[i].y, state.orientation[i].z},
                             Vec3{expected.x, expected.y, expected.z}) +
                         state.orientation[i].w * expected.w),
                1.0, 1e-12);
    // Nothing to simulate has no kinetic energy: a kinematic body has no mass.
    EXPECT_EQ(kinetic_energy(scene.model, scene.params, state), 0.0);
    EXPECT_EQ(potential_energy(scene.model, scene.params, state), 0.0);
  }
}

TEST(KinematicBody, BoxOnAMovingPlatformSlidesAtMuGThenSticks) {
  // A box placed at rest on a platform moving at v accelerates at μg (kinetic friction) until
  // it moves with the platform at t* = v/(μg), having gone v²/(2μg); then it sticks.
  const double speed = 1.0, friction = 0.5, dt = 1e-3;
  const double acceleration = friction * kGravity, stick_time = speed / acceleration;
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    const Scene scene = box_on_platform(formulation, dt, speed, 0.0, friction).build();
    const auto box = static_cast<std::size_t>(scene.model.body_index("box"));
    const auto platform = static_cast<std::size_t>(scene.model.body_index("platform"));
    Simulator simulator(scene.model, scene.params, scene.state);
    // Complementarity: semi-implicit Euler gives v_n = n h μ g exactly while sliding (four
    // corner contacts share m g; the pyramid's first direction follows the slip). The convex
    // formulation's relaxed cone (Anitescu 2006, docs/simulation.md "Sliding contacts hover")
    // lifts a contact sliding this fast: the box hops at the first step (0.2 m/s, 8 mm up),
    // lands and slides; the friction impulse is still μ times the normal one, which over the
    // hop and the slide is m g t, so it sticks at the same t*. Its slide and lead are not
    // compared.
    const bool hard = formulation == Formulation::Complementarity;
    int stuck_step = -1;
    const int steps = 400;  // 0.4 s, twice t*
    for (int n = 1; n <= steps; ++n) {
      ASSERT_TRUE(simulator.step().converged) << "step " << n;
      const State& state = simulator.state();
      const double box_speed = state.linear_velocity[box].x;
      if (hard && n * dt < stick_time - 2 * dt) {
        ASSERT_NEAR(box_speed, acceleration * n * dt, 1e-9 * speed) << "step " << n;
      }
      if (stuck_step < 0 && box_speed > speed * (1 - 1e-3)) stuck_step = n;
      EXPECT_EQ(state.linear_velocity[platform].x, speed);
    }
    ASSERT_GT(stuck_step, 0);
    EXPECT_NEAR(stuck_step * dt, stick_time, 2 * dt);
    // Sticking: the box moves with the platform, at v, the gap it slid kept.
    const State& final = simulator.state();
    EXPECT_NEAR(final.linear_velocity[box].x, speed, 1e-3 * speed);
    EXPECT_NEAR(final.linear_velocity[box].y, 0.0, 1e-9);
    const double slid = speed * stick_time - speed * speed / (2 * acceleration);  // platform's lead over the box
    const double lead = (final.position[platform].x - scene.state.position[platform].x) -
                        (final.position[box].x - scene.state.position[box].x);
    if (hard) {
      EXPECT_NEAR(lead, slid, 2 * speed * dt);
    }
    // The box rests on the platform, not in it, and has not turned.
    EXPECT_NEAR(final.position[box].z, 0.1, 1e-3);
    EXPECT_LT(norm(final.angular_velocity[box]), 1e-3);
  }
}

TEST(KinematicBody, GaussSeidelWithWarmStartCarriesTheBoxAsTheInteriorPointDoes) {
  // The complementarity formulation's other solver, warm-started from the previous step's
  // impulses (rigid/warm_start.hpp): the same slide and stick, to its tolerance.
  const double speed = 1.0, friction = 0.5, dt = 1e-3;
  ModelBuilder builder = box_on_platform(Formulation::Complementarity, dt, speed, 0.0, friction);
  const Scene interior_point = builder.build();
  builder.solver.type = SolverType::ProjectedGaussSeidel;
  builder.solver.max_iterations = 2000;
  ASSERT_TRUE(builder.solver.warm_start);
  const Scene gauss_seidel = builder.build();
  const auto box = static_cast<std::size_t>(interior_point.model.body_index("box"));
  Simulator a(interior_point.model, interior_point.params, interior_point.state);
  Simulator b(gauss_seidel.model, gauss_seidel.params, gauss_seidel.state);
  for (int n = 1; n <= 300; ++n) {
    ASSERT_TRUE(a.step().converged);
    ASSERT_TRUE(b.step().converged) << "step " << n;
    ASSERT_NEAR(b.state().linear_velocity[box].x, a.state().linear_velocity[box].x, 1e-6) << "step " << n;
  }
  EXPECT_NEAR(b.state().linear_velocity[box].x, speed, 1e-6);
}

TEST(KinematicBody, PendulumOnAPivotMovingAtConstantVelocityIsTheStaticPendulumInTheMovingFrame) {
  // Galilean invariance: the bob's position relative to a pivot moving at V, started at rest
  // in the pivot's frame, is the static pendulum's, and its velocity differs by V.
  const Vec3 velocity{0.7, 0.3, -0.2};
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    const Scene moving = pendulum_on_pivot(formulation, 2e-3, BodyType::Kinematic, velocity).build();
    const Scene fixed = pendulum_on_pivot(formulation, 2e-3, BodyType::Static, {}).build();
    const auto pivot = static_cast<std::size_t>(moving.model.body_index("pivot"));
    const auto bob = static_cast<std::size_t>(moving.model.body_index("bob"));
    Simulator a(moving.model, moving.params, moving.state), b(fixed.model, fixed.params, fixed.state);
    double largest_swing = 0.0;
    for (int t = 0; t < 500; ++t) {
      ASSERT_TRUE(a.step().converged);
      ASSERT_TRUE(b.step().converged);
      const Vec3 relative_moving = a.state().position[bob] - a.state().position[pivot];
      const Vec3 relative_fixed = b.state().position[bob] - b.state().position[pivot];
      ASSERT_NEAR(norm(relative_moving - relative_fixed), 0.0, 1e-9) << "step " << t;
      ASSERT_NEAR(norm(a.state().linear_velocity[bob] - velocity - b.state().linear_velocity[bob]), 0.0, 1e-8);
      largest_swing = std::max(largest_swing, norm(b.state().linear_velocity[bob]));
    }
    EXPECT_GT(largest_swing, 1.0);  // it swung (a 0.5 m pendulum dropped from horizontal: ~3 m/s)
  }
}

TEST(KinematicBody, PaddleHitsABallWithItsSpeed) {
  // An infinitely massive paddle at U hits a ball at rest head on: the ball leaves at
  // (1 + e) U (the separation speed e U), the paddle keeps U.
  const double speed = 2.0;
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex})
    for (const double restitution : {0.0, 0.5}) {
      SCOPED_TRACE(std::string(formulation_name(formulation)) + ", e = " + std::to_string(restitution));
      const Scene scene = paddle_and_ball(formulation, 1e-3, speed, restitution).build();
      const auto ball = static_cast<std::size_t>(scene.model.body_index("ball"));
      const auto paddle = static_cast<std::size_t>(scene.model.body_index("paddle"));
      Simulator simulator(scene.model, scene.params, scene.state);
      for (int t = 0; t < 300; ++t) ASSERT_TRUE(simulator.step().converged);  // contact at ~0.1 s
      const State& state = simulator.state();
      EXPECT_EQ(state.linear_velocity[paddle].x, speed);
      // Restitution below the threshold speed stops; a resting contact pushed at U moves at U.
      const double tolerance = formulation == Formulation::Convex ? 1e-3 : 1e-6;  // measured 3.3e-4, 3.8e-4 (convex)
      EXPECT_NEAR(state.linear_velocity[ball].x, (1 + restitution) * speed, tolerance * speed);
      EXPECT_NEAR(norm(state.angular_velocity[ball]), 0.0, 1e-6);
      EXPECT_GE(state.position[ball].x - state.position[paddle].x, 0.15 - 1e-3);  // not through the paddle
    }
}

TEST(KinematicBody, ProgramDrivesAPlatformBetweenStepsAndTheBoxFollows) {
  // The program writes the platform's pose and velocity each step (a sinusoid along x, as
  // MuJoCo's mocap_pos): the platform is exactly where it was put, and friction (μ = 1 > the
  // peak acceleration A ω² / g = 0.8) carries the box along without slip once it sticks.
  const Scene scene = box_on_platform(Formulation::Complementarity, 1e-3, 0.0, 0.0, 1.0).build();
  const auto box = static_cast<std::size_t>(scene.model.body_index("box"));
  const auto platform = static_cast<std::size_t>(scene.model.body_index("platform"));
  Simulator simulator(scene.model, scene.params, scene.state);
  // The world's simulator driven the same way takes the same steps, bit for bit.
  const World world("platform", "<test>", scene, std::nullopt);
  WorldSimulator in_world(world, world.default_params(), world.initial_state());
  const double amplitude = 0.05, omega = 2 * std::numbers::pi * 2.0;  // 2 Hz
  for (int t = 0; t < 1000; ++t) {
    const double time = t * scene.model.dt;
    State state = simulator.state();
    state.position[platform].x = amplitude * std::sin(omega * time);
    state.linear_velocity[platform].x = amplitude * omega * std::cos(omega * time);
    simulator.set_state(state);
    ASSERT_TRUE(simulator.step().converged);
    ASSERT_EQ(simulator.state().position[platform].x,
              state.position[platform].x + scene.model.dt * state.linear_velocity[platform].x);
    WorldState world_state = in_world.state();
    world_state.rigid.position[platform] = state.position[platform];
    world_state.rigid.linear_velocity[platform] = state.linear_velocity[platform];
    in_world.set_state(world_state);
    ASSERT_TRUE(in_world.step().converged());
    ASSERT_EQ(pack_state(world, in_world.state()), pack_state(world, WorldState{simulator.state().time, simulator.state(), {}, {}}));
  }
  // The box moves with the platform (it started at rest on it while the platform moved at
  // A ω, slipped for a few ms, then stuck): their velocities agree.
  const State& final = simulator.state();
  EXPECT_NEAR(final.linear_velocity[box].x, final.linear_velocity[platform].x, 1e-6);
  // Writing a non-finite pose is refused, naming the body.
  State bad = simulator.state();
  bad.position[platform].y = std::nan("");
  EXPECT_NE(error_of([&] { simulator.set_state(bad); }).find("body 'platform': position is not finite"),
            std::string::npos);
  WorldState bad_world = in_world.state();
  bad_world.rigid = bad;
  EXPECT_NE(error_of([&] { in_world.set_state(bad_world); }).find("body 'platform': position is not finite"),
            std::string::npos);
}

// --- Collision pairs, state health, formats and refusals. ------------------------------

TEST(KinematicBody, NeverCollidesWithStaticOrKinematicBodies) {
  // Overlapping: a kinematic box in a static one and in another kinematic one (no contacts);
  // a dynamic ball on the kinematic box does touch it.
  ModelBuilder builder;
  builder.add_ground_plane();
  BodySpec wall = box_body("wall", {0, 0, 0.2}, {0.5, 0.5, 0.2}, 1.0);
  wall.type = BodyType::Static;
  wall.mass.reset();
  builder.add_body(wall);
  builder.add_body(kinematic_box("slider", {0.2, 0, 0.2}, {0.5, 0.5, 0.2}, {0.1, 0, 0}));
  builder.add_body(kinematic_box("other", {0.3, 0.1, 0.25}, {0.5, 0.5, 0.2}, {0, 0.1, 0}));
  builder.add_body(sphere_body("ball", {0.2, 0, 0.5}, 0.1, 1.0));
  const Scene scene = builder.build();
  Simulator simulator(scene.model, scene.params, scene.state);
  simulator.step();
  const int ball = scene.model.body_index("ball");
  ASSERT_FALSE(simulator.contacts().empty());
  for (const Contact& contact : simulator.contacts())
    EXPECT_TRUE(contact.body_a == ball || contact.body_b == ball) << contact.body_a << "–" << contact.body_b;
}

TEST(KinematicBody, NonFiniteKinematicStateIsReportedByTheStepsHealth) {
  // A mocap-style target (a kinematic body without shapes) beside a ball resting on the
  // ground: a non-finite velocity or pose written into it makes the step's state unhealthy,
  // naming it.
  ModelBuilder builder;
  builder.add_ground_plane();
  builder.add_body(sphere_body("ball", {0, 0, 0.1}, 0.1, 1.0));
  BodySpec target;
  target.name = "target";
  target.type = BodyType::Kinematic;
  target.position = {0.5, 0, 1};
  builder.add_body(target);
  const Scene scene = builder.build();
  const auto index = static_cast<std::size_t>(scene.model.body_index("target"));
  for (const bool pose : {false, true}) {
    SCOPED_TRACE(pose ? "pose" : "velocity");
    State state = scene.state, next;
    if (pose) state.position[index].y = std::nan("");
    else state.linear_velocity[index].y = std::numeric_limits<double>::infinity();
    Workspace workspace;
    const StepStatus status = step(scene.model, scene.params, state, {}, next, workspace);
    EXPECT_EQ(status.health, StateHealth::NonFinite);
    EXPECT_FALSE(status.converged);
    EXPECT_EQ(status.health_body, static_cast<int>(index));
    EXPECT_NE(health_message(scene.model, status).find("body 'target': non-finite state"), std::string::npos)
        << health_message(scene.model, status);
  }
}

TEST(KinematicBody, BuilderAndSceneFileRefuseWhatAPrescribedMotionCannotHave) {
  const auto build_with = [](auto&& change) {
    return error_of([&] {
      ModelBuilder builder;
      BodySpec platform = kinematic_box("platform", {0, 0, 0}, {1, 1, 0.1}, {1, 0, 0});
      BodySpec bob = sphere_body("bob", {0, 0, 1}, 0.1, 1.0);
      change(platform, builder);
      builder.add_body(platform);
      builder.add_body(bob);
      builder.build();
    });
  };
  EXPECT_NE(build_with([](BodySpec& body, ModelBuilder&) { body.mass = 2.0; })
                .find("body 'platform': a kinematic body has no mass (its motion is prescribed by its state), got 2"),
            std::string::npos);
  EXPECT_NE(build_with([](BodySpec& body, ModelBuilder&) { body.inertia = Vec3{1, 1, 1}; }).find("has no inertia"),
            std::string::npos);
  EXPECT_NE(build_with([](BodySpec& body, ModelBuilder&) { body.force = {0, 0, 3}; }).find("has no force"),
            std::string::npos);
  EXPECT_NE(build_with([](BodySpec& body, ModelBuilder&) { body.linear_velocity.z = std::nan(""); })
                .find("body 'platform': linear_velocity"),
            std::string::npos);
  EXPECT_NE(build_with([](BodySpec&, ModelBuilder& builder) {
              builder.add_joint(testing::joint_spec("wrist", JointType::Ball, "bob", "platform", {0, 0, 1}, {0, 0, 1}));
            }).find("joint 'wrist': child body 'platform' is kinematic: its motion is prescribed"),
            std::string::npos);
  // A plane is infinite: static bodies only.
  EXPECT_NE(build_with([](BodySpec& body, ModelBuilder&) {
              ShapeSpec plane;
              plane.type = ShapeType::Plane;
              body.shapes = {plane};
            }).find("may only belong to a static body"),
            std::string::npos);

  // The scene file: "type": "kinematic" with its velocity, as a dynamic body's.
  const Scene scene = parse_scene(R"({"dt": 0.001, "bodies": [
      {"name": "belt", "type": "kinematic", "position": [0, 0, -0.05], "linear_velocity": [0.5, 0, 0],
       "angular_velocity": [0, 0, 0.1], "friction": 0.8,
       "shapes": [{"type": "box", "half_extents": [2, 0.3, 0.05]}]}]})",
                                  "belt.json");
  const int belt = scene.model.body_index("belt");
  EXPECT_EQ(scene.model.bodies[static_cast<std::size_t>(belt)].type, BodyType::Kinematic);
  EXPECT_EQ(scene.state.linear_velocity[static_cast<std::size_t>(belt)], (Vec3{0.5, 0, 0}));
  EXPECT_EQ(scene.state.angular_velocity[static_cast<std::size_t>(belt)], (Vec3{0, 0, 0.1}));
  EXPECT_LT(scene.model.layout.body_mass[static_cast<std::size_t>(belt)], 0);
  EXPECT_EQ(scene.params.at(scene.model.layout.body_friction[static_cast<std::size_t>(belt)]), 0.8);
  EXPECT_NE(error_of([] {
              parse_scene(R"({"bodies": [{"name": "belt", "type": "kinematic", "density": 500,
                  "shapes": [{"type": "sphere", "radius": 0.1}]}]})",
                          "belt.json");
            }).find("belt.json: bodies[0].density: not used by a kinematic body"),
            std::string::npos);
}

TEST(KinematicBody, ReducedCoordinatesRefuseAKinematicBaseNamingIt) {
  ModelBuilder builder = pendulum_on_pivot(Formulation::Complementarity, 1e-3, BodyType::Kinematic, {1, 0, 0});
  builder.solver.coordinates = Coordinates::Reduced;
  const Scene scene = builder.build();
  EXPECT_NE(error_of([&] { Simulator simulator(scene.model, scene.params, scene.state); })
                .find("body 'pivot' is kinematic: reduced coordinates do not support kinematic bodies"),
            std::string::npos);
}

TEST(KinematicBody, TrajectoryRecordsItsTypeAndItsMotionInEveryFrame) {
  const Scene scene = box_on_platform(Formulation::Complementarity, 1e-3, 1.0, 0.0, 0.5).build();
  TrajectoryRecorder recorder(scene.model, scene.params);
  Simulator simulator(scene.model, scene.params, scene.state);
  recorder.record(simulator.state(), simulator.contacts(), StepStatus{});
  for (int t = 0; t < 10; ++t) {
    const StepStatus status = simulator.step();
    recorder.record(simulator.state(), simulator.contacts(), status);
  }
  std::ostringstream text;
  recorder.write(text);
  const nlohmann::json file = nlohmann::json::parse(text.str());
  const int platform = scene.model.body_index("platform");
  EXPECT_EQ(file["model"]["bodies"][static_cast<std::size_t>(platform)]["type"], "kinematic");
  // Every frame holds its pose (the world body is not recorded): 1 m/s along x.
  const nlohmann::json& frames = file["frames"];
  ASSERT_EQ(frames.size(), 11u);
  for (std::size_t f = 0; f < frames.size(); ++f)
    EXPECT_NEAR(frames[f]["bodies"][static_cast<std::size_t>(platform - 1)]["position"][0].get<double>(),
                static_cast<double>(f) * 1e-3, 1e-12);
}

// --- Gradients: the kinematic body's x₀ (pose and velocity) included. -------------------

GradientCheckReport expect_gradients_match(const Scene& scene, int steps, std::uint32_t seed, double param_epsilon = 1e-6) {
  GradientCheckOptions options;
  options.steps = steps;
  options.tolerance = 1e-5;
  options.seed = seed;
  options.param_epsilon = param_epsilon;
  return testing::expect_gradients_match_central_differences(scene, options);
}

TEST(KinematicBodyGradient, BoxSlidingOnAMovingPlatformMatchesCentralDifferences) {
  // Sliding: μg = 4.9 m/s² takes 0.2 s to reach the platform's 1 m/s; 15 steps of 10 ms.
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    const Scene scene = box_on_platform(formulation, 1e-2, 1.0, 0.0, 0.5).build();
    const GradientCheckReport report = expect_gradients_match(scene, 15, 11, 1e-4);
    testing::expect_parameter_checked_and_matters(report, "x0/platform/linear_velocity[0]", 1e-3);
    testing::expect_parameter_checked_and_matters(report, "x0/platform/position[0]", 1e-3);
  }
}

TEST(KinematicBodyGradient, BoxStickingToAMovingPlatformMatchesCentralDifferences) {
  // Sticking: the box starts with the platform's velocity and a small sideways slip that
  // friction stops within a step; carried for 40 steps.
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    const Scene scene = box_on_platform(formulation, 1e-2, 1.0, 1.0, 0.5).build();
    const GradientCheckReport report = expect_gradients_match(scene, 40, 12, 1e-4);
    testing::expect_parameter_checked_and_matters(report, "x0/platform/linear_velocity[0]", 1e-3);
  }
}

TEST(KinematicBodyGradient, PendulumHungFromAMovingPivotMatchesCentralDifferences) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    const Scene scene = pendulum_on_pivot(formulation, 1e-2, BodyType::Kinematic, {0.6, 0.2, 0.1}).build();
    const GradientCheckReport report = expect_gradients_match(scene, 80, 13);
    testing::expect_parameter_checked_and_matters(report, "x0/pivot/linear_velocity[0]", 1e-3);
    testing::expect_parameter_checked_and_matters(report, "x0/pivot/position[2]", 1e-3);
  }
}

TEST(KinematicBodyGradient, BallHitByAKinematicPaddleMatchesCentralDifferences) {
  // The ball moves across the paddle's face, so that the hit's friction holds it strictly
  // inside the cone. (A head-on hit has zero slip and zero friction, the tie between sticking
  // and sliding, where the step is not differentiable: there the complementarity
  // formulation's x₀ entries across the face disagree with central differences by up to 20 %,
  // as they do for a dynamic 1000 kg paddle.)
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation_name(formulation));
    const Scene scene = paddle_and_ball(formulation, 1e-2, 2.0, 0.5, {0, 0.4, -0.3}).build();
    const GradientCheckReport report = expect_gradients_match(scene, 30, 14);
    testing::expect_parameter_checked_and_matters(report, "x0/paddle/linear_velocity[0]", 1e-3);
  }
}

TEST(KinematicBodyGradient, StepJacobianHasTheClosedFormsOfAPrescribedMotionAndOfAStick) {
  // One step of a box sticking to a platform at 1 m/s (it already moves with it): the
  // platform's rows are those of p⁺ = p + h v, v⁺ = v (A = [[I, 0, hI, 0], ..., [0, 0, I, 0],
  // ...] in the tangent layout, its ω zero), and the box's velocity follows the platform's:
  // ∂v_box⁺/∂v_platform = I along the surface (friction holds it), 0 across it (the normal
  // rows let it leave upward only at rest), ∂v_box⁺/∂v_box = 0 along the surface.
  const Scene scene = box_on_platform(Formulation::Complementarity, 1e-2, 1.0, 1.0, 0.5).build();
  const int n = state_tangent_size(scene.model);
  const auto platform = static_cast<std::size_t>(scene.model.body_index("platform"));
  const auto box = static_cast<std::size_t>(scene.model.body_index("box"));
  std::vector<double> A(static_cast<std::size_t>(n * n)), B;
  State next;
  StepJacobians jacobians(scene.model);
  ASSERT_TRUE(jacobians.compute(scene.params, scene.state, {}, next, A, B).converged);
  const auto entry = [&](std::size_t row_body, int row, std::size_t column_body, int column) {
    return A[(kTangent * row_body + static_cast<std::size_t>(row)) * static_cast<std::size_t>(n) + kTangent * column_body +
             static_cast<std::size_t>(column)];
  };
  const double h = scene.model.dt;
  for (int r = 0; r < kTangent; ++r)
    for (int c = 0; c < kTangent; ++c) {
      // p⁺ = p + h v; θ⁺ = θ (ω = 0: exp(hω) is the identity, its left Jacobian too) + h ω; v, ω kept.
      double expected = r == c ? 1.0 : 0.0;
      if (r < 3 && c == r + 6) expected = h;
      if (r >= 3 && r < 6 && c == r + 6) expected = h;
      EXPECT_NEAR(entry(platform, r, platform, c), expected, 1e-12) << "row " << r << ", column " << c;
      EXPECT_EQ(entry(platform, r, box, c), 0.0) << "row " << r << ", column " << c;
    }
  for (int k = 0; k < 2; ++k) {  // x and y: along the platform's surface
    EXPECT_NEAR(entry(box, 6 + k, platform, 6 + k), 1.0, 1e-9);
    EXPECT_NEAR(entry(box, 6 + k, box, 6 + k), 0.0, 1e-9);
  }
}

TEST(KinematicBodyGradient, CheckpointedRolloutGivesTheSameGradientAsStoringEveryState) {
  const Scene scene = box_on_platform(Formulation::Complementarity, 1e-2, 1.0, 0.0, 0.5).build();
  const int platform = scene.model.body_index("platform");
  const auto loss = [&](int t, const State&, std::span<double> out) {
    if (t % 5 == 0) out[static_cast<std::size_t>(kTangent * scene.model.body_index("box"))] += 1.0;
  };
  std::vector<Gradients> gradients;
  for (const int interval : {0, 7}) {
    RolloutOptions options;
    options.checkpoint_interval = interval;
    Rollout rollout(scene.model, scene.params, options);
    rollout.run(scene.state, {}, 40);
    EXPECT_EQ(rollout.checkpoint_interval(), interval == 0 ? 1 : interval);
    gradients.push_back(rollout.backward(loss));
  }
  EXPECT_EQ(gradients[0].initial_state, gradients[1].initial_state);
  EXPECT_EQ(gradients[0].params, gradients[1].params);
  // The platform's velocity drives the box (through friction): its entry is not zero, and
  // the platform is not listed as fixed scenery.
  EXPECT_GT(std::abs(gradients[0].initial_state[static_cast<std::size_t>(kTangent * platform + 6)]), 1e-3);
  for (const std::string& name : gradients[0].not_differentiable) EXPECT_NE(name, "x0/platform");
}

}  // namespace
}  // namespace diffphys::kinematic_body
