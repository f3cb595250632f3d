// adjoint/equality_vjp.hpp — the backward pass of the soft equality rows
// (rigid/equality_rows.hpp): from the adjoints of one equality's rows (their J entries, their
// spring target rhs = s(τ, ζ) φ and their softness κ(τ, ζ)) to the pose adjoints of its two
// bodies and the adjoints of its θ entries "equality/<name>/time_constant" and ".../damping_ratio".
// Tangent convention and accumulation as adjoint/joints_vjp.hpp.
#pragma once

#include <span>

#include "adjoint/joints_vjp.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys::adjoint {

// row_adjoints: equality_constraint_count(type) entries in append_equality_rows order.
// Accumulates into body_a's and body_b's pose adjoints and into param_adjoint.
void equality_rows_vjp(const Model& model, const Params& params, const State& state, int equality,
                       std::span<const RowAdjoint> row_adjoints, PoseAdjoint& body_a, PoseAdjoint& body_b,
                       std::span<double> param_adjoint);

}  // namespace diffphys::adjoint
