// io/mjcf_settings.cpp — MJCF settings that change how the rest of a file reads: which
// attributes each element may carry (used, drawing only, or reported as ignored),
// <compiler>, <option> and <default> classes (io/mjcf_reader.hpp).
#include <tinyxml2.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "io/mjcf_reader.hpp"

namespace diffphys::io::mjcf {

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
       {{"name", "childclass", "pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "mocap"},
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
  if (const auto value = source_.text(element, "exactmeshinertia"))
    compiler_.exact_mesh_inertia = source_.parse_bool(element, "exactmeshinertia", *value);
  if (const auto value = source_.text(element, "coordinate")) {
    if (*value != "local" && *value != "global")
      source_.fail(element, "coordinate must be local or global, got '" + *value + "'");
    compiler_.global = *value == "global";
  }
  for (const tinyxml2::XMLAttribute* a = element->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    if (name == "angle" || name == "eulerseq" || name == "inertiafromgeom" || name == "autolimits" ||
        name == "coordinate" || name == "meshdir" || name == "exactmeshinertia" || name == "texturedir" ||
        name == "assetdir" || name == "discardvisual" || name == "strippath" || name == "convexhull")
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

}  // namespace diffphys::io::mjcf
