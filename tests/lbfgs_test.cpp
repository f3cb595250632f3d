// tests/lbfgs_test.cpp — L-BFGS (diffphys/lbfgs.hpp) against closed forms: the minimiser of
// a quadratic (A x = b, and finite termination in n iterations with exact line searches), the
// Rosenbrock minimum (1, …, 1), the strong Wolfe conditions at every accepted step, refusals.
#include "diffphys/lbfgs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "diffphys/error.hpp"

namespace diffphys {
namespace {

// f = ½ xᵀA x − bᵀx with A = QᵀDQ symmetric positive definite (eigenvalues 1..condition).
struct Quadratic {
  int n;
  std::vector<double> A, b;
  Quadratic(int size, double condition, unsigned seed) : n(size), A(size * size, 0.0), b(size) {
    std::mt19937 random(seed);
    std::normal_distribution<double> normal;
    std::vector<double> M(n * n);
    for (double& m : M) m = normal(random);
    // A = MᵀM/n + shifted diagonal: SPD with a spread of eigenvalues.
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int k = 0; k < n; ++k) sum += M[k * n + i] * M[k * n + j];
        A[i * n + j] = condition * sum / n + (i == j ? 1.0 : 0.0);
      }
    for (double& value : b) value = normal(random);
  }
  double operator()(std::span<const double> x, std::span<double> gradient) const {
    double value = 0.0;
    for (int i = 0; i < n; ++i) {
      double Ax = 0.0;
      for (int j = 0; j < n; ++j) Ax += A[i * n + j] * x[j];
      gradient[i] = Ax - b[i];
      value += 0.5 * x[i] * Ax - b[i] * x[i];
    }
    return value;
  }
  // A x = b by Gaussian elimination (the closed-form minimiser).
  std::vector<double> solution() const {
    std::vector<double> M = A, x = b;
    for (int k = 0; k < n; ++k)
      for (int i = k + 1; i < n; ++i) {
        const double factor = M[i * n + k] / M[k * n + k];
        for (int j = k; j < n; ++j) M[i * n + j] -= factor * M[k * n + j];
        x[i] -= factor * x[k];
      }
    for (int i = n - 1; i >= 0; --i) {
      for (int j = i + 1; j < n; ++j) x[i] -= M[i * n + j] * x[j];
      x[i] /= M[i * n + i];
    }
    return x;
  }
};

// Extended Rosenbrock, Σ 100 (x_{2i+1} − x_{2i}²)² + (1 − x_{2i})²; minimum 0 at (1, …, 1).
double rosenbrock(std::span<const double> x, std::span<double> gradient) {
  double value = 0.0;
  for (std::size_t i = 0; i + 1 < x.size(); i += 2) {
    const double a = x[i + 1] - x[i] * x[i], c = 1.0 - x[i];
    value += 100.0 * a * a + c * c;
    gradient[i] = -400.0 * a * x[i] - 2.0 * c;
    gradient[i + 1] = 200.0 * a;
  }
  return value;
}

TEST(Lbfgs, FindsTheMinimiserOfAQuadratic) {
  const Quadratic quadratic(20, 100.0, 3);
  LbfgsSettings settings;
  settings.history = 5;  // fewer pairs than dimensions: genuinely limited memory
  settings.gradient_tolerance = 1e-9;
  settings.max_iterations = 1000;
  const LbfgsResult result = minimize_lbfgs(quadratic, std::vector<double>(20, 0.0), settings);
  ASSERT_TRUE(result.converged) << result.stop_reason << " at |g| " << result.gradient_max_norm << " after "
                                << result.iterations;
  const std::vector<double> expected = quadratic.solution();
  for (int i = 0; i < 20; ++i) EXPECT_NEAR(result.x[i], expected[i], 1e-8) << i;  // |Δx| ≤ |g|/λ_min, λ_min ≥ 1
}

TEST(Lbfgs, TerminatesInNIterationsOnAQuadraticWithExactLineSearches) {
  // With exact line searches and at least n pairs, BFGS from a multiple of the identity
  // produces the conjugate-gradient iterates on a quadratic and so reaches the minimiser in
  // at most n iterations (Nocedal & Wright Thm. 6.4 and §5.1). A strong Wolfe search with a
  // tiny c₂ is an exact line search here, because the cubic interpolation is exact for a
  // quadratic φ(α).
  const int n = 8;
  const Quadratic quadratic(n, 50.0, 11);
  LbfgsSettings settings;
  settings.history = n;
  settings.curvature = 1e-9;
  settings.sufficient_decrease = 1e-10;
  settings.gradient_tolerance = 1e-9;
  const LbfgsResult result = minimize_lbfgs(quadratic, std::vector<double>(n, 1.0), settings);
  EXPECT_TRUE(result.converged) << result.stop_reason;
  EXPECT_LE(result.iterations, n);
  const std::vector<double> expected = quadratic.solution();
  for (int i = 0; i < n; ++i) EXPECT_NEAR(result.x[i], expected[i], 1e-8) << i;
}

