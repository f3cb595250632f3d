// tools/gradcheck_command.cpp — `diffphys gradcheck SCENE.json [--steps N]`: every analytic
// gradient of a rollout of the scene against central finite differences, as a table.
#include "gradcheck_command.hpp"

#include <cstdio>
#include <iostream>

#include "diffphys/gradcheck.hpp"
#include "diffphys/scene.hpp"
#include "soft_gradcheck_command.hpp"
#include "soft_simulate_command.hpp"

namespace diffphys::cli {

int run_gradcheck(const GradcheckOptions& options) {
  if (is_soft_scene(options.scene_path)) return run_soft_gradcheck(options);
  const Scene scene = load_scene(options.scene_path);
  GradientCheckOptions check;
  check.steps = options.steps;
  check.tolerance = options.tolerance;
  check.state_epsilon = options.state_epsilon;
  check.param_epsilon = options.param_epsilon;
  const GradientCheckReport report = check_gradients(scene, {}, check);
  std::printf("gradcheck  %s: %d steps of %g s, loss = weighted sum of every state over the trajectory\n",
              options.scene_path.c_str(), options.steps, scene.model.dt);
  std::printf("%-48s %16s %16s %12s\n", "gradient of", "analytic", "numeric", "rel. error");
  int failures = 0;
  for (const GradientCheckEntry& entry : report.entries) {
    const bool failed = !(entry.relative_error <= options.tolerance);
    failures += failed;
    if (options.only_failures && !failed) continue;
    std::printf("%-48s %16.9g %16.9g %12.3g%s\n", entry.name.c_str(), entry.analytic, entry.numeric,
                entry.relative_error, failed ? "  FAIL" : "");
  }
  std::printf("%zu gradients compared, worst relative error %.3g (tolerance %g): %s\n", report.entries.size(),
              report.worst_relative_error, options.tolerance, report.passed ? "all agree" : "DISAGREEMENT");
  if (!report.passed)
    std::cerr << "diffphys: " << failures << " gradient(s) disagree with central differences\n";
  return report.passed ? 0 : 3;
}

}  // namespace diffphys::cli
