// model/scene_json_writer.cpp — writing a rigid Scene as a JSON scene file (diffphys/scene.hpp,
// docs/scene-format.md "Writing scenes"): the inverse of model/scene_json.cpp.
//
// Owns the choice of *which* form of each item makes the reader rebuild the same Model, θ and
// State bit for bit. The reader's friendly forms go through world-frame arithmetic at the
// build-time pose (a joint's anchor is rotated into each body's frame), which would re-round
// the last bits; so the writer uses the forms that the builder takes as given: bodies at their
// state with the centre of mass as origin ("center_of_mass": [0, 0, 0]) and their principal
// axes ("inertia_frame"), joints by their "frames" in the bodies' frames, equalities by local
// anchors, ground planes by their frame, meshes by their hull's vertices (whose hull is the
// hull again: model/convex_mesh.cpp orders vertices and faces canonically). Numbers are written
// by nlohmann/json, shortest round-trip form. What the format cannot hold is refused with an
// Error naming the item; nothing is written approximately.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"

namespace diffphys {
// A named namespace around the anonymous one: the library builds in unity batches, where
// scene_json.cpp's own helpers (Json, ...) share the translation unit.
namespace scene_json_writing {
namespace {

// Keys in the order the documentation presents them, so that a written file reads like one.
using Json = nlohmann::ordered_json;

Json vec3(const Vec3& v) {
  return Json::array({v.x, v.y, v.z});
}
Json quat(const Quat& q) {
  return Json::array({q.w, q.x, q.y, q.z});
}

const char* coordinates_name(Coordinates coordinates) {
  return coordinates == Coordinates::Reduced ? "reduced" : "maximal";
}
const char* formulation_name(Formulation formulation) {
  return formulation == Formulation::Convex ? "convex" : "complementarity";
}
const char* solver_type_name(SolverType type) {
  return type == SolverType::ProjectedGaussSeidel ? "pgs" : "interior_point";
}
const char* contact_point_name(ContactPoint point) {
  return point == ContactPoint::Surfaces ? "surfaces" : "midpoint";
}
const char* actuator_type_name(ActuatorType type) {
  return type == ActuatorType::Servo ? "servo" : "motor";
}

class SceneWriter {
 public:
  explicit SceneWriter(const Scene& scene)
      : model_(scene.model), params_(scene.params), state_(scene.state), scene_(scene) {}

  Json write() const {
    check_writable();
    Json root;
    root["name"] = model_.name;
    root["dt"] = model_.dt;
    root["gravity"] = vec3(params_.vec3_at(model_.layout.gravity));
    root["solver"] = solver();
    root["world"] = {{"friction", value(model_.layout.body_friction[0], "body 'world'", "friction")},
                     {"restitution", value(model_.layout.body_restitution[0], "body 'world'", "restitution")}};
    root["ground"] = ground();
    if (!model_.meshes.empty()) root["meshes"] = meshes();
    Json bodies = Json::array();
    for (int b = 1; b < model_.body_count(); ++b) bodies.push_back(body(b));
    root["bodies"] = std::move(bodies);
    Json joints = Json::array();
    for (int j = 0; j < model_.joint_count(); ++j) joints.push_back(joint(j));
    root["joints"] = std::move(joints);
    Json actuators = Json::array();
    for (int a = 0; a < model_.actuator_count(); ++a) actuators.push_back(actuator(a));
    root["actuators"] = std::move(actuators);
    if (!model_.equalities.empty()) {
      Json equalities = Json::array();
      for (int e = 0; e < model_.equality_count(); ++e) equalities.push_back(equality(e));
      root["equalities"] = std::move(equalities);
    }
    if (!model_.collision_exclusions.empty()) {
      Json pairs = Json::array();
      for (const auto& [a, b] : model_.collision_exclusions) pairs.push_back(Json::array({body_name(a), body_name(b)}));
      root["collision_exclusions"] = std::move(pairs);
    }
    return root;
  }

