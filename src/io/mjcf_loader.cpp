// io/mjcf_loader.cpp — a subset of MuJoCo's MJCF (diffphys/robot_loaders.hpp,
// docs/robot-formats.md).
//
// Owns the mapping from an MJCF model onto ModelBuilder specs, following MuJoCo 2.2's
// compiler where the two engines overlap, so that masses, centres of mass and principal
// inertias equal MuJoCo's (tests/mjcf_loader_test.cpp compares them with libmujoco):
// - frames: body and geom poses relative to the parent; quat, euler (compiler eulerseq;
//   lowercase axes rotate with the frame, uppercase are fixed), axisangle, xyaxes, zaxis,
//   fromto; angles in degrees unless <compiler angle="radian">;
// - mass: <inertial> or, by default, the geoms (mass attribute, else density × volume,
//   density 1000), with MuJoCo's solid formulas for spheres, capsules, cylinders and boxes;
//   a body's frame in diffphys is its principal frame;
// - defaults and classes (class, childclass, nested defaults);
// - joints: one hinge/slide/ball per body maps one to one; two perpendicular hinges become a
//   universal joint, three mutually perpendicular hinges through one point a ball joint; a
//   free joint leaves the body free; a body without joints is welded to its parent;
// - collisions: contype → collision_group and conaffinity → collision_mask, MuJoCo's weld
//   and parent filters and <contact><exclude> as Model::collision_exclusions;
// - actuators: <motor> → Motor (control = gear × ctrl), <position> → Servo (gain from kp).
// Everything else is refused (structure diffphys cannot represent) or reported in
// Scene::warnings with its line (tendons, sites, sensors, muscles, solver tuning, ...).
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "diffphys/robot_loaders.hpp"
#include "io/xml_source.hpp"

