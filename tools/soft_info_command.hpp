// tools/soft_info_command.hpp — `diffphys info` on a soft scene file (docs/soft-bodies.md).
#pragma once

#include <string>

namespace diffphys::cli {

// Prints the soft scene's settings, nodes, elements, materials, obstacles and the named
// slices of θ with their values; returns the exit code (0). Bad input throws diffphys::Error.
int run_soft_info(const std::string& scene_path);

}  // namespace diffphys::cli