 private:
  // Everything the file cannot say, refused before anything is written.
  void check_writable() const {
    validate_state(model_, state_);    // sizes, finite, unit quaternions: names the body
    validate_params(model_, params_);  // sizes, finite, physical: names the slice
    if (scene_.controls.size() != model_.actuators.size())
      throw Error(message("scene: ", scene_.controls.size(), " controls for ", model_.actuator_count(), " actuators"));
    for (std::size_t a = 0; a < scene_.controls.size(); ++a)
      if (!std::isfinite(scene_.controls[a]))
        throw Error(
            message("actuator '", model_.actuators[a].name, "': control must be finite, got ", scene_.controls[a]));
    if (state_.time != 0.0)
      throw Error(message("state: time is ", state_.time,
                          " s, and a scene file starts at time 0 (set the state's time to 0 to write it)"));
    if (model_.bodies.empty() || model_.bodies[0].name != "world" || model_.bodies[0].type != BodyType::Static)
      throw Error("body 0: a scene's first body is the static world, named 'world'");
    if (!(state_.position[0] == Vec3{}) || !(state_.orientation[0] == Quat{}) ||
        !(state_.linear_velocity[0] == Vec3{}) || !(state_.angular_velocity[0] == Vec3{}))
      throw Error("body 'world': the world body is at the origin and at rest in a scene file; this state moves it");
    // The reader numbers ground planes "ground", "ground1", ... and adds them before any body.
    int world_shape = 0;
    for (int s = 0; s < model_.shape_count(); ++s) {
      const Shape& shape = model_.shapes[static_cast<std::size_t>(s)];
      if (shape.body != 0) continue;
      const std::string expected = world_shape == 0 ? "ground" : "ground" + std::to_string(world_shape);
      if (shape.type != ShapeType::Plane)
        throw Error(
            message("shape '", shape.name, "': a ", type_name(shape.type),
                    " on the world body; a scene file's world holds ground planes only (put it on a static body)"));
      if (shape.name != expected || s != world_shape)
        throw Error(message("shape '", shape.name, "': a scene file's ground planes are named ", expected,
                            " in order, ahead of every body's shapes"));
      ++world_shape;
    }
    // Each body's shapes follow the previous body's, as the reader adds them.
    int next_shape = world_shape;
    for (int b = 1; b < model_.body_count(); ++b) {
      const Body& body = model_.bodies[static_cast<std::size_t>(b)];
      if (body.first_shape != next_shape)
        throw Error(message("body '", body.name, "': its shapes are not in body order (first shape ", body.first_shape,
                            ", expected ", next_shape, ")"));
      next_shape += body.shape_count;
      if (body.type == BodyType::Static && (!(state_.linear_velocity[static_cast<std::size_t>(b)] == Vec3{}) ||
                                            !(state_.angular_velocity[static_cast<std::size_t>(b)] == Vec3{})))
        throw Error(
            message("body '", body.name, "': a static body has no velocity in a scene file, this state gives it one"));
    }
    // Compliance slices in a complementarity scene (set_formulation back from convex): the
    // reader adds them only to convex scenes.
    if (model_.solver.formulation != Formulation::Convex && model_.layout.compliance_time_constant[0] >= 0)
      throw Error(message("parameter 'compliance/", row_class_name(RowClass::Contact),
                          "/time_constant': a complementarity scene with the convex formulation's compliance "
                          "slices in θ cannot be written (a scene file holds them for convex scenes only)"));
  }

  // θ at `offset`; a slot the model lacks is refused, naming the item and field.
  double value(int offset, const std::string& item, const char* field) const {
    if (offset < 0) throw Error(message(item, ": has no ", field, " in θ (the model's layout lacks the slice)"));
    return params_.at(offset);
  }
  Json value3(int offset, const std::string& item, const char* field) const {
    if (offset < 0) throw Error(message(item, ": has no ", field, " in θ (the model's layout lacks the slice)"));
    return vec3(params_.vec3_at(offset));
  }

  const std::string& body_name(int b) const { return model_.bodies[static_cast<std::size_t>(b)].name; }

