// viewer/render_trajectory.cpp — TrajectoryScene (viewer/render_trajectory.hpp): reads a
// checked trajectory into meshes and per-frame poses, frames it, and draws a frame. The
// colours are the web viewer's (viewer/src/scene.js, softbody.js, main.js).
#include "render_trajectory.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>

#include "diffphys/error.hpp"
#include "model/json_reader.hpp"
#include "replay_html.hpp"
#include "shape_meshes.hpp"

namespace diffphys::viewer {
namespace {

using Json = nlohmann::json;

constexpr std::uint32_t kPalette[] = {0x3f7fbf, 0xd9822b, 0x4caf50, 0xc0392b, 0x8e6cbf, 0x16a2a2, 0xc2a000, 0xd36fa8};
constexpr Rgb kStaticColour = rgb_from_hex(0x8d8d8d);
constexpr Rgb kGroundColour = rgb_from_hex(0xc9cfc4);
constexpr Rgb kGroundSecondColour = rgb_from_hex(0xb3bab0);
constexpr Rgb kBackground = rgb_from_hex(0xdfe6ea);
constexpr Rgb kSoftColour = rgb_from_hex(0xe0a030);
constexpr Rgb kSpringColour = rgb_from_hex(0x7a3e00);

// A shape's mesh at its pose in its body's frame, with its paint.
struct ShapeDraw {
  TriangleMesh mesh;
  Pose local;
  Paint paint;
};

// A recorded rigid body: its shapes and its pose at every frame.
struct BodyDraw {
  std::vector<ShapeDraw> shapes;
  std::vector<Pose> poses;  // (frames)
  double reach = 0.0;       // m: the shapes' farthest point from the body origin (0: none)
  bool has_model = false;   // false: drawn as a marker sphere
  Rgb colour;
};

struct SoftDraw {
  int node_count = 0;
  std::vector<std::array<int, 3>> triangles;
  std::vector<std::array<int, 2>> edges;
  std::vector<double> positions;  // (frames × 3 node_count), m
  bool draw_nodes = false;
};

// Reads the items of one part's document; errors name the source, the part and the item.
class Reader {
 public:
  explicit Reader(std::string prefix) : prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(message(prefix_, path, what));
  }
  double positive(const Json& object, const char* key, const std::string& path) const {
    const auto item = object.find(key);
    if (item == object.end() || !item->is_number() || !(item->get<double>() > 0) || !std::isfinite(item->get<double>()))
      fail(path + "." + key,
           message(" is ", item == object.end() ? "missing" : json::describe(*item), ", expected a positive number"));
    return item->get<double>();
  }
  double non_negative(const Json& object, const char* key, const std::string& path, double fallback) const {
    const auto item = object.find(key);
    if (item == object.end()) return fallback;
    if (!item->is_number() || !(item->get<double>() >= 0) || !std::isfinite(item->get<double>()))
      fail(path + "." + key, message(" is ", json::describe(*item), ", expected a number >= 0"));
    return item->get<double>();
  }
  Vec3 vector3(const Json& value, const std::string& path) const {
    if (!value.is_array() || value.size() != 3 ||
        !std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_number(); }))
      fail(path, message(" is ", json::describe(value), ", expected [x, y, z]"));
    return {value[0].get<double>(), value[1].get<double>(), value[2].get<double>()};
  }
  Vec3 vector3(const Json& object, const char* key, const std::string& path, const Vec3& fallback) const {
    const auto item = object.find(key);
    return item == object.end() ? fallback : vector3(*item, path + "." + key);
  }
  std::array<double, 4> quaternion(const Json& object, const char* key, const std::string& path) const {
    const auto item = object.find(key);
    if (item == object.end()) return {1, 0, 0, 0};
    const bool numbers = item->is_array() && item->size() == 4 &&
                         std::all_of(item->begin(), item->end(), [](const Json& v) { return v.is_number(); });
    std::array<double, 4> q{};
    double length = 0;
    if (numbers) {
      for (std::size_t k = 0; k < 4; ++k) q[k] = (*item)[k].get<double>();
      length = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    }
    if (!(length > 0) || !std::isfinite(length))
      fail(path + "." + key, message(" is ", json::describe(*item), ", expected a non-zero quaternion [w, x, y, z]"));
    return {q[0] / length, q[1] / length, q[2] / length, q[3] / length};
  }

 private:
  std::string prefix_;
};

