// soft/coupled_scene_json.cpp — coupled scene files (docs/soft-bodies.md#coupled-scene-files):
// a rigid scene under "rigid", a soft scene under "soft" and what ties them under "coupling"
// (soft nodes attached to rigid bodies, rigid bodies whose shapes the soft nodes collide with,
// substeps). Each part is read by its own loader (parse_scene, parse_soft_scene), so every
// rigid and soft key keeps its meaning and its checks; this file checks the "coupling" block
// and binds one soft frame to every rigid body the soft side refers to.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "diffphys/coupled.hpp"
#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/soft_scene.hpp"
#include "model/json_reader.hpp"
#include "soft/shape_distance.hpp"

namespace diffphys {
namespace {

using json::Json;

struct CouplingReader : json::Reader {
  using json::Reader::Reader;

  double number(const Json& value, const std::string& path) const { return read_number(value, path); }
  soft::Vector3 vector3(const Json& value, const std::string& path) const {
    const Vec3 v = read_vec3(value, path);
    return {v.x, v.y, v.z};
  }
  const Json& array(const Json& object, const char* key, const std::string& path) const {
    return optional_array(object, key, path);
  }
  int body(const Model& model, const Json& value, const std::string& path) const {
    if (!value.is_string()) fail(path, message("expected a rigid body name, got ", json::describe(value)));
    const std::string name = value.get<std::string>();
    for (int b = 1; b < model.body_count(); ++b)
      if (model.bodies[static_cast<std::size_t>(b)].name == name) return b;
    std::string known;
    for (int b = 1; b < model.body_count(); ++b) known += (known.empty() ? "" : ", ") + model.bodies[static_cast<std::size_t>(b)].name;
    fail(path, message("unknown rigid body '", name, "' (bodies: ", known.empty() ? std::string("none") : known,
                       name == "world" ? "; the world does not move: use a static soft obstacle or attachment" : "", ")"));
  }
};

// Body-frame (centre of mass) coordinates of a world point at t = 0.
soft::Vector3 to_body(const State& state, int body, const soft::Vector3& world) {
  const auto b = static_cast<std::size_t>(body);
  const Vec3 local = state.orientation[b].inverse_rotate(Vec3{world[0], world[1], world[2]} - state.position[b]);
  return {local.x, local.y, local.z};
}

}  // namespace

CoupledSystem parse_coupled_scene(std::string_view text, const std::string& source, const std::string& base_directory) {
  // Duplicate keys anywhere are refused here (the parts are re-read from this parse).
  const Json root = json::parse(text, source);
  const CouplingReader reader(source);
  if (!root.is_object() || !root.contains("rigid") || !root.contains("soft"))
    reader.fail("(top level)", "a coupled scene is an object with \"rigid\" and \"soft\" keys");
  // "cameras" is read by load_world / parse_world (camera/camera_json.cpp).
  reader.check_keys(root, "(top level)", {"rigid", "soft", "coupling", "cameras"});

  CoupledSystem system;
  // Each part through its own loader (and its own checks, including duplicate keys).
  Scene rigid = parse_scene(root.at("rigid").dump(), source + " (\"rigid\")");
  soft::SoftSpec spec = soft::parse_soft_scene(Json{{"soft", root.at("soft")}}.dump(), source, base_directory);
  if (!spec.frames.empty())
    reader.fail("soft.frames", "a coupled scene binds frames to rigid bodies: name a rigid body as an obstacle's \"frame\" "
                               "or use \"coupling\", do not declare soft frames");
  const Model& model = rigid.model;
  const State& initial = rigid.state;

  std::map<int, int> frame_of_body;  // rigid body → soft frame
  const auto frame_for = [&](int body) {
    const auto [found, inserted] = frame_of_body.emplace(body, static_cast<int>(spec.frames.size()));
    if (inserted) {
      const auto b = static_cast<std::size_t>(body);
      const Vec3& p = initial.position[b];
      const Quat& q = initial.orientation[b];
      spec.frames.push_back({model.bodies[b].name, {p.x, p.y, p.z}, {q.w, q.x, q.y, q.z}});
      system.frame_bodies.push_back(body);
    }
    return model.bodies[static_cast<std::size_t>(body)].name;
  };
  // Soft obstacles and frame attachments naming a rigid body: coordinates in its centre-of-mass frame.
  for (std::size_t i = 0; i < spec.obstacles.size(); ++i)
    if (!spec.obstacles[i].frame.empty())
      frame_for(reader.body(model, Json(spec.obstacles[i].frame), message("soft.obstacles[", i, "].frame")));
  for (std::size_t i = 0; i < spec.frame_attachments.size(); ++i)
    frame_for(reader.body(model, Json(spec.frame_attachments[i].frame), message("soft.frame_attachments[", i, "].frame")));

  const Json empty = Json::object();
  const Json& coupling = root.contains("coupling") ? root.at("coupling") : empty;
  const std::string path = "coupling";
  reader.check_keys(coupling, path, {"substeps", "attachments", "colliders", "two_way"});
  if (coupling.contains("two_way")) {
    if (!coupling.at("two_way").is_boolean()) reader.fail(path + ".two_way", message("expected true or false, got ", json::describe(coupling.at("two_way"))));
    system.two_way = coupling.at("two_way").get<bool>();
  }
  // Attachments: a node, or every node inside a region, tied to a rigid body at a point given
  // in the world at t = 0 (default: the node's rest position).
  const Json& attachments = reader.array(coupling, "attachments", path);
  for (std::size_t i = 0; i < attachments.size(); ++i) {
    const std::string p = message(path, ".attachments[", i, "]");
    const Json& a = attachments[i];
    reader.check_keys(a, p, {"body", "node", "region", "point", "stiffness"});
    if (!a.contains("body")) reader.fail(p, "\"body\" is required");
    if (a.contains("node") == a.contains("region")) reader.fail(p, "give exactly one of \"node\" and \"region\"");
    if (a.contains("region") && a.contains("point")) reader.fail(p, "\"point\" goes with \"node\", not with \"region\"");
    const int body = reader.body(model, a.at("body"), p + ".body");
    soft::FrameAttachmentSpec attachment;
    attachment.frame = frame_for(body);
    if (a.contains("stiffness")) attachment.stiffness = reader.number(a.at("stiffness"), p + ".stiffness");
    std::vector<int> nodes;
    if (a.contains("node")) {
      if (!a.at("node").is_number_integer()) reader.fail(p + ".node", message("expected an integer, got ", json::describe(a.at("node"))));
      const int node = a.at("node").get<int>();
      if (node < 0 || node >= static_cast<int>(spec.nodes.size()))
        reader.fail(p + ".node", message("unknown node index ", node, " (the soft scene has ", spec.nodes.size(), " nodes)"));
      nodes.push_back(node);
    } else {
      const Json& region = a.at("region");
      reader.check_keys(region, p + ".region", {"min", "max"});
      if (!region.contains("min") || !region.contains("max")) reader.fail(p + ".region", "\"min\" and \"max\" are required");
      const soft::Vector3 low = reader.vector3(region.at("min"), p + ".region.min");
      const soft::Vector3 high = reader.vector3(region.at("max"), p + ".region.max");
      for (std::size_t n = 0; n < spec.nodes.size(); ++n) {
        bool inside = true;
        for (std::size_t r = 0; r < 3; ++r) inside = inside && spec.nodes[n][r] >= low[r] && spec.nodes[n][r] <= high[r];
        if (inside) nodes.push_back(static_cast<int>(n));
      }
      if (nodes.empty()) reader.fail(p + ".region", "no soft node lies inside this region");
    }
    for (const int node : nodes) {
      attachment.node = node;
      const soft::Vector3 world = a.contains("point") ? reader.vector3(a.at("point"), p + ".point")
                                                      : spec.nodes[static_cast<std::size_t>(node)];
      attachment.point = to_body(initial, body, world);
      spec.frame_attachments.push_back(attachment);
    }
  }
  // Colliders: every sphere, box and capsule of the body becomes a soft obstacle moving with it.
  const Json& colliders = reader.array(coupling, "colliders", path);
  for (std::size_t i = 0; i < colliders.size(); ++i) {
    const std::string p = message(path, ".colliders[", i, "]");
    const Json& c = colliders[i];
    reader.check_keys(c, p, {"body", "friction"});
    if (!c.contains("body")) reader.fail(p, "\"body\" is required");
    const int body = reader.body(model, c.at("body"), p + ".body");
    const double friction = c.contains("friction") ? reader.number(c.at("friction"), p + ".friction") : 0.0;
    const std::string frame = frame_for(body);
    const Body& rigid_body = model.bodies[static_cast<std::size_t>(body)];
    for (int s = rigid_body.first_shape; s < rigid_body.first_shape + rigid_body.shape_count; ++s) {
      const Shape& shape = model.shapes[static_cast<std::size_t>(s)];
      const int size = model.layout.shape_size[static_cast<std::size_t>(s)];
      const auto at = [&](int k) { return rigid.params.values[static_cast<std::size_t>(size + k)]; };
      soft::ObstacleSpec obstacle;
      obstacle.name = rigid_body.name + "/" + shape.name;
      obstacle.frame = frame;
      obstacle.friction = friction;
      obstacle.point = {shape.local_position.x, shape.local_position.y, shape.local_position.z};
      obstacle.orientation = {shape.local_orientation.w, shape.local_orientation.x, shape.local_orientation.y, shape.local_orientation.z};
      switch (shape.type) {
        case ShapeType::Sphere:
          obstacle.type = soft::ObstacleType::Sphere;
          obstacle.radius = at(0);
          break;
        case ShapeType::Box:
          obstacle.type = soft::ObstacleType::Box;
          obstacle.half_extents = {at(0), at(1), at(2)};
          break;
        case ShapeType::Capsule:
          obstacle.type = soft::ObstacleType::Capsule;
          obstacle.radius = at(0);
          obstacle.half_length = at(1);
          break;
        default:
          reader.fail(p + ".body", message("rigid body '", rigid_body.name, "' has shape '", shape.name,
                                           "' of a type soft nodes cannot collide with yet (spheres, boxes and capsules can)"));
      }
      spec.obstacles.push_back(obstacle);
    }
  }

  system.substeps = static_cast<int>(std::lround(spec.dt / model.dt));
  if (coupling.contains("substeps")) {
    if (!coupling.at("substeps").is_number_integer() || coupling.at("substeps").get<int>() < 1)
      reader.fail(path + ".substeps", message("expected an integer ≥ 1, got ", json::describe(coupling.at("substeps"))));
    system.substeps = coupling.at("substeps").get<int>();
  }
  if (system.substeps < 1 || std::abs(spec.dt - system.substeps * model.dt) > 1e-9 * spec.dt)
    reader.fail(coupling.contains("substeps") ? path + ".substeps" : "soft.dt",
                message("the soft dt (", spec.dt, " s) must be a whole number of rigid steps (rigid dt ", model.dt, " s)"));

  soft::SoftBuild built = soft::build_soft_scene(spec, source);
  system.rigid_model = std::move(rigid.model);
  system.rigid_params = std::move(rigid.params);
  system.rigid_state = std::move(rigid.state);
  system.rigid_controls = std::move(rigid.controls);
  system.soft_model = std::move(built.model);
  system.soft_params = std::move(built.params);
  system.soft_state = std::move(built.state);
  validate_coupled_system(system);
  // Soft nodes must start outside the rigid bodies' shapes (static ones are checked by build_soft).
  for (int i = 0; i < system.soft_model.node_count; ++i)
    for (const soft::Obstacle& shape : system.soft_model.obstacles) {
      if (shape.frame < 0) continue;
      const double* pose = system.soft_params.values.data() + system.soft_model.layout.frame_pose[static_cast<std::size_t>(shape.frame)];
      const double d = soft::shape_distance(shape, soft::to_frame(pose, soft::load3(system.soft_state.positions.data() + 3 * i)),
                                            static_cast<soft::V3<double>*>(nullptr));
      if (!(d > 0.0))
        throw Error(message(source, ": soft node ", i, " starts at distance ", d, " m from obstacle '", shape.name,
                            "' (moving with its rigid body): every node must start strictly outside every obstacle"));
    }
  return system;
}

CoupledSystem load_coupled_scene(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw Error(path + ": cannot open the coupled scene file");
  std::ostringstream text;
  text << file.rdbuf();
  const std::string directory = std::filesystem::path(path).parent_path().string();
  return parse_coupled_scene(text.str(), path, directory.empty() ? "." : directory);
}

bool is_coupled_scene_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) return false;
  std::ostringstream text;
  text << file.rdbuf();
  const Json root = Json::parse(text.str(), nullptr, false);
  return !root.is_discarded() && root.is_object() && root.contains("rigid") && root.contains("soft");
}

