// learn/lbfgs.cpp — L-BFGS with a strong-Wolfe line search (diffphys/lbfgs.hpp). Equation and
// algorithm numbers are those of Nocedal & Wright, Numerical Optimization, 2nd ed. (2006).
#include "diffphys/lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "diffphys/error.hpp"
#include "math/finite.hpp"

namespace diffphys {
namespace {

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

double max_norm(std::span<const double> v) {
  double norm = 0.0;
  for (const double value : v) norm = std::max(norm, std::abs(value));
  return norm;
}

// φ(α) = f(x + α d) and φ'(α) = ∇f(x + α d)ᵀ d; a non-finite loss or gradient reads as +∞ so
// that the search backs off.
struct LinePoint {
  double step = 0.0;
  double value = 0.0;
  double slope = 0.0;
};

// Minimiser of the cubic interpolating φ and φ' at a and b (eq. 3.59), or the midpoint when
// it does not exist or falls too close to an end (safeguard, §3.5).
double interpolate(const LinePoint& a, const LinePoint& b) {
  const double midpoint = 0.5 * (a.step + b.step);
  if (!std::isfinite(a.value) || !std::isfinite(b.value)) return midpoint;
  const double d1 = a.slope + b.slope - 3.0 * (a.value - b.value) / (a.step - b.step);
  const double discriminant = d1 * d1 - a.slope * b.slope;
  if (!(discriminant >= 0.0)) return midpoint;
  const double d2 = std::copysign(std::sqrt(discriminant), b.step - a.step);
  const double step = b.step - (b.step - a.step) * (b.slope + d2 - d1) / (b.slope - a.slope + 2.0 * d2);
  const double low = std::min(a.step, b.step), high = std::max(a.step, b.step);
  const double margin = 0.01 * (high - low);
  if (!std::isfinite(step) || step < low + margin || step > high - margin) return midpoint;
  return step;
}

}  // namespace

LineSearchResult strong_wolfe_line_search(const LossAndGradient& loss, std::span<const double> x, double loss_at_x,
                                          std::span<const double> gradient_at_x, std::span<const double> direction,
                                          double initial_step, const LbfgsSettings& settings,
                                          std::vector<double>& trial, std::vector<double>& trial_gradient) {
  const double slope0 = dot(gradient_at_x, direction);
  if (!(slope0 < 0.0))
    throw Error(message("line search: the direction is not a descent direction (directional derivative ", slope0, ")"));
  if (!(initial_step > 0.0) || !std::isfinite(initial_step))
    throw Error(message("line search: initial step must be positive and finite, got ", initial_step));
  const double c1 = settings.sufficient_decrease, c2 = settings.curvature;
  trial.resize(x.size());
  trial_gradient.resize(x.size());
  LineSearchResult result;

  auto evaluate = [&](double step) {
    for (std::size_t i = 0; i < x.size(); ++i) trial[i] = x[i] + step * direction[i];
    const double value = loss(trial, trial_gradient);
    ++result.evaluations;
    LinePoint point{step, value, dot(trial_gradient, direction)};
    if (!std::isfinite(point.value) || !all_finite(trial_gradient)) {
      point.value = std::numeric_limits<double>::infinity();
      point.slope = 0.0;
    }
    return point;
  };
  // Armijo's condition, or — where the decrease is below the round-off of f — the
  // approximate Wolfe condition φ'(α) ≤ (2c₁ − 1)φ'(0) of Hager & Zhang (2005, eq. 4.1),
  // which lets the search still converge the gradient when f no longer resolves it.
  const double roundoff = 1e-14 * std::abs(loss_at_x);
  auto sufficient_decrease = [&](const LinePoint& p) {
    return p.value <= loss_at_x + c1 * p.step * slope0 ||
           (p.value <= loss_at_x + roundoff && p.slope <= (2.0 * c1 - 1.0) * slope0);
  };
  auto curvature_holds = [&](const LinePoint& p) { return std::abs(p.slope) <= -c2 * slope0; };
  auto accept = [&](const LinePoint& p) {
    result.step = p.step;
    result.loss = p.value;
    result.satisfied = true;
    return result;
  };
  // Ends the search without a Wolfe point: leaves `trial` at the best point with sufficient
  // decrease seen (re-evaluated), or at x with step 0.
  auto give_up = [&](const LinePoint& best) {
    result.satisfied = false;
    if (best.step > 0.0) {
      const LinePoint again = evaluate(best.step);
      result.step = again.step;
      result.loss = again.value;
    } else {
      std::copy(x.begin(), x.end(), trial.begin());
      std::copy(gradient_at_x.begin(), gradient_at_x.end(), trial_gradient.begin());
      result.step = 0.0;
      result.loss = loss_at_x;
    }
    return result;
  };

  // Algorithm 3.6: zoom into [low, high], where low satisfies sufficient decrease with the
  // lowest value so far and φ'(low)(high − low) < 0.
  auto zoom = [&](LinePoint low, LinePoint high) {
    while (result.evaluations < settings.max_line_search_evaluations) {
      const LinePoint point = evaluate(interpolate(low, high));
      if (!sufficient_decrease(point) || point.value >= low.value) {
        high = point;
      } else {
        if (curvature_holds(point)) return accept(point);
        if (point.slope * (high.step - low.step) >= 0.0) high = low;
        low = point;
      }
      if (std::abs(high.step - low.step) <= 1e-16 * std::max(1.0, low.step)) break;
    }
    return give_up(low);
  };

  // Algorithm 3.5: grow the step until it brackets a Wolfe point.
  LinePoint previous{0.0, loss_at_x, slope0};
  double step = initial_step;
  for (int i = 1;; ++i) {
    const LinePoint point = evaluate(step);
    if (!sufficient_decrease(point) || (i > 1 && point.value >= previous.value)) return zoom(previous, point);
    if (curvature_holds(point)) return accept(point);
    if (point.slope >= 0.0) return zoom(point, previous);
    if (result.evaluations >= settings.max_line_search_evaluations) return give_up(point);
    previous = point;
    step *= 2.0;
  }
}

LbfgsResult minimize_lbfgs(const LossAndGradient& loss, std::span<const double> x0, const LbfgsSettings& settings,
                           const LbfgsProgress& progress) {
  if (settings.history < 1) throw Error(message("L-BFGS: history must be at least 1, got ", settings.history));
  if (settings.max_iterations < 0)
    throw Error(message("L-BFGS: max_iterations must be non-negative, got ", settings.max_iterations));
  if (!(settings.sufficient_decrease > 0.0 && settings.sufficient_decrease < settings.curvature &&
        settings.curvature < 1.0))
    throw Error(message("L-BFGS: need 0 < sufficient_decrease < curvature < 1, got ", settings.sufficient_decrease,
                        " and ", settings.curvature));
  if (settings.max_line_search_evaluations < 2)
    throw Error(
        message("L-BFGS: max_line_search_evaluations must be at least 2, got ", settings.max_line_search_evaluations));
  if (x0.empty()) throw Error("L-BFGS: no parameters to optimise");

  const std::size_t n = x0.size();
  LbfgsResult result;
  result.x.assign(x0.begin(), x0.end());
  std::vector<double> gradient(n), direction(n), trial, trial_gradient;
  result.loss = loss(result.x, gradient);
  result.evaluations = 1;
  if (!std::isfinite(result.loss)) throw Error(message("L-BFGS: the loss at the starting point is ", result.loss));
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(gradient[i]))
      throw Error(message("L-BFGS: gradient entry ", i, " at the starting point is ", gradient[i]));

