// model/scene_json.cpp — the JSON scene loader (diffphys/scene.hpp).
//
// Owns the mapping from a scene file onto ModelBuilder's specs and the *format* checks of
// that file: JSON syntax (with line and column), duplicate keys, unknown keys (with a
// "did you mean" for typos), wrong value types, arrays of the wrong length, unknown enum
// strings, fields that the item's type would silently ignore. Every refusal names the file,
// the JSON path (bodies[1].mass) and the offending value. Physical checks (negative mass,
// dt <= 0, unknown or duplicate names, ...) stay in ModelBuilder::build(), so a scene file
// and C++ code are refused by the same rules; their Errors are re-thrown prefixed with the
// file name. The format is documented in docs/scene-format.md.
#include "diffphys/scene.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/robot_loaders.hpp"
#include "model/json_reader.hpp"

namespace diffphys {
namespace {

using json::describe;
using json::element_path;
using json::Json;
using json::key_path;

// ---------------------------------------------------------------------------------------
// Where each named item sits in the file.
//
// ModelBuilder::build() names items as "body 'ball'", "joint 'hinge'", "actuator 'servo'";
// it cannot know JSON paths ("solver: ..." and "world: ..." already read as paths). The
// reader notes the path of every named item so that a build error can be reported as
// "scene.json: bodies[1]: body 'ball': mass must be positive, got -1".

class ItemLocations {
 public:
  void note(std::string item, std::string path) {
    entries_.push_back({std::move(item), std::move(path)});
  }

  // `builder_message` prefixed with the JSON path of the item it starts with, if any.
  std::string locate(const std::string& builder_message) const {
    const bool is_duplicate = builder_message.find("duplicate") != std::string::npos;
    const Entry* found = nullptr;
    for (const Entry& entry : entries_) {
      const bool starts_with_item =
          builder_message.starts_with(entry.item) &&
          (builder_message.size() == entry.item.size() ||
           builder_message[entry.item.size()] == ':' || builder_message[entry.item.size()] == ' ');
      if (!starts_with_item) continue;
      found = &entry;
      // A repeated name is refused at its second occurrence; anything else at its first.
      if (!is_duplicate) break;
    }
    return found ? found->path + ": " + builder_message : builder_message;
  }

 private:
  struct Entry {
    std::string item;  // as the builder names it: "body 'ball'"
    std::string path;  // as the file does: "bodies[1]"
  };
  std::vector<Entry> entries_;
};

// ---------------------------------------------------------------------------------------
// Reading typed values; every failure names the file, the path and the value.

class SceneReader : json::Reader {
 public:
  // Mesh files are found relative to `base_directory` (the scene file's folder).
  SceneReader(std::string_view source_name, std::filesystem::path base_directory)
      : json::Reader(std::string(source_name)), base_directory_(std::move(base_directory)) {}

  // Maps the document onto a builder, noting in `locations` where each named item is.
  ModelBuilder read(const Json& root, ItemLocations& locations) const;

 private:
  void read_solver(const Json& object, const std::string& path, ModelBuilder& builder) const;
  void read_ground(const Json& value, const std::string& path, ModelBuilder& builder) const;
  void read_plane(const Json& object, const std::string& path, ModelBuilder& builder) const;
  BodySpec read_body(const Json& object, const std::string& path) const;
  ShapeSpec read_shape(const Json& object, const std::string& path) const;
  void read_mesh(const Json& object, const std::string& path, ShapeSpec& shape) const;
  void read_inline_meshes(const Json& value, const std::string& path) const;
  JointFrames read_joint_frames(const Json& object, const std::string& path) const;
  Quat read_quaternion(const Json& value, const std::string& path) const;
  JointSpec read_joint(const Json& object, const std::string& path) const;
  ActuatorSpec read_actuator(const Json& object, const std::string& path) const;
  EqualitySpec read_equality(const Json& object, const std::string& path) const;

  // The builder may refuse an item as it is added (e.g. a repeated name); say where.
  template <typename Add>
  void add_to_builder(const std::string& path, Add&& add) const {
    try {
      add();
    } catch (const Error& error) {
      fail(path, error.what());
    }
  }

