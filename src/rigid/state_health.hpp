// rigid/state_health.hpp — is the state a step wrote one a caller may use? (issue #19)
//
// A step can leave a state that is numerically garbage while its solve converged: NaN from
// a singular mass ratio, a body expelled at 1 km/s from a deep initial penetration, −inf
// from an absurd dt. check_state_health() looks at every body of state_out once, after
// integration and joint projection, and writes the first offender into the StepStatus
// (docs/robustness.md, "State health"). One pass over 13 numbers per body, no allocation:
// small beside the step's collision detection and solve, which touch the same bodies many
// times over.
#pragma once

#include "diffphys/model.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys::rigid {

// Sets status.health / health_body / health_value / health_angular for the lowest-index
// unhealthy body of `state` (non-finite before too fast within a body), and clears
// status.converged when it finds one. Leaves an Ok status untouched otherwise.
void check_state_health(const Model& model, const State& state, StepStatus& status);

}  // namespace diffphys::rigid
