// tools/gradcheck_command.hpp — `diffphys gradcheck`: the subcommand's options and entry point.
#pragma once

#include <string>

#include "scene_options.hpp"

namespace diffphys::cli {

struct GradcheckOptions {
  std::string scene_path;
  int steps = 100;
  bool steps_given = false;  // --steps on the command line (scenes with soft bodies default to fewer)
  double tolerance = 1e-4;
  double state_epsilon = 1e-6;
  double param_epsilon = 1e-5;
  bool only_failures = false;
  // --health: instead of the finite-difference table, the gradient health report
  // (diffphys/gradient_health.hpp) of the rollout, any scene. --health-csv FILE: also per step.
  bool health = false;
  std::string health_csv;
  SceneOptions scene;  // --formulation (the rigid part), --package-path, --self-collision (URDF files)
};

// check_world_gradients (diffphys/world_gradcheck.hpp) on any scene; prints the description,
// its notes and the table (parameter, analytic, numeric, FD error, FD step, relative error; only
// the failing rows with --failures-only) and the summary line; returns the exit code: 0 all
// within tolerance, 3 some gradient disagrees (a NaN is a disagreement). With --health: the
// report, exit 0, or 3 when the gradient is not finite.
int run_gradcheck(const GradcheckOptions& options);

}  // namespace diffphys::cli
