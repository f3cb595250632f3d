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
//   from mesh geoms (io/mesh_mass.hpp), mocap bodies (static, with a warning);
// - <composite> is refused: MuJoCo expands it into bodies, joints and constraints diffphys
//   cannot build.
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