// The string at `key` of an object, or "" if there is none.
std::string text(const Json* object, const char* key) {
  const auto item = object->find(key);
  return item != object->end() && item->is_string() ? item->get<std::string>() : std::string();
}

// The mesh of a shape of the model block or of a soft obstacle, or nothing (a note says why)
// for a type this renderer does not know or a mesh without faces. Planes are not shapes here.
std::optional<TriangleMesh> shape_mesh(const Json& shape, const std::string& path, const Reader& reader,
                                       std::vector<std::string>& notes) {
  const std::string type = text(&shape, "type");
  const std::string name =
      shape.contains("name") && shape["name"].is_string() ? shape["name"].get<std::string>() : path;
  if (type == "sphere") return sphere_mesh(reader.positive(shape, "radius", path));
  if (type == "box") {
    const Vec3 half = reader.vector3(shape, "half_extents", path, {-1, -1, -1});
    if (!(half[0] > 0 && half[1] > 0 && half[2] > 0))
      reader.fail(path + ".half_extents",
                  message(" is ", shape.contains("half_extents") ? json::describe(shape["half_extents"]) : "missing",
                          ", expected three positive numbers"));
    return box_mesh(half);
  }
  if (type == "capsule")
    return capsule_mesh(reader.positive(shape, "radius", path), reader.non_negative(shape, "half_length", path, 0.0));
  if (type == "cylinder")
    return cylinder_mesh(reader.positive(shape, "radius", path), reader.non_negative(shape, "half_length", path, 0.0));
  if (type == "mesh") {
    const auto vertices_item = shape.find("vertices");
    if (vertices_item == shape.end() || !vertices_item->is_array())
      reader.fail(path + ".vertices", " must be an array of [x, y, z]");
    std::vector<Vec3> vertices;
    for (std::size_t v = 0; v < vertices_item->size(); ++v)
      vertices.push_back(reader.vector3((*vertices_item)[v], message(path, ".vertices[", v, "]")));
    const auto faces_item = shape.find("faces");
    if (faces_item == shape.end() || !faces_item->is_array() || faces_item->empty()) {
      notes.push_back(message("mesh shape \"", name, "\" has no \"faces\": not drawn"));
      return std::nullopt;
    }
    std::vector<std::vector<int>> faces;
    for (std::size_t f = 0; f < faces_item->size(); ++f) {
      const Json& face = (*faces_item)[f];
      bool valid = face.is_array() && face.size() >= 3;
      std::vector<int> indices;
      for (std::size_t k = 0; valid && k < face.size(); ++k) {
        valid = face[k].is_number_integer() && face[k].get<long long>() >= 0 &&
                face[k].get<long long>() < static_cast<long long>(vertices.size());
        if (valid) indices.push_back(face[k].get<int>());
      }
      if (!valid)
        reader.fail(
            message(path, ".faces[", f, "]"),
            message(" is ", json::describe(face), ", expected 3 or more vertex indices in [0, ", vertices.size(), ")"));
      faces.push_back(std::move(indices));
    }
    const auto scale = shape.find("scale");
    return polygon_mesh(vertices, faces, scale == shape.end() ? 1.0 : reader.positive(shape, "scale", path));
  }
  notes.push_back(message("shape \"", name, "\" of type ",
                          shape.contains("type") ? json::describe(shape["type"]) : "(none)",
                          " is not drawn by this renderer"));
  return std::nullopt;
}

// The farthest point of a mesh from its frame's origin, placed by `local`.
double mesh_reach(const TriangleMesh& mesh, const Pose& local) {
  double reach = 0;
  for (const Vec3& p : mesh.positions) reach = std::max(reach, norm(local.apply(p)));
  return reach;
}

}  // namespace

struct TrajectoryScene::Content {
  std::vector<double> times;            // (frames), s
  std::vector<std::string> body_names;  // the rigid part's "bodies"
  std::vector<BodyDraw> bodies;         // recorded rigid bodies, in that order
  std::vector<ShapeDraw> world_shapes;  // the world body's and fixed obstacles' shapes, in the world
  std::vector<Pose> planes;             // ground planes in the world (normal = the pose's z)
  std::optional<SoftDraw> soft;
  std::vector<std::string> notes;
  Vec3 low{0, 0, 0}, high{0, 0, 0};  // bounds over all frames
  double scene_radius = 1.0;         // m: half the bounds' diagonal, at least 0.25

