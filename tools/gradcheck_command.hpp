// tools/gradcheck_command.hpp — `diffphys gradcheck`: the subcommand's options and entry point.
#pragma once

#include <string>

namespace diffphys::cli {

struct GradcheckOptions {
  std::string scene_path;
  int steps = 100;
  double tolerance = 1e-4;
  double state_epsilon = 1e-6;
  double param_epsilon = 1e-5;
  bool only_failures = false;
};

// Prints the table (parameter, analytic, numeric, relative error); returns the exit code:
// 0 all within tolerance, 3 some gradient disagrees.
int run_gradcheck(const GradcheckOptions& options);

}  // namespace diffphys::cli
