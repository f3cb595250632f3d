// viewer/soft_view_json.hpp — what a soft or coupled trajectory file carries so that the replay
// page can draw the soft bodies (docs/soft-bodies.md, "Trajectory files"): the mesh topology
// ("topology": surface triangles and spring edges, written once per file, not per frame) and
// the rigid obstacles ("obstacles": plane, sphere, box, capsule, with their poses).
#pragma once

#include <array>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace diffphys::soft {
struct SoftModel;
}

namespace diffphys::viewer {

// The surface of the soft model: every cloth triangle, then every tet face used by exactly one
// tet (the boundary of the tet mesh), ordered counter-clockwise seen from outside the tet.
std::vector<std::array<int, 3>> soft_surface_triangles(const soft::SoftModel& model);

// {"surface_triangles": [[i, j, k], ...], "edges": [[i, j], ...] (the springs)}.
nlohmann::json soft_topology_json(const soft::SoftModel& model);

// [{"name", "type", "frame": null | frame name, "point", "normal" (plane), "radius" (sphere,
// capsule), "rotation" (box, capsule: shape → parent, 3×3 row-major), "half_extents" (box, outer),
// "half_length" (capsule), "rounding" (box)}, ...]; poses in the world, or in the named frame.
nlohmann::json soft_obstacles_json(const soft::SoftModel& model);

}  // namespace diffphys::viewer
