// tests/optimizer_test.cpp — the optimisers of diffphys/optimizer.hpp against closed forms:
// gradient descent on a quadratic, Adam's first step and its convergence, schedules, clipping.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/optimizer.hpp"

namespace diffphys {
namespace {

TEST(Optimizer, GradientDescentOnAQuadraticFollowsTheClosedForm) {
  // f = ½ a x², x_k = (1 − lr·a)^k x_0.
  const double a = 3.0, lr = 0.1;
  GradientDescent descent{OptimizerSettings(lr)};
  std::vector<double> x{2.0};
  for (int k = 0; k < 20; ++k) descent.step(x, std::vector<double>{a * x[0]});
  EXPECT_NEAR(x[0], 2.0 * std::pow(1 - lr * a, 20), 1e-14);
}

TEST(Optimizer, MomentumMatchesTheHeavyBallRecurrence) {
  const double a = 2.0, lr = 0.05, mu = 0.9;
  GradientDescent descent{OptimizerSettings(lr), mu};
  std::vector<double> x{1.0};
  double expected = 1.0, velocity = 0.0;
  for (int k = 0; k < 30; ++k) {
    descent.step(x, std::vector<double>{a * x[0]});
    velocity = mu * velocity + a * expected;
    expected -= lr * velocity;
  }
  EXPECT_DOUBLE_EQ(x[0], expected);
}

TEST(Optimizer, AdamFirstStepHasTheLearningRateAsItsSize) {
  // Bias correction makes the first update lr·g/(|g| + ε') ≈ lr·sign(g), whatever |g|.
  Adam adam(OptimizerSettings(0.01));
  std::vector<double> x{1.0, -1.0, 0.5};
  adam.step(x, std::vector<double>{1e3, -1e-3, 7.0});
  EXPECT_NEAR(x[0], 1.0 - 0.01, 1e-9);
  EXPECT_NEAR(x[1], -1.0 + 0.01, 1e-7);
  EXPECT_NEAR(x[2], 0.5 - 0.01, 1e-9);
}

TEST(Optimizer, SetLearningRateActsFromTheNextStepAndKeepsTheMoments) {
  // Heavy ball with its rate changed after 5 steps: the recurrence with the new rate, the
  // velocity carried over; a non-positive rate is refused.
  const double a = 2.0, mu = 0.5;
  GradientDescent descent{OptimizerSettings(0.1), mu};
  std::vector<double> x{1.0};
  double expected = 1.0, velocity = 0.0;
  for (int k = 0; k < 10; ++k) {
    if (k == 5) descent.set_learning_rate(0.02);
    descent.step(x, std::vector<double>{a * x[0]});
    velocity = mu * velocity + a * expected;
    expected -= (k < 5 ? 0.1 : 0.02) * velocity;
  }
  EXPECT_DOUBLE_EQ(x[0], expected);
  EXPECT_EQ(descent.iteration(), 10);
  EXPECT_DOUBLE_EQ(descent.current_rate(), 0.02);
  EXPECT_THROW(descent.set_learning_rate(0.0), Error);
  EXPECT_THROW(descent.set_learning_rate(std::nan("")), Error);
}

TEST(Optimizer, AdamMinimisesAnIllConditionedQuadratic) {
  Adam adam(OptimizerSettings(0.05));
  std::vector<double> x{3.0, -2.0};
  for (int k = 0; k < 2000; ++k) adam.step(x, std::vector<double>{100.0 * (x[0] - 1.0), 0.01 * (x[1] + 4.0)});
  EXPECT_NEAR(x[0], 1.0, 1e-3);
  EXPECT_NEAR(x[1], -4.0, 1e-2);
}

TEST(Optimizer, SchedulesGiveTheirClosedForms) {
  const auto step = LearningRateSchedule::step(0.5, 10);
  EXPECT_DOUBLE_EQ(step.rate(1.0, 9), 1.0);
  EXPECT_DOUBLE_EQ(step.rate(1.0, 10), 0.5);
  EXPECT_DOUBLE_EQ(step.rate(1.0, 25), 0.25);
  const auto exponential = LearningRateSchedule::exponential(0.1, 100);
  EXPECT_NEAR(exponential.rate(2.0, 50), 2.0 * std::sqrt(0.1), 1e-15);
  const auto cosine = LearningRateSchedule::cosine(100, 0.1);
  EXPECT_DOUBLE_EQ(cosine.rate(1.0, 0), 1.0);
  EXPECT_NEAR(cosine.rate(1.0, 50), 0.55, 1e-15);
  EXPECT_DOUBLE_EQ(cosine.rate(1.0, 100), 0.1);
  EXPECT_DOUBLE_EQ(cosine.rate(1.0, 500), 0.1);
}

TEST(Optimizer, ClippingByNormAndByValue) {
  std::vector<double> g{3.0, 4.0};
  GradientClip::norm(1.0).apply(g);
  EXPECT_DOUBLE_EQ(g[0], 0.6);
  EXPECT_DOUBLE_EQ(g[1], 0.8);
  std::vector<double> h{-250.0, 3.0, 120.0};
  GradientClip::value(100.0).apply(h);
  EXPECT_EQ(h, (std::vector<double>{-100.0, 3.0, 100.0}));
  // The optimiser clips a copy: the caller's gradient is untouched.
  GradientDescent descent(OptimizerSettings(1.0, {}, GradientClip::value(1.0)));
  std::vector<double> x{0.0};
  const std::vector<double> gradient{5.0};
  descent.step(x, gradient);
  EXPECT_DOUBLE_EQ(x[0], -1.0);
  EXPECT_DOUBLE_EQ(gradient[0], 5.0);
}

TEST(Optimizer, RefusesBadSettingsAndNonFiniteGradients) {
  EXPECT_THROW(Adam(OptimizerSettings(-1.0)), Error);
  EXPECT_THROW(GradientDescent(OptimizerSettings(0.1), 1.5), Error);
  Adam adam(OptimizerSettings(0.1));
  std::vector<double> x{1.0, 2.0};
  try {
    adam.step(x, std::vector<double>{0.0, std::nan("")});
    FAIL() << "a NaN gradient was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("entry 1"), std::string::npos) << error.what();
  }
  EXPECT_THROW(adam.step(x, std::vector<double>{1.0}), Error);
}

}  // namespace
}  // namespace diffphys
