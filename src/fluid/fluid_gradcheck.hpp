// fluid/fluid_gradcheck.hpp — check_world_gradients (diffphys/world_gradcheck.hpp) for a world
// holding a fluid: the analytic gradient of a WorldRollout against central differences of the
// same rollout (rules in fluid_gradcheck.cpp's header and docs/fluids.md).
#pragma once

#include <span>

#include "diffphys/world_gradcheck.hpp"

namespace diffphys::world {

inline constexpr int kDefaultFluidGradcheckSteps = 10;

WorldGradientCheckReport check_fluid_world_gradients(const World& world, std::span<const double> controls,
                                                     const GradientCheckOptions& options);

}  // namespace diffphys::world
