// tests/equality_test.cpp — soft equality constraints (Model::equalities, rigid/equality_rows.hpp):
// closed forms of their physics (a pendulum's period on a stiff distance row, a soft connect's
// sag g/ω² under a hanging mass, no energy gained), gradients through them against central
// differences (state and their θ entries), the scene file's "equalities" section and its refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <numbers>
#include <string>
#include <vector>

#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "gradcheck_test_helpers.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::error_of;
using testing::sphere_body;

constexpr double kGravity = 9.81;

// A point-like ball hanging below a world point (the pivot) on a distance equality of length L,
// started `angle` from the vertical in the x–z plane.
Scene distance_pendulum(double length, double angle, double time_constant, double dt = 1e-3) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.gravity = {0, 0, -kGravity};
  builder.solver.formulation = Formulation::Convex;
  const Vec3 pivot{0, 0, 2};
  const Vec3 bob = pivot + Vec3{length * std::sin(angle), 0, -length * std::cos(angle)};
  builder.add_body(sphere_body("bob", bob, 0.01, 1.5));
  EqualitySpec rod;
  rod.name = "rod";
  rod.type = EqualityType::Distance;
  rod.body_b = "bob";
  rod.anchor_a = pivot;
  rod.anchor_b = bob;
  rod.time_constant = time_constant;
  builder.add_equality(rod);
  return builder.build();
}

