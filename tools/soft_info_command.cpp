// tools/soft_info_command.cpp — `diffphys info SCENE` for soft scenes: what the scene builds
// (nodes, pinned nodes, springs, tets, cloth triangles and hinges, attachments, obstacles),
// the solver settings and every slice of the parameter vector θ with its values. The printer
// also describes the soft part of a coupled scene (coupled_info_command.cpp).
#include "soft_info_command.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <span>

#include "diffphys/soft.hpp"
#include "diffphys/soft_scene.hpp"
#include "number_text.hpp"

namespace diffphys::cli {

namespace {

// Up to `shown` values, then how many there are in all.
std::string values_text(std::span<const double> values, std::size_t shown = 8) {
  std::string text = "[";
  for (std::size_t i = 0; i < std::min(values.size(), shown); ++i) {
    if (i > 0) text.append(", ");
    text.append(number(values[i], 10));
  }
  if (values.size() > shown) text.append(", … (").append(std::to_string(values.size())).append(" values)");
  text.append("]");
  return text;
}

}  // namespace

int run_soft_info(const std::string& scene_path) {
  const soft::SoftBuild built = soft::build_soft_scene(soft::load_soft_scene(scene_path), scene_path);
  print_soft_info("soft scene " + scene_path, built.model, built.params);
  return 0;
}

void print_soft_info(const std::string& heading, const soft::SoftModel& model, const soft::SoftParams& params) {
  using namespace diffphys::soft;
  const auto pinned = std::count(model.pinned.begin(), model.pinned.end(), char{1});
  std::vector<double> masses(static_cast<std::size_t>(model.node_count));
  lumped_masses(model, params, masses);
  double total_mass = 0.0;
  for (std::size_t i = 0; i < masses.size(); ++i)
    if (!model.pinned[i]) total_mass += masses[i];

  std::cout << heading << ": \"" << model.name << "\", dt " << number(model.dt) << " s\n";
  std::cout << "newton: max_iterations " << model.newton.max_iterations << ", tolerance "
            << number(model.newton.tolerance) << " m/s, armijo " << number(model.newton.armijo) << "\n";
  std::cout << "contact: barrier_distance " << number(model.contact.barrier_distance) << " m, friction_velocity "
            << number(model.contact.friction_velocity) << " m/s\n";
  std::cout << "\nnodes: " << model.node_count << " (" << pinned << " pinned), " << model.dof_count()
            << " DOFs, free mass " << number(total_mass) << " kg\n";
  std::cout << "elements: " << model.springs.size() << " springs, " << model.tets.size() << " tets, "
            << model.triangles.size() << " cloth triangles, " << model.hinges.size() << " hinges, "
            << model.attachment_nodes.size() << " attachments";
  if (!model.frame_attachment_nodes.empty())
    std::cout << ", " << model.frame_attachment_nodes.size() << " nodes attached to frames";
  std::cout << "\n";
  if (!model.tet_materials.empty()) {
    std::cout << "\ntet materials (" << model.tet_materials.size() << "):\n";
    for (std::size_t m = 0; m < model.tet_materials.size(); ++m) {
      const auto count = std::count_if(model.tets.begin(), model.tets.end(),
                                       [&](const TetElement& tet) { return tet.material == static_cast<int>(m); });
      std::cout << "  [" << m << "] " << model.tet_materials[m].name << "  "
                << (model.tet_materials[m].model == ElasticModel::NeoHookean ? "neo_hookean" : "corotated") << "  "
                << count << " tets\n";
    }
  }
  if (!model.cloth_materials.empty()) {
    std::cout << "\ncloth materials (" << model.cloth_materials.size() << "):\n";
    for (std::size_t m = 0; m < model.cloth_materials.size(); ++m) {
      const auto count = std::count_if(model.triangles.begin(), model.triangles.end(),
                                       [&](const TriangleElement& t) { return t.material == static_cast<int>(m); });
      std::cout << "  [" << m << "] " << model.cloth_materials[m] << "  " << count << " triangles\n";
    }
  }
  std::cout << "\nobstacles (" << model.obstacles.size() << "):\n";
  for (std::size_t i = 0; i < model.obstacles.size(); ++i) {
    const Obstacle& obstacle = model.obstacles[i];
    std::cout << "  [" << i << "] " << obstacle.name << "  ";
    const auto vec = [](const Vector3& v) {
      std::string text("(");
      text.append(number(v[0])).append(", ").append(number(v[1])).append(", ").append(number(v[2])).append(")");
      return text;
    };
    if (obstacle.type == ObstacleType::Plane)
      std::cout << "plane through " << vec(obstacle.point) << " normal " << vec(obstacle.normal) << "\n";
    else if (obstacle.type == ObstacleType::Sphere)
      std::cout << "sphere at " << vec(obstacle.point) << " radius " << number(obstacle.radius) << " m\n";
    else if (obstacle.type == ObstacleType::Box)
      std::cout << "box at " << vec(obstacle.point) << " half extents " << vec(obstacle.half_extents) << " m"
                << (obstacle.rounding > 0 ? " rounded " + number(obstacle.rounding) + " m" : std::string()) << "\n";
    else if (obstacle.type == ObstacleType::Capsule)
      std::cout << "capsule at " << vec(obstacle.point) << " radius " << number(obstacle.radius) << " m, half length "
                << number(obstacle.half_length) << " m\n";
    else  // shapes added later print their reference point until described here
      std::cout << "shape at " << vec(obstacle.point) << "\n";
    if (obstacle.frame >= 0)  // coordinates are in the frame's (a rigid body's) coordinates
      std::cout << "        moving with frame " << model.frames[static_cast<std::size_t>(obstacle.frame)] << " (in its coordinates)\n";
  }
  std::cout << "\nparameters θ (" << model.param_count() << " values in " << model.layout.slices.size() << " slices):\n";
  std::size_t width = 0;
  for (const SoftParamLayout::Slice& slice : model.layout.slices) width = std::max(width, slice.name.size());
  for (const SoftParamLayout::Slice& slice : model.layout.slices) {
    std::string padded = slice.name;
    padded.resize(width, ' ');
    std::cout << "  " << padded << "  @" << slice.offset << "  "
              << values_text(std::span<const double>(params.values)
                                 .subspan(static_cast<std::size_t>(slice.offset), static_cast<std::size_t>(slice.size)))
              << "\n";
  }
}

}  // namespace diffphys::cli
