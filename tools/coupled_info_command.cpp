// tools/coupled_info_command.cpp — `diffphys info SCENE` for coupled rigid + soft scenes: the
// rigid part as for rigid scenes, the soft part as for soft scenes (the same printers), then
// what ties them: one-/two-way, substeps, frames, attachments and colliders.
#include "coupled_info_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <span>

#include "number_text.hpp"
#include "soft_info_command.hpp"

namespace diffphys::cli {

namespace {

const char* obstacle_type_name(soft::ObstacleType type) {
  switch (type) {
    case soft::ObstacleType::Plane: return "plane";
    case soft::ObstacleType::Sphere: return "sphere";
    case soft::ObstacleType::Box: return "box";
    case soft::ObstacleType::Capsule: return "capsule";
  }
  return "shape";
}

// "0, 1, 2, … (49 nodes)": the first few indices of a list.
std::string index_list(const std::vector<int>& indices, std::size_t shown = 8) {
  std::string text;
  for (std::size_t i = 0; i < std::min(indices.size(), shown); ++i)
    text.append(i > 0 ? ", " : "").append(std::to_string(indices[i]));
  if (indices.size() > shown) text.append(", …");
  return text;
}

}  // namespace

int run_coupled_info(const std::string& scene_path, RigidInfoPrinter print_rigid) {
  const CoupledSystem system = load_coupled_scene(scene_path);
  std::cout << "coupled scene " << scene_path << ": rigid + soft, " << (system.two_way ? "two-way" : "one-way")
            << " coupling\n\n";
  print_rigid("rigid part", Scene{system.rigid_model, system.rigid_params, system.rigid_state, system.rigid_controls, {}});
  std::cout << "\n";
  print_soft_info("soft part", system.soft_model, system.soft_params);
  std::cout << "\n";
  print_coupling_info(system);
  return 0;
}

void print_coupling_info(const CoupledSystem& system) {
  const Model& rigid = system.rigid_model;
  const soft::SoftModel& soft_model = system.soft_model;
  const auto body_name = [&](int frame) {
    return rigid.bodies[static_cast<std::size_t>(system.frame_bodies[static_cast<std::size_t>(frame)])].name;
  };
  std::cout << "coupling: "
            << (system.two_way ? "two-way (the attachment and contact forces act back on the rigid bodies, staggered by one soft step)"
                               : "one-way (the rigid bodies move the soft body; its forces do not act on them)")
            << "\n";
  std::cout << "substeps " << system.substeps << ": soft dt " << number(soft_model.dt) << " s = " << system.substeps
            << " rigid steps of " << number(rigid.dt) << " s\n";

  std::cout << "\nframes (" << soft_model.frames.size() << ", soft θ slices frame/<name>/pose set from the rigid body each step):\n";
  for (std::size_t f = 0; f < soft_model.frames.size(); ++f)
    std::cout << "  [" << f << "] " << soft_model.frames[f] << "  follows rigid body " << body_name(static_cast<int>(f)) << "\n";

  const auto& nodes = soft_model.frame_attachment_nodes;
  std::cout << "\nattachments (" << nodes.size() << " soft nodes tied to rigid bodies):\n";
  const std::span<const double> stiffness =
      soft_model.layout.frame_attachment_stiffness < 0
          ? std::span<const double>()
          : std::span<const double>(system.soft_params.values)
                .subspan(static_cast<std::size_t>(soft_model.layout.frame_attachment_stiffness), nodes.size());
  for (std::size_t f = 0; f < soft_model.frames.size(); ++f) {
    std::vector<int> attached;
    double low = INFINITY, high = -INFINITY;
    for (std::size_t a = 0; a < nodes.size(); ++a) {
      if (soft_model.frame_attachment_frames[a] != static_cast<int>(f)) continue;
      attached.push_back(nodes[a]);
      if (!stiffness.empty()) {
        low = std::min(low, stiffness[a]);
        high = std::max(high, stiffness[a]);
      }
    }
    if (attached.empty()) continue;
    std::cout << "  " << body_name(static_cast<int>(f)) << ": " << attached.size() << " nodes (" << index_list(attached)
              << "), stiffness " << (low == high ? number(low) : number(low) + " to " + number(high)) << " N/m\n";
  }

  std::vector<std::size_t> moving;
  for (std::size_t i = 0; i < soft_model.obstacles.size(); ++i)
    if (soft_model.obstacles[i].frame >= 0) moving.push_back(i);
  std::cout << "\ncolliders (" << moving.size() << " soft obstacles moving with rigid bodies):\n";
  for (const std::size_t i : moving) {
    const soft::Obstacle& obstacle = soft_model.obstacles[i];
    std::cout << "  [" << i << "] " << obstacle.name << "  " << obstacle_type_name(obstacle.type) << " on "
              << body_name(obstacle.frame);
    if (i < soft_model.layout.obstacle_friction.size() && soft_model.layout.obstacle_friction[i] >= 0)
      std::cout << "  friction "
                << number(system.soft_params.values[static_cast<std::size_t>(soft_model.layout.obstacle_friction[i])]);
    std::cout << "\n";
  }
}

}  // namespace diffphys::cli