namespace diffphys {
namespace {

using io::Pose;
using io::XmlSource;
using tinyxml2::XMLElement;

constexpr double kPi = std::numbers::pi;

struct Compiler {
  bool degrees = true;
  std::string euler_sequence = "xyz";
  enum class InertiaFromGeom { False, True, Auto } inertia_from_geom = InertiaFromGeom::Auto;
  bool auto_limits = false;  // MuJoCo 2.2's default
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
  io::PrincipalFrame principal;
  double mass = 0.0;
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
  MjcfGeom read_geom(const XMLElement* element, const std::string& class_name, const MjcfBody& body);
  MjcfJoint read_joint(const XMLElement* element, const std::string& class_name, const MjcfBody& body);
  Quat read_orientation(const XMLElement* element, const std::string& tag, const std::string& class_name) const;
  void read_inertial(const XMLElement* element, MjcfBody& body);
  void add_bodies(ModelBuilder& builder);
  void add_joints(ModelBuilder& builder);
  void add_collision_filters(ModelBuilder& builder);
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
  std::string class_of(const XMLElement* element, const std::string& child_class) const {
    if (const char* name = element->Attribute("class")) {
      if (!defaults_.classes.contains(name)) source_.fail(element, message("unknown default class '", name, "'"));
      return name;
    }
    return child_class;
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
  struct MeshAsset {
    std::filesystem::path file;
    Vec3 scale{1, 1, 1};
  };
  std::map<std::string, MeshAsset> mesh_assets_;  // <asset><mesh> by name
  std::filesystem::path mesh_directory_;          // <compiler meshdir>, relative to the file
};

// ---------------------------------------------------------------------------------------
// Attributes: what each element may say.

struct AttributeRules {
  std::set<std::string> used;
  std::set<std::string> drawing;               // no effect on the physics
  std::map<std::string, std::string> ignored;  // attribute → why it is reported
};

const std::map<std::string, AttributeRules>& attribute_rules() {
  static const std::string solver_tuning = "MuJoCo solver/contact tuning with no diffphys equivalent";
  static const std::map<std::string, AttributeRules> rules = {
      {"geom",
       {{"name", "class", "type", "size", "pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "fromto", "mass",
         "density", "contype", "conaffinity", "friction", "mesh"},
        {"rgba", "material", "group", "user", "hfield"},
        {{"condim", solver_tuning},
         {"solref", solver_tuning},
         {"solimp", solver_tuning},
         {"margin", solver_tuning},
         {"gap", solver_tuning},
         {"priority", solver_tuning},
         {"solmix", solver_tuning},
         {"fluidshape", "diffphys has no fluid forces"},
         {"fluidcoef", "diffphys has no fluid forces"}}}},
      {"joint",
       {{"name", "class", "type", "pos", "axis", "range", "limited", "damping", "ref"},
        {"group", "user"},
        {{"stiffness", "diffphys joints have no springs"},
         {"springref", "diffphys joints have no springs"},
         {"armature", "diffphys has no rotor inertia (armature)"},
         {"frictionloss", "diffphys joints have no dry friction"},
         {"solreflimit", solver_tuning},
         {"solimplimit", solver_tuning},
         {"solreffriction", solver_tuning},
         {"solimpfriction", solver_tuning},
         {"margin", solver_tuning},
         {"springdamper", "diffphys joints have no springs"}}}},
      {"freejoint", {{"name"}, {"group"}, {}}},
      {"body",
       {{"name", "childclass", "pos", "quat", "euler", "axisangle", "xyaxes", "zaxis"},
        {"user"},
        {{"gravcomp", "diffphys has no gravity compensation"}}}},
      {"inertial",
       {{"pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "mass", "diaginertia", "fullinertia"}, {}, {}}},
      {"motor",
       {{"name", "class", "joint", "gear", "ctrllimited", "ctrlrange", "forcelimited", "forcerange"},
        {"group", "user"},
        {{"cranklength", "no slider-crank transmission"}, {"lengthrange", "no tendon actuation"}}}},
      {"position",
       {{"name", "class", "joint", "gear", "ctrllimited", "ctrlrange", "forcelimited", "forcerange", "kp"},
        {"group", "user"},
        {{"cranklength", "no slider-crank transmission"}, {"lengthrange", "no tendon actuation"}}}},
  };
  return rules;
}

void MjcfReader::check_attributes(const XMLElement* element, const std::string& tag) {
  const auto& all = attribute_rules();
  const auto rules = all.find(tag);
  if (rules == all.end()) return;
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (rules->second.used.contains(name) || rules->second.drawing.contains(name)) continue;
    // A value of 0 for a spring, armature or friction changes nothing: not worth a warning.
    const std::string value = a->Value();
    if (value == "0" || value == "0.0" || value == "0." || value == ".0") continue;
    const auto why = rules->second.ignored.find(name);
    warnings_.ignored(element, "<" + tag + "> attribute " + name,
                      why != rules->second.ignored.end() ? why->second : "not part of diffphys's MJCF subset");
  }
}

// ---------------------------------------------------------------------------------------
// <compiler>, <option>, <default>

void MjcfReader::read_compiler(const XMLElement* element) {
  if (const auto value = source_.text(element, "angle")) {
    if (*value != "degree" && *value != "radian")
      source_.fail(element, "angle must be degree or radian, got '" + *value + "'");
    compiler_.degrees = *value == "degree";
  }
  if (const auto value = source_.text(element, "eulerseq")) {
    const std::string& seq = *value;
    const auto valid = [](char c) { return std::string_view("xyzXYZ").find(c) != std::string_view::npos; };
    if (seq.size() != 3 || !std::all_of(seq.begin(), seq.end(), valid))
      source_.fail(element, "eulerseq must be three of x, y, z, X, Y, Z, got '" + seq + "'");
    compiler_.euler_sequence = seq;
  }
  if (const auto value = source_.text(element, "inertiafromgeom")) {
    if (*value == "true")
      compiler_.inertia_from_geom = Compiler::InertiaFromGeom::True;
    else if (*value == "false")
      compiler_.inertia_from_geom = Compiler::InertiaFromGeom::False;
    else if (*value == "auto")
      compiler_.inertia_from_geom = Compiler::InertiaFromGeom::Auto;
    else
      source_.fail(element, "inertiafromgeom must be true, false or auto, got '" + *value + "'");
  }
  if (const auto value = source_.text(element, "autolimits"))
    compiler_.auto_limits = source_.parse_bool(element, "autolimits", *value);
  if (const auto value = source_.text(element, "meshdir")) mesh_directory_ = *value;
  if (const auto value = source_.text(element, "coordinate"); value && *value != "local")
    source_.fail(element,
                 "coordinate='" + *value + "' is not supported (only local coordinates, MuJoCo 2.2's default)");
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (name == "angle" || name == "eulerseq" || name == "inertiafromgeom" || name == "autolimits" ||
        name == "coordinate" || name == "meshdir" || name == "texturedir" || name == "assetdir" ||
        name == "discardvisual" || name == "strippath" || name == "convexhull")
      continue;
    warnings_.ignored(element, "<compiler> attribute " + name,
                      "not applied by diffphys: masses and inertias may differ from MuJoCo's");
  }
}

void MjcfReader::read_option(const XMLElement* element, ModelBuilder& builder) {
  if (const auto dt = source_.number(element, "timestep")) {
    if (!(*dt > 0)) source_.fail(element, message("timestep must be positive, got ", *dt));
    builder.dt = *dt;
  }
  if (const auto gravity = source_.vec3(element, "gravity")) builder.gravity = *gravity;
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (name == "timestep" || name == "gravity") continue;
    warnings_.ignored(element, "<option> attribute " + name, "MuJoCo solver setting with no diffphys equivalent");
  }
  for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement())
    note_unsupported(child, "MuJoCo solver flags have no diffphys equivalent");
}

void MjcfReader::read_defaults(const XMLElement* element, const std::string& parent_class) {
  std::string name = "main";
  if (const char* given = element->Attribute("class"))
    name = given;
  else if (!parent_class.empty())
    source_.fail(element, "a nested <default> needs a class name");
  if (!parent_class.empty() && defaults_.classes.contains(name))
    source_.fail(element, "duplicate default class '" + name + "'");
  Defaults::Class& entry = defaults_.classes[name];
  entry.parent = parent_class;
  for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
    const std::string tag = child->Name();
    if (tag == "default") {
      read_defaults(child, name);
    } else if (tag == "geom" || tag == "joint" || tag == "motor" || tag == "position") {
      check_attributes(child, tag);
      entry.elements[Defaults::default_key(tag)].push_back(child);
    } else if (tag == "site" || tag == "camera" || tag == "light" || tag == "mesh" || tag == "material" ||
               tag == "tendon" || tag == "general" || tag == "muscle" || tag == "velocity" || tag == "intvelocity" ||
               tag == "damper" || tag == "cylinder" || tag == "adhesion" || tag == "equality" || tag == "pair") {
      warnings_.ignored(child, "<default> of <" + tag + ">", "diffphys does not use this element");
    } else {
      source_.fail(child, "unknown element inside <default>");
    }
  }
}

// ---------------------------------------------------------------------------------------
// Frames

Quat MjcfReader::read_orientation(const XMLElement* element, const std::string& tag,
                                  const std::string& class_name) const {
  // An element's own orientation wins over its class's; at most one form may be given.
  const char* forms[] = {"quat", "euler", "axisangle", "xyaxes", "zaxis"};
  const char* chosen = nullptr;
  for (const char* form : forms) {
    if (element->Attribute(form)) {
      if (chosen) source_.fail(element, message("give one orientation, not both ", chosen, " and ", form));
      chosen = form;
    }
  }
  if (!chosen)
    for (const char* form : forms)
      if (attribute(element, tag, form, class_name)) {
        chosen = form;
        break;
      }
  if (!chosen) return Quat::identity();
  const std::string value = *attribute(element, tag, chosen, class_name);
  const std::string form = chosen;
  if (form == "quat") {
    const auto q = source_.parse_numbers(element, chosen, value, {4});
    const Quat quat{q[0], q[1], q[2], q[3]};
    if (!(quat.squared_norm() > 1e-20)) source_.fail(element, "quat must be non-zero");
    return quat.normalized();
  }
  if (form == "euler") {
    const auto e = source_.parse_numbers(element, chosen, value, {3});
    Quat q;
    for (int k = 0; k < 3; ++k) {
      const char axis_name = compiler_.euler_sequence[static_cast<std::size_t>(k)];
      const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(axis_name)));
      const Vec3 axis = lower == 'x' ? Vec3{1, 0, 0} : lower == 'y' ? Vec3{0, 1, 0} : Vec3{0, 0, 1};
      const Quat r = Quat::from_axis_angle(axis, angle(e[static_cast<std::size_t>(k)]));
      // Lowercase: about the moving (rotated) axes; uppercase: about the fixed axes.
      q = axis_name == lower ? q * r : r * q;
    }
    return q.normalized();
  }
  if (form == "axisangle") {
    const auto a = source_.parse_numbers(element, chosen, value, {4});
    const Vec3 axis{a[0], a[1], a[2]};
    if (!(norm(axis) > 1e-12)) source_.fail(element, "axisangle needs a non-zero axis");
    return Quat::from_axis_angle(normalized(axis), angle(a[3])).normalized();
  }
  if (form == "zaxis") {
    const auto z = source_.parse_numbers(element, chosen, value, {3});
    const Vec3 axis{z[0], z[1], z[2]};
    if (!(norm(axis) > 1e-12)) source_.fail(element, "zaxis must be non-zero");
    return io::quat_from_z_axis(normalized(axis));
  }
  const auto v = source_.parse_numbers(element, chosen, value, {6});
  Vec3 x{v[0], v[1], v[2]}, y{v[3], v[4], v[5]};
  if (!(norm(x) > 1e-12)) source_.fail(element, "xyaxes: the x axis must be non-zero");
  x = normalized(x);
  y = y - x * dot(x, y);
  if (!(norm(y) > 1e-12)) source_.fail(element, "xyaxes: the y axis must not be parallel to x");
  y = normalized(y);
  const Vec3 z = cross(x, y);
  Mat3 rotation;
  for (int i = 0; i < 3; ++i) {
    rotation(i, 0) = x[i];
    rotation(i, 1) = y[i];
    rotation(i, 2) = z[i];
  }
  // Quaternion of the orthonormal frame (x, y, z) by Shepperd's method.
  const double trace = rotation(0, 0) + rotation(1, 1) + rotation(2, 2);
  Quat q;
  if (trace > 0) {
    const double s = std::sqrt(trace + 1.0) * 2;
    q = {0.25 * s, (rotation(2, 1) - rotation(1, 2)) / s, (rotation(0, 2) - rotation(2, 0)) / s,
         (rotation(1, 0) - rotation(0, 1)) / s};
  } else if (rotation(0, 0) > rotation(1, 1) && rotation(0, 0) > rotation(2, 2)) {
    const double s = std::sqrt(1.0 + rotation(0, 0) - rotation(1, 1) - rotation(2, 2)) * 2;
    q = {(rotation(2, 1) - rotation(1, 2)) / s, 0.25 * s, (rotation(0, 1) + rotation(1, 0)) / s,
         (rotation(0, 2) + rotation(2, 0)) / s};
  } else if (rotation(1, 1) > rotation(2, 2)) {
    const double s = std::sqrt(1.0 + rotation(1, 1) - rotation(0, 0) - rotation(2, 2)) * 2;
    q = {(rotation(0, 2) - rotation(2, 0)) / s, (rotation(0, 1) + rotation(1, 0)) / s, 0.25 * s,
         (rotation(1, 2) + rotation(2, 1)) / s};
  } else {
    const double s = std::sqrt(1.0 + rotation(2, 2) - rotation(0, 0) - rotation(1, 1)) * 2;
    q = {(rotation(1, 0) - rotation(0, 1)) / s, (rotation(0, 2) + rotation(2, 0)) / s,
         (rotation(1, 2) + rotation(2, 1)) / s, 0.25 * s};
  }
  return q.normalized();
}

