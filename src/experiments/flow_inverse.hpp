// experiments/flow_inverse.hpp — `diffphys experiment flow-inverse` (issue 21, experiment 2):
// recover an unknown initial velocity field from a passive dye's density observed at a few
// times, through the fluid's exact adjoint (PhiFlow's and DiffTaichi's inverse problems).
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// Success when the observation loss falls below 1e-3 of the zero-velocity guess's and the
// recovered flow (after the first step's projection) is within 10 % of the true one.
ExperimentResult run_flow_inverse(const ExperimentOptions& options);

}  // namespace diffphys::experiments
