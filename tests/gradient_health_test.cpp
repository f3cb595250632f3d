// tests/gradient_health_test.cpp — the gradient health report (diffphys/gradient_health.hpp):
// the growth, verdict, onset and amplifying stage of known sensitivity profiles; the terminal
// sensitivity of a free body against its closed-form Jacobian; probes restricted to a joint's
// tangent (no 1/h at the last step); the backward pass's stage gains; and the command line on
// rigid, soft and coupled scenes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_helpers.hpp"
#include "diffphys/gradient_health.hpp"
#include "diffphys/model_builder.hpp"
#include "test_paths.hpp"

namespace diffphys {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

TerminalSensitivity profile(int steps, double growth_per_step_back) {
  TerminalSensitivity terminal;
  terminal.values.resize(static_cast<std::size_t>(steps) + 1);
  for (int t = 0; t <= steps; ++t) terminal.values[static_cast<std::size_t>(t)] = std::pow(growth_per_step_back, steps - t);
  return terminal;
}

TEST(GradientHealth, GeometricGrowthIsExplodingFromWhereItPassesTenfold) {
  TerminalSensitivity terminal = profile(1000, 1.02);
  // Cumulative stage gains: integration halves the adjoint, the velocity solve brings it to
  // 1.5× the step's input, the rest keeps it: the solve raised it, by 1.5.
  terminal.probe_health.stage_gain.assign(1000, {0.5, 1.5, 1.5});
  const GradientHealthReport report = analyze_gradient_health(GradientHealth{}, terminal, 0.01);
  EXPECT_EQ(report.verdict, "exploding");
  EXPECT_NEAR(report.growth_per_step, 1.02, 1e-12);
  EXPECT_NEAR(report.growth_per_second, std::pow(1.02, 100), 1e-6 * std::pow(1.02, 100));
  EXPECT_NEAR(report.total_growth, std::pow(1.02, 1000), 1e-6 * std::pow(1.02, 1000));
  // 1.02^k ≥ 10 from k = 117 steps back: t = 883.
  EXPECT_EQ(report.onset_step, 883);
  EXPECT_EQ(report.onset_stage, "velocity solve");
  EXPECT_NEAR(report.onset_stage_gain, 1.5, 1e-12);
  EXPECT_NEAR(report.largest_step_gain, 1.02, 1e-12);
}

// One step multiplying the sensitivity by 1000 (an impact) is reported as that jump. A stage
// that shrinks the velocity adjoint while the positions' adjoint passes around it (a resting
// stack: the step keeps the adjoint's size) amplifies nothing.
TEST(GradientHealth, AJumpIsReportedAsOneStepAndShrinkingStagesAreNotAmplifiers) {
  TerminalSensitivity terminal = profile(100, 1.0);
  for (int t = 0; t <= 50; ++t) terminal.values[static_cast<std::size_t>(t)] = 1000.0;
  terminal.probe_health.stage_gain.assign(100, {0.001, 0.0003, 1.0});
  const GradientHealthReport report = analyze_gradient_health(GradientHealth{}, terminal, 0.01);
  EXPECT_EQ(report.largest_step, 50);
  EXPECT_NEAR(report.largest_step_gain, 1000.0, 1e-9);
  EXPECT_EQ(report.onset_step, 50);
  EXPECT_EQ(report.onset_stage.rfind("none", 0), 0u) << report.onset_stage;
  std::ostringstream text;
  print_gradient_health(text, report, GradientHealth{}, terminal);
  EXPECT_NE(text.str().find("largest one-step amplification: x1000 at step 50"), std::string::npos) << text.str();
}

TEST(GradientHealth, DecayIsVanishingAndFlatIsStable) {
  const GradientHealthReport vanishing = analyze_gradient_health(GradientHealth{}, profile(1000, 0.98), 0.01);
  EXPECT_EQ(vanishing.verdict, "vanishing");
  EXPECT_NEAR(vanishing.smallest, std::pow(0.98, 1000), 1e-12);
  EXPECT_EQ(vanishing.onset_step, -1);
  // A tenfold rise over 10 s is not an explosion.
  const GradientHealthReport stable = analyze_gradient_health(GradientHealth{}, profile(1000, std::pow(10.0, 1e-3)), 0.01);
  EXPECT_EQ(stable.verdict, "stable");
  EXPECT_NEAR(stable.growth_per_second, std::pow(10.0, 0.1), 1e-9);
}

TEST(GradientHealth, NonFiniteIsReportedWithItsStepAndStage) {
  TerminalSensitivity terminal = profile(100, 1.0);
  terminal.values[40] = NAN;
  EXPECT_EQ(analyze_gradient_health(GradientHealth{}, terminal, 0.01).verdict, "non-finite");
  GradientHealth health;
  health.first_non_finite_step = 57;
  health.first_non_finite_stage = "LCP";
  const GradientHealthReport report = analyze_gradient_health(health, profile(100, 1.0), 0.01);
  EXPECT_EQ(report.verdict, "non-finite");
  EXPECT_EQ(report.first_non_finite_step, 57);
  std::ostringstream text;
  print_gradient_health(text, report, health, profile(100, 1.0));
  EXPECT_NE(text.str().find("first NaN/Inf at step 57, stage: LCP"), std::string::npos) << text.str();
}

// A sphere coasting in zero gravity: x_T = x_t + (T − t)h v for position and rotation, so
// ∂x_T/∂x_t is I with τ = (T − t)h coupling each velocity to its position, whose largest
// singular value is (τ + √(τ² + 4))/2. Random probes give a lower bound of it, and with 64 of
// them in 12 dimensions one within a few percent.
TEST(GradientHealth, FreeBodySensitivityMatchesItsJacobiansNorm) {
  ModelBuilder builder;
  builder.dt = 0.01;
  builder.gravity = {0, 0, 0};
  BodySpec ball;
  ball.name = "ball";
  ball.linear_velocity = {1, 0, 0};
  ball.angular_velocity = {0, 0, 2};
  ShapeSpec sphere;
  sphere.radius = 0.1;
  ball.shapes.push_back(sphere);
  builder.add_body(ball);
  const Scene scene = builder.build();
  const int steps = 200;
  const World world("ball", "<test>", scene, std::nullopt);
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), {}, steps);
  const TerminalSensitivity terminal = terminal_sensitivity(world, params, rollout, 64);
  for (const int t : {0, 100, 150, 199, 200}) {
    const double tau = (steps - t) * builder.dt;
    const double largest = (tau + std::sqrt(tau * tau + 4)) / 2;
    EXPECT_LE(terminal.values[static_cast<std::size_t>(t)], largest * (1 + 1e-9)) << "t " << t;
    EXPECT_GE(terminal.values[static_cast<std::size_t>(t)], 0.9 * largest) << "t " << t;
  }
  // Integration is the only stage that moves it: the solve (no rows) passes v̄ through.
  ASSERT_EQ(terminal.probe_health.stage_gain.size(), static_cast<std::size_t>(steps));
  for (const auto& gain : terminal.probe_health.stage_gain) EXPECT_DOUBLE_EQ(gain[0], gain[1]);
}