  Json solver() const {
    const SolverSettings& solver = model_.solver;
    Json out;
    out["coordinates"] = coordinates_name(solver.coordinates);
    out["formulation"] = formulation_name(solver.formulation);
    if (solver.formulation == Formulation::Convex) {
      Json compliance;
      for (int c = 0; c < kRowClassCount; ++c) {
        const std::string item = std::string("compliance/") + row_class_name(static_cast<RowClass>(c));
        compliance[row_class_name(static_cast<RowClass>(c))] = {
            {"time_constant", value(model_.layout.compliance_time_constant[c], item, "time_constant")},
            {"damping_ratio", value(model_.layout.compliance_damping_ratio[c], item, "damping_ratio")}};
      }
      out["compliance"] = std::move(compliance);
    }
    out["type"] = solver_type_name(solver.type);
    out["max_iterations"] = solver.max_iterations;
    out["tolerance"] = solver.tolerance;
    out["friction_directions"] = solver.friction_directions;
    out["slip_aligned_friction"] = solver.slip_aligned_friction;
    out["contact_margin"] = solver.contact_margin;
    out["speculative_factor"] = solver.speculative_factor;
    out["contact_point"] = contact_point_name(solver.contact_point);
    out["contact_erp"] = solver.contact_erp;
    out["penetration_slop"] = solver.penetration_slop;
    out["restitution_threshold"] = solver.restitution_threshold;
    out["time_of_impact"] = solver.time_of_impact;
    out["warm_start"] = solver.warm_start;
    out["stabilization_iterations"] = solver.stabilization_iterations;
    out["stabilization_tolerance"] = solver.stabilization_tolerance;
    out["max_speed"] = solver.max_speed;
    out["max_angular_speed"] = solver.max_angular_speed;
    return out;
  }

  // The world's planes by their exact frames.
  Json ground() const {
    Json planes = Json::array();
    for (const Shape& shape : model_.shapes)
      if (shape.body == 0)
        planes.push_back({{"position", vec3(shape.local_position)}, {"orientation", quat(shape.local_orientation)}});
    return planes;
  }

  // The reader rebuilds a hull from its vertices (convex_hull); model/convex_mesh.cpp numbers
  // vertices and faces canonically, so that gives the same hull. Checked rather than assumed:
  // a hull that would come back different in any bit is refused.
  static bool same_hull(const ConvexMesh& a, const ConvexMesh& b) {
    if (!(a.vertices == b.vertices && a.face_vertices == b.face_vertices && a.face_edges == b.face_edges &&
          a.clip_vertices == b.clip_vertices && a.clip_deviation == b.clip_deviation && a.volume == b.volume &&
          a.centroid == b.centroid && a.faces.size() == b.faces.size() && a.edges.size() == b.edges.size()))
      return false;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        if (!(a.inertia(i, j) == b.inertia(i, j))) return false;
    for (std::size_t f = 0; f < a.faces.size(); ++f) {
      const ConvexMesh::Face &x = a.faces[f], &y = b.faces[f];
      if (!(x.normal == y.normal && x.offset == y.offset && x.first == y.first && x.count == y.count &&
            x.clip_first == y.clip_first && x.clip_count == y.clip_count))
        return false;
    }
    for (std::size_t e = 0; e < a.edges.size(); ++e)
      for (int k = 0; k < 2; ++k)
        if (a.edges[e].vertex[k] != b.edges[e].vertex[k] || a.edges[e].face[k] != b.edges[e].face[k]) return false;
    return true;
  }

  Json meshes() const {
    Json out = Json::array();
    for (std::size_t m = 0; m < model_.meshes.size(); ++m) {
      const ConvexMesh& mesh = model_.meshes[m];
      const std::string item = message("mesh #", m, mesh.source.empty() ? std::string() : " (" + mesh.source + ")");
      std::string rebuilt_error;
      try {
        if (!same_hull(mesh, convex_hull(mesh.vertices, item)))
          rebuilt_error = "the hull of its vertices is not the same hull to the bit";
      } catch (const Error& error) {
        rebuilt_error = error.what();
      }
      if (!rebuilt_error.empty())
        throw Error(message(item, ": cannot be written as its vertices (", rebuilt_error,
                            "); a scene file holds a mesh as the points its hull is taken of"));
      Json vertices = Json::array();
      for (const Vec3& vertex : mesh.vertices) vertices.push_back(vec3(vertex));
      Json entry;
      if (!mesh.source.empty()) entry["source"] = mesh.source;
      entry["vertices"] = std::move(vertices);
      out.push_back(std::move(entry));
    }
    return out;
  }