// ---------------------------------------------------------------------------------------
// Bodies, geoms, joints

MjcfGeom MjcfReader::read_geom(const XMLElement* element, const std::string& class_name, const MjcfBody& body) {
  check_attributes(element, "geom");
  MjcfGeom geom;
  geom.element = element;
  const std::string type = attribute(element, "geom", "type", class_name).value_or("sphere");
  std::vector<double> size = numbers(element, "geom", "size", class_name, {1, 2, 3}).value_or(std::vector<double>{});
  size.resize(3, 0.0);
  const auto fromto = numbers(element, "geom", "fromto", class_name, {6});
  ShapeSpec& shape = geom.shape;
  if (const char* name = element->Attribute("name")) shape.name = name;
  Vec3 position = vector(element, "geom", "pos", class_name).value_or(Vec3{});
  Quat orientation = read_orientation(element, "geom", class_name);
  double half_length = size[1];
  if (fromto) {
    if (type != "capsule" && type != "cylinder" && type != "box")
      source_.fail(element, "fromto applies to capsules, cylinders and boxes only, not to a " + type);
    const Vec3 from{(*fromto)[0], (*fromto)[1], (*fromto)[2]}, to{(*fromto)[3], (*fromto)[4], (*fromto)[5]};
    const Vec3 segment = to - from;
    if (!(norm(segment) > 1e-12)) source_.fail(element, "fromto: the two points coincide");
    position = (from + to) * 0.5;
    orientation = io::quat_from_z_axis(normalized(segment));
    half_length = 0.5 * norm(segment);
    if (type == "box") {
      // MuJoCo 2.2 compiles a box given by fromto with a square section of half size size[0].
      if (size[1] != 0 && size[1] != size[0])
        warnings_.add(source_, element,
                      message("a box given by fromto has a square section of half size ", size[0],
                              " (size[0]), as in MuJoCo 2.2: the second size ", size[1], " is not used"));
      size[1] = size[0];
      size[2] = half_length;
    }
  }
  shape.position = position;
  shape.orientation = orientation;
  const auto positive = [&](double value, const char* what) {
    if (!(value > 0)) source_.fail(element, message(what, " must be positive, got ", value));
    return value;
  };
  double volume = 0.0;
  Vec3 unit_moments;  // principal moments per unit mass, along the geom's axes
  if (type == "sphere") {
    shape.type = ShapeType::Sphere;
    const double r = shape.radius = positive(size[0], "size (radius)");
    volume = 4.0 / 3.0 * kPi * r * r * r;
    unit_moments = Vec3{1, 1, 1} * (2.0 * r * r / 5.0);
  } else if (type == "capsule" || type == "cylinder") {
    const double r = shape.radius = positive(size[0], "size (radius)");
    const double h = shape.half_length = positive(half_length, "half length");
    const double height = 2.0 * h;
    if (type == "capsule") {
      shape.type = ShapeType::Capsule;
      volume = kPi * r * r * height + 4.0 / 3.0 * kPi * r * r * r;
      // MuJoCo's split: a cylinder and two hemispheres, moved along the axis.
      const double sphere_share = 4.0 * r / (4.0 * r + 3.0 * height);
      const double cylinder_share = 1.0 - sphere_share;
      const double transverse = cylinder_share * (3.0 * r * r + height * height) / 12.0 +
                                sphere_share * 2.0 * r * r / 5.0 +
                                sphere_share * height * (3.0 * r + 2.0 * height) / 8.0;
      unit_moments = {transverse, transverse, cylinder_share * r * r / 2.0 + sphere_share * 2.0 * r * r / 5.0};
    } else {
      shape.type = ShapeType::Cylinder;
      volume = kPi * r * r * height;
      const double transverse = (3.0 * r * r + height * height) / 12.0;
      unit_moments = {transverse, transverse, r * r / 2.0};
    }
  } else if (type == "box") {
    shape.type = ShapeType::Box;
    const Vec3 h{positive(size[0], "size x"), positive(size[1], "size y"), positive(size[2], "size z")};
    shape.half_extents = h;
    volume = 8.0 * h.x * h.y * h.z;
    unit_moments = Vec3{h.y * h.y + h.z * h.z, h.x * h.x + h.z * h.z, h.x * h.x + h.y * h.y} * (1.0 / 3.0);
  } else if (type == "plane") {
    if (body.parent >= 0 && !body.is_static)
      source_.fail(element, "a plane is infinite and may only belong to the world or a static body");
    shape.type = ShapeType::Plane;
    geom.is_plane = true;
  } else if (type == "mesh") {
    geom.is_mesh = true;
    geom.mesh = attribute(element, "geom", "mesh", class_name).value_or("");
  } else if (type == "ellipsoid" || type == "hfield" || type == "sdf") {
    source_.fail(element,
                 "geom type '" + type + "' is not supported (supported: sphere, capsule, cylinder, box, plane)");
  } else {
    source_.fail(element, "unknown geom type '" + type + "'");
  }
  // Mass: the mass attribute, else density × volume (MuJoCo's rule, density default 1000).
  if (!geom.is_plane && !geom.is_mesh) {
    const auto mass = number(element, "geom", "mass", class_name);
    const double density = number(element, "geom", "density", class_name).value_or(1000.0);
    if (mass && *mass < 0) source_.fail(element, message("mass must be non-negative, got ", *mass));
    if (!mass && density < 0) source_.fail(element, message("density must be non-negative, got ", density));
    geom.properties.mass = mass ? *mass : density * volume;
    const Mat3 rotation = orientation.to_matrix();
    geom.properties.center = position;
    geom.properties.inertia = rotation * Mat3::diagonal(unit_moments * geom.properties.mass) * rotation.transposed();
  }
  if (const auto friction = numbers(element, "geom", "friction", class_name, {1, 2, 3})) {
    geom.friction = (*friction)[0];
    if (geom.friction < 0) source_.fail(element, message("friction must be non-negative, got ", geom.friction));
  }
  const auto bits = [&](const char* name) {
    const double value = number(element, "geom", name, class_name).value_or(1.0);
    if (value < 0 || value != std::floor(value) || value > 4294967295.0)
      source_.fail(element, message(name, " must be a 32-bit unsigned integer, got ", value));
    return static_cast<int>(static_cast<std::uint32_t>(value));
  };
  geom.contype = bits("contype");
  geom.conaffinity = bits("conaffinity");
  return geom;
}

