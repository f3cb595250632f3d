// tools/robot_file_options.hpp — the command-line options that every subcommand loading a
// scene file shares for robot files: --package-path DIR (repeatable) and --self-collision,
// turned into the loader's UrdfOptions (diffphys/robot_loaders.hpp). They apply to URDF files
// and are ignored for the others.
#pragma once

#include <string>
#include <vector>

#include "diffphys/robot_loaders.hpp"

namespace diffphys::cli {

struct RobotFileOptions {
  std::vector<std::string> package_path;  // searched first for package://NAME, in this order
  bool self_collision = false;

  UrdfOptions urdf() const {
    UrdfOptions options;
    for (const std::string& directory : package_path) options.package_path.emplace_back(directory);
    options.self_collision = self_collision;
    return options;
  }
};

}  // namespace diffphys::cli
