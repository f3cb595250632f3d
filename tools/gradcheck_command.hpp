// tools/gradcheck_command.hpp — `diffphys gradcheck`: the subcommand's options and entry point.
#pragma once

#include <string>

#include "robot_file_options.hpp"

namespace diffphys::cli {

// Soft and coupled scenes check every parameter (one per node for the masses) with Newton
// solves: their default rollout (in soft steps) is shorter than rigid scenes'.
inline constexpr int kDefaultSoftGradcheckSteps = 10;

struct GradcheckOptions {
  std::string scene_path;
  int steps = 100;
  bool steps_given = false;  // --steps on the command line (soft scenes default to fewer steps)
  double tolerance = 1e-4;
  double state_epsilon = 1e-6;
  double param_epsilon = 1e-5;
  bool only_failures = false;
  std::string formulation;  // --formulation: empty keeps the scene's (rigid scenes only)
  RobotFileOptions robot;   // --package-path, --self-collision (URDF files)
};

// Prints the table (parameter, analytic, numeric, relative error); returns the exit code:
// 0 all within tolerance, 3 some gradient disagrees. Coupled rigid + soft scenes (top-level
// "rigid" and "soft" keys) go to run_coupled_gradcheck (coupled_gradcheck_command.hpp), soft
// scenes (a top-level "soft" key) to run_soft_gradcheck (soft_gradcheck_command.hpp).
int run_gradcheck(const GradcheckOptions& options);

}  // namespace diffphys::cli
