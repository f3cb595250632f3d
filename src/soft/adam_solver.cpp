// soft/adam_solver.cpp — the article's first-order variant: minimise the step objective Φ by
// Adam (Kingma & Ba 2015, Alg. 1) instead of Newton, as Rojas (2020) relaxes a mass–spring
// system with PyTorch's optimiser. Each update is capped by the terms' continuous-collision
// bound so iterates stay feasible. Converged when ‖∇Φ‖∞ ≤ settings.tolerance (N).
#include <algorithm>
#include <cmath>

#include "soft/step_system.hpp"

namespace diffphys::soft {

SoftStepStatus adam_minimise(SoftWorkspace::Impl& system, std::span<double> positions,
                             const AdamSettings& settings, std::vector<double>* objective_history) {
  SoftStepStatus status;
  status.converged = false;
  std::vector<double>& first = system.trial;       // m
  std::vector<double>& second = system.direction;  // v
  std::vector<double>& step = system.adam_step;
  std::fill(first.begin(), first.end(), 0.0);
  std::fill(second.begin(), second.end(), 0.0);
  double beta1_power = 1.0, beta2_power = 1.0;
  for (int iteration = 0; iteration < settings.max_iterations; ++iteration) {
    system.derivatives(positions, false);
    double residual = 0.0;
    for (const double g : system.gradient) residual = std::max(residual, std::abs(g));
    status.residual = residual;
    status.iterations = iteration;
    if (residual <= settings.tolerance) {
      status.converged = true;
      break;
    }
    beta1_power *= settings.beta1;
    beta2_power *= settings.beta2;
    double step_norm = 0.0;
    for (std::size_t k = 0; k < positions.size(); ++k) {
      const double g = system.gradient[k];
      first[k] = settings.beta1 * first[k] + (1.0 - settings.beta1) * g;
      second[k] = settings.beta2 * second[k] + (1.0 - settings.beta2) * g * g;
      const double corrected_first = first[k] / (1.0 - beta1_power);
      const double corrected_second = second[k] / (1.0 - beta2_power);
      step[k] = system.is_pinned_dof(k) ? 0.0
                                        : -settings.learning_rate * corrected_first / (std::sqrt(corrected_second) + settings.epsilon);
      step_norm = std::max(step_norm, std::abs(step[k]));
    }
    const double alpha = system.max_feasible_step(positions, step);
    for (std::size_t k = 0; k < positions.size(); ++k) positions[k] += alpha * step[k];
    status.step_norm = alpha * step_norm;
    if (objective_history != nullptr) objective_history->push_back(system.objective(positions));
  }
  if (!status.converged) {
    status.iterations = settings.max_iterations;
    system.derivatives(positions, false);
    status.residual = 0.0;
    for (const double g : system.gradient) status.residual = std::max(status.residual, std::abs(g));
    status.message = "Adam did not reach the gradient tolerance within " + std::to_string(settings.max_iterations) + " iterations";
  }
  status.objective = system.objective(positions);
  return status;
}

}  // namespace diffphys::soft
