// io/mjcf_bodies.cpp — MJCF bodies and joints: the body tree with its frames, joints,
// inertials and mass from geoms, then their mapping onto ModelBuilder bodies, joints
// (merged hinges become universal or ball joints, two slides and a hinge a planar joint) and
// collision filters (io/mjcf_reader.hpp).
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "io/mjcf_reader.hpp"

namespace diffphys::io::mjcf {

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
  // Global coordinates give the anchor and the axis in the world already.
  joint.anchor = compiler_.global ? position : body.world.position + body.world.orientation.rotate(position);
  joint.axis = compiler_.global ? normalized(axis) : body.world.orientation.rotate(normalized(axis));
  joint.damping = number(element, "joint", "damping", class_name).value_or(0.0);
  if (joint.damping < 0) source_.fail(element, message("damping must be non-negative, got ", joint.damping));
  if (const auto range = limited_range(element, "joint", "limited", "range", class_name)) {
    if (joint.type == "free") source_.fail(element, "a free joint cannot have limits");
    const bool rotational = joint.type == "hinge";
    double ref = number(element, "joint", "ref", class_name).value_or(0.0);
    const double lower = rotational ? angle(range->first) : range->first;
    const double upper = rotational ? angle(range->second) : range->second;
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
  const Pose given{source_.vec3(element, "pos").value_or(Vec3{}), read_orientation(element, "inertial", "main")};
  const Pose in_body = in_body_frame(given, body);
  properties.center = in_body.position;
  const Quat orientation = in_body.orientation;
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
  bool mocap_body = false;
  if (const auto mocap = source_.text(element, "mocap"); mocap && source_.parse_bool(element, "mocap", *mocap)) {
    // MuJoCo moves a mocap body only when a program writes its pose (mocap_pos/mocap_quat): a
    // kinematic body, which the program drives through the state (its pose and velocity).
    if (parent != 0) source_.fail(element, "a mocap body must be a child of the world (MuJoCo's rule)");
    for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement())
      if (std::string_view(child->Name()) == "joint" || std::string_view(child->Name()) == "freejoint")
        source_.fail(child, "a mocap body cannot have joints (MuJoCo's rule)");
    mocap_body = true;
  }
  MjcfBody body;
  body.element = element;
  body.parent = parent;
  body.is_kinematic = mocap_body;
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
  // Global coordinates: the body's pose is its world pose.
  body.world = compiler_.global ? local : bodies_[static_cast<std::size_t>(parent)].world * local;
  bodies_.push_back(body);
  read_children(element, index, child_class);
}

void MjcfReader::read_children(const XMLElement* element, int body_index, const std::string& child_class) {
  const XMLElement* inertial = nullptr;
  std::vector<const XMLElement*> geoms;
  // Child bodies and composites in file order (MuJoCo numbers their bodies in that order);
  // a composite is given by its index in `composites`.
  std::vector<std::pair<const XMLElement*, int>> children;
  std::vector<Composite> composites;
  for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
    const std::string tag = child->Name();
    if (tag == "body") {
      children.emplace_back(child, -1);
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
      read_site(child, body_index);  // an end of a spatial tendon, perhaps (mjcf_loader.cpp)
    } else if (tag == "composite") {
      // Rope, loop and cloth: bodies, joints, equalities (mjcf_composite.cpp).
      composites.push_back(read_composite(child, bodies_[static_cast<std::size_t>(body_index)]));
      children.emplace_back(child, static_cast<int>(composites.size()) - 1);
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
    } else if (body.is_kinematic) {  // a mocap body: its own weld group, moved by the state
      body.weld = body_index;
      body.is_static = false;
    } else if (body.joints.empty()) {
      body.weld = parent->weld;
      body.is_static = parent->is_static;
    } else {
      body.weld = body_index;
      body.is_static = false;
    }
    for (const XMLElement* geom : geoms) body.geoms.push_back(read_geom(geom, class_of(geom, child_class), body));
    for (const Composite& composite : composites)
      if (composite.type != "particle")
        body.geoms.push_back(
            composite_geom(composite, composite.origin, body, composite.type == "cloth" ? composite.origin_y : -1));
    const bool geoms_give_inertia =
        compiler_.inertia_from_geom == Compiler::InertiaFromGeom::True ||
        (compiler_.inertia_from_geom == Compiler::InertiaFromGeom::Auto && inertial == nullptr);
    if (inertial && body.is_kinematic) {
      warnings_.add(source_, inertial, "ignored: a mocap body is kinematic in diffphys (its motion is prescribed), it has no mass");
    } else if (inertial && !geoms_give_inertia) {
      read_inertial(inertial, body);
    } else if (inertial) {
      warnings_.add(source_, inertial, "ignored: <compiler inertiafromgeom=\"true\"> takes mass from the geoms");
    }
    if (body_index != 0 && geoms_give_inertia) {
      std::vector<io::MassProperties> parts;
      for (MjcfGeom& geom : body.geoms) {
        if (geom.is_mesh) mesh_geom_mass(geom, geom.class_name);
        if (!geom.is_plane) parts.push_back(geom.properties);
      }
      // Geom properties are in the body frame; the body's principal frame follows.
      const io::MassProperties total = io::combine(parts);
      body.mass = total.mass;
      body.principal = io::principal_frame(total, body.world.position, body.world.orientation);
    }
    for (const Composite& composite : composites)
      if (composite.type == "cloth" && body_index != 0) apply_flat_inertia(composite, body);
  }
  for (const auto& [child, composite] : children) {
    if (composite < 0)
      read_body(child, body_index, child_class);
    else
      build_composite_chain(composites[static_cast<std::size_t>(composite)], body_index);
  }
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
    } else if (body.is_kinematic) {
      spec.type = BodyType::Kinematic;  // no mass: its motion is prescribed (its geoms' mass is not used)
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
    item_lines_.note("body '" + body.name + "'", body.element);
    builder.add_body(spec);
  }
}

