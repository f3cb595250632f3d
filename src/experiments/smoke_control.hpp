// experiments/smoke_control.hpp — `diffphys experiment smoke-control` (issue 21, experiment 1;
// DiffTaichi's and PhiFlow's smoke control): optimise the per-cell force field of every step so
// that a buoyant smoke blob reaches a target density shape, through the world's fluid part.
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// Success when the final loss is at most a quarter of the uncontrolled plume's.
ExperimentResult run_smoke_control(const ExperimentOptions& options);

}  // namespace diffphys::experiments
