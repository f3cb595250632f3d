// tools/scene_options.hpp — the command-line options that every subcommand loading a scene
// shares, and the one loader they all call (load_scene_world): any scene file through
// load_world, the robot loaders' warnings on stderr, then the overrides of the rigid part.
//   --package-path DIR, --self-collision   URDF files only; a documented no-op for other files.
//   --solver, --formulation                the rigid part (rigid scenes and the rigid part of
//                                          rigid + soft scenes); an error for a soft-only scene,
//                                          whose Newton solver is set in the scene file.
#pragma once

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_report.hpp"

namespace diffphys::cli {

struct SceneOptions {
  std::vector<std::string> package_path;  // searched first for package://NAME, in this order
  bool self_collision = false;
  std::string solver;       // --solver: empty keeps the scene's ("interior_point", "pgs")
  std::string formulation;  // --formulation: empty keeps the scene's ("complementarity", "convex")

  UrdfOptions urdf() const {
    UrdfOptions options;
    for (const std::string& directory : package_path) options.package_path.emplace_back(directory);
    options.self_collision = self_collision;
    return options;
  }
};

inline World load_scene_world(const std::string& path, const SceneOptions& options) {
  World world = load_world(path, options.urdf());
  if (world.has_rigid())
    for (const std::string& warning : world.rigid->warnings) std::cerr << "diffphys: warning: " << warning << "\n";
  for (const auto& [flag, value] : {std::pair{"--solver", &options.solver}, std::pair{"--formulation", &options.formulation}})
    if (!value->empty() && !world.has_rigid())
      throw Error(message(flag, " ", *value, ": applies to rigid bodies, and ", path, " holds ", solver_settings(world)));
  if (options.solver == "interior_point") world.rigid->model.solver.type = SolverType::InteriorPoint;
  if (options.solver == "pgs") world.rigid->model.solver.type = SolverType::ProjectedGaussSeidel;
  if (options.formulation.empty()) return world;
  // The convex formulation adds parameter slices (the rows' compliance): the world's layout is rebuilt.
  Scene rigid = std::move(*world.rigid);
  set_formulation(rigid, options.formulation == "convex" ? Formulation::Convex : Formulation::Complementarity);
  World rebuilt(world.name, world.source, std::move(rigid), std::move(world.soft), world.coupling);
  // The scene's cameras are not part of the layout: they carry over as read.
  rebuilt.cameras = std::move(world.cameras);
  rebuilt.camera_appearances = std::move(world.camera_appearances);
  return rebuilt;
}

}  // namespace diffphys::cli
