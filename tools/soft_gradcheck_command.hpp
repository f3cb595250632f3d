// tools/soft_gradcheck_command.hpp — `diffphys gradcheck` on a soft scene file.
#pragma once

#include "gradcheck_command.hpp"

namespace diffphys::cli {

// Every parameter in θ, a spread of initial positions and velocities and of per-node forces:
// SoftRollout::backward against central finite differences, printed as the rigid table.
// Returns 0 when all agree, 3 otherwise.
int run_soft_gradcheck(const GradcheckOptions& options);

}  // namespace diffphys::cli