TEST(Lbfgs, ReachesTheRosenbrockMinimum) {
  std::vector<double> x0;
  for (int i = 0; i < 5; ++i) {
    x0.push_back(-1.2);
    x0.push_back(1.0);
  }
  LbfgsSettings settings;
  settings.gradient_tolerance = 1e-9;
  const LbfgsResult result = minimize_lbfgs(rosenbrock, x0, settings);
  ASSERT_TRUE(result.converged) << result.stop_reason;
  for (double value : result.x) EXPECT_NEAR(value, 1.0, 1e-8);
  EXPECT_LT(result.loss, 1e-16);
}

TEST(Lbfgs, EveryAcceptedStepSatisfiesTheStrongWolfeConditions) {
  // Check the conditions independently of the search: f(x + αd) ≤ f + c₁α∇fᵀd and
  // |∇f(x + αd)ᵀd| ≤ c₂|∇fᵀd|, along the steepest-descent direction of Rosenbrock from
  // several points and several first trial steps (too short, about right, far too long).
  const LbfgsSettings settings;
  const std::vector<std::vector<double>> starts = {{-1.2, 1.0}, {0.0, 0.0}, {2.0, -1.0}, {0.5, 0.9}};
  for (const auto& x : starts)
    for (const double initial_step : {1e-4, 1e-2, 1.0, 10.0}) {
      std::vector<double> gradient(2), direction(2), trial, trial_gradient;
      const double value = rosenbrock(x, gradient);
      for (int i = 0; i < 2; ++i) direction[i] = -gradient[i];
      const LineSearchResult line = strong_wolfe_line_search(rosenbrock, x, value, gradient, direction, initial_step,
                                                             settings, trial, trial_gradient);
      ASSERT_TRUE(line.satisfied) << x[0] << "," << x[1] << " from " << initial_step;
      std::vector<double> check_gradient(2);
      const double slope0 = gradient[0] * direction[0] + gradient[1] * direction[1];
      const std::vector<double> point = {x[0] + line.step * direction[0], x[1] + line.step * direction[1]};
      const double new_value = rosenbrock(point, check_gradient);
      const double new_slope = check_gradient[0] * direction[0] + check_gradient[1] * direction[1];
      EXPECT_DOUBLE_EQ(new_value, line.loss);
      EXPECT_LE(new_value, value + settings.sufficient_decrease * line.step * slope0);
      EXPECT_LE(std::abs(new_slope), -settings.curvature * slope0);
    }
}

TEST(Lbfgs, BacksOffFromNonFiniteLosses) {
  // f = −log(1 − x) − 2x: undefined for x ≥ 1, minimum at x = ½. From x = 0 the first trial
  // step (unit length) lands on x = 1.
  auto loss = [](std::span<const double> x, std::span<double> gradient) {
    if (x[0] >= 1.0) return std::numeric_limits<double>::quiet_NaN();
    gradient[0] = 1.0 / (1.0 - x[0]) - 2.0;
    return -std::log(1.0 - x[0]) - 2.0 * x[0];
  };
  const LbfgsResult result = minimize_lbfgs(loss, std::vector<double>{0.0});
  ASSERT_TRUE(result.converged) << result.stop_reason;
  EXPECT_NEAR(result.x[0], 0.5, 1e-8);
}

TEST(Lbfgs, RefusesBadInput) {
  LbfgsSettings settings;
  settings.curvature = 1e-5;  // below c₁
  EXPECT_THROW(minimize_lbfgs(rosenbrock, std::vector<double>{0.0, 0.0}, settings), Error);
  auto nan_gradient = [](std::span<const double>, std::span<double> gradient) {
    gradient[0] = std::nan("");
    return 1.0;
  };
  try {
    minimize_lbfgs(nan_gradient, std::vector<double>{0.0});
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("gradient entry 0"), std::string::npos) << error.what();
  }
  std::vector<double> gradient(2), trial, trial_gradient;
  const std::vector<double> x{0.0, 0.0};
  const double value = rosenbrock(x, gradient);
  const std::vector<double> ascent = gradient;  // uphill
  EXPECT_THROW(
      strong_wolfe_line_search(rosenbrock, x, value, gradient, ascent, 1.0, LbfgsSettings{}, trial, trial_gradient),
      Error);
}

TEST(Lbfgs, ProgressCallbackCanStopEarly) {
  int calls = 0;
  const LbfgsResult result =
      minimize_lbfgs(rosenbrock, std::vector<double>{-1.2, 1.0}, LbfgsSettings{},
                     [&](int iteration, std::span<const double>, double, std::span<const double>) {
                       calls = iteration;
                       return iteration < 3;
                     });
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(result.iterations, 3);
  EXPECT_EQ(result.stop_reason, "stopped by the caller");
}

}  // namespace
}  // namespace diffphys
