// diffphys/gradient_health.hpp — the numerical health of a rollout's gradient (the overview
// paper's "numerical-stability tooling"): how fast the sensitivity of the final state to
// earlier states grows or dies back over the horizon, where an explosion starts (the step and
// the backward stage that amplifies), where a NaN or Inf first appears, and what else the
// backward pass saw (contact changes, clipped steps, unconverged or unhealthy forward steps).
// `diffphys gradcheck SCENE --health` prints it; the experiments write it beside their curves.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "diffphys/rollout.hpp"
#include "diffphys/world.hpp"

namespace diffphys {

// s_t = max over probes of ‖(∂x_T/∂x_t)ᵀ u‖ / ‖u‖ for random cotangents u at x_T (T + 1
// entries, s_T = 1): the final state's sensitivity to x_t, one exact backward pass of the
// world's rollout per probe (no decay, no clipping: the rollout's own dynamics), the parts'
// norms combined and ‖u‖ taken after what the backward pass masks (static bodies, pinned
// nodes). A lower bound of the Jacobian's norm that random probes make tight up to a small
// factor. With joints (maximal coordinates) the rigid bodies' u is first restricted to the
// joint manifold's tangent (J M⁻¹ u = 0 for the pose and the velocity halves): a component off
// the manifold would read the projection's 1/h as a sensitivity. Any world (rigid, soft or
// both; a rigid Scene is World(name, source, scene, std::nullopt)); `rollout` must have run
// `params`.
struct TerminalSensitivity {
  std::vector<double> values;  // s_t, t = 0…T
  // The first probe's rigid backward pass: its stage gains say which stage amplifies (the
  // loss's own pass may start from a cotangent off the manifold, which the last step reads as
  // 1/h); empty without rigid bodies.
  GradientHealth probe_health;
};
TerminalSensitivity terminal_sensitivity(const World& world, const WorldParams& params, const WorldRollout& rollout,
                                         int probes = 4, std::uint32_t seed = 1);

// One GradientHealth for a world's backward pass: |dL/dx_t| of the parts combined, the first
// NaN/Inf of either part (the soft part's stage prefixed "soft: "), the rigid part's contact
// changes, clipping and stage gains, both parts' convergence.
GradientHealth combined_health(const WorldGradients& gradients);

struct GradientHealthReport {
  int steps = 0;
  double dt = 0.0;
  // Growth of s_t per step back: exp of the least-squares slope of log s_t against T − t over
  // the finite, positive entries; per second: that ^ (1/dt).
  double growth_per_step = 1.0, growth_per_second = 1.0;
  double total_growth = 1.0;  // max_t s_t / s_T: the largest amplification over the horizon
  double smallest = 1.0;      // min_t s_t / s_T
  // The largest one-step amplification s_t / s_{t+1} and its step: a growth that is one jump
  // (an impact) rather than a rate shows here, and its fitted rate then means little.
  double largest_step_gain = 1.0;
  int largest_step = -1;
  // "stable", "exploding" (some s_t ≥ 10⁶, or ≥ 10³ and growing tenfold per second or
  // faster), "vanishing" (some s_t ≤ 10⁻⁶, or ≤ 10⁻³ and shrinking tenfold per second or
  // faster), "non-finite" (a NaN or Inf in the backward pass).
  std::string verdict = "stable";
  // Exploding: the step (counting back from T, as the rollout counts) where s_t first passes
  // 10× of s_T; and, over the steps reversed just before it, the backward stage that raised
  // the adjoint most above the step's input (stage_gain is cumulative: stage k is credited
  // with max(1, c_k)/max(1, c_{k−1}), so stages that shrink the velocity adjoint while the
  // positions' adjoint passes around them are not read as amplifiers), and its mean gain per
  // step there (1: no stage raised it).
  int onset_step = -1;
  std::string onset_stage;
  double onset_stage_gain = 0.0;
  // The backward pass of the loss it was given (GradientHealth).
  int first_non_finite_step = -1;
  std::string first_non_finite_stage;
  double largest_state_gradient = 0.0;  // max_t |dL/dx_t|
  int contact_changes = 0;
  int clipped_steps = 0;
  bool solver_converged = true;
  int first_unhealthy_step = -1;
  std::string state_health_message;
};

// health: the loss's backward pass (Gradients::health); sensitivity: terminal_sensitivity.
GradientHealthReport analyze_gradient_health(const GradientHealth& health, const TerminalSensitivity& sensitivity,
                                             double dt);

// The report as lines of text, then a table of s_t, |dL/dx_t| and the probe's stage gains at
// up to `rows` steps spread over the horizon.
void print_gradient_health(std::ostream& out, const GradientHealthReport& report, const GradientHealth& health,
                           const TerminalSensitivity& sensitivity, int rows = 20);

// Per step t = 0…T: t, s_t, |dL/dx_t| and the probe's three stage gains of step t (empty at
// T), as CSV.
void write_gradient_health_csv(std::ostream& out, const GradientHealth& health, const TerminalSensitivity& sensitivity);

}  // namespace diffphys
