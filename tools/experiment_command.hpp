// tools/experiment_command.hpp — `diffphys experiment NAME`: runs one of the papers'
// experiments (src/experiments/), printing its progress and a final JSON line.
#pragma once

#include <string>

#include "experiments/experiments.hpp"

namespace diffphys::cli {

struct ExperimentCommandOptions {
  std::string name;
  bool quick = false;
  bool full = false;
  bool json_only = false;  // no progress lines: only the final JSON line
  std::string out_dir = "out";
  unsigned seed = 1;
  std::string variants;  // --variant: comma-separated names, each one of the experiment's
};

// The registered names, joined for --help.
std::string experiment_names();

// 0 when the experiment reached its target, 4 when it ran but fell short, 1 for errors.
int run_experiment(const ExperimentCommandOptions& options);

}  // namespace diffphys::cli
