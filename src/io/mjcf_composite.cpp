// io/mjcf_composite.cpp — MJCF <composite>: the "rope" and "loop" chains built body for body as
// MuJoCo 2.2 generates them (mjCComposite::MakeRope and AddRopeBody in its user_composite.cc),
// particles as frictionless free bodies, the cloth's tree of bodies and tendon equalities (below),
// and the refusal, with the element and line, of the types not built.
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
// A "loop" (checked against MuJoCo 2.2's compiled loop.xml) is the same chain bent into a
// regular n-gon: each element B<i> sits at (s/2)(1 + cos α, sin α, 0) from its parent, turned
// by α = 2π/n about the parent's z axis, so that the hinge points (half a spacing back along
// each element's x) are the polygon's corners; and a soft equality "connect" closes it,
// holding the point (−s/2, 0, 0) of B0 to B<n−1> (solref 0.01 1, solimp 0.99 0.99 0.001, as
// MuJoCo 2.2 compiles it; mapped onto a spring as any MJCF equality, mjcf_loader.cpp).
// As a hard ball joint that closure failed: the ring is planar, where the closure's
// constraints lose rank (a flat polygon flexes out of its plane to first order), and at its
// first contact the post-step projection left a joint error of 0.8 m and the state diverged.
// The soft connect (rigid/equality_rows.hpp) is a spring of its own, never projected. B0 and
// B<n−1> do not collide here (they do in MuJoCo, whose contact holds the ring 1.5 cm open:
// see build_composite_chain). Only a loop held by B0 is built (the one MuJoCo 2.2's sample
// uses and the one checked).
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
// Grid and box composites are refused: a grid's particles need a translation-only joint
// (three slides, with friction), a box couples its bodies by joint equalities and a fixed
// tendon, none of which diffphys has.
//
// A cloth, <composite type="cloth" count="nx ny 1" spacing="s">, is built as MuJoCo
// 2.2 builds it (checked body for body against its compiled cloth.xml and flag.xml,
// tests/mjcf_composite_test.cpp):
// - a tree of nx·ny bodies B<ix>_<iy>, the enclosing body one of them (MuJoCo's naming rule):
//   its column (its ix) runs from it along ±y, each body s from its parent; then the row
//   through it along +x and then −x, each body of the row heading its own column. In file
//   order: the enclosing body's column forward then back, then ix = origin+1 … nx−1 with their
//   columns, then ix = origin−1 … 0 with theirs. Frames are not turned.
// - each body but the enclosing one: two hinges J0_<ix>_<iy>, J1_<ix>_<iy> through its
//   parent's centre, about x and z for a column's bodies and about y and z for the row's
//   (one universal joint here, as rope's); a geom G<ix>_<iy> at its origin, its z axis along
//   x where ix + iy is even and along −y where it is odd (a weave); a site S<ix>_<iy> at its
//   origin; with flatinertia f > 0, the inertia of a box s × s × f·s of its mass, else the
//   geom's.
// - the neighbours the tree does not join (along x, in every row but the enclosing body's)
//   joined by a spatial tendon T<ix>_<iy> from S<ix>_<iy> to S<ix+1>_<iy>, held at its
//   length (0.05 m in both samples) by an <equality tendon> of solref 0.02 1, solimp 0.9 0.95
//   0.001 (mapped onto a spring as any MJCF equality, mjcf_loader.cpp); with <tendon
//   kind="shear">, diagonals TS<ix>_<iy> from S<ix>_<iy> to S<ix+1>_<iy+1> likewise. Here each
//   becomes a soft distance equality (rigid/equality_rows.hpp) between the two body origins.
// The tendons' stiffness and damping are springs MuJoCo adds on top of the equality: reported
// as ignored (flag.xml also disables MuJoCo's constraints altogether and flaps in wind, both
// reported as ignored by the <option> reader; diffphys holds its tendons by the equalities).
#include <tinyxml2.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "io/mjcf_reader.hpp"

