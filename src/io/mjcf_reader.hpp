// io/mjcf_reader.hpp — the MJCF reader's shared state (internal to src/io): the compiler
// settings, default classes, the bodies, joints and geoms read so far, and the MjcfReader
// class whose members are defined by concern in
//   mjcf_loader.cpp    the top level: sections, their order, parse_mjcf/load_mjcf; sites,
//                      <tendon> (spatial, two sites) and <equality> (connect, tendon);
//   mjcf_settings.cpp  attribute rules, <compiler>, <option>, <default>;
//   mjcf_geoms.cpp     frames (orientations) and geoms with their mass properties (mesh
//                      geoms' through io/mesh_mass.hpp);
//   mjcf_bodies.cpp    bodies, joints, inertials, and their mapping onto ModelBuilder;
//   mjcf_composite.cpp <composite>: particles, rope and loop chains, cloth trees with their
//                      tendon equalities, the other types refused;
//   mjcf_actuators.cpp <actuator> children.
#pragma once

#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "io/mesh_mass.hpp"
#include "io/xml_source.hpp"

namespace diffphys::io::mjcf {

using tinyxml2::XMLElement;

constexpr double kPi = std::numbers::pi;

struct Compiler {
  bool degrees = true;
  std::string euler_sequence = "xyz";
  enum class InertiaFromGeom { False, True, Auto } inertia_from_geom = InertiaFromGeom::Auto;
  bool auto_limits = false;  // MuJoCo 2.2's default
  // coordinate="global": positions and orientations of bodies, geoms, joints and inertials are
  // in the world frame (MuJoCo 2.2); the reader turns them into the usual local ones.
  bool global = false;
  bool exact_mesh_inertia = false;  // said explicitly: no warning about MuJoCo 2.2's default formula
};

// <default> classes: per class, its parent and the element of each tag it sets.
class Defaults {
 public:
  struct Class {
    std::string parent;
    std::map<std::string, std::vector<const XMLElement*>> elements;  // by default_key(tag), file order
  };
  std::map<std::string, Class> classes{{"main", {}}};

  // MuJoCo keeps one actuator default per class, which <motor>, <position> and <general>
  // defaults all write into; geoms and joints have their own.
  static std::string default_key(const std::string& tag) {
    return tag == "motor" || tag == "position" || tag == "general" ? "actuator" : tag;
  }

  // The attribute as the element says or, failing that, as its class chain does.
  std::optional<std::string> attribute(const XMLElement* element, const std::string& tag, const char* name,
                                       const std::string& class_name) const {
    if (const char* own = element->Attribute(name)) return std::string(own);
    const std::string key = default_key(tag);
    for (std::string current = class_name; !current.empty();) {
      const auto found = classes.find(current);
      if (found == classes.end()) break;
      const auto tagged = found->second.elements.find(key);
      if (tagged != found->second.elements.end())
        for (auto it = tagged->second.rbegin(); it != tagged->second.rend(); ++it)
          if (const char* value = (*it)->Attribute(name)) return std::string(value);
      current = found->second.parent;
    }
    return std::nullopt;
  }
};

struct MjcfJoint {
  const XMLElement* element = nullptr;
  std::string name;
  std::string type;                                // hinge, slide, ball, free
  Vec3 anchor;                                     // world
  Vec3 axis;                                       // world, unit
  std::optional<std::pair<double, double>> range;  // rad or m, relative to the rest pose (ref)
  double damping = 0.0;
};

struct MjcfGeom {
  const XMLElement* element = nullptr;
  ShapeSpec shape;  // pose in the body frame
  bool is_plane = false;
  bool is_mesh = false;
  std::string mesh;               // mesh geoms: the <asset><mesh> name
  std::string class_name;         // its default class (mesh geoms' mass is found later)
  io::MassProperties properties;  // in the body frame
  double friction = 1.0;
  int contype = 1, conaffinity = 1;
};

struct MjcfBody {
  const XMLElement* element = nullptr;
  std::string name;
  int parent = -1;  // index into bodies (0 = world)
  Pose world;       // body frame at the reference pose
  std::vector<MjcfJoint> joints;
  std::vector<MjcfGeom> geoms;
  int weld = 0;  // MuJoCo's body_weldid: the nearest ancestor-or-self with joints (0: the world)
  bool is_static = false;
  bool is_kinematic = false;  // <body mocap="true">: a kinematic body, driven by the state
  io::PrincipalFrame principal;
  double mass = 0.0;
};

// A named <site>: where it sits (world frame at the reference pose) and on which body.
struct MjcfSite {
  const XMLElement* element = nullptr;  // the <site>, or the composite that made it
  int body = 0;
  Vec3 world;
  bool used = false;  // an end of a tendon that an equality holds
};

// A soft equality constraint on its way to the builder (world-frame points, body names).
struct MjcfEquality {
  const XMLElement* element = nullptr;
  EqualitySpec spec;  // time_constant: MuJoCo's solref[0] until add_equalities maps it
  double impedance = 0.95;  // MuJoCo's solimp[1] (dmax), default 0.95
};

// Where a MJCF joint went: the diffphys joint and coordinate an actuator drives.
struct JointTarget {
  std::string joint;
  int dof = 0;
  bool actuable = true;
  std::string why_not;
  const MjcfJoint* source = nullptr;
  int body = 0;
};

class MjcfReader {
 public:
  explicit MjcfReader(const XmlSource& source) : source_(source) {}
  Scene read();

