// adjoint/joints_vjp.hpp — the backward pass of the joint stage (rigid/joints.hpp): vector–
// Jacobian products of a joint's equality rows, position errors, coordinate rows and
// coordinate values with respect to the poses of the joint's two bodies.
//
// Tangent convention (the engine's): a body's pose is perturbed as p' = p + δp and
// q' = exp(δθ) ⊗ q, with δθ a world-frame rotation vector (QuatT::from_rotation_vector).
// A pose adjoint is (p̄, θ̄) with dL = p̄·δp + θ̄·δθ. Every function here *accumulates* (+=)
// into the parent's and the child's PoseAdjoint; callers zero them first. The parent may be
// the world (body 0): its adjoint is accumulated like any other and the caller ignores it.
//
// Everything is a function of the two orientations and positions only: the rotations are
// recomputed from the state's quaternions (R = q.to_matrix(), as compute_body_dynamics does),
// and the model's body-frame anchors, axes and the bases built from them are constants.
#pragma once

#include <span>

#include "adjoint/lcp_vjp.hpp"
#include "diffphys/model.hpp"
#include "diffphys/state.hpp"

namespace diffphys::adjoint {

// Adjoint of one body's pose: p̄ (position) and θ̄ (world-frame rotation vector).
struct PoseAdjoint {
  Vec3 position, rotation;
};

// Adjoint of the J entries of one joint's equality rows (row_adjoints in for_each_joint_row
// order: joint_constraint_count(type) entries; their rhs and coefficient are ignored, the
// rows' rhs is 0) → accumulated into the parent's and the child's pose adjoints.
void joint_rows_vjp(const Model& model, const State& state, int joint, std::span<const RowAdjoint> row_adjoints,
                    PoseAdjoint& parent, PoseAdjoint& child);

// Adjoint of one joint's entries of joint_position_errors (one per row) → pose adjoints.
void joint_errors_vjp(const Model& model, const State& state, int joint, std::span<const double> error_adjoints,
                      PoseAdjoint& parent, PoseAdjoint& child);

// Adjoint of φ = log(q_b restᵀ q_aᵀ), the world-frame rotation vector of body b's rotation
// relative to body a's and a rest (a rotation lock's error; a weld's) → the two pose adjoints.
void relative_rotation_vector_vjp(const Vec3& rotation_vector, const Vec3& rotation_vector_adjoint, PoseAdjoint& a,
                                  PoseAdjoint& b);

// Adjoint of coordinate_row(model, state, bodies, joint, dof)'s J entries → pose adjoints.
void coordinate_row_vjp(const Model& model, const State& state, int joint, int dof, const RowAdjoint& row_adjoint,
                        PoseAdjoint& parent, PoseAdjoint& child);

// Adjoint of coordinate_value(model, state, bodies, joint, dof) → pose adjoints. Where the
// forward value wraps (an angle crossing ±π, or ±2π for the revolute angle; a rotation
// vector crossing |φ| = π) this is the derivative of the branch the value is on.
void coordinate_value_vjp(const Model& model, const State& state, int joint, int dof, double value_adjoint,
                          PoseAdjoint& parent, PoseAdjoint& child);

}  // namespace diffphys::adjoint
