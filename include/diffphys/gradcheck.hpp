// diffphys/gradcheck.hpp — every analytic gradient of a rollout against central finite
// differences: the check behind `diffphys gradcheck` and the gradient tests.
//
// The loss is L = Σ_t Σ_b w_b·(p_b, z-axis of b, v_b, ω_b)(t) over the whole trajectory with
// fixed pseudo-random weights (seeded): it reaches every state component, the orientation
// through the body's z axis, at every step. Each entry — every parameter slice component,
// every tangent component of x_0 of every dynamic body, and a spread of controls — is
// compared as |analytic − numeric| / max(1, |numeric|), the numeric value from fourth-order
// central differences (steps: GradientCheckOptions); both sides run with the solver tolerance tightened to 1e-13 so
// that the differences are not solver noise. Parameters the backward pass reports as not
// differentiable at their value (Gradients::not_differentiable) are listed, not compared.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"

namespace diffphys {

struct GradientCheckEntry {
  std::string name;  // "body/ball/mass[0]", "x0/ball/angular_velocity[2]", "control/servo/t=3"
  double analytic = 0.0;
  double numeric = 0.0;
  double relative_error = 0.0;
};

struct GradientCheckReport {
  std::vector<GradientCheckEntry> entries;
  double worst_relative_error = 0.0;
  bool passed = false;  // every entry within tolerance
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

// controls: steps × nactuator (row-major), or empty for the scene's default controls held.
GradientCheckReport check_gradients(const Scene& scene, std::span<const double> controls,
                                    const GradientCheckOptions& options);

}  // namespace diffphys