MjcfJoint MjcfReader::read_joint(const XMLElement* element, const std::string& class_name, const MjcfBody& body) {
  MjcfJoint joint;
  joint.element = element;
  if (std::string_view(element->Name()) == "freejoint") {
    check_attributes(element, "freejoint");
    joint.type = "free";
    joint.name = source_.text(element, "name").value_or("");
    return joint;
  }
  check_attributes(element, "joint");
  joint.type = attribute(element, "joint", "type", class_name).value_or("hinge");
  if (joint.type != "hinge" && joint.type != "slide" && joint.type != "ball" && joint.type != "free")
    source_.fail(element, "unknown joint type '" + joint.type + "' (expected hinge, slide, ball or free)");
  joint.name = source_.text(element, "name").value_or("");
  const Vec3 position = vector(element, "joint", "pos", class_name).value_or(Vec3{});
  Vec3 axis = vector(element, "joint", "axis", class_name).value_or(Vec3{0, 0, 1});
  if (!(norm(axis) > 1e-12)) source_.fail(element, "axis must be non-zero");
  joint.anchor = body.world.position + body.world.orientation.rotate(position);
  joint.axis = body.world.orientation.rotate(normalized(axis));
  joint.damping = number(element, "joint", "damping", class_name).value_or(0.0);
  if (joint.damping < 0) source_.fail(element, message("damping must be non-negative, got ", joint.damping));
  const auto range = numbers(element, "joint", "range", class_name, {2});
  const std::string limited = attribute(element, "joint", "limited", class_name).value_or("auto");
  bool is_limited = false;
  if (limited == "true")
    is_limited = true;
  else if (limited == "false")
    is_limited = false;
  else if (limited == "auto") {
    if (range && !compiler_.auto_limits)
      source_.fail(element,
                   "range given but not limited: say limited=\"true\" or \"false\", or set "
                   "<compiler autolimits=\"true\"> (MuJoCo 2.2 refuses this too)");
    is_limited = range.has_value();
  } else {
    source_.fail(element, "limited must be true, false or auto, got '" + limited + "'");
  }
  if (is_limited) {
    if (!range) source_.fail(element, "limited=\"true\" needs a range");
    if (joint.type == "free") source_.fail(element, "a free joint cannot have limits");
    if ((*range)[0] > (*range)[1])
      source_.fail(element, message("range lower bound ", (*range)[0], " exceeds upper bound ", (*range)[1]));
    const bool rotational = joint.type == "hinge";
    double ref = number(element, "joint", "ref", class_name).value_or(0.0);
    const double lower = rotational ? angle((*range)[0]) : (*range)[0];
    const double upper = rotational ? angle((*range)[1]) : (*range)[1];
    if (rotational) ref = angle(ref);
    // diffphys measures a joint from its build-time pose, MuJoCo from qpos = ref there.
    joint.range = std::pair{lower - ref, upper - ref};
  }
  return joint;
}

void MjcfReader::read_inertial(const XMLElement* element, MjcfBody& body) {
  check_attributes(element, "inertial");
  io::MassProperties properties;
  properties.mass = source_.required_number(element, "mass");
  if (properties.mass < 0) source_.fail(element, message("mass must be non-negative, got ", properties.mass));
  properties.center = source_.vec3(element, "pos").value_or(Vec3{});
  const Quat orientation = read_orientation(element, "inertial", "main");
  Mat3 local;
  if (const auto diagonal = source_.numbers(element, "diaginertia", {3})) {
    local = Mat3::diagonal({(*diagonal)[0], (*diagonal)[1], (*diagonal)[2]});
    if (element->Attribute("fullinertia")) source_.fail(element, "give diaginertia or fullinertia, not both");
  } else if (const auto full = source_.numbers(element, "fullinertia", {6})) {
    // MuJoCo's order: ixx iyy izz ixy ixz iyz.
    const auto& f = *full;
    local(0, 0) = f[0], local(1, 1) = f[1], local(2, 2) = f[2];
    local(0, 1) = local(1, 0) = f[3];
    local(0, 2) = local(2, 0) = f[4];
    local(1, 2) = local(2, 1) = f[5];
  } else {
    source_.fail(element, "needs diaginertia or fullinertia");
  }
  const Mat3 rotation = orientation.to_matrix();
  properties.inertia = rotation * local * rotation.transposed();
  body.mass = properties.mass;
  body.principal = io::principal_frame(properties, body.world.position, body.world.orientation);
}

