// viewer/soft_view_json.cpp — the "topology" and "obstacles" blocks of soft and coupled
// trajectory files (viewer/soft_view_json.hpp), read by the replay page.
#include "soft_view_json.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "diffphys/soft.hpp"

namespace diffphys::viewer {
namespace {
// Element by element: nlohmann's std::array conversion trips GCC's -Wnull-dereference.
nlohmann::json triple(const std::array<double, 3>& v) { return nlohmann::json::array({v[0], v[1], v[2]}); }
nlohmann::json matrix(const std::array<double, 9>& m) {
  return nlohmann::json::array({m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8]});
}
}  // namespace

std::vector<std::array<int, 3>> soft_surface_triangles(const soft::SoftModel& model) {
  std::vector<std::array<int, 3>> surface;
  surface.reserve(model.triangles.size());
  for (const soft::TriangleElement& triangle : model.triangles) surface.push_back(triangle.nodes);

  // A tet face seen from outside the tet: for a tet (0, 1, 2, 3) of positive volume, the faces
  // (0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3) have normals pointing away from the fourth node.
  // A face is on the surface when exactly one tet uses it (its sorted nodes as the key).
  constexpr int kFaces[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  struct FaceUse {
    std::array<int, 3> oriented;
    int count = 0;
  };
  std::map<std::array<int, 3>, FaceUse> faces;
  const auto& x = model.rest_positions;
  for (const soft::TetElement& tet : model.tets) {
    std::array<int, 4> nodes = tet.nodes;
    // Orientation from the rest positions, so that a tet listed with negative volume still
    // gives outward faces.
    const auto at = [&](int node, int r) { return x[static_cast<std::size_t>(3 * node + r)]; };
    double e[3][3];
    for (int k = 0; k < 3; ++k)
      for (int r = 0; r < 3; ++r) e[k][r] = at(nodes[static_cast<std::size_t>(k + 1)], r) - at(nodes[0], r);
    const double volume6 = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                           e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                           e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    if (volume6 < 0.0) std::swap(nodes[1], nodes[2]);
    for (const auto& face : kFaces) {
      const std::array<int, 3> oriented{nodes[static_cast<std::size_t>(face[0])], nodes[static_cast<std::size_t>(face[1])],
                                        nodes[static_cast<std::size_t>(face[2])]};
      std::array<int, 3> key = oriented;
      std::sort(key.begin(), key.end());
      FaceUse& use = faces[key];
      if (use.count++ == 0) use.oriented = oriented;
    }
  }
  for (const auto& [key, use] : faces)
    if (use.count == 1) surface.push_back(use.oriented);
  return surface;
}

nlohmann::json soft_topology_json(const soft::SoftModel& model) {
  nlohmann::json triangles = nlohmann::json::array();
  for (const auto& t : soft_surface_triangles(model)) triangles.push_back(nlohmann::json::array({t[0], t[1], t[2]}));
  nlohmann::json edges = nlohmann::json::array();
  for (const auto& spring : model.springs) edges.push_back(nlohmann::json::array({spring[0], spring[1]}));
  return {{"surface_triangles", triangles}, {"edges", edges}};
}

nlohmann::json soft_obstacles_json(const soft::SoftModel& model) {
  nlohmann::json obstacles = nlohmann::json::array();
  for (const soft::Obstacle& obstacle : model.obstacles) {
    nlohmann::json item{{"name", obstacle.name}, {"point", triple(obstacle.point)}};
    item["frame"] = obstacle.frame < 0 ? nlohmann::json(nullptr)
                                       : nlohmann::json(model.frames[static_cast<std::size_t>(obstacle.frame)]);
    switch (obstacle.type) {
      case soft::ObstacleType::Plane:
        item["type"] = "plane";
        item["normal"] = triple(obstacle.normal);
        break;
      case soft::ObstacleType::Sphere:
        item["type"] = "sphere";
        item["radius"] = obstacle.radius;
        break;
      case soft::ObstacleType::Box: {
        item["type"] = "box";
        item["rotation"] = matrix(obstacle.rotation);
        // The model keeps the inner box; the file gives the outer one, as the scene does.
        item["half_extents"] = triple({obstacle.half_extents[0] + obstacle.rounding, obstacle.half_extents[1] + obstacle.rounding,
                                       obstacle.half_extents[2] + obstacle.rounding});
        item["rounding"] = obstacle.rounding;
        break;
      }
      case soft::ObstacleType::Capsule:
        item["type"] = "capsule";
        item["rotation"] = matrix(obstacle.rotation);
        item["radius"] = obstacle.radius;
        item["half_length"] = obstacle.half_length;
        break;
    }
    obstacles.push_back(item);
  }
  return obstacles;
}

}  // namespace diffphys::viewer