  // A ground plane, unless the same plane is there already (a coupled scene's ground is both a
  // rigid shape and a soft obstacle): two coplanar patches would fight over every pixel.
  void add_plane(const Pose& plane) {
    const Vec3 normal = plane.rotate({0, 0, 1});
    for (const Pose& other : planes) {
      const Vec3 other_normal = other.rotate({0, 0, 1});
      if (dot(normal, other_normal) > 1 - 1e-9 && std::abs(dot(plane.position - other.position, other_normal)) < 1e-9)
        return;
    }
    planes.push_back(plane);
  }
  void read_rigid(const Json& document, const Reader& reader);
  void read_soft(const Json& document, const Reader& reader);
  // Throws Error (prefixed by `source`) if the bounds are not finite: positions so far apart
  // (1e308 m) that no camera frames them.
  void compute_bounds(const std::string& source);
};

void TrajectoryScene::Content::read_rigid(const Json& document, const Reader& reader) {
  const Json& names = document["bodies"];
  const Json& frames = document["frames"];
  times.clear();
  for (const Json& frame : frames) times.push_back(frame["time"].get<double>());
  // model.bodies[0] is the world; the others are found by name, as the web viewer does.
  std::map<std::string, std::size_t> model_index;
  const Json* model_bodies = nullptr;
  if (document.contains("model")) {
    model_bodies = &document["model"]["bodies"];
    for (std::size_t k = 0; k < model_bodies->size(); ++k) {
      const Json& body = (*model_bodies)[k];
      if (!body.is_object() || !body.contains("name") || !body["name"].is_string())
        reader.fail(message("model.bodies[", k, "]"), " must be an object with a \"name\"");
      model_index.emplace(body["name"].get<std::string>(), k);
    }
  } else if (!names.empty()) {
    notes.push_back(
        "this trajectory has no \"model\" block (it was written without the parameters): each body is drawn "
        "as a small sphere at its centre of mass");
  }
  // Shapes of one model body into `shapes` (planes, at `placement` ∘ their pose, into planes).
  const auto add_shapes = [&](std::size_t k, Rgb colour, const Pose& placement, std::vector<ShapeDraw>& shapes) {
    const Json& body = (*model_bodies)[k];
    if (!body.contains("shapes")) return;
    if (!body["shapes"].is_array()) reader.fail(message("model.bodies[", k, "].shapes"), " must be an array");
    for (std::size_t s = 0; s < body["shapes"].size(); ++s) {
      const Json& shape = body["shapes"][s];
      const std::string path = message("model.bodies[", k, "].shapes[", s, "]");
      if (!shape.is_object()) reader.fail(path, " must be an object");
      const Pose local{reader.vector3(shape, "position", path, {0, 0, 0}),
                       reader.quaternion(shape, "orientation", path)};
      if (shape.contains("type") && shape["type"] == "plane") {
        add_plane(placement.compose(local));
        continue;
      }
      if (std::optional<TriangleMesh> mesh = shape_mesh(shape, path, reader, notes))
        shapes.push_back({std::move(*mesh), local, Paint::solid(colour)});
    }
  };
  if (model_bodies && !model_bodies->empty()) {
    const std::string world = (*model_bodies)[0]["name"].get<std::string>();
    if (std::find(names.begin(), names.end(), world) == names.end()) add_shapes(0, kStaticColour, Pose{}, world_shapes);
  }
  for (const Json& name : names) body_names.push_back(name.is_string() ? name.get<std::string>() : name.dump());
  bodies.assign(names.size(), BodyDraw{});
  for (std::size_t b = 0; b < names.size(); ++b) {
    BodyDraw& body = bodies[b];
    for (const Json& frame : frames) {
      const Json& state = frame["bodies"][b];
      const Json& p = state["position"];
      const Json& q = state["orientation"];
      body.poses.push_back({{p[0].get<double>(), p[1].get<double>(), p[2].get<double>()},
                            {q[0].get<double>(), q[1].get<double>(), q[2].get<double>(), q[3].get<double>()}});
    }
    const auto found = names[b].is_string() ? model_index.find(names[b].get<std::string>()) : model_index.end();
    const bool dynamic = found == model_index.end() || text(&(*model_bodies)[found->second], "type") != "static";
    body.colour = dynamic ? rgb_from_hex(kPalette[b % std::size(kPalette)]) : kStaticColour;
    if (found == model_index.end()) continue;
    body.has_model = true;
    add_shapes(found->second, body.colour, body.poses.front(), body.shapes);
    for (const ShapeDraw& shape : body.shapes) body.reach = std::max(body.reach, mesh_reach(shape.mesh, shape.local));
  }
}

