// rigid/step_workspace.hpp — what one step keeps in its Workspace: the scratch buffers of
// every stage and, after the step, its record — the contacts, the constraint rows and where
// each came from, the solver's solution — which the backward pass (src/adjoint/) reads after
// re-running the step from its recorded or recomputed state.
#pragma once

#include <span>
#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/contact.hpp"
#include "diffphys/simulator.hpp"
#include "rigid/articulated.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/inequality_rows.hpp"
#include "rigid/integrate.hpp"
#include "rigid/time_of_impact.hpp"
#include "rigid/warm_start.hpp"
#include "solve/convex.hpp"
#include "solve/mlcp.hpp"

namespace diffphys {

struct Workspace::Impl {
  rigid::BodyDynamics bodies;          // at the start of the step
  collision::CollisionWorkspace collision;
  std::vector<Contact> contacts;
  std::vector<double> free_velocity;  // (6 nbody) v_free
  std::vector<double> velocity;       // (6 nbody) solved v⁺
  std::vector<solve::ConstraintRow> rows;
  std::vector<double> lambda;         // (rows) impulses, N·s (γ rows: m/s)
  // Row blocks, in order: joints [0, joint_rows), limits [joint_rows, limit_rows_end),
  // servos (3 per servo actuator) [limit_rows_end, first_contact_row), contacts
  // [first_contact_row, equality_rows_begin), equalities (rigid/equality_rows.hpp) after.
  std::size_t joint_rows = 0, limit_rows_end = 0, first_contact_row = 0, equality_rows_begin = 0;
  std::vector<rigid::LimitRowSource> limit_sources;  // (limit rows) joint, dof, side of each
  rigid::ImpactRecord impacts;  // times of impact of this step's bounces (rigid/time_of_impact.hpp)
  solve::MlcpWorkspace solver;
  solve::ConvexWorkspace convex;        // Formulation::Convex's Newton solver
  // convex was prepared from this step's rows and masses (solve_convex ran on them, not a
  // replay), so the backward pass may take its groups, responses and islands (convex_vjp).
  bool convex_problem_current = false;
  std::vector<double> initial_velocity;  // (6 nbody) its starting point: the state's velocities
  // The velocity problem had joint rows only and solver holds the envelope factorisation of
  // its A = J M⁻¹ Jᵀ (the joint projection and the backward pass reuse it).
  bool joint_factorization_valid = false;
  rigid::StabilizationBuffers stabilization;
  rigid::WarmStart warm_start;  // the previous step's λ, for PGS (rigid/warm_start.hpp)
  // Replay (set by Rollout::backward, cleared by the step that uses it): this step's solution
  // (λ, v⁺) as its first run computed it. The step rebuilds everything else and takes these
  // instead of solving the velocity problem again; the solvers are deterministic, so the
  // record is the one a full re-run would write. Ignored when the sizes do not match.
  std::span<const double> replay_lambda, replay_velocity;
  // The step in joint coordinates (Coordinates::Reduced) and its record.
  rigid::ArticulatedRecord articulated;
};

// Bytes a Workspace holds (vector capacities): what keeping one per step costs (Rollout).
// Each allocation also costs the allocator's header and rounding (glibc: 8–16 bytes and a
// 16-byte granule), counted as 32 bytes so that budgets hold for workspaces of small vectors.
template <typename T>
std::size_t capacity_bytes(const std::vector<T>& values) {
  constexpr std::size_t kAllocationOverhead = 32;
  return values.capacity() == 0 ? 0 : values.capacity() * sizeof(T) + kAllocationOverhead;
}

inline std::size_t workspace_bytes(const solve::MlcpWorkspace& w) {
  return capacity_bytes(w.responses) + capacity_bytes(w.diagonal) + capacity_bytes(w.matrix) +
         capacity_bytes(w.factor) + capacity_bytes(w.pivots) + capacity_bytes(w.q) + capacity_bytes(w.w) +
         capacity_bytes(w.slack) + capacity_bytes(w.step_lambda) + capacity_bytes(w.step_slack) +
         capacity_bytes(w.rhs_vector) + capacity_bytes(w.scratch) + capacity_bytes(w.envelope_first) +
         capacity_bytes(w.envelope_start) + capacity_bytes(w.envelope_values) + capacity_bytes(w.envelope_pivots) +
         capacity_bytes(w.envelope_body_first) + capacity_bytes(w.envelope_last) + capacity_bytes(w.envelope_column) +
         capacity_bytes(w.equality_rows) + capacity_bytes(w.complementarity_rows) + capacity_bytes(w.coupling) +
         capacity_bytes(w.schur) + capacity_bytes(w.equality_factor) + capacity_bytes(w.equality_pivots) +
         capacity_bytes(w.equality_part) + capacity_bytes(w.complementarity_part) +
         capacity_bytes(w.complementarity_equality) + capacity_bytes(w.block) + capacity_bytes(w.active) +
         capacity_bytes(w.polygon_vertex) + capacity_bytes(w.polygon_edge_normal) + capacity_bytes(w.reduced_q) +
         capacity_bytes(w.reduced_solution) + capacity_bytes(w.equality_offset) + capacity_bytes(w.lemke.tableau) +
         capacity_bytes(w.lemke.basis);
}

inline std::size_t workspace_bytes(const rigid::BodyDynamics& b) {
  return capacity_bytes(b.rotation) + capacity_bytes(b.inverse_mass) + capacity_bytes(b.inertia_world) +
         capacity_bytes(b.inverse_inertia_world);
}

inline std::size_t workspace_bytes(const rigid::ArticulatedRecord& r) {
  return capacity_bytes(r.links) + capacity_bytes(r.loads) + capacity_bytes(r.frames) + capacity_bytes(r.body_link) + capacity_bytes(r.q) + capacity_bytes(r.velocity) +
         capacity_bytes(r.acceleration) + capacity_bytes(r.applied) + capacity_bytes(r.bias) +
         capacity_bytes(r.mass_factor) + capacity_bytes(r.composite) + capacity_bytes(r.subtree_force) +
         capacity_bytes(r.servos) + capacity_bytes(r.servo_columns) + capacity_bytes(r.servo_free_rate) +
         capacity_bytes(r.servo_bound) + capacity_bytes(r.servo_matrix) + capacity_bytes(r.servo_rhs) +
         capacity_bytes(r.inverse_diagonal);
}

inline std::size_t workspace_bytes(const solve::ConvexWorkspace& w) {
  const solve::ConvexIslands& i = w.islands;
  return capacity_bytes(w.groups) + capacity_bytes(w.responses) + capacity_bytes(w.compliance) +
         capacity_bytes(w.scale) + capacity_bytes(w.inertia) + capacity_bytes(i.parent) +
         capacity_bytes(i.island_of_body) + capacity_bytes(i.local_index) + capacity_bytes(i.body_start) +
         capacity_bytes(i.bodies) + capacity_bytes(i.group_start) + capacity_bytes(i.groups) +
         capacity_bytes(w.row_velocity) + capacity_bytes(w.row_step) + capacity_bytes(w.y) +
         capacity_bytes(w.island_edges) + capacity_bytes(w.analysed_edges) + w.hessian.buffer_bytes() +
         capacity_bytes(w.gradient) + capacity_bytes(w.step) + capacity_bytes(w.factored_pieces) +
         capacity_bytes(w.current_pieces);
}

inline std::size_t workspace_bytes(const Workspace::Impl& w) {
  const collision::CollisionWorkspace& c = w.collision;
  return sizeof(Workspace::Impl) + workspace_bytes(w.bodies) + capacity_bytes(c.posed) + capacity_bytes(c.boxes) +
         capacity_bytes(c.box_shape) + capacity_bytes(c.plane_shapes) + capacity_bytes(c.pairs) +
         capacity_bytes(c.excluded_body_pairs) + 2 * sizeof(int) * c.box_shape.capacity() /* broad phase order */ +
         capacity_bytes(w.contacts) + capacity_bytes(w.free_velocity) + capacity_bytes(w.velocity) +
         capacity_bytes(w.rows) + capacity_bytes(w.lambda) + capacity_bytes(w.limit_sources) +
         workspace_bytes(w.solver) + workspace_bytes(w.stabilization.bodies) +
         capacity_bytes(w.stabilization.errors) + capacity_bytes(w.stabilization.correction_impulse) +
         capacity_bytes(w.stabilization.displacement) + workspace_bytes(w.stabilization.solver) +
         capacity_bytes(w.stabilization.ordered_pattern) + capacity_bytes(w.stabilization.order) +
         capacity_bytes(w.stabilization.ordered_rows) + capacity_bytes(w.stabilization.unit_start) +
         capacity_bytes(w.stabilization.unit_order) + capacity_bytes(w.stabilization.candidate) +
         capacity_bytes(w.stabilization.adjacency_start) + capacity_bytes(w.stabilization.adjacency) +
         capacity_bytes(w.stabilization.body_first) + capacity_bytes(w.stabilization.placed) +
         capacity_bytes(w.warm_start.joint_lambda) + capacity_bytes(w.warm_start.servo_lambda) +
         capacity_bytes(w.warm_start.limits) + capacity_bytes(w.warm_start.contacts) +
         capacity_bytes(w.warm_start.contact_lambda) + capacity_bytes(w.impacts.contact_time) +
         capacity_bytes(w.impacts.contact_closing) + capacity_bytes(w.impacts.body_time) +
         capacity_bytes(w.impacts.body_contact) + workspace_bytes(w.articulated) + workspace_bytes(w.convex) +
         capacity_bytes(w.initial_velocity);
}

}  // namespace diffphys
