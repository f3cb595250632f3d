// experiments/registry.cpp — the list of `diffphys experiment` names. One line per
// experiment; each is declared in its own header under src/experiments/.
#include "experiments/experiments.hpp"

#include "experiments/arm_reach.hpp"

namespace diffphys::experiments {

std::span<const ExperimentEntry> registry() {
  static const ExperimentEntry entries[] = {
      {"arm-reach", "Degrave et al. 2019 §3.2.1: an MLP drives a 4-DoF servo arm to a fixed point", run_arm_reach},
      {"arm-reach-random", "Degrave et al. 2019 §3.2.2: an MLP drives the arm to random targets, a batch of robots per update", run_arm_reach_random},
  };
  return entries;
}

}  // namespace diffphys::experiments
