// diffphys/least_squares.hpp — Levenberg–Marquardt for nonlinear least squares,
// min_x ½‖r(x)‖², where the Jacobian J = ∂r/∂x comes from the simulator exactly (one reverse
// pass per residual through Rollout::backward, or StepJacobians), never from differences.
//
// Gauss–Newton steps (JᵀJ + μ D) h = −Jᵀr with Marquardt's scaling (Moré 1978, "The
// Levenberg–Marquardt algorithm: implementation and theory"): D_i the largest (JᵀJ)_ii seen
// so far, floored at 1e-12 of the largest diagonal entry, so the method does not depend on
// the units of x and D never vanishes where a column of J does for a while; the damping update of Nielsen (1999) as given by Madsen,
// Nielsen & Tingleff, "Methods for non-linear least squares problems" (2004), Algorithm 3.16:
// after a step with gain ratio ρ > 0, μ ← μ · max(1/3, 1 − (2ρ − 1)³); after a rejected
// step, μ ← μ ν, ν ← 2ν.
//
// Where a loss is a sum of squared misses (a target state, observed trajectories), this
// uses what a first-order method throws away: the misses' directions. On the ball-throw
// experiment (Degrave et al. 2019 §2.1.1) it reaches the target where Adam stalls in a valley
// (docs/EXPERIMENTS.md).
//
//   LeastSquaresResult result = minimize_least_squares(
//       [&](std::span<const double> x, std::span<double> r, std::span<double> J) {
//         ... r = residuals at x; if (!J.empty()) J = ∂r/∂x, m × n row-major ...
//       }, m, x0);
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace diffphys {

// Writes the m residuals at x into `residuals` when it is not empty, and ∂r/∂x into `jacobian`
// (m × n, row-major) when that is not empty. The solver asks for the Jacobian alone (empty
// `residuals`) and only at accepted points, always right after the residuals at the same x,
// so a caller may reuse its last forward pass (a Rollout's tape) for the reverse passes.
using ResidualsAndJacobian =
    std::function<void(std::span<const double> x, std::span<double> residuals, std::span<double> jacobian)>;

struct LeastSquaresSettings {
  int max_iterations = 100;       // accepted steps (each needs one Jacobian)
  double initial_damping = 1e-3;  // μ₀, relative: the first step solves (JᵀJ + μ₀ D) h = −Jᵀr, D ≈ diag(JᵀJ)
  double gradient_tolerance = 1e-12;  // stop when ‖Jᵀr‖∞ ≤ this
  double step_tolerance = 1e-12;      // stop when ‖h‖ ≤ this · (‖x‖ + this)
  int max_rejections = 30;            // gives up at this many consecutive rejected steps
};

struct LeastSquaresResult {
  std::vector<double> x;  // the last accepted point
  std::vector<double> residuals;
  double cost = 0.0;        // ½‖r(x)‖²
  int iterations = 0;       // accepted steps
  int evaluations = 0;      // residual evaluations (trial points included)
  int jacobians = 0;        // Jacobian evaluations
  bool converged = false;   // met a tolerance, or the progress callback asked to stop
  std::string stop_reason;
};

// Called at x₀ (iteration 0) and after each accepted step with the new point and its
// residuals; return false to stop (e.g. once a target is met).
using LeastSquaresProgress = std::function<bool(int iteration, std::span<const double> x, double cost,
                                                std::span<const double> residuals)>;

// Minimises ½‖r(x)‖² from x0 over `residual_count` residuals. Throws Error for invalid
// settings, residual_count < 1, an empty x0, non-finite residuals at x0, or non-finite
// Jacobian entries at x0 or at any accepted point (naming the entry and the iteration); a
// trial point with non-finite residuals is a rejected step.
LeastSquaresResult minimize_least_squares(const ResidualsAndJacobian& residuals, int residual_count,
                                          std::span<const double> x0, const LeastSquaresSettings& settings = {},
                                          const LeastSquaresProgress& progress = {});

}  // namespace diffphys
