// world/body_gradcheck.hpp — check_world_gradients (diffphys/world_gradcheck.hpp) for worlds of
// bodies, as the rigid and soft part kinds (world/part_kind.hpp) register them: a rigid-only
// world through check_gradients(Scene); a world with soft bodies (alone or with rigid bodies)
// through one check over the world's flat vectors (world_gradcheck.cpp).
#pragma once

#include <span>

#include "diffphys/world_gradcheck.hpp"

namespace diffphys::world {

inline constexpr int kDefaultSoftGradcheckSteps = 10;  // world steps of a check with soft bodies

WorldGradientCheckReport check_rigid_world_gradients(const World& world, std::span<const double> controls,
                                                     const GradientCheckOptions& options);
WorldGradientCheckReport check_soft_world_gradients(const World& world, std::span<const double> controls,
                                                    const GradientCheckOptions& options);

}  // namespace diffphys::world