  std::filesystem::path base_directory_;
  // Hulls already loaded, by (file as written, scale): shapes that share a mesh share one.
  mutable std::map<std::pair<std::string, std::vector<double>>, std::shared_ptr<const ConvexMesh>>
      meshes_;
  // The top-level "meshes" list (hulls given by their vertices), referred to by index.
  mutable std::vector<std::shared_ptr<const ConvexMesh>> inline_meshes_;
};

ModelBuilder SceneReader::read(const Json& root, ItemLocations& locations) const {
  if (!root.is_object())
    fail("", message("expected a JSON object at the top level, got ", describe(root)));
  // "cameras" is read by load_world / parse_world beside the model (camera/camera_json.cpp).
  check_keys(root, "",
             {"name", "description", "dt", "gravity", "solver", "world", "ground", "meshes", "bodies",
              "joints", "actuators", "equalities", "collision_exclusions", "cameras"});
  ModelBuilder builder;
  if (root.contains("meshes")) read_inline_meshes(root["meshes"], "meshes");
  if (root.contains("name")) builder.name = read_string(root["name"], "name");
  if (root.contains("description")) read_string(root["description"], "description");
  if (root.contains("dt")) builder.dt = read_number(root["dt"], "dt");
  if (root.contains("gravity")) builder.gravity = read_vec3(root["gravity"], "gravity");
  if (root.contains("solver")) read_solver(root["solver"], "solver", builder);
  if (root.contains("world")) {
    const Json& world = root["world"];
    check_keys(world, "world", {"friction", "restitution"});
    if (world.contains("friction"))
      builder.world_friction = read_number(world["friction"], "world.friction");
    if (world.contains("restitution"))
      builder.world_restitution = read_number(world["restitution"], "world.restitution");
  }
  if (root.contains("ground")) read_ground(root["ground"], "ground", builder);
  if (root.contains("bodies")) {
    for_each_element(root["bodies"], "bodies", [&](const Json& body, const std::string& path) {
      BodySpec spec = read_body(body, path);
      locations.note("body '" + spec.name + "'", path);
      add_to_builder(path, [&] { builder.add_body(std::move(spec)); });
    });
  }
  if (root.contains("joints")) {
    for_each_element(root["joints"], "joints", [&](const Json& joint, const std::string& path) {
      JointSpec spec = read_joint(joint, path);
      locations.note("joint '" + spec.name + "'", path);
      add_to_builder(path, [&] { builder.add_joint(std::move(spec)); });
    });
  }
  if (root.contains("actuators")) {
    for_each_element(root["actuators"], "actuators",
                     [&](const Json& actuator, const std::string& path) {
                       ActuatorSpec spec = read_actuator(actuator, path);
                       locations.note("actuator '" + spec.name + "'", path);
                       add_to_builder(path, [&] { builder.add_actuator(std::move(spec)); });
                     });
  }
  if (root.contains("equalities")) {
    for_each_element(root["equalities"], "equalities", [&](const Json& equality, const std::string& path) {
      EqualitySpec spec = read_equality(equality, path);
      locations.note("equality '" + spec.name + "'", path);
      add_to_builder(path, [&] { builder.add_equality(std::move(spec)); });
    });
  }
  if (root.contains("collision_exclusions")) {
    // [["body_a", "body_b"], ...]: pairs whose shapes never collide (Model::collision_exclusions).
    const Json& pairs = root["collision_exclusions"];
    if (!pairs.is_array()) fail("collision_exclusions", message("expected an array of [body, body] pairs, got ", describe(pairs)));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const std::string path = element_path("collision_exclusions", i);
      const Json& pair = pairs[i];
      if (!pair.is_array() || pair.size() != 2)
        fail(path, message("expected a pair of body names [\"a\", \"b\"], got ", describe(pair)));
      std::string first = read_string(pair[0], element_path(path, 0));
      std::string second = read_string(pair[1], element_path(path, 1));
      locations.note("collision exclusion '" + first + "'-'" + second + "'", path);
      builder.exclude_collision(std::move(first), std::move(second));
    }
  }
  return builder;
}

// "meshes": [{"vertices": [[x, y, z], ...]}, ...]: convex hulls given by their points (what
// write_scene_json writes: a hull's own vertices, whose hull is the hull again).
void SceneReader::read_inline_meshes(const Json& value, const std::string& path) const {
  for_each_element(value, path, [&](const Json& object, const std::string& mesh_path) {
    check_keys(object, mesh_path, {"vertices", "source"});
    require_key(object, mesh_path, "vertices");
    std::string origin;
    if (object.contains("source")) origin = read_string(object["source"], key_path(mesh_path, "source"));
    const Json& vertices = object["vertices"];
    const std::string vertices_path = key_path(mesh_path, "vertices");
    if (!vertices.is_array()) fail(vertices_path, message("expected an array of [x, y, z] points, got ", describe(vertices)));
    std::vector<Vec3> points;
    points.reserve(vertices.size());
    for (std::size_t i = 0; i < vertices.size(); ++i) points.push_back(read_vec3(vertices[i], element_path(vertices_path, i)));
    // Errors name the file and the path; the mesh keeps the "source" it was written with, so
    // that a scene written again names where the hull first came from.
    ConvexMesh mesh = convex_hull(points, message(source_name(), ": ", vertices_path));
    if (!origin.empty()) mesh.source = origin;
    inline_meshes_.push_back(std::make_shared<const ConvexMesh>(std::move(mesh)));
  });
}

// [w, x, y, z] as written, not normalised: the builder checks it is unit and keeps it.
Quat SceneReader::read_quaternion(const Json& value, const std::string& path) const {
  const std::vector<double> q = read_numbers(value, path, 4);
  return {q[0], q[1], q[2], q[3]};
}

// A joint's "frames": its geometry in its bodies' frames (JointFrames), every field required.
JointFrames SceneReader::read_joint_frames(const Json& object, const std::string& path) const {
  if (!object.is_object()) fail(path, message("expected an object, got ", describe(object)));
  check_keys(object, path,
             {"anchor_parent", "anchor_child", "axis_parent", "axis_child", "axis2_parent", "axis2_child",
              "axis3_parent", "rest_relative"});
  JointFrames frames;
  const std::pair<const char*, Vec3*> vectors[] = {
      {"anchor_parent", &frames.anchor_parent}, {"anchor_child", &frames.anchor_child},
      {"axis_parent", &frames.axis_parent},     {"axis_child", &frames.axis_child},
      {"axis2_parent", &frames.axis2_parent},   {"axis2_child", &frames.axis2_child},
      {"axis3_parent", &frames.axis3_parent}};
  for (const auto& [key, vector] : vectors) {
    require_key(object, path, key);
    *vector = read_vec3(object[key], key_path(path, key));
  }
  require_key(object, path, "rest_relative");
  frames.rest_relative = read_quaternion(object["rest_relative"], key_path(path, "rest_relative"));
  return frames;
}

void SceneReader::read_solver(const Json& object, const std::string& path, ModelBuilder& builder) const {
  SolverSettings& solver = builder.solver;
  check_keys(object, path,
             {"coordinates", "formulation", "compliance", "type", "max_iterations", "tolerance", "friction_directions",
              "slip_aligned_friction", "contact_margin", "speculative_factor", "contact_point", "contact_erp", "penetration_slop",
              "restitution_threshold", "stabilization_iterations", "stabilization_tolerance", "warm_start",
              "time_of_impact", "max_speed", "max_angular_speed"});
  const auto field = [&](const char* key) { return key_path(path, key); };
  if (object.contains("warm_start")) solver.warm_start = read_bool(object["warm_start"], field("warm_start"));
  if (object.contains("time_of_impact"))
    solver.time_of_impact = read_bool(object["time_of_impact"], field("time_of_impact"));
  if (object.contains("coordinates")) {
    solver.coordinates = read_enum<Coordinates>(object["coordinates"], field("coordinates"), "coordinates",
                                                {{"maximal", Coordinates::Maximal}, {"reduced", Coordinates::Reduced}});
  }
  if (object.contains("formulation")) {
    solver.formulation = read_enum<Formulation>(
        object["formulation"], field("formulation"), "formulation",
        {{"complementarity", Formulation::Complementarity}, {"convex", Formulation::Convex}});
  }
  if (object.contains("compliance")) {
    // {"contact": {"time_constant": s, "damping_ratio": ζ}, "joint": …, "limit": …, "servo": …}
    const Json& compliance = object["compliance"];
    const std::string compliance_path = field("compliance");
    if (!compliance.is_object()) throw Error(message(compliance_path, ": expected an object"));
    check_keys(compliance, compliance_path, {"contact", "joint", "limit", "servo"});
    for (int c = 0; c < kRowClassCount; ++c) {
      const char* name = row_class_name(static_cast<RowClass>(c));
      if (!compliance.contains(name)) continue;
      const Json& entry = compliance[name];
      const std::string entry_path = key_path(compliance_path, name);
      if (!entry.is_object()) throw Error(message(entry_path, ": expected an object"));
      check_keys(entry, entry_path, {"time_constant", "damping_ratio"});
      auto& values = builder.compliance[c];
      if (entry.contains("time_constant"))
        values.time_constant = read_number(entry["time_constant"], key_path(entry_path, "time_constant"));
      if (entry.contains("damping_ratio"))
        values.damping_ratio = read_number(entry["damping_ratio"], key_path(entry_path, "damping_ratio"));
      if (!(values.time_constant > 0 && std::isfinite(values.time_constant)))
        throw Error(message(key_path(entry_path, "time_constant"), ": must be positive and finite, got ", values.time_constant));
      if (!(values.damping_ratio > 0 && std::isfinite(values.damping_ratio)))
        throw Error(message(key_path(entry_path, "damping_ratio"), ": must be positive and finite, got ", values.damping_ratio));
    }
  }
  if (object.contains("type")) {
    solver.type = read_enum<SolverType>(
        object["type"], field("type"), "solver type",
        {{"interior_point", SolverType::InteriorPoint}, {"pgs", SolverType::ProjectedGaussSeidel}});
  }
  if (object.contains("max_iterations"))
    solver.max_iterations = read_int(object["max_iterations"], field("max_iterations"));
  if (object.contains("tolerance"))
    solver.tolerance = read_number(object["tolerance"], field("tolerance"));
  if (object.contains("friction_directions"))
    solver.friction_directions =
        read_int(object["friction_directions"], field("friction_directions"));
  if (object.contains("slip_aligned_friction"))
    solver.slip_aligned_friction = read_bool(object["slip_aligned_friction"], field("slip_aligned_friction"));
  if (object.contains("contact_margin"))
    solver.contact_margin = read_number(object["contact_margin"], field("contact_margin"));
  if (object.contains("speculative_factor"))
    solver.speculative_factor = read_number(object["speculative_factor"], field("speculative_factor"));
  if (object.contains("contact_point"))
    solver.contact_point = read_enum<ContactPoint>(object["contact_point"], field("contact_point"), "contact_point",
                                                   {{"midpoint", ContactPoint::Midpoint}, {"surfaces", ContactPoint::Surfaces}});
  if (object.contains("contact_erp"))
    solver.contact_erp = read_number(object["contact_erp"], field("contact_erp"));
  if (object.contains("penetration_slop"))
    solver.penetration_slop = read_number(object["penetration_slop"], field("penetration_slop"));
  if (object.contains("restitution_threshold"))
    solver.restitution_threshold =
        read_number(object["restitution_threshold"], field("restitution_threshold"));
  if (object.contains("stabilization_iterations"))
    solver.stabilization_iterations =
        read_int(object["stabilization_iterations"], field("stabilization_iterations"));
  if (object.contains("stabilization_tolerance"))
    solver.stabilization_tolerance =
        read_number(object["stabilization_tolerance"], field("stabilization_tolerance"));
  if (object.contains("max_speed")) solver.max_speed = read_number(object["max_speed"], field("max_speed"));
  if (object.contains("max_angular_speed"))
    solver.max_angular_speed = read_number(object["max_angular_speed"], field("max_angular_speed"));
}

// "ground": true (the plane z = 0), false (none), one plane object, or an array of them.
void SceneReader::read_ground(const Json& value, const std::string& path,
                              ModelBuilder& builder) const {
  if (value.is_boolean()) {
    if (value.get<bool>()) add_to_builder(path, [&] { builder.add_ground_plane(); });
    return;
  }
  if (value.is_object()) {
    read_plane(value, path, builder);
    return;
  }
  if (value.is_array()) {
    for_each_element(value, path, [&](const Json& plane, const std::string& plane_path) {
      read_plane(plane, plane_path, builder);
    });
    return;
  }
  fail(path, message("expected true, false, a plane {\"normal\", \"offset\"} or an array of "
                     "planes, got ",
                     describe(value)));
}

void SceneReader::read_plane(const Json& object, const std::string& path,
                             ModelBuilder& builder) const {
  check_keys(object, path, {"normal", "offset", "position", "orientation"});
  if (object.contains("position") || object.contains("orientation")) {
    // The plane's frame exactly (write_scene_json): through "position", normal orientation·z.
    for (const char* key : {"normal", "offset"})
      refuse_key(object, path, key, "beside \"position\" and \"orientation\" (give the plane one way)");
    require_key(object, path, "position");
    require_key(object, path, "orientation");
    const Vec3 position = read_vec3(object["position"], key_path(path, "position"));
    const Quat orientation = read_rotation(object, path);
    add_to_builder(path, [&] { builder.add_ground_plane_frame(position, orientation); });
    return;
  }
  Vec3 normal{0, 0, 1};
  double offset = 0.0;
  if (object.contains("normal")) normal = read_vec3(object["normal"], key_path(path, "normal"));
  if (object.contains("offset")) offset = read_number(object["offset"], key_path(path, "offset"));
  add_to_builder(path, [&] { builder.add_ground_plane(normal, offset); });
}

BodySpec SceneReader::read_body(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "position", "orientation", "euler", "linear_velocity",
              "angular_velocity", "mass", "inertia", "inertia_frame", "center_of_mass", "density", "friction",
              "restitution", "linear_damping", "angular_damping", "force", "torque", "shapes"});
  require_key(object, path, "name");
  const auto field = [&](const char* key) { return key_path(path, key); };
  BodySpec body;
  body.name = read_string(object["name"], field("name"));
  if (object.contains("type")) {
    body.type = read_enum<BodyType>(object["type"], field("type"), "body type",
                                    {{"dynamic", BodyType::Dynamic},
                                     {"static", BodyType::Static},
                                     {"kinematic", BodyType::Kinematic}});
  }
  if (body.type == BodyType::Static) {
    for (const char* key :
         {"linear_velocity", "angular_velocity", "mass", "inertia", "inertia_frame", "center_of_mass", "density",
          "linear_damping", "angular_damping", "force", "torque"}) {
      refuse_key(object, path, key, "by a static body (it never moves)");
    }
  }
  if (body.type == BodyType::Kinematic) {
    for (const char* key : {"mass", "inertia", "inertia_frame", "center_of_mass", "density", "linear_damping",
                            "angular_damping", "force", "torque"}) {
      refuse_key(object, path, key, "by a kinematic body (its motion is prescribed: it has no mass)");
    }
  }
  if (object.contains("position")) body.position = read_vec3(object["position"], field("position"));
  body.orientation = read_rotation(object, path);
  if (object.contains("linear_velocity"))
    body.linear_velocity = read_vec3(object["linear_velocity"], field("linear_velocity"));
  if (object.contains("angular_velocity"))
    body.angular_velocity = read_vec3(object["angular_velocity"], field("angular_velocity"));
  if (object.contains("mass")) body.mass = read_number(object["mass"], field("mass"));
  if (object.contains("inertia")) body.inertia = read_vec3(object["inertia"], field("inertia"));
  if (object.contains("inertia_frame")) {
    if (!object.contains("inertia")) fail(field("inertia_frame"), "needs \"inertia\" (the moments along these axes)");
    body.inertia_frame = read_quaternion(object["inertia_frame"], field("inertia_frame"));
  }
  if (object.contains("center_of_mass"))
    body.center_of_mass = read_vec3(object["center_of_mass"], field("center_of_mass"));
  if (object.contains("density")) body.density = read_number(object["density"], field("density"));
  if (object.contains("friction"))
    body.friction = read_number(object["friction"], field("friction"));
  if (object.contains("restitution"))
    body.restitution = read_number(object["restitution"], field("restitution"));
  if (object.contains("linear_damping"))
    body.linear_damping = read_number(object["linear_damping"], field("linear_damping"));
  if (object.contains("angular_damping"))
    body.angular_damping = read_number(object["angular_damping"], field("angular_damping"));
  if (object.contains("force")) body.force = read_vec3(object["force"], field("force"));
  if (object.contains("torque")) body.torque = read_vec3(object["torque"], field("torque"));
  if (object.contains("shapes")) {
    for_each_element(object["shapes"], field("shapes"),
                     [&](const Json& shape, const std::string& shape_path) {
                       body.shapes.push_back(read_shape(shape, shape_path));
                     });
  }
  return body;
}