 private:
  // Attribute checks: each element's attributes are used, no-effect (drawing), or reported.
  void check_attributes(const XMLElement* element, const std::string& tag);
  void read_defaults(const XMLElement* element, const std::string& parent_class);
  void read_compiler(const XMLElement* element);
  void read_option(const XMLElement* element, ModelBuilder& builder);
  void read_body(const XMLElement* element, int parent, const std::string& child_class);
  void read_children(const XMLElement* element, int body, const std::string& child_class);
  // placed: a pose in the body frame that replaces the element's own (a composite's geoms).
  MjcfGeom read_geom(const XMLElement* element, const std::string& class_name, const MjcfBody& body,
                     const Pose* placed = nullptr);
  // <composite> (mjcf_composite.cpp): read and checked inside its body `root`; the root's
  // geom; the chain of bodies after the root's own children.
  struct Composite {
    const XMLElement* element = nullptr;
    std::string type, prefix;
    int count = 0, origin = 0;  // elements, and which one the enclosing body is
    double spacing = 0.0;
    const XMLElement* geom = nullptr;
    const XMLElement* joint = nullptr;  // <joint kind="main">, if given
    int counts[3] = {1, 1, 1};           // particle: per axis
    Vec3 offset;                         // particle
    // cloth: counts[0] × counts[1] elements, the enclosing body element (origin, origin_y)
    int origin_y = 0;
    double flat_inertia = 0.0;           // cloth: flatinertia (0: the geom's inertia)
    bool shear = false;                  // cloth: <tendon kind="shear"> given
  };
  Composite read_composite(const XMLElement* element, const MjcfBody& root);
  void read_composite_children(Composite& composite);
  void build_particles(const Composite& composite);
  // A chain element's geom (index_y < 0) or a cloth element's (index, index_y).
  MjcfGeom composite_geom(const Composite& composite, int index, const MjcfBody& body, int index_y = -1);
  // flatinertia > 0: a cloth element's inertia is a box s × s × (flatinertia·s) of its mass.
  void apply_flat_inertia(const Composite& composite, MjcfBody& body) const;
  void build_composite_chain(const Composite& composite, int root_index);
  void build_cloth(const Composite& composite, int root_index);
  void read_cloth_tendon(const XMLElement* element, Composite& composite);
  // Sites, tendons and equalities (mjcf_loader.cpp).
  void read_site(const XMLElement* element, int body_index);
  void read_tendons(const XMLElement* section);
  void read_equalities(const XMLElement* section);
  // An equality's solref (MuJoCo: "timeconst dampratio") and solimp's dmax; add_equalities
  // maps them onto the diffphys spring (see mjcf_loader.cpp).
  void read_solref(const XMLElement* element, MjcfEquality& equality);
  void add_equalities(ModelBuilder& builder);
  MjcfJoint read_joint(const XMLElement* element, const std::string& class_name, const MjcfBody& body);
  Quat read_orientation(const XMLElement* element, const std::string& tag, const std::string& class_name) const;
  void read_inertial(const XMLElement* element, MjcfBody& body);
  void add_bodies(ModelBuilder& builder);
  void add_joints(ModelBuilder& builder);
  void add_collision_filters(ModelBuilder& builder);
  void read_assets(const XMLElement* element);
  // A mesh geom's mass properties in the body frame (from its <asset><mesh>, solid).
  void mesh_geom_mass(MjcfGeom& geom, const std::string& class_name);
  void read_actuators(const std::vector<const XMLElement*>& sections, ModelBuilder& builder);
  void note_unsupported(const XMLElement* element, const std::string& reason) {
    warnings_.add(source_, element, "unsupported element ignored: " + reason);
  }

