// diffphys/world_gradcheck.hpp — every analytic gradient of a WorldRollout against central
// finite differences of the same rollout, for any world: the check behind `diffphys
// gradcheck` on any scene file.
//
// A rigid-only world is checked by check_gradients(Scene) (gradcheck.hpp), so its table is
// the rigid one. A world with soft bodies (alone or with rigid bodies, one- or two-way) is
// checked here over the world's flat vectors — WorldParams, WorldState, the world controls —
// with the loss L = Σ_{t=0..T} [Σ_k (a_k x_t,k + b_k v_t,k) + Σ_b w_b·(p_b, z axis of b, v_b, ω_b)]
// over the T world steps (the rigid bodies at rigid step t·S), with fixed pseudo-random weights
// (seed 1): it reaches every soft node and every dynamic and kinematic rigid body's state. Compared:
//   θ      every component of every rigid slice (except those the backward pass reports not
//          differentiable at their value, listed in `skipped`) and soft slice except the frame
//          poses (set from the rigid bodies at every step; their adjoints reach the rigid x₀);
//          with several parts, a spread of 8 components of longer slices (one mass per node);
//   x₀     all 12 tangent components of a spread of 4 dynamic or kinematic rigid bodies (orientation as
//          exp(δθ) ⊗ q); x₀ and v₀ of a spread of 8 free soft nodes;
//   u      every actuator at a spread of 8 rigid steps; the soft forces at a spread of 8
//          (step, node) pairs.
// Each entry is judged by compare_with_finite_differences. Both sides run with tightened
// solver tolerances (Newton 10⁻¹², rigid 10⁻¹³, warm start off) so that differences are not
// solver noise. A soft parameter at 0 other than gravity must stay ≥ 0 (a friction, a damping,
// a node's extra mass): it is differenced one-sided from ε = param_epsilon (10⁻³ of the node's
// lumped mass, at least 10⁻⁷ kg, for a node's extra mass). Entry names are the world's slice
// names; with several parts they carry the part ("rigid/body/pendulum/mass[0]", "soft x0/node 3[z]").
#pragma once

#include <span>
#include <string>
#include <vector>

#include "diffphys/gradcheck.hpp"
#include "diffphys/world.hpp"

namespace diffphys {

// Rigid scenes: 100 steps; scenes with soft bodies check every parameter with Newton solves
// and default to 10 world steps.
int default_gradcheck_steps(const World& world);

struct WorldGradientCheckReport {
  GradientCheckReport check;           // entries, worst error, passed, skipped parameters
  std::string description;             // one line: the scene, the steps, the loss
  std::vector<std::string> notes;      // solver warnings and parameters not compared, one per line
};

// controls: steps × layout().control_count (row-major) or empty: the scene's default rigid
// controls held and, for the soft part, small forces 10⁻³ sin(0.37 k) (k indexing the T × 3N
// soft forces), so that their check is not trivial. options.steps is in world steps. Throws
// Error for a wrong size.
WorldGradientCheckReport check_world_gradients(const World& world, std::span<const double> controls,
                                               const GradientCheckOptions& options);

}  // namespace diffphys
