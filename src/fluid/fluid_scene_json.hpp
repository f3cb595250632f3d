// fluid/fluid_scene_json.hpp — the "fluid" section of a scene file (docs/scene-format.md,
// "Fluid"): the grid, the time step, viscosity, the walls, the passive scalars with their
// buoyancy and initial shapes, the advection scheme and the solver settings, read into a
// FluidBuild. Internal to the library (nlohmann/json stays out of the public headers).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid {

// Throws Error "<source>: fluid.<item>: <what> ..." naming the file, the item and the value
// (unknown keys with the nearest known one, non-positive spacing or resolution, negative
// viscosity, ...).
FluidBuild read_fluid_section(const nlohmann::json& section, const std::string& source);

}  // namespace diffphys::fluid