  std::optional<std::string> attribute(const XMLElement* element, const std::string& tag, const char* name,
                                       const std::string& class_name) const {
    return defaults_.attribute(element, tag, name, class_name);
  }
  std::optional<double> number(const XMLElement* element, const std::string& tag, const char* name,
                               const std::string& class_name) const {
    const auto value = attribute(element, tag, name, class_name);
    if (!value) return std::nullopt;
    return source_.parse_number(element, name, *value);
  }
  std::optional<std::vector<double>> numbers(const XMLElement* element, const std::string& tag, const char* name,
                                             const std::string& class_name,
                                             std::initializer_list<std::size_t> counts) const {
    const auto value = attribute(element, tag, name, class_name);
    if (!value) return std::nullopt;
    return source_.parse_numbers(element, name, *value, counts);
  }
  std::optional<Vec3> vector(const XMLElement* element, const std::string& tag, const char* name,
                             const std::string& class_name) const {
    const auto values = numbers(element, tag, name, class_name, {3});
    if (!values) return std::nullopt;
    return Vec3{(*values)[0], (*values)[1], (*values)[2]};
  }
  // MuJoCo's tri-state flags (limited, ctrllimited, forcelimited): "true", "false" or "auto",
  // on when the range is given, which needs <compiler autolimits="true"> (MuJoCo 2.2 refuses
  // a range with the flag left at auto otherwise). The range when on, nullopt when off; fails
  // on another value, an on flag without its range, or a reversed range.
  std::optional<std::pair<double, double>> limited_range(const XMLElement* element, const std::string& tag,
                                                         const char* flag, const char* range_name,
                                                         const std::string& class_name) const;
  std::string class_of(const XMLElement* element, const std::string& child_class) const {
    if (const char* name = element->Attribute("class")) {
      if (!defaults_.classes.contains(name)) source_.fail(element, message("unknown default class '", name, "'"));
      return name;
    }
    return child_class;
  }
  // A pose as the file gives it, in the frame of `body`: local as is; global converted.
  Pose in_body_frame(const Pose& given, const MjcfBody& body) const {
    if (!compiler_.global) return given;
    return {body.world.orientation.inverse_rotate(given.position - body.world.position),
            (body.world.orientation.conjugate() * given.orientation).normalized()};
  }
  double angle(double value) const { return compiler_.degrees ? value * kPi / 180.0 : value; }

  const XmlSource& source_;
  Compiler compiler_;
  Defaults defaults_;
  io::Warnings warnings_;
  io::ItemLines item_lines_;
  std::vector<MjcfBody> bodies_;  // [0] is the world
  std::map<std::string, JointTarget> joint_targets_;
  std::set<std::string> body_names_;
  std::vector<std::pair<std::string, std::string>> exclusions_;  // <contact><exclude>
  std::map<std::string, MjcfSite> sites_;                         // named sites
  std::vector<const XMLElement*> unnamed_sites_;
  std::map<std::string, const XMLElement*> tendons_;  // two-site spatial tendons by name
  std::set<std::string> held_tendons_;                // those an equality holds
  std::vector<MjcfEquality> equalities_;

  struct MeshAsset {
    std::filesystem::path file;
    Vec3 scale{1, 1, 1};
  };
  std::map<std::string, MeshAsset> mesh_assets_;  // <asset><mesh> by name
  std::map<std::string, SolidMesh> mesh_solids_;  // by mesh name, read once
  std::filesystem::path mesh_directory_;          // <compiler meshdir>, relative to the file
};

}  // namespace diffphys::io::mjcf