void MjcfReader::read_body(const XMLElement* element, int parent, const std::string& inherited_class) {
  check_attributes(element, "body");
  if (element->Attribute("mocap")) source_.fail(element, "mocap bodies are not supported");
  MjcfBody body;
  body.element = element;
  body.parent = parent;
  const int index = static_cast<int>(bodies_.size());
  body.name = source_.text(element, "name").value_or("body" + std::to_string(index));
  if (body.name == "world") source_.fail(element, "the name 'world' is reserved for the world body");
  if (!body_names_.insert(body.name).second) source_.fail(element, "duplicate body name '" + body.name + "'");
  std::string child_class = inherited_class;
  if (const char* given = element->Attribute("childclass")) {
    if (!defaults_.classes.contains(given)) source_.fail(element, message("unknown childclass '", given, "'"));
    child_class = given;
  }
  Pose local;
  local.position = source_.vec3(element, "pos").value_or(Vec3{});
  local.orientation = read_orientation(element, "body", "main");
  body.world = bodies_[static_cast<std::size_t>(parent)].world * local;
  bodies_.push_back(body);
  read_children(element, index, child_class);
}

void MjcfReader::read_children(const XMLElement* element, int body_index, const std::string& child_class) {
  const XMLElement* inertial = nullptr;
  std::vector<const XMLElement*> geoms, children;
  for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
    const std::string tag = child->Name();
    if (tag == "body") {
      children.push_back(child);
    } else if (tag == "geom") {
      geoms.push_back(child);
    } else if (tag == "joint" || tag == "freejoint") {
      if (body_index == 0) source_.fail(child, "the world body cannot have joints");
      MjcfBody& body = bodies_[static_cast<std::size_t>(body_index)];
      body.joints.push_back(read_joint(child, class_of(child, child_class), body));
    } else if (tag == "inertial") {
      if (body_index == 0) source_.fail(child, "the world body cannot have an inertial");
      if (inertial) source_.fail(child, "a body has at most one <inertial>");
      inertial = child;
    } else if (tag == "site") {
      warnings_.ignored(child, "<site>", "diffphys has no sites; they only matter to tendons, sensors and actuators");
    } else if (tag == "camera" || tag == "light") {
      warnings_.ignored(child, "<" + tag + ">", "drawing only");
    } else {
      note_unsupported(child, "not part of diffphys's MJCF subset");
    }
  }
  {
    MjcfBody& body = bodies_[static_cast<std::size_t>(body_index)];
    // Welded to the world (no joints here or above): static. MuJoCo's body_weldid likewise.
    const MjcfBody* parent = body.parent >= 0 ? &bodies_[static_cast<std::size_t>(body.parent)] : nullptr;
    if (body_index == 0) {
      body.is_static = true;
      body.weld = 0;
    } else if (body.joints.empty()) {
      body.weld = parent->weld;
      body.is_static = parent->is_static;
    } else {
      body.weld = body_index;
      body.is_static = false;
    }
    for (const XMLElement* geom : geoms) body.geoms.push_back(read_geom(geom, class_of(geom, child_class), body));
    const bool geoms_give_inertia =
        compiler_.inertia_from_geom == Compiler::InertiaFromGeom::True ||
        (compiler_.inertia_from_geom == Compiler::InertiaFromGeom::Auto && inertial == nullptr);
    if (inertial && !geoms_give_inertia) {
      read_inertial(inertial, body);
    } else if (inertial) {
      warnings_.add(source_, inertial, "ignored: <compiler inertiafromgeom=\"true\"> takes mass from the geoms");
    }
    if (body_index != 0 && geoms_give_inertia) {
      std::vector<io::MassProperties> parts;
      for (const MjcfGeom& geom : body.geoms) {
        if (geom.is_mesh)
          source_.fail(geom.element,
                       "mass from a mesh geom is not supported yet (diffphys has no mesh shapes); "
                       "give the body an <inertial>");
        if (!geom.is_plane) parts.push_back(geom.properties);
      }
      // Geom properties are in the body frame; the body's principal frame follows.
      const io::MassProperties total = io::combine(parts);
      body.mass = total.mass;
      body.principal = io::principal_frame(total, body.world.position, body.world.orientation);
    }
  }
  for (const XMLElement* child : children) read_body(child, body_index, child_class);
}

// ---------------------------------------------------------------------------------------
// Into the builder

void MjcfReader::add_bodies(ModelBuilder& builder) {
  // The world's geoms: planes become ground planes, anything else a static body.
  BodySpec world_static;
  world_static.name = "world_static";
  world_static.type = BodyType::Static;
  double world_friction = -1.0;
  for (const MjcfGeom& geom : bodies_[0].geoms) {
    world_friction = std::max(world_friction, geom.friction);
    if (geom.is_mesh) {
      warnings_.add(source_, geom.element, "mesh geom skipped: diffphys has no mesh shapes yet");
      continue;
    }
    if (geom.is_plane) {
      if (geom.contype == 0 && geom.conaffinity == 0) continue;
      const Vec3 normal = geom.shape.orientation.rotate({0, 0, 1});
      builder.add_ground_plane(normal, dot(normal, geom.shape.position));
      continue;
    }
    ShapeSpec shape = geom.shape;
    shape.collision_group = static_cast<std::uint32_t>(geom.contype);
    shape.collision_mask = static_cast<std::uint32_t>(geom.conaffinity);
    world_static.shapes.push_back(shape);
  }
  if (world_friction >= 0) builder.world_friction = world_friction;
  if (!world_static.shapes.empty()) {
    world_static.friction = std::max(0.0, world_friction);
    if (body_names_.contains(world_static.name)) source_.fail(source_.root(), "a body may not be named 'world_static'");
    builder.add_body(world_static);
  }

  for (std::size_t b = 1; b < bodies_.size(); ++b) {
    MjcfBody& body = bodies_[b];
    BodySpec spec;
    spec.name = body.name;
    Pose frame = body.world;
    if (body.is_static) {
      spec.type = BodyType::Static;
    } else {
      if (!(body.mass > 0))
        source_.fail(body.element, message("a moving body needs a positive mass, got ", body.mass,
                                           " (give geoms with volume, a geom mass, or an <inertial>)"));
      if (!(body.principal.moments.x > 0))
        source_.fail(body.element,
                     message("inertia must be positive definite, principal moments (", body.principal.moments.x, ", ",
                             body.principal.moments.y, ", ", body.principal.moments.z, ")"));
      frame = {body.principal.position, body.principal.orientation};
      spec.mass = body.mass;
      spec.inertia = body.principal.moments;
      spec.center_of_mass = Vec3{};
    }
    spec.position = frame.position;
    spec.orientation = frame.orientation;
    // Shapes: from the body frame into the body's principal frame (frame_in_body).
    const Pose frame_in_body{body.world.orientation.inverse_rotate(frame.position - body.world.position),
                             (body.world.orientation.conjugate() * frame.orientation).normalized()};
    double friction = -1.0;
    for (const MjcfGeom& geom : body.geoms) {
      ShapeSpec shape = geom.shape;
      if (geom.is_mesh) {
        const auto asset = mesh_assets_.find(geom.mesh);
        if (asset == mesh_assets_.end()) source_.fail(geom.element, "unknown mesh '" + geom.mesh + "'");
        std::string why_not;
        std::optional<ShapeSpec> mesh = io::mesh_collision_shape(asset->second.file, asset->second.scale, why_not);
        if (!mesh) {
          warnings_.add(source_, geom.element, message("mesh geom skipped (", why_not, ")"));
          continue;
        }
        mesh->name = geom.shape.name;
        mesh->position = geom.shape.position;
        mesh->orientation = geom.shape.orientation;
        shape = *mesh;
      }
      if (geom.shape.type == ShapeType::Cylinder && (geom.contype != 0 || geom.conaffinity != 0))
        warnings_.add(source_, geom.element,
                      "cylinder collides as the capsule of the same radius and half length (rounded caps reaching "
                      "one radius further); its mass and inertia are a cylinder's");
      shape.position = frame_in_body.orientation.inverse_rotate(shape.position - frame_in_body.position);
      shape.orientation = (frame_in_body.orientation.conjugate() * shape.orientation).normalized();
      shape.collision_group = static_cast<std::uint32_t>(geom.contype);
      shape.collision_mask = static_cast<std::uint32_t>(geom.conaffinity);
      if (geom.contype != geom.conaffinity)
        warnings_.add(source_, geom.element,
                      message("contype ", geom.contype, " differs from conaffinity ", geom.conaffinity,
                              ": diffphys collides two shapes only when each one's group meets the other's mask, "
                              "MuJoCo when either does"));
      if (friction >= 0 && geom.friction != friction)
        warnings_.add(source_, geom.element,
                      message("friction ", geom.friction, " differs from the body's other geoms (", friction,
                              "): diffphys has one friction per body and uses the largest"));
      friction = std::max(friction, geom.friction);
      spec.shapes.push_back(shape);
    }
    if (friction >= 0) spec.friction = friction;
    item_lines_.note("body '" + body.name + "'", body.element->GetLineNum());
    builder.add_body(spec);
  }
}

