// tools/gradcheck_command.cpp — `diffphys gradcheck SCENE.json [--steps N]`: every analytic
// gradient of a rollout of the scene against central finite differences, as a table.
#include "gradcheck_command.hpp"

#include <cstdio>

#include "diffphys/gradcheck.hpp"
#include "diffphys/scene.hpp"
#include "coupled_gradcheck_command.hpp"
#include "coupled_simulate_command.hpp"
#include "gradcheck_table.hpp"
#include "soft_gradcheck_command.hpp"
#include "soft_simulate_command.hpp"

namespace diffphys::cli {

int run_gradcheck(const GradcheckOptions& options) {
  // Coupled scenes have a "soft" key too: they are recognised first.
  if (is_coupled_scene(options.scene_path)) return run_coupled_gradcheck(options);
  if (is_soft_scene(options.scene_path)) return run_soft_gradcheck(options);
  Scene scene = load_scene(options.scene_path, options.robot.urdf());
  if (options.formulation == "convex") set_formulation(scene, Formulation::Convex);
  if (options.formulation == "complementarity") set_formulation(scene, Formulation::Complementarity);
  GradientCheckOptions check;
  check.steps = options.steps;
  check.tolerance = options.tolerance;
  check.state_epsilon = options.state_epsilon;
  check.param_epsilon = options.param_epsilon;
  const GradientCheckReport report = check_gradients(scene, {}, check);
  std::printf("gradcheck  %s: %d steps of %g s (%s formulation), loss = weighted sum of every state over the trajectory\n",
              options.scene_path.c_str(), options.steps, scene.model.dt,
              scene.model.solver.formulation == Formulation::Convex ? "convex" : "complementarity");
  return print_gradcheck_table(report.entries, options);
}

}  // namespace diffphys::cli
