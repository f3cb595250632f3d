// camera/camera_json.cpp — the "cameras" list of a scene file (camera_json.hpp). Format checks
// (keys, types, lengths) by json::Reader; the camera's own checks (resolution, field of view)
// by the renderer's check_camera, re-thrown with the entry's path.
#include "camera/camera_json.hpp"

#include <numbers>

#include "camera/camera_setup.hpp"
#include "diffphys/error.hpp"

namespace diffphys::camera {

std::vector<Camera> read_cameras(const json::Json& list, const Model* rigid, const std::string& source) {
  const json::Reader reader(source);
  std::vector<Camera> cameras;
  reader.for_each_element(list, "cameras", [&](const json::Json& entry, const std::string& path) {
    if (!entry.is_object()) reader.fail(path, message("expected a camera object, got ", json::describe(entry)));
    reader.check_keys(entry, path,
                      {"name", "body", "position", "orientation", "euler", "look_at", "up", "fov_deg", "width",
                       "height", "far_depth"});
    for (const char* key : {"name", "position", "fov_deg", "width", "height"}) reader.require_key(entry, path, key);
    Camera camera;
    camera.name = reader.read_string(entry["name"], json::key_path(path, "name"));
    for (const Camera& other : cameras)
      if (other.name == camera.name)
        reader.fail(json::key_path(path, "name"), "duplicate camera name '" + camera.name + "'");
    if (entry.contains("body")) {
      const std::string body = reader.read_string(entry["body"], json::key_path(path, "body"));
      if (rigid == nullptr)
        reader.fail(json::key_path(path, "body"),
                    "body '" + body + "': the scene has no rigid bodies to carry a camera");
      try {
        camera.body = rigid->body_index(body);
      } catch (const Error& error) {
        reader.fail(json::key_path(path, "body"), error.what());
      }
      if (camera.body == 0) camera.body = -1;  // the world body is the world frame
    }
    camera.position = reader.read_vec3(entry["position"], json::key_path(path, "position"));
    const bool rotated = entry.contains("orientation") || entry.contains("euler");
    if (rotated == entry.contains("look_at"))
      reader.fail(path, rotated ? "give the view as \"orientation\"/\"euler\" or as \"look_at\", not both"
                                : "give the view as \"look_at\" [x, y, z] or as \"orientation\"/\"euler\"");
    if (entry.contains("up") && !entry.contains("look_at")) reader.refuse_key(entry, path, "up", "without \"look_at\"");
    if (rotated) {
      camera.orientation = reader.read_rotation(entry, path);
    } else {
      const Vec3 target = reader.read_vec3(entry["look_at"], json::key_path(path, "look_at"));
      const Vec3 up = entry.contains("up") ? reader.read_vec3(entry["up"], json::key_path(path, "up")) : Vec3{0, 0, 1};
      try {
        camera.orientation = camera_look_at(camera.position, target, up);
      } catch (const Error& error) {
        reader.fail(json::key_path(path, "look_at"), error.what());
      }
    }
    camera.vertical_fov =
        reader.read_number(entry["fov_deg"], json::key_path(path, "fov_deg")) * std::numbers::pi / 180.0;
    camera.width = static_cast<int>(reader.read_integer(entry["width"], json::key_path(path, "width"), 1, 1 << 14));
    camera.height = static_cast<int>(reader.read_integer(entry["height"], json::key_path(path, "height"), 1, 1 << 14));
    if (entry.contains("far_depth"))
      camera.far_depth = reader.read_number(entry["far_depth"], json::key_path(path, "far_depth"));
    try {
      check_camera(rigid != nullptr ? *rigid : Model{}, camera);
    } catch (const Error& error) {
      reader.fail(path, error.what());
    }
    cameras.push_back(std::move(camera));
  });
  return cameras;
}

}  // namespace diffphys::camera
