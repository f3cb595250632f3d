// experiments/drag_shape.cpp — see drag_shape.hpp. The problem: a 3 × 1.5 m tank of still
// fluid (ν = 0.01 m²/s, free-slip walls) through which an elliptic solid of area π r₀²
// (r₀ = 0.15 m) is towed along x at 0.5 m/s from (0.8, 0.75) m for 2 s (Re = 2 r₀ V/ν = 15).
// Its shape is one number, the log aspect ratio ρ = ln(a/b) (a along the motion, b across:
// a = r₀ e^{ρ/2}, b = r₀ e^{−ρ/2}); the loss is the mean drag −F_x over the second half of the
// tow, when the wake has formed. ρ starts broadside (a/b = ½) and moves by Adam on dL/dρ from
// the fluid's exact adjoint, reversing every step with the drag's cotangent
// (fluid_step_vjp's obstacle_forces_bar), bounded to [−ln 3, ln 3] (the thin shape stays
// above two cells across). A scan of L over ρ, forward only, is the check: the known answer
// (a body long along its motion meets less drag than one held broadside) and where the
// scan's least drag lies.
#include "experiments/drag_shape.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/optimizer.hpp"
#include "experiments/experiment_io.hpp"
#include "fluid/fluid_step.hpp"

namespace diffphys::experiments {
namespace {

struct DragProblem {
  int cells_x, cells_y, steps, iterations, scan_points;
  double bound;  // |ρ| ≤ bound
};

constexpr double kRadius = 0.15, kSpeed = 0.5, kLearningRate = 0.2;

fluid::FluidSpec tank(const DragProblem& p) {
  fluid::FluidSpec spec;
  spec.name = "towing tank";
  spec.nx = p.cells_x;
  spec.ny = p.cells_y;
  spec.spacing = 3.0 / p.cells_x;
  spec.dt = 2.0 / p.steps;
  spec.viscosity = 0.01;
  spec.scalar_count = 0;
  for (fluid::WallSpec& wall : spec.walls) wall.type = fluid::WallType::FreeSlip;
  fluid::ObstacleSpec body;
  body.name = "body";
  body.center = {0.8, 0.75};
  body.semi_axes = {kRadius, kRadius};
  body.velocity = {kSpeed, 0.0};
  spec.obstacles = {body};
  return spec;
}

// The mean drag over the tow's second half, and (when `gradient` is given) dL/dρ.
class TowingTank {
 public:
  explicit TowingTank(const DragProblem& problem)
      : built_(fluid::build_fluid(tank(problem))),
        workspace_(built_.model),
        states_(static_cast<std::size_t>(problem.steps) + 1),
        records_(static_cast<std::size_t>(problem.steps), std::vector<double>(fluid::step_record_size(built_.model))),
        steps_(problem.steps) {}

  const fluid::FluidModel& model() const { return built_.model; }

  double drag(double rho, double* gradient) {
    fluid::FluidParams params = built_.params;
    const std::span<double> axes = params.slice(built_.model, "fluid/obstacle/body/semi_axes");
    axes[0] = kRadius * std::exp(0.5 * rho);
    axes[1] = kRadius * std::exp(-0.5 * rho);
    const int first_averaged = steps_ / 2;
    const double weight = 1.0 / (steps_ - first_averaged);
    states_[0] = built_.state;
    double loss = 0.0;
    for (int t = 0; t < steps_; ++t) {
      const auto k = static_cast<std::size_t>(t);
      const fluid::FluidStepStatus status =
          fluid::fluid_step_recorded(built_.model, params, states_[k], {}, states_[k + 1], workspace_,
                                     gradient != nullptr ? std::span<double>(records_[k]) : std::span<double>());
      if (!status.converged) throw Error(message("drag-shape: ", status.message));
      if (t >= first_averaged) loss -= weight * workspace_.obstacle_forces()[0];
    }
    if (gradient == nullptr) return loss;
    std::vector<double> velocities_bar(states_[0].velocities.size(), 0.0), velocities_bar_in(velocities_bar.size());
    std::vector<double> params_bar(params.values.size(), 0.0), no_scalars;
    for (int t = steps_ - 1; t >= 0; --t) {
      const auto k = static_cast<std::size_t>(t);
      const double forces_bar[2] = {t >= first_averaged ? -weight : 0.0, 0.0};
      std::fill(velocities_bar_in.begin(), velocities_bar_in.end(), 0.0);
      fluid::FluidStepStatus status;
      fluid::fluid_step_vjp(built_.model, params, states_[k], {}, records_[k], velocities_bar, no_scalars,
                            velocities_bar_in, no_scalars, {}, params_bar, workspace_, status, forces_bar);
      if (!status.converged) throw Error(message("drag-shape: an adjoint solve missed its tolerance at step ", t));
      velocities_bar.swap(velocities_bar_in);
    }
    const int offset = built_.model.layout.obstacles;  // center (2), then semi_axes (2)
    // a = r₀ e^{ρ/2}, b = r₀ e^{−ρ/2}: dL/dρ = (a ∂L/∂a − b ∂L/∂b) / 2.
    *gradient = 0.5 * (axes[0] * params_bar[static_cast<std::size_t>(offset + 2)] -
                       axes[1] * params_bar[static_cast<std::size_t>(offset + 3)]);
    return loss;
  }

