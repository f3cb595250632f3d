// tests/cartpole_mlp_test.cpp — the cart–pole's MLP dynamics model (experiments/cartpole_mlp.hpp):
// its iLQR Jacobians and its training loss's gradient against central differences,
// deterministic training that lowers the held-out loss, the open-loop error's windows
// (experiments/cartpole_physics.hpp), and the refusal of non-finite input and of too little data.
#include "experiments/cartpole_mlp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys::experiments::cartpole {
namespace {

std::vector<Transition> random_episodes(int episodes, unsigned seed) {
  const TrueCartPole truth;
  std::mt19937 random(seed);
  return collect(truth, episodes, 60, M_PI / 4, random);
}

TEST(CartPoleMlp, JacobiansMatchCentralDifferences) {
  const std::vector<Transition> data = random_episodes(3, 5);
  MlpCartPole model(data, {16, 16}, 3);
  // Every weight random (the output layer starts at zero, which would make ∂Δs/∂s zero).
  std::mt19937_64 generator(11);
  std::uniform_real_distribution<double> weight(-0.5, 0.5);
  for (double& w : model.weights()) w = weight(generator);
  MlpDynamics dynamics(model);
  // Steps chosen for each input's scale: 1e-6 of its spread in the data (x ~0.1 m, ẋ ~0.5 m/s,
  // θ ~0.2 rad, θ̇ ~1 rad/s, F ~6 N).
  const double steps[5] = {1e-7, 5e-7, 2e-7, 1e-6, 6e-6};
  for (const std::array<double, 5> point :
       {std::array<double, 5>{0.0, 0.0, 0.0, 0.0, 0.0}, std::array<double, 5>{0.3, -0.4, 0.15, 1.2, 7.0},
        std::array<double, 5>{-1.0, 1.5, -0.6, -2.5, -9.5}}) {
    SCOPED_TRACE(testing::Message() << "at (x, xdot, theta, thetadot, F) = (" << point[0] << ", " << point[1] << ", "
                                    << point[2] << ", " << point[3] << ", " << point[4] << ")");
    std::vector<double> state(point.begin(), point.begin() + 4), control{point[4]}, next(4), A(16), B(4);
    dynamics.linearize(state, control, next, A, B);
    for (int j = 0; j < 5; ++j) {
      std::vector<double> plus_state = state, minus_state = state, plus_control = control, minus_control = control;
      (j < 4 ? plus_state[j] : plus_control[0]) += steps[j];
      (j < 4 ? minus_state[j] : minus_control[0]) -= steps[j];
      std::vector<double> plus(4), minus(4);
      dynamics.step(plus_state, plus_control, plus);
      dynamics.step(minus_state, minus_control, minus);
      for (int i = 0; i < 4; ++i) {
        const double numeric = (plus[i] - minus[i]) / (2.0 * steps[j]);
        const double analytic = j < 4 ? A[4 * i + j] : B[i];
        EXPECT_NEAR(analytic, numeric, 1e-6 * (1.0 + std::abs(numeric))) << "d next[" << i << "] / d input " << j;
      }
    }
  }
}

TEST(CartPoleMlp, LossGradientMatchesCentralDifferences) {
  const std::vector<Transition> data = random_episodes(2, 6);
  MlpCartPole model(data, {8, 8}, 2);
  std::mt19937_64 generator(13);
  std::uniform_real_distribution<double> weight(-0.5, 0.5);
  for (double& w : model.weights()) w = weight(generator);
  std::vector<const Transition*> batch;
  for (std::size_t i = 0; i < data.size(); i += 3) batch.push_back(&data[i]);
  std::vector<double> gradient(static_cast<std::size_t>(model.parameter_count())), unused;
  model.loss(batch, gradient);
  const double step = 1e-6;  // the weights are O(0.5)
  const std::span<double> weights = model.weights();
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const double original = weights[k];
    weights[k] = original + step;
    const double plus = model.loss(batch, unused);
    weights[k] = original - step;
    const double minus = model.loss(batch, unused);
    weights[k] = original;
    const double numeric = (plus - minus) / (2 * step);
    EXPECT_NEAR(gradient[k], numeric, 1e-7 * (1.0 + std::abs(numeric))) << "weight " << k;
  }
}

TEST(CartPoleMlp, TrainingIsDeterministicAndLowersTheHeldOutLoss) {
  const std::vector<Transition> data = random_episodes(6, 7), held_out = random_episodes(6, 8);
  MlpFitSettings settings;
  settings.hidden = {32, 32};
  settings.max_updates = 300;
  const MlpFit first = fit_mlp(data, settings, 4), second = fit_mlp(data, settings, 4);
  ASSERT_EQ(first.chosen_updates, second.chosen_updates);
  const std::span<const double> a = first.model->weights(), b = second.model->weights();
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "weight " << i;
  EXPECT_EQ(first.validation_curve.size(), 300u / 50u);
  EXPECT_GT(first.chosen_updates, 0);
  // Held-out one-step MSE (SI) of the trained model against the untrained one, which predicts
  // the mean change.
  MlpCartPole untrained(data, settings.hidden, 4);
  auto mse = [&](MlpCartPole& model) {
    return one_step_mse(held_out, [&](const StateVector& s, double f) { return model.predict(s, f); });
  };
  EXPECT_LT(mse(*first.model), 0.1 * mse(untrained));
}

TEST(CartPoleMlp, MultiStepErrorCountsTheWindowsInsideEachEpisode) {
  const TrueCartPole truth;
  const std::vector<Transition> data = random_episodes(4, 9);
  int expected_windows = 0;
  for (int e = 0; e < 4; ++e) {
    const auto length = std::count_if(data.begin(), data.end(), [&](const Transition& d) { return d.episode == e; });
    expected_windows += std::max(0, static_cast<int>(length) - 10 + 1);
  }
  const MultiStepError exact =
      multi_step_mse(data, 10, [&](const StateVector& s, double f) { return truth.step(s, f); });
  EXPECT_EQ(exact.windows, expected_windows);
  EXPECT_EQ(exact.mse, 0.0);  // the truth replays its own transitions exactly
  // The true dynamics do not depend on x: a model that adds c to x every step ends the 10
  // steps off by exactly 10c in x and nowhere else, an MSE over 4 coordinates of (10c)²/4.
  const double c = 1e-3;
  const MultiStepError drifting = multi_step_mse(data, 10, [&](const StateVector& s, double f) {
    StateVector next = truth.step(s, f);
    next[0] += c;
    return next;
  });
  EXPECT_EQ(drifting.windows, expected_windows);
  EXPECT_NEAR(drifting.mse, std::pow(10 * c, 2) / 4, 1e-9 * std::pow(10 * c, 2));
}

TEST(CartPoleMlp, RefusesNonFiniteInputAndTooLittleData) {
  const std::vector<Transition> data = random_episodes(2, 3);
  MlpCartPole model(data, {8}, 1);
  try {
    model.predict({0.0, NAN, 0.0, 0.0}, 1.0);
    FAIL() << "a NaN velocity was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("non-finite input 1"), std::string::npos) << error.what();
  }
  EXPECT_THROW(model.predict({0.0, 0.0, 0.0, 0.0}, INFINITY), Error);
  const std::vector<Transition> few(data.begin(), data.begin() + 3);
  try {
    fit_mlp(few, MlpFitSettings{}, 1);
    FAIL() << "3 transitions were accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("got 3"), std::string::npos) << error.what();
  }
  EXPECT_THROW(MlpCartPole({}, {8}, 1), Error);
}

}  // namespace
}  // namespace diffphys::experiments::cartpole
