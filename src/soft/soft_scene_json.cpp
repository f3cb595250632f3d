// soft/soft_scene_json.cpp — reading soft scene files (nlohmann::json) into a SoftSpec.
// Every key is checked (unknown keys and duplicates are errors), every error names the
// source and the JSON path; the physical checks stay in build_soft() (build_soft_scene()
// prefixes its messages with the source).
#include "diffphys/soft_scene.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "diffphys/error.hpp"
#include "diffphys/soft_mesh.hpp"
#include "model/json_reader.hpp"

namespace diffphys::soft {
namespace {

using json::Json;

class Reader : json::Reader {
 public:
  Reader(std::string source, std::string base) : json::Reader(std::move(source)), base_(std::move(base)) {}

  using json::Reader::check_keys;
  using json::Reader::fail;

  double number(const Json& value, const std::string& path) const { return read_number(value, path); }
  int integer(const Json& value, const std::string& path) const { return read_int(value, path); }
  std::string text(const Json& value, const std::string& path) const { return read_string(value, path); }
  Vector3 vector3(const Json& value, const std::string& path) const {
    const Vec3 v = read_vec3(value, path);
    return {v.x, v.y, v.z};
  }
  template <std::size_t N>
  std::array<int, N> indices(const Json& value, const std::string& path) const {
    if (!value.is_array() || value.size() != N) fail(path, message("expected ", N, " integers, got ", json::describe(value)));
    std::array<int, N> result{};
    for (std::size_t i = 0; i < N; ++i) result[i] = integer(value[i], json::element_path(path, i));
    return result;
  }
  const Json& array(const Json& object, const char* key, const std::string& path) const {
    return optional_array(object, key, path);
  }
  template <class T>
  void optional_number(const Json& object, const char* key, const std::string& path, T& target) const {
    if (object.contains(key)) target = static_cast<T>(number(object.at(key), json::key_path(path, key)));
  }
  // As in rigid scenes (docs/scene-format.md#conventions): (w, x, y, z).
  std::array<double, 4> rotation(const Json& object, const std::string& path) const {
    const Quat q = read_rotation(object, path);
    return {q.w, q.x, q.y, q.z};
  }
  int material_index(const std::vector<std::string>& names, const Json& value, const std::string& path,
                     const char* kind) const {
    const std::string name = text(value, path);
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    std::string list;
    for (const std::string& known : names) list += (list.empty() ? "" : ", ") + known;
    fail(path, message("unknown ", kind, " material '", name, "' (defined: ", list.empty() ? "none" : list, ")"));
  }

