// diffphys/soft_experiments.hpp — the soft-body experiments of issue 5, as library functions
// so that the `diffphys experiment` command (added separately) can call them:
//   soft-stiffness     → run_soft_stiffness_experiment
//   mass-spring-adam   → run_mass_spring_adam_experiment
#pragma once

#include <ostream>
#include <vector>

namespace diffphys::soft {

// Infer the Young's modulus of a cantilever (clamped at x = 0, sagging under gravity) from
// its observed trajectory: the observation is a rollout with `true_youngs`; the estimate
// starts at true_youngs × initial_factor and minimises L(E) = Σ_t ‖x_t(E) − x_t^obs‖² over
// log E, with dL/dE from SoftRollout::backward (a 1-D Newton–secant iteration with
// backtracking).
struct SoftStiffnessOptions {
  double true_youngs = 5e4;     // Pa
  double initial_factor = 10.0;
  int cells_x = 6;              // beam 0.3 × 0.05 × 0.05 m, cells_x × 1 × 1 cells
  int steps = 40;               // of 0.01 s
  int max_iterations = 40;
  double tolerance = 1e-4;      // stop when |Δ log E| falls below this
};
struct SoftStiffnessResult {
  double true_youngs = 0, initial_youngs = 0, estimated_youngs = 0, relative_error = 0;
  int iterations = 0;
  double seconds = 0;
  std::vector<double> youngs_history, loss_history;
  bool converged = false;
};
SoftStiffnessResult run_soft_stiffness_experiment(const SoftStiffnessOptions& options, std::ostream* log = nullptr);

// The article's mass–spring system (Rojas 2020): a grid of masses joined by structural and
// shear springs, released from a perturbed shape, stepped by implicit Euler with each step's
// minimisation done by Newton and, separately, by Adam. Reports iterations and time of each
// and how far the two trajectories drift apart.
struct MassSpringAdamOptions {
  int grid = 6;                 // grid × grid nodes
  int steps = 50;               // of 0.01 s
  double adam_learning_rate = 1e-3;
  double adam_tolerance = 1e-6;  // N
  int adam_max_iterations = 50000;
};
struct MassSpringAdamResult {
  int newton_iterations = 0, adam_iterations = 0;
  double newton_seconds = 0, adam_seconds = 0;
  int newton_failures = 0, adam_failures = 0;     // steps that did not converge
  double max_position_difference = 0;             // m, over all steps and nodes
  double final_energy_newton = 0, final_energy_adam = 0;  // J (kinetic + elastic)
};
MassSpringAdamResult run_mass_spring_adam_experiment(const MassSpringAdamOptions& options, std::ostream* log = nullptr);

}  // namespace diffphys::soft