ShapeSpec SceneReader::read_shape(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"type", "name", "position", "orientation", "euler", "radius", "half_extents", "radii",
              "half_length", "length", "file", "mesh", "scale", "collision_group", "collision_mask"});
  const auto field = [&](const char* key) { return key_path(path, key); };
  ShapeSpec shape;
  if (object.contains("type")) {
    shape.type = read_enum<ShapeType>(object["type"], field("type"), "shape type",
                                      {{"sphere", ShapeType::Sphere},
                                       {"box", ShapeType::Box},
                                       {"capsule", ShapeType::Capsule},
                                       {"cylinder", ShapeType::Cylinder},
                                       {"plane", ShapeType::Plane},
                                       {"mesh", ShapeType::ConvexMesh},
                                       {"ellipsoid", ShapeType::Ellipsoid}});
  }
  if (shape.type != ShapeType::ConvexMesh) {
    const char* reason = "except by a mesh";
    refuse_key(object, path, "file", reason);
    refuse_key(object, path, "mesh", reason);
    refuse_key(object, path, "scale", reason);
  }
  if (object.contains("name")) shape.name = read_string(object["name"], field("name"));
  if (object.contains("position"))
    shape.position = read_vec3(object["position"], field("position"));
  shape.orientation = read_rotation(object, path);

  const bool round = shape.type == ShapeType::Capsule || shape.type == ShapeType::Cylinder;
  const bool uses_radius = shape.type == ShapeType::Sphere || round;
  const bool uses_half_extents = shape.type == ShapeType::Box;
  const bool uses_length = round;
  const char* reason = shape.type == ShapeType::Sphere       ? "by a sphere"
                       : shape.type == ShapeType::Box        ? "by a box"
                       : shape.type == ShapeType::Plane      ? "by a plane"
                       : shape.type == ShapeType::Cylinder   ? "by a cylinder"
                       : shape.type == ShapeType::ConvexMesh ? "by a mesh"
                       : shape.type == ShapeType::Ellipsoid  ? "by an ellipsoid"
                                                             : "by a capsule";
  if (uses_radius) {
    if (object.contains("radius")) shape.radius = read_number(object["radius"], field("radius"));
  } else {
    refuse_key(object, path, "radius", reason);
  }
  if (uses_half_extents) {
    if (object.contains("half_extents"))
      shape.half_extents = read_vec3(object["half_extents"], field("half_extents"));
  } else {
    refuse_key(object, path, "half_extents", reason);
  }
  // An ellipsoid's semi-axes along its frame's x, y, z ("radii", MuJoCo's word).
  if (shape.type == ShapeType::Ellipsoid) {
    if (object.contains("radii")) shape.half_extents = read_vec3(object["radii"], field("radii"));
  } else {
    refuse_key(object, path, "radii", reason);
  }
  if (uses_length) {
    if (object.contains("half_length") && object.contains("length"))
      fail(path, "give either \"half_length\" or \"length\", not both");
    if (object.contains("half_length"))
      shape.half_length = read_number(object["half_length"], field("half_length"));
    if (object.contains("length"))
      shape.half_length = 0.5 * read_number(object["length"], field("length"));
  } else {
    refuse_key(object, path, "half_length", reason);
    refuse_key(object, path, "length", reason);
  }
  if (object.contains("collision_group"))
    shape.collision_group = read_bits(object["collision_group"], field("collision_group"));
  if (object.contains("collision_mask"))
    shape.collision_mask = read_bits(object["collision_mask"], field("collision_mask"));
  // Last, once every key is known to be right: reading the mesh file may be slow.
  if (shape.type == ShapeType::ConvexMesh) read_mesh(object, path, shape);
  return shape;
}

