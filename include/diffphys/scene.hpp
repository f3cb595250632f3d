// diffphys/scene.hpp — scene files (JSON) in and out: load_scene, parse_scene, write_scene_json.
//
// The format is documented, with a complete example per feature, in docs/scene-format.md.
// Loading goes through ModelBuilder, so a scene file and C++ code build the same Model.
// Malformed input is refused with an Error naming the file, the field (as a JSON path such
// as bodies[2].mass) and the offending value.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

#include "diffphys/model_builder.hpp"
#include "diffphys/robot_loaders.hpp"

namespace diffphys {

// Dispatches on the extension: .urdf → load_urdf, .xml or .mjcf → load_mjcf
// (diffphys/robot_loaders.hpp); any other file is read as a JSON scene. `urdf_options`
// apply to URDF files only (the package path of package:// meshes, self-collision).
Scene load_scene(const std::filesystem::path& path, const UrdfOptions& urdf_options = {});
Scene parse_scene(std::string_view json_text, std::string_view source_name = "<string>");

// Writes a scene — loaded from any file or built in code, stepped or not — as a JSON scene
// that parse_scene/load_scene read back to the same Model, the same θ and the same State,
// bit for bit (docs/scene-format.md, "Writing scenes"): bodies at their current state, joints
// and equalities in their bodies' frames, convex meshes as inline hull vertices, θ's values
// in the items' fields. What the format cannot hold is refused with an Error naming the item
// (a state whose time is not 0, compliance values of a complementarity scene, ...); nothing is
// written approximately. The text ends with a newline.
std::string scene_json_text(const Scene& scene);
void write_scene_json(const Scene& scene, std::ostream& out);
// scene_json_text to a file; an Error names the file (and the item, for a refusal). A refused
// scene leaves the file untouched.
void save_scene(const Scene& scene, const std::filesystem::path& path);

}  // namespace diffphys
