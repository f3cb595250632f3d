// experiments/soft_experiments_commands.hpp — `diffphys experiment soft-stiffness` and
// `mass-spring-adam` (issue 5; Rojas 2020): the command-line faces of the soft-body
// experiments of diffphys/soft_experiments.hpp.
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// Infers a hanging cantilever's Young's modulus from its observed trajectory, starting 10×
// off; success when within 1 %.
ExperimentResult run_soft_stiffness(const ExperimentOptions& options);
// The article's mass–spring grid stepped by Newton and by Adam on the same energy; success
// when both converge at every step and their trajectories agree to 1e-5 m.
ExperimentResult run_mass_spring_adam(const ExperimentOptions& options);

}  // namespace diffphys::experiments