// "file" (required; relative paths from the scene file's folder) and "scale": a number (the
// shape's uniform scale, a differentiable size parameter) or three numbers (applied to the
// file's coordinates before the hull is taken; the parameter is then 1).
void SceneReader::read_mesh(const Json& object, const std::string& path, ShapeSpec& shape) const {
  if (object.contains("mesh")) {
    // An index into the top-level "meshes" list; "scale" is then the shape's uniform scale.
    refuse_key(object, path, "file", "beside \"mesh\" (give the hull one way)");
    const auto count = static_cast<long long>(inline_meshes_.size());
    if (count == 0) fail(key_path(path, "mesh"), "the scene has no \"meshes\" list to refer to");
    const long long index = read_integer(object["mesh"], key_path(path, "mesh"), 0, count - 1);
    if (object.contains("scale")) shape.scale = read_number(object["scale"], key_path(path, "scale"));
    shape.mesh = inline_meshes_[static_cast<std::size_t>(index)];
    return;
  }
  require_key(object, path, "file");
  const std::string file = read_string(object["file"], key_path(path, "file"));
  std::vector<double> scale_key;
  Vec3 file_scale{1, 1, 1};
  if (object.contains("scale")) {
    const Json& scale = object["scale"];
    if (scale.is_array()) {
      file_scale = read_vec3(scale, key_path(path, "scale"));
      if (!(file_scale.x > 0 && file_scale.y > 0 && file_scale.z > 0))
        fail(key_path(path, "scale"), message("each component must be positive, got ", describe(scale)));
      scale_key = {file_scale.x, file_scale.y, file_scale.z};
    } else {
      shape.scale = read_number(scale, key_path(path, "scale"));
    }
  }
  std::shared_ptr<const ConvexMesh>& mesh = meshes_[{file, scale_key}];
  if (!mesh) {
    const std::filesystem::path file_path(file);
    try {
      mesh = std::make_shared<const ConvexMesh>(
          load_convex_mesh(file_path.is_absolute() ? file_path : base_directory_ / file_path, file_scale));
    } catch (const Error& error) {
      fail(key_path(path, "file"), error.what());
    }
  }
  shape.mesh = mesh;
}

