// experiments/chain_mass.hpp — de Avila Belbute-Peres et al. 2018 §4.1: infer the mass of a
// hanging chain from the observed motion after a ball hits it (chain-mass), and the paper's
// Fig. 1 right: the time of 30 updates with analytic gradients against finite differences
// as the number of links grows (chain-mass-scaling). experiments/chain_mass.cpp.
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

ExperimentResult run_chain_mass(const ExperimentOptions& options);
ExperimentResult run_chain_mass_scaling(const ExperimentOptions& options);

}  // namespace diffphys::experiments
