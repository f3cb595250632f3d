// rigid/step_solution.hpp — a step's solution as a record (λ then v⁺, what the backward pass
// keeps of a step: docs/gradients.md, "Step records"): appended from a solved Workspace, its
// size, and handed back to a Workspace as the replay of the same step (rigid/step_workspace.hpp).
// Shared by the rigid Rollout (adjoint/rollout.cpp) and the world schedule's rigid part.
#pragma once

#include <span>
#include <vector>

#include "rigid/step_workspace.hpp"

namespace diffphys::rigid {

// Bytes of the solution `solved` holds.
inline std::size_t solution_bytes(const Workspace::Impl& solved) {
  return (solved.lambda.size() + solved.velocity.size()) * sizeof(double);
}

// Appends the solution (λ, then v⁺) of `solved` to `records`; returns the new end offset.
inline std::size_t append_solution(const Workspace::Impl& solved, std::vector<double>& records) {
  records.insert(records.end(), solved.lambda.begin(), solved.lambda.end());
  records.insert(records.end(), solved.velocity.begin(), solved.velocity.end());
  return records.size();
}

// The next step run in `workspace` takes `stored` (an appended solution) instead of solving,
// its last `dof` values the velocities (6 per body). A record shorter than that (joint
// coordinates keep none) leaves the step to solve; so does a step that takes no replay.
inline void set_replay(Workspace::Impl& workspace, std::span<const double> stored, std::size_t dof) {
  if (stored.size() < dof) return;
  workspace.replay_lambda = stored.first(stored.size() - dof);
  workspace.replay_velocity = stored.last(dof);
}

}  // namespace diffphys::rigid
