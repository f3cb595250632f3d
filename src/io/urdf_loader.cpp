// io/urdf_loader.cpp — URDF robots (diffphys/robot_loaders.hpp, docs/robot-formats.md).
//
// Owns the mapping from URDF (links, joints, inertials, collision geometry) onto
// ModelBuilder specs. A link becomes a body whose frame is its principal frame of inertia
// (the engine's body frame: centre of mass at the origin, axes along the principal axes), so
// the inertial's origin and full inertia tensor are honoured exactly. Joint frames are the
// child links' frames at the zero configuration. Items URDF allows but diffphys cannot honour
// are refused (an unknown joint type) or reported in Scene::warnings
// (friction in <dynamics>, <mimic>, <transmission>, meshes that cannot be read).
//
// Mesh file names may be package://NAME/... (resolved through the package search path of
// io/package_path.hpp), file:// URIs or paths relative to the file. Links of one robot that
// no joint joins do not collide (Gazebo's <self_collide> default, which avoids the
// permanent contacts between overlapping neighbours' hulls that real descriptions are full
// of) unless <gazebo><self_collide> or UrdfOptions::self_collision asks; the pairs become
// Model::collision_exclusions, so other robots and the ground still collide with every link.
#include <tinyxml2.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "diffphys/robot_loaders.hpp"
#include "io/package_path.hpp"
#include "io/xml_source.hpp"

namespace diffphys {
namespace {

using io::Pose;
using io::XmlSource;
using tinyxml2::XMLElement;

struct UrdfJoint {
  const XMLElement* element = nullptr;
  std::string name, type, parent, child;
  Pose origin;  // child link frame in the parent link frame
};

class UrdfReader {
 public:
  UrdfReader(const XmlSource& source, const UrdfOptions& options)
      : source_(source),
        options_(options),
        meshes_(options.package_path, std::getenv("ROS_PACKAGE_PATH"), source.base_directory()) {}
  Scene read();

 private:
  Pose read_origin(const XMLElement* parent) const {
    Pose pose;
    const XMLElement* origin = parent->FirstChildElement("origin");
    if (origin == nullptr) return pose;
    if (const auto xyz = source_.vec3(origin, "xyz")) pose.position = *xyz;
    if (const auto rpy = source_.vec3(origin, "rpy"))
      pose.orientation = io::quat_from_roll_pitch_yaw(rpy->x, rpy->y, rpy->z);
    return pose;
  }
  void check_children(const XMLElement* element, std::initializer_list<std::string_view> known) {
    for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
      if (std::find(known.begin(), known.end(), std::string_view(child->Name())) != known.end()) continue;
      warnings_.add(source_, child, message("unsupported element inside ", io::describe(element), ": ignored"));
    }
  }
  // is_static: the root without <inertial>, or a link welded (fixed joints only) to it or to
  // the world; such a link never moves, so it becomes a static body and needs no mass.
  void read_body(const XMLElement* link, const Pose& link_world, bool is_static, ModelBuilder& builder);
  // <gazebo [reference="link"]>: <self_collide> is read, the rest reported.
  void read_gazebo(const XMLElement* gazebo);
  // Collision exclusions for the pairs of links of one robot that may not collide.
  void exclude_self_collisions(const std::vector<UrdfJoint>& joints, bool root_is_world, ModelBuilder& builder) const;
  std::optional<ShapeSpec> read_collision(const XMLElement* collision, const std::string& link_name, std::size_t index);

