// io/mjcf_loader.cpp — a subset of MuJoCo's MJCF (diffphys/robot_loaders.hpp,
// docs/robot-formats.md).
//
// Owns the top level of an MJCF file: <include> expansion (io/xml_source.hpp), the sections
// and the order they are read in (settings first; repeated sections all read), and the entry
// points parse_mjcf / load_mjcf. The reader as a whole maps an MJCF model onto ModelBuilder
// specs (members by concern: io/mjcf_reader.hpp), following MuJoCo 2.2's
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
// - actuators: <motor> → Motor (control = gear × ctrl), <position> → Servo (gain from kp);
// - <include> (spliced in place), repeated sections (all read), coordinate="global", mass
//   from mesh geoms (io/mesh_mass.hpp), mocap bodies (kinematic: driven by the state);
// - <composite> of type particle, rope, loop and cloth (io/mjcf_composite.cpp); the others refused;
// - <equality> connect and tendon (on a two-site spatial tendon) as soft equality constraints,
//   which put the model in the convex formulation (below).
// Everything else is refused (structure diffphys cannot represent) or reported in
// Scene::warnings with its line (other tendons and equalities, sensors, muscles, solver tuning, ...).
//
// Sites, <tendon> and <equality> as far as diffphys's soft equality
// constraints represent them (rigid/equality_rows.hpp, docs/robot-formats.md):
// - <site name pos>: a point of its body, kept to anchor tendons; a site no held tendon uses is
//   reported as ignored (sensors and actuators on sites are not supported).
// - <tendon><spatial> of exactly two <site> children: its length is the distance between them.
//   Any other tendon (fixed, wrapping geoms, more sites) is reported as ignored, and refused,
//   with its element and line, when an equality would hold it.
// - <equality><connect body1 body2 anchor>: anchor in body1's frame (MuJoCo), body2 default the
//   world: a soft connect. <equality><tendon tendon1 polycoef>: the tendon held at its
//   reference length plus polycoef[0] (MuJoCo's L − L₀ = c₀ without tendon2): a soft distance.
//   solref "timeconst dampratio" (default 0.02 1) and solimp's dmax d (default 0.95) → the
//   equality's damping ratio and the time constant max(τ, 2 dt) √(1 − d), the spring whose
//   static deflection under a load is MuJoCo's (add_equalities); solimp's dmin and width are
//   reported as ignored. Weld, joint and distance equalities are reported as ignored (not
//   built), as before.
// A file with equalities is built in the convex formulation (its equality rows are compliant
// rows of that formulation; the complementarity formulation has none).
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "diffphys/robot_loaders.hpp"
#include "io/mjcf_reader.hpp"

namespace diffphys {
namespace io::mjcf {

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
    if (tag == "compiler") read_compiler(element);
    if (tag == "default") read_defaults(element, "");
  }
  // Assets next: mesh geoms may take their mass from them, wherever <asset> stands.
  for (const XMLElement* element = root->FirstChildElement(); element; element = element->NextSiblingElement())
    if (std::string_view(element->Name()) == "asset") read_assets(element);
  MjcfBody world;
  world.name = "world";
  world.element = root;
  bodies_.push_back(world);
  // Sections may repeat (several <worldbody>, <actuator>, <contact>, <asset>, <default>):
  // MuJoCo reads each in turn into the one model, so each is read here and nothing replaced.
  std::vector<const XMLElement*> actuator_sections, tendon_sections, equality_sections;
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
              message("collision exclusion '", exclusions_.back().first, "'-'", exclusions_.back().second, "'"), child);
        } else {
          note_unsupported(child, "explicit contact pairs are not supported");
        }
      }
    } else if (tag == "asset") {
      continue;  // read before the bodies
    } else if (tag == "visual" || tag == "statistic") {
      warnings_.ignored(element, "<" + tag + ">", "drawing only");
    } else if (tag == "size") {
      warnings_.ignored(element, "<size>", "MuJoCo memory sizes; diffphys sizes itself");
    } else if (tag == "tendon") {
      tendon_sections.push_back(element);  // after the bodies: tendons end at their sites
    } else if (tag == "equality") {
      equality_sections.push_back(element);
    } else if (tag == "sensor" || tag == "keyframe" || tag == "custom" ||
               tag == "extension" || tag == "deformable" || tag == "skin") {
      note_unsupported(element, "diffphys has no " + tag + " elements");
      for (const XMLElement* child = element->FirstChildElement(); child; child = child->NextSiblingElement())
        note_unsupported(child, "inside <" + tag + ">");
    } else {
      note_unsupported(element, "unknown top-level element");
    }
  }
  for (const XMLElement* section : tendon_sections) read_tendons(section);
  for (const XMLElement* section : equality_sections) read_equalities(section);
  add_bodies(builder);
  add_joints(builder);
  add_equalities(builder);
  add_collision_filters(builder);
  read_actuators(actuator_sections, builder);

  Scene scene = item_lines_.build(builder, source_);
  scene.warnings = warnings_.finish(source_);
  return scene;
}

