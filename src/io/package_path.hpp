// io/package_path.hpp — where a URDF's mesh reference points: `package://NAME/rest` through a
// package search path (ROS's convention), `file://` URIs, and plain paths relative to the
// URDF file.
//
// ROS resolves package://NAME with its package index; diffphys has none, so it searches, in
// this order (UrdfOptions in diffphys/robot_loaders.hpp, docs/robot-formats.md):
//  1. the directories the caller gives (UrdfOptions::package_path; the command line's
//     --package-path),
//  2. the directories of the ROS_PACKAGE_PATH environment variable (':'-separated), as
//     rospack does,
//  3. as a last resort, the URDF file's directory and its ancestors: one of them named NAME
//     (the file lies inside its package), or a directory NAME beside them.
// In a directory D of 1 and 2, package NAME is D itself when D is named NAME, else D/NAME,
// else a directory NAME holding a package.xml found below D (ROS workspaces nest packages in
// src/ and in group folders): breadth first to kMaxPackageDepth levels, children in sorted
// order, never descending into a package, so the answer does not depend on the file system's
// listing order. A package is found once per load and remembered.
//
// What cannot be resolved is not an error (the loader skips the mesh with a warning); the
// reason names the package, every place searched and how to add one.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace diffphys::io {

class MeshLocator {
 public:
  // Levels below a package-path directory searched for a package.xml.
  static constexpr int kMaxPackageDepth = 4;
  // Directories listed per search at most (a package path holding "/" stays bounded).
  static constexpr int kMaxDirectoriesListed = 20000;

  // `ros_package_path`: the ROS_PACKAGE_PATH value, or null when unset. `base_directory`:
  // the URDF file's directory (empty: the working directory).
  MeshLocator(std::vector<std::filesystem::path> package_path, const char* ros_package_path,
              std::filesystem::path base_directory);

  struct Location {
    std::optional<std::filesystem::path> file;  // the mesh file to read; empty if unresolved
    std::string package;                        // package://NAME: NAME (to merge the warnings of one package)
    std::string why_not;                        // unresolved: the reason, for the warning
  };
  // `reference`: the <mesh filename> text.
  Location locate(const std::string& reference);

 private:
  std::optional<std::filesystem::path> find_package(const std::string& name);
  std::optional<std::filesystem::path> search_below(const std::filesystem::path& root, const std::string& name,
                                                    bool& truncated) const;
  std::string not_found_message(const std::string& name) const;

  std::vector<std::filesystem::path> package_path_;
  std::vector<std::filesystem::path> ros_package_path_;
  bool ros_package_path_set_ = false;
  std::filesystem::path base_directory_;
  std::map<std::string, std::optional<std::filesystem::path>> packages_;  // found (or not) so far
  std::map<std::string, bool> truncated_;  // by package: a search stopped at kMaxDirectoriesListed
};

}  // namespace diffphys::io