  const XmlSource& source_;
  const UrdfOptions& options_;
  io::MeshLocator meshes_;
  io::Warnings warnings_;
  io::ItemLines item_lines_;
  std::vector<std::string> body_links_;        // links that became bodies, in body order
  std::set<std::string> static_body_links_;    // those that never move
  std::optional<bool> robot_self_collide_;     // <gazebo><self_collide> without a reference
  std::map<std::string, bool> link_self_collide_;  // <gazebo reference="link"><self_collide>
  std::vector<std::pair<std::string, const XMLElement*>> self_collide_references_;  // checked once links are known
};

void UrdfReader::read_gazebo(const XMLElement* gazebo) {
  const auto reference = source_.text(gazebo, "reference");
  bool read_anything = false;
  for (const XMLElement* child = gazebo->FirstChildElement(); child; child = child->NextSiblingElement()) {
    if (std::string_view(child->Name()) != "self_collide") {
      warnings_.ignored(child, message("<gazebo> <", child->Name(), ">"),
                        "Gazebo's simulation settings; diffphys reads only <self_collide>");
      continue;
    }
    const char* text = child->GetText();
    std::string value = text ? text : "";
    value.erase(0, value.find_first_not_of(" \t\r\n"));
    value.erase(value.find_last_not_of(" \t\r\n") + 1);
    bool on = false;
    if (value == "true" || value == "1") {
      on = true;
    } else if (value != "false" && value != "0") {
      source_.fail(child, message("expected true or false, got '", value, "'"));
    }
    read_anything = true;
    if (reference) {
      link_self_collide_[*reference] = on;
      self_collide_references_.emplace_back(*reference, child);
    } else {
      robot_self_collide_ = on;
    }
  }
  if (!read_anything && gazebo->FirstChildElement() == nullptr)
    warnings_.add(source_, gazebo, "unsupported element: ignored");
}

void UrdfReader::exclude_self_collisions(const std::vector<UrdfJoint>& joints, bool root_is_world,
                                         ModelBuilder& builder) const {
  // Robots: the links that joints other than `floating` hold together, not through `world`
  // (what hangs from `world` separately — a floor, a table, a second robot — is another
  // robot). Union-find over the links that became bodies.
  std::map<std::string, std::string> parent_of;
  for (const std::string& link : body_links_) parent_of[link] = link;
  const auto find = [&](std::string link) {
    while (parent_of[link] != link) link = parent_of[link] = parent_of[parent_of[link]];
    return link;
  };
  std::set<std::pair<std::string, std::string>> joined;
  for (const UrdfJoint& joint : joints) {
    if (joint.type == "floating" || (root_is_world && joint.parent == "world")) continue;
    if (!parent_of.contains(joint.parent) || !parent_of.contains(joint.child)) continue;
    parent_of[find(joint.child)] = find(joint.parent);
    joined.emplace(std::min(joint.parent, joint.child), std::max(joint.parent, joint.child));
  }
  const auto self_collides = [&](const std::string& link) {
    const auto own = link_self_collide_.find(link);
    return own != link_self_collide_.end() ? own->second : robot_self_collide_.value_or(false);
  };
  for (std::size_t i = 0; i < body_links_.size(); ++i) {
    for (std::size_t j = i + 1; j < body_links_.size(); ++j) {
      const std::string& a = body_links_[i];
      const std::string& b = body_links_[j];
      if (find(a) != find(b)) continue;  // different robots collide
      if (static_body_links_.contains(a) && static_body_links_.contains(b)) continue;  // never move
      if (joined.contains({std::min(a, b), std::max(a, b)})) continue;  // the joint excludes them already
      if (options_.self_collision || self_collides(a) || self_collides(b)) continue;
      builder.exclude_collision(a, b);
    }
  }
}

std::optional<ShapeSpec> UrdfReader::read_collision(const XMLElement* collision, const std::string& link_name,
                                                    std::size_t index) {
  check_children(collision, {"origin", "geometry"});
  const XMLElement* geometry = collision->FirstChildElement("geometry");
  if (geometry == nullptr) source_.fail(collision, "missing <geometry>");
  const XMLElement* shape_element = geometry->FirstChildElement();
  if (shape_element == nullptr) source_.fail(geometry, "empty: expected <box>, <sphere>, <cylinder> or <mesh>");
  if (shape_element->NextSiblingElement())
    source_.fail(shape_element->NextSiblingElement(), "a <geometry> holds exactly one shape");
  ShapeSpec shape;
  const Pose origin = read_origin(collision);
  shape.position = origin.position;
  shape.orientation = origin.orientation;
  const auto name = source_.text(collision, "name");
  shape.name = name ? link_name + "/" + *name : link_name + "/" + std::to_string(index);
  const std::string kind = shape_element->Name();
  const auto positive = [&](const char* attribute) {
    const double value = source_.required_number(shape_element, attribute);
    if (!(value > 0)) source_.fail(shape_element, message(attribute, " must be positive, got ", value));
    return value;
  };
  if (kind == "box") {
    const auto size = source_.vec3(shape_element, "size");
    if (!size) source_.fail(shape_element, "missing required attribute 'size'");
    if (!(size->x > 0 && size->y > 0 && size->z > 0))
      source_.fail(shape_element, message("size must be positive, got (", size->x, ", ", size->y, ", ", size->z, ")"));
    shape.type = ShapeType::Box;
    shape.half_extents = *size * 0.5;
  } else if (kind == "sphere") {
    shape.type = ShapeType::Sphere;
    shape.radius = positive("radius");
  } else if (kind == "cylinder") {
    shape.type = ShapeType::Cylinder;
    shape.radius = positive("radius");
    shape.half_length = 0.5 * positive("length");
    warnings_.add(source_, shape_element,
                  "cylinder collides as the capsule of the same radius and length (rounded caps reaching one radius "
                  "further); the link's mass properties come from its <inertial>");
  } else if (kind == "mesh") {
    const io::MeshLocator::Location location = meshes_.locate(source_.required_text(shape_element, "filename"));
    if (!location.file && !location.package.empty()) {
      // One message per missing package, listing the lines of its meshes.
      warnings_.ignored(shape_element, message("collision meshes of package '", location.package, "'"),
                        message(location.why_not, "; their links get no collision shape from them"));
      return std::nullopt;
    }
    const Vec3 scale = source_.vec3(shape_element, "scale").value_or(Vec3{1, 1, 1});
    std::string why_not = location.why_not;
    std::optional<ShapeSpec> mesh;
    if (location.file) mesh = io::mesh_collision_shape(*location.file, scale, why_not);
    if (!mesh) {
      warnings_.add(source_, shape_element,
                    message("collision mesh skipped (", why_not, "), so link '", link_name,
                            "' has no collision shape for it (its <inertial> is unaffected)"));
      return std::nullopt;
    }
    mesh->name = shape.name;
    mesh->position = shape.position;
    mesh->orientation = shape.orientation;
    return mesh;
  } else {
    source_.fail(shape_element, "unknown geometry: expected <box>, <sphere>, <cylinder> or <mesh>");
  }
  return shape;
}

void UrdfReader::read_body(const XMLElement* link, const Pose& link_world, bool is_static, ModelBuilder& builder) {
  const std::string name = source_.required_text(link, "name");
  BodySpec body;
  body.name = name;
  std::vector<ShapeSpec> shapes;  // in the link frame
  std::size_t index = 0;
  for (const XMLElement* collision = link->FirstChildElement("collision"); collision;
       collision = collision->NextSiblingElement("collision")) {
    if (auto shape = read_collision(collision, name, index++)) shapes.push_back(*shape);
  }
  const XMLElement* inertial = link->FirstChildElement("inertial");
  Pose frame = link_world;  // the body frame in the world
  Pose frame_in_link;       // the body frame in the link frame
  if (is_static) {
    body.type = BodyType::Static;
    if (inertial != nullptr)
      warnings_.add(source_, inertial,
                    "not used: the link never moves (it is the root, or welded to the world by "
                    "fixed joints), so it is a static body");
  } else if (inertial == nullptr) {
    source_.fail(link,
                 "missing <inertial>: a moving link needs a mass and an inertia (only links that never move "
                 "may omit it: the root, and links welded to it or to 'world' by fixed joints)");
  } else {
    check_children(inertial, {"origin", "mass", "inertia"});
    const XMLElement* mass_element = inertial->FirstChildElement("mass");
    if (mass_element == nullptr) source_.fail(inertial, "missing <mass>");
    const double mass = source_.required_number(mass_element, "value");
    if (!(mass > 0)) source_.fail(mass_element, message("mass must be positive, got ", mass));
    const XMLElement* inertia_element = inertial->FirstChildElement("inertia");
    if (inertia_element == nullptr) source_.fail(inertial, "missing <inertia>");
    io::MassProperties properties;
    properties.mass = mass;
    const char* names[3][3] = {{"ixx", "ixy", "ixz"}, {"ixy", "iyy", "iyz"}, {"ixz", "iyz", "izz"}};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) properties.inertia(i, j) = source_.required_number(inertia_element, names[i][j]);
    const Pose origin = read_origin(inertial);
    const io::PrincipalFrame principal = io::principal_frame(properties, origin.position, origin.orientation);
    if (!(principal.moments.x > 0))
      source_.fail(inertia_element,
                   message("inertia must be positive definite, its principal moments are (", principal.moments.x, ", ",
                           principal.moments.y, ", ", principal.moments.z, ")"));
    frame_in_link = {principal.position, principal.orientation};
    frame = link_world * frame_in_link;
    body.mass = mass;
    body.inertia = principal.moments;
    body.center_of_mass = Vec3{};
  }
  body.position = frame.position;
  body.orientation = frame.orientation;
  for (ShapeSpec& shape : shapes) {
    shape.position = frame_in_link.orientation.inverse_rotate(shape.position - frame_in_link.position);
    shape.orientation = (frame_in_link.orientation.conjugate() * shape.orientation).normalized();
    body.shapes.push_back(shape);
  }
  item_lines_.note("body '" + name + "'", link);
  body_links_.push_back(name);
  if (is_static) static_body_links_.insert(name);
  builder.add_body(body);
}