std::optional<std::pair<double, double>> MjcfReader::limited_range(const XMLElement* element, const std::string& tag,
                                                                   const char* flag, const char* range_name,
                                                                   const std::string& class_name) const {
  const auto range = numbers(element, tag, range_name, class_name, {2});
  const std::string value = attribute(element, tag, flag, class_name).value_or("auto");
  bool on = false;
  if (value == "true") {
    on = true;
  } else if (value == "auto") {
    if (range && !compiler_.auto_limits)
      source_.fail(element, message(range_name, " given but not ", flag, ": say ", flag, "=\"true\" or \"false\", or set ",
                                    "<compiler autolimits=\"true\"> (MuJoCo 2.2 refuses this too)"));
    on = range.has_value();
  } else if (value != "false") {
    source_.fail(element, message(flag, " must be true, false or auto, got '", value, "'"));
  }
  if (!on) return std::nullopt;
  if (!range) source_.fail(element, message(flag, "=\"true\" needs a ", range_name));
  if ((*range)[0] > (*range)[1])
    source_.fail(element, message(range_name, " lower bound ", (*range)[0], " exceeds upper bound ", (*range)[1]));
  return std::pair{(*range)[0], (*range)[1]};
}

void MjcfReader::read_assets(const XMLElement* element) {
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
}

// ---------------------------------------------------------------------------------------
// Sites, tendons and equalities (see the file comment)
void MjcfReader::read_site(const XMLElement* element, int body_index) {
  const auto name = source_.text(element, "name");
  if (!name) {
    unnamed_sites_.push_back(element);
    return;
  }
  const MjcfBody& body = bodies_[static_cast<std::size_t>(body_index)];
  const Pose given{source_.vec3(element, "pos").value_or(Vec3{}), Quat{}};
  const Pose local = in_body_frame(given, body);
  MjcfSite site{element, body_index, body.world.position + body.world.orientation.rotate(local.position), false};
  if (!sites_.emplace(*name, site).second) source_.fail(element, "duplicate site name '" + *name + "'");
}

void MjcfReader::read_tendons(const XMLElement* section) {
  bool unsupported = false;
  for (const XMLElement* child = section->FirstChildElement(); child; child = child->NextSiblingElement()) {
    const std::string tag = child->Name();
    int site_count = 0, other_count = 0;
    for (const XMLElement* part = child->FirstChildElement(); part; part = part->NextSiblingElement())
      (std::string_view(part->Name()) == "site" ? site_count : other_count) += 1;
    const auto name = source_.text(child, "name");
    if (tag == "spatial" && site_count == 2 && other_count == 0 && name) {
      if (!tendons_.emplace(*name, child).second) source_.fail(child, "duplicate tendon name '" + *name + "'");
      continue;
    }
    unsupported = true;
    note_unsupported(child, "diffphys builds a tendon only as a named spatial tendon between two sites, held by an "
                            "<equality tendon>");
  }
  if (unsupported) note_unsupported(section, "diffphys has tendons only as held two-site spatial tendons");
}

void MjcfReader::read_solref(const XMLElement* element, MjcfEquality& equality) {
  if (const auto given = source_.text(element, "solref")) {
    const std::vector<double> solref = source_.parse_numbers(element, "solref", *given, {2});
    if (!(solref[0] > 0 && solref[1] > 0))
      source_.fail(element, message("solref must be a positive time constant and damping ratio, got ", solref[0], " ",
                                    solref[1], " (MuJoCo's direct stiffness and damping, negative, are not supported)"));
    equality.spec.time_constant = solref[0];
    equality.spec.damping_ratio = solref[1];
  }
  if (const auto given = source_.text(element, "solimp")) {
    const std::vector<double> solimp = source_.parse_numbers(element, "solimp", *given, {3, 5});
    if (!(solimp[1] > 0 && solimp[1] < 1))
      source_.fail(element, message("solimp's dmax must lie in (0, 1), got ", solimp[1]));
    equality.impedance = solimp[1];
    if (solimp[0] != solimp[1])
      warnings_.ignored(element, "<" + std::string(element->Name()) + "> attribute solimp's dmin and width",
                        "diffphys's spring takes MuJoCo's impedance beyond the width, dmax, at every error");
  }
}