TEST(EqualityPhysics, PendulumOnAStiffDistanceRowSwingsWithPeriodTwoPiRootLOverG) {
  const double length = 1.0, angle = 0.05;
  // Stiff: ω = 1/τ = 500 rad/s, 160 times the pendulum's 3.13 rad/s; the rod stretches g/ω².
  Scene scene = distance_pendulum(length, angle, 2e-3);
  EXPECT_EQ(scene.model.equality_count(), 1);
  Simulator simulator(scene.model, scene.params, scene.state);
  const int bob = scene.model.body_index("bob");
  // Upward zero crossings of x, linearly interpolated, over about three periods.
  std::vector<double> crossings;
  double previous_x = simulator.state().position[static_cast<std::size_t>(bob)].x;
  for (int step = 0; step < 6500; ++step) {
    simulator.step();
    const double x = simulator.state().position[static_cast<std::size_t>(bob)].x;
    if (previous_x < 0 && x >= 0) {
      const double t = simulator.state().time - scene.model.dt * x / (x - previous_x);
      crossings.push_back(t);
    }
    previous_x = x;
  }
  ASSERT_GE(crossings.size(), 3u);
  const double period = (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  // 2π√(L/g) (1 + θ₀²/16): the amplitude's correction is 1.6e-4 at θ₀ = 0.05.
  const double expected = 2.0 * std::numbers::pi * std::sqrt(length / kGravity) * (1.0 + angle * angle / 16.0);
  std::cout << "distance pendulum: period " << period << " s, 2π√(L/g)(1 + θ₀²/16) = " << expected << " s\n";
  EXPECT_NEAR(period, expected, 2e-3 * expected) << "measured " << period << " s, expected " << expected << " s";
}

TEST(EqualityPhysics, PendulumOnADistanceRowGainsNoEnergy) {
  Scene scene = distance_pendulum(0.8, 0.6, 5e-3);
  Simulator simulator(scene.model, scene.params, scene.state);
  const double initial = kinetic_energy(scene.model, scene.params, simulator.state()) +
                         potential_energy(scene.model, scene.params, simulator.state());
  double largest = initial;
  for (int step = 0; step < 3000; ++step) {
    simulator.step();
    const double energy = kinetic_energy(scene.model, scene.params, simulator.state()) +
                          potential_energy(scene.model, scene.params, simulator.state());
    largest = std::max(largest, energy);
  }
  // The rod's spring stores at most m g²/(2ω²) ≈ 3e-4 J here; the swing's own energy (from its
  // lowest point) is m g L (1 − cos 0.6) ≈ 2.1 J.
  std::cout << "distance pendulum: energy " << initial << " J at the start, at most " << largest << " J\n";
  EXPECT_LE(largest, initial + 1e-3) << "energy grew from " << initial << " J to " << largest << " J";
}

// A ball of mass m held at its centre by a connect to a world point: the row's spring has
// k = m ω², ω = 1/(ζτ) (rigid/compliance.hpp), so it settles m g/k = g (ζτ)² below the point.
TEST(EqualityPhysics, SoftConnectUnderAHangingMassSagsByMgOverK) {
  for (const double damping_ratio : {1.0, 0.7}) {
    ModelBuilder builder;
    builder.dt = 1e-3;
    builder.gravity = {0, 0, -kGravity};
    builder.solver.formulation = Formulation::Convex;
    const Vec3 point{0.3, -0.2, 1.0};
    builder.add_body(sphere_body("weight", point, 0.05, 2.0));
    EqualitySpec hold;
    hold.name = "hold";
    hold.type = EqualityType::Connect;
    hold.body_b = "weight";
    hold.anchor = point;
    hold.time_constant = 0.05;
    hold.damping_ratio = damping_ratio;
    builder.add_equality(hold);
    Scene scene = builder.build();
    Simulator simulator(scene.model, scene.params, scene.state);
    for (int step = 0; step < 4000; ++step) simulator.step();
    const double omega = 1.0 / (damping_ratio * hold.time_constant);
    const double sag = kGravity / (omega * omega);
    const Vec3 at = simulator.state().position[1];
    std::cout << "soft connect, ζ = " << damping_ratio << ": sag " << point.z - at.z << " m, g(ζτ)² = " << sag << " m\n";
    EXPECT_NEAR(point.z - at.z, sag, 1e-4 * sag) << "ζ = " << damping_ratio;
    EXPECT_NEAR(at.x, point.x, 1e-9);
    EXPECT_NEAR(at.y, point.y, 1e-9);
    EXPECT_LT(norm(simulator.state().linear_velocity[1]), 1e-6);
  }
}

// A moving, turning ball ("upper") held by a connect ("hold") off its centre to a world point,
// for the gradient tests below to hang a second body from.
ModelBuilder ball_held_by_a_connect(double hold_damping_ratio) {
  ModelBuilder builder;
  builder.dt = 2e-3;
  builder.gravity = {0, 0, -kGravity};
  builder.solver.formulation = Formulation::Convex;
  BodySpec upper = sphere_body("upper", {0, 0, 1}, 0.05, 1.0);
  upper.linear_velocity = {0.3, 0.1, 0};
  upper.angular_velocity = {0.5, -1.0, 2.0};
  builder.add_body(upper);
  EqualitySpec hold;
  hold.name = "hold";
  hold.type = EqualityType::Connect;
  hold.body_b = "upper";
  hold.anchor = {0.02, 0.01, 1.05};
  hold.time_constant = 0.03;
  hold.damping_ratio = hold_damping_ratio;
  builder.add_equality(hold);
  return builder;
}

// Two balls: one held by a connect to the world off its centre (so it turns), the other by a
// distance row to a point of the first; both moving. Every gradient, the equalities' time
// constants and damping ratios among them, against central differences.
TEST(EqualityGradients, ConnectAndDistanceMatchCentralDifferences) {
  ModelBuilder builder = ball_held_by_a_connect(0.8);
  BodySpec lower = sphere_body("lower", {0.1, 0.05, 0.7}, 0.04, 0.5);
  lower.linear_velocity = {-0.2, 0.4, 0.1};
  builder.add_body(lower);
  EqualitySpec rod;
  rod.name = "rod";
  rod.type = EqualityType::Distance;
  rod.body_a = "upper";
  rod.body_b = "lower";
  rod.anchor_a = {0.03, 0, 0.96};
  rod.anchor_b = {0.1, 0.05, 0.74};
  rod.length = 0.3;  // longer than at build time: the spring pulls from the first step
  rod.time_constant = 0.02;
  builder.add_equality(rod);
  const Scene scene = builder.build();
  GradientCheckOptions options;
  options.steps = 60;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  testing::expect_parameter_checked_and_matters(report, "equality/hold/time_constant", 1e-4);
  testing::expect_parameter_checked_and_matters(report, "equality/hold/damping_ratio", 1e-4);
  testing::expect_parameter_checked_and_matters(report, "equality/rod/time_constant", 1e-4);
  testing::expect_parameter_checked_and_matters(report, "equality/rod/damping_ratio", 1e-4);
}

// A ball held at its centre by a weld to the world, whose orientation target is turned by
// 0.4 rad about an oblique axis from where it starts: the rotation rows turn it onto the target
// (no torque acts at rest, so it settles exactly there) while the point rows carry its weight
// as a connect's do, g (ζτ)² below the anchor.
TEST(EqualityPhysics, SoftWeldTurnsOntoItsTargetAndSagsByMgOverK) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.gravity = {0, 0, -kGravity};
  builder.solver.formulation = Formulation::Convex;
  const Vec3 point{0.3, -0.2, 1.0};
  builder.add_body(sphere_body("weight", point, 0.05, 2.0));
  EqualitySpec hold;
  hold.name = "hold";
  hold.type = EqualityType::Weld;
  hold.body_b = "weight";
  hold.anchor = point;
  const Quat target = Quat::from_axis_angle(normalized(Vec3{1, 2, -1}), 0.4);
  hold.relative = target;
  hold.time_constant = 0.05;
  builder.add_equality(hold);
  Scene scene = builder.build();
  ASSERT_EQ(scene.model.equality_count(), 1);
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int step = 0; step < 4000; ++step) simulator.step();
  const double sag = kGravity * hold.time_constant * hold.time_constant;
  const State& state = simulator.state();
  EXPECT_NEAR(point.z - state.position[1].z, sag, 1e-4 * sag);
  EXPECT_NEAR(state.position[1].x, point.x, 1e-9);
  EXPECT_NEAR(state.position[1].y, point.y, 1e-9);
  EXPECT_LT(norm(rotation_vector(state.orientation[1] * target.conjugate())), 1e-9);
  EXPECT_LT(norm(state.angular_velocity[1]), 1e-8);
}

