// rigid/joints.hpp — joint constraints in maximal coordinates: their equality rows, their
// position errors φ (for the post-stabilisation projection), and the rows and values of
// each joint coordinate (for motors, servos, limits and damping).
//
// Every joint row has body a = parent, body b = child, and is the time derivative of its
// position error: J v = dφ/dt. Rows per type (joint_constraint_count):
//   ball (3):       φ = p_a + R_a r_a − (p_b + R_b r_b)                 (anchors coincide)
//   revolute (5):   ball + φ = a·b1, a·b2   (a = parent's axis; b1, b2 ⟂ child's axis)
//   universal (4):  ball + φ = a1·a2        (a1 on the parent, a2 on the child)
//   fixed (6):      ball + φ = log(q_b q_restᵀ q_aᵀ)                    (rotation locked)
//   prismatic (5):  rotation lock + φ = d·n1, d·n2   (d = anchor_b − anchor_a, n ⟂ axis)
//   planar (3):     φ = d·a (a = parent's axis, the plane's normal) + revolute's a·b1, a·b2
// Coordinates: revolute angle; prismatic d·a; universal two angles; ball the rotation
// vector's components; planar d·e1, d·e2 (e1, e2 its in-plane directions on the parent) and
// the angle about a (dofs 0, 1, 2).
#pragma once

#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/state.hpp"
#include "rigid/body_dynamics.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::rigid {

// Appends the equality rows of every joint, in joint order (rhs = 0).
void append_joint_rows(const Model& model, const State& state, const BodyDynamics& bodies,
                       std::vector<solve::ConstraintRow>& rows);

// Sets each joint row's target to slope · φ, its position error (the flexible joints of the
// convex formulation: rigid/compliance.hpp, projects_joints); rows as append_joint_rows made them.
void set_joint_spring_targets(const Model& model, const State& state, const BodyDynamics& bodies, double slope,
                              std::span<solve::ConstraintRow> rows);

// Position errors of every joint row, in the order of append_joint_rows; returns max |φ|.
double joint_position_errors(const Model& model, const State& state, const BodyDynamics& bodies,
                             std::span<double> errors);

// Total number of joint equality rows in the model.
int joint_row_count(const Model& model);

// The row J_dof with J_dof v = d(coordinate)/dt (body a = parent, b = child): the joint
// coordinate's generalised direction. A torque τ on the coordinate is the force J_dofᵀ τ.
solve::ConstraintRow coordinate_row(const Model& model, const State& state, const BodyDynamics& bodies, int joint,
                                    int dof);
// J_dof v for the velocities of `state`: the coordinate's rate.
double coordinate_rate(const solve::ConstraintRow& row, const State& state);
// The coordinate itself (rad or m; universal angles in (−π, π], revolute and planar angles in (−2π, 2π]).
double coordinate_value(const Model& model, const State& state, const BodyDynamics& bodies, int joint, int dof);

}  // namespace diffphys::rigid
