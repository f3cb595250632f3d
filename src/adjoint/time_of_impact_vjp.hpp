// adjoint/time_of_impact_vjp.hpp — the backward pass of the time-of-impact stages
// (rigid/time_of_impact.hpp): the split integration of bodies that bounce mid-step, and the
// velocity target of time-of-impact rows.
//
// Integration of a body with τ_b > 0 (the others are reversed by step_vjp.cpp as before):
//   p̃ = p + τ v_f + (h − τ) v⁺,  q̃ = exp(φ_A) exp(φ_B) q,  φ_A = (h − τ) ω⁺,  φ_B = τ ω_f
// with world-frame rotation adjoints (q' = exp(δθ) q), J_l the SO(3) left Jacobian:
//   p̄ += p̃̄,  v̄_f += τ p̃̄,  v̄⁺ += (h − τ) p̃̄,
//   θ̄ += R_Bᵀ R_Aᵀ θ̃̄,  ω̄⁺ += (h − τ) J_l(φ_A)ᵀ θ̃̄,  ω̄_f += τ J_l(φ_B)ᵀ R_Aᵀ θ̃̄,
//   τ̄ += p̃̄·(v_f − v⁺) − ω⁺·J_l(φ_A)ᵀ θ̃̄ + ω_f·J_l(φ_B)ᵀ R_Aᵀ θ̃̄,
// and τ̄ goes to the contact that set τ_b.
#pragma once

#include <span>

#include "diffphys/model.hpp"
#include "rigid/time_of_impact.hpp"

namespace diffphys::adjoint {

// pose_adjoint: (6 nbody) p̃̄, θ̃̄ of the integrated state. Accumulates, for the bodies with
// impacts.body_contact[b] ≥ 0 only, into state_adjoint (12 nbody, tangent layout),
// velocity_adjoint and free_velocity_adjoint (6 nbody) and contact_time_adjoint (contacts).
void time_of_impact_integrate_vjp(const Model& model, std::span<const double> velocity,
                                  std::span<const double> free_velocity, const rigid::ImpactRecord& impacts,
                                  std::span<const double> pose_adjoint, std::span<double> state_adjoint,
                                  std::span<double> velocity_adjoint, std::span<double> free_velocity_adjoint,
                                  std::span<double> contact_time_adjoint);

// The adjoints of a time-of-impact row's inputs (gap g, start and free approach speeds s and
// s_f, restitution e) from the adjoint of its velocity target and of its τ.
struct ImpactTargetAdjoint {
  double gap = 0.0, start_speed = 0.0, free_speed = 0.0, restitution = 0.0;
};
ImpactTargetAdjoint impact_target_vjp(double gap, double start_speed, double free_speed, double restitution, double dt,
                                      double target_adjoint, double time_adjoint);

}  // namespace diffphys::adjoint