void TrajectoryScene::Content::read_soft(const Json& document, const Reader& reader) {
  SoftDraw draw;
  draw.node_count = document["node_count"].get<int>();
  const Json& topology = document["topology"];
  if (topology.contains("surface_triangles"))
    for (const Json& t : topology["surface_triangles"])
      draw.triangles.push_back({t[0].get<int>(), t[1].get<int>(), t[2].get<int>()});
  if (topology.contains("edges"))
    for (const Json& e : topology["edges"]) draw.edges.push_back({e[0].get<int>(), e[1].get<int>()});
  // The web viewer's rule: nodes as dots when there is no surface, if there are few of them or
  // no springs either.
  draw.draw_nodes = draw.triangles.empty() && (draw.node_count <= 200 || draw.edges.empty());
  const Json& frames = document["frames"];
  draw.positions.reserve(frames.size() * 3 * static_cast<std::size_t>(draw.node_count));
  std::vector<double> soft_times;
  for (const Json& frame : frames) {
    soft_times.push_back(frame["time"].get<double>());
    for (const Json& x : frame["positions"]) draw.positions.push_back(x.get<double>());
  }
  if (times.empty()) times = soft_times;
  // Obstacles: fixed ones in the world; ones moving with a recorded rigid body are that body's
  // shapes (drawn from the model block), or attached to it when it has none.
  const Json obstacles = document.contains("obstacles") ? document["obstacles"] : Json::array();
  for (std::size_t k = 0; k < obstacles.size(); ++k) {
    const Json& obstacle = obstacles[k];
    const std::string path = message("obstacles[", k, "]");
    if (!obstacle.is_object()) reader.fail(path, " must be an object");
    const std::string name =
        obstacle.contains("name") && obstacle["name"].is_string() ? obstacle["name"].get<std::string>() : path;
    BodyDraw* carrier = nullptr;
    if (obstacle.contains("frame") && !obstacle["frame"].is_null()) {
      const std::string frame = obstacle["frame"].is_string() ? obstacle["frame"].get<std::string>() : "";
      std::size_t b = 0;
      // Body names are those of the rigid part (read first); a soft-only file has none.
      for (; b < body_names.size() && body_names[b] != frame; ++b) {
      }
      if (b == body_names.size()) {
        notes.push_back(message("obstacle \"", name, "\" moves with frame ", json::describe(obstacle["frame"]),
                                ", which this trajectory does not record: not drawn"));
        continue;
      }
      if (bodies[b].has_model && !bodies[b].shapes.empty()) continue;
      carrier = &bodies[b];
    }
    Pose local{reader.vector3(obstacle, "point", path, {0, 0, 0}), {1, 0, 0, 0}};
    const std::string type = text(&obstacle, "type");
    if (type == "plane") {
      local.orientation = rotation_from_z(reader.vector3(obstacle, "normal", path, {0, 0, 1}));
      if (carrier)
        notes.push_back(message("plane obstacle \"", name, "\" moves with a body: not drawn"));
      else
        add_plane(local);
      continue;
    }
    if (obstacle.contains("rotation")) {
      const Json& rotation = obstacle["rotation"];
      if (!rotation.is_array() || rotation.size() != 9 ||
          !std::all_of(rotation.begin(), rotation.end(), [](const Json& v) { return v.is_number(); }))
        reader.fail(path + ".rotation",
                    message(" is ", json::describe(rotation), ", expected 9 numbers (a row-major 3×3 rotation)"));
      std::array<double, 9> matrix{};
      for (std::size_t i = 0; i < 9; ++i) matrix[i] = rotation[i].get<double>();
      local.orientation = quaternion_from_matrix(matrix);
    }
    std::optional<TriangleMesh> mesh = shape_mesh(obstacle, path, reader, notes);
    if (!mesh) continue;
    if (carrier) {
      carrier->reach = std::max(carrier->reach, mesh_reach(*mesh, local));
      carrier->shapes.push_back({std::move(*mesh), local, Paint::solid(kStaticColour)});
    } else {
      world_shapes.push_back({std::move(*mesh), local, Paint::solid(kStaticColour)});
    }
  }
  soft = std::move(draw);
}

