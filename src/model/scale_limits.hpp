// model/scale_limits.hpp — scales no step can make sense of, refused when a scene is built
// (issue #19; docs/robustness.md, "State health").
//
// Most garbage a step can produce is caught by the step's own health check (rigid/
// state_health.hpp). A few inputs are wrong before the first step, and there the bound is
// clear, so the builder refuses them with the item and the value instead of letting them
// turn into NaN or a body thrown hundreds of metres:
//
//  - dt above kMaxTimeStep: no contact, joint or fall is resolved by a step that long, and
//    gravity alone moves a body ½ g dt² (5e600 m for dt = 1e300: −inf).
//  - a body's position beyond kMaxPosition from the origin: at 1e6 m the spacing of doubles
//    is 1.2e-10 m, already near the solver's tolerance; further out contacts and joints lose
//    the digits they are resolved in (1e308 overflows at the first multiplication).
//  - a mass ratio above kMaxMassRatio between two dynamic bodies joined by a joint or able
//    to touch. The lighter body's velocity carries the heavier body's impulse divided by its
//    own mass, so the heavier impulse's rounding error (ε ≈ 2.2e-16 relative) reaches the
//    lighter body amplified by the ratio r: ε·r·(heavy speed). At r = 1e10 a heavy body
//    moving 1 m/s puts 2e-6 m/s of noise on the light one; measured on a 1 g ball under a
//    box, r = 1e11 already sinks the box 43 µm in 0.3 s, r = 1e12 throws it 10 cm up and
//    1e18 throws the ball 464 m. The bound keeps a factor 10 below visible failure.
#pragma once

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

inline constexpr double kMaxTimeStep = 1.0;    // s
inline constexpr double kMaxPosition = 1e6;    // m, per coordinate of a body's centre of mass
inline constexpr double kMaxMassRatio = 1e10;  // heavier / lighter of two interacting bodies

// Throws Error naming the item ("body 'ball'", "joint 'hinge'") and the value for the first
// scale above. Called by ModelBuilder::build() after the model is complete; O(n²) in the
// dynamic bodies that carry shapes, for the pairs that may touch.
void validate_scales(const Model& model, const Params& params, const State& state);

}  // namespace diffphys