JointSpec SceneReader::read_joint(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "parent", "child", "anchor", "axis", "axis2", "axis3", "frames", "limits", "damping",
              "collide_connected"});
  require_key(object, path, "name");
  require_key(object, path, "child");
  const auto field = [&](const char* key) { return key_path(path, key); };
  JointSpec joint;
  joint.name = read_string(object["name"], field("name"));
  if (object.contains("type")) {
    joint.type = read_enum<JointType>(object["type"], field("type"), "joint type",
                                      {{"fixed", JointType::Fixed},
                                       {"revolute", JointType::Revolute},
                                       {"prismatic", JointType::Prismatic},
                                       {"ball", JointType::Ball},
                                       {"universal", JointType::Universal},
                                       {"planar", JointType::Planar}});
  }
  if (object.contains("parent")) joint.parent = read_string(object["parent"], field("parent"));
  joint.child = read_string(object["child"], field("child"));
  if (object.contains("frames")) {
    for (const char* key : {"anchor", "axis", "axis2", "axis3"})
      refuse_key(object, path, key, "beside \"frames\" (the joint's geometry is given in its bodies' frames)");
    joint.frames = read_joint_frames(object["frames"], field("frames"));
  }
  if (object.contains("anchor")) joint.anchor = read_vec3(object["anchor"], field("anchor"));

  const bool has_axis = joint.type == JointType::Revolute || joint.type == JointType::Prismatic ||
                        joint.type == JointType::Universal || joint.type == JointType::Planar;
  if (has_axis) {
    if (object.contains("axis")) joint.axis = read_vec3(object["axis"], field("axis"));
  } else {
    refuse_key(object, path, "axis",
               joint.type == JointType::Fixed ? "by a fixed joint" : "by a ball joint");
  }
  if (joint.type == JointType::Universal) {
    if (object.contains("axis2")) joint.axis2 = read_vec3(object["axis2"], field("axis2"));
  } else if (joint.type == JointType::Planar) {
    // The in-plane directions of dofs 0 and 1; axis3 defaults to axis × axis2 (the builder).
    joint.axis2 =
        object.contains("axis2") ? read_vec3(object["axis2"], field("axis2")) : default_plane_direction(joint.axis);
    if (object.contains("axis3")) joint.axis3 = read_vec3(object["axis3"], field("axis3"));
  } else {
    refuse_key(object, path, "axis2", "except by a universal or planar joint");
  }
  if (joint.type != JointType::Planar) refuse_key(object, path, "axis3", "except by a planar joint");
  if (object.contains("limits")) {
    if (joint.type == JointType::Fixed || joint.type == JointType::Ball || joint.type == JointType::Planar) {
      refuse_key(object, path, "limits",
                 "by a fixed, ball or planar joint (limits apply to revolute, prismatic and universal "
                 "joints)");
    }
    const std::vector<double> limits = read_numbers(object["limits"], field("limits"), 2);
    joint.lower_limit = limits[0];
    joint.upper_limit = limits[1];
  }
  if (object.contains("damping")) joint.damping = read_number(object["damping"], field("damping"));
  if (object.contains("collide_connected"))
    joint.collide_connected = read_bool(object["collide_connected"], field("collide_connected"));
  return joint;
}

