// tools/coupled_info_command.hpp — `diffphys info` on a coupled rigid + soft scene file
// (docs/soft-bodies.md#coupled-scene-files).
#pragma once

#include <string>

#include "diffphys/coupled.hpp"
#include "diffphys/model_builder.hpp"

namespace diffphys::cli {

// The rigid scene printer of `diffphys info` (diffphys_main.cpp): one description for rigid
// scenes and for the rigid part of coupled scenes.
using RigidInfoPrinter = void (*)(const std::string& heading, const Scene& scene);

// Prints the rigid part (print_rigid), the soft part (print_soft_info) and the coupling;
// returns the exit code (0). Bad input throws diffphys::Error.
int run_coupled_info(const std::string& scene_path, RigidInfoPrinter print_rigid);

// The coupling: one- or two-way, substeps, which rigid body each soft frame follows, the
// soft nodes attached to each body (with their stiffness) and the shapes moving with them.
void print_coupling_info(const CoupledSystem& system);

}  // namespace diffphys::cli
