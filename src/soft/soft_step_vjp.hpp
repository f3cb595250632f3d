// soft/soft_step_vjp.hpp — the vector–Jacobian product of one soft step, shared by SoftRollout
// (soft_rollout.cpp) and the world's soft part (world/soft_part.cpp): the implicit function
// theorem at the step's minimiser, and the state adjoint's clipping and bookkeeping.
#pragma once

#include <span>
#include <vector>

#include "diffphys/soft.hpp"
#include "diffphys/soft_rollout.hpp"
#include "soft/step_system.hpp"

namespace diffphys::soft {

// Scratch of soft_step_vjp, sized on first use and reused across steps.
struct SoftStepVjpScratch {
  std::vector<double> target, w, previous_bar, mass_bar, mixed;
};

// Reverses step t at its minimiser x_{t+1} = `after` (docs/soft-bodies.md, "Gradients"): with
// ∇Φ(x*; x_t, v_t, θ, f_t) = 0 and H = ∇²Φ(x*), x̄* = x̄_{t+1} + v̄_{t+1}/h on free DOFs,
// H w = x̄*, and every input p gets p̄ = −(∂∇Φ/∂p)ᵀ w:
//   f̄_t = w (written to control_bar), θ̄ += −(∂∇Φ/∂θ)ᵀ w (into param_bar; the masses' and
//   gravity's share through the inertial term included), and (x̄_t, v̄_t) overwrite
//   (adjoint_x, adjoint_v) (through the prediction x̃ = x_t + h v_t and the lagged terms).
// `system` must hold step t's problem (set_problem with θ, x_t, v_t, f_t) and the factor of
// H at x_{t+1}. Returns the first stage whose result is not finite ("implicit solve",
// "mixed derivatives"), or nullptr.
const char* soft_step_vjp(SoftWorkspace::Impl& system, const SoftModel& model, const SoftParams& theta,
                          const SoftState& after, std::span<double> adjoint_x, std::span<double> adjoint_v,
                          std::span<double> control_bar, std::span<double> param_bar, SoftStepVjpScratch& scratch);

// (x̄_t, v̄_t) once every contribution of step t is in: clipped to `clip` in norm (0: off),
// the norm recorded in health.state_gradient_norm[t] (RolloutOptions::gradient_clip).
void finish_soft_state_adjoint(int step, std::span<double> adjoint_x, std::span<double> adjoint_v, double clip,
                               SoftGradientHealth& health);

}  // namespace diffphys::soft