ActuatorSpec SceneReader::read_actuator(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "joint", "dof", "gain", "max_torque", "max_velocity", "control"});
  require_key(object, path, "name");
  require_key(object, path, "joint");
  const auto field = [&](const char* key) { return key_path(path, key); };
  ActuatorSpec actuator;
  actuator.name = read_string(object["name"], field("name"));
  if (object.contains("type")) {
    actuator.type =
        read_enum<ActuatorType>(object["type"], field("type"), "actuator type",
                                {{"motor", ActuatorType::Motor}, {"servo", ActuatorType::Servo}});
  }
  actuator.joint = read_string(object["joint"], field("joint"));
  if (object.contains("dof")) actuator.dof = read_int(object["dof"], field("dof"));
  if (actuator.type == ActuatorType::Servo) {
    if (object.contains("gain")) actuator.gain = read_number(object["gain"], field("gain"));
    if (object.contains("max_velocity"))
      actuator.max_velocity = read_number(object["max_velocity"], field("max_velocity"));
  } else {
    refuse_key(object, path, "gain", "by a motor (only servos have a gain)");
    refuse_key(object, path, "max_velocity", "by a motor (only servos have a velocity bound)");
  }
  if (object.contains("max_torque"))
    actuator.max_torque = read_number(object["max_torque"], field("max_torque"));
  if (object.contains("control"))
    actuator.control = read_number(object["control"], field("control"));
  return actuator;
}

