// io/mjcf_composite.cpp — MJCF <composite>: the "rope" chain built body for body as MuJoCo 2.2
// generates it (mjCComposite::MakeRope and AddRopeBody in its user_composite.cc), particles as
// frictionless free bodies, and the refusal, with the element and line, of every other type.
//
// What MuJoCo 2.2 generates for <composite type="rope" count="n 1 1" spacing="s">
// inside body <prefix>B<k>: the body itself is element k of the chain and gets geom G<k>;
// elements k+1 … n−1 are a chain of child bodies B<i> at (s, 0, 0) from their parent, and
// elements k−1 … 0 another at (−s, 0, 0); each of those has two hinges J0_<i>, J1_<i> about
// its y and z axes through the point half a spacing back towards its parent (their damping
// from the composite's <joint kind="main">) and its geom G<i> at its origin with the geom's
// z axis along the chain (quaternion (√½, 0, √½, 0)). In diffphys each pair of hinges is one
// universal joint (mjcf_bodies.cpp merges them).
//
// A "loop" is the same chain on a regular n-gon closed by a soft equality "connect" between
// B0 and B<n−1>. As a hard ball joint that closure failed: the ring is planar, where the
// closure's constraints lose rank (a flat polygon flexes out of its plane to first order),
// and at its first contact the post-step projection left a joint error of 0.8 m and the
// state diverged. It is refused until diffphys has soft equality constraints.
//
// <composite type="particle" count="nx ny nz" spacing offset> in the world body: MuJoCo 2.2
// makes an unnamed body (body<id> here) at offset + spacing (i − n/2) per axis, with three slide
// joints (it translates and never turns) and the composite's geom, frictionless (condim 1).
// diffphys has no translation-only joint; each particle is a free body whose friction is 0. A
// frictionless sphere's contact forces all pass through its centre (diffphys's contact
// friction is √(μ_a μ_b) = 0 with it), so nothing turns it and it moves as MuJoCo's particle
// does, with three more degrees of freedom that stay at rest. Hence only spheres, condim 1,
// in the world body (a particle in a moving body slides with that body), and no <joint>.
//
// A composite's <geom> and <joint> take MuJoCo's built-in defaults, not the file's <default>
// classes (active_adhesion's main class makes geoms boxes; MuJoCo 2.2 still compiles its
// particles as spheres of the composite's size): an explicit class attribute is honoured.
//
// Grid, cloth and box composites are refused: MuJoCo 2.2 couples their bodies with tendons
// held by equality constraints (a cloth or a grid is a net of fixed-length tendons), which
// diffphys has not.
#include <tinyxml2.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "io/mjcf_reader.hpp"

namespace diffphys::io::mjcf {

MjcfReader::Composite MjcfReader::read_composite(const XMLElement* element, const MjcfBody& root) {
  Composite composite;
  composite.element = element;
  composite.type = source_.text(element, "type").value_or("particle");  // MuJoCo's default type
  const bool particle = composite.type == "particle";
  if (composite.type == "loop")
    source_.fail(element,
                 "<composite type=\"loop\"> is not supported: MuJoCo 2.2 closes the ring with a soft "
                 "equality constraint, which diffphys has not (a hard ball joint there loses rank on the "
                 "flat ring and diverges at the first contact); particle and rope are supported");
  if (composite.type != "rope" && !particle)
    source_.fail(element, "<composite type=\"" + composite.type +
                              "\"> is not supported: MuJoCo 2.2 couples its bodies with tendons held by equality "
                              "constraints, which diffphys has not (particle and rope are supported)");
  if (compiler_.global) source_.fail(element, "a <composite> under <compiler coordinate=\"global\"> is not supported");
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (name == "type" || name == "count" || name == "spacing" || name == "prefix") continue;
    if (name == "offset" && particle) continue;
    if (name == "offset") {
      warnings_.add(source_, element, "offset: MuJoCo 2.2 does not use it for a rope, nor does diffphys");
    } else if (name == "flatinertia") {
      warnings_.ignored(element, "<composite> attribute " + name, "MuJoCo 2.2 uses it for cloth only");
    } else {
      source_.fail(element, "<composite> attribute " + name + " is not supported");
    }
  }
  const std::vector<double> count =
      source_.parse_numbers(element, "count", source_.text(element, "count").value_or("1 1 1"), {3});
  if (particle) {
    for (int k = 0; k < 3; ++k) {
      const double value = count[static_cast<std::size_t>(k)];
      if (value < 1 || value != std::floor(value))
        source_.fail(element,
                     message("count must be three integers ≥ 1, got ", count[0], " ", count[1], " ", count[2]));
      composite.counts[k] = static_cast<int>(value);
    }
    composite.offset = source_.vec3(element, "offset").value_or(Vec3{});
  } else if (count[0] < 2 || count[0] != std::floor(count[0]) || count[1] != 1 || count[2] != 1)
    source_.fail(element, message("a ", composite.type, " needs count=\"n 1 1\" with an integer n ≥ 2, got ", count[0],
                                  " ", count[1], " ", count[2]));
  composite.count = static_cast<int>(count[0]);
  composite.spacing = source_.parse_number(element, "spacing", source_.text(element, "spacing").value_or("0"));
  if (!(composite.spacing > 0)) source_.fail(element, message("spacing must be positive, got ", composite.spacing));
  composite.prefix = source_.text(element, "prefix").value_or("");
  if (particle) {
    if (root.parent >= 0)
      source_.fail(element,
                   "particles inside a moving body slide with it, which no diffphys joint does: give them "
                   "in the world body");
    read_composite_children(composite);
    return composite;
  }
  // MuJoCo's rule: the enclosing body is named <prefix>B<k>, element k of the chain.
  const std::string head = composite.prefix + "B";
  int origin = -1;
  if (root.name.rfind(head, 0) == 0) {
    const std::string digits = root.name.substr(head.size());
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos) origin = std::stoi(digits);
  }
  if (origin < 0 || origin >= composite.count)
    source_.fail(element, message("the body holding a ", composite.type, " must be named ", head, "<k> with 0 ≤ k < ",
                                  composite.count, " (MuJoCo's rule), got '", root.name, "'"));
  composite.origin = origin;
  read_composite_children(composite);
  return composite;
}

