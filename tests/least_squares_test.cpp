// tests/least_squares_test.cpp — Levenberg–Marquardt (diffphys/least_squares.hpp) against
// closed forms: a straight-line fit (the normal equations' solution), an exponential decay
// recovered exactly from noise-free samples, Rosenbrock's minimum, the same iterates whatever
// the units of the unknowns (Marquardt's scaling), a trial point with NaN residuals rejected,
// the progress callback's stop, and refusals.
#include "diffphys/least_squares.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "diffphys/error.hpp"

namespace diffphys {
namespace {

// Residuals y_k − (x₀ + x₁ t_k): linear, so one Gauss–Newton step would do; LM's damping
// takes a few, and must end on the normal equations' solution.
TEST(LeastSquares, LineFitReachesTheNormalEquationsSolution) {
  const std::vector<double> t = {0.0, 1.0, 2.0, 3.0, 4.5}, y = {1.1, 2.9, 5.2, 6.8, 10.3};
  auto residuals = [&](std::span<const double> x, std::span<double> r, std::span<double> J) {
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (!r.empty()) r[k] = x[0] + x[1] * t[k] - y[k];
      if (!J.empty()) J[2 * k] = 1.0, J[2 * k + 1] = t[k];
    }
  };
  double st = 0, sy = 0, stt = 0, sty = 0;
  const double n = static_cast<double>(t.size());
  for (std::size_t k = 0; k < t.size(); ++k) st += t[k], sy += y[k], stt += t[k] * t[k], sty += t[k] * y[k];
  const double slope = (n * sty - st * sy) / (n * stt - st * st), intercept = (sy - slope * st) / n;
  const LeastSquaresResult result = minimize_least_squares(residuals, 5, std::vector<double>{0.0, 0.0});
  ASSERT_TRUE(result.converged) << result.stop_reason;
  EXPECT_NEAR(result.x[0], intercept, 1e-10);
  EXPECT_NEAR(result.x[1], slope, 1e-10);
  EXPECT_LE(result.iterations, 10);
}

// y_k = A e^{−k t_k} sampled without noise from A = 2, k = 0.7: the fit recovers both.
struct Decay {
  double amplitude_unit = 1.0, rate_unit = 1.0;  // x = (A / amplitude_unit, k / rate_unit)
  std::vector<double> t;
  Decay() {
    for (int i = 0; i < 12; ++i) t.push_back(0.25 * i);
  }
  void operator()(std::span<const double> x, std::span<double> r, std::span<double> J) const {
    const double A = x[0] * amplitude_unit, k = x[1] * rate_unit;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double e = std::exp(-k * t[i]);
      if (!r.empty()) r[i] = A * e - 2.0 * std::exp(-0.7 * t[i]);
      if (!J.empty()) J[2 * i] = e * amplitude_unit, J[2 * i + 1] = -A * t[i] * e * rate_unit;
    }
  }
};

TEST(LeastSquares, ExponentialDecayIsRecoveredFromItsSamples) {
  const Decay decay;
  const LeastSquaresResult result =
      minimize_least_squares(decay, static_cast<int>(decay.t.size()), std::vector<double>{1.0, 0.1});
  ASSERT_TRUE(result.converged) << result.stop_reason;
  EXPECT_NEAR(result.x[0], 2.0, 1e-9);
  EXPECT_NEAR(result.x[1], 0.7, 1e-9);
  EXPECT_LT(result.cost, 1e-20);
  EXPECT_EQ(result.jacobians, result.iterations + 1);     // one at x₀, one per accepted step
  EXPECT_GE(result.evaluations, result.iterations + 1);  // trial points included
}

// Marquardt's D = diag(JᵀJ) makes the iterates independent of the unknowns' units: the same
// problem in grams and per-millisecond takes the same steps.
TEST(LeastSquares, IteratesDoNotDependOnTheUnitsOfTheUnknowns) {
  const Decay plain;
  Decay scaled;
  scaled.amplitude_unit = 1e-3, scaled.rate_unit = 1e3;
  const int m = static_cast<int>(plain.t.size());
  const LeastSquaresResult a = minimize_least_squares(plain, m, std::vector<double>{1.0, 0.1});
  const LeastSquaresResult b = minimize_least_squares(scaled, m, std::vector<double>{1e3, 1e-4});
  ASSERT_TRUE(a.converged && b.converged);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_NEAR(b.x[0] * 1e-3, a.x[0], 1e-9);
  EXPECT_NEAR(b.x[1] * 1e3, a.x[1], 1e-9);
}

