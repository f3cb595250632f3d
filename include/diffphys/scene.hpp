// diffphys/scene.hpp — scene files (JSON) in and out.
//
// The format is documented, with a complete example per feature, in docs/scene-format.md.
// Loading goes through ModelBuilder, so a scene file and C++ code build the same Model.
// Malformed input is refused with an Error naming the file, the field (as a JSON path such
// as bodies[2].mass) and the offending value.
#pragma once

#include <filesystem>
#include <string_view>

#include "diffphys/model_builder.hpp"
#include "diffphys/robot_loaders.hpp"

namespace diffphys {

// Dispatches on the extension: .urdf → load_urdf, .xml or .mjcf → load_mjcf
// (diffphys/robot_loaders.hpp); any other file is read as a JSON scene. `urdf_options`
// apply to URDF files only (the package path of package:// meshes, self-collision).
Scene load_scene(const std::filesystem::path& path, const UrdfOptions& urdf_options = {});
Scene parse_scene(std::string_view json_text, std::string_view source_name = "<string>");

}  // namespace diffphys
