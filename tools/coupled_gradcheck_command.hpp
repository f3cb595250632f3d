// tools/coupled_gradcheck_command.hpp — `diffphys gradcheck` on a coupled rigid + soft scene
// file (docs/soft-bodies.md#coupled-scene-files).
#pragma once

#include "gradcheck_command.hpp"

namespace diffphys::cli {

// CoupledRollout::backward against central finite differences of the whole coupled rollout:
// rigid θ and soft θ (a spread of 8 components of longer slices), the rigid initial state of
// the dynamic bodies, a spread of soft initial positions and velocities, of rigid controls
// and of soft per-node forces; printed as the rigid table. Returns 0 when all agree, 3 otherwise.
int run_coupled_gradcheck(const GradcheckOptions& options);

}  // namespace diffphys::cli
