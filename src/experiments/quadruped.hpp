// experiments/quadruped.hpp — `diffphys experiment quadruped`: Degrave et al. 2019 §3.3, an MLP
// on a 1.5 Hz clock learns a gait for the 8-servo quadruped (quadruped_model.hpp) by Adam on
// gradients back-propagated through 10 s of contact-rich simulation.
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// The public code's robot and recipe (quadruped_public_model.hpp).
ExperimentResult run_quadruped(const ExperimentOptions& options);
// The robot we invented before the public code was read (quadruped_model.hpp), kept for comparison.
ExperimentResult run_quadruped_invented(const ExperimentOptions& options);

}  // namespace diffphys::experiments