EqualitySpec SceneReader::read_equality(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "body_a", "body_b", "anchor", "anchor_a", "anchor_b", "local_anchor_a", "local_anchor_b",
              "length", "relative", "time_constant", "damping_ratio"});
  require_key(object, path, "name");
  require_key(object, path, "type");
  require_key(object, path, "body_b");
  const auto field = [&](const char* key) { return key_path(path, key); };
  EqualitySpec equality;
  equality.name = read_string(object["name"], field("name"));
  equality.type = read_enum<EqualityType>(object["type"], field("type"), "equality type",
                                          {{"connect", EqualityType::Connect},
                                           {"distance", EqualityType::Distance},
                                           {"weld", EqualityType::Weld}});
  if (object.contains("body_a")) equality.body_a = read_string(object["body_a"], field("body_a"));
  equality.body_b = read_string(object["body_b"], field("body_b"));
  if (equality.type != EqualityType::Weld) refuse_key(object, path, "relative", "except by a weld equality");
  if (object.contains("local_anchor_a") || object.contains("local_anchor_b")) {
    // The points in body_a's and body_b's own frames (write_scene_json), any type.
    for (const char* key : {"anchor", "anchor_a", "anchor_b"})
      refuse_key(object, path, key, "beside local anchors (give the points one way)");
    require_key(object, path, "local_anchor_a");
    require_key(object, path, "local_anchor_b");
    equality.local_anchors = true;
    equality.anchor_a = read_vec3(object["local_anchor_a"], field("local_anchor_a"));
    equality.anchor_b = read_vec3(object["local_anchor_b"], field("local_anchor_b"));
    if (equality.type == EqualityType::Distance) {
      require_key(object, path, "length");
      equality.length = read_number(object["length"], field("length"));
    } else {
      refuse_key(object, path, "length", "except by a distance equality");
    }
    if (equality.type == EqualityType::Weld) {
      require_key(object, path, "relative");
      equality.relative = read_quaternion(object["relative"], field("relative"));
    }
  } else if (equality.type != EqualityType::Distance) {
    require_key(object, path, "anchor");
    equality.anchor = read_vec3(object["anchor"], field("anchor"));
    for (const char* key : {"anchor_a", "anchor_b", "length"})
      refuse_key(object, path, key,
                 equality.type == EqualityType::Weld ? "by a weld equality (its one point is \"anchor\")"
                                                     : "by a connect equality (its one point is \"anchor\")");
  } else {
    require_key(object, path, "anchor_a");
    require_key(object, path, "anchor_b");
    equality.anchor_a = read_vec3(object["anchor_a"], field("anchor_a"));
    equality.anchor_b = read_vec3(object["anchor_b"], field("anchor_b"));
    if (object.contains("length")) equality.length = read_number(object["length"], field("length"));
    refuse_key(object, path, "anchor", "by a distance equality (its points are \"anchor_a\" and \"anchor_b\")");
  }
  if (equality.type == EqualityType::Weld && object.contains("relative") && !equality.local_anchors)
    equality.relative = read_quaternion(object["relative"], field("relative"));
  if (object.contains("time_constant"))
    equality.time_constant = read_number(object["time_constant"], field("time_constant"));
  if (object.contains("damping_ratio"))
    equality.damping_ratio = read_number(object["damping_ratio"], field("damping_ratio"));
  return equality;
}

}  // namespace