void MjcfReader::read_equalities(const XMLElement* section) {
  for (const XMLElement* child = section->FirstChildElement(); child; child = child->NextSiblingElement()) {
    const std::string tag = child->Name();
    if (tag != "connect" && tag != "tendon" && tag != "weld") {
      note_unsupported(child, "diffphys builds <connect>, <weld> and <tendon> equalities only");
      continue;
    }
    for (const tinyxml2::XMLAttribute* a = child->FirstAttribute(); a; a = a->Next()) {
      const std::string name = a->Name();
      if (name == "name" || name == "solref" || name == "active") continue;
      if (tag == "connect" && (name == "body1" || name == "body2" || name == "anchor")) continue;
      if (tag == "weld" && (name == "body1" || name == "body2" || name == "relpose")) continue;
      if (tag == "tendon" && (name == "tendon1" || name == "polycoef")) continue;
      if (name == "solimp") continue;
      source_.fail(child, "<" + tag + "> attribute " + name + " is not supported");
    }
    if (source_.text(child, "active").value_or("true") == "false") {
      warnings_.add(source_, child, "inactive equality (active=\"false\") skipped");
      continue;
    }
    MjcfEquality equality;
    equality.element = child;
    equality.spec.name = source_.text(child, "name").value_or("");
    read_solref(child, equality);
    const auto body_named = [&](const std::string& name) -> const MjcfBody& {
      for (const MjcfBody& body : bodies_)
        if (body.name == name) return body;
      source_.fail(child, "unknown body '" + name + "'");
    };
    if (tag == "connect") {
      const MjcfBody& first = body_named(source_.required_text(child, "body1"));
      const std::string second = source_.text(child, "body2").value_or("world");
      body_named(second);
      const Vec3 anchor = source_.vec3(child, "anchor").value_or(Vec3{});
      equality.spec.type = EqualityType::Connect;
      equality.spec.body_a = first.name;
      equality.spec.body_b = second;
      equality.spec.anchor = compiler_.global ? anchor : first.world.position + first.world.orientation.rotate(anchor);
    } else if (tag == "weld") {
      // MuJoCo 2.2: body2's frame held at `relpose` (position, then quaternion w x y z) in
      // body1's frame; a zero quaternion (the default "0 1 0 0 0 0 0") means the pose the file
      // puts them in. Here: body2's origin on body1's point relpose.position (connect rows),
      // and body2's orientation at relpose.quaternion relative to body1's.
      const MjcfBody& first = body_named(source_.required_text(child, "body1"));
      const MjcfBody& second = body_named(source_.text(child, "body2").value_or("world"));
      const std::vector<double> pose =
          source_.parse_numbers(child, "relpose", source_.text(child, "relpose").value_or("0 1 0 0 0 0 0"), {7});
      equality.spec.type = EqualityType::Weld;
      equality.spec.body_a = first.name;
      equality.spec.body_b = second.name;
      if (pose[3] == 0 && pose[4] == 0 && pose[5] == 0 && pose[6] == 0) {
        equality.spec.anchor = second.world.position;
      } else {
        Quat relative{pose[3], pose[4], pose[5], pose[6]};
        const double length = std::sqrt(relative.w * relative.w + relative.x * relative.x + relative.y * relative.y +
                                        relative.z * relative.z);
        if (!(length > 0 && std::isfinite(length)))
          source_.fail(child, message("relpose's quaternion (", pose[3], " ", pose[4], " ", pose[5], " ", pose[6],
                                      ") is not a rotation"));
        relative = Quat{relative.w / length, relative.x / length, relative.y / length, relative.z / length};
        equality.spec.separate_anchors = true;
        equality.spec.anchor_a = first.world.position + first.world.orientation.rotate(Vec3{pose[0], pose[1], pose[2]});
        equality.spec.anchor_b = second.world.position;
        equality.spec.relative = relative;
      }
    } else {
      const std::string tendon = source_.required_text(child, "tendon1");
      const auto found = tendons_.find(tendon);
      if (found == tendons_.end())
        source_.fail(child, "tendon '" + tendon +
                                "' is not a named spatial tendon between two sites, the only tendon diffphys can hold");
      const XMLElement* spatial = found->second;
      for (const tinyxml2::XMLAttribute* a = spatial->FirstAttribute(); a; a = a->Next()) {
        const std::string name = a->Name();
        if (name == "name" || name == "class" || name == "width" || name == "rgba" || name == "material" ||
            name == "group")
          continue;
        warnings_.ignored(spatial, "<spatial> attribute " + name,
                          "diffphys models a tendon only as the length its equality holds");
      }
      const MjcfSite* ends[2] = {nullptr, nullptr};
      int k = 0;
      for (const XMLElement* part = spatial->FirstChildElement(); part; part = part->NextSiblingElement(), ++k) {
        const std::string site = source_.required_text(part, "site");
        const auto at = sites_.find(site);
        if (at == sites_.end()) source_.fail(part, "unknown site '" + site + "'");
        at->second.used = true;
        ends[k] = &at->second;
      }
      const double coefficient =
          source_.parse_numbers(child, "polycoef", source_.text(child, "polycoef").value_or("0 1 0 0 0"), {5})[0];
      const double length = norm(ends[1]->world - ends[0]->world) + coefficient;
      if (!(length > 0))
        source_.fail(child, message("the held length of tendon '", tendon, "' must be positive, got ", length));
      equality.spec.type = EqualityType::Distance;
      equality.spec.body_a = bodies_[static_cast<std::size_t>(ends[0]->body)].name;
      equality.spec.body_b = bodies_[static_cast<std::size_t>(ends[1]->body)].name;
      equality.spec.anchor_a = ends[0]->world;
      equality.spec.anchor_b = ends[1]->world;
      equality.spec.length = length;
      held_tendons_.insert(tendon);
    }
    equalities_.push_back(equality);
  }
}

