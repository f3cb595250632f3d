// tests/arm_reach_test.cpp — the arm experiments of Degrave et al. 2019 §3.2
// (src/experiments/arm_reach*.cpp): the end effector's VJP and a closed-loop episode's weight
// gradient against central differences, the open-loop shortcut equal to the per-step policy,
// and both `--quick` variants run through the command line, asserting the progress they state.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_helpers.hpp"
#include "experiments/arm_model.hpp"

namespace diffphys::experiments {
namespace {

// A network whose output layer is not zero, so the servos move from the first step.
Mlp small_network(int inputs, std::uint64_t seed) {
  MlpSpec spec{inputs, {6, 5}, 4};
  spec.hidden_activation = Activation::Tanh;
  spec.output_init_scale = 0.3;
  spec.random_hidden_biases = true;
  return Mlp(spec, seed);
}

TEST(ArmReach, TheArmIsTheModelTheDocumentDescribes) {
  const ArmModel arm = build_degrave_arm();
  const Model& model = arm.scene.model;
  EXPECT_EQ(model.actuator_count(), 4);
  EXPECT_DOUBLE_EQ(model.dt, 0.01);
  double moving_mass = 0.0;
  for (int b = 0; b < model.body_count(); ++b)
    if (model.bodies[static_cast<std::size_t>(b)].type == BodyType::Dynamic)
      moving_mass += arm.scene.params.at(model.layout.body_mass[static_cast<std::size_t>(b)]);
  EXPECT_DOUBLE_EQ(moving_mass, 10.0);  // + the 22 kg static pedestal = 32 kg
  for (int a = 0; a < 4; ++a) {
    EXPECT_DOUBLE_EQ(arm.scene.params.at(model.layout.actuator_gain[static_cast<std::size_t>(a)]), 30.0);
    EXPECT_DOUBLE_EQ(arm.scene.params.at(model.layout.actuator_max_torque[static_cast<std::size_t>(a)]), 30.0);
    EXPECT_NEAR(arm.scene.params.at(model.layout.actuator_max_velocity[static_cast<std::size_t>(a)]), 45.0 * M_PI / 180, 1e-15);
  }
  const Vec3 tip = arm.end_effector(arm.scene.state);
  EXPECT_NEAR(tip.x, 0.0, 1e-12);
  EXPECT_NEAR(tip.z, 1.0, 1e-12);  // 1 m long, standing straight up
}

TEST(ArmReach, EndEffectorVjpMatchesCentralDifferencesOnTheManifold) {
  const ArmModel arm = build_degrave_arm();
  State state = arm.scene.state;
  const auto b = static_cast<std::size_t>(arm.forearm);
  state.orientation[b] = Quat::from_axis_angle(normalized(Vec3{1, 2, 0.5}), 0.7);
  const Vec3 weighting{0.3, -1.1, 0.6};
  std::vector<double> gradient(static_cast<std::size_t>(kStateTangentPerBody * arm.scene.model.body_count()), 0.0);
  arm.end_effector_vjp(state, weighting, gradient);
  const double h = 1e-6;
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 delta;
    delta[axis] = h;
    State plus = state, minus = state;
    plus.orientation[b] = Quat::from_rotation_vector(delta) * state.orientation[b];
    minus.orientation[b] = Quat::from_rotation_vector(-delta) * state.orientation[b];
    const double numeric = (dot(weighting, arm.end_effector(plus)) - dot(weighting, arm.end_effector(minus))) / (2 * h);
    EXPECT_NEAR(gradient[static_cast<std::size_t>(kStateTangentPerBody * arm.forearm + 3 + axis)], numeric, 1e-8);
    EXPECT_DOUBLE_EQ(gradient[static_cast<std::size_t>(kStateTangentPerBody * arm.forearm + axis)], weighting[axis]);
  }
}

TEST(ArmReach, ClosedLoopEpisodeWeightGradientMatchesCentralDifferences) {
  const ArmModel arm = build_degrave_arm();
  const Mlp network = small_network(1, 4);
  std::vector<double> weights(network.weights().begin(), network.weights().end());
  const Vec3 target{0.5, 0.5, 0.5};
  const int steps = 60;
  const RolloutOptions options;
  std::vector<double> gradient(weights.size());
  run_arm_episode(arm, network, weights, ArmInput::DistanceToTarget, target, steps, options, gradient);
  const double h = 1e-6;
  int significant = 0;
  for (std::size_t k = 0; k < weights.size(); k += 3) {  // every third weight: ~30 pairs of rollouts
    std::vector<double> plus = weights, minus = weights;
    plus[k] += h;
    minus[k] -= h;
    const double numeric =
        (run_arm_episode(arm, network, plus, ArmInput::DistanceToTarget, target, steps, options, {}).average_distance -
         run_arm_episode(arm, network, minus, ArmInput::DistanceToTarget, target, steps, options, {}).average_distance) /
        (2 * h);
    EXPECT_NEAR(gradient[k], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << "weight " << k;
    if (std::abs(numeric) > 1e-4) ++significant;
  }
  EXPECT_GT(significant, 10);
}

TEST(ArmReach, OpenLoopShortcutEqualsThePerStepPolicy) {
  const ArmModel arm = build_degrave_arm();
  const Mlp network = small_network(3, 9);
  const Vec3 target{-0.3, 0.4, 0.6};
  const RolloutOptions options;
  std::vector<double> per_step(static_cast<std::size_t>(network.parameter_count()));
  std::vector<double> once(per_step.size());
  const ArmEpisode a =
      run_arm_episode(arm, network, network.weights(), ArmInput::TargetPosition, target, 120, options, per_step);
  const ArmEpisode b = run_arm_open_loop_episode(arm, network, network.weights(), target, 120, options, once);
  EXPECT_EQ(a.average_distance, b.average_distance);
  EXPECT_EQ(a.final_distance, b.final_distance);
  double largest = 0.0;
  for (const double g : per_step) largest = std::max(largest, std::abs(g));
  EXPECT_GT(largest, 1e-3);
  for (std::size_t k = 0; k < per_step.size(); ++k) EXPECT_NEAR(per_step[k], once[k], 1e-12 * largest) << k;
}

// The command line end to end; it also writes the loss curve and the trained policy's trajectory.
nlohmann::json run_quick(const std::string& name) {
  const auto folder = testing::fresh_test_folder(name);
  const nlohmann::json figures = testing::run_quick_experiment_command(name, folder);
  EXPECT_TRUE(std::filesystem::exists(folder / name / "loss.csv"));
  EXPECT_TRUE(std::filesystem::exists(folder / name / "trajectory.json"));
  return figures;
}

TEST(ArmReach, QuickVariantBringsTheArmTenTimesCloser) {
  const nlohmann::json figures = run_quick("arm-reach");
  EXPECT_EQ(figures["parameters"], 17284);
  EXPECT_NEAR(figures["initial_final_distance_m"].get<double>(), std::sqrt(0.75), 1e-9);  // from (0, 0, 1)
  EXPECT_LT(figures["trained_final_distance_m"].get<double>() * 10, figures["initial_final_distance_m"].get<double>());
  EXPECT_TRUE(figures["success"].get<bool>());
}

TEST(ArmReachRandom, QuickVariantCutsTheHeldOutDistanceByAThird) {
  const nlohmann::json figures = run_quick("arm-reach-random");
  EXPECT_LT(figures["held_out_average_distance_after_m"].get<double>() * 1.5,
            figures["held_out_average_distance_before_m"].get<double>());
  EXPECT_TRUE(figures["success"].get<bool>());
}

// SHAC with a state-feedback policy (issue #17 item 2): the same held-out targets, the
// distance averaged over 8 s at least halved (a policy that ignores its goal cannot: the
// targets are spread over 0.4 m around a 0.69 m start), the run deterministic.
TEST(ArmReachRandom, ShacQuickVariantHalvesTheHeldOutDistance) {
  const auto folder = testing::fresh_test_folder("arm-reach-random-shac");
  const nlohmann::json figures = testing::run_quick_experiment_command("arm-reach-random", folder, " --variant shac");
  EXPECT_TRUE(std::filesystem::exists(folder / "arm-reach-random-shac" / "loss.csv"));
  EXPECT_TRUE(std::filesystem::exists(folder / "arm-reach-random-shac" / "trajectory.json"));
  EXPECT_EQ(figures["variant"], "shac quick");
  EXPECT_NEAR(figures["held_out_average_distance_before_m"].get<double>(), 0.685, 0.001);  // at rest, straight up
  EXPECT_LT(figures["held_out_average_distance_after_m"].get<double>() * 2,
            figures["held_out_average_distance_before_m"].get<double>());
  EXPECT_TRUE(figures["success"].get<bool>());
}

}  // namespace
}  // namespace diffphys::experiments
