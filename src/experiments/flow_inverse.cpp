// experiments/flow_inverse.cpp — see flow_inverse.hpp. The problem: a 1 × 1 m box with
// free-slip walls, viscosity 1e-3 m²/s, a passive dye s₀ = ½ + ¼ sin 4πx + ¼ sin 4πy (its
// gradient vanishes only at isolated points, so the flow moves it visibly almost everywhere).
// The true initial flow comes from the stream function
//   ψ = A (sin πx sin 2πy + ½ sin 2πx sin πy),   A = 0.05 m²/s,
// differenced on the MAC grid (u = ∂ψ/∂y at the vertical faces, v = −∂ψ/∂x at the horizontal
// ones from ψ at the cell corners), so it is exactly divergence-free in the discrete sense and
// zero through the walls; its largest speed is ~0.35 m/s. The dye is observed at steps T/3,
// 2T/3 and T; the unknown is the initial velocity at every face, started at rest. The loss
//   L(u₀) = Σ_obs Σ_c (s_t,c(u₀) − ŝ_t,c)² Δx²
// is minimised by L-BFGS (diffphys/lbfgs.hpp) with the exact gradient dL/du₀ of
// FluidRollout::backward. An iterate the fluid refuses (CFL above max_cfl) is a non-finite
// loss, which makes the line search shorten its step.
//
// The figure of merit is the recovered flow, not only the fitted dye: its error against the
// true field at t = 0 and after the first step. They differ: the estimate may carry a
// divergent part, which the first step's self-advection uses before its projection removes it,
// and which the dye sees only through that one advection.
#include "experiments/flow_inverse.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/fluid.hpp"
#include "diffphys/fluid_rollout.hpp"
#include "diffphys/lbfgs.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kStreamAmplitude = 0.05;  // A, m²/s

struct InverseProblem {
  int cells, steps, iterations;
  double dt;
};

fluid::FluidSpec inverse_spec(const InverseProblem& p) {
  fluid::FluidSpec spec;
  spec.name = "flow inverse";
  spec.nx = spec.ny = p.cells;
  spec.spacing = 1.0 / p.cells;
  spec.dt = p.dt;
  spec.viscosity = 1e-3;
  spec.scalar_count = 1;
  spec.scalar_names = {"dye"};
  for (fluid::WallSpec& wall : spec.walls) wall.type = fluid::WallType::FreeSlip;
  return spec;
}

double stream_function(double x, double y) {
  using std::numbers::pi;
  return kStreamAmplitude * (std::sin(pi * x) * std::sin(2 * pi * y) + 0.5 * std::sin(2 * pi * x) * std::sin(pi * y));
}

// u = ∂ψ/∂y, v = −∂ψ/∂x by differences of ψ at the corners (the layout of diffphys/fluid.hpp).
std::vector<double> true_velocities(const fluid::FluidModel& model) {
  const int nx = model.nx, ny = model.ny;
  const double h = model.spacing;
  std::vector<double> velocities(static_cast<std::size_t>((model.u_count() + model.v_count())), 0.0);
  const std::size_t nu = static_cast<std::size_t>((nx + 1) * ny);
  for (int j = 0; j < ny; ++j)
    for (int i = 1; i < nx; ++i)  // the wall faces stay 0 (ψ's sines are 0 there only to round-off)
      velocities[static_cast<std::size_t>(j * (nx + 1) + i)] =
          (stream_function(i * h, (j + 1) * h) - stream_function(i * h, j * h)) / h;
  for (int j = 1; j < ny; ++j)
    for (int i = 0; i < nx; ++i)
      velocities[nu + static_cast<std::size_t>(j * nx + i)] =
          -(stream_function((i + 1) * h, j * h) - stream_function(i * h, j * h)) / h;
  return velocities;
}

std::vector<double> initial_dye(const fluid::FluidModel& model) {
  using std::numbers::pi;
  std::vector<double> dye(static_cast<std::size_t>(model.cell_count()));
  for (int j = 0; j < model.ny; ++j)
    for (int i = 0; i < model.nx; ++i) {
      const double x = (i + 0.5) * model.spacing, y = (j + 0.5) * model.spacing;
      dye[static_cast<std::size_t>(j * model.nx + i)] = 0.5 + 0.25 * std::sin(4 * pi * x) + 0.25 * std::sin(4 * pi * y);
    }
  return dye;
}

double relative_error(const std::vector<double>& estimate, const std::vector<double>& truth) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t k = 0; k < truth.size(); ++k) {
    difference += (estimate[k] - truth[k]) * (estimate[k] - truth[k]);
    norm += truth[k] * truth[k];
  }
  return std::sqrt(difference / norm);
}

}  // namespace

