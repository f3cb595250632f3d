// adjoint/step_vjp.hpp — the backward pass of one step: x̄_{t+1} → (x̄_t, ū_t, θ̄).
//
// Runs the stages of rigid/step.cpp in reverse, each as a vector–Jacobian product, from the
// record the forward step left in its Workspace (re-run the step from x_t first):
//   joint projection (implicit: φ(q⁺) = 0)  →  integration (with times of impact,
//   time_of_impact_vjp.hpp)  →  mixed LCP (implicit, active
//   set fixed; lcp_vjp.hpp)  →  rows (joints, limits, servos, contacts — contact geometry
//   through contact_geometry.hpp with the contact set fixed)  →  free velocity (forces,
//   motors, damping, gyroscopic)  →  mass quantities (mass, inertia, orientation).
//
// Tangent layout (docs/gradients.md), 12 numbers per body, body 0 (the world) included:
//   [δp (3), δθ (3), δv (3), δω (3)],  p' = p + δp,  q' = exp(δθ) ⊗ q (world frame).
// Adjoints accumulate (+=) into the output spans; callers zero them.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "adjoint/articulated_vjp.hpp"
#include "adjoint/convex_vjp.hpp"
#include "adjoint/lcp_vjp.hpp"
#include "rigid/body_dynamics.hpp"
#include "solve/envelope_lu.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys::adjoint {

inline constexpr int kBodyTangent = 12;

struct StepVjpWorkspace {
  std::vector<double> velocity_adjoint, free_velocity_adjoint, displacement, displacement_adjoint, correction;
  std::vector<double> joint_impulse, scratch;
  std::vector<double> joint_multiplier;
  std::vector<double> joint_errors, joint_error_adjoints;  // flexible joints' spring targets
  std::vector<Mat3> left_jacobians;  // (nbody) J_l of each body's projection rotation
  std::vector<RowAdjoint> row_adjoints;
  std::vector<double> contact_time_adjoint;          // (contacts) τ̄ of time-of-impact rows
  std::vector<double> impact_free_velocity_adjoint;  // (6 nbody) v̄_free from the split integration
  MassAdjoint mass_adjoint;
  std::vector<Mat3> inertia_adjoint;  // (nbody) adjoint of the world inertia (gyroscopic term)
  std::vector<solve::ConstraintRow> end_rows;
  // The joint projection's and the forces' reverse passes: kept so that a step's VJP
  // allocates nothing once the workspace has grown.
  rigid::BodyDynamics end_bodies, start_rotations;
  std::vector<double> g_rho, eta, scaled_eta, joint_force;  // (6 nbody)
  LcpVjpWorkspace lcp;
  ConvexVjpWorkspace convex;  // Formulation::Convex
  std::vector<solve::RowResponse> projected_columns;  // (joint rows) M⁻¹ Lᵀ G_jᵀ
  solve::EnvelopeLuWorkspace projection_lu;           // of Sᵀ = J_t M⁻¹ Lᵀ Gᵀ
  solve::MlcpWorkspace solver;
  State integrated;
  ArticulatedVjpWorkspace articulated;  // Coordinates::Reduced steps
  std::string non_finite_stage;  // the first stage of the last call whose output was not finite
};

// workspace: the Workspace of the forward step state_in → state_out just taken (its record).
void step_vjp(const Model& model, const Params& params, const State& state_in, std::span<const double> controls,
              const Workspace& workspace, const State& state_out, std::span<const double> next_state_adjoint,
              std::span<double> state_adjoint, std::span<double> control_adjoint, std::span<double> param_adjoint,
              StepVjpWorkspace& vjp);

// SO(3) left Jacobian J_l(φ): exp(φ + δ) = exp(J_l(φ) δ) exp(φ).
Mat3 left_jacobian(const Vec3& rotation);

}  // namespace diffphys::adjoint
