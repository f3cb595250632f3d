// adjoint/articulated_vjp.hpp — the backward pass of a step in joint coordinates
// (rigid/articulated.hpp): x̄_{t+1} → (x̄_t, ū_t, θ̄), from the step's ArticulatedRecord.
//
// The step is x_{t+1} = FK(q', q̇'), (q', q̇') = Euler(q, q̇, u, θ), (q, q̇) = coordinates(x_t).
// Reversed stage by stage, each in O(n):
//   1. forward kinematics: a joint's q' moves its subtree rigidly by the twist S q', its q̇'
//      adds S to every velocity below it — sums of adjoint wrenches over subtrees;
//   2. Euler: y = h M⁻¹ (q̇̄' + h q̄') with the forward step's Cholesky factor; ū = y on each
//      unclipped motor; servos by the implicit function theorem with their active set fixed
//      (add_servo_adjoints), which turns y into the multiplier λ of the dynamics;
//   3. the dynamics: q̈ = M⁻¹(τ − C) gives (q̄, q̇̄, θ̄) −= ∂(yᵀ ID(q, q̇, q̈; θ))/∂(q, q̇, θ),
//      ID the inverse dynamics (M q̈ + C): one reverse sweep of recursive Newton–Euler — the
//      reverse-mode counterpart of Carpentier & Mansard 2018 ("Analytical derivatives of rigid
//      body dynamics algorithms", RSS), which form the full ∂τ/∂q instead. The q-derivative
//      uses that turning joint j moves everything below it rigidly: only the quantities that
//      flow into j's subtree from above (Y, V, A of body j and the world-fixed external forces)
//      are not carried along, so ∂Φ/∂q_j = −Σ (adjoint of such a quantity)·(S_j × it);
//   4. the coordinates read from x_t (rigid/joints.hpp's definitions): exact at states that
//      satisfy the joints, which every state the step writes does.
#pragma once

#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "rigid/articulated.hpp"

namespace diffphys::adjoint {

struct ArticulatedVjpWorkspace {
  std::vector<double> position_adjoint, velocity_adjoint, seed;  // (n) q̄, q̇̄, y
  std::vector<rigid::Spatial> pose_sum, velocity_sum;            // (n) subtree sums of stage 1
  std::vector<Vec3> rotation_sum;                                // (n) subtree sums of stage 1 (free vectors)
  std::vector<rigid::Spatial> acceleration, seed_motion;         // (n) A (actual q̈), Y = Σ S y
  std::vector<rigid::Spatial> force_adjoint, acceleration_adjoint, velocity_adjoint_sum;  // (n) Ȳ, Ā, V̄
  std::vector<Vec3> external_sum;                                // (n) subtree sums of stage 3's free vectors
  std::vector<double> servo_multiplier, servo_matrix;            // (nservo), (nservo²): μ and B_ff
};

// Adjoints accumulate (+=) into state_adjoint (12 per body, docs/gradients.md),
// control_adjoint (nactuator) and param_adjoint (nparam).
void articulated_step_vjp(const Model& model, const Params& params, const State& state_in,
                          std::span<const double> controls, const rigid::ArticulatedRecord& record,
                          std::span<const double> next_state_adjoint, std::span<double> state_adjoint,
                          std::span<double> control_adjoint, std::span<double> param_adjoint,
                          ArticulatedVjpWorkspace& vjp);

}  // namespace diffphys::adjoint