  Json body(int b) const {
    const auto i = static_cast<std::size_t>(b);
    const Body& body = model_.bodies[i];
    const std::string item = "body '" + body.name + "'";
    const ParamLayout& layout = model_.layout;
    Json out;
    out["name"] = body.name;
    out["type"] = type_name(body.type);
    // The centre of mass is the body's origin: position and velocities are the state's.
    out["position"] = vec3(state_.position[i]);
    out["orientation"] = quat(state_.orientation[i]);
    if (body.type != BodyType::Static) {
      out["linear_velocity"] = vec3(state_.linear_velocity[i]);
      out["angular_velocity"] = vec3(state_.angular_velocity[i]);
    }
    if (body.type == BodyType::Dynamic) {
      out["mass"] = value(layout.body_mass[i], item, "mass");
      out["inertia"] = value3(layout.body_inertia[i], item, "inertia");
      out["inertia_frame"] = quat(body.principal_frame);
      out["center_of_mass"] = vec3(Vec3{});
    }
    out["friction"] = value(layout.body_friction[i], item, "friction");
    out["restitution"] = value(layout.body_restitution[i], item, "restitution");
    if (body.type == BodyType::Dynamic) {
      out["linear_damping"] = value(layout.body_linear_damping[i], item, "linear_damping");
      out["angular_damping"] = value(layout.body_angular_damping[i], item, "angular_damping");
      out["force"] = value3(layout.body_force[i], item, "force");
      out["torque"] = value3(layout.body_torque[i], item, "torque");
    }
    Json shapes = Json::array();
    for (int s = body.first_shape; s < body.first_shape + body.shape_count; ++s) shapes.push_back(shape(s));
    out["shapes"] = std::move(shapes);
    return out;
  }

  Json shape(int s) const {
    const Shape& shape = model_.shapes[static_cast<std::size_t>(s)];
    const std::string item = "shape '" + shape.name + "'";
    const int size = model_.layout.shape_size[static_cast<std::size_t>(s)];
    Json out;
    out["type"] = type_name(shape.type);
    out["name"] = shape.name;
    out["position"] = vec3(shape.local_position);
    out["orientation"] = quat(shape.local_orientation);
    switch (shape.type) {
      case ShapeType::Sphere:
        out["radius"] = value(size, item, "radius");
        break;
      case ShapeType::Box:
        out["half_extents"] = value3(size, item, "half_extents");
        break;
      case ShapeType::Ellipsoid:
        out["radii"] = value3(size, item, "radii");
        break;
      case ShapeType::Capsule:
      case ShapeType::Cylinder:
        out["radius"] = value(size, item, "radius");
        out["half_length"] = value(size < 0 ? -1 : size + 1, item, "half_length");
        break;
      case ShapeType::Plane:
        break;  // no size: its frame is the plane (static bodies only)
      case ShapeType::ConvexMesh:
        if (shape.mesh < 0 || shape.mesh >= static_cast<int>(model_.meshes.size()))
          throw Error(message(item, ": mesh index ", shape.mesh, " is not one of the model's ", model_.meshes.size(),
                              " meshes"));
        out["mesh"] = shape.mesh;
        out["scale"] = value(size, item, "scale");
        break;
    }
    if (shape.collision_group != Shape{}.collision_group) out["collision_group"] = shape.collision_group;
    if (shape.collision_mask != Shape{}.collision_mask) out["collision_mask"] = shape.collision_mask;
    return out;
  }

  Json joint(int j) const {
    const Joint& joint = model_.joints[static_cast<std::size_t>(j)];
    const std::string item = "joint '" + joint.name + "'";
    Json out;
    out["name"] = joint.name;
    out["type"] = type_name(joint.type);
    out["parent"] = body_name(joint.parent);
    out["child"] = body_name(joint.child);
    // In the bodies' frames, whose origins are their centres of mass (center_of_mass [0, 0, 0]).
    out["frames"] = {{"anchor_parent", vec3(joint.anchor_parent)}, {"anchor_child", vec3(joint.anchor_child)},
                     {"axis_parent", vec3(joint.axis_parent)},     {"axis_child", vec3(joint.axis_child)},
                     {"axis2_parent", vec3(joint.axis2_parent)},   {"axis2_child", vec3(joint.axis2_child)},
                     {"axis3_parent", vec3(joint.axis3_parent)},   {"rest_relative", quat(joint.rest_relative)}};
    if (joint.has_limits) out["limits"] = Json::array({joint.lower_limit, joint.upper_limit});
    out["damping"] = value(model_.layout.joint_damping[static_cast<std::size_t>(j)], item, "damping");
    out["collide_connected"] = joint.collide_connected;
    return out;
  }

