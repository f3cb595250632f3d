// tools/soft_info_command.hpp — `diffphys info` on a soft scene file (docs/soft-bodies.md).
#pragma once

#include <string>

#include "diffphys/soft.hpp"

namespace diffphys::cli {

// Prints the soft scene's settings, nodes, elements, materials, obstacles and the named
// slices of θ with their values; returns the exit code (0). Bad input throws diffphys::Error.
int run_soft_info(const std::string& scene_path);

// The same description of a built soft model and its θ, under `heading` ("soft scene PATH",
// "soft part"): also the soft part of `diffphys info` on a coupled scene.
void print_soft_info(const std::string& heading, const soft::SoftModel& model, const soft::SoftParams& params);

}  // namespace diffphys::cli