Scene parse_scene(std::string_view json_text, std::string_view source_name) {
  const Json root = json::parse(json_text, source_name);
  ItemLocations locations;
  // A source name that is a path locates the scene's mesh files; any other ("<string>")
  // leaves them relative to the working directory.
  const std::filesystem::path base_directory =
      source_name.starts_with('<') ? std::filesystem::path() : std::filesystem::path(source_name).parent_path();
  const ModelBuilder builder = SceneReader(source_name, base_directory).read(root, locations);
  try {
    return builder.build();
  } catch (const Error& error) {
    throw Error(message(source_name, ": ", locations.locate(error.what())));
  }
}

Scene load_scene(const std::filesystem::path& path, const UrdfOptions& urdf_options) {
  // Robot files by extension (diffphys/robot_loaders.hpp); everything else is a JSON scene.
  const std::string extension = path.extension().string();
  if (extension == ".urdf") return load_urdf(path, urdf_options);
  if (extension == ".xml" || extension == ".mjcf") return load_mjcf(path);
  const std::string source_name = path.string();
  std::error_code status_error;
  if (!std::filesystem::exists(path, status_error))
    throw Error(message(source_name, ": no such file"));
  if (std::filesystem::is_directory(path, status_error))
    throw Error(message(source_name, ": is a directory, not a scene file"));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(message(source_name, ": cannot open the file for reading"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(message(source_name, ": cannot read the scene file"));
  return parse_scene(text.str(), source_name);
}

}  // namespace diffphys