void validate_coupling(const Model& rigid, const soft::SoftModel& soft, std::span<const int> frame_bodies, int substeps) {
  if (frame_bodies.size() != soft.frames.size())
    throw Error(message("coupled system: expected one rigid body per soft frame (", soft.frames.size(), "), got ",
                        frame_bodies.size()));
  for (std::size_t f = 0; f < frame_bodies.size(); ++f) {
    const int body = frame_bodies[f];
    if (body < 1 || body >= rigid.body_count())
      throw Error(message("coupled system: soft frame '", soft.frames[f], "' is bound to rigid body index ", body,
                          " (valid: 1 to ", rigid.body_count() - 1, "; the world is body 0)"));
  }
  if (substeps < 1) throw Error(message("coupled system: substeps must be ≥ 1, got ", substeps));
  const double expected = substeps * rigid.dt;
  if (std::abs(soft.dt - expected) > 1e-9 * soft.dt)
    throw Error(message("coupled system: the soft dt ", soft.dt, " s must equal substeps (", substeps, ") × the rigid dt ",
                        rigid.dt, " s = ", expected, " s"));
}

void validate_coupled_system(const CoupledSystem& system) {
  validate_coupling(system.rigid_model, system.soft_model, system.frame_bodies, system.substeps);
}

}  // namespace diffphys
