// diffphys/lbfgs.hpp — limited-memory BFGS (Nocedal & Wright, Numerical Optimization, 2nd
// ed., Algorithm 7.5) with the two-loop recursion for H_k ∇f (Algorithm 7.4), the initial
// scaling H_k⁰ = (sᵀy / yᵀy) I (eq. 7.20) and a line search that satisfies the strong Wolfe
// conditions (Algorithms 3.5 and 3.6, cubic interpolation in the zoom).
//
// Unlike the first-order optimisers of diffphys/optimizer.hpp, L-BFGS evaluates the loss
// itself during its line search, so it takes the loss-and-gradient function:
//
//   LbfgsResult result = minimize_lbfgs([&](std::span<const double> x, std::span<double> g) {
//     ... run the rollout at x, write dL/dx into g ...; return loss;
//   }, x0);
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace diffphys {

// Returns f(x) and writes ∇f(x) into `gradient` (same size as x).
using LossAndGradient = std::function<double(std::span<const double> x, std::span<double> gradient)>;

struct LbfgsSettings {
  int history = 10;  // m: (s, y) pairs kept
  int max_iterations = 200;
  double gradient_tolerance = 1e-8;   // stop when ‖∇f‖∞ ≤ this
  double loss_tolerance = 0.0;        // stop when f ≤ this (a target loss; 0: off)
  double sufficient_decrease = 1e-4;  // c₁ of the Wolfe conditions
  double curvature = 0.9;             // c₂ of the strong Wolfe conditions (c₁ < c₂ < 1)
  int max_line_search_evaluations = 30;
};

// One accepted step of a strong-Wolfe line search along `direction` from x.
struct LineSearchResult {
  double step = 0.0;  // α
  double loss = 0.0;  // f(x + α d)
  int evaluations = 0;
  bool satisfied = false;  // both strong Wolfe conditions hold at α
};

// Nocedal & Wright Algorithm 3.5/3.6 from (x, f(x), ∇f(x)) along a descent direction d
// (∇fᵀd < 0), first trying `initial_step`. On return `trial` = x + α d and
// `trial_gradient` = ∇f(trial). Throws Error if d is not a descent direction.
LineSearchResult strong_wolfe_line_search(const LossAndGradient& loss, std::span<const double> x, double loss_at_x,
                                          std::span<const double> gradient_at_x, std::span<const double> direction,
                                          double initial_step, const LbfgsSettings& settings,
                                          std::vector<double>& trial, std::vector<double>& trial_gradient);

struct LbfgsResult {
  std::vector<double> x;  // the best point found
  double loss = 0.0;
  double gradient_max_norm = 0.0;  // ‖∇f(x)‖∞
  int iterations = 0;
  int evaluations = 0;     // calls of the loss function
  bool converged = false;  // met gradient_tolerance or loss_tolerance
  std::string stop_reason;
};

// Called after each iteration k = 1, 2, ... with the new iterate; return false to stop.
using LbfgsProgress =
    std::function<bool(int iteration, std::span<const double> x, double loss, std::span<const double> gradient)>;

// Minimises `loss` from x0. Throws Error for invalid settings or a non-finite loss or
// gradient at x0 (naming the entry); a non-finite value during a line search shortens the step.
LbfgsResult minimize_lbfgs(const LossAndGradient& loss, std::span<const double> x0, const LbfgsSettings& settings = {},
                           const LbfgsProgress& progress = {});

}  // namespace diffphys
