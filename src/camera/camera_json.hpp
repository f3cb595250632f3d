// camera/camera_json.hpp — a scene file's "cameras" list (docs/scene-format.md, "Cameras"):
// read by load_world / parse_world beside the scene's parts, into World::cameras.
#pragma once

#include <string>
#include <vector>

#include "diffphys/camera.hpp"
#include "diffphys/model.hpp"
#include "model/json_reader.hpp"

namespace diffphys::camera {

// What a scene's "cameras" list holds: the cameras and how the shapes look to each
// (appearances[i] belongs to cameras[i]).
struct SceneCameras {
  std::vector<Camera> cameras;
  std::vector<Appearance> appearances;
};

// Each entry: "name", "position" [x, y, z] (m; world frame, or the body's frame — origin at its
// centre of mass — with "body"), the view as "orientation" [w, x, y, z] / "euler" (degrees) or
// "look_at" [x, y, z] (same frame) with an optional "up" (default [0, 0, 1]), "fov_deg"
// (vertical), "width", "height" (pixels), optional "body" (a rigid body's name) and
// "far_depth" (m); the look: optional "colours" {shape or body name: [r, g, b]} (a body's name
// colours all its shapes; a shape's own name wins) and "background" [r, g, b], components in
// [0, 1], over default_appearance. `rigid` is the scene's rigid model (null for a soft-only
// scene, whose cameras cannot name a body or colour a shape). Throws Error
// "<source>: cameras[i].<key>: ..." naming the value.
SceneCameras read_cameras(const json::Json& list, const Model* rigid, const std::string& source);

}  // namespace diffphys::camera
