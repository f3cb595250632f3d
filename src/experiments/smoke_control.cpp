// experiments/smoke_control.cpp — see smoke_control.hpp. The problem: a smoke blob (buoyancy
// 4 m/s² per unit) at (0.5, 0.3) m in a 1 × 1.5 m box with free-slip sides, no-slip floor and
// ceiling; the target: the same blob centred at (0.75, 0.8) m. The controls are the forces of
// every cell at every step (the world's "fluid/force", 2 ncell per step), started at zero
// (the uncontrolled plume). The loss
//   L = Σ_c (s_T,c − target_c)² Δx² + λ h Σ_t Σ_c |f_t,c|² Δx²,   λ = 1e-4,
// the second term keeping the forces (and so the CFL number) moderate. Adam on the forces with
// the exact gradient of WorldRollout::backward; an iterate whose rollout fails (a CFL number
// beyond max_cfl) is rejected and the rate halved. The scene goes through parse_world, the
// same path as a scene file.
#include "experiments/smoke_control.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/optimizer.hpp"
#include "diffphys/world.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kForcePenalty = 1e-4;

struct SmokeProblem {
  int cells_x, cells_y, steps, iterations;
  double spacing, dt, learning_rate;
};

std::string scene_text(const SmokeProblem& p) {
  nlohmann::json blob = {{"type", "blob"}, {"center", {0.5, 0.3}}, {"radius", 0.2}, {"value", 1.0}};
  nlohmann::json fluid = {{"name", "smoke control"},
                          {"resolution", {p.cells_x, p.cells_y}},
                          {"spacing", p.spacing},
                          {"dt", p.dt},
                          {"viscosity", 1e-4},
                          {"walls", {{"left", {{"type", "free_slip"}}}, {"right", {{"type", "free_slip"}}}}},
                          {"scalars", {{{"name", "smoke"}, {"buoyancy", 4.0}, {"initial", {blob}}}}}};
  return nlohmann::json{{"fluid", fluid}}.dump();
}

// The blob's shape (1 − d²/r²)² moved to (0.75, 0.8) m.
std::vector<double> target_density(const fluid::FluidModel& model) {
  std::vector<double> target(static_cast<std::size_t>(model.cell_count()), 0.0);
  for (int j = 0; j < model.ny; ++j)
    for (int i = 0; i < model.nx; ++i) {
      const double dx = (i + 0.5) * model.spacing - 0.75, dy = (j + 0.5) * model.spacing - 0.8;
      const double q = (dx * dx + dy * dy) / (0.2 * 0.2);
      if (q < 1.0) target[static_cast<std::size_t>(j * model.nx + i)] = (1.0 - q) * (1.0 - q);
    }
  return target;
}

}  // namespace

ExperimentResult run_smoke_control(const ExperimentOptions& options) {
  const SmokeProblem problem = options.quick ? SmokeProblem{16, 24, 15, 40, 1.0 / 16, 0.04, 0.3}
                                             : SmokeProblem{32, 48, 30, 100, 1.0 / 32, 0.02, 0.3};
  const World world = parse_world(scene_text(problem), "<smoke-control>");
  const fluid::FluidModel& model = world.fluid->model;
  const WorldParams params = world.default_params();
  const WorldState initial = world.initial_state();
  const std::vector<double> target = target_density(model);
  const auto cells = static_cast<std::size_t>(model.cell_count());
  const double area = model.spacing * model.spacing;
  const int steps = problem.steps;
  std::vector<double> forces(static_cast<std::size_t>(steps) * static_cast<std::size_t>(world.layout().control_count), 0.0);
  WorldRollout rollout(world, params);

  // The loss of `f` and its gradient into `gradient`; throws Error when the rollout fails.
  const auto evaluate = [&](const std::vector<double>& f, std::vector<double>& gradient) {
    rollout.run(initial, f, steps);
    const std::vector<double>& smoke = rollout.final_state().fluid.scalars;
    double loss = 0.0;
    for (std::size_t c = 0; c < cells; ++c) loss += (smoke[c] - target[c]) * (smoke[c] - target[c]) * area;
    for (const double x : f) loss += kForcePenalty * model.dt * x * x * area;
    const WorldGradients g = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& dx) {
      if (t != steps) return;
      for (std::size_t c = 0; c < cells; ++c) dx.fluid_scalars[c] += 2.0 * (x.fluid.scalars[c] - target[c]) * area;
    });
    gradient = g.controls;
    for (std::size_t k = 0; k < f.size(); ++k) gradient[k] += 2.0 * kForcePenalty * model.dt * f[k] * area;
    return loss;
  };

  Adam adam(OptimizerSettings(problem.learning_rate));
  CsvTable curve({"iteration", "loss", "seconds"});
  std::vector<double> gradient, candidate;
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const double initial_loss = evaluate(forces, gradient);
  double loss = initial_loss, best = initial_loss;
  int rejected = 0;
  curve.add_row({0.0, loss, seconds()});
  if (options.progress) *options.progress << "iteration 0: loss " << loss << " (uncontrolled plume)\n";
  for (int iteration = 1; iteration <= problem.iterations; ++iteration) {
    candidate = forces;
    std::vector<double> step_gradient = gradient;
    adam.step(candidate, step_gradient);
    try {
      loss = evaluate(candidate, gradient);
      forces.swap(candidate);
    } catch (const Error& error) {
      // The forces drove the flow past max_cfl: keep the last iterate, halve the rate.
      // (`gradient` and `loss` are still the last iterate's: the failed run threw before them.)
      ++rejected;
      adam.set_learning_rate(0.5 * adam.settings().learning_rate);
      if (options.progress) *options.progress << "iteration " << iteration << ": rejected (" << error.what() << ")\n";
    }
    best = std::min(best, loss);
    curve.add_row({static_cast<double>(iteration), loss, seconds()});
    if (options.progress) *options.progress << "iteration " << iteration << ": loss " << loss << "\n";
  }
  const double wall = seconds();
  const auto folder = experiment_folder(options, "smoke-control");
  curve.write(folder / "loss.csv");
  // The final, target and uncontrolled densities, one row per cell (i, j).
  rollout.run(initial, forces, steps);
  const std::vector<double> final_density = rollout.final_state().fluid.scalars;
  rollout.run(initial, {}, steps);
  const std::vector<double> uncontrolled = rollout.final_state().fluid.scalars;
  CsvTable fields({"i", "j", "final", "target", "uncontrolled"});
  for (int j = 0; j < model.ny; ++j)
    for (int i = 0; i < model.nx; ++i) {
      const auto c = static_cast<std::size_t>(j * model.nx + i);
      fields.add_row({static_cast<double>(i), static_cast<double>(j), final_density[c], target[c], uncontrolled[c]});
    }
  fields.write(folder / "density.csv");

  nlohmann::json json;
  json["experiment"] = "smoke-control";
  json["quick"] = options.quick;
  json["grid"] = {model.nx, model.ny};
  json["steps"] = steps;
  json["iterations"] = problem.iterations;
  json["initial_loss"] = initial_loss;
  json["final_loss"] = loss;
  json["best_loss"] = best;
  json["loss_ratio"] = loss / initial_loss;
  json["rejected_iterates"] = rejected;
  json["seconds"] = wall;
  json["loss_curve"] = (folder / "loss.csv").string();
  json["density"] = (folder / "density.csv").string();
  return {json.dump(), loss <= 0.25 * initial_loss};
}

}  // namespace diffphys::experiments