void MjcfReader::add_equalities(ModelBuilder& builder) {
  for (const auto& [name, spatial] : tendons_)
    if (!held_tendons_.contains(name))
      note_unsupported(spatial, "a tendon no <equality tendon> holds has no effect in diffphys");
  for (const auto& [name, site] : sites_)
    if (!site.used && site.element && std::string_view(site.element->Name()) == "site")
      warnings_.ignored(site.element, "<site>", "diffphys uses sites only as the ends of held spatial tendons");
  for (const XMLElement* site : unnamed_sites_)
    warnings_.ignored(site, "<site>", "diffphys uses sites only as the ends of held spatial tendons");
  if (equalities_.empty()) return;
  builder.solver.formulation = Formulation::Convex;
  for (std::size_t e = 0; e < equalities_.size(); ++e) {
    MjcfEquality& equality = equalities_[e];
    // MuJoCo names nothing here; equality<k> as unnamed bodies are body<k>.
    if (equality.spec.name.empty()) equality.spec.name = "equality" + std::to_string(e);
    // MuJoCo's refsafe raises a time constant below 2 dt to 2 dt. Its impedance d (solimp's
    // dmax) then scales the static deflection under a load to (1 − d) times that of the spring
    // of its solref (MuJoCo 2.2: a 2 kg body hanging on a connect of solref 0.05 1 sags
    // 1.226 mm = 0.05 g τ², and g τ² = 24.5 mm with d → 0). diffphys's row is the spring alone,
    // so it gets the time constant of the same static stiffness, τ √(1 − d); its free relaxation
    // is then faster than MuJoCo's by 1/√(1 − d) (MjcfEquality.HangingMassSagsAsInMujoco).
    equality.spec.time_constant =
        std::max(equality.spec.time_constant, 2.0 * builder.dt) * std::sqrt(1.0 - equality.impedance);
    item_lines_.note("equality '" + equality.spec.name + "'", equality.element);
    builder.add_equality(equality.spec);
  }
}

}  // namespace io::mjcf

namespace {

// <include> elements are spliced in before anything is read, as MuJoCo's parser does, so
// every section below sees the included elements in place (with their own file and line).
Scene read_mjcf(io::XmlSource& source) {
  if (std::string_view(source.root()->Name()) != "mujoco")
    source.fail(source.root(), "not an MJCF file: the root element must be <mujoco>");
  source.expand_includes("mujoco");
  return io::mjcf::MjcfReader(source).read();
}

}  // namespace

Scene parse_mjcf(std::string_view xml_text, std::string_view source_name, const std::filesystem::path& base_directory) {
  io::XmlSource source(std::string(xml_text), std::string(source_name), base_directory);
  return read_mjcf(source);
}

Scene load_mjcf(const std::filesystem::path& path) {
  const std::unique_ptr<io::XmlSource> source = io::XmlSource::load(path);
  return read_mjcf(*source);
}

}  // namespace diffphys
