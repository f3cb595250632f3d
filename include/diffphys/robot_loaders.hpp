// diffphys/robot_loaders.hpp — robots from URDF and from a subset of MuJoCo's MJCF.
//
// Both loaders map the file onto ModelBuilder specs, so a robot file, a JSON scene and C++
// code build the same kind of Scene (Model, Params, State, default controls), checked by the
// same rules. Parameter slices take the file's names: "body/forearm/mass",
// "joint/elbow/damping". What the file says that diffphys ignores or approximates is listed
// in Scene::warnings (file and line); what cannot be honoured — an unknown joint type, a
// missing inertial, a negative mass, broken XML — is refused with an Error naming the file,
// the line and the element. What is supported, and how each item maps: docs/robot-formats.md.
//
// load_scene (scene.hpp) dispatches on the extension: .urdf → load_urdf; .xml, .mjcf →
// load_mjcf; anything else → the JSON scene format.
#pragma once

#include <filesystem>
#include <string_view>

#include "diffphys/model_builder.hpp"

namespace diffphys {

Scene load_urdf(const std::filesystem::path& path);
// Mesh file names resolve against `base_directory`.
Scene parse_urdf(std::string_view xml_text, std::string_view source_name = "<string>",
                 const std::filesystem::path& base_directory = {});

Scene load_mjcf(const std::filesystem::path& path);
Scene parse_mjcf(std::string_view xml_text, std::string_view source_name = "<string>",
                 const std::filesystem::path& base_directory = {});

}  // namespace diffphys
