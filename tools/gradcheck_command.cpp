// tools/gradcheck_command.cpp — `diffphys gradcheck SCENE [--steps N]`: every analytic
// gradient of a rollout of any scene against central finite differences, as a table.
#include "gradcheck_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "diffphys/world_gradcheck.hpp"

namespace diffphys::cli {

int run_gradcheck(const GradcheckOptions& options) {
  const World world = load_scene_world(options.scene_path, options.scene);
  GradientCheckOptions check;
  check.steps = options.steps_given ? options.steps : default_gradcheck_steps(world);
  check.tolerance = options.tolerance;
  check.state_epsilon = options.state_epsilon;
  check.param_epsilon = options.param_epsilon;
  const WorldGradientCheckReport report = check_world_gradients(world, {}, check);
  std::printf("%s\n", report.description.c_str());
  for (const std::string& note : report.notes) std::printf("%s\n", note.c_str());

  std::printf("%-48s %16s %16s %10s %10s %10s\n", "gradient of", "analytic", "numeric", "FD error", "FD step",
              "rel. error");
  int failures = 0;
  double worst = 0.0;
  for (const GradientCheckEntry& entry : report.check.entries) {
    const bool failed = !(entry.relative_error <= options.tolerance);
    failures += failed;
    worst = std::max(worst, std::isnan(entry.relative_error) ? INFINITY : entry.relative_error);
    if (options.only_failures && !failed) continue;
    std::printf("%-48s %16.9g %16.9g %10.2g %10.2g %10.3g%s\n", entry.name.c_str(), entry.analytic, entry.numeric,
                entry.uncertainty, entry.step, entry.relative_error, failed ? "  FAIL" : "");
  }
  const bool passed = failures == 0;
  std::printf("%zu gradients compared, worst relative error %.3g (tolerance %g): %s\n", report.check.entries.size(), worst,
              options.tolerance, passed ? "all agree" : "DISAGREEMENT");
  if (!passed) std::cerr << "diffphys: " << failures << " gradient(s) disagree with central differences\n";
  return passed ? 0 : 3;
}

}  // namespace diffphys::cli
