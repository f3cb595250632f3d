// experiments/cartpole_data_efficiency.hpp — `diffphys experiment cartpole-data-efficiency`
// (de Avila Belbute-Peres et al. 2018, §4.3, Fig. 5): the learned-physics cart–pole model
// against a learned MLP dynamics model, both fitted to the same random-action data, for
// growing amounts of data: held-out one-step and 10-step prediction error, and the steps
// each model's iLQR MPC keeps the true cart–pole up (capped at 1,000), over several seeds.
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

ExperimentResult run_cartpole_data_efficiency(const ExperimentOptions& options);

}  // namespace diffphys::experiments
