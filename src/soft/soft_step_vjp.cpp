// soft/soft_step_vjp.cpp — one soft step's VJP by the implicit function theorem, and the state
// adjoint's clipping (soft_step_vjp.hpp).
#include "soft/soft_step_vjp.hpp"

#include <cmath>

#include "math/finite.hpp"

namespace diffphys::soft {

const char* soft_step_vjp(SoftWorkspace::Impl& system, const SoftModel& model, const SoftParams& theta,
                          const SoftState& after, std::span<double> adjoint_x, std::span<double> adjoint_v,
                          std::span<double> control_bar, std::span<double> param_bar, SoftStepVjpScratch& scratch) {
  const auto dofs = static_cast<std::size_t>(model.dof_count());
  const auto nodes = static_cast<std::size_t>(model.node_count);
  const double h = model.dt;
  scratch.target.resize(dofs);
  scratch.w.resize(dofs);
  scratch.previous_bar.assign(dofs, 0.0);
  scratch.mass_bar.assign(nodes, 0.0);
  scratch.mixed.assign(theta.values.size(), 0.0);
  std::vector<double>& w = scratch.w;
  const char* non_finite = nullptr;
  for (std::size_t k = 0; k < dofs; ++k) scratch.target[k] = system.is_pinned_dof(k) ? 0.0 : adjoint_x[k] + adjoint_v[k] / h;
  system.solve(scratch.target, w);
  for (std::size_t k = 0; k < dofs; ++k)
    if (system.is_pinned_dof(k)) w[k] = 0.0;
  if (!all_finite(w)) non_finite = "implicit solve";
  std::copy(w.begin(), w.end(), control_bar.begin());
  const TermInputs inputs = system.inputs(after.positions);
  for (const auto& term : system.terms) term->add_mixed_vjp(inputs, w, scratch.mixed, scratch.previous_bar);
  if (non_finite == nullptr && (!all_finite(scratch.mixed) || !all_finite(scratch.previous_bar))) non_finite = "mixed derivatives";
  for (std::size_t p = 0; p < scratch.mixed.size(); ++p) param_bar[p] -= scratch.mixed[p];
  // The inertial term ½h⁻² m ‖x − x̃‖² − m g·x: its masses and gravity.
  const double* gravity = theta.values.data() + model.layout.gravity;
  for (std::size_t k = 0; k < dofs; ++k) {
    if (system.is_pinned_dof(k)) continue;
    scratch.mass_bar[k / 3] -= w[k] * ((after.positions[k] - system.predicted[k]) / (h * h) - gravity[k % 3]);
    param_bar[static_cast<std::size_t>(model.layout.gravity) + k % 3] += system.masses[k / 3] * w[k];
  }
  for (std::size_t i = 0; i < nodes; ++i)
    for (int s = model.mass_begin[i]; s < model.mass_begin[i + 1]; ++s)
      param_bar[static_cast<std::size_t>(model.mass_param[static_cast<std::size_t>(s)])] +=
          scratch.mass_bar[i] * model.mass_share[static_cast<std::size_t>(s)];
  // x_t and v_t: through the prediction x̃ = x_t + h v_t, the lagged terms, and v_{t+1} = (x_{t+1} − x_t)/h.
  for (std::size_t k = 0; k < dofs; ++k) {
    const double m = system.is_pinned_dof(k) ? 0.0 : system.masses[k / 3];
    const double through_prediction = m * w[k] / (h * h);
    const double x_bar = through_prediction - scratch.previous_bar[k] - adjoint_v[k] / h;
    adjoint_v[k] = through_prediction * h;
    adjoint_x[k] = x_bar;
  }
  return non_finite;
}

void finish_soft_state_adjoint(int step, std::span<double> adjoint_x, std::span<double> adjoint_v, double clip,
                               SoftGradientHealth& health) {
  double squared = 0.0;
  for (std::size_t k = 0; k < adjoint_x.size(); ++k) squared += adjoint_x[k] * adjoint_x[k] + adjoint_v[k] * adjoint_v[k];
  double norm = std::sqrt(squared);
  if (clip > 0 && norm > clip) {
    const double scale = clip / norm;
    for (std::size_t k = 0; k < adjoint_x.size(); ++k) {
      adjoint_x[k] *= scale;
      adjoint_v[k] *= scale;
    }
    norm = clip;
    ++health.clipped_steps;
  }
  health.state_gradient_norm[static_cast<std::size_t>(step)] = norm;
}

}  // namespace diffphys::soft
