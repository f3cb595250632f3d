// adjoint/finite_difference.cpp — compare_with_finite_differences (diffphys/gradcheck.hpp):
// one analytic derivative against finite differences with an estimate of their own error,
// the rule every gradcheck (rigid, soft, coupled) and every gradient test judges by.
//
// Why a search over steps: the best step of a finite difference balances truncation (grows
// with h) against the loss's round-off and solver residual divided by h. Neither is known in
// advance — a joint damping of 0.001 with the fixed floor of 1e-7 gave chain10 a 4 % "error"
// that was all round-off — so the step is taken where the estimate is most stable, the
// classic practice of comparing estimates at successive steps (Ridders, Adv. Eng. Software
// 4(2), 1982; Numerical Recipes §5.7).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "diffphys/error.hpp"
#include "diffphys/gradcheck.hpp"

namespace diffphys {
namespace {

constexpr int kLowestLevel = -3;   // h/8
constexpr int kHighestLevel = 10;  // 1024 h

// The loss at δ = sign·2^j·h, each evaluated once (a rollout each).
class LossLadder {
 public:
  LossLadder(const std::function<double(double)>& loss_at, double step) : loss_at_(loss_at), step_(step) {}
  double at(int sign, int j) {
    if (sign == 0) j = 0;
    const auto key = std::make_pair(sign, j);
    const auto found = values_.find(key);
    if (found != values_.end()) return found->second;
    const double value = loss_at_(sign * std::ldexp(step_, j));
    values_.emplace(key, value);
    return value;
  }

 private:
  const std::function<double(double)>& loss_at_;
  double step_;
  std::map<std::pair<int, int>, double> values_;
};

// D(2^level·h): fourth-order central, or second-order one-sided towards `sign`.
double difference(LossLadder& ladder, DifferenceSide side, int level, double step) {
  const double h = std::ldexp(step, level);
  if (side == DifferenceSide::Both)
    return (8.0 * (ladder.at(1, level) - ladder.at(-1, level)) - (ladder.at(1, level + 1) - ladder.at(-1, level + 1))) /
           (12.0 * h);
  const int sign = side == DifferenceSide::Above ? 1 : -1;
  return (-3.0 * ladder.at(0, 0) + 4.0 * ladder.at(sign, level) - ladder.at(sign, level + 1)) / (2.0 * sign * h);
}

struct Estimate {
  double derivative = 0.0;
  double uncertainty = 0.0;
  int level = 0;
};

Estimate estimate_at(LossLadder& ladder, DifferenceSide side, int level, double step) {
  const double at_h = difference(ladder, side, level, step);
  const double at_2h = difference(ladder, side, level + 1, step);
  return {at_h, std::abs(at_h - at_2h), level};
}

bool agrees(double analytic, double numeric, double tolerance) {
  return std::abs(analytic - numeric) <= tolerance * std::max(std::abs(analytic), std::abs(numeric));
}

GradientCheckEntry compare_on_side(std::string& name, double analytic, const std::function<double(double)>& loss_at,
                                   double step, double tolerance, DifferenceSide side, double gradient_scale) {
  LossLadder ladder(loss_at, step);
  Estimate best = estimate_at(ladder, side, 0, step);
  if (!agrees(analytic, best.derivative, tolerance)) {
    for (int level = kLowestLevel; level <= kHighestLevel; ++level) {
      if (level == 0) continue;
      try {
        const Estimate candidate = estimate_at(ladder, side, level, step);
        // A NaN uncertainty (a non-finite loss at some step) never wins.
        if (candidate.uncertainty < best.uncertainty || std::isnan(best.uncertainty)) best = candidate;
      } catch (const Error&) {
        // A step that leaves the input's range (a restitution pushed past 1): not a candidate.
      }
    }
  }
  GradientCheckEntry entry;
  entry.name = std::move(name);
  entry.analytic = analytic;
  entry.numeric = best.derivative;
  entry.uncertainty = best.uncertainty;
  entry.step = std::ldexp(step, best.level);
  const double difference_size = std::abs(analytic - best.derivative);
  const double floor = kNoiseFloorFactor * best.uncertainty + kRoundOffFloor * std::abs(gradient_scale);
  const double scale = std::max({std::abs(analytic), std::abs(best.derivative), tolerance > 0 ? floor / tolerance : 0.0});
  // 0/0 (both exactly zero, nothing to resolve) agrees; NaN anywhere stays NaN and fails.
  entry.relative_error = difference_size == 0.0 && scale == 0.0 ? 0.0 : difference_size / scale;
  if (std::isnan(best.uncertainty)) entry.relative_error = std::numeric_limits<double>::quiet_NaN();
  return entry;
}

}  // namespace

GradientCheckEntry compare_with_finite_differences(std::string name, double analytic,
                                                   const std::function<double(double)>& loss_at, double step,
                                                   double tolerance, DifferenceSide side, double gradient_scale) {
  if (!(step > 0) || !std::isfinite(step))
    throw Error(message("gradient check '", name, "': the finite-difference step must be positive, got ", step));
  if (side != DifferenceSide::Both) return compare_on_side(name, analytic, loss_at, step, tolerance, side, gradient_scale);
  // An input at the bound of its range: the loss refuses one side with an Error.
  try {
    std::string copy = name;
    return compare_on_side(copy, analytic, loss_at, step, tolerance, DifferenceSide::Both, gradient_scale);
  } catch (const Error&) {
  }
  try {
    std::string copy = name;
    return compare_on_side(copy, analytic, loss_at, step, tolerance, DifferenceSide::Above, gradient_scale);
  } catch (const Error&) {
  }
  return compare_on_side(name, analytic, loss_at, step, tolerance, DifferenceSide::Below, gradient_scale);
}

}  // namespace diffphys