// Rosenbrock as residuals (10(x₁ − x₀²), 1 − x₀) from the classic start (−1.2, 1).
TEST(LeastSquares, RosenbrockReachesItsMinimum) {
  auto residuals = [](std::span<const double> x, std::span<double> r, std::span<double> J) {
    if (!r.empty()) r[0] = 10.0 * (x[1] - x[0] * x[0]), r[1] = 1.0 - x[0];
    if (!J.empty()) J[0] = -20.0 * x[0], J[1] = 10.0, J[2] = -1.0, J[3] = 0.0;
  };
  const LeastSquaresResult result = minimize_least_squares(residuals, 2, std::vector<double>{-1.2, 1.0});
  ASSERT_TRUE(result.converged) << result.stop_reason;
  EXPECT_NEAR(result.x[0], 1.0, 1e-9);
  EXPECT_NEAR(result.x[1], 1.0, 1e-9);
  EXPECT_LE(result.iterations, 30);
}

// r = √x − 0.1 from x = 1: the undamped step lands at x < 0, where r is NaN; that trial is
// rejected, the damping grows, and the solver still reaches x = 0.01.
TEST(LeastSquares, ATrialWithNonFiniteResidualsIsRejected) {
  int non_finite_trials = 0;
  auto residuals = [&](std::span<const double> x, std::span<double> r, std::span<double> J) {
    if (!r.empty()) {
      r[0] = std::sqrt(x[0]) - 0.1;
      if (!std::isfinite(r[0])) ++non_finite_trials;
    }
    if (!J.empty()) J[0] = 0.5 / std::sqrt(x[0]);
  };
  const LeastSquaresResult result = minimize_least_squares(residuals, 1, std::vector<double>{1.0});
  ASSERT_TRUE(result.converged) << result.stop_reason;
  EXPECT_GE(non_finite_trials, 1);
  EXPECT_NEAR(result.x[0], 0.01, 1e-12);
}

TEST(LeastSquares, TheProgressCallbackStopsAtATarget) {
  const Decay decay;
  std::vector<int> seen;
  const LeastSquaresResult result = minimize_least_squares(
      decay, static_cast<int>(decay.t.size()), std::vector<double>{1.0, 0.1}, {},
      [&](int iteration, std::span<const double>, double cost, std::span<const double> r) {
        seen.push_back(iteration);
        EXPECT_EQ(r.size(), decay.t.size());
        return cost > 1e-4;
      });
  ASSERT_TRUE(result.converged);
  EXPECT_EQ(result.stop_reason, "stopped by the progress callback");
  EXPECT_LE(result.cost, 1e-4);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), 0);
  EXPECT_EQ(seen.back(), result.iterations);
  EXPECT_EQ(static_cast<int>(seen.size()), result.iterations + 1);
}

TEST(LeastSquares, BadInputIsRefusedByName) {
  const Decay decay;
  const std::vector<double> x0 = {1.0, 0.1};
  auto refuses = [&](const LeastSquaresSettings& settings, const std::string& what) {
    try {
      minimize_least_squares(decay, 12, x0, settings);
      ADD_FAILURE() << "accepted " << what;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(what), std::string::npos) << error.what();
    }
  };
  LeastSquaresSettings settings;
  settings.initial_damping = 0.0;
  refuses(settings, "initial_damping");
  settings.initial_damping = std::numeric_limits<double>::quiet_NaN();
  refuses(settings, "initial_damping");
  settings = {};
  settings.max_rejections = 0;
  refuses(settings, "max_rejections");
  EXPECT_THROW(minimize_least_squares(decay, 0, x0), Error);
  EXPECT_THROW(minimize_least_squares(decay, 12, std::vector<double>{}), Error);

  auto nan_residual = [](std::span<const double>, std::span<double> r, std::span<double> J) {
    if (!r.empty()) r[0] = 0.0, r[1] = std::numeric_limits<double>::quiet_NaN();
    if (!J.empty()) J[0] = J[1] = 1.0;
  };
  try {
    minimize_least_squares(nan_residual, 2, std::vector<double>{0.0});
    ADD_FAILURE() << "accepted a NaN residual at x0";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("residual entry 1 is nan"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace diffphys
