// camera/camera_json.hpp — a scene file's "cameras" list (docs/scene-format.md, "Cameras"):
// read by load_world / parse_world beside the scene's parts, into World::cameras.
#pragma once

#include <string>
#include <vector>

#include "diffphys/camera.hpp"
#include "diffphys/model.hpp"
#include "model/json_reader.hpp"

namespace diffphys::camera {

// Each entry: "name", "position" [x, y, z] (m; world frame, or the body's frame — origin at its
// centre of mass — with "body"), the view as "orientation" [w, x, y, z] / "euler" (degrees) or
// "look_at" [x, y, z] (same frame) with an optional "up" (default [0, 0, 1]), "fov_deg"
// (vertical), "width", "height" (pixels), optional "body" (a rigid body's name) and
// "far_depth" (m). `rigid` is the scene's rigid model (null for a soft-only scene, whose
// cameras cannot name a body). Throws Error "<source>: cameras[i].<key>: ..." naming the value.
std::vector<Camera> read_cameras(const json::Json& list, const Model* rigid, const std::string& source);

}  // namespace diffphys::camera
