// rigid/compliance.hpp — the convex formulation's compliant rows (Formulation::Convex):
// how a row class's time constant τ and damping ratio ζ (θ's "compliance/<class>/…")
// become the row's softness κ (R_i = κ A_ii) and the velocity target of a violated bound.
//
// A row is an implicit spring–damper on its constraint coordinate C with the row's effective
// mass m = 1/A_ii, stiffness k = m ω² and damping c = 2 m ζ ω, ω = 1/(ζ τ) (τ is the decay
// time constant 1/(ζω), MuJoCo's solref convention). Over a step of h, with C⁺ = C + h v⁺ and
// the impulse λ = −h(k C⁺ + c v⁺) (Catto 2011, "Soft constraints"):
//   v⁺ = v̂ − R λ,  R = A_ii / (hω (hω + 2ζ)) = κ A_ii,  v̂ = −ω C / (hω + 2ζ) = −C / (h + 2ζ²τ).
// So κ = 1 / (h²/(ζτ)² + 2h/τ) → 0 and v̂ → −C/h (the hard row) as τ → 0. Targets that
// are velocities (bounces, servo rates, a gap that may close this step) keep their values.
#pragma once

#include <cstddef>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"

namespace diffphys::rigid {

struct RowCompliance {
  double time_constant = 0.0;  // τ, s
  double damping_ratio = 0.0;  // ζ
};

inline RowCompliance row_compliance(const Model& model, const Params& params, RowClass row_class) {
  const auto c = static_cast<int>(row_class);
  return {params.at(model.layout.compliance_time_constant[c]), params.at(model.layout.compliance_damping_ratio[c])};
}

// Whether a step projects its joints back onto their manifold (stabilize_joints,
// rigid/integrate.cpp). The mixed LCP's joints are rigid: always. The convex formulation's
// joint rows are springs of time constant τ (θ's compliance/joint/time_constant): stiffer than
// the step (τ < h), the spring regularises a rigid joint: its rows are velocity rows and the
// projection removes the drift. As soft as the step or softer, the joint is meant to flex: its
// rows' targets are the spring's (spring_target_slope; a load m·g then deflects it by g/ω²,
// ω = 1/(ζτ)) and it is not projected, which would undo the deflection every step and add
// the correction over h to the velocities — a robot standing still on such joints was driven
// along at 0.15 m/s by it (tests/joint_projection_test.cpp).
inline bool projects_joints(const Model& model, const Params& params) {
  if (model.solver.formulation != Formulation::Convex) return true;
  return params.at(model.layout.compliance_time_constant[static_cast<int>(RowClass::Joint)]) < model.dt;
}

// The class of row i of a step: joints [0, joint_rows), limits [joint_rows, limit_rows_end),
// servos [limit_rows_end, first_contact_row), contacts after (rigid/step_workspace.hpp).
inline RowClass row_class(std::size_t joint_rows, std::size_t limit_rows_end, std::size_t first_contact_row,
                          std::size_t i) {
  if (i < joint_rows) return RowClass::Joint;
  if (i < limit_rows_end) return RowClass::Limit;
  if (i < first_contact_row) return RowClass::Servo;
  return RowClass::Contact;
}

// κ(h, τ, ζ) and its partial derivatives in τ and ζ.
struct Softness {
  double value = 0.0, d_time_constant = 0.0, d_damping_ratio = 0.0;
};
inline Softness softness(double h, const RowCompliance& compliance) {
  const double tau = compliance.time_constant, zeta = compliance.damping_ratio;
  const double denominator = h * h / (zeta * zeta * tau * tau) + 2.0 * h / tau;
  const double kappa = 1.0 / denominator;
  return {kappa, kappa * kappa * (2.0 * h * h / (zeta * zeta * tau * tau * tau) + 2.0 * h / (tau * tau)),
          kappa * kappa * 2.0 * h * h / (zeta * zeta * zeta * tau * tau)};
}

// The spring–damper's target per unit position error, −1/(h + 2ζ²τ) (v̂ = slope · C above),
// with its partial derivatives: the target of a flexible joint's rows (projects_joints false).
struct TargetSlope {
  double value = 0.0, d_time_constant = 0.0, d_damping_ratio = 0.0;
};
inline TargetSlope spring_target_slope(double h, const RowCompliance& compliance) {
  const double tau = compliance.time_constant, zeta = compliance.damping_ratio;
  const double d = h + 2.0 * zeta * zeta * tau;
  return {-1.0 / d, 2.0 * zeta * zeta / (d * d), 4.0 * zeta * tau / (d * d)};
}

// Target of a one-sided row at signed distance `gap` from its bound (contacts, limits), with
// its partial derivatives. Violated (gap ≤ 0): the spring–damper above, −gap/(h + 2ζ²τ). Open
// beyond `band` (gap ≥ δ): −gap/h + βδ/(2h), β = 2ζ²τ/(h + 2ζ²τ), i.e. the gap may close this
// step but for βδ/2. In between, the quadratic that joins the two with matching slopes, so
// the target, and with it the step, is continuously differentiable in the gap where a contact
// or a limit starts to act (the onset the issue on convex contact asks to be smooth; a kink
// there is what a resting body's central differences straddle). δ ≤ 0 gives the kinked law
// −gap/h above the bound.
struct GapTarget {
  double value = 0.0, d_gap = 0.0, d_time_constant = 0.0, d_damping_ratio = 0.0;
};
inline GapTarget compliant_gap_target(double gap, double h, const RowCompliance& compliance, double band) {
  const double tau = compliance.time_constant, zeta = compliance.damping_ratio;
  const double d = h + 2.0 * zeta * zeta * tau;
  // Slopes below (a1 = −1/d) and far above (a2 = −1/h) the bound; a1's parameter derivatives.
  const double a1 = -1.0 / d, a2 = -1.0 / h;
  const double a1_time_constant = 2.0 * zeta * zeta / (d * d), a1_damping_ratio = 4.0 * zeta * tau / (d * d);
  if (gap <= 0 || band <= 0) {
    if (gap > 0) return {-gap / h, a2, 0.0, 0.0};
    return {a1 * gap, a1, a1_time_constant * gap, a1_damping_ratio * gap};
  }
  if (gap < band) {
    // v = a1 g + (a2 − a1) g²/(2δ): slope a1 at 0, a2 at δ.
    const double weight = gap - gap * gap / (2.0 * band);  // ∂v/∂a1
    return {a1 * gap + (a2 - a1) * gap * gap / (2.0 * band), a1 + (a2 - a1) * gap / band,
            a1_time_constant * weight, a1_damping_ratio * weight};
  }
  return {a2 * gap + (a1 - a2) * band / 2.0, a2, a1_time_constant * band / 2.0, a1_damping_ratio * band / 2.0};
}

}  // namespace diffphys::rigid