namespace diffphys::io::mjcf {

MjcfReader::Composite MjcfReader::read_composite(const XMLElement* element, const MjcfBody& root) {
  Composite composite;
  composite.element = element;
  composite.type = source_.text(element, "type").value_or("particle");  // MuJoCo's default type
  const bool particle = composite.type == "particle";
  const bool cloth = composite.type == "cloth";
  if (composite.type != "rope" && composite.type != "loop" && !cloth && !particle)
    source_.fail(element, "<composite type=\"" + composite.type +
                              "\"> is not supported: " +
                              (composite.type == "grid"
                                   ? "its particles need a translation-only joint with friction, which diffphys has not"
                                   : "MuJoCo 2.2 couples its bodies by joint equalities and a fixed tendon, which "
                                     "diffphys has not") +
                              " (particle, rope, loop and cloth are supported)");
  if (compiler_.global) source_.fail(element, "a <composite> under <compiler coordinate=\"global\"> is not supported");
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (name == "type" || name == "count" || name == "spacing" || name == "prefix") continue;
    if (name == "offset" && particle) continue;
    if (name == "flatinertia" && cloth) continue;
    if (name == "offset") {
      warnings_.add(source_, element,
                    "offset: MuJoCo 2.2 does not use it for a " + composite.type + ", nor does diffphys");
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
  } else if (cloth) {
    for (int k = 0; k < 2; ++k) {
      const double value = count[static_cast<std::size_t>(k)];
      if (value < 2 || value != std::floor(value) || count[2] != 1)
        source_.fail(element, message("a cloth needs count=\"nx ny 1\" with integers nx, ny ≥ 2, got ", count[0], " ",
                                      count[1], " ", count[2]));
      composite.counts[k] = static_cast<int>(value);
    }
    composite.flat_inertia =
        source_.parse_number(element, "flatinertia", source_.text(element, "flatinertia").value_or("0"));
    if (!(composite.flat_inertia >= 0))
      source_.fail(element, message("flatinertia must be non-negative, got ", composite.flat_inertia));
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
  if (cloth) {
    // MuJoCo's rule: the enclosing body is named <prefix>B<ix>_<iy>, that element of the cloth.
    const std::string head = composite.prefix + "B";
    int ix = -1, iy = -1;
    if (root.name.rfind(head, 0) == 0) {
      const std::string rest = root.name.substr(head.size());
      const std::size_t bar = rest.find('_');
      const auto digits = [](const std::string& text) {
        return !text.empty() && text.size() < 9 && text.find_first_not_of("0123456789") == std::string::npos;
      };
      if (bar != std::string::npos && digits(rest.substr(0, bar)) && digits(rest.substr(bar + 1))) {
        ix = std::stoi(rest.substr(0, bar));
        iy = std::stoi(rest.substr(bar + 1));
      }
    }
    if (ix < 0 || ix >= composite.counts[0] || iy < 0 || iy >= composite.counts[1])
      source_.fail(element, message("the body holding a cloth must be named ", head, "<ix>_<iy> with 0 ≤ ix < ",
                                    composite.counts[0], " and 0 ≤ iy < ", composite.counts[1],
                                    " (MuJoCo's rule), got '", root.name, "'"));
    composite.origin = ix;
    composite.origin_y = iy;
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
  if (composite.type == "loop" && origin != 0)
    source_.fail(element, message("a loop is built from its body B0 (MuJoCo 2.2's sample; the one checked against "
                                  "MuJoCo), got '", root.name, "'"));
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
        if (name == "stiffness") {
          warnings_.ignored(child, "<joint> attribute stiffness", "diffphys joints have no springs");
          continue;
        }
        source_.fail(child, "<joint> attribute " + name + " is not supported in a composite");
      }
      composite.joint = child;
    } else if (tag == "tendon" && composite.type == "cloth") {
      read_cloth_tendon(child, composite);
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

MjcfGeom MjcfReader::composite_geom(const Composite& composite, int index, const MjcfBody& body, int index_y) {
  const double half = std::sqrt(0.5);
  if (index_y >= 0) {
    // A cloth's geoms are woven (MuJoCo 2.2's compiled cloth.xml): z along the body's x where
    // ix + iy is even (quaternion (½, ½, ½, ½)), along −y where it is odd ((√½, √½, 0, 0)).
    const Pose placed{Vec3{}, (index + index_y) % 2 == 0 ? Quat{0.5, 0.5, 0.5, 0.5} : Quat{half, half, 0.0, 0.0}};
    MjcfGeom geom = read_geom(composite.geom, class_of(composite.geom, ""), body, &placed);
    geom.shape.name = composite.prefix + "G" + std::to_string(index) + "_" + std::to_string(index_y);
    return geom;
  }
  // At the body's origin, its z axis along the chain (the body's x axis).
  const Pose placed{Vec3{}, Quat{half, 0.0, half, 0.0}};
  MjcfGeom geom = read_geom(composite.geom, class_of(composite.geom, ""), body, &placed);
  geom.shape.name = composite.prefix + "G" + std::to_string(index);
  return geom;
}

void MjcfReader::build_composite_chain(const Composite& composite, int root_index) {
  if (composite.type == "particle") return build_particles(composite);
  if (composite.type == "cloth") return build_cloth(composite, root_index);
  const bool loop = composite.type == "loop";
  // A loop's corner angle α = 2π/n (see the file comment).
  const double turn = 2.0 * kPi / composite.count;
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
    const double half_spacing = 0.5 * composite.spacing;
    const Pose local = loop ? Pose{Vec3{half_spacing * (1.0 + std::cos(turn)), half_spacing * std::sin(turn), 0.0},
                                   Quat{std::cos(0.5 * turn), 0.0, 0.0, std::sin(0.5 * turn)}}
                            : Pose{Vec3{step * composite.spacing, 0.0, 0.0}, Quat{}};
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
  int last = root_index;
  for (int index = composite.origin + 1, parent = root_index; index < composite.count; ++index)
    last = parent = add_element(parent, index, +1);
  for (int index = composite.origin - 1, parent = root_index; index >= 0; --index)
    parent = add_element(parent, index, -1);
  if (!loop) return;
  // The closure: B0's point (−s/2, 0, 0), B<n−1>'s corner, held by a soft connect.
  const MjcfBody& first = bodies_[static_cast<std::size_t>(root_index)];
  MjcfEquality closure;
  closure.element = composite.element;
  closure.spec.type = EqualityType::Connect;
  closure.spec.body_a = first.name;
  closure.spec.body_b = bodies_[static_cast<std::size_t>(last)].name;
  closure.spec.anchor = first.world.position + first.world.orientation.rotate({-0.5 * composite.spacing, 0, 0});
  closure.spec.time_constant = 0.01;  // MuJoCo 2.2's compiled loop.xml: solref 0.01 1,
  closure.spec.damping_ratio = 1.0;   // solimp 0.99 0.99 0.001
  closure.impedance = 0.99;
  equalities_.push_back(closure);
  // Their capsules overlap at that corner by construction, as every pair of neighbours does;
  // the hinges keep the others from colliding, nothing keeps these two. In MuJoCo 2.2 they do
  // collide, and that contact holds the ring open against its closure (1.5 cm in loop.xml at
  // rest; 5.5 cm against diffphys's stiffer contacts): here they are excluded, like jointed
  // neighbours (docs/robot-formats.md).
  exclusions_.emplace_back(closure.spec.body_a, closure.spec.body_b);
}

// ---------------------------------------------------------------------------------------
// Cloth (see the file comment)
namespace {

std::string cloth_suffix(int ix, int iy) { return std::to_string(ix) + "_" + std::to_string(iy); }

}  // namespace

void MjcfReader::read_cloth_tendon(const XMLElement* element, Composite& composite) {
  const std::string kind = source_.text(element, "kind").value_or("");
  if (kind != "main" && kind != "shear")
    source_.fail(element, "<tendon kind=\"" + kind + "\"> is not supported in a cloth (main and shear are)");
  if (kind == "shear") composite.shear = true;
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (name == "kind" || name == "class" || name == "group" || name == "rgba" || name == "width" ||
        name == "material")
      continue;
    if (name == "stiffness" || name == "damping") {
      warnings_.ignored(element, "<tendon> attribute " + name,
                        "a cloth's tendons are held at their length by their equalities; MuJoCo's spring and "
                        "damper on them are not applied");
      continue;
    }
    source_.fail(element, "<tendon> attribute " + name + " is not supported in a composite");
  }
}

void MjcfReader::apply_flat_inertia(const Composite& composite, MjcfBody& body) const {
  if (!(composite.flat_inertia > 0)) return;
  const double s = composite.spacing, thickness = composite.flat_inertia * composite.spacing;
  io::MassProperties box;
  box.mass = body.mass;
  box.center = Vec3{};
  box.inertia(0, 0) = body.mass * (s * s + thickness * thickness) / 12.0;
  box.inertia(1, 1) = box.inertia(0, 0);
  box.inertia(2, 2) = body.mass * (s * s + s * s) / 12.0;
  body.principal = io::principal_frame(box, body.world.position, body.world.orientation);
}

void MjcfReader::build_cloth(const Composite& composite, int root_index) {
  const int nx = composite.counts[0], ny = composite.counts[1];
  const double s = composite.spacing;
  const double damping =
      composite.joint ? number(composite.joint, "joint", "damping", class_of(composite.joint, "")).value_or(0.0) : 0.0;
  if (damping < 0) source_.fail(composite.joint, message("damping must be non-negative, got ", damping));
  const XMLElement* joint_element = composite.joint ? composite.joint : composite.element;
  std::vector<int> body_of(static_cast<std::size_t>(nx * ny), -1);
  const auto slot = [&](int ix, int iy) -> int& { return body_of[static_cast<std::size_t>(ix * ny + iy)]; };
  const auto add_site = [&](int ix, int iy, int body_index) {
    const std::string name = composite.prefix + "S" + cloth_suffix(ix, iy);
    const MjcfBody& body = bodies_[static_cast<std::size_t>(body_index)];
    if (!sites_.emplace(name, MjcfSite{composite.element, body_index, body.world.position, true}).second)
      source_.fail(composite.element, "the composite's site name '" + name + "' is taken already");
  };
  // One element, `offset` (its parent's frame) from its parent; hinges about `axis0` and z.
  const auto add_element = [&](int parent_index, int ix, int iy, const Vec3& offset, const Vec3& axis0) {
    MjcfBody body;
    body.element = composite.element;
    body.parent = parent_index;
    body.name = composite.prefix + "B" + cloth_suffix(ix, iy);
    if (!body_names_.insert(body.name).second)
      source_.fail(composite.element, "the composite's body name '" + body.name + "' is taken already");
    const MjcfBody& parent = bodies_[static_cast<std::size_t>(parent_index)];
    body.world = parent.world * Pose{offset, Quat{}};
    for (int axis = 0; axis < 2; ++axis) {
      MjcfJoint joint;
      joint.element = joint_element;
      joint.name = composite.prefix + "J" + std::to_string(axis) + "_" + cloth_suffix(ix, iy);
      joint.type = "hinge";
      joint.anchor = parent.world.position;
      joint.axis = body.world.orientation.rotate(axis == 0 ? axis0 : Vec3{0, 0, 1});
      joint.damping = damping;
      body.joints.push_back(joint);
    }
    body.weld = static_cast<int>(bodies_.size());
    const int body_index = body.weld;
    body.geoms.push_back(composite_geom(composite, ix, body, iy));
    std::vector<io::MassProperties> parts{body.geoms.back().properties};
    const io::MassProperties total = io::combine(parts);
    body.mass = total.mass;
    body.principal = io::principal_frame(total, body.world.position, body.world.orientation);
    apply_flat_inertia(composite, body);
    bodies_.push_back(body);
    slot(ix, iy) = body_index;
    add_site(ix, iy, body_index);
    return body_index;
  };
  const Vec3 along_x{1, 0, 0}, along_y{0, 1, 0};
  const auto column = [&](int ix, int head) {
    for (int iy = composite.origin_y + 1, parent = head; iy < ny; ++iy)
      parent = add_element(parent, ix, iy, {0, s, 0}, along_x);
    for (int iy = composite.origin_y - 1, parent = head; iy >= 0; --iy)
      parent = add_element(parent, ix, iy, {0, -s, 0}, along_x);
  };
  slot(composite.origin, composite.origin_y) = root_index;
  add_site(composite.origin, composite.origin_y, root_index);
  column(composite.origin, root_index);
  for (int ix = composite.origin + 1, parent = root_index; ix < nx; ++ix) {
    parent = add_element(parent, ix, composite.origin_y, {s, 0, 0}, along_y);
    column(ix, parent);
  }
  for (int ix = composite.origin - 1, parent = root_index; ix >= 0; --ix) {
    parent = add_element(parent, ix, composite.origin_y, {-s, 0, 0}, along_y);
    column(ix, parent);
  }
  // The tendons the tree leaves out, each held at its length by a soft distance equality.
  const auto hold = [&](int ix, int iy, int jx, int jy) {
    const MjcfBody& a = bodies_[static_cast<std::size_t>(slot(ix, iy))];
    const MjcfBody& b = bodies_[static_cast<std::size_t>(slot(jx, jy))];
    MjcfEquality equality;
    equality.element = composite.element;
    equality.spec.type = EqualityType::Distance;
    equality.spec.body_a = a.name;
    equality.spec.body_b = b.name;
    equality.spec.anchor_a = a.world.position;
    equality.spec.anchor_b = b.world.position;
    equality.spec.time_constant = 0.02;  // MuJoCo 2.2's compiled cloth: solref 0.02 1,
    equality.spec.damping_ratio = 1.0;   // solimp 0.9 0.95 0.001
    equality.impedance = 0.95;
    equalities_.push_back(equality);
  };
  for (int iy = 0; iy < ny; ++iy)
    if (iy != composite.origin_y)
      for (int ix = 0; ix + 1 < nx; ++ix) hold(ix, iy, ix + 1, iy);
  if (composite.shear)
    for (int ix = 0; ix + 1 < nx; ++ix)
      for (int iy = 0; iy + 1 < ny; ++iy) hold(ix, iy, ix + 1, iy + 1);
}

}  // namespace diffphys::io::mjcf
