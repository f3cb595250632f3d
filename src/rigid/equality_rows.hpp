// rigid/equality_rows.hpp — the rows of the model's soft equality constraints (Model::equalities:
// connect, distance and weld) in maximal coordinates, their position errors φ, and their compliance:
// each is a spring–damper of its own time constant τ and damping ratio ζ (θ's
// "equality/<name>/…", MuJoCo's solref), posed as the convex formulation's compliant rows
// (rigid/compliance.hpp): softness κ(h, τ, ζ) and target v̂ = −φ/(h + 2ζ²τ). They are never
// projected after the step: the row's own spring corrects the error, as MuJoCo's do.
//
// Every row has body a = body_a, body b = body_b; o_a = R_a r_a, o_b = R_b r_b.
//   connect (3):  φ_k = (p_a + o_a − p_b − o_b)_k, the ball joint's point rows (rigid/joints.hpp)
//   distance (1): d = p_b + o_b − p_a − o_a, n = d/|d|, φ = |d| − L;
//                 J: linear_a = −n, angular_a = −o_a × n, linear_b = n, angular_b = o_b × n.
//   weld (6):     connect's three, then φ_k = log(q_b relativeᵀ q_aᵀ)_k, the fixed joint's
//                 rotation lock (rigid/joints.hpp): angular_a = −e_k, angular_b = e_k.
#pragma once

#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/compliance.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::rigid {

// Total number of equality rows of the model (3 per connect, 1 per distance, 6 per weld).
int equality_row_count(const Model& model);

// A weld's rotation error: the world-frame rotation vector of q_b relativeᵀ q_aᵀ, whose rate is
// ω_b − ω_a to first order.
Vec3 weld_rotation_error(const Equality& equality, const State& state);

// The compliance of equality e from θ.
inline RowCompliance equality_compliance(const Model& model, const Params& params, int e) {
  const auto i = static_cast<std::size_t>(e);
  return {params.at(model.layout.equality_time_constant[i]), params.at(model.layout.equality_damping_ratio[i])};
}

// Appends every equality's rows, in equality order, with their spring targets and softness
// (Formulation::Convex: the only formulation that has equalities, ModelBuilder refuses others).
void append_equality_rows(const Model& model, const Params& params, const State& state, const BodyDynamics& bodies,
                          std::vector<solve::ConstraintRow>& rows);

// Position errors φ of every equality row, in the order of append_equality_rows; returns max |φ|.
double equality_position_errors(const Model& model, const State& state, std::span<double> errors);

}  // namespace diffphys::rigid
