// tests/finite_difference_test.cpp — the gradient checks' pass rule
// (compare_with_finite_differences, diffphys/gradcheck.hpp) on losses whose derivative is
// known: it accepts a right gradient whatever the first step, refuses a wrong one however
// small, and steps to the side a bounded input allows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "diffphys/error.hpp"
#include "diffphys/gradcheck.hpp"

namespace diffphys {
namespace {

// A deterministic "round-off" of amplitude `size` at δ: what a long rollout adds to its loss.
double noise(double delta, double size) {
  std::uint64_t bits = 0;
  static_assert(sizeof bits == sizeof delta);
  std::memcpy(&bits, &delta, sizeof bits);
  bits ^= bits >> 33;
  bits *= 0xff51afd7ed558ccdULL;
  bits ^= bits >> 33;
  return size * (static_cast<double>(bits % 2001) / 1000.0 - 1.0);
}

TEST(FiniteDifference, AcceptsAnExactGradientOfASmoothLoss) {
  const auto loss = [](double delta) { return std::sin(0.3 + delta) * std::exp(0.5 * delta); };
  const double derivative = std::cos(0.3) + 0.5 * std::sin(0.3);  // (sin(0.3 + δ) e^{δ/2})' at 0
  const GradientCheckEntry entry = compare_with_finite_differences("x", derivative, loss, 1e-3, 1e-6);
  EXPECT_LT(entry.relative_error, 1e-8) << entry.numeric;
  EXPECT_NEAR(entry.numeric, derivative, 1e-9);
  EXPECT_GT(entry.uncertainty, 0.0);
}

TEST(FiniteDifference, RefusesASmallGradientOfTheWrongSign) {
  // The loss's slope is 1e-6; the former rule |a − n| / max(1, |n|) = 2e-6 passed −1e-6 at a
  // tolerance of 1e-4.
  const auto loss = [](double delta) { return 1.0 + 1e-6 * delta + 1e-7 * delta * delta; };
  const GradientCheckEntry right = compare_with_finite_differences("x", 1e-6, loss, 1e-4, 1e-4);
  const GradientCheckEntry wrong = compare_with_finite_differences("x", -1e-6, loss, 1e-4, 1e-4);
  EXPECT_LE(right.relative_error, 1e-4);
  EXPECT_GT(wrong.relative_error, 1e-4);
  EXPECT_NEAR(wrong.relative_error, 2.0, 1e-3);
}

TEST(FiniteDifference, StepsAwayFromRoundOffThatDrownsATooSmallFirstStep) {
  // Slope 0.03 with 1e-12 of noise in the loss: at the first step 1e-9 the noise alone is
  // ~1e-3 of the derivative, 30 times the tolerance; a larger step resolves it.
  const double slope = 0.03;
  const auto loss = [&](double delta) { return 5.0 + slope * delta + 0.2 * delta * delta + noise(delta, 1e-12); };
  const GradientCheckEntry right = compare_with_finite_differences("damping", slope, loss, 1e-9, 1e-4);
  EXPECT_LE(right.relative_error, 1e-4) << "numeric " << right.numeric << " at step " << right.step;
  EXPECT_GT(right.step, 1e-9);
  // ... and a gradient 1 % off is still refused there: the search does not shop for a pass.
  const GradientCheckEntry wrong = compare_with_finite_differences("damping", 1.01 * slope, loss, 1e-9, 1e-4);
  EXPECT_GT(wrong.relative_error, 1e-4) << "numeric " << wrong.numeric << " ± " << wrong.uncertainty;
}

TEST(FiniteDifference, AGradientZeroWithinTheNoiseIsNotFailedForIt) {
  // A loss that does not depend on the input, but whose evaluations differ in their last
  // places: the analytic 0 stands against a numeric value of noise/h.
  const auto loss = [](double delta) { return 2.0 + noise(delta, 1e-15); };
  const GradientCheckEntry entry = compare_with_finite_differences("x", 0.0, loss, 1e-6, 1e-4);
  EXPECT_LE(entry.relative_error, 1e-4) << entry.numeric << " ± " << entry.uncertainty;
}

TEST(FiniteDifference, DifferencesOnTheAllowedSideOfABound) {
  // A restitution-like input at 0: the loss refuses a negative value.
  const auto loss = [](double delta) {
    if (delta < 0) throw Error("restitution must be in [0, 1]");
    return 1.0 + 2.0 * delta + 3.0 * delta * delta;
  };
  const GradientCheckEntry entry = compare_with_finite_differences("restitution", 2.0, loss, 1e-5, 1e-6);
  EXPECT_LE(entry.relative_error, 1e-6) << entry.numeric;
  // ... and an input at its upper bound (a restitution of 1) is differenced from below.
  const auto loss_below = [](double delta) {
    if (delta > 0) throw Error("restitution must be in [0, 1]");
    return -2.0 * delta + delta * delta;
  };
  const GradientCheckEntry below = compare_with_finite_differences("restitution", -2.0, loss_below, 1e-5, 1e-6);
  EXPECT_LE(below.relative_error, 1e-6) << below.numeric;
}

TEST(FiniteDifference, ANonFiniteLossFails) {
  const auto loss = [](double delta) { return delta > 0 ? std::numeric_limits<double>::quiet_NaN() : delta; };
  const GradientCheckEntry entry = compare_with_finite_differences("x", 1.0, loss, 1e-6, 1e-4);
  EXPECT_FALSE(entry.relative_error <= 1e-4);
}

TEST(FiniteDifference, RefusesAStepThatIsNotPositive) {
  EXPECT_THROW(compare_with_finite_differences("x", 1.0, [](double d) { return d; }, 0.0, 1e-4), Error);
}

}  // namespace
}  // namespace diffphys