void MjcfReader::read_composite_children(Composite& composite) {
  const XMLElement* element = composite.element;
  const bool particle = composite.type == "particle";
  for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement()) {
    const std::string tag = child->Name();
    if (tag == "geom") {
      if (composite.geom) source_.fail(child, "a <composite> has one <geom>");
      if (child->Attribute("fromto")) source_.fail(child, "a composite's geom is placed by the composite: no fromto");
      composite.geom = child;
    } else if (tag == "joint" && particle) {
      source_.fail(child, "a particle's joints are MuJoCo's three slides, or yours: neither is a diffphys joint");
    } else if (tag == "joint") {
      const std::string kind = source_.text(child, "kind").value_or("");
      if (kind != "main")
        source_.fail(child, "<joint kind=\"" + kind +
                                "\"> is not supported in a composite (diffphys builds the main joints only: the "
                                "twist and stretch joints are held by equality constraints)");
      if (composite.joint) source_.fail(child, "a <composite> has one <joint kind=\"main\">");
      for (const tinyxml2::XMLAttribute* a = child->FirstAttribute(); a; a = a->Next()) {
        const std::string name = a->Name();
        if (name == "kind" || name == "damping" || name == "class" || name == "group") continue;
        source_.fail(child, "<joint> attribute " + name + " is not supported in a composite");
      }
      composite.joint = child;
    } else if (tag == "skin") {
      warnings_.ignored(child, "<skin>", "drawing only");
    } else {
      source_.fail(child, "<" + tag + "> inside a <composite> is not supported");
    }
  }
  if (!composite.geom) source_.fail(element, "a <composite> needs a <geom>");
  const std::string geom_type = source_.text(composite.geom, "type").value_or("sphere");
  if (particle) {
    // A frictionless sphere is never turned (see the file comment); anything else would be.
    if (geom_type != "sphere")
      source_.fail(composite.geom,
                   "a particle is a free body in diffphys, which only a frictionless sphere keeps "
                   "from turning as MuJoCo's slide joints do: its geom must be a sphere");
    if (const auto condim = source_.text(composite.geom, "condim"); condim && *condim != "1")
      source_.fail(composite.geom, "condim " + *condim +
                                       ": a particle with friction would turn in diffphys, where MuJoCo's slides keep "
                                       "it from turning (condim 1, MuJoCo's default for particles, is supported)");
  } else if (geom_type != "sphere" && geom_type != "capsule" && geom_type != "ellipsoid") {
    source_.fail(composite.geom, "a composite's geom must be a sphere, a capsule or an ellipsoid (MuJoCo's rule)");
  }
}

