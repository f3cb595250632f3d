// soft/newton_solver.cpp — Newton's method with a backtracking line search on the step
// objective Φ (Nocedal & Wright, "Numerical optimization", Alg. 3.1 with a modified Hessian,
// §3.4): the direction solves (∇²Φ + τI) d = −∇Φ with τ = 0 unless the Cholesky factorisation is
// not positive definite, then τ grows tenfold until it is. The first trial step is capped
// by the terms' continuous-collision bound, and infeasible trials (Φ = ∞) are backtracked
// like any other. Converged when the Newton step ‖d‖∞ ≤ tolerance · h, or when Φ has stopped
// decreasing measurably for two iterations in a row (the minimum is resolved to round-off: in
// stiff, finely meshed problems the Newton step stalls at cond(H)·ε before reaching the
// tolerance).
#include <algorithm>
#include <cmath>

#include "soft/step_system.hpp"

namespace diffphys::soft {

namespace {
double max_abs(std::span<const double> values) {
  double m = 0.0;
  for (const double v : values) m = std::max(m, std::abs(v));
  return m;
}
}  // namespace

SoftStepStatus newton_minimise(SoftWorkspace::Impl& system, std::span<double> positions,
                               std::vector<double>* objective_history) {
  const SoftModel& model = *system.model;
  const NewtonSettings& settings = model.newton;
  const double step_tolerance = settings.tolerance * model.dt;
  SoftStepStatus status;
  status.converged = false;
  double phi = system.objective(positions);
  int stalled_iterations = 0;
  if (objective_history != nullptr) objective_history->push_back(phi);
  for (int iteration = 0; iteration < settings.max_iterations; ++iteration) {
    system.derivatives(positions, true);
    // Direction: modified Newton (τ ≥ 0 until the factorisation is positive definite).
    double diagonal_scale = 0.0;
    for (std::size_t k = 0; k < system.diagonal_slots.size(); ++k)
      diagonal_scale = std::max(diagonal_scale, std::abs(system.hessian.valuePtr()[system.diagonal_slots[k]]));
    double shift = 0.0;
    bool factorised = system.factorise(0.0);
    while (!factorised && shift < 1e12 * std::max(1.0, diagonal_scale)) {
      shift = shift == 0.0 ? 1e-8 * std::max(1.0, diagonal_scale) : 10.0 * shift;
      factorised = system.factorise(shift);
    }
    if (shift > 0.0) ++status.regularised;
    if (!factorised) {
      status.message = "the Hessian could not be made positive definite";
      break;
    }
    for (double& g : system.gradient) g = -g;
    system.solve(system.gradient, system.direction);
    for (double& g : system.gradient) g = -g;
    double slope = 0.0;
    for (std::size_t k = 0; k < positions.size(); ++k) slope += system.gradient[k] * system.direction[k];
    status.step_norm = max_abs(system.direction);
    status.iterations = iteration + 1;
    if (status.step_norm <= step_tolerance || slope == 0.0) {
      status.converged = true;
      // Take the (tiny) last step when it is feasible and does not increase Φ.
      for (std::size_t k = 0; k < positions.size(); ++k) system.trial[k] = positions[k] + system.direction[k];
      const double last = system.objective(system.trial);
      if (last <= phi) {
        std::copy(system.trial.begin(), system.trial.end(), positions.begin());
        phi = last;
        if (objective_history != nullptr) objective_history->push_back(phi);
      }
      break;
    }
    // Backtracking (Armijo) from the largest feasible step.
    double alpha = system.max_feasible_step(positions, system.direction);
    bool accepted = false;
    // Differences below the round-off of Φ cannot be resolved: allow that much slack.
    const double slack = 1e-14 * (1.0 + std::abs(phi));
    while (alpha > 1e-12) {
      for (std::size_t k = 0; k < positions.size(); ++k) system.trial[k] = positions[k] + alpha * system.direction[k];
      const double trial_phi = system.objective(system.trial);
      if (trial_phi <= phi + settings.armijo * alpha * slope + slack) {
        stalled_iterations = trial_phi >= phi - slack ? stalled_iterations + 1 : 0;
        std::copy(system.trial.begin(), system.trial.end(), positions.begin());
        phi = trial_phi;
        accepted = true;
        break;
      }
      alpha *= 0.5;
    }
    if (objective_history != nullptr && accepted) objective_history->push_back(phi);
    if (accepted && stalled_iterations >= 2) {
      status.converged = true;
      break;
    }
    if (!accepted) {
      ++status.line_search_failures;
      status.message = "the line search found no decrease along the Newton direction";
      break;
    }
  }
  if (!status.converged && status.message.empty())
    status.message = "no convergence within " + std::to_string(settings.max_iterations) + " Newton iterations";
  // The gradient (and, for a rollout that will be differentiated, the factorised Hessian) at
  // the returned positions. The last Newton iteration factorised ∇²Φ one step earlier, at
  // x_k, not at the returned x_k + α d: the backward pass needs the Hessian at the returned
  // minimiser itself, so it is refactorised here rather than reused from the iteration.
  system.derivatives(positions, system.factorise_at_solution);
  status.residual = max_abs(system.gradient);
  if (system.factorise_at_solution) system.solution_definite = system.factorise_for_adjoint();
  status.objective = phi;
  return status;
}

}  // namespace diffphys::soft
