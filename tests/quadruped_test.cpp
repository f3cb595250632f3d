// tests/quadruped_test.cpp — the quadruped we invented for Degrave et al. 2019 §3.3 before
// their code was read (`quadruped-invented`, src/experiments/quadruped_model.cpp): the built
// model's masses, servos and contact shapes; the robot standing still under the zero policy
// with the ground carrying exactly its weight; the closed-loop episode's weight gradient (through contacts) against central differences; and
// the `--quick` variant run through the command line, asserting the progress it states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/simulator.hpp"
#include "cli_test_helpers.hpp"
#include "quadruped_test_support.hpp"
#include "experiments/quadruped_model.hpp"

namespace diffphys::experiments {
namespace {

double body_mass(const Scene& scene, int body) {
  return scene.params.at(scene.model.layout.body_mass[static_cast<std::size_t>(body)]);
}

TEST(Quadruped, MassIs28Point7KgWithThreeQuartersInTheTorso) {
  const QuadrupedModel robot = build_quadruped();
  const Model& model = robot.scene.model;
  double total = 0.0;
  for (int b = 0; b < model.body_count(); ++b)
    if (model.bodies[static_cast<std::size_t>(b)].type == BodyType::Dynamic) total += body_mass(robot.scene, b);
  EXPECT_NEAR(total, 28.7, 1e-12);
  EXPECT_NEAR(body_mass(robot.scene, robot.torso) / total, 0.75, 1e-12);
  EXPECT_EQ(model.body_count(), 1 + 1 + 8);  // world, torso, 2 segments per leg
}

TEST(Quadruped, EightServosLimitedToFourNewtonMetresOnLateralHinges) {
  const QuadrupedModel robot = build_quadruped();
  const Model& model = robot.scene.model;
  EXPECT_DOUBLE_EQ(model.dt, 0.005);  // half §3.3's 0.01 s: the step at which gaits hold (EXPERIMENTS.md)
  ASSERT_EQ(model.actuator_count(), QuadrupedModel::kServos);
  for (int a = 0; a < model.actuator_count(); ++a) {
    const Actuator& servo = model.actuators[static_cast<std::size_t>(a)];
    EXPECT_EQ(servo.type, ActuatorType::Servo);
    EXPECT_DOUBLE_EQ(robot.scene.params.at(model.layout.actuator_max_torque[static_cast<std::size_t>(a)]), 4.0);
    const Joint& joint = model.joints[static_cast<std::size_t>(servo.joint)];
    EXPECT_EQ(joint.type, JointType::Revolute);
    // The hinge axis is the world's y axis at rest (the torso starts unrotated).
    EXPECT_NEAR(std::abs(joint.axis_parent.y), 1.0, 1e-12) << servo.name;
    // Shoulders (even) hang from the torso with stops at ±0.35 rad; elbows from their leg's
    // upper segment, bending backwards only (stops at −0.6 and 0 rad).
    const QuadrupedDesign design;
    EXPECT_TRUE(joint.has_limits) << servo.name;
    if (a % 2 == 0) {
      EXPECT_EQ(joint.parent, robot.torso) << servo.name;
      EXPECT_DOUBLE_EQ(joint.lower_limit, -design.shoulder_limit) << servo.name;
      EXPECT_DOUBLE_EQ(joint.upper_limit, design.shoulder_limit) << servo.name;
    } else {
      EXPECT_EQ(joint.parent, model.joints[static_cast<std::size_t>(a - 1)].child) << servo.name;
      EXPECT_DOUBLE_EQ(joint.lower_limit, design.elbow_lower) << servo.name;
      EXPECT_DOUBLE_EQ(joint.upper_limit, design.elbow_upper) << servo.name;
    }
    EXPECT_DOUBLE_EQ(robot.scene.params.at(model.layout.actuator_gain[static_cast<std::size_t>(a)]), design.servo_gain);
  }
  // The torso touches the ground through its 4 spheres only (its cuboid never collides).
  const Body& torso = model.bodies[static_cast<std::size_t>(robot.torso)];
  int spheres = 0;
  for (int s = torso.first_shape; s < torso.first_shape + torso.shape_count; ++s) {
    const Shape& shape = model.shapes[static_cast<std::size_t>(s)];
    if (shape.type == ShapeType::Sphere && shape.collision_mask != 0) ++spheres;
    if (shape.type == ShapeType::Box) {
      EXPECT_EQ(shape.collision_mask, 0u);
    }
  }
  EXPECT_EQ(spheres, 4);
}

TEST(Quadruped, NetworkHasThePapersShapeAndStartsAtZero) {
  const Mlp network(quadruped_network_spec(), 3);
  // 2·128+128 + 128·128+128 + (128+2)·8+8: the paper quotes 17,952 (docs/EXPERIMENTS.md (quadruped-invented)).
  EXPECT_EQ(network.parameter_count(), 17944);
  MlpTape tape;
  double output[8];
  const double input[2] = {0.3, -0.95};
  network.forward(network.weights(), input, tape, output);
  for (const double u : output) EXPECT_EQ(u, 0.0);
}

// The target map y = R tanh(u − ū) (quadruped_model.hpp): the targets stay within ±R, repeat
// with the clock's 400-step period, have a mean over the period near 0 (exactly 0 to first
// order in u), and the zero network gives zero targets.
TEST(Quadruped, ServoTargetsAreBoundedPeriodicAndCentred) {
  MlpSpec spec = quadruped_network_spec();
  spec.output_init_scale = 3.0;  // large outputs, so that tanh saturates
  const Mlp network(spec, 5);
  const double dt = build_quadruped().scene.model.dt;
  const int period = clock_period_steps(dt);
  EXPECT_EQ(period, 400);  // 3 periods of the 1.5 Hz clock at 0.005 s
  const int steps = 2 * period + 7;
  const std::vector<double> targets = quadruped_servo_targets(build_quadruped(), network, network.weights(), steps, dt);
  constexpr int n = QuadrupedModel::kServos;
  double largest = 0.0;
  for (int i = 0; i < n; ++i) {
    double mean = 0.0;
    for (int t = 0; t < steps; ++t) {
      const double y = targets[static_cast<std::size_t>(t * n + i)];
      EXPECT_LE(std::abs(y), servo_range(i));
      largest = std::max(largest, std::abs(y) / servo_range(i));
      if (t + period < steps) {
        EXPECT_EQ(y, targets[static_cast<std::size_t>((t + period) * n + i)]);
      }
      if (t < period) mean += y / period;
    }
    EXPECT_LT(std::abs(mean), 0.5 * servo_range(i)) << i;
  }
  EXPECT_GT(largest, 0.5);  // the map is exercised well into its curve
  const Mlp zero(quadruped_network_spec(), 5);
  for (const double y : quadruped_servo_targets(build_quadruped(), zero, zero.weights(), steps, dt)) EXPECT_EQ(y, 0.0);
}

// Under the zero policy the servos hold the rest pose: after settling, the robot stands still
// on its four feet, the torso where the geometry puts it, and the ground carries its weight:
// Σ normal impulses per step = m g dt.
TEST(Quadruped, StandsStillUnderTheZeroPolicy) {
  const QuadrupedModel robot = build_quadruped();
  const Model& model = robot.scene.model;
  const Mlp network(quadruped_network_spec(), 1);
  const int steps = static_cast<int>(std::lround(3.0 / model.dt));  // 3 s
  const QuadrupedEpisode episode =
      run_quadruped_episode(robot, network, network.weights(), steps, RolloutOptions{}, {});
  EXPECT_TRUE(episode.finite);
  EXPECT_LT(std::abs(episode.average_forward_velocity), 1e-3);
  EXPECT_LT(std::abs(episode.distance), 1e-3);
  const double rest_height = robot.scene.state.position[static_cast<std::size_t>(robot.torso)].z;
  EXPECT_NEAR(rest_height, 0.18, 1e-12);  // two 0.08 m segments plus the 0.02 m foot radius
  EXPECT_NEAR(episode.lowest_torso_height, rest_height, 2e-3);  // no sinking: within 2 mm
  EXPECT_NEAR(episode.final_torso_height, rest_height, 2e-3);

  // Step on from the settled state with the zero controls and weigh the robot.
  State state = robot.scene.state, next;
  Workspace workspace;
  const std::vector<double> zero(QuadrupedModel::kServos, 0.0);
  for (int t = 0; t < steps; ++t) {
    step(model, robot.scene.params, state, zero, next, workspace);
    std::swap(state, next);
  }
  double normal_impulse = 0.0;
  int feet = 0;
  for (const Contact& contact : workspace.contacts()) {
    normal_impulse += contact.normal_impulse;
    if (contact.normal_impulse > 0.0) ++feet;
  }
  EXPECT_EQ(feet, 4);
  EXPECT_NEAR(normal_impulse, 28.7 * 9.81 * model.dt, 1e-3 * 28.7 * 9.81 * model.dt);
  for (int b = 1; b < model.body_count(); ++b) {
    EXPECT_LT(norm(state.linear_velocity[static_cast<std::size_t>(b)]), 1e-3) << b;
    EXPECT_LT(norm(state.angular_velocity[static_cast<std::size_t>(b)]), 1e-2) << b;
  }
}

// dL/dW of L = −(average forward velocity) through a 40-step closed-loop episode in which the
// legs move and touch the ground, against central differences, for a spread of weights of
// every layer. The network's output layer is not zero here, so the servos move from step 0.
TEST(Quadruped, EpisodeWeightGradientMatchesCentralDifferences) {
  testing::expect_episode_weight_gradient_matches_central_differences(build_quadruped());
}

TEST(Quadruped, RefusesANetworkOfTheWrongShape) {
  const QuadrupedModel robot = build_quadruped();
  const Mlp network(MlpSpec{3, {4}, 8}, 1);
  try {
    run_quadruped_episode(robot, network, network.weights(), 10, RolloutOptions{}, {});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("2 clock inputs to 8 servo targets, not 3 to 8"), std::string::npos)
        << error.what();
  }
}

// Forward motion learned from the gradient: the target map cannot lean the robot (its targets
// swing about 0), so the speed comes from a learned leg rhythm (docs/EXPERIMENTS.md, quadruped-invented).
TEST(Quadruped, QuickVariantLearnsForwardMotionFromStandingStill) {
  const auto folder = testing::fresh_test_folder("quadruped-invented");
  const nlohmann::json figures = testing::run_quick_experiment_command("quadruped-invented", folder);
  EXPECT_TRUE(std::filesystem::exists(folder / "quadruped-invented" / "loss.csv"));
  EXPECT_TRUE(std::filesystem::exists(folder / "quadruped-invented" / "trajectory.json"));
  EXPECT_EQ(figures["parameters"], 17944);
  // The first evaluation is the zero policy: standing still.
  EXPECT_LT(std::abs(figures["initial_average_forward_velocity_m_s"].get<double>()), 1e-3);
  EXPECT_GE(figures["best_average_forward_velocity_m_s"].get<double>(),
            figures["required_average_forward_velocity_m_s"].get<double>());
  // The recorded best gait, replayed open loop, is the one the optimisation measured.
  EXPECT_NEAR(figures["best_replayed_average_forward_velocity_m_s"].get<double>(),
              figures["best_average_forward_velocity_m_s"].get<double>(), 1e-9);
  EXPECT_TRUE(figures["all_states_finite"].get<bool>());
  EXPECT_GT(figures["lowest_torso_height_m"].get<double>(), 0.045);
  EXPECT_TRUE(figures["success"].get<bool>());
}

}  // namespace
}  // namespace diffphys::experiments
