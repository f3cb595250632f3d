// experiments/arm_reach.hpp — Degrave et al. 2019 §3.2.1 and §3.2.2: an MLP controlling the
// 4-DoF servo arm to a fixed target (arm_reach.cpp) and to random targets (arm_reach_random.cpp).
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

ExperimentResult run_arm_reach(const ExperimentOptions& options);
ExperimentResult run_arm_reach_random(const ExperimentOptions& options);

}  // namespace diffphys::experiments