// A box welded off its centre to a moving ball, the ball held by a connect; both moving and
// turning, the weld's target not the build-time pose. Every gradient, the weld's θ among them,
// against central differences.
TEST(EqualityGradients, WeldMatchesCentralDifferences) {
  ModelBuilder builder = ball_held_by_a_connect(1.0);
  BodySpec lower = testing::box_body("lower", {0.1, 0.05, 0.8}, {0.06, 0.03, 0.02}, 0.5);
  lower.linear_velocity = {-0.2, 0.4, 0.1};
  lower.angular_velocity = {1.0, 0.3, -0.6};
  builder.add_body(lower);
  EqualitySpec weld;
  weld.name = "weld";
  weld.type = EqualityType::Weld;
  weld.body_a = "upper";
  weld.body_b = "lower";
  weld.anchor = {0.05, 0.02, 0.9};
  weld.relative = Quat::from_axis_angle(normalized(Vec3{0.2, 1, 0.3}), 0.25);
  weld.time_constant = 0.04;
  weld.damping_ratio = 0.7;
  builder.add_equality(weld);
  const Scene scene = builder.build();
  GradientCheckOptions options;
  options.steps = 60;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  testing::expect_parameter_checked_and_matters(report, "equality/weld/time_constant", 1e-4);
  testing::expect_parameter_checked_and_matters(report, "equality/weld/damping_ratio", 1e-4);
}

// MuJoCo's way of driving a robot by a mocap body: a box welded to a kinematic "hand" that
// moves and turns at its own velocity (BodyType::Kinematic). The box follows the hand, its
// pose held relative to the hand's to the weld's sag under gravity, g (ζτ)² = 1 mm (the
// centripetal load adds ~1e-5 m), and moves with the hand's velocity at its point; and
// every gradient, the hand's x₀ and the weld's θ among them, matches central differences.
ModelBuilder box_welded_to_a_moving_hand(double time_constant) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.gravity = {0, 0, -kGravity};
  builder.solver.formulation = Formulation::Convex;
  BodySpec hand = sphere_body("hand", {0, 0, 1}, 0.05, 1.0);
  hand.type = BodyType::Kinematic;
  hand.mass.reset();
  hand.linear_velocity = {0.2, 0, 0.1};
  hand.angular_velocity = {0, 0, 0.5};
  builder.add_body(hand);
  builder.add_body(testing::box_body("box", {0.3, 0, 1}, {0.05, 0.03, 0.02}, 0.4));
  EqualitySpec grip;
  grip.name = "grip";
  grip.type = EqualityType::Weld;
  grip.body_a = "hand";
  grip.body_b = "box";
  grip.anchor = {0.3, 0, 1};
  grip.time_constant = time_constant;
  builder.add_equality(grip);
  return builder;
}

