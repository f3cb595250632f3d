// world/world_health.cpp — combined_health (diffphys/gradient_health.hpp): one GradientHealth
// for a world's backward pass from each registered kind's share (world/part_kind.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "diffphys/gradient_health.hpp"
#include "world/part_kind.hpp"

namespace diffphys {

GradientHealth combined_health(const WorldGradients& gradients) {
  // The rigid part's health is the combined type: its contact changes, stage gains and state
  // health stay; the norms, the first non-finite value, clipping and convergence combine.
  GradientHealth health = gradients.rigid_health;
  health.first_non_finite_step = -1;
  health.first_non_finite_stage.clear();
  health.clipped_steps = 0;
  health.solver_converged = true;
  std::size_t length = 0;
  for (const world::PartKind& kind : world::part_kinds())
    length = std::max(length, kind.health(gradients).state_gradient_norm.size());
  health.state_gradient_norm.assign(length, 0.0);
  for (std::size_t t = 0; t < length; ++t) {
    double squared = 0.0;  // the parts' ‖x̄_t‖² in the registry's order
    for (const world::PartKind& kind : world::part_kinds()) {
      const std::span<const double> norms = kind.health(gradients).state_gradient_norm;
      const double norm = t < norms.size() ? norms[t] : 0.0;
      squared += norm * norm;
    }
    health.state_gradient_norm[t] = std::sqrt(squared);
    health.largest_state_gradient_norm = std::max(health.largest_state_gradient_norm, health.state_gradient_norm[t]);
  }
  for (const world::PartKind& kind : world::part_kinds()) {
    const world::PartHealthSummary part = kind.health(gradients);
    // Counting back: the larger step is met first (the earlier kind's on a tie).
    if (part.first_non_finite_step >= 0 &&
        (health.first_non_finite_step < 0 || part.first_non_finite_step > health.first_non_finite_step)) {
      health.first_non_finite_step = part.first_non_finite_step;
      health.first_non_finite_stage = std::string(part.stage_prefix) + std::string(part.first_non_finite_stage);
    }
    health.clipped_steps += part.clipped_steps;
    health.solver_converged = health.solver_converged && part.solver_converged;
  }
  return health;
}

}  // namespace diffphys
