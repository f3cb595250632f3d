// experiments/ball_throw.hpp — Degrave et al. 2019 §2.1.1: throw a ball so that it rests at
// (10, 0) after 5 s, by gradient descent through the simulator (experiments/ball_throw.cpp).
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

ExperimentResult run_ball_throw(const ExperimentOptions& options);

}  // namespace diffphys::experiments
