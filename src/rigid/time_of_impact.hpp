// rigid/time_of_impact.hpp — bounces at their time of impact inside the step.
//
// A contact that closes during the step and bounces (restitution e > 0, approach speed above
// solver.restitution_threshold) between free bodies (dynamic bodies without joints, or a
// static body) is a *time-of-impact row*. Over the step the free motion carries the gap g ≥ 0
// to zero at
//     τ = g / s_f  ∈ [0, h]        (s_f = −J v_free: the approach speed of the free motion;
//                                   τ = 0 for a gap already closed).
// Semi-implicit Euler's velocities lag its positions by half a step (v_{t+1} = (x_{t+1} − x_t)/h
// is the velocity at t + h/2 under constant forces; it conserves ½v² + V − ½h a·v exactly), so
// the state's s = −J v is the approach speed at t − h/2 and s_f at t + h/2. With λ = τ/h + ½,
// the approach speed at the impact is s_i = s + λ(s_f − s), Newton's law acts there, and the
// solved velocity (at t + h/2) is the rebound carried by the free forces from t + τ to t + h/2:
//     J v⁺ ≥ e·s_i − (1 − λ)(s_f − s).
// A free body b whose earliest impact this step is at τ_b moves as
//     p⁺ = p + τ_b v_free + (h − τ_b) v⁺,   q⁺ = exp((h − τ_b) ω⁺) ⊗ exp(τ_b ω_free) ⊗ q,
// instead of p + h v⁺: at τ_b = h this is the free step, at τ_b = 0 the usual one, so the
// trajectory is continuous when an impact moves from one step to the next, and the height
// of a bounce is a smooth function of the drop height (derivative e² for a ball on a plane);
// the half-step lag makes the bounce map the integrator's conserved energy by exactly e², so
// bounce heights keep the ratio e² to round-off whatever the step.
// The idea of integrating position with the time of impact is DiffTaichi's (Hu et al. 2020,
// ICLR, §4 "time of impact"); using it for the post-impact velocity too is that of Zhong et
// al. 2023 (L4DC, "TOI-Velocity"). A body that also has a closing contact that is not a
// time-of-impact row (a resting contact, a penetration correction) keeps τ_b = 0: its free
// motion would push into that support. Bodies with joints are never moved this way.
#pragma once

#include <span>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"

namespace diffphys::rigid {

// What the contact rows decided about times of impact this step (kept in the step's record).
struct ImpactRecord {
  // (contacts) τ of each time-of-impact row, s; −1 for any other contact.
  std::vector<double> contact_time;
  // (contacts) the contact's normal row was not speculative (its gap closes this step).
  std::vector<char> contact_closing;
  // (nbody) τ_b of each body, s, and the contact that set it (−1: moved over the whole step).
  // Filled only when `any`.
  std::vector<double> body_time;
  std::vector<int> body_contact;
  bool any = false;  // at least one body moves with τ_b > 0
};

// Whether body b may be moved with a time of impact: static, or dynamic with no joint.
bool free_of_joints(const Model& model, int body);

// The velocity target of a time-of-impact row: e·s_i − (1 − λ)(s_f − s), s_i = s + λ(s_f − s),
// λ = τ/h + ½, τ = g/s_f (g > 0) or 0, and its partial derivatives (for the backward pass).
struct ImpactTarget {
  double time = 0.0;    // τ
  double target = 0.0;  // the row's rhs
  double d_gap = 0.0, d_start_speed = 0.0, d_free_speed = 0.0, d_restitution = 0.0;  // ∂target/∂(g, s, s_f, e)
  double time_d_gap = 0.0, time_d_free_speed = 0.0;                                 // ∂τ/∂(g, s_f)
};
ImpactTarget impact_target(double gap, double start_speed, double free_speed, double restitution, double dt);

// After append_contact_rows filled contact_time and contact_closing: each body's τ_b (the
// earliest of its time-of-impact rows; 0 if it also has another closing contact).
void assign_body_impact_times(const Model& model, std::span<const Contact> contacts, ImpactRecord& record);

}  // namespace diffphys::rigid