  struct Pair {
    std::vector<double> s, y;  // s_k = x_{k+1} − x_k, y_k = ∇f_{k+1} − ∇f_k
    double rho;                // 1 / y_kᵀ s_k
  };
  std::deque<Pair> history;
  std::vector<double> alpha(static_cast<std::size_t>(settings.history));

  auto converged = [&] {
    result.gradient_max_norm = max_norm(gradient);
    if (result.gradient_max_norm <= settings.gradient_tolerance) {
      result.converged = true;
      result.stop_reason = "gradient tolerance";
    } else if (settings.loss_tolerance > 0.0 && result.loss <= settings.loss_tolerance) {
      result.converged = true;
      result.stop_reason = "loss tolerance";
    }
    return result.converged;
  };
  if (converged()) return result;

  while (result.iterations < settings.max_iterations) {
    // Algorithm 7.4: d = −H_k ∇f_k by the two-loop recursion, H_k⁰ = γ_k I (eq. 7.20).
    for (std::size_t i = 0; i < n; ++i) direction[i] = -gradient[i];
    for (std::size_t j = history.size(); j-- > 0;) {
      alpha[j] = history[j].rho * dot(history[j].s, direction);
      for (std::size_t i = 0; i < n; ++i) direction[i] -= alpha[j] * history[j].y[i];
    }
    if (!history.empty()) {
      const Pair& last = history.back();
      const double gamma = 1.0 / (last.rho * dot(last.y, last.y));
      for (double& d : direction) d *= gamma;
    }
    for (std::size_t j = 0; j < history.size(); ++j) {
      const double beta = history[j].rho * dot(history[j].y, direction);
      for (std::size_t i = 0; i < n; ++i) direction[i] += (alpha[j] - beta) * history[j].s[i];
    }
    // Without curvature pairs the first step is scaled to unit length (N&W §7.2 suggests
    // any reasonable scale; 1/‖∇f‖ keeps the first trial point within reach).
    const double initial_step = history.empty() ? std::min(1.0, 1.0 / std::sqrt(dot(gradient, gradient))) : 1.0;
    if (!(dot(direction, gradient) < 0.0)) {
      // Round-off can spoil H_k's positive definiteness; restart from steepest descent.
      if (history.empty()) {
        result.stop_reason = "no descent direction";
        break;
      }
      history.clear();
      continue;
    }
    const LineSearchResult line = strong_wolfe_line_search(loss, result.x, result.loss, gradient, direction,
                                                           initial_step, settings, trial, trial_gradient);
    result.evaluations += line.evaluations;
    if (line.step == 0.0 || !(line.satisfied || line.loss < result.loss)) {
      if (!history.empty()) {  // the quasi-Newton model misled the search: forget it once
        history.clear();
        continue;
      }
      result.stop_reason = "line search made no progress";
      break;
    }
    Pair pair{std::vector<double>(n), std::vector<double>(n), 0.0};
    for (std::size_t i = 0; i < n; ++i) {
      pair.s[i] = trial[i] - result.x[i];
      pair.y[i] = trial_gradient[i] - gradient[i];
    }
    const double curvature = dot(pair.s, pair.y);
    // The Wolfe curvature condition guarantees sᵀy > 0; a pair without it (a search that
    // gave up) would make H_k indefinite, so it is skipped.
    if (curvature > 1e-12 * std::sqrt(dot(pair.s, pair.s) * dot(pair.y, pair.y))) {
      pair.rho = 1.0 / curvature;
      if (static_cast<int>(history.size()) == settings.history) history.pop_front();
      history.push_back(std::move(pair));
    }
    result.x = trial;
    gradient = trial_gradient;
    result.loss = line.loss;
    ++result.iterations;
    const bool done = converged();
    if (progress && !progress(result.iterations, result.x, result.loss, gradient)) {
      if (!done) result.stop_reason = "stopped by the caller";
      break;
    }
    if (done) break;
  }
  result.gradient_max_norm = max_norm(gradient);
  if (result.stop_reason.empty()) result.stop_reason = "iteration limit";
  return result;
}

}  // namespace diffphys
