// experiments/soft_experiments_commands.cpp — see soft_experiments_commands.hpp: options by
// variant (--quick shrinks the problems), the figures as JSON, the curves as CSV in --out.
#include "experiments/soft_experiments_commands.hpp"

#include <nlohmann/json.hpp>

#include "diffphys/soft_experiments.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {

ExperimentResult run_soft_stiffness(const ExperimentOptions& options) {
  soft::SoftStiffnessOptions settings;
  if (options.quick) {
    settings.cells_x = 4;
    settings.steps = 20;
  }
  const soft::SoftStiffnessResult result = soft::run_soft_stiffness_experiment(settings, options.progress);
  CsvTable curve({"iteration", "youngs_modulus_pa", "loss"});  // the two histories run together
  for (std::size_t i = 0; i < result.loss_history.size(); ++i)
    curve.add_row({static_cast<double>(i), result.youngs_history[i], result.loss_history[i]});
  const auto curve_path = experiment_folder(options, "soft-stiffness") / "loss.csv";
  curve.write(curve_path);
  nlohmann::json json;
  json["experiment"] = "soft-stiffness";
  json["quick"] = options.quick;
  json["true_youngs_pa"] = result.true_youngs;
  json["initial_youngs_pa"] = result.initial_youngs;
  json["estimated_youngs_pa"] = result.estimated_youngs;
  json["relative_error"] = result.relative_error;
  json["iterations"] = result.iterations;
  json["seconds"] = result.seconds;
  json["converged"] = result.converged;
  json["loss_curve"] = curve_path.string();
  return {json.dump(), result.converged && result.relative_error < 0.01};
}

ExperimentResult run_mass_spring_adam(const ExperimentOptions& options) {
  soft::MassSpringAdamOptions settings;
  if (options.quick) {
    settings.grid = 4;
    settings.steps = 20;
  }
  const soft::MassSpringAdamResult result = soft::run_mass_spring_adam_experiment(settings, options.progress);
  nlohmann::json json;
  json["experiment"] = "mass-spring-adam";
  json["quick"] = options.quick;
  json["newton"] = {{"iterations", result.newton_iterations},
                    {"seconds", result.newton_seconds},
                    {"failed_steps", result.newton_failures},
                    {"final_energy_j", result.final_energy_newton}};
  json["adam"] = {{"iterations", result.adam_iterations},
                  {"seconds", result.adam_seconds},
                  {"failed_steps", result.adam_failures},
                  {"final_energy_j", result.final_energy_adam}};
  json["max_position_difference_m"] = result.max_position_difference;
  const bool success =
      result.newton_failures == 0 && result.adam_failures == 0 && result.max_position_difference < 1e-5;
  return {json.dump(), success};
}

}  // namespace diffphys::experiments