namespace {

// A body's joints when they are two slides and a hinge: where each sits (indices into the
// body's joints, the slides in file order) and why they are not a plane — the first two axes
// that are not perpendicular, with their dot product — or "" when they are one. The slides'
// points do not matter: a slide moves every point of the body alike.
struct SlidesAndHinge {
  std::size_t first_slide = 0, second_slide = 0, hinge = 0;
  std::string mismatch;
};
std::optional<SlidesAndHinge> slides_and_hinge(const std::vector<MjcfJoint>& joints) {
  if (joints.size() != 3) return std::nullopt;
  std::vector<std::size_t> slides, hinges;
  for (std::size_t i = 0; i < joints.size(); ++i) {
    if (joints[i].type == "slide") slides.push_back(i);
    if (joints[i].type == "hinge") hinges.push_back(i);
  }
  if (slides.size() != 2 || hinges.size() != 1) return std::nullopt;
  SlidesAndHinge set{slides[0], slides[1], hinges[0], ""};
  const std::pair<std::size_t, std::size_t> pairs[] = {
      {slides[0], slides[1]}, {hinges[0], slides[0]}, {hinges[0], slides[1]}};
  for (const auto& [first, second] : pairs) {
    const double product = dot(joints[first].axis, joints[second].axis);
    if (std::abs(product) >= 1e-9 && set.mismatch.empty())
      set.mismatch = message(joints[first].type, " '", joints[first].name, "' and ", joints[second].type, " '",
                             joints[second].name, "' are not perpendicular, their axes' dot product is ", product);
  }
  return set;
}

}  // namespace

namespace {

// Moment of inertia of a body about the line through `point` along the unit `axis`, kg·m².
double inertia_about(const MjcfBody& body, const Vec3& point, const Vec3& axis) {
  const Vec3 local = body.principal.orientation.inverse_rotate(axis);
  const Vec3& moments = body.principal.moments;
  const Vec3 offset = body.principal.position - point;
  const Vec3 across = offset - axis * dot(offset, axis);
  return moments.x * local.x * local.x + moments.y * local.y * local.y + moments.z * local.z * local.z +
         body.mass * dot(across, across);
}

}  // namespace

