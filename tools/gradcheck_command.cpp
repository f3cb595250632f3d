// tools/gradcheck_command.cpp — `diffphys gradcheck SCENE [--steps N]`: every analytic
// gradient of a rollout of any scene against central finite differences, as a table.
#include "gradcheck_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include <fstream>
#include <random>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/gradient_health.hpp"
#include "diffphys/world_gradcheck.hpp"

namespace diffphys::cli {
namespace {

// The rollout of the scene's rigid part with its default controls held, reversed once with
// L = Σ_t w·x_t (fixed pseudo-random weights, as the finite-difference check's loss reaches
// every state component) and by the terminal probes; prints the report.
int run_health(const World& world, const GradcheckOptions& options, int steps) {
  if (!world.has_rigid() || world.has_soft())
    throw Error(message("gradcheck --health: ", options.scene_path, " is a ", world.kind(),
                        " scene; the health report covers rigid scenes (docs/gradients.md)"));
  const Scene& scene = *world.rigid;
  const auto actuators = static_cast<std::size_t>(scene.model.actuator_count());
  std::vector<double> controls(static_cast<std::size_t>(steps) * actuators);
  for (std::size_t t = 0; t < static_cast<std::size_t>(steps); ++t)
    std::copy(scene.controls.begin(), scene.controls.end(), controls.begin() + static_cast<std::ptrdiff_t>(t * actuators));
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, controls, steps);
  std::mt19937 random(1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> weights;
  const Gradients gradients = rollout.backward([&](int, const State&, std::span<double> gradient) {
    if (weights.empty()) {
      weights.resize(gradient.size());
      for (double& w : weights) w = uniform(random);
    }
    for (std::size_t k = 0; k < gradient.size(); ++k) gradient[k] += weights[k];
  });
  const TerminalSensitivity sensitivity = terminal_sensitivity(scene.model, scene.params, rollout);
  const GradientHealthReport report = analyze_gradient_health(gradients.health, sensitivity, scene.model.dt);
  std::cout << options.scene_path << ": " << steps << " steps of " << scene.model.dt
            << " s; s_t = max over 4 random unit u of |(dx_T/dx_t)^T u|; L = sum_t w.x_t for |dL/dx_t| and the "
               "probe's stage gains\n";
  print_gradient_health(std::cout, report, gradients.health, sensitivity);
  if (!options.health_csv.empty()) {
    std::ofstream csv(options.health_csv);
    if (!csv) throw Error(message("gradcheck --health-csv: cannot write ", options.health_csv));
    write_gradient_health_csv(csv, gradients.health, sensitivity);
    std::cout << "per step: " << options.health_csv << "\n";
  }
  return report.verdict == "non-finite" ? 3 : 0;
}

}  // namespace

int run_gradcheck(const GradcheckOptions& options) {
  const World world = load_scene_world(options.scene_path, options.scene);
  if (options.health)
    return run_health(world, options, options.steps_given ? options.steps : default_gradcheck_steps(world));
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