TEST(EqualityPhysics, BoxWeldedToAKinematicHandFollowsIt) {
  const Scene scene = box_welded_to_a_moving_hand(0.01).build();
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int step = 0; step < 2000; ++step) simulator.step();
  const State& state = simulator.state();
  const int hand = scene.model.body_index("hand"), box = scene.model.body_index("box");
  const auto h = static_cast<std::size_t>(hand), b = static_cast<std::size_t>(box);
  EXPECT_NEAR(norm(state.position[h] - Vec3{0.4, 0, 1.2}), 0.0, 1e-12);  // the hand moved by its own velocity
  const Vec3 held = state.position[h] + state.orientation[h].rotate(Vec3{0.3, 0, 0});
  const double sag = kGravity * 0.01 * 0.01;
  EXPECT_NEAR(state.position[b].z, held.z - sag, 2e-5);
  EXPECT_NEAR(state.position[b].x, held.x, 2e-5);
  EXPECT_NEAR(state.position[b].y, held.y, 2e-5);
  EXPECT_LT(norm(rotation_vector(state.orientation[b] * state.orientation[h].conjugate())), 1e-6);
  const Vec3 carried = state.linear_velocity[h] + cross(state.angular_velocity[h], state.position[b] - state.position[h]);
  EXPECT_LT(norm(state.linear_velocity[b] - carried), 1e-4);
  EXPECT_LT(norm(state.angular_velocity[b] - state.angular_velocity[h]), 1e-4);
}

TEST(EqualityGradients, WeldToAKinematicHandMatchesCentralDifferences) {
  const Scene scene = box_welded_to_a_moving_hand(0.03).build();
  GradientCheckOptions options;
  options.steps = 60;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  testing::expect_parameter_checked_and_matters(report, "equality/grip/time_constant", 1e-4);
}

const char* const kEqualityScene = R"({
  "dt": 0.001, "solver": {"formulation": "convex"},
  "bodies": [
    {"name": "a", "position": [0, 0, 1], "mass": 1, "shapes": [{"type": "sphere", "radius": 0.1}]},
    {"name": "b", "position": [0.5, 0, 1], "mass": 1, "shapes": [{"type": "sphere", "radius": 0.1}]}
  ],
  "equalities": [
    {"name": "pin", "type": "connect", "body_b": "a", "anchor": [0, 0, 1.1], "time_constant": 0.01},
    {"name": "link", "type": "distance", "body_a": "a", "body_b": "b", "anchor_a": [0.1, 0, 1],
     "anchor_b": [0.4, 0, 1], "damping_ratio": 0.5},
    {"name": "glue", "type": "weld", "body_a": "a", "body_b": "b", "anchor": [0.25, 0, 1]}
  ]
})";

TEST(EqualityScene, EqualitiesSectionIsReadIntoTheModelAndTheta) {
  const Scene scene = parse_scene(kEqualityScene);
  ASSERT_EQ(scene.model.equality_count(), 3);
  const Equality& pin = scene.model.equalities[0];
  EXPECT_EQ(pin.type, EqualityType::Connect);
  EXPECT_EQ(pin.body_a, 0);
  EXPECT_EQ(pin.body_b, scene.model.body_index("a"));
  EXPECT_NEAR(pin.anchor_b.z, 0.1, 1e-12);  // in a's frame
  const Equality& link = scene.model.equalities[1];
  EXPECT_EQ(link.type, EqualityType::Distance);
  EXPECT_NEAR(link.length, 0.3, 1e-12);  // the build-time distance
  EXPECT_NEAR(link.anchor_a.x, 0.1, 1e-12);
  EXPECT_NEAR(link.anchor_b.x, -0.1, 1e-12);
  const ParamLayout::Slice& slice =
      scene.model.layout.slices[static_cast<std::size_t>(scene.model.layout.index("equality/pin/time_constant"))];
  EXPECT_EQ(slice.offset, scene.model.layout.equality_time_constant[0]);
  EXPECT_EQ(scene.params.at(slice.offset), 0.01);
  EXPECT_EQ(scene.params.at(scene.model.layout.equality_damping_ratio[1]), 0.5);
  EXPECT_EQ(scene.params.at(scene.model.layout.equality_time_constant[1]), 0.02);  // MuJoCo's default solref
  const Equality& glue = scene.model.equalities[2];
  EXPECT_EQ(glue.type, EqualityType::Weld);
  EXPECT_NEAR(glue.anchor_a.x, 0.25, 1e-12);
  EXPECT_NEAR(glue.anchor_b.x, -0.25, 1e-12);
  EXPECT_NEAR(norm(rotation_vector(glue.relative)), 0.0, 1e-15);  // welded as they are
}

