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
#include <vector>

#include "diffphys/model_builder.hpp"

namespace diffphys {

// What a URDF file does not say but a ROS user would tell a loader.
struct UrdfOptions {
  // Directories searched first for `package://NAME/...` mesh paths; then the directories of
  // the ROS_PACKAGE_PATH environment variable (':'-separated); last the URDF file's own
  // directory and its ancestors. In a searched directory D, package NAME is D itself when D
  // is named NAME, else D/NAME, else a directory NAME holding a package.xml at most four
  // levels below D (the first in sorted order, shallowest first). docs/robot-formats.md.
  std::vector<std::filesystem::path> package_path;
  // Links of one robot not joined by a joint never collide unless the file asks for it
  // (Gazebo's <self_collide>); true lets every such pair collide.
  bool self_collision = false;
};

Scene load_urdf(const std::filesystem::path& path, const UrdfOptions& options = {});
// Relative mesh file names resolve against `base_directory` (also the start of the search
// for packages among the file's ancestors).
Scene parse_urdf(std::string_view xml_text, std::string_view source_name = "<string>",
                 const std::filesystem::path& base_directory = {}, const UrdfOptions& options = {});

Scene load_mjcf(const std::filesystem::path& path);
Scene parse_mjcf(std::string_view xml_text, std::string_view source_name = "<string>",
                 const std::filesystem::path& base_directory = {});

}  // namespace diffphys
