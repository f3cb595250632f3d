// tools/convert_command.hpp — `diffphys convert`: writes any loadable rigid scene (JSON, URDF,
// MJCF) as a JSON scene file (diffphys::write_scene_json, docs/scene-format.md "Writing scenes").
#pragma once

#include <string>

#include "scene_options.hpp"

namespace diffphys::cli {

struct ConvertOptions {
  std::string scene_path;
  std::string out_path;
  bool quiet = false;
  SceneOptions scene;  // --package-path, --self-collision (URDF files), --solver, --formulation
};

// Loads the scene as every subcommand does (load_scene_world: the loaders' warnings on stderr),
// refuses a world with soft bodies, fluids or cameras (the writer holds rigid scenes only),
// and writes the file whole or not at all. Returns the exit code (0); throws diffphys::Error
// naming the file and the item that cannot be written.
int run_convert(const ConvertOptions& options);

}  // namespace diffphys::cli