Scene UrdfReader::read() {
  const XMLElement* robot = source_.root();
  if (std::string_view(robot->Name()) != "robot")
    source_.fail(robot, "not a URDF file: the root element must be <robot>");
  ModelBuilder builder;
  builder.name = source_.text(robot, "name").value_or("robot");

  // Links and joints by name, in file order.
  std::vector<const XMLElement*> links;
  std::map<std::string, const XMLElement*> link_by_name;
  std::vector<UrdfJoint> joints;
  std::set<std::string> joint_names;
  for (const XMLElement* element = robot->FirstChildElement(); element; element = element->NextSiblingElement()) {
    const std::string_view tag = element->Name();
    if (tag == "link") {
      const std::string name = source_.required_text(element, "name");
      if (!link_by_name.emplace(name, element).second) source_.fail(element, "duplicate link name");
      links.push_back(element);
      check_children(element, {"inertial", "collision", "visual"});
      for (const XMLElement* visual = element->FirstChildElement("visual"); visual;
           visual = visual->NextSiblingElement("visual"))
        warnings_.ignored(visual, "<visual>", "drawing only; the viewer draws the collision shapes");
    } else if (tag == "joint") {
      UrdfJoint joint;
      joint.element = element;
      joint.name = source_.required_text(element, "name");
      if (!joint_names.insert(joint.name).second) source_.fail(element, "duplicate joint name");
      joint.type = source_.required_text(element, "type");
      const XMLElement* parent = element->FirstChildElement("parent");
      const XMLElement* child = element->FirstChildElement("child");
      if (parent == nullptr) source_.fail(element, "missing <parent link=...>");
      if (child == nullptr) source_.fail(element, "missing <child link=...>");
      joint.parent = source_.required_text(parent, "link");
      joint.child = source_.required_text(child, "link");
      joint.origin = read_origin(element);
      check_children(element, {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic", "calibration",
                               "safety_controller"});
      joints.push_back(joint);
    } else if (tag == "material") {
      warnings_.ignored(element, "<material>", "drawing only");
    } else if (tag == "gazebo") {
      read_gazebo(element);
    } else {
      warnings_.add(source_, element, "unsupported element: ignored");
    }
  }
  if (links.empty()) source_.fail(robot, "no <link>");

  // The tree: each link is the child of at most one joint; exactly one root.
  std::map<std::string, const UrdfJoint*> joint_of_child;
  std::map<std::string, std::vector<const UrdfJoint*>> joints_of_parent;
  for (const UrdfJoint& joint : joints) {
    for (const std::string* link : {&joint.parent, &joint.child})
      if (!link_by_name.contains(*link)) source_.fail(joint.element, message("unknown link '", *link, "'"));
    if (joint.parent == joint.child) source_.fail(joint.element, "parent and child are the same link");
    if (!joint_of_child.emplace(joint.child, &joint).second)
      source_.fail(joint.element, message("link '", joint.child, "' is already the child of joint '",
                                          joint_of_child[joint.child]->name, "': URDF links form a tree"));
    joints_of_parent[joint.parent].push_back(&joint);
  }
  std::vector<const XMLElement*> roots;
  for (const XMLElement* link : links)
    if (!joint_of_child.contains(link->Attribute("name"))) roots.push_back(link);
  if (roots.size() != 1)
    source_.fail(robot, message("expected exactly one root link (a link that is no joint's child), found ",
                                roots.size(), roots.empty() ? " (the joints form a loop)" : ""));
  const std::string root_name = roots[0]->Attribute("name");
  const bool root_is_world = root_name == "world";
  if (root_is_world && roots[0]->FirstChildElement("collision"))
    source_.fail(roots[0], "the 'world' link stands for diffphys's world body and cannot carry collision shapes");

  // Depth-first from the root: link frames at the zero configuration, bodies, then joints.
  std::map<std::string, Pose> link_world;
  std::vector<const UrdfJoint*> order;
  std::vector<const XMLElement*> stack{roots[0]};
  link_world[root_name] = Pose{};
  // A root with an <inertial> floats; without one it is fixed in the world.
  std::set<std::string> static_links;
  if (root_is_world || roots[0]->FirstChildElement("inertial") == nullptr) static_links.insert(root_name);
  if (!root_is_world) read_body(roots[0], Pose{}, static_links.contains(root_name), builder);
  while (!stack.empty()) {
    const XMLElement* link = stack.back();
    stack.pop_back();
    const std::string name = link->Attribute("name");
    const auto children = joints_of_parent.find(name);
    if (children == joints_of_parent.end()) continue;
    for (const UrdfJoint* joint : children->second) {
      const XMLElement* child = link_by_name[joint->child];
      link_world[joint->child] = link_world[name] * joint->origin;
      const bool welded = joint->type == "fixed" && static_links.contains(joint->parent);
      const bool frame_only = !welded && child->FirstChildElement("inertial") == nullptr && joint->type == "fixed" &&
                              child->FirstChildElement("collision") == nullptr &&
                              !joints_of_parent.contains(joint->child);
      if (frame_only) {
        warnings_.add(source_, child,
                      message("frame-only link (no <inertial>, no <collision>, attached by fixed joint '", joint->name,
                              "'): no body is created for it"));
        continue;
      }
      if (welded) static_links.insert(joint->child);
      read_body(child, link_world[joint->child], welded, builder);
      if (!welded) order.push_back(joint);  // a static link needs no joint
      stack.push_back(child);
    }
  }

  // One root does not make a tree: joints that form a loop among other links leave those
  // links (and any hanging from them) unreached from the root.
  std::vector<std::string> unreached;
  for (const XMLElement* link : links)
    if (!link_world.contains(link->Attribute("name"))) unreached.push_back(link->Attribute("name"));
  if (!unreached.empty()) {
    std::string names;
    for (std::size_t i = 0; i < unreached.size() && i < 10; ++i) names += (i > 0 ? ", '" : "'") + unreached[i] + "'";
    if (unreached.size() > 10) names += message(" and ", unreached.size() - 10, " more");
    source_.fail(joint_of_child[unreached[0]]->element,
                 message(unreached.size() == 1 ? "link " : "links ", names, " cannot be reached from the root link '",
                         root_name, "': their joints form a loop (each is a joint's child, but following the parents "
                         "never reaches the root); URDF links form one tree"));
  }

  for (const UrdfJoint* joint_ptr : order) {
    const UrdfJoint& joint = *joint_ptr;
    const XMLElement* element = joint.element;
    JointSpec spec;
    spec.name = joint.name;
    spec.parent = (root_is_world && joint.parent == root_name) ? "world" : joint.parent;
    spec.child = joint.child;
    const Pose& frame = link_world[joint.child];
    spec.anchor = frame.position;
    Vec3 axis{1, 0, 0};
    if (const XMLElement* axis_element = element->FirstChildElement("axis"))
      if (const auto xyz = source_.vec3(axis_element, "xyz")) axis = *xyz;
    const std::string& type = joint.type;
    if (type != "fixed" && type != "floating" && !(norm(axis) > 1e-12))
      source_.fail(element, "<axis xyz> must be a non-zero vector, got (0, 0, 0)");
    if (type == "revolute" || type == "continuous" || type == "prismatic") {
      spec.type = type == "prismatic" ? JointType::Prismatic : JointType::Revolute;
      spec.axis = frame.orientation.rotate(normalized(axis));
      const XMLElement* limit = element->FirstChildElement("limit");
      if (type != "continuous") {
        if (limit == nullptr)
          source_.fail(element, message("a ", type, " joint needs <limit lower upper effort velocity>"));
        spec.lower_limit = source_.number(limit, "lower").value_or(0.0);
        spec.upper_limit = source_.number(limit, "upper").value_or(0.0);
        if (*spec.lower_limit > *spec.upper_limit)
          source_.fail(limit, message("lower limit ", *spec.lower_limit, " exceeds upper limit ", *spec.upper_limit));
      }
      if (limit != nullptr && (limit->Attribute("effort") || limit->Attribute("velocity")))
        warnings_.ignored(limit, "<limit> effort and velocity",
                          "URDF declares no actuators; add motors or servos to the Model to drive the joints");
    } else if (type == "fixed") {
      spec.type = JointType::Fixed;
    } else if (type == "floating") {
      // A floating joint leaves the child free: no constraint at all.
      if (element->FirstChildElement("limit") || element->FirstChildElement("dynamics"))
        warnings_.add(source_, element, "a floating joint has no limits or damping in diffphys: ignored");
      continue;
    } else if (type == "planar") {
      // URDF: the child moves in the plane normal to <axis>. Its in-plane directions, which
      // the spec leaves open, are the joint frame's x (or y, when the axis is near x)
      // projected into the plane (dof 0) and axis × that (dof 1); dof 2 turns about the axis.
      spec.type = JointType::Planar;
      const Vec3 normal = normalized(axis);
      const Vec3 direction = default_plane_direction(normal);
      spec.axis = frame.orientation.rotate(normal);
      spec.axis2 = frame.orientation.rotate(direction);
      spec.axis3 = frame.orientation.rotate(cross(normal, direction));
      if (const XMLElement* limit = element->FirstChildElement("limit")) {
        if (limit->Attribute("lower") || limit->Attribute("upper"))
          warnings_.add(source_, limit,
                        "lower and upper limits of a planar joint are not applied: diffphys's planar "
                        "joint has no limits");
        if (limit->Attribute("effort") || limit->Attribute("velocity"))
          warnings_.ignored(limit, "<limit> effort and velocity",
                            "URDF declares no actuators; add motors or servos to the Model to drive the joints");
      }
    } else {
      source_.fail(element, message("unknown joint type '", type,
                                    "' (expected revolute, continuous, prismatic, fixed, floating or planar)"));
    }
    if (const XMLElement* dynamics = element->FirstChildElement("dynamics")) {
      const double damping = source_.number(dynamics, "damping").value_or(0.0);
      if (damping < 0) source_.fail(dynamics, message("damping must be non-negative, got ", damping));
      if (spec.type == JointType::Fixed) {
        if (damping != 0) warnings_.add(source_, dynamics, "damping on a fixed joint has no effect");
      } else {
        spec.damping = damping;
      }
      const double friction = source_.number(dynamics, "friction").value_or(0.0);
      if (friction != 0)  // one message per value, listing its lines
        warnings_.ignored(dynamics, message("<dynamics> joint friction ", friction),
                          "diffphys joints have viscous damping only");
    }
    for (const char* ignored : {"mimic", "calibration", "safety_controller"})
      if (const XMLElement* extra = element->FirstChildElement(ignored))
        warnings_.add(source_, extra,
                      message("<", ignored, "> not supported: ignored",
                              std::string_view(ignored) == "mimic" ? " (the joint moves independently)" : ""));
    item_lines_.note("joint '" + joint.name + "'", element);
    builder.add_joint(spec);
  }

  for (const auto& [reference, element] : self_collide_references_)
    if (!link_by_name.contains(reference))
      source_.fail(element, message("<gazebo reference=\"", reference, "\">: <self_collide> applies to links, and '",
                                    reference, "' is not a link of this robot"));
  exclude_self_collisions(joints, root_is_world, builder);

  Scene scene = item_lines_.build(builder, source_);
  scene.warnings = warnings_.finish(source_);
  return scene;
}

}  // namespace

Scene parse_urdf(std::string_view xml_text, std::string_view source_name, const std::filesystem::path& base_directory,
                 const UrdfOptions& options) {
  const XmlSource source(std::string(xml_text), std::string(source_name), base_directory);
  return UrdfReader(source, options).read();
}

Scene load_urdf(const std::filesystem::path& path, const UrdfOptions& options) {
  const std::unique_ptr<XmlSource> source = XmlSource::load(path);
  return UrdfReader(*source, options).read();
}

}  // namespace diffphys