void MjcfReader::add_joints(ModelBuilder& builder) {
  int unnamed = 0;
  for (std::size_t b = 1; b < bodies_.size(); ++b) {
    MjcfBody& body = bodies_[b];
    if (body.is_static) continue;
    for (MjcfJoint& joint : body.joints)
      if (joint.name.empty()) joint.name = body.name + "_joint" + std::to_string(unnamed++);
    const std::string parent = body.parent == 0 ? "world" : bodies_[static_cast<std::size_t>(body.parent)].name;
    // MuJoCo lets a body collide with a world-welded parent (its filter skips weld 0).
    const bool parent_in_world_weld = bodies_[static_cast<std::size_t>(body.parent)].weld == 0;
    JointSpec spec;
    spec.parent = parent;
    spec.child = body.name;
    spec.collide_connected = parent_in_world_weld;
    const auto& joints = body.joints;
    const auto same_point = [&](const MjcfJoint& a, const MjcfJoint& c) { return norm(a.anchor - c.anchor) < 1e-12; };
    const auto perpendicular = [](const MjcfJoint& a, const MjcfJoint& c) {
      return std::abs(dot(a.axis, c.axis)) < 1e-9;
    };
    bool all_hinges = !joints.empty();
    for (const MjcfJoint& joint : joints) all_hinges = all_hinges && joint.type == "hinge";
    const auto note_joint = [&](const MjcfJoint& joint, int dof, bool actuable, std::string why_not) {
      if (joint_targets_.contains(joint.name)) source_.fail(joint.element, "duplicate joint name '" + joint.name + "'");
      joint_targets_[joint.name] =
          JointTarget{spec.name, dof, actuable, std::move(why_not), &joint, static_cast<int>(b)};
    };
    if (joints.empty()) {
      spec.name = body.name + "_weld";
      spec.type = JointType::Fixed;
      spec.anchor = body.world.position;
    } else if (joints.size() == 1 && joints[0].type == "free") {
      note_joint(joints[0], 0, false, "a free joint has no actuated coordinate in diffphys");
      continue;  // a free body: no constraint
    } else if (joints.size() == 1) {
      const MjcfJoint& joint = joints[0];
      spec.name = joint.name;
      spec.anchor = joint.anchor;
      spec.axis = joint.axis;
      spec.damping = joint.damping;
      if (joint.type == "hinge" || joint.type == "slide") {
        spec.type = joint.type == "hinge" ? JointType::Revolute : JointType::Prismatic;
        if (joint.range) {
          spec.lower_limit = joint.range->first;
          spec.upper_limit = joint.range->second;
        }
        note_joint(joint, 0, true, "");
      } else if (joint.type == "ball") {
        spec.type = JointType::Ball;
        if (joint.range)
          warnings_.add(source_, joint.element, "ball joint range (a cone limit) is not supported: ignored");
        note_joint(joint, 0, false, "a ball joint has no actuated coordinate in diffphys");
      } else {
        source_.fail(joint.element, "a free joint must be the only joint of its body");
      }
    } else if (all_hinges && joints.size() == 2 && perpendicular(joints[0], joints[1])) {
      // Two perpendicular hinges: a universal joint, the first axis on the parent.
      spec.type = JointType::Universal;
      spec.name = joints[0].name + "+" + joints[1].name;
      spec.anchor = joints[0].anchor;
      spec.axis = joints[0].axis;
      spec.axis2 = joints[1].axis;
      spec.damping = joints[0].damping;
      if (!same_point(joints[0], joints[1]))
        warnings_.add(source_, joints[1].element,
                      message("hinges '", joints[0].name, "' and '", joints[1].name, "' of body '", body.name,
                              "' pass through points ", norm(joints[0].anchor - joints[1].anchor),
                              " m apart; diffphys joins them into one universal joint at the first hinge's point"));
      if (joints[0].damping != joints[1].damping)
        warnings_.add(source_, joints[1].element,
                      message("damping ", joints[1].damping, " differs from '", joints[0].name, "' (",
                              joints[0].damping, "): the universal joint has one damping, the first hinge's"));
      if (joints[0].range || joints[1].range) {
        if (joints[0].range && joints[1].range && *joints[0].range == *joints[1].range) {
          spec.lower_limit = joints[0].range->first;
          spec.upper_limit = joints[0].range->second;
        } else {
          warnings_.add(source_, joints[1].element,
                        message("hinges '", joints[0].name, "' and '", joints[1].name,
                                "' have different ranges; a diffphys universal joint has one range for both "
                                "coordinates, so the limits are not applied"));
        }
      }
      note_joint(joints[0], 0, true, "");
      note_joint(joints[1], 1, true, "");
    } else if (all_hinges && joints.size() == 3 && perpendicular(joints[0], joints[1]) &&
               perpendicular(joints[0], joints[2]) && perpendicular(joints[1], joints[2]) &&
               same_point(joints[0], joints[1]) && same_point(joints[0], joints[2])) {
      // Three perpendicular hinges through one point span every rotation: a ball joint.
      spec.type = JointType::Ball;
      spec.name = joints[0].name + "+" + joints[1].name + "+" + joints[2].name;
      spec.anchor = joints[0].anchor;
      spec.damping = joints[0].damping;
      warnings_.add(
          source_, joints[0].element,
          message("hinges '", joints[0].name, "', '", joints[1].name, "', '", joints[2].name, "' of body '", body.name,
                  "' become one ball joint: their ranges, different dampings and actuators "
                  "are not applied (damping ",
                  joints[0].damping, " for all three)"));
      for (const MjcfJoint& joint : joints)
        note_joint(joint, 0, false,
                   "its hinge is part of ball joint '" + spec.name + "', which diffphys cannot actuate");
    } else {
      std::string names;
      for (const MjcfJoint& joint : joints) names += (names.empty() ? "" : ", ") + joint.name + " (" + joint.type + ")";
      source_.fail(body.element, "this combination of joints cannot be represented by one diffphys joint: " + names +
                                     " (supported: one hinge, slide, ball or free joint; two perpendicular hinges; "
                                     "three perpendicular hinges through one point)");
    }
    item_lines_.note("joint '" + spec.name + "'",
                     joints.empty() ? body.element->GetLineNum() : joints[0].element->GetLineNum());
    builder.add_joint(spec);
  }
}