 private:
  fluid::FluidBuild built_;
  fluid::FluidWorkspace workspace_;
  std::vector<fluid::FluidState> states_;
  std::vector<std::vector<double>> records_;
  int steps_;
};

}  // namespace

ExperimentResult run_drag_shape(const ExperimentOptions& options) {
  const DragProblem problem = options.quick ? DragProblem{48, 24, 60, 20, 7, std::log(3.0)}
                                            : DragProblem{96, 48, 100, 30, 13, std::log(3.0)};
  TowingTank tank(problem);
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  // The scan: L over ρ, forward only.
  const auto folder = experiment_folder(options, "drag-shape");
  CsvTable scan({"rho", "aspect_ratio", "semi_axis_along", "semi_axis_across", "drag"});
  double scan_best_rho = 0.0, scan_best = 0.0;
  const double scan_spacing = 2.0 * problem.bound / (problem.scan_points - 1);
  for (int k = 0; k < problem.scan_points; ++k) {
    const double rho = -problem.bound + k * scan_spacing;
    const double drag = tank.drag(rho, nullptr);
    scan.add_row({rho, std::exp(rho), kRadius * std::exp(0.5 * rho), kRadius * std::exp(-0.5 * rho), drag});
    if (k == 0 || drag < scan_best) {
      scan_best = drag;
      scan_best_rho = rho;
    }
    if (options.progress) *options.progress << "scan a/b = " << std::exp(rho) << ": drag " << drag << "\n";
  }
  scan.write(folder / "scan.csv");

  // The check of dL/dρ at the start against a central difference (ε = 1e-4 on ρ ~ 1).
  const double start_rho = -std::log(2.0);
  double start_gradient = 0.0;
  const double start_drag = tank.drag(start_rho, &start_gradient);
  const double epsilon = 1e-4;
  const double central = (tank.drag(start_rho + epsilon, nullptr) - tank.drag(start_rho - epsilon, nullptr)) / (2 * epsilon);

  // Adam on ρ, kept inside the bounds.
  Adam adam{OptimizerSettings(kLearningRate)};
  CsvTable curve({"iteration", "rho", "aspect_ratio", "drag", "gradient", "seconds"});
  std::vector<double> rho{start_rho}, gradient{start_gradient};
  double drag = start_drag;
  curve.add_row({0.0, rho[0], std::exp(rho[0]), drag, gradient[0], seconds()});
  for (int iteration = 1; iteration <= problem.iterations; ++iteration) {
    adam.step(rho, gradient);
    rho[0] = std::clamp(rho[0], -problem.bound, problem.bound);
    drag = tank.drag(rho[0], &gradient[0]);
    curve.add_row({static_cast<double>(iteration), rho[0], std::exp(rho[0]), drag, gradient[0], seconds()});
    if (options.progress)
      *options.progress << "iteration " << iteration << ": a/b = " << std::exp(rho[0]) << ", drag " << drag
                        << ", dL/drho " << gradient[0] << "\n";
  }
  curve.write(folder / "optimisation.csv");

  const bool streamlined = rho[0] > 0.0;
  const bool lower = drag <= 0.8 * start_drag;
  const bool near_scan = std::abs(rho[0] - scan_best_rho) <= scan_spacing;
  nlohmann::json json;
  json["experiment"] = "drag-shape";
  json["quick"] = options.quick;
  json["grid"] = {tank.model().nx, tank.model().ny};
  json["steps"] = problem.steps;
  json["reynolds_number"] = 2 * kRadius * kSpeed / 0.01;
  json["start_aspect_ratio"] = std::exp(start_rho);
  json["start_drag"] = start_drag;
  json["start_gradient"] = start_gradient;
  json["start_gradient_central_difference"] = central;
  json["final_aspect_ratio"] = std::exp(rho[0]);
  json["final_drag"] = drag;
  json["drag_ratio"] = drag / start_drag;
  json["scan_best_aspect_ratio"] = std::exp(scan_best_rho);
  json["scan_best_drag"] = scan_best;
  json["iterations"] = problem.iterations;
  json["seconds"] = seconds();
  json["scan"] = (folder / "scan.csv").string();
  json["optimisation"] = (folder / "optimisation.csv").string();
  return {json.dump(), streamlined && lower && near_scan};
}

}  // namespace diffphys::experiments