void MjcfReader::build_particles(const Composite& composite) {
  const int* n = composite.counts;
  for (int ix = 0; ix < n[0]; ++ix)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int iz = 0; iz < n[2]; ++iz) {
        MjcfBody body;
        body.element = composite.element;
        body.parent = 0;
        // MuJoCo 2.2 leaves particle bodies unnamed: body<id>, as every unnamed body here.
        body.name = "body" + std::to_string(bodies_.size());
        if (!body_names_.insert(body.name).second)
          source_.fail(composite.element, "the composite's body name '" + body.name + "' is taken already");
        body.world.position =
            composite.offset + Vec3{composite.spacing * (ix - 0.5 * n[0]), composite.spacing * (iy - 0.5 * n[1]),
                                    composite.spacing * (iz - 0.5 * n[2])};
        MjcfJoint joint;
        joint.element = composite.element;
        joint.name = body.name + "/free";  // MuJoCo's three slides are unnamed
        joint.type = "free";
        body.joints.push_back(joint);
        body.weld = static_cast<int>(bodies_.size());
        const Pose placed{Vec3{}, Quat{}};
        MjcfGeom geom = read_geom(composite.geom, class_of(composite.geom, ""), body, &placed);
        geom.friction = 0.0;  // condim 1: frictionless
        body.geoms.push_back(geom);
        std::vector<io::MassProperties> parts{geom.properties};
        const io::MassProperties total = io::combine(parts);
        body.mass = total.mass;
        body.principal = io::principal_frame(total, body.world.position, body.world.orientation);
        bodies_.push_back(body);
      }
}

MjcfGeom MjcfReader::composite_geom(const Composite& composite, int index, const MjcfBody& body) {
  // At the body's origin, its z axis along the chain (the body's x axis).
  const double half = std::sqrt(0.5);
  const Pose placed{Vec3{}, Quat{half, 0.0, half, 0.0}};
  MjcfGeom geom = read_geom(composite.geom, class_of(composite.geom, ""), body, &placed);
  geom.shape.name = composite.prefix + "G" + std::to_string(index);
  return geom;
}

void MjcfReader::build_composite_chain(const Composite& composite, int root_index) {
  if (composite.type == "particle") return build_particles(composite);
  const double damping =
      composite.joint ? number(composite.joint, "joint", "damping", class_of(composite.joint, "")).value_or(0.0) : 0.0;
  if (damping < 0) source_.fail(composite.joint, message("damping must be non-negative, got ", damping));
  const XMLElement* joint_element = composite.joint ? composite.joint : composite.element;
  // One element after the other, away from the root in direction `step` (+1 or −1).
  const auto add_element = [&](int parent_index, int index, int step) {
    MjcfBody body;
    body.element = composite.element;
    body.parent = parent_index;
    body.name = composite.prefix + "B" + std::to_string(index);
    if (!body_names_.insert(body.name).second)
      source_.fail(composite.element, "the composite's body name '" + body.name + "' is taken already");
    const Pose local{Vec3{step * composite.spacing, 0.0, 0.0}, Quat{}};
    body.world = bodies_[static_cast<std::size_t>(parent_index)].world * local;
    const Vec3 hinge_point =
        body.world.position + body.world.orientation.rotate({-0.5 * step * composite.spacing, 0, 0});
    for (int axis = 0; axis < 2; ++axis) {
      MjcfJoint joint;
      joint.element = joint_element;
      joint.name = composite.prefix + "J" + std::to_string(axis) + "_" + std::to_string(index);
      joint.type = "hinge";
      joint.anchor = hinge_point;
      joint.axis = body.world.orientation.rotate(axis == 0 ? Vec3{0, 1, 0} : Vec3{0, 0, 1});
      joint.damping = damping;
      body.joints.push_back(joint);
    }
    body.weld = static_cast<int>(bodies_.size());
    const int body_index = body.weld;
    body.geoms.push_back(composite_geom(composite, index, body));
    std::vector<io::MassProperties> parts{body.geoms.back().properties};
    const io::MassProperties total = io::combine(parts);
    body.mass = total.mass;
    body.principal = io::principal_frame(total, body.world.position, body.world.orientation);
    bodies_.push_back(body);
    return body_index;
  };
  for (int index = composite.origin + 1, parent = root_index; index < composite.count; ++index)
    parent = add_element(parent, index, +1);
  for (int index = composite.origin - 1, parent = root_index; index >= 0; --index)
    parent = add_element(parent, index, -1);
}

}  // namespace diffphys::io::mjcf