void MjcfReader::add_collision_filters(ModelBuilder& builder) {
  // MuJoCo 2.2 skips a geom pair when both bodies are in the same weld group, or (its
  // "filterparent") when one weld group is the parent of the other, unless that is the world.
  const auto weld_parent = [&](int weld) {
    const int parent = bodies_[static_cast<std::size_t>(weld)].parent;
    return parent < 0 ? 0 : bodies_[static_cast<std::size_t>(parent)].weld;
  };
  const auto has_shapes = [&](std::size_t b) { return !bodies_[b].geoms.empty(); };
  for (std::size_t a = 1; a < bodies_.size(); ++a) {
    if (!has_shapes(a)) continue;
    for (std::size_t c = a + 1; c < bodies_.size(); ++c) {
      if (!has_shapes(c)) continue;
      const int weld_a = bodies_[a].weld, weld_c = bodies_[c].weld;
      const bool same_weld = weld_a == weld_c;
      const bool parent_weld =
          weld_a != 0 && weld_c != 0 && (weld_a == weld_parent(weld_c) || weld_c == weld_parent(weld_a));
      if (same_weld || parent_weld) builder.exclude_collision(bodies_[a].name, bodies_[c].name);
    }
  }
  for (const auto& [first, second] : exclusions_) builder.exclude_collision(first, second);
}

void MjcfReader::read_actuators(const std::vector<const XMLElement*>& sections, ModelBuilder& builder) {
  // Every <actuator> section in file order: MuJoCo appends them, and an unnamed actuator's
  // name is its MuJoCo id across all of them.
  std::vector<const XMLElement*> all;
  for (const XMLElement* section : sections)
    for (const XMLElement* actuator = section->FirstChildElement(); actuator; actuator = actuator->NextSiblingElement())
      all.push_back(actuator);
  for (std::size_t index = 0; index < all.size(); ++index) {
    const XMLElement* actuator = all[index];
    const std::string tag = actuator->Name();
    if (tag != "motor" && tag != "position") {
      warnings_.add(source_, actuator,
                    "actuator type <" + tag + "> is not supported (only motor and position): skipped");
      continue;
    }
    check_attributes(actuator, tag);
    const std::string class_name = class_of(actuator, "main");
    const std::string name = source_.text(actuator, "name").value_or("actuator" + std::to_string(index));
    const auto joint_name = source_.text(actuator, "joint");
    if (!joint_name) {
      warnings_.add(source_, actuator, "only joint transmissions are supported (no tendon, site or body): skipped");
      continue;
    }
    const auto target = joint_targets_.find(*joint_name);
    if (target == joint_targets_.end()) {
      // A joint of a static body, or a name that does not exist.
      bool exists = false;
      for (const MjcfBody& body : bodies_)
        for (const MjcfJoint& joint : body.joints) exists = exists || joint.name == *joint_name;
      if (!exists) source_.fail(actuator, "unknown joint '" + *joint_name + "'");
      warnings_.add(source_, actuator, "its joint '" + *joint_name + "' is not simulated: skipped");
      continue;
    }
    if (!target->second.actuable) {
      warnings_.add(source_, actuator, "skipped: " + target->second.why_not);
      continue;
    }
    const auto gear = numbers(actuator, tag, "gear", class_name, {1, 2, 3, 4, 5, 6}).value_or(std::vector<double>{1.0});
    for (std::size_t k = 1; k < gear.size(); ++k)
      if (gear[k] != 0) source_.fail(actuator, "gear beyond the first component applies to site transmissions only");
    const auto limited = [&](const char* flag, const char* range_name) -> std::optional<std::pair<double, double>> {
      const auto range = numbers(actuator, tag, range_name, class_name, {2});
      const std::string value = attribute(actuator, tag, flag, class_name).value_or("auto");
      bool on = false;
      if (value == "true")
        on = true;
      else if (value == "false")
        on = false;
      else if (value == "auto") {
        if (range && !compiler_.auto_limits)
          source_.fail(actuator, message(range_name, " given but ", flag, " not set (MuJoCo 2.2 refuses this too)"));
        on = range.has_value();
      } else {
        source_.fail(actuator, message(flag, " must be true, false or auto, got '", value, "'"));
      }
      if (!on) return std::nullopt;
      if (!range) source_.fail(actuator, message(flag, "=\"true\" needs ", range_name));
      if ((*range)[0] > (*range)[1]) source_.fail(actuator, message(range_name, " lower bound exceeds upper bound"));
      return std::pair{(*range)[0], (*range)[1]};
    };
    const auto control_range = limited("ctrllimited", "ctrlrange");
    const auto force_range = limited("forcelimited", "forcerange");
    const auto largest = [](const std::pair<double, double>& range) {
      return std::max(std::abs(range.first), std::abs(range.second));
    };
    const auto warn_asymmetric = [&](const std::pair<double, double>& range, const char* what) {
      if (range.first != -range.second)
        warnings_.add(source_, actuator,
                      message(what, " [", range.first, ", ", range.second,
                              "] is not symmetric; diffphys bounds symmetrically by ", largest(range)));
    };
    ActuatorSpec spec;
    spec.name = name;
    spec.joint = target->second.joint;
    spec.dof = target->second.dof;
    const double g = gear[0];
    if (tag == "motor") {
      // diffphys's motor control is the joint torque itself: τ = gear · ctrl.
      spec.type = ActuatorType::Motor;
      double bound = 0.0;
      if (control_range) {
        warn_asymmetric(*control_range, "ctrlrange");
        bound = std::abs(g) * largest(*control_range);
      }
      if (force_range) {
        warn_asymmetric(*force_range, "forcerange");
        bound = bound > 0 ? std::min(bound, largest(*force_range)) : largest(*force_range);
      }
      spec.max_torque = bound;
    } else {
      // Position servo. MuJoCo: τ = kp (ctrl − q); diffphys: q̇ → gain (target − q), a
      // velocity-level servo. With joint damping d the two agree once inertia has settled
      // (d q̇ = kp (ctrl − q)), so gain = kp / d; without damping, gain = √(kp / I), the
      // natural frequency of the joint with the inertia I of the child body about the axis.
      spec.type = ActuatorType::Servo;
      const double kp = number(actuator, tag, "kp", class_name).value_or(1.0) * g;
      if (!(kp > 0)) source_.fail(actuator, message("kp must be positive, got ", kp));
      const MjcfJoint& joint = *target->second.source;
      const MjcfBody& body = bodies_[static_cast<std::size_t>(target->second.body)];
      if (joint.damping > 0) {
        spec.gain = kp / joint.damping;
      } else {
        double inertia = body.mass;
        if (joint.type == "hinge") {
          const Mat3 rotation = body.principal.orientation.to_matrix();
          const Vec3 axis_local = rotation.transpose_times(joint.axis);
          const Vec3 arm = cross(body.principal.position - joint.anchor, joint.axis);
          inertia = body.principal.moments.x * axis_local.x * axis_local.x +
                    body.principal.moments.y * axis_local.y * axis_local.y +
                    body.principal.moments.z * axis_local.z * axis_local.z + body.mass * dot(arm, arm);
        }
        spec.gain = std::sqrt(kp / inertia);
      }
      // The largest error the servo must correct: the control range, else the joint range.
      double span = 0.0;
      if (control_range)
        span = control_range->second - control_range->first;
      else if (joint.range)
        span = joint.range->second - joint.range->first;
      if (!(span > 0)) {
        span = joint.type == "hinge" ? kPi : 1.0;
        warnings_.add(source_, actuator,
                      message("no ctrlrange or joint range: the servo's bounds assume errors up to ", span,
                              joint.type == "hinge" ? " rad" : " m"));
      }
      spec.max_torque = force_range ? largest(*force_range) : kp * span;
      spec.max_velocity = spec.gain * span;
      if (control_range) warn_asymmetric(*control_range, "ctrlrange");
    }
    item_lines_.note("actuator '" + name + "'", actuator->GetLineNum());
    builder.add_actuator(spec);
  }
}