void TrajectoryScene::Content::compute_bounds(const std::string& source) {
  const double infinity = std::numeric_limits<double>::infinity();
  low = {infinity, infinity, infinity};
  high = {-infinity, -infinity, -infinity};
  const auto expand = [&](const Vec3& point, double radius) {
    for (std::size_t k = 0; k < 3; ++k) {
      low[k] = std::min(low[k], point[k] - radius);
      high[k] = std::max(high[k], point[k] + radius);
    }
  };
  for (const BodyDraw& body : bodies)
    for (const Pose& pose : body.poses) expand(pose.position, body.reach > 0 ? body.reach : 0.05);
  if (soft)
    for (std::size_t at = 0; at + 2 < soft->positions.size(); at += 3)
      expand({soft->positions[at], soft->positions[at + 1], soft->positions[at + 2]}, 0.0);
  if (!(low[0] <= high[0])) {
    low = {-1, -1, 0};
    high = {1, 1, 1};
  }
  scene_radius = std::max(0.25, 0.5 * norm(high - low));
  if (!std::isfinite(scene_radius))
    throw Error(message(source, ": the bodies and nodes span from [", low[0], ", ", low[1], ", ", low[2], "] to [",
                        high[0], ", ", high[1], ", ", high[2],
                        "] m (with their shapes' reach): too far apart to frame in a picture"));
  // Bodies without a model block, and soft nodes without a surface, as spheres sized by the scene.
  for (BodyDraw& body : bodies)
    if (!body.has_model)
      body.shapes.push_back({sphere_mesh(0.05 * scene_radius, 24, 12), Pose{}, Paint::solid(body.colour)});
}

TrajectoryScene::TrajectoryScene(std::string_view trajectory_json, std::string_view source_name)
    : content_(std::make_unique<Content>()) {
  check_trajectory(trajectory_json, source_name);
  const Json document = json::parse(trajectory_json, source_name);
  const std::string source(source_name);
  const auto read_part = [&](const Json& part, const std::string& prefix) {
    if (part["format"] == "diffphys-trajectory")
      content_->read_rigid(part, Reader(prefix));
    else
      content_->read_soft(part, Reader(prefix));
  };
  if (document["format"] == "diffphys-world-trajectory") {
    // The rigid part first: soft obstacles that move with a body refer to its bodies.
    const Json& parts = document["parts"];
    if (parts.contains("rigid")) read_part(parts["rigid"], source + ": parts.rigid: ");
    if (parts.contains("soft")) read_part(parts["soft"], source + ": parts.soft: ");
  } else {
    read_part(document, source + ": ");
  }
  content_->compute_bounds(source);
}

TrajectoryScene::~TrajectoryScene() = default;
TrajectoryScene::TrajectoryScene(TrajectoryScene&&) noexcept = default;
TrajectoryScene& TrajectoryScene::operator=(TrajectoryScene&&) noexcept = default;

int TrajectoryScene::frame_count() const {
  return static_cast<int>(content_->times.size());
}
double TrajectoryScene::frame_time(int frame) const {
  return content_->times.at(static_cast<std::size_t>(frame));
}
const std::vector<std::string>& TrajectoryScene::notes() const {
  return content_->notes;
}
std::pair<Vec3, Vec3> TrajectoryScene::bounds() const {
  return {content_->low, content_->high};
}

Camera TrajectoryScene::default_camera(double aspect) const {
  Camera camera;
  const double vertical = camera.vertical_fov_degrees * std::numbers::pi / 180.0;
  const double horizontal = 2.0 * std::atan(std::tan(0.5 * vertical) * aspect);
  const double distance = content_->scene_radius / std::sin(0.5 * std::min(vertical, horizontal));
  const Vec3 direction{1.6, -2.4, 1.1};
  camera.target = 0.5 * (content_->low + content_->high);
  camera.eye = camera.target + (distance / norm(direction)) * direction;
  camera.near = 0.01 * content_->scene_radius;
  return camera;
}

namespace {

// Every triangle of `mesh` placed by `pose`.
void draw_mesh(Rasteriser& rasteriser, const TriangleMesh& mesh, const Pose& pose, const Paint& paint) {
  std::vector<Vec3> positions(mesh.positions.size()), normals(mesh.normals.size());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    positions[k] = pose.apply(mesh.positions[k]);
    normals[k] = pose.rotate(mesh.normals[k]);
  }
  for (const auto& t : mesh.triangles) {
    const auto i = static_cast<std::size_t>(t[0]), j = static_cast<std::size_t>(t[1]),
               k = static_cast<std::size_t>(t[2]);
    rasteriser.draw_triangle({positions[i], positions[j], positions[k]}, {normals[i], normals[j], normals[k]}, paint);
  }
}

}  // namespace

