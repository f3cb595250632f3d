// soft/soft_experiments.cpp — the soft-stiffness and mass-spring-adam experiments
// (include/diffphys/soft_experiments.hpp).
#include "diffphys/soft_experiments.hpp"

#include <chrono>
#include <cmath>

#include "diffphys/soft.hpp"
#include "diffphys/soft_mesh.hpp"
#include "diffphys/soft_rollout.hpp"

namespace diffphys::soft {

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

SoftStiffnessResult run_soft_stiffness_experiment(const SoftStiffnessOptions& options, std::ostream* log) {
  const auto start = std::chrono::steady_clock::now();
  SoftSpec spec;
  spec.name = "cantilever";
  spec.dt = 0.01;
  spec.tet_materials = {{"rubber", ElasticModel::NeoHookean, options.true_youngs, 0.3, 1000.0}};
  add_tet_box(spec, {0, 0, 0}, {0.3, 0.05, 0.05}, {options.cells_x, 1, 1}, 0);
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    if (spec.nodes[i][0] == 0.0) spec.pinned.push_back(static_cast<int>(i));
  SoftBuild built = build_soft(spec);
  SoftParams params = built.params;
  const auto youngs_index = static_cast<std::size_t>(built.model.layout.tet_youngs_modulus[0]);

  // The observation.
  SoftRollout rollout(built.model, params);
  rollout.run(built.state, {}, options.steps);
  std::vector<std::vector<double>> observed;
  for (int t = 0; t <= options.steps; ++t) observed.push_back(rollout.state(t).positions);

  // L(s) and dL/ds at s = log E.
  const auto evaluate = [&](double log_youngs, double& gradient) {
    params.values[youngs_index] = std::exp(log_youngs);
    rollout.run(built.state, {}, options.steps);
    double loss = 0.0;
    for (int t = 1; t <= options.steps; ++t) {
      const SoftState state = rollout.state(t);
      for (std::size_t k = 0; k < state.positions.size(); ++k) {
        const double d = state.positions[k] - observed[static_cast<std::size_t>(t)][k];
        loss += d * d;
      }
    }
    const SoftGradients g = rollout.backward([&](int t, const SoftState& state, std::span<double> dx, std::span<double>) {
      if (t == 0) return;
      for (std::size_t k = 0; k < state.positions.size(); ++k) dx[k] += 2.0 * (state.positions[k] - observed[static_cast<std::size_t>(t)][k]);
    });
    gradient = g.params[youngs_index] * std::exp(log_youngs);
    return loss;
  };

  SoftStiffnessResult result;
  result.true_youngs = options.true_youngs;
  result.initial_youngs = options.true_youngs * options.initial_factor;
  double s = std::log(result.initial_youngs), gradient = 0.0;
  double loss = evaluate(s, gradient);
  double previous_s = s, previous_gradient = gradient;
  double curvature = 0.0;  // secant estimate of d²L/ds²
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    result.youngs_history.push_back(std::exp(s));
    result.loss_history.push_back(loss);
    if (log != nullptr)
      *log << "iteration " << iteration << ": E = " << std::exp(s) << " Pa, loss " << loss << ", dL/dlogE " << gradient << "\n";
    // Newton–secant step in s, or a unit gradient step before curvature is known (or if
    // the secant says the loss is not convex here); backtracking on L.
    double step = curvature > 0.0 ? -gradient / curvature : -std::copysign(0.5, gradient);
    step = std::clamp(step, -1.0, 1.0);
    double trial_gradient = 0.0, trial_loss = 0.0;
    for (int halving = 0; halving < 30; ++halving) {
      trial_loss = evaluate(s + step, trial_gradient);
      if (trial_loss < loss) break;
      step *= 0.5;
    }
    previous_s = s;
    previous_gradient = gradient;
    s += step;
    loss = trial_loss;
    gradient = trial_gradient;
    if (s != previous_s) curvature = (gradient - previous_gradient) / (s - previous_s);
    result.iterations = iteration + 1;
    if (std::abs(step) < options.tolerance) {
      result.converged = true;
      break;
    }
  }
  result.estimated_youngs = std::exp(s);
  result.relative_error = std::abs(result.estimated_youngs - options.true_youngs) / options.true_youngs;
  result.seconds = seconds_since(start);
  if (log != nullptr)
    *log << "estimated E = " << result.estimated_youngs << " Pa (true " << options.true_youngs << ", error "
         << 100.0 * result.relative_error << " %) after " << result.iterations << " iterations, " << result.seconds << " s\n";
  return result;
}