Scene MjcfReader::read() {
  const XMLElement* root = source_.root();
  if (std::string_view(root->Name()) != "mujoco")
    source_.fail(root, "not an MJCF file: the root element must be <mujoco>");
  ModelBuilder builder;
  builder.name = source_.text(root, "model").value_or("mjcf");
  builder.dt = 0.002;  // MuJoCo's default time step

  // Settings first, whatever their place in the file: they change how the rest reads.
  for (const XMLElement* element = root->FirstChildElement(); element; element = element->NextSiblingElement()) {
    const std::string tag = element->Name();
    if (tag == "include") source_.fail(element, "<include> is not supported: merge the files into one");
    if (tag == "compiler") read_compiler(element);
    if (tag == "default") read_defaults(element, "");
  }
  MjcfBody world;
  world.name = "world";
  world.element = root;
  bodies_.push_back(world);
  // Sections may repeat (several <worldbody>, <actuator>, <contact>, <asset>, <default>):
  // MuJoCo reads each in turn into the one model, so each is read here and nothing replaced.
  std::vector<const XMLElement*> actuator_sections;
  for (const XMLElement* element = root->FirstChildElement(); element; element = element->NextSiblingElement()) {
    const std::string tag = element->Name();
    if (tag == "compiler" || tag == "default") continue;
    if (tag == "option") {
      read_option(element, builder);
    } else if (tag == "worldbody") {
      read_children(element, 0, "main");
    } else if (tag == "actuator") {
      actuator_sections.push_back(element);
    } else if (tag == "contact") {
      for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
        if (std::string_view(child->Name()) == "exclude") {
          exclusions_.emplace_back(source_.required_text(child, "body1"), source_.required_text(child, "body2"));
          item_lines_.note(
              message("collision exclusion '", exclusions_.back().first, "'-'", exclusions_.back().second, "'"),
              child->GetLineNum());
        } else {
          note_unsupported(child, "explicit contact pairs are not supported");
        }
      }
    } else if (tag == "asset") {
      for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
        const std::string asset = child->Name();
        if (asset == "texture" || asset == "material")
          warnings_.ignored(child, "<" + asset + ">", "drawing only");
        else if (asset == "mesh") {
          const auto given = source_.text(child, "file");
          if (!given) {
            warnings_.add(source_, child, "a mesh without a file (inline vertices) is not supported: skipped");
            continue;
          }
          const std::string file = *given;
          // MuJoCo names an unnamed mesh after its file, without the extension.
          const std::string name = source_.text(child, "name").value_or(std::filesystem::path(file).stem().string());
          mesh_assets_[name] = {source_.base_directory() / mesh_directory_ / file,
                                source_.vec3(child, "scale").value_or(Vec3{1, 1, 1})};
        } else
          note_unsupported(child, "asset not used by diffphys");
      }
    } else if (tag == "visual" || tag == "statistic") {
      warnings_.ignored(element, "<" + tag + ">", "drawing only");
    } else if (tag == "size") {
      warnings_.ignored(element, "<size>", "MuJoCo memory sizes; diffphys sizes itself");
    } else if (tag == "tendon" || tag == "sensor" || tag == "equality" || tag == "keyframe" || tag == "custom" ||
               tag == "extension" || tag == "deformable" || tag == "skin") {
      note_unsupported(element, "diffphys has no " + tag + " elements");
      for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement())
        note_unsupported(child, "inside <" + tag + ">");
    } else {
      note_unsupported(element, "unknown top-level element");
    }
  }
  add_bodies(builder);
  add_joints(builder);
  add_collision_filters(builder);
  read_actuators(actuator_sections, builder);

  Scene scene = item_lines_.build(builder, source_);
  scene.warnings = warnings_.finish(source_);
  return scene;
}

}  // namespace

Scene parse_mjcf(std::string_view xml_text, std::string_view source_name, const std::filesystem::path& base_directory) {
  const XmlSource source(std::string(xml_text), std::string(source_name), base_directory);
  return MjcfReader(source).read();
}

Scene load_mjcf(const std::filesystem::path& path) {
  const std::unique_ptr<XmlSource> source = XmlSource::load(path);
  return MjcfReader(*source).read();
}

}  // namespace diffphys
