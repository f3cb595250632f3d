// tools/convert_command.cpp — `diffphys convert INPUT -o OUTPUT.json` (convert_command.hpp).
#include "convert_command.hpp"

#include <iostream>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"
#include "output_paths.hpp"
#include "world/part_report.hpp"

namespace diffphys::cli {

int run_convert(const ConvertOptions& options) {
  check_writable(options.out_path, "scene file");  // a bad output path fails before the load
  const World world = load_scene_world(options.scene_path, options.scene);
  if (!world.has_rigid() || world.has_soft() || world.has_fluid())
    throw Error(message(options.scene_path, ": holds a ", world.kind(),
                        " world; convert writes rigid scenes only (soft bodies and fluids have no scene writer yet)"));
  if (!world.cameras.empty())
    throw Error(
        message(options.scene_path, ": camera '", world.cameras.front().name,
                "': convert writes rigid bodies only, and would drop the scene's cameras (no camera writer yet)"));
  const Scene& scene = *world.rigid;
  write_output_file(options.out_path, scene_json_text(scene), "scene file");
  if (!options.quiet) {
    const Model& model = scene.model;
    std::cout << "wrote       " << options.out_path << " (" << report::plural(model.body_count() - 1, "body", "bodies")
              << ", " << report::plural(model.joint_count(), "joint", "joints") << ", "
              << report::plural(model.actuator_count(), "actuator", "actuators") << ", "
              << report::plural(model.equality_count(), "equality", "equalities") << ", "
              << report::plural(static_cast<long long>(model.meshes.size()), "mesh", "meshes") << "; "
              << report::plural(model.param_count(), "parameter", "parameters") << ")\n";
  }
  return 0;
}

}  // namespace diffphys::cli