MassSpringAdamResult run_mass_spring_adam_experiment(const MassSpringAdamOptions& options, std::ostream* log) {
  SoftSpec spec;
  spec.name = "mass_spring_grid";
  spec.dt = 0.01;
  spec.gravity = {0, 0, 0};
  const int n = options.grid;
  const double spacing = 0.1;
  const auto index = [n](int i, int j) { return i + n * j; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      // Released from a sheared, wavy shape; the springs' rest lengths are the square grid's.
      spec.nodes.push_back({spacing * i + 0.03 * j, spacing * j, 0.02 * std::sin(1.7 * i + 0.9 * j)});
      spec.node_masses.push_back(0.1);
    }
  const auto add = [&](int a, int b, double rest) { spec.springs.push_back({a, b, 100.0, rest, 0.05}); };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (i + 1 < n) add(index(i, j), index(i + 1, j), spacing);
      if (j + 1 < n) add(index(i, j), index(i, j + 1), spacing);
      if (i + 1 < n && j + 1 < n) {
        add(index(i, j), index(i + 1, j + 1), spacing * std::sqrt(2.0));
        add(index(i + 1, j), index(i, j + 1), spacing * std::sqrt(2.0));
      }
    }
  const SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  MassSpringAdamResult result;
  SoftState newton_state = built.state, adam_state = built.state, next;
  SoftStepOptions adam_options;
  adam_options.solver = SoftSolver::Adam;
  adam_options.adam.learning_rate = options.adam_learning_rate;
  adam_options.adam.tolerance = options.adam_tolerance;
  adam_options.adam.max_iterations = options.adam_max_iterations;
  for (int step = 0; step < options.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    const SoftStepStatus newton = soft_step(built.model, built.params, newton_state, {}, next, workspace);
    result.newton_seconds += seconds_since(start);
    std::swap(newton_state, next);
    start = std::chrono::steady_clock::now();
    const SoftStepStatus adam = soft_step(built.model, built.params, adam_state, {}, next, workspace, adam_options);
    result.adam_seconds += seconds_since(start);
    std::swap(adam_state, next);
    result.newton_iterations += newton.iterations;
    result.adam_iterations += adam.iterations;
    result.newton_failures += newton.converged ? 0 : 1;
    result.adam_failures += adam.converged ? 0 : 1;
    for (std::size_t k = 0; k < newton_state.positions.size(); ++k)
      result.max_position_difference = std::max(result.max_position_difference, std::abs(newton_state.positions[k] - adam_state.positions[k]));
  }
  const SoftEnergies newton_energy = soft_energies(built.model, built.params, newton_state);
  const SoftEnergies adam_energy = soft_energies(built.model, built.params, adam_state);
  result.final_energy_newton = newton_energy.kinetic + newton_energy.elastic;
  result.final_energy_adam = adam_energy.kinetic + adam_energy.elastic;
  if (log != nullptr) {
    *log << "mass-spring grid " << n << " x " << n << " (" << built.model.springs.size() << " springs), " << options.steps
         << " implicit-Euler steps of " << spec.dt << " s\n";
    *log << "  newton: " << result.newton_iterations << " iterations, " << result.newton_seconds << " s, "
         << result.newton_failures << " unconverged steps, final energy " << result.final_energy_newton << " J\n";
    *log << "  adam:   " << result.adam_iterations << " iterations, " << result.adam_seconds << " s, "
         << result.adam_failures << " unconverged steps, final energy " << result.final_energy_adam << " J\n";
    *log << "  max |x_newton − x_adam| = " << result.max_position_difference << " m\n";
  }
  return result;
}

}  // namespace diffphys::soft