  SoftSpec read(const Json& root) const {
    if (!root.is_object() || !root.contains("soft")) fail("(top level)", "a soft scene is an object with a \"soft\" key");
    check_keys(root, "(top level)", {"soft", "cameras"});  // cameras: load_world (camera/camera_json.cpp)
    const Json& soft = root.at("soft");
    const std::string path = "soft";
    check_keys(soft, path, {"name", "dt", "gravity", "newton", "contact", "tet_materials", "cloth_materials", "nodes",
                            "node_masses", "velocities", "springs", "tets", "triangles", "tet_boxes", "cloth_rectangles",
                            "tet_meshes", "pinned", "pin_regions", "attachments", "obstacles", "initial_velocity",
                            "frames", "frame_attachments", "max_speed"});
    SoftSpec spec;
    if (soft.contains("name")) spec.name = text(soft.at("name"), path + ".name");
    optional_number(soft, "dt", path, spec.dt);
    optional_number(soft, "max_speed", path, spec.max_speed);
    if (soft.contains("gravity")) spec.gravity = vector3(soft.at("gravity"), path + ".gravity");
    if (soft.contains("newton")) {
      const Json& newton = soft.at("newton");
      check_keys(newton, path + ".newton", {"max_iterations", "tolerance", "armijo"});
      if (newton.contains("max_iterations")) spec.newton.max_iterations = integer(newton.at("max_iterations"), path + ".newton.max_iterations");
      optional_number(newton, "tolerance", path + ".newton", spec.newton.tolerance);
      optional_number(newton, "armijo", path + ".newton", spec.newton.armijo);
    }
    if (soft.contains("contact")) {
      const Json& contact = soft.at("contact");
      check_keys(contact, path + ".contact", {"barrier_distance", "stiffness", "friction_velocity"});
      optional_number(contact, "barrier_distance", path + ".contact", spec.contact.barrier_distance);
      optional_number(contact, "stiffness", path + ".contact", spec.contact.stiffness);
      optional_number(contact, "friction_velocity", path + ".contact", spec.contact.friction_velocity);
    }
    std::vector<std::string> tet_names, cloth_names;
    const Json& tet_materials = array(soft, "tet_materials", path);
    for (std::size_t i = 0; i < tet_materials.size(); ++i) {
      const std::string p = path + ".tet_materials[" + std::to_string(i) + "]";
      const Json& m = tet_materials[i];
      check_keys(m, p, {"name", "model", "youngs_modulus", "poisson_ratio", "density", "damping"});
      TetMaterialSpec material;
      if (!m.contains("name")) fail(p, "\"name\" is required");
      material.name = text(m.at("name"), p + ".name");
      if (m.contains("model")) {
        const std::string model = text(m.at("model"), p + ".model");
        if (model == "neo_hookean") material.model = ElasticModel::NeoHookean;
        else if (model == "corotated") material.model = ElasticModel::Corotated;
        else fail(p + ".model", message("unknown elastic model '", model, "' (neo_hookean or corotated)"));
      }
      optional_number(m, "youngs_modulus", p, material.youngs_modulus);
      optional_number(m, "poisson_ratio", p, material.poisson_ratio);
      optional_number(m, "density", p, material.density);
      optional_number(m, "damping", p, material.damping);
      spec.tet_materials.push_back(material);
      tet_names.push_back(material.name);
    }
    const Json& cloth_materials = array(soft, "cloth_materials", path);
    for (std::size_t i = 0; i < cloth_materials.size(); ++i) {
      const std::string p = path + ".cloth_materials[" + std::to_string(i) + "]";
      const Json& m = cloth_materials[i];
      check_keys(m, p, {"name", "stretch_modulus", "poisson_ratio", "bending_stiffness", "areal_density"});
      ClothMaterialSpec material;
      if (!m.contains("name")) fail(p, "\"name\" is required");
      material.name = text(m.at("name"), p + ".name");
      optional_number(m, "stretch_modulus", p, material.stretch_modulus);
      optional_number(m, "poisson_ratio", p, material.poisson_ratio);
      optional_number(m, "bending_stiffness", p, material.bending_stiffness);
      optional_number(m, "areal_density", p, material.areal_density);
      spec.cloth_materials.push_back(material);
      cloth_names.push_back(material.name);
    }
    // Nodes: explicit ones first, then the generators in the order tet_boxes, cloth_rectangles,
    // tet_meshes (each appends its nodes).
    const Json& nodes = array(soft, "nodes", path);
    for (std::size_t i = 0; i < nodes.size(); ++i) spec.nodes.push_back(vector3(nodes[i], path + ".nodes[" + std::to_string(i) + "]"));
    const Json& masses = array(soft, "node_masses", path);
    for (std::size_t i = 0; i < masses.size(); ++i) spec.node_masses.push_back(number(masses[i], path + ".node_masses[" + std::to_string(i) + "]"));
    if (!masses.empty() && masses.size() != nodes.size())
      fail(path + ".node_masses", message("expected one mass per explicit node (", nodes.size(), "), got ", masses.size()));
    const Json& springs = array(soft, "springs", path);
    for (std::size_t i = 0; i < springs.size(); ++i) {
      const std::string p = path + ".springs[" + std::to_string(i) + "]";
      check_keys(springs[i], p, {"nodes", "stiffness", "rest_length", "damping"});
      if (!springs[i].contains("nodes")) fail(p, "\"nodes\" is required");
      SpringSpec spring;
      const auto pair = indices<2>(springs[i].at("nodes"), p + ".nodes");
      spring.a = pair[0];
      spring.b = pair[1];
      optional_number(springs[i], "stiffness", p, spring.stiffness);
      optional_number(springs[i], "rest_length", p, spring.rest_length);
      optional_number(springs[i], "damping", p, spring.damping);
      spec.springs.push_back(spring);
    }
    const Json& tets = array(soft, "tets", path);
    for (std::size_t i = 0; i < tets.size(); ++i) {
      const std::string p = path + ".tets[" + std::to_string(i) + "]";
      check_keys(tets[i], p, {"nodes", "material"});
      if (!tets[i].contains("nodes") || !tets[i].contains("material")) fail(p, "\"nodes\" and \"material\" are required");
      spec.tets.push_back({indices<4>(tets[i].at("nodes"), p + ".nodes"), material_index(tet_names, tets[i].at("material"), p + ".material", "tet")});
    }
    const Json& triangles = array(soft, "triangles", path);
    for (std::size_t i = 0; i < triangles.size(); ++i) {
      const std::string p = path + ".triangles[" + std::to_string(i) + "]";
      check_keys(triangles[i], p, {"nodes", "material"});
      if (!triangles[i].contains("nodes") || !triangles[i].contains("material")) fail(p, "\"nodes\" and \"material\" are required");
      spec.triangles.push_back({indices<3>(triangles[i].at("nodes"), p + ".nodes"),
                                material_index(cloth_names, triangles[i].at("material"), p + ".material", "cloth")});
    }
    std::vector<Vector3> velocities(spec.nodes.size(), Vector3{0, 0, 0});
    const Json& explicit_velocities = array(soft, "velocities", path);
    if (!explicit_velocities.empty() && explicit_velocities.size() != nodes.size())
      fail(path + ".velocities", message("expected one velocity per explicit node (", nodes.size(), "), got ", explicit_velocities.size()));
    for (std::size_t i = 0; i < explicit_velocities.size(); ++i) velocities[i] = vector3(explicit_velocities[i], path + ".velocities[" + std::to_string(i) + "]");
    const auto generated = [&](std::size_t first, const Json& item, const std::string& p) {
      const Vector3 velocity = item.contains("velocity") ? vector3(item.at("velocity"), p + ".velocity") : Vector3{0, 0, 0};
      velocities.resize(spec.nodes.size(), velocity);
      for (std::size_t i = first; i < spec.nodes.size(); ++i) velocities[i] = velocity;
    };
    const Json& boxes = array(soft, "tet_boxes", path);
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      const std::string p = path + ".tet_boxes[" + std::to_string(i) + "]";
      check_keys(boxes[i], p, {"material", "origin", "size", "cells", "velocity"});
      if (!boxes[i].contains("material") || !boxes[i].contains("size") || !boxes[i].contains("cells"))
        fail(p, "\"material\", \"size\" and \"cells\" are required");
      const Vector3 origin = boxes[i].contains("origin") ? vector3(boxes[i].at("origin"), p + ".origin") : Vector3{0, 0, 0};
      const Vector3 size = vector3(boxes[i].at("size"), p + ".size");
      const auto cells = indices<3>(boxes[i].at("cells"), p + ".cells");
      const int material = material_index(tet_names, boxes[i].at("material"), p + ".material", "tet");
      const std::size_t first = spec.nodes.size();
      try {
        add_tet_box(spec, origin, size, cells, material);
      } catch (const Error& error) {
        fail(p, error.what());  // the generator's message lacks the file and the item
      }
      generated(first, boxes[i], p);
    }
    const Json& rectangles = array(soft, "cloth_rectangles", path);
    for (std::size_t i = 0; i < rectangles.size(); ++i) {
      const std::string p = path + ".cloth_rectangles[" + std::to_string(i) + "]";
      check_keys(rectangles[i], p, {"material", "origin", "edge_u", "edge_v", "cells", "velocity"});
      for (const char* key : {"material", "edge_u", "edge_v", "cells"})
        if (!rectangles[i].contains(key)) fail(p, message("\"", key, "\" is required"));
      const Vector3 origin = rectangles[i].contains("origin") ? vector3(rectangles[i].at("origin"), p + ".origin") : Vector3{0, 0, 0};
      const Vector3 edge_u = vector3(rectangles[i].at("edge_u"), p + ".edge_u");
      const Vector3 edge_v = vector3(rectangles[i].at("edge_v"), p + ".edge_v");
      const auto cells = indices<2>(rectangles[i].at("cells"), p + ".cells");
      const int material = material_index(cloth_names, rectangles[i].at("material"), p + ".material", "cloth");
      const std::size_t first = spec.nodes.size();
      try {
        add_cloth_rectangle(spec, origin, edge_u, edge_v, cells[0], cells[1], material);
      } catch (const Error& error) {
        fail(p, error.what());
      }
      generated(first, rectangles[i], p);
    }
    const Json& meshes = array(soft, "tet_meshes", path);
    for (std::size_t i = 0; i < meshes.size(); ++i) {
      const std::string p = path + ".tet_meshes[" + std::to_string(i) + "]";
      check_keys(meshes[i], p, {"file", "material", "offset", "velocity"});
      if (!meshes[i].contains("file") || !meshes[i].contains("material")) fail(p, "\"file\" and \"material\" are required");
      std::filesystem::path file = text(meshes[i].at("file"), p + ".file");
      if (file.is_relative()) file = std::filesystem::path(base_) / file;
      TetMesh mesh;
      try {
        mesh = load_tet_mesh(file.string());
      } catch (const Error& error) {
        fail(p + ".file", error.what());  // the mesh's message names its own file and line, not the scene's item
      }
      const int material = material_index(tet_names, meshes[i].at("material"), p + ".material", "tet");
      const Vector3 offset = meshes[i].contains("offset") ? vector3(meshes[i].at("offset"), p + ".offset") : Vector3{0, 0, 0};
      const std::size_t first = spec.nodes.size();
      try {
        add_tet_mesh(spec, mesh, material, offset);
      } catch (const Error& error) {
        fail(p, message(file.string(), ": ", error.what()));
      }
      generated(first, meshes[i], p);
    }
    if (!spec.node_masses.empty()) spec.node_masses.resize(spec.nodes.size(), 0.0);
    spec.initial_velocities = velocities;
    const Json& pinned = array(soft, "pinned", path);
    for (std::size_t i = 0; i < pinned.size(); ++i) spec.pinned.push_back(integer(pinned[i], path + ".pinned[" + std::to_string(i) + "]"));
    const Json& regions = array(soft, "pin_regions", path);
    for (std::size_t i = 0; i < regions.size(); ++i) {
      const std::string p = path + ".pin_regions[" + std::to_string(i) + "]";
      check_keys(regions[i], p, {"min", "max"});
      if (!regions[i].contains("min") || !regions[i].contains("max")) fail(p, "\"min\" and \"max\" are required");
      const Vector3 low = vector3(regions[i].at("min"), p + ".min"), high = vector3(regions[i].at("max"), p + ".max");
      int matched = 0;
      for (std::size_t n = 0; n < spec.nodes.size(); ++n) {
        bool inside = true;
        for (std::size_t r = 0; r < 3; ++r) inside = inside && spec.nodes[n][r] >= low[r] && spec.nodes[n][r] <= high[r];
        if (inside) {
          spec.pinned.push_back(static_cast<int>(n));
          ++matched;
        }
      }
      if (matched == 0) fail(p, "no node lies inside this region");
    }
    const Json& attachments = array(soft, "attachments", path);
    for (std::size_t i = 0; i < attachments.size(); ++i) {
      const std::string p = path + ".attachments[" + std::to_string(i) + "]";
      check_keys(attachments[i], p, {"node", "target", "stiffness"});
      if (!attachments[i].contains("node") || !attachments[i].contains("target")) fail(p, "\"node\" and \"target\" are required");
      AttachmentSpec attachment;
      attachment.node = integer(attachments[i].at("node"), p + ".node");
      attachment.target = vector3(attachments[i].at("target"), p + ".target");
      optional_number(attachments[i], "stiffness", p, attachment.stiffness);
      spec.attachments.push_back(attachment);
    }
    const Json& obstacles = array(soft, "obstacles", path);
    for (std::size_t i = 0; i < obstacles.size(); ++i) {
      const std::string p = path + ".obstacles[" + std::to_string(i) + "]";
      const Json& o = obstacles[i];
      if (!o.is_object() || !o.contains("type") || !o.contains("name"))
        fail(p, "\"name\" and \"type\" (plane, sphere, box or capsule) are required");
      ObstacleSpec obstacle;
      obstacle.name = text(o.at("name"), p + ".name");
      const std::string type = text(o.at("type"), p + ".type");
      if (type == "plane") {
        check_keys(o, p, {"name", "type", "point", "normal", "friction", "frame"});
        obstacle.type = ObstacleType::Plane;
        if (o.contains("point")) obstacle.point = vector3(o.at("point"), p + ".point");
        if (o.contains("normal")) obstacle.normal = vector3(o.at("normal"), p + ".normal");
      } else if (type == "sphere") {
        check_keys(o, p, {"name", "type", "center", "radius", "friction", "frame"});
        obstacle.type = ObstacleType::Sphere;
        if (!o.contains("radius")) fail(p, "\"radius\" is required for a sphere");
        if (o.contains("center")) obstacle.point = vector3(o.at("center"), p + ".center");
        obstacle.radius = number(o.at("radius"), p + ".radius");
      } else if (type == "box") {
        check_keys(o, p, {"name", "type", "center", "half_extents", "rounding", "orientation", "euler", "friction", "frame"});
        obstacle.type = ObstacleType::Box;
        if (!o.contains("half_extents")) fail(p, "\"half_extents\" is required for a box");
        if (o.contains("center")) obstacle.point = vector3(o.at("center"), p + ".center");
        obstacle.half_extents = vector3(o.at("half_extents"), p + ".half_extents");
        optional_number(o, "rounding", p, obstacle.rounding);
        obstacle.orientation = rotation(o, p);
      } else if (type == "capsule") {
        check_keys(o, p, {"name", "type", "center", "radius", "half_length", "orientation", "euler", "friction", "frame"});
        obstacle.type = ObstacleType::Capsule;
        if (!o.contains("radius") || !o.contains("half_length")) fail(p, "\"radius\" and \"half_length\" are required for a capsule");
        if (o.contains("center")) obstacle.point = vector3(o.at("center"), p + ".center");
        obstacle.radius = number(o.at("radius"), p + ".radius");
        obstacle.half_length = number(o.at("half_length"), p + ".half_length");
        obstacle.orientation = rotation(o, p);
      } else {
        fail(p + ".type", message("unknown obstacle type '", type, "' (plane, sphere, box or capsule)"));
      }
      if (o.contains("frame")) obstacle.frame = text(o.at("frame"), p + ".frame");
      optional_number(o, "friction", p, obstacle.friction);
      spec.obstacles.push_back(obstacle);
    }
    const Json& frames = array(soft, "frames", path);
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::string p = path + ".frames[" + std::to_string(i) + "]";
      check_keys(frames[i], p, {"name", "position", "orientation", "euler"});
      if (!frames[i].contains("name")) fail(p, "\"name\" is required");
      FrameSpec frame;
      frame.name = text(frames[i].at("name"), p + ".name");
      if (frames[i].contains("position")) frame.position = vector3(frames[i].at("position"), p + ".position");
      frame.orientation = rotation(frames[i], p);
      spec.frames.push_back(frame);
    }
    const Json& frame_attachments = array(soft, "frame_attachments", path);
    for (std::size_t i = 0; i < frame_attachments.size(); ++i) {
      const std::string p = path + ".frame_attachments[" + std::to_string(i) + "]";
      const Json& a = frame_attachments[i];
      check_keys(a, p, {"node", "frame", "point", "stiffness"});
      if (!a.contains("node") || !a.contains("frame") || !a.contains("point")) fail(p, "\"node\", \"frame\" and \"point\" are required");
      FrameAttachmentSpec attachment;
      attachment.node = integer(a.at("node"), p + ".node");
      attachment.frame = text(a.at("frame"), p + ".frame");
      attachment.point = vector3(a.at("point"), p + ".point");
      optional_number(a, "stiffness", p, attachment.stiffness);
      spec.frame_attachments.push_back(attachment);
    }
    return spec;
  }

 private:
  std::string base_;
};

}  // namespace

SoftSpec parse_soft_scene(std::string_view text, const std::string& source, const std::string& base_directory) {
  return Reader(source, base_directory).read(json::parse(text, source));
}

SoftSpec load_soft_scene(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw Error(path + ": cannot open the soft scene file");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_soft_scene(text.str(), path, std::filesystem::path(path).parent_path().string());
}

SoftBuild build_soft_scene(const SoftSpec& spec, const std::string& source) {
  try {
    return build_soft(spec);
  } catch (const Error& error) {
    throw Error(message(source, ": ", error.what()));
  }
}

bool is_soft_scene_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) return false;
  std::ostringstream text;
  text << file.rdbuf();
  const Json root = Json::parse(text.str(), nullptr, false);
  return !root.is_discarded() && root.is_object() && root.contains("soft");
}

}  // namespace diffphys::soft
