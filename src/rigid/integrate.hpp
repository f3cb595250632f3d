// rigid/integrate.hpp — positions from the solved velocities, and the joint projection.
//
// integrate: semi-implicit Euler, p⁺ = p + h v⁺, q⁺ = exp(h ω⁺) ⊗ q (world-frame angular
// velocity; the exponential map keeps q unit length, renormalised against round-off); bodies
// that bounce this step move to their time of impact first (rigid/time_of_impact.hpp).
// stabilize_joints: post-stabilisation in the manner of SHAKE (Ryckaert et al. 1977): Newton
// steps on φ(q) = 0 along the step's own constraint directions, Δq = M⁻¹J_tᵀ(J_t M⁻¹J_tᵀ)⁻¹(−φ),
// with J_t and M the start-of-step quantities the velocity solve used, and the velocity that
// carried the body there updated by Δq/h. Projecting along the end-of-step Jacobian instead
// leaves an O(h³) tangential kick per step, which shows as an O(h) energy loss.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/time_of_impact.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::rigid {

void integrate(const Model& model, const State& state_in, std::span<const double> velocity, State& state_out);

// The same, with times of impact (rigid/time_of_impact.hpp): a body with τ_b > 0 moves
// p + τ_b v_free + (h − τ_b) v⁺, exp((h − τ_b) ω⁺) ⊗ exp(τ_b ω_free) ⊗ q. Without any
// (impacts.any false) it is the plain integrate above, bit for bit.
void integrate(const Model& model, const State& state_in, std::span<const double> velocity,
               std::span<const double> free_velocity, const ImpactRecord& impacts, State& state_out);

struct StabilizationBuffers {
  BodyDynamics bodies;  // only the rotations are kept current
  std::vector<double> errors, correction_impulse, displacement;
  solve::MlcpWorkspace solver;
  // The projection's own factorisation (convex formulation) takes the joint rows in a
  // profile-reducing order (reverse Cuthill–McKee over the joints): `order` (rows) maps
  // position → row, computed for the rows' body pairs `ordered_pattern` and kept while they
  // are unchanged.
  std::vector<std::pair<int, int>> ordered_pattern;
  std::vector<int> order;
  std::vector<solve::ConstraintRow> ordered_rows;
  // Whether the last call factorised A_t = J_t M⁻¹ J_tᵀ of its rows in `solver` itself, and
  // in the order `order` (reordered) or the rows' own: the backward pass solves with it.
  bool factorized = false, reordered = false;
  // The ordering's scratch: the joints (runs of rows on one body pair), their graph, a queue.
  std::vector<int> unit_start, unit_order, candidate, adjacency_start, adjacency, body_first;
  std::vector<char> placed;
};

// Projects state's positions onto the joint manifold in place and updates its velocities;
// joint_rows are the step's joint rows (append_joint_rows at the start of the step) and mass
// the start-of-step mass blocks. `factorized`, if not null, is a workspace that already holds
// the envelope factorisation and responses of exactly these rows (the velocity solve's, when
// it had joint rows only), which is then reused. Returns the final max |φ|; with `project`
// false (projects_joints, rigid/compliance.hpp) it only measures it.
double stabilize_joints(const Model& model, std::span<const solve::ConstraintRow> joint_rows,
                        const solve::MassBlocks& mass, const solve::MlcpWorkspace* factorized, bool project,
                        State& state, StabilizationBuffers& buffers);

}  // namespace diffphys::rigid