  Json actuator(int a) const {
    const auto i = static_cast<std::size_t>(a);
    const Actuator& actuator = model_.actuators[i];
    const std::string item = "actuator '" + actuator.name + "'";
    const ParamLayout& layout = model_.layout;
    Json out;
    out["name"] = actuator.name;
    out["type"] = actuator_type_name(actuator.type);
    out["joint"] = model_.joints[static_cast<std::size_t>(actuator.joint)].name;
    out["dof"] = actuator.dof;
    if (actuator.type == ActuatorType::Servo) {
      out["gain"] = value(layout.actuator_gain[i], item, "gain");
      out["max_velocity"] = value(layout.actuator_max_velocity[i], item, "max_velocity");
    }
    out["max_torque"] = value(layout.actuator_max_torque[i], item, "max_torque");
    out["control"] = scene_.controls[i];
    return out;
  }

  Json equality(int e) const {
    const auto i = static_cast<std::size_t>(e);
    const Equality& equality = model_.equalities[i];
    const std::string item = "equality '" + equality.name + "'";
    Json out;
    out["name"] = equality.name;
    out["type"] = type_name(equality.type);
    out["body_a"] = body_name(equality.body_a);
    out["body_b"] = body_name(equality.body_b);
    out["local_anchor_a"] = vec3(equality.anchor_a);
    out["local_anchor_b"] = vec3(equality.anchor_b);
    if (equality.type == EqualityType::Distance) out["length"] = equality.length;
    if (equality.type == EqualityType::Weld) out["relative"] = quat(equality.relative);
    out["time_constant"] = value(model_.layout.equality_time_constant[i], item, "time_constant");
    out["damping_ratio"] = value(model_.layout.equality_damping_ratio[i], item, "damping_ratio");
    return out;
  }

  const Model& model_;
  const Params& params_;
  const State& state_;
  const Scene& scene_;
};

// nlohmann's pretty printer puts every array element on its own line; a vector or a
// quaternion reads better on one. Arrays holding only numbers (no string, array or object)
// are joined onto one line; text inside strings is copied as it is.
std::string with_number_arrays_on_one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c != '[') {
      out += c;
      continue;
    }
    const std::size_t end = text.find_first_of("[]{}\"", i + 1);
    if (end == std::string::npos || text[end] != ']') {
      out += c;
      continue;
    }
    // Numbers only between i and end: keep each element, drop the line breaks and indents.
    out += '[';
    std::string element;
    bool first = true;
    for (std::size_t k = i + 1; k <= end; ++k) {
      const char d = text[k];
      if (d == ',' || d == ']') {
        if (!element.empty()) {
          out += (first ? "" : ", ") + element;
          first = false;
        }
        element.clear();
      } else if (d != ' ' && d != '\n') {
        element += d;
      }
    }
    out += ']';
    i = end;
  }
  return out;
}

}  // namespace
}  // namespace scene_json_writing

std::string scene_json_text(const Scene& scene) {
  return scene_json_writing::with_number_arrays_on_one_line(scene_json_writing::SceneWriter(scene).write().dump(2)) +
         "\n";
}

void write_scene_json(const Scene& scene, std::ostream& out) {
  out << scene_json_text(scene);
}

void save_scene(const Scene& scene, const std::filesystem::path& path) {
  std::string text;
  try {
    text = scene_json_text(scene);  // refusals before the file is touched
  } catch (const Error& error) {
    throw Error(message(path.string(), ": cannot write the scene: ", error.what()));
  }
  std::ofstream file(path, std::ios::binary);
  if (!file) throw Error(message(path.string(), ": cannot open the file for writing"));
  file << text;
  file.close();
  if (!file) throw Error(message(path.string(), ": cannot write the scene file"));
}

}  // namespace diffphys
