// rigid/inequality_rows.hpp — the complementarity rows of a step: joint limits, servos and
// contacts (normal, friction cone). Each function appends to `rows` (see solve/mlcp.hpp for
// the row types and the bounded-group layout).
#pragma once

#include <span>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/time_of_impact.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::rigid {

// Joint limits: a Unilateral row per side when the coordinate is within reach of the bound
// this step; rhs lets the coordinate close the remaining gap in one step, or pushes a
// violated limit back by contact_erp of the violation.
struct LimitRowSource {
  int joint = 0, dof = 0;
  bool upper = false;  // the row is −J_dof against the upper limit
};
// In the convex formulation a violated limit's target is rigid/compliance.hpp's instead.
void append_limit_rows(const Model& model, const Params& params, const State& state, const BodyDynamics& bodies,
                       std::vector<solve::ConstraintRow>& rows, std::vector<LimitRowSource>& sources);

// Velocity target of a one-sided constraint at signed distance `gap` from its bound (limits
// and contacts): −gap/h while apart, contact_erp·(−gap − slop)₊/h once violated.
double gap_target(double gap, double dt, const SolverSettings& solver);

// Rows of the friction group of a contact: the pyramid's directions, or the cone's two axes.
inline int friction_row_count(const SolverSettings& solver) {
  return solver.formulation == Formulation::Convex ? 2 : solver.friction_directions;
}
// Direction k = c t₁ + s t₂ of a friction group with `count` rows, as (c, s).
struct DirectionWeights {
  double tangent1 = 0.0, tangent2 = 0.0;
};
DirectionWeights friction_direction(const SolverSettings& solver, int k);

// Where a contact pushes each body, from its centre of mass (solver.contact_point,
// docs/simulation.md "Contact points"): Midpoint, both at the contact's midpoint P;
// Surfaces, each at its own surface point, o_a = P + ½ g n − p_a and o_b = P − ½ g n − p_b.
// The forward rows and the backward pass (adjoint/step_vjp.cpp) both take them from here;
// `half_gap` is the ½ g used (0 at the midpoint), which the backward pass differentiates.
struct ContactOffsets {
  Vec3 a, b;
  double half_gap = 0.0;
};
inline ContactOffsets contact_offsets(const SolverSettings& solver, const Contact& contact, const State& state) {
  const double half_gap = solver.contact_point == ContactPoint::Surfaces ? 0.5 * contact.gap : 0.0;
  return {contact.position + contact.normal * half_gap - state.position[static_cast<std::size_t>(contact.body_a)],
          contact.position - contact.normal * half_gap - state.position[static_cast<std::size_t>(contact.body_b)],
          half_gap};
}

// The tangent axes (t₁, t₂) of a contact's friction group. With solver.slip_aligned_friction in
// the complementarity formulation, t₁ is the direction of the contact's tangential relative
// velocity under the free motion, s = (I − n nᵀ)(v_a + ω_a × o_a − v_b − ω_b × o_b)|free, and
// t₂ = n × t₁: the pyramid then has a vertex opposite the slip, and a sliding contact meets
// exactly μλ_n at any heading (for a point contact without rotation, the slip after the step
// is parallel to s: v⁺ = s − μλ_n ŝ/m). The idea is Bullet's first friction direction along
// the lateral relative velocity. Where |s| ≤ kSlipAlignmentSpeed the axes are
// orthonormal_basis(n), as they are with the alignment off or in the convex formulation: the
// demand on friction there is far inside the cone (it cancels less than |s|), so the
// pyramid's heading does not change the step.
inline constexpr double kSlipAlignmentSpeed = 1e-6;  // m/s
struct FrictionTangents {
  Vec3 tangent1, tangent2;
  bool slip_aligned = false;
  Vec3 relative_free_velocity;  // v_a + ω_a × o_a − v_b − ω_b × o_b under the free motion
  double slip_speed = 0.0;      // |s|
};
FrictionTangents friction_tangents(const SolverSettings& solver, const Vec3& normal, int body_a, int body_b,
                                   const Vec3& offset_a, const Vec3& offset_b, std::span<const double> free_velocity);

// Servos (Degrave et al. 2019): target rate ω* = clamp(gain·(target − q), ±max_velocity);
// a bounded group {+J_dof (rhs ω*), −J_dof (rhs −ω*); γ} with impulse bound max_torque·h.
void append_servo_rows(const Model& model, const Params& params, const State& state,
                       std::span<const double> controls, const BodyDynamics& bodies,
                       std::vector<solve::ConstraintRow>& rows);

// Contacts: per contact a Unilateral normal row and, when μ > 0, a friction group of
// solver.friction_directions Direction rows and a Bound row. Pair materials: friction
// √(μ_a μ_b), restitution max(e_a, e_b). Normal rhs (velocity targets):
//   the gap will not close this step (gap > 0, gap + h·v_free,n > 0):  −gap/h (speculative);
//   otherwise:  max(e·(−v_n) if −v_n > restitution_threshold else 0,
//                 −gap/h if gap > 0 else contact_erp·(−gap − slop)₊/h),
// with v_n the approach velocity at the start of the step (Newton's restitution law).
// With solver.time_of_impact, a closing, bouncing contact between free bodies takes its
// target at its time of impact instead (rigid/time_of_impact.hpp), recorded in `impacts`
// (contact_time, contact_closing; the body times are assign_body_impact_times's).
// In the convex formulation (solve/convex.hpp) the friction group is two Direction rows along
// orthonormal tangents (t₁, t₂: the elliptic cone's axes) and the Bound row, and
// a penetrating contact's target is rigid/compliance.hpp's spring–damper.
void append_contact_rows(const Model& model, const Params& params, const State& state,
                         std::span<const Contact> contacts, std::span<const double> free_velocity,
                         std::vector<solve::ConstraintRow>& rows, ImpactRecord& impacts);

}  // namespace diffphys::rigid
