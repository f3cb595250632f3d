// experiments/registry.cpp — the list of `diffphys experiment` names. One line per
// experiment; each is declared in its own header under src/experiments/.
#include <array>

#include "experiments/ball_throw.hpp"
#include "experiments/chain_mass.hpp"
#include "experiments/experiments.hpp"

namespace diffphys::experiments {

std::span<const ExperimentEntry> registry() {
  static const std::array entries = {
      ExperimentEntry{"ball-throw", "Degrave et al. 2019 §2.1.1: initial velocity of a rolling ball by BPTT",
                      run_ball_throw},
      ExperimentEntry{"chain-mass", "de Avila Belbute-Peres et al. 2018 §4.1: infer a chain's mass from its motion",
                      run_chain_mass},
      ExperimentEntry{"chain-mass-scaling",
                      "de Avila Belbute-Peres et al. 2018 Fig. 1 right: analytic vs finite-difference updates",
                      run_chain_mass_scaling},
  };
  return entries;
}

}  // namespace diffphys::experiments
