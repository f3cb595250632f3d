// experiments/quadruped_public_model.hpp — the quadruped of Degrave et al. 2019 §3.3 as its
// authors' public code builds it (317070/TheanoPhysX, robotmodel/demi_predator_ground.json and
// the engine's soft constraints), for `diffphys experiment quadruped`. Every number, where it
// comes from and where ours differs: docs/EXPERIMENTS.md (quadruped), "The robot and the recipe,
// and where each comes from".
#pragma once

#include "experiments/quadruped_model.hpp"

namespace diffphys::experiments {

// Choices the repository makes that are worth comparing against.
struct PublicQuadrupedDesign {
  // s. The repository's step (integration_parameters.time_step); the compliances below are
  // matched at this step and then held fixed, so dt/2 is the same continuous robot.
  double dt = 0.005;
  // The repository gives a sphere the rotational inertia 0.4·m (kg·m², every engine file:
  // mass·diag(1, 1, 1, 0.4, 0.4, 0.4)) where a solid sphere has 0.4·m·r²: its 5 cm feet turn
  // like flywheels 400 times heavier. We follow the repository (docs/EXPERIMENTS.md: with
  // the solid sphere's inertia its 4 N·m servos cannot hold the robot up); false: the solid
  // sphere's.
  bool repository_sphere_inertia = true;
  // The servo rows' compliance: the repository's (a velocity servo whose torque is
  // m_eff ω² (v_target − v), m_eff the row's effective inertia: ~0.085 N·m per rad/s at a knee),
  // or stiff (ModelBuilder's default: the servo reaches its target velocity unless that takes
  // more than its 4 N·m, the paper's §2.2 description).
  bool repository_servo_compliance = true;
};

// The robot (x forward, z up, the ground z = 0): a 0.7 × 0.3 × 0.1 m spine of 1000 kg/m³
// with its centre 0.4 m up; 4 spheres of 5 cm inside it (the belly's contacts), each a body
// of its own fixed to the spine as in the repository; per leg at x = ±0.3, y = ±0.2 a femur
// 0.05 × 0.05 × 0.2 m (hip at the spine's centre height), a tibia 0.05 × 0.05 × 0.15 m and a
// foot sphere of 5 cm fixed to the tibia, its lowest point on the ground. Hips and knees are
// hinges about y driven by velocity servos (target velocity clip(50·(target − angle),
// ±1440°/s), torque ≤ 4 N·m); no joint stops. Only the 8 spheres touch the ground (μ = 0.5).
// Every row is compliant (Formulation::Convex), matched to the repository's soft
// constraints at dt = 0.005 s. Servo order: hips FL, FR, HL, HR, then knees in the same order
// (QuadrupedModel::kServos). Targets are the network's outputs clipped to ±45°.
QuadrupedModel build_public_quadruped(const PublicQuadrupedDesign& design = {});

// The compliance of the repository's soft rows, a spring of f Hz with damping ratio ζ per
// row's effective mass, in the convex formulation's (τ, ζ) (rigid/compliance.hpp). The
// repository's row solves J v⁺ + CFM λ + (ERP/h) C = 0 with CFM = 1/(c + h k) and
// ERP = h k/(c + h k), k = m ω², c = 2 m ζ ω: λ = −k C − (c + h k) v⁺, a spring k/h and
// damper c/h in force units. Ours is λ = −h(k' C⁺ + c' v⁺), so k' = k/h, c' = c/h: ω' = ω/√h,
// ζ' = ζ/√h, τ' = 1/(ζ'ω') = h/(ζω).
ModelBuilder::RowCompliance repository_row_compliance(double frequency_hz, double damping_ratio, double dt);
// The servo row (ζ = 0 in the repository): its torque is m ω² (v_target − v⁺) whatever the
// step. Ours is m (h ω'² + 2ζ'ω')(v_target − v⁺) with ω' = 1/(ζ'τ'); a large ζ' = 10 makes
// the h term negligible (0.2 % at h = 5 ms) and τ' solves h/(ζ'τ')² + 2/τ' = ω² at `dt`.
ModelBuilder::RowCompliance repository_servo_compliance(double frequency_hz, double dt);

}  // namespace diffphys::experiments