// A pendulum's final state restricted to its hinge's tangent: the step before it has no 1/h
// spike. A cotangent off the manifold would read the projection's Δq/h as a sensitivity.
TEST(GradientHealth, ProbesStayOnTheJointManifold) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  BodySpec bob;
  bob.name = "bob";
  bob.position = {0.5, 0, 1};
  bob.mass = 1.0;
  bob.inertia = Vec3{0.01, 0.01, 0.01};
  ShapeSpec sphere;
  sphere.radius = 0.05;
  bob.shapes.push_back(sphere);
  builder.add_body(bob);
  JointSpec hinge;
  hinge.name = "hinge";
  hinge.child = "bob";
  hinge.anchor = {0, 0, 1};
  hinge.axis = {0, 1, 0};
  builder.add_joint(hinge);
  const Scene scene = builder.build();
  const int steps = 300;
  const World world("pendulum", "<test>", scene, std::nullopt);
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), {}, steps);
  const TerminalSensitivity terminal = terminal_sensitivity(world, params, rollout);
  EXPECT_NEAR(terminal.values[steps], 1.0, 1e-12);
  // O(1) remains — the start- and end-of-step joint directions differ by O(hω), over h — where
  // an unrestricted probe reads ~1/h (787 on examples/scenes/pendulum.json at h = 1 ms).
  EXPECT_LT(terminal.values[steps - 1], 20.0);
  const GradientHealthReport report = analyze_gradient_health(GradientHealth{}, terminal, builder.dt);
  EXPECT_EQ(report.verdict, "stable");
  EXPECT_LT(report.total_growth, 10.0);
}

TEST(GradientHealth, CommandReportsTheCradleExplodingAndWritesEveryStep) {
  const auto folder = testing::fresh_test_folder("gradient_health");
  const std::string scene = std::string(test_paths::source_dir()) + "/examples/scenes/newtons_cradle.json";
  const auto csv = folder / "health.csv";
  const auto output = folder / "stdout.txt";
  const std::string command = std::string(test_paths::cli_program()) + " gradcheck " + scene +
                              " --health --steps 2000 --health-csv " + csv.string() + " > " + output.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << "see " << output;
  const std::string text = read_text(output);
  EXPECT_NE(text.find("gradient health over 2000 steps (1 s): exploding"), std::string::npos) << text;
  EXPECT_NE(text.find("exploding from step"), std::string::npos) << text;
  std::ifstream rows(csv);
  int lines = 0;
  for (std::string line; std::getline(rows, line);) ++lines;
  EXPECT_EQ(lines, 2001 + 1);  // header and steps 0…2000
}

// Any world: a soft scene and a rigid + soft one, through WorldRollout (s_t relative to each
// probe's own |x̄_T|, so s_T = 1 whatever the backward pass masks).
TEST(GradientHealth, CommandReportsSoftAndCoupledScenes) {
  const auto folder = testing::fresh_test_folder("gradient_health_soft");
  for (const std::string name : {"hanging_beam", "cloth_on_pendulum"}) {
    const std::string scene = std::string(test_paths::source_dir()) + "/examples/soft/" + name + ".json";
    const auto output = folder / (name + ".txt");
    const auto csv = folder / (name + ".csv");
    const std::string command = std::string(test_paths::cli_program()) + " gradcheck " + scene +
                                " --health --steps 20 --health-csv " + csv.string() + " > " + output.string() + " 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << "see " << output;
    const std::string text = read_text(output);
    EXPECT_NE(text.find(name == "hanging_beam" ? "(soft)" : "(rigid + soft)"), std::string::npos) << text;
    EXPECT_NE(text.find("gradient health over 20 steps"), std::string::npos) << text;
    std::ifstream rows(csv);
    std::string line, last;
    int lines = 0;
    while (std::getline(rows, line)) {
      ++lines;
      last = line;
    }
    EXPECT_EQ(lines, 22);  // header and steps 0…20
    EXPECT_EQ(last.rfind("20,1,", 0), 0u) << last;  // s_T = 1
  }
}

}  // namespace
}  // namespace diffphys