ExperimentResult run_flow_inverse(const ExperimentOptions& options) {
  const InverseProblem problem = options.quick ? InverseProblem{16, 15, 200, 0.04} : InverseProblem{32, 30, 400, 0.02};
  const fluid::FluidBuild built = fluid::build_fluid(inverse_spec(problem));
  const fluid::FluidModel& model = built.model;
  const fluid::FluidParams& params = built.params;
  const int steps = problem.steps;
  const std::vector<int> observed_steps = {steps / 3, 2 * steps / 3, steps};
  const double area = model.spacing * model.spacing;
  const auto cells = static_cast<std::size_t>(model.cell_count());

  fluid::FluidState truth = built.state;
  truth.velocities = true_velocities(model);
  truth.scalars = initial_dye(model);
  fluid::FluidRollout rollout(model, params);
  rollout.run(truth, {}, steps);
  std::vector<std::vector<double>> observations;
  for (const int t : observed_steps) observations.push_back(rollout.state(t).scalars);

  fluid::FluidState guess = truth;
  const auto loss_and_gradient = [&](std::span<const double> velocities, std::span<double> gradient) {
    guess.velocities.assign(velocities.begin(), velocities.end());
    try {
      rollout.run(guess, {}, steps);
    } catch (const Error&) {
      std::fill(gradient.begin(), gradient.end(), 0.0);
      return std::numeric_limits<double>::infinity();  // refused (CFL): the line search steps back
    }
    double loss = 0.0;
    for (std::size_t k = 0; k < observed_steps.size(); ++k) {
      const std::vector<double> dye = rollout.state(observed_steps[k]).scalars;
      for (std::size_t c = 0; c < cells; ++c) loss += (dye[c] - observations[k][c]) * (dye[c] - observations[k][c]) * area;
    }
    const fluid::FluidGradients g = rollout.backward(
        [&](int t, const fluid::FluidState& state, std::span<double>, std::span<double> dL_dscalars) {
          for (std::size_t k = 0; k < observed_steps.size(); ++k)
            if (t == observed_steps[k])
              for (std::size_t c = 0; c < cells; ++c) dL_dscalars[c] += 2.0 * (state.scalars[c] - observations[k][c]) * area;
        });
    std::copy(g.initial_velocities.begin(), g.initial_velocities.end(), gradient.begin());
    return loss;
  };

  const std::vector<double> at_rest(static_cast<std::size_t>((model.u_count() + model.v_count())), 0.0);
  std::vector<double> scratch(at_rest.size());
  const double initial_loss = loss_and_gradient(at_rest, scratch);
  CsvTable curve({"iteration", "loss", "seconds"});
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  curve.add_row({0.0, initial_loss, 0.0});
  if (options.progress) *options.progress << "iteration 0: loss " << initial_loss << " (the fluid at rest)\n";
  LbfgsSettings settings;
  settings.max_iterations = problem.iterations;
  settings.gradient_tolerance = 1e-14;
  const LbfgsResult result = minimize_lbfgs(
      loss_and_gradient, at_rest, settings, [&](int iteration, std::span<const double>, double loss, std::span<const double>) {
        curve.add_row({static_cast<double>(iteration), loss, seconds()});
        if (options.progress) *options.progress << "iteration " << iteration << ": loss " << loss << "\n";
        return true;
      });
  const double wall = seconds();

  // The recovered flow against the true one, at t = 0 and after one step (both projected).
  const double error_initial = relative_error(result.x, truth.velocities);
  rollout.run(truth, {}, 1);
  const std::vector<double> truth_after_step = rollout.final_state().velocities;
  guess.velocities = result.x;
  rollout.run(guess, {}, 1);
  const double error_after_step = relative_error(rollout.final_state().velocities, truth_after_step);

  const auto folder = experiment_folder(options, "flow-inverse");
  curve.write(folder / "loss.csv");
  // Cell-centred velocities (face averages), true and recovered, one row per cell.
  CsvTable field({"i", "j", "u_true", "v_true", "u_recovered", "v_recovered"});
  const std::size_t nu = static_cast<std::size_t>((model.nx + 1) * model.ny);
  const auto centred = [&](const std::vector<double>& v, int i, int j, bool vertical) {
    return vertical ? 0.5 * (v[nu + static_cast<std::size_t>(j * model.nx + i)] + v[nu + static_cast<std::size_t>((j + 1) * model.nx + i)])
                    : 0.5 * (v[static_cast<std::size_t>(j * (model.nx + 1) + i)] + v[static_cast<std::size_t>(j * (model.nx + 1) + i + 1)]);
  };
  for (int j = 0; j < model.ny; ++j)
    for (int i = 0; i < model.nx; ++i)
      field.add_row({static_cast<double>(i), static_cast<double>(j), centred(truth.velocities, i, j, false),
                     centred(truth.velocities, i, j, true), centred(result.x, i, j, false), centred(result.x, i, j, true)});
  field.write(folder / "velocity.csv");

  nlohmann::json json;
  json["experiment"] = "flow-inverse";
  json["quick"] = options.quick;
  json["grid"] = {model.nx, model.ny};
  json["steps"] = steps;
  json["observed_steps"] = observed_steps;
  json["iterations"] = result.iterations;
  json["evaluations"] = result.evaluations;
  json["stop_reason"] = result.stop_reason;
  json["initial_loss"] = initial_loss;
  json["final_loss"] = result.loss;
  json["loss_ratio"] = result.loss / initial_loss;
  json["velocity_error_initial"] = error_initial;
  json["velocity_error_after_step"] = error_after_step;
  json["seconds"] = wall;
  json["loss_curve"] = (folder / "loss.csv").string();
  json["velocity"] = (folder / "velocity.csv").string();
  return {json.dump(), result.loss <= 1e-3 * initial_loss && error_after_step <= 0.1};
}

}  // namespace diffphys::experiments
