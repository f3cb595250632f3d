// camera/camera_json.cpp — the "cameras" list of a scene file (camera_json.hpp). Format checks
// (keys, types, lengths) by json::Reader; the camera's own checks (resolution, field of view)
// by the renderer's check_camera, re-thrown with the entry's path; the look ("colours",
// "background") over default_appearance.
#include "camera/camera_json.hpp"

#include <numbers>
#include <string_view>

#include "camera/camera_setup.hpp"
#include "diffphys/error.hpp"
#include "model/nearest_name.hpp"

namespace diffphys::camera {

namespace {

// An RGB albedo or background: three numbers in [0, 1] (a surface reflects at most what falls on it).
Vec3 read_colour(const json::Reader& reader, const json::Json& value, const std::string& path) {
  const Vec3 colour = reader.read_vec3(value, path);
  for (int c = 0; c < 3; ++c)
    if (colour[c] < 0.0 || colour[c] > 1.0)
      reader.fail(path, message("colour components must be in [0, 1], got ", json::describe(value)));
  return colour;
}

// The entry's "colours" {shape or body name: [r, g, b]} over `appearance`: a body's name colours
// every shape of the body, then a shape's own name colours that shape (it wins over its body's).
void read_colours(const json::Reader& reader, const json::Json& colours, const std::string& path, const Model* rigid,
                  Appearance& appearance) {
  if (!colours.is_object())
    reader.fail(path, message("expected an object {shape or body name: [r, g, b]}, got ", json::describe(colours)));
  if (colours.empty()) return;
  if (rigid == nullptr) reader.fail(path, "the scene has no rigid shapes to colour (cameras draw rigid shapes only)");
  const Model& model = *rigid;
  const auto shape_named = [&model](std::string_view name) {
    for (int s = 0; s < model.shape_count(); ++s)
      if (model.shapes[static_cast<std::size_t>(s)].name == name) return s;
    return -1;
  };
  for (const bool shapes_pass : {false, true})
    for (const auto& [name, value] : colours.items()) {
      const std::string item = json::key_path(path, name);
      const int shape = shape_named(name);
      if (shapes_pass != (shape >= 0)) continue;
      if (shape >= 0) {
        appearance.shapes[static_cast<std::size_t>(shape)].colour = read_colour(reader, value, item);
        continue;
      }
      int body = -1;
      for (int b = 0; b < model.body_count(); ++b)
        if (model.bodies[static_cast<std::size_t>(b)].name == name) body = b;
      if (body < 0) {
        std::vector<std::string_view> known;
        for (const Body& b : model.bodies) known.push_back(b.name);
        for (const Shape& s : model.shapes) known.push_back(s.name);
        reader.fail(item, message("no shape or body '", name, "'", did_you_mean(name, known)));
      }
      const Vec3 colour = read_colour(reader, value, item);
      for (std::size_t s = 0; s < model.shapes.size(); ++s)
        if (model.shapes[s].body == body) appearance.shapes[s].colour = colour;
    }
}

}  // namespace

SceneCameras read_cameras(const json::Json& list, const Model* rigid, const std::string& source) {
  const json::Reader reader(source);
  SceneCameras scene_cameras;
  std::vector<Camera>& cameras = scene_cameras.cameras;
  // A camera of a scene without rigid shapes would render its background and nothing else.
  if (rigid == nullptr && list.is_array() && !list.empty())
    reader.fail("cameras", "the scene has no rigid part, and cameras draw rigid shapes only (soft bodies and fluids "
                           "are not drawn yet)");
  reader.for_each_element(list, "cameras", [&](const json::Json& entry, const std::string& path) {
    if (!entry.is_object()) reader.fail(path, message("expected a camera object, got ", json::describe(entry)));
    reader.check_keys(entry, path,
                      {"name", "body", "position", "orientation", "euler", "look_at", "up", "fov_deg", "width",
                       "height", "far_depth", "colours", "background"});
    for (const char* key : {"name", "position", "fov_deg", "width", "height"}) reader.require_key(entry, path, key);
    Camera camera;
    camera.name = reader.read_string(entry["name"], json::key_path(path, "name"));
    for (const Camera& other : cameras)
      if (other.name == camera.name)
        reader.fail(json::key_path(path, "name"), "duplicate camera name '" + camera.name + "'");
    if (entry.contains("body")) {
      const std::string body = reader.read_string(entry["body"], json::key_path(path, "body"));
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
    Appearance appearance = default_appearance(rigid != nullptr ? *rigid : Model{});
    if (entry.contains("colours"))
      read_colours(reader, entry["colours"], json::key_path(path, "colours"), rigid, appearance);
    if (entry.contains("background"))
      appearance.background = read_colour(reader, entry["background"], json::key_path(path, "background"));
    cameras.push_back(std::move(camera));
    scene_cameras.appearances.push_back(std::move(appearance));
  });
  return scene_cameras;
}

}  // namespace diffphys::camera
