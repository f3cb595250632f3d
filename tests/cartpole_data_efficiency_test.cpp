// tests/cartpole_data_efficiency_test.cpp — the --quick variant of `diffphys experiment
// cartpole-data-efficiency` (experiments/cartpole_data_efficiency.hpp), asserting the paper's
// claim (de Avila Belbute-Peres et al. 2018, §4.3) at the amounts of data it runs (1, 4 and 16
// episodes) where we measured it to hold for seeds 1–5: from one episode the physics model
// predicts far better than the MLP and balances the true system for the whole run; the MLP
// improves with data; and the files the run promises are written.
#include "experiments/cartpole_data_efficiency.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_helpers.hpp"

namespace diffphys::experiments {
namespace {

TEST(CartPoleDataEfficiency, QuickVariantShowsThePhysicsModelsDataEfficiency) {
  ExperimentOptions options;
  options.quick = true;
  options.out_dir = testing::fresh_test_folder("cartpole_data_efficiency").string();
  const ExperimentResult result = run_cartpole_data_efficiency(options);
  const nlohmann::json json = nlohmann::json::parse(result.json);
  EXPECT_TRUE(result.success) << result.json;
  ASSERT_EQ(json.at("episodes"), (nlohmann::json{1, 4, 16})) << result.json;
  const auto& physics = json.at("physics");
  const auto& mlp = json.at("mlp");
  auto figure = [](const nlohmann::json& model, const char* name, int amount) {
    return model.at(name).at(amount).at(0).get<double>();  // one seed in the quick variant
  };
  // With one episode (~35 transitions) the 3-parameter physics model is near its integrator
  // floor (~1e-6) while the 11,104-weight MLP is not (~1e-3): ≥ 200× lower for seeds 1–5, 10×
  // asserted; over 10 steps ≥ 500× lower.
  EXPECT_LT(10 * figure(physics, "one_step_mse", 0), figure(mlp, "one_step_mse", 0)) << result.json;
  EXPECT_LT(10 * figure(physics, "multi_step_mse", 0), figure(mlp, "multi_step_mse", 0)) << result.json;
  // The MLP learns from more data: 16 episodes lower its held-out one-step error ≥ 18× for
  // seeds 1–5, 5× asserted. (Whether MPC on the MLP balances from one episode depends on the
  // seed — seeds 1 and 5 yes, 2–4 fell after 161–251 steps — so it is not asserted.)
  EXPECT_LT(5 * figure(mlp, "one_step_mse", 2), figure(mlp, "one_step_mse", 0)) << result.json;
  // MPC on the physics model keeps the true cart–pole up for the whole run from every amount.
  for (int amount = 0; amount < 3; ++amount)
    EXPECT_EQ(figure(physics, "steps_balanced", amount), json.at("target_steps").get<double>()) << result.json;

  const std::filesystem::path out(json.at("out").get<std::string>());
  std::ifstream results(out / "results.csv");
  std::string header;
  std::getline(results, header);
  const auto fields = std::count(header.begin(), header.end(), ',');
  int lines = 0;
  for (std::string line; std::getline(results, line); ++lines)
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), fields) << "results.csv row " << lines << ": " << line;
  EXPECT_EQ(lines, 3 * 2);  // both models at each amount
  EXPECT_TRUE(std::filesystem::exists(out / "mlp_validation.csv"));
}

}  // namespace
}  // namespace diffphys::experiments