TEST(EqualityScene, BadEqualitiesAreRefusedWithItemAndValue) {
  const auto refusal = [](const std::string& equality, const char* formulation = "convex") {
    return error_of([&] {
      parse_scene(std::string(R"({"solver": {"formulation": ")") + formulation + R"("}, "bodies": [
        {"name": "a", "position": [0, 0, 1], "mass": 1, "shapes": [{"type": "sphere", "radius": 0.1}]}],
        "equalities": [)" + equality + "]}",
                  "scene.json");
    });
  };
  EXPECT_EQ(refusal(R"({"name": "e", "type": "connect", "body_b": "b", "anchor": [0, 0, 1]})"),
            "scene.json: equalities[0]: equality 'e': unknown body_b 'b'");
  EXPECT_EQ(refusal(R"({"name": "e", "type": "distance", "body_b": "a", "anchor_a": [0, 0, 2], "anchor_b": [0, 0, 1],
                        "length": -1})"),
            "scene.json: equalities[0]: equality 'e': length must be positive (a distance row has no direction "
            "at 0), got -1");
  EXPECT_EQ(refusal(R"({"name": "e", "type": "connect", "body_b": "a", "anchor": [0, 0, 1], "time_constant": 0})"),
            "scene.json: equalities[0]: equality 'e': time_constant must be positive, got 0");
  EXPECT_EQ(refusal(R"({"name": "e", "type": "connect", "body_b": "a", "anchor": [0, 0, 1], "damping_ratio": -2})"),
            "scene.json: equalities[0]: equality 'e': damping_ratio must be positive, got -2");
  EXPECT_NE(refusal(R"({"name": "e", "type": "connect", "body_b": "a", "anchor": [0, 0, 1]})", "complementarity")
                .find("equality 'e': equality constraints are soft rows of the convex formulation"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "e", "type": "connect", "body_b": "a", "anchor": [0, 0, 1], "length": 1})")
                .find("equalities[0]"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"name": "e", "type": "weld", "body_b": "a"})").find("missing required key \"anchor\""),
            std::string::npos);
  const std::string extra = refusal(R"({"name": "e", "type": "weld", "body_b": "a", "anchor": [0, 0, 1], "anchor_b": [0, 0, 1]})");
  EXPECT_NE(extra.find("anchor_b"), std::string::npos) << extra;
  EXPECT_NE(extra.find("not used by a weld equality"), std::string::npos) << extra;
  EXPECT_NE(refusal(R"({"name": "e", "type": "hinge", "body_b": "a"})").find("equality type"), std::string::npos);
}

TEST(EqualityScene, ComplementarityAndReducedCoordinatesAreRefusedNamingTheEquality) {
  Scene scene = parse_scene(kEqualityScene);
  EXPECT_NE(error_of([&] { set_formulation(scene, Formulation::Complementarity); }).find("equality 'pin'"),
            std::string::npos);
  Model reduced = scene.model;
  reduced.solver.coordinates = Coordinates::Reduced;
  State out;
  Workspace workspace;
  EXPECT_NE(error_of([&] { step(reduced, scene.params, scene.state, {}, out, workspace); }).find("equality 'pin'"),
            std::string::npos);
}

}  // namespace
}  // namespace diffphys