Image TrajectoryScene::render(int frame, const Camera& camera, int width, int height, int supersampling) const {
  const Content& scene = *content_;
  if (frame < 0 || frame >= frame_count())
    throw Error(message("render: frame ", frame, " is not in [0, ", frame_count(), ")"));
  const auto f = static_cast<std::size_t>(frame);
  Rasteriser rasteriser(width * supersampling, height * supersampling, camera, kBackground);
  // Ground planes: a square patch (the web viewer's size) slid within its plane to under the
  // scene's centre, checkered in cells of a round size about a tenth of the scene.
  const Vec3 centre = 0.5 * (scene.low + scene.high);
  const double half_size = 0.5 * std::max(10.0, 8.0 * scene.scene_radius);
  const double cell = std::pow(10.0, std::round(std::log10(scene.scene_radius / 5.0)));
  for (const Pose& plane : scene.planes) {
    const Vec3 normal = plane.rotate({0, 0, 1}), u = plane.rotate({1, 0, 0}), v = plane.rotate({0, 1, 0});
    const Vec3 middle = centre - dot(centre - plane.position, normal) * normal;
    const Paint paint{kGroundColour, true, kGroundSecondColour, plane.position, u, v, cell, 0.0};
    const auto corner = [&](double a, double b) { return middle + (a * half_size) * u + (b * half_size) * v; };
    rasteriser.draw_triangle({corner(-1, -1), corner(1, -1), corner(1, 1)}, paint);
    rasteriser.draw_triangle({corner(-1, -1), corner(1, 1), corner(-1, 1)}, paint);
  }
  for (const ShapeDraw& shape : scene.world_shapes) draw_mesh(rasteriser, shape.mesh, shape.local, shape.paint);
  for (const BodyDraw& body : scene.bodies) {
    const Pose& pose = body.poses[f];
    for (const ShapeDraw& shape : body.shapes)
      draw_mesh(rasteriser, shape.mesh, pose.compose(shape.local), shape.paint);
  }
  if (scene.soft) {
    const SoftDraw& soft = *scene.soft;
    const double* x = soft.positions.data() + 3 * static_cast<std::size_t>(soft.node_count) * f;
    const auto node = [x](int i) {
      const double* p = x + 3 * static_cast<std::size_t>(i);
      return Vec3{p[0], p[1], p[2]};
    };
    // Smooth shading where the surface is smooth: each node's normal is the sum of its
    // triangles' area-weighted normals, used at a triangle's corner unless it is more than 40°
    // from the triangle's own (an edge of a tet mesh's block: flat faces stay flat). A cloth
    // is seen from both sides (the rasteriser turns normals towards the camera), and is drawn
    // over what it lies on (depth_bias).
    const auto face_normal = [&](const std::array<int, 3>& t) {
      return cross(node(t[1]) - node(t[0]), node(t[2]) - node(t[0]));
    };
    std::vector<Vec3> normals(static_cast<std::size_t>(soft.node_count), Vec3{0, 0, 0});
    for (const auto& t : soft.triangles) {
      const Vec3 face = face_normal(t);
      for (const int i : t) normals[static_cast<std::size_t>(i)] = normals[static_cast<std::size_t>(i)] + face;
    }
    Paint paint = Paint::solid(kSoftColour);
    paint.depth_bias = 0.01 * scene.scene_radius;
    const double crease = std::cos(40.0 * std::numbers::pi / 180.0);
    for (const auto& t : soft.triangles) {
      const Vec3 face = face_normal(t);
      std::array<Vec3, 3> corner_normals;
      for (std::size_t k = 0; k < 3; ++k) {
        const Vec3& smooth = normals[static_cast<std::size_t>(t[k])];
        corner_normals[k] = dot(smooth, face) > crease * norm(smooth) * norm(face) ? smooth : face;
      }
      rasteriser.draw_triangle({node(t[0]), node(t[1]), node(t[2])}, corner_normals, paint);
    }
    if (soft.triangles.empty())
      for (const auto& e : soft.edges) rasteriser.draw_line(node(e[0]), node(e[1]), kSpringColour, 2 * supersampling);
    if (soft.draw_nodes) {
      const TriangleMesh dot_mesh = sphere_mesh(0.012 * scene.scene_radius, 12, 6);
      for (int i = 0; i < soft.node_count; ++i)
        draw_mesh(rasteriser, dot_mesh, Pose{node(i), {1, 0, 0, 0}}, Paint::solid(kSpringColour));
    }
  }
  return supersampling == 1 ? rasteriser.image() : downsample(rasteriser.image(), supersampling);
}

}  // namespace diffphys::viewer
