// tests/experiments_test.cpp — the --quick variants of the papers' experiments
// (src/experiments/), run as `diffphys experiment NAME --quick` would run them, asserting
// progress that a broken gradient cannot fake: the ball reaches its target from rest, the
// chain's inferred mass reaches the true one and the MSE collapses, analytic gradients match
// finite differences and beat them in time; and the files each run promises are written.
#include "experiments/experiments.hpp"

#include "cli_test_helpers.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace diffphys::experiments {
namespace {

nlohmann::json run_quick(std::string_view name, const std::filesystem::path& out_dir) {
  for (const ExperimentEntry& entry : registry()) {
    if (entry.name != name) continue;
    ExperimentOptions options;
    options.quick = true;
    options.out_dir = out_dir.string();
    const ExperimentResult result = entry.run(options);
    nlohmann::json figures = nlohmann::json::parse(result.json);
    figures["success"] = result.success;
    return figures;
  }
  ADD_FAILURE() << "no experiment " << name;
  return {};
}

std::filesystem::path temporary_folder(std::string_view name) {
  return testing::fresh_test_folder("experiments_" + std::string(name));
}

int trajectory_frames(const std::filesystem::path& path) {
  std::ifstream file(path);
  const nlohmann::json trajectory = nlohmann::json::parse(file);
  return static_cast<int>(trajectory.at("frames").size());
}

TEST(Experiments, RegistryNamesAreUnique) {
  const auto entries = registry();
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (std::size_t j = i + 1; j < entries.size(); ++j) EXPECT_NE(entries[i].name, entries[j].name);
}

TEST(Experiments, BallThrowQuickReachesTheTargetFromRestAndFromOtherStarts) {
  const auto folder = temporary_folder("ball_throw");
  const nlohmann::json figures = run_quick("ball-throw", folder);
  ASSERT_TRUE(figures["success"].get<bool>()) << figures.dump();
  const auto& lm = figures["levenberg_marquardt"];
  EXPECT_TRUE(lm["reached_target"].get<bool>());
  EXPECT_LT(lm["position_error_m"].get<double>(), 0.01);
  EXPECT_LT(lm["velocity_error_m_s"].get<double>(), 0.01);
  EXPECT_LT(0.5 * lm["angular_velocity_error_rad_s"].get<double>(), 0.01);  // r|ω| in m/s
  EXPECT_LE(lm["iterations"].get<int>(), 88);  // the paper's gradient descent
  // Dropped from rest, the ball lies at (0, 0) after 5 s: ½·10² = 50.
  EXPECT_NEAR(figures["initial_loss"].get<double>(), 50.0, 1e-6);
  // The ball can only end at rest with the angular momentum about its lowest point at 0 from
  // the start (every contact force conserves it; ContactPoint tests): r ω₀,y = −5/2 v₀,x.
  const double vx = lm["initial_linear_velocity"][0].get<double>(), wy = lm["initial_angular_velocity"][1].get<double>();
  EXPECT_GT(vx, 1.0);
  EXPECT_NEAR(0.5 * wy, -2.5 * vx, 0.01 * vx);
  // The method's one setting over a factor of 2, and five starts (rest and four random throws).
  EXPECT_GE(figures["damping_sweep"]["reached"].get<int>(), 4);
  EXPECT_EQ(figures["damping_sweep"]["of"].get<int>(), 5);
  EXPECT_GE(figures["start_sweep"]["reached"].get<int>(), 3);
  EXPECT_EQ(figures["start_sweep"]["of"].get<int>(), 5);
  std::set<std::vector<double>> starts;
  for (const auto& run : figures["start_sweep"]["runs"])
    if (run["reached_target"].get<bool>()) starts.insert(run["start"].get<std::vector<double>>());
  EXPECT_GE(starts.size(), 3u);
  EXPECT_EQ(trajectory_frames(folder / "ball-throw" / "trajectory.json"), 5001);  // 5 s at 1 ms
  for (const char* file : {"levenberg_marquardt.csv", "damping_sweep.csv", "start_sweep.csv", "adam_paper_recipe.csv",
                           "lbfgs.csv", "scene.json"})
    EXPECT_TRUE(std::filesystem::exists(folder / "ball-throw" / file)) << file;
}

TEST(Experiments, ChainMassQuickInfersTheMassFromEveryStart) {
  const auto folder = temporary_folder("chain_mass");
  const nlohmann::json figures = run_quick("chain-mass", folder);
  ASSERT_TRUE(figures["success"].get<bool>()) << figures.dump();
  // Four starts (0.5, 2.75 and 5 kg, one from U(0, 1) kg), each optimiser from every one.
  ASSERT_EQ(figures["starts_kg"].size(), 4u);
  for (const char* method : {"gradient_descent", "lbfgs_log_mass"}) {
    SCOPED_TRACE(method);
    const auto& summary = figures["methods"][method];
    EXPECT_EQ(summary["failures"].get<int>(), 0);
    ASSERT_EQ(summary["runs"].size(), 4u);
    for (const auto& run : summary["runs"]) {
      EXPECT_NEAR(run["final_mass_kg"].get<double>(), 7.0, 0.07) << run.dump();
      EXPECT_GE(run["iterations_to_within_1_percent"].get<int>(), 1) << run.dump();
      EXPECT_LT(run["final_mse"].get<double>(), 1e-3 * run["initial_mse"].get<double>()) << run.dump();
    }
  }
  // The paper's clipped steps are at most 1 kg: from 0.5 kg at least 6 iterations.
  EXPECT_GE(figures["methods"]["gradient_descent"]["runs"][0]["iterations_to_within_1_percent"].get<int>(), 6);
  EXPECT_EQ(trajectory_frames(folder / "chain-mass" / "trajectory_learned.json"), 301);
  EXPECT_TRUE(std::filesystem::exists(folder / "chain-mass" / "mass_and_mse.csv"));
}

TEST(Experiments, ChainMassScalingQuickAnalyticMatchesAndBeatsFiniteDifferences) {
  const auto folder = temporary_folder("chain_mass_scaling");
  const nlohmann::json figures = run_quick("chain-mass-scaling", folder);
  ASSERT_TRUE(figures["success"].get<bool>()) << figures.dump();
  const auto& rows = figures["rows"];
  ASSERT_EQ(rows.size(), 3u);
  // One and two links: no impact moves under the finite-difference step; the gradients
  // agree to finite-difference accuracy.
  EXPECT_LT(rows[0]["worst_relative_gradient_difference"].get<double>(), 1e-5);
  EXPECT_LT(rows[1]["worst_relative_gradient_difference"].get<double>(), 1e-5);
  // Four masses: finite differences need 8 rollouts per update against one forward and one
  // backward pass.
  EXPECT_LT(rows[2]["analytic_cpu_s"].get<double>(), rows[2]["finite_differences_cpu_s"].get<double>());
  EXPECT_TRUE(std::filesystem::exists(folder / "chain-mass-scaling" / "timing.csv"));
}

}  // namespace
}  // namespace diffphys::experiments
