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

// The world's rollout with its default controls held, reversed once with L = Σ_t w·x_t (fixed
// pseudo-random weights over the world's tangent, as the finite-difference check's loss
// reaches every state component) and by the terminal probes; prints the report.
int run_health(const World& world, const GradcheckOptions& options, int steps) {
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), {}, steps);
  std::mt19937 random(1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> weights;
  const WorldGradients gradients = rollout.backward([&](int, const WorldState&, WorldStateGradient& gradient) {
    if (weights.empty()) {
      weights.resize(gradient.all.size());
      for (double& w : weights) w = uniform(random);
    }
    for (std::size_t k = 0; k < gradient.all.size(); ++k) gradient.all[k] += weights[k];
  });
  const GradientHealth health = combined_health(gradients);
  const TerminalSensitivity sensitivity = terminal_sensitivity(world, params, rollout);
  const double dt = world.dt();
  const GradientHealthReport report = analyze_gradient_health(health, sensitivity, dt);
  std::cout << options.scene_path << " (" << world.kind() << "): " << steps << " steps of " << dt
            << " s; s_t = max over 4 random unit u of |(dx_T/dx_t)^T u| / |u|; L = sum_t w.x_t for |dL/dx_t|; the "
               "first probe's stage gains (rigid part)\n";
  print_gradient_health(std::cout, report, health, sensitivity);
  if (!options.health_csv.empty()) {
    std::ofstream csv(options.health_csv);
    if (!csv) throw Error(message("gradcheck --health-csv: cannot write ", options.health_csv));
    write_gradient_health_csv(csv, health, sensitivity);
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