void MjcfReader::add_joints(ModelBuilder& builder) {
  // Per body, the damped hinges acting on it (its own and its children's) and its largest
  // rotational compliance 1/I_min: what bounds a chain's fastest damped motion (below).
  std::vector<int> damped_hinges(bodies_.size(), 0);
  for (std::size_t b = 1; b < bodies_.size(); ++b) {
    if (bodies_[b].is_static || bodies_[b].is_kinematic) continue;
    for (const MjcfJoint& joint : bodies_[b].joints)
      if (joint.type == "hinge" && joint.damping > 0) {
        ++damped_hinges[b];
        ++damped_hinges[static_cast<std::size_t>(bodies_[b].parent)];
      }
  }
  const auto compliance_bound = [&](std::size_t b) {
    const MjcfBody& body = bodies_[b];
    if (body.is_static || body.is_kinematic || b == 0) return 0.0;  // infinitely massive to the joint
    const Vec3& moments = body.principal.moments;
    return damped_hinges[b] / std::min({moments.x, moments.y, moments.z});
  };
  int unnamed = 0;
  for (std::size_t b = 1; b < bodies_.size(); ++b) {
    MjcfBody& body = bodies_[b];
    if (body.is_static || body.is_kinematic) continue;
    for (MjcfJoint& joint : body.joints)
      if (joint.name.empty()) joint.name = body.name + "_joint" + std::to_string(unnamed++);
    // diffphys applies joint damping explicitly (rigid/forces.cpp: v_free = v + h M⁻¹ f), which
    // diverges when r = h·d·(1/I_child + 1/I_parent) > 2 about the joint (the hinge's relative
    // rate is multiplied by 1 − r each step); MuJoCo integrates it implicitly (by 1/(1 + r)).
    // Such a hinge's damping is lowered to 1/(h B), B = Σ over its two bodies of (damped hinges
    // acting on the body) / (its smallest principal moment): a Gershgorin bound on the
    // compliance of a chain's fastest damped motion (the pair's r misses that each link feels
    // its neighbours' joints: loop.xml's ring, r = 2.6, reached 14,600 rad/s in 17 steps of free
    // fall with its 0.005, and still diverged after 62 steps with d lowered to r = ½). With
    // h d B ≤ 1 every such motion loses its rate in about one step, as MuJoCo's implicit
    // damping nearly does when r is large. Said for every hinge where it happens.
    const MjcfBody& parent_body = bodies_[static_cast<std::size_t>(body.parent)];
    const double chain_bound = compliance_bound(b) + compliance_bound(static_cast<std::size_t>(body.parent));
    for (MjcfJoint& joint : body.joints) {
      if (joint.type != "hinge" || !(joint.damping > 0)) continue;
      double compliance = 1.0 / inertia_about(body, joint.anchor, joint.axis);
      if (!parent_body.is_static && !parent_body.is_kinematic)
        compliance += 1.0 / inertia_about(parent_body, joint.anchor, joint.axis);
      const double ratio = builder.dt * joint.damping * compliance;
      if (ratio > 2.0) {
        const double lowered = std::min(joint.damping, 1.0 / (builder.dt * chain_bound));
        warnings_.add(source_, joint.element,
                      message("damping ", joint.damping, " of hinge '", joint.name, "' is applied explicitly by diffphys, ",
                              "which is unstable here: h·d·(1/I_child + 1/I_parent) = ", ratio,
                              " > 2 about the hinge (MuJoCo integrates damping implicitly); lowered to ", lowered,
                              ", which damps the fastest motion of a chain of such links in about one step, as MuJoCo's "
                              "implicit damping nearly does"));
        joint.damping = lowered;
      }
    }
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
    } else if (const auto planar = slides_and_hinge(joints); planar && planar->mismatch.empty()) {
      // Two perpendicular slides and a hinge normal to both: the gym robots' rootx, rootz,
      // rooty. One planar joint about the hinge's point; its dofs are the slides (in file
      // order) and the hinge, each with the MJCF joint's own direction and sense.
      const MjcfJoint& slide1 = joints[planar->first_slide];
      const MjcfJoint& slide2 = joints[planar->second_slide];
      const MjcfJoint& hinge = joints[planar->hinge];
      spec.type = JointType::Planar;
      spec.name = joints[0].name + "+" + joints[1].name + "+" + joints[2].name;
      spec.anchor = hinge.anchor;
      spec.axis = hinge.axis;
      spec.axis2 = slide1.axis;
      spec.axis3 = slide2.axis;
      spec.damping = hinge.damping;
      for (const std::size_t slide : {planar->first_slide, planar->second_slide})
        if (planar->hinge < slide)
          warnings_.add(source_, joints[slide].element,
                        message("slide '", joints[slide].name, "' comes after hinge '", hinge.name,
                                "': MuJoCo turns its direction with the hinge, diffphys's planar joint '", spec.name,
                                "' keeps it fixed in the parent (the same motions; the slide's coordinate and force "
                                "are measured along the direction it had when loaded)"));
      for (const MjcfJoint* joint : {&slide1, &slide2})
        if (joint->damping != hinge.damping)
          warnings_.add(source_, joint->element,
                        message("damping ", joint->damping, " differs from hinge '", hinge.name, "' (", hinge.damping,
                                "): the planar joint has one damping for its three coordinates, the hinge's"));
      for (const MjcfJoint& joint : joints)
        if (joint.range)
          warnings_.add(source_, joint.element,
                        message("range of '", joint.name, "' is not applied: diffphys's planar joint '", spec.name,
                                "' has no limits"));
      note_joint(slide1, 0, true, "");
      note_joint(slide2, 1, true, "");
      note_joint(hinge, 2, true, "");
    } else {
      std::string names;
      for (const MjcfJoint& joint : joints) names += (names.empty() ? "" : ", ") + joint.name + " (" + joint.type + ")";
      if (planar)  // two slides and a hinge that are not a plane
        source_.fail(body.element, "joints " + names + " cannot be one diffphys planar joint: " + planar->mismatch +
                                       " (a planar set is two perpendicular slides and a hinge normal to both)");
      source_.fail(body.element, "this combination of joints cannot be represented by one diffphys joint: " + names +
                                     " (supported: one hinge, slide, ball or free joint; two perpendicular hinges; "
                                     "three perpendicular hinges through one point; two perpendicular slides and a "
                                     "hinge normal to both)");
    }
    item_lines_.note("joint '" + spec.name + "'", joints.empty() ? body.element : joints[0].element);
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

}  // namespace diffphys::io::mjcf
