// diffphys/gradcheck.hpp — every analytic gradient of a rollout against central finite
// differences: the check behind `diffphys gradcheck` and the gradient tests.
//
// The loss is L = Σ_t Σ_b w_b·(p_b, z-axis of b, v_b, ω_b)(t) over the whole trajectory with
// fixed pseudo-random weights (seeded): it reaches every state component, the orientation
// through the body's z axis, at every step. Each entry — every parameter slice component,
// every tangent component of x_0 of every dynamic or kinematic body, and a spread of controls — is
// compared by compare_with_finite_differences (below): fourth-order central differences
// with an estimate of their own error, judged relative to the gradient's size with an
// absolute floor at that error. Both sides run with the solver tolerance tightened to 1e-13
// so that the differences are not solver noise. Parameters the backward pass reports as not
// differentiable at their value (Gradients::not_differentiable) are listed, not compared.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"

namespace diffphys {

struct GradientCheckEntry {
  std::string name;  // "body/ball/mass[0]", "x0/ball/angular_velocity[2]", "control/servo/t=3"
  double analytic = 0.0;
  double numeric = 0.0;
  // |analytic − numeric| / max(|analytic|, |numeric|, floor/tolerance), floor = kNoiseFloorFactor
  // · uncertainty + kRoundOffFloor · (the largest component of the whole analytic gradient):
  // the error relative to the gradient's own size, except where that size is below what the
  // finite differences can resolve or what round-off leaves of the analytic side. The entry
  // passes when it is ≤ the tolerance; NaN fails.
  double relative_error = 0.0;
  // estimated error of numeric at the step used: |D(h) − D(2h)|, at least the round-off of D(h)
  double uncertainty = 0.0;
  double step = 0.0;         // the finite-difference step h the numeric value comes from
};

// The absolute floor of the pass rule, in units of the estimated finite-difference error:
// |D(h) − D(2h)| estimates D(h)'s error only to within a small factor (noise adds in
// quadrature, truncation is overestimated 15×), so a difference below 4 of them is not evidence.
inline constexpr double kNoiseFloorFactor = 4.0;
// What the analytic side is accurate to, relative to the gradient's largest component: the
// backward pass solves the forward step's linear systems transposed, so its round-off and the
// forward solves' residuals (tolerance 1e-13) are amplified by their conditioning. Measured on
// the test scenes where the loss does not depend on the input at all (finite differences
// ~1e-13): up to 1.6e-10 of the largest component (a universal joint held by two velocity
// servos, 100 steps: force on the held link 2.5e-8 beside 233), 5e-11 (a hull resting on a
// box), 4e-12 (a box resting on the ground). An entry differing by less than this passes.
inline constexpr double kRoundOffFloor = 1e-9;

struct GradientCheckReport {
  std::vector<GradientCheckEntry> entries;
  double worst_relative_error = 0.0;
  bool passed = false;  // every entry's relative_error within tolerance
  std::vector<std::string> skipped;  // parameters at a point where they are not differentiable
};

struct GradientCheckOptions {
  int steps = 100;
  double tolerance = 1e-5;
  // Steps of the fourth-order central differences. Too large a step crosses non-smooth
  // events (a contact closing a step earlier); too small a one turns the solver's residual
  // into noise (~1e-12 / step). Parameters use a step relative to their size.
  double state_epsilon = 1e-6;  // x_0 (tangent) and controls, absolute
  double param_epsilon = 1e-6;  // θ: step max(param_epsilon·|θ|, 1e-7), or param_epsilon at θ = 0
  std::uint32_t seed = 1;     // loss weights
  int control_samples = 8;    // controls checked, spread over the trajectory
};

// Which way finite differences may move an input from its value: both (central), or only up
// or down for a parameter that sits on the bound of its range (a friction or a damping at 0).
enum class DifferenceSide { Both, Above, Below };

// One analytic derivative against finite differences of loss_at(δ), the loss with the input
// moved by δ. D(h) is the fourth-order central difference (8(L(h) − L(−h)) − (L(2h) −
// L(−2h)))/12h (second-order one-sided (−3L(0) + 4L(±h) − L(±2h))/±2h on a bound); its error
// is estimated as |D(h) − D(2h)|. When the entry does not agree to the tolerance at the
// given step, the step is searched over h·2^k, k = −3…10 (each level adds two evaluations),
// and the level whose estimate changes least with the step is kept: a step too small turns
// round-off into the result, one too large crosses non-smooth events. A loss_at that throws
// diffphys::Error on one side (an input at its bound) is differenced on the other side.
// gradient_scale: the largest |component| of the whole analytic gradient (kRoundOffFloor).
GradientCheckEntry compare_with_finite_differences(std::string name, double analytic,
                                                   const std::function<double(double)>& loss_at, double step,
                                                   double tolerance, DifferenceSide side = DifferenceSide::Both,
                                                   double gradient_scale = 0.0);

// controls: steps × nactuator (row-major), or empty for the scene's default controls held.
GradientCheckReport check_gradients(const Scene& scene, std::span<const double> controls,
                                    const GradientCheckOptions& options);

}  // namespace diffphys
