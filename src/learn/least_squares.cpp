// learn/least_squares.cpp — Levenberg–Marquardt (diffphys/least_squares.hpp): Marquardt's
// scaled damping (Moré 1978) with Nielsen's update (Madsen, Nielsen & Tingleff 2004, Alg. 3.16).
#include "diffphys/least_squares.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "math/finite.hpp"
#include "solve/dense_cholesky.hpp"

namespace diffphys {
namespace {

double half_squared_norm(std::span<const double> r) {
  double sum = 0.0;
  for (const double v : r) sum += v * v;
  return 0.5 * sum;
}

void require_finite(std::span<const double> values, const char* what, int iteration) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw Error(message("least squares: ", what, " entry ", i, " is ", values[i], " at iteration ", iteration));
}

// JᵀJ (n × n) and Jᵀr for a row-major m × n Jacobian.
void normal_equations(std::span<const double> jacobian, std::span<const double> residuals, std::size_t n,
                      std::vector<double>& JtJ, std::vector<double>& Jtr) {
  const std::size_t m = residuals.size();
  std::fill(JtJ.begin(), JtJ.end(), 0.0);
  std::fill(Jtr.begin(), Jtr.end(), 0.0);
  for (std::size_t k = 0; k < m; ++k) {
    const double* row = jacobian.data() + k * n;
    for (std::size_t i = 0; i < n; ++i) {
      Jtr[i] += row[i] * residuals[k];
      for (std::size_t j = 0; j <= i; ++j) JtJ[i * n + j] += row[i] * row[j];
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) JtJ[j * n + i] = JtJ[i * n + j];
}

}  // namespace

LeastSquaresResult minimize_least_squares(const ResidualsAndJacobian& residuals, int residual_count,
                                          std::span<const double> x0, const LeastSquaresSettings& settings,
                                          const LeastSquaresProgress& progress) {
  if (residual_count < 1) throw Error(message("least squares: residual_count must be at least 1, got ", residual_count));
  if (x0.empty()) throw Error("least squares: no unknowns (x0 is empty)");
  if (!(settings.initial_damping > 0) || !std::isfinite(settings.initial_damping))
    throw Error(message("least squares: initial_damping must be positive and finite, got ", settings.initial_damping));
  if (settings.max_iterations < 0)
    throw Error(message("least squares: max_iterations must not be negative, got ", settings.max_iterations));
  if (!(settings.gradient_tolerance >= 0) || !(settings.step_tolerance >= 0))
    throw Error(message("least squares: tolerances must not be negative, got gradient ", settings.gradient_tolerance,
                        " and step ", settings.step_tolerance));
  if (settings.max_rejections < 1)
    throw Error(message("least squares: max_rejections must be at least 1, got ", settings.max_rejections));

  const std::size_t n = x0.size(), m = static_cast<std::size_t>(residual_count);
  LeastSquaresResult result;
  result.x.assign(x0.begin(), x0.end());
  result.residuals.assign(m, 0.0);
  std::vector<double> jacobian(m * n), JtJ(n * n), Jtr(n), scale(n, 0.0), system(n * n), step(n), trial(n),
      trial_residuals(m);

  residuals(result.x, result.residuals, {});
  ++result.evaluations;
  require_finite(result.residuals, "residual", 0);
  result.cost = half_squared_norm(result.residuals);
  // Moré's scaling: the largest diag(JᵀJ) seen so far, per unknown, so that D never shrinks
  // to zero where a column of J vanishes for a while.
  auto linearise = [&](int iteration) {
    residuals(result.x, {}, jacobian);  // the forward pass at x is the caller's last
    ++result.jacobians;
    require_finite(jacobian, "Jacobian", iteration);
    normal_equations(jacobian, result.residuals, n, JtJ, Jtr);
    double largest = 0.0;
    for (std::size_t i = 0; i < n; ++i) largest = std::max(largest, JtJ[i * n + i]);
    for (std::size_t i = 0; i < n; ++i)
      scale[i] = std::max({scale[i], JtJ[i * n + i], 1e-12 * largest, 1e-300});
  };
  if (progress && !progress(0, result.x, result.cost, result.residuals)) {
    result.converged = true;
    result.stop_reason = "stopped by the progress callback";
    return result;
  }
  linearise(0);

  double damping = settings.initial_damping, growth = 2.0;
  int rejections = 0;
  while (true) {
    double gradient_norm = 0.0;
    for (const double g : Jtr) gradient_norm = std::max(gradient_norm, std::abs(g));
    if (gradient_norm <= settings.gradient_tolerance) {
      result.converged = true;
      result.stop_reason = "gradient below tolerance";
      return result;
    }
    if (result.iterations >= settings.max_iterations) {
      result.stop_reason = "reached max_iterations";
      return result;
    }
    // (JᵀJ + μ D) h = −Jᵀr
    std::copy(JtJ.begin(), JtJ.end(), system.begin());
    for (std::size_t i = 0; i < n; ++i) system[i * n + i] += damping * scale[i];
    bool accepted = false;
    double gain = 0.0;
    if (solve::cholesky_factorize(system.data(), n, n)) {
      for (std::size_t i = 0; i < n; ++i) step[i] = -Jtr[i];
      solve::cholesky_solve(system.data(), n, n, step.data());
      double step_norm = 0.0, x_norm = 0.0;
      for (std::size_t i = 0; i < n; ++i) step_norm += step[i] * step[i], x_norm += result.x[i] * result.x[i];
      if (std::sqrt(step_norm) <= settings.step_tolerance * (std::sqrt(x_norm) + settings.step_tolerance)) {
        result.converged = true;
        result.stop_reason = "step below tolerance";
        return result;
      }
      for (std::size_t i = 0; i < n; ++i) trial[i] = result.x[i] + step[i];
      residuals(trial, trial_residuals, {});
      ++result.evaluations;
      if (all_finite(trial_residuals)) {
        // The model's decrease L(0) − L(h) = ½ hᵀ(μ D h − Jᵀr) > 0 for h ≠ 0.
        double predicted = 0.0;
        for (std::size_t i = 0; i < n; ++i) predicted += 0.5 * step[i] * (damping * scale[i] * step[i] - Jtr[i]);
        const double trial_cost = half_squared_norm(trial_residuals);
        gain = (result.cost - trial_cost) / predicted;
        accepted = predicted > 0 && gain > 0;
        if (accepted) {
          result.x.swap(trial);
          result.residuals.swap(trial_residuals);
          result.cost = trial_cost;
        }
      }
    }
    if (!accepted) {
      if (++rejections >= settings.max_rejections) {
        result.stop_reason = "no decrease after max_rejections damping increases";
        return result;
      }
      damping *= growth;
      growth *= 2.0;
      continue;
    }
    rejections = 0;
    ++result.iterations;
    damping *= std::max(1.0 / 3.0, 1.0 - std::pow(2.0 * gain - 1.0, 3));
    growth = 2.0;
    if (progress && !progress(result.iterations, result.x, result.cost, result.residuals)) {
      result.converged = true;
      result.stop_reason = "stopped by the progress callback";
      return result;
    }
    linearise(result.iterations);
  }
}

}  // namespace diffphys
