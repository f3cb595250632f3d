// model/scene_json.cpp — the JSON scene loader (diffphys/scene.hpp).
//
// Owns the mapping from a scene file onto ModelBuilder's specs and the *format* checks of
// that file: JSON syntax (with line and column), duplicate keys, unknown keys (with a
// "did you mean" for typos), wrong value types, arrays of the wrong length, unknown enum
// strings, fields that the item's type would silently ignore. Every refusal names the file,
// the JSON path (bodies[1].mass) and the offending value. Physical checks (negative mass,
// dt <= 0, unknown or duplicate names, ...) stay in ModelBuilder::build(), so a scene file
// and C++ code are refused by the same rules; their Errors are re-thrown prefixed with the
// file name. The format is documented in docs/scene-format.md.
#include "diffphys/scene.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/robot_loaders.hpp"

namespace diffphys {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------------------
// Paths and value descriptions for messages.

std::string key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string element_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

// The value as it appears in the file, shortened so a message stays on one line.
std::string describe(const Json& value) {
  constexpr std::size_t max_length = 60;
  std::string text = value.dump();
  if (text.size() > max_length) text = text.substr(0, max_length - 3) + "...";
  return text;
}

// 1-based (line, column) of a byte offset in the text.
std::pair<int, int> line_and_column(std::string_view text, std::size_t offset) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// The run of letters, digits and number characters (.+-) containing text[offset], if any.
std::string word_around(std::string_view text, std::size_t offset) {
  const auto is_word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' ||
           c == '-';
  };
  if (offset >= text.size() || !is_word_char(text[offset])) return "";
  std::size_t begin = offset, end = offset;
  while (begin > 0 && is_word_char(text[begin - 1])) --begin;
  while (end < text.size() && is_word_char(text[end])) ++end;
  return std::string(text.substr(begin, end - begin));
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string join(std::initializer_list<std::string_view> words) {
  std::string joined;
  for (const std::string_view word : words) {
    if (!joined.empty()) joined += ", ";
    joined += word;
  }
  return joined;
}

// ---------------------------------------------------------------------------------------
// Parsing with duplicate-key detection.
//
// nlohmann::json keeps the last of two equal keys without a word; a scene that says "mass"
// twice is a mistake we refuse. The parser callback sees every key as it is read; a stack of
// open containers gives the path and the keys seen so far in each object.

class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(std::string_view source_name) : source_name_(source_name) {}

  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        begin_element();
        open_.push_back({true, {}, {}, 0});
        break;
      case Json::parse_event_t::array_start:
        begin_element();
        open_.push_back({false, {}, {}, 0});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case Json::parse_event_t::key: {
        Container& object = open_.back();
        const std::string key = parsed.get<std::string>();
        if (std::find(object.keys.begin(), object.keys.end(), key) != object.keys.end()) {
          const std::string path = path_to_open_object();
          throw Error(message(source_name_, ": ", path.empty() ? "" : path + ": ",
                              "duplicate key \"", key, "\"", " (each key may appear once)"));
        }
        object.keys.push_back(key);
        object.current_key = key;
        break;
      }
      case Json::parse_event_t::value: begin_element(); break;
    }
    return true;
  }

 private:
  struct Container {
    bool is_object = false;
    std::vector<std::string> keys;  // object: keys read so far
    std::string current_key;        // object: the key whose value is being read
    std::size_t elements = 0;       // array: elements started so far
  };

  void begin_element() {
    if (!open_.empty() && !open_.back().is_object) ++open_.back().elements;
  }

  // Path of the innermost open object (the one receiving keys).
  std::string path_to_open_object() const {
    std::string path;
    for (std::size_t i = 0; i + 1 < open_.size(); ++i) {
      const Container& container = open_[i];
      path = container.is_object ? key_path(path, container.current_key)
                                 : element_path(path, container.elements - 1);
    }
    return path;
  }

  std::string_view source_name_;
  std::vector<Container> open_;
};

Json parse_json(std::string_view text, std::string_view source_name) {
  try {
    return Json::parse(text.begin(), text.end(), DuplicateKeyCheck(source_name));
  } catch (const Json::parse_error& error) {
    // what() is "[json.exception.parse_error.101] parse error at line L, column C: <detail>";
    // keep the position and the detail, drop the library's prefix.
    const std::string what = error.what();
    const auto [line, column] =
        line_and_column(text, error.byte > 0 ? static_cast<std::size_t>(error.byte - 1) : 0);
    std::string detail = what;
    if (const auto at = what.find("column "); at != std::string::npos) {
      if (const auto colon = what.find(": ", at); colon != std::string::npos)
        detail = what.substr(colon + 2);
    }
    // The parser stops at the first bad character; show the whole word it belongs to, and
    // explain the common case of NaN or Infinity written as a bare word.
    std::string hint;
    const std::string word = word_around(text, error.byte > 0 ? error.byte - 1 : 0);
    if (!word.empty()) {
      std::string lowered = word;
      std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (lowered.find("nan") != std::string::npos || lowered.find("inf") != std::string::npos) {
        hint = message(" ('", word, "': JSON has no NaN or Infinity; every number must be finite)");
      } else if (detail.find("invalid literal") != std::string::npos) {
        hint = message(" (near '", word, "')");
      }
    }
    throw Error(
        message(source_name, ": line ", line, ", column ", column, ": JSON ", detail, hint));
  } catch (const Json::out_of_range& error) {
    // A number too large for a double, e.g. 1e400: "number overflow parsing '1e400'".
    const std::string what = error.what();
    std::string detail = what.substr(what.find(']') + 2);
    std::string location;
    if (const auto quote = what.find('\''); quote != std::string::npos) {
      const std::string literal = what.substr(quote + 1, what.rfind('\'') - quote - 1);
      if (const auto offset = text.find(literal); offset != std::string_view::npos) {
        const auto [line, column] = line_and_column(text, offset);
        location = message("line ", line, ", column ", column, ": ");
      }
    }
    throw Error(
        message(source_name, ": ", location, detail, " (numbers must fit a double and be finite)"));
  } catch (const Json::exception& error) {
    throw Error(message(source_name, ": cannot read JSON: ", error.what()));
  }
}

// ---------------------------------------------------------------------------------------
// Where each named item sits in the file.
//
// ModelBuilder::build() names items as "body 'ball'", "joint 'hinge'", "actuator 'servo'";
// it cannot know JSON paths ("solver: ..." and "world: ..." already read as paths). The
// reader notes the path of every named item so that a build error can be reported as
// "scene.json: bodies[1]: body 'ball': mass must be positive, got -1".

class ItemLocations {
 public:
  void note(std::string item, std::string path) {
    entries_.push_back({std::move(item), std::move(path)});
  }

  // `builder_message` prefixed with the JSON path of the item it starts with, if any.
  std::string locate(const std::string& builder_message) const {
    const bool is_duplicate = builder_message.find("duplicate") != std::string::npos;
    const Entry* found = nullptr;
    for (const Entry& entry : entries_) {
      const bool starts_with_item =
          builder_message.starts_with(entry.item) &&
          (builder_message.size() == entry.item.size() ||
           builder_message[entry.item.size()] == ':' || builder_message[entry.item.size()] == ' ');
      if (!starts_with_item) continue;
      found = &entry;
      // A repeated name is refused at its second occurrence; anything else at its first.
      if (!is_duplicate) break;
    }
    return found ? found->path + ": " + builder_message : builder_message;
  }

 private:
  struct Entry {
    std::string item;  // as the builder names it: "body 'ball'"
    std::string path;  // as the file does: "bodies[1]"
  };
  std::vector<Entry> entries_;
};

// ---------------------------------------------------------------------------------------
// Reading typed values; every failure names the file, the path and the value.

class SceneReader {
 public:
  // Mesh files are found relative to `base_directory` (the scene file's folder).
  SceneReader(std::string_view source_name, std::filesystem::path base_directory)
      : source_name_(source_name), base_directory_(std::move(base_directory)) {}

  // Maps the document onto a builder, noting in `locations` where each named item is.
  ModelBuilder read(const Json& root, ItemLocations& locations) const;

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw Error(path.empty() ? message(source_name_, ": ", what)
                             : message(source_name_, ": ", path, ": ", what));
  }

  static const char* type_name(const Json& value) {
    switch (value.type()) {
      case Json::value_t::null: return "null";
      case Json::value_t::boolean: return "a boolean";
      case Json::value_t::string: return "a string";
      case Json::value_t::array: return "an array";
      case Json::value_t::object: return "an object";
      case Json::value_t::binary: return "binary data";
      case Json::value_t::discarded: return "nothing";
      default: return "a number";
    }
  }

  // Refuses keys outside `allowed`, suggesting the nearest allowed key for a typo.
  void check_keys(const Json& object, const std::string& path,
                  std::initializer_list<std::string_view> allowed) const {
    if (!object.is_object())
      fail(path, message("expected an object, got ", type_name(object), " ", describe(object)));
    for (const auto& [key, value] : object.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string_view nearest;
      std::size_t nearest_distance = std::numeric_limits<std::size_t>::max();
      for (const std::string_view candidate : allowed) {
        const std::size_t distance = edit_distance(key, candidate);
        if (distance < nearest_distance) {
          nearest = candidate;
          nearest_distance = distance;
        }
      }
      const std::size_t typo_budget = std::max<std::size_t>(1, key.size() / 4);
      if (nearest_distance <= typo_budget) {
        fail(path, message("unknown key \"", key, "\" (did you mean \"", nearest, "\"?)"));
      }
      fail(path, message("unknown key \"", key, "\" (allowed here: ", join(allowed), ")"));
    }
  }

  void require_key(const Json& object, const std::string& path, const char* key) const {
    if (!object.contains(key)) fail(path, message("missing required key \"", key, "\""));
  }

  // Refuses a key that the item's type would ignore, e.g. "half_extents" on a sphere.
  void refuse_key(const Json& object, const std::string& path, const char* key,
                  std::string_view reason) const {
    if (object.contains(key))
      fail(key_path(path, key), message("not used ", reason, ", got ", describe(object[key])));
  }

  double read_number(const Json& value, const std::string& path) const {
    if (value.is_number()) {
      const double number = value.get<double>();
      if (!std::isfinite(number)) fail(path, message("expected a finite number, got ", number));
      return number;
    }
    if (value.is_string()) {
      std::string lowered = value.get<std::string>();
      std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (lowered.find("nan") != std::string::npos || lowered.find("inf") != std::string::npos)
        fail(path, message("expected a finite number, got ", describe(value),
                           " (NaN and infinity are not allowed)"));
    }
    fail(path, message("expected a number, got ", describe(value)));
  }

  long long read_integer(const Json& value, const std::string& path, long long lowest,
                         long long highest) const {
    const double number = read_number(value, path);
    if (number != std::floor(number))
      fail(path, message("expected an integer, got ", describe(value)));
    if (number < static_cast<double>(lowest) || number > static_cast<double>(highest))
      fail(path,
           message("expected an integer in [", lowest, ", ", highest, "], got ", describe(value)));
    return static_cast<long long>(number);
  }

  int read_int(const Json& value, const std::string& path) const {
    return static_cast<int>(read_integer(value, path, std::numeric_limits<int>::min(),
                                         std::numeric_limits<int>::max()));
  }

  std::uint32_t read_bits(const Json& value, const std::string& path) const {
    return static_cast<std::uint32_t>(
        read_integer(value, path, 0, std::numeric_limits<std::uint32_t>::max()));
  }

  bool read_bool(const Json& value, const std::string& path) const {
    if (!value.is_boolean()) fail(path, message("expected true or false, got ", describe(value)));
    return value.get<bool>();
  }

  std::string read_string(const Json& value, const std::string& path) const {
    if (!value.is_string()) fail(path, message("expected a string, got ", describe(value)));
    return value.get<std::string>();
  }

  // A fixed-length array of numbers.
  std::vector<double> read_numbers(const Json& value, const std::string& path,
                                   std::size_t count) const {
    if (!value.is_array() || value.size() != count)
      fail(path, message("expected an array of ", count, " numbers, got ", describe(value)));
    std::vector<double> numbers(count);
    for (std::size_t i = 0; i < count; ++i)
      numbers[i] = read_number(value[i], element_path(path, i));
    return numbers;
  }

  Vec3 read_vec3(const Json& value, const std::string& path) const {
    const std::vector<double> v = read_numbers(value, path, 3);
    return {v[0], v[1], v[2]};
  }

  template <typename Enum>
  Enum read_enum(const Json& value, const std::string& path, const char* what,
                 std::initializer_list<std::pair<std::string_view, Enum>> choices) const {
    const std::string text = read_string(value, path);
    std::string names;
    for (const auto& [name, choice] : choices) {
      if (name == text) return choice;
      if (!names.empty()) names += ", ";
      names += name;
    }
    fail(path, message("unknown ", what, " ", describe(value), " (expected one of: ", names, ")"));
  }

  // "orientation": [w, x, y, z] (normalised here) or "euler": [roll, pitch, yaw] in degrees,
  // R = Rz(yaw) Ry(pitch) Rx(roll). Identity when neither is given.
  Quat read_rotation(const Json& object, const std::string& path) const {
    const bool has_quaternion = object.contains("orientation");
    const bool has_euler = object.contains("euler");
    if (has_quaternion && has_euler)
      fail(path, "give either \"orientation\" or \"euler\", not both");
    if (has_quaternion) {
      const std::string field = key_path(path, "orientation");
      const std::vector<double> q = read_numbers(object["orientation"], field, 4);
      const Quat quaternion{q[0], q[1], q[2], q[3]};
      const double length = std::sqrt(quaternion.squared_norm());
      if (length < 1e-9)
        fail(field, message("the quaternion [w, x, y, z] must not be zero, got ",
                            describe(object["orientation"])));
      return quaternion.normalized();
    }
    if (has_euler) {
      const std::vector<double> angles = read_numbers(object["euler"], key_path(path, "euler"), 3);
      constexpr double radians_per_degree = std::numbers::pi / 180.0;
      const Quat roll = Quat::from_axis_angle({1, 0, 0}, angles[0] * radians_per_degree);
      const Quat pitch = Quat::from_axis_angle({0, 1, 0}, angles[1] * radians_per_degree);
      const Quat yaw = Quat::from_axis_angle({0, 0, 1}, angles[2] * radians_per_degree);
      return (yaw * pitch * roll).normalized();
    }
    return Quat::identity();
  }

  void read_solver(const Json& object, const std::string& path, SolverSettings& solver) const;
  void read_ground(const Json& value, const std::string& path, ModelBuilder& builder) const;
  void read_plane(const Json& object, const std::string& path, ModelBuilder& builder) const;
  BodySpec read_body(const Json& object, const std::string& path) const;
  ShapeSpec read_shape(const Json& object, const std::string& path) const;
  void read_mesh(const Json& object, const std::string& path, ShapeSpec& shape) const;
  JointSpec read_joint(const Json& object, const std::string& path) const;
  ActuatorSpec read_actuator(const Json& object, const std::string& path) const;

  // Calls read_item(element, element_path) for each element of an array of objects.
  template <typename ReadItem>
  void for_each_element(const Json& value, const std::string& path, ReadItem&& read_item) const {
    if (!value.is_array()) fail(path, message("expected an array, got ", describe(value)));
    for (std::size_t i = 0; i < value.size(); ++i) read_item(value[i], element_path(path, i));
  }

  // The builder may refuse an item as it is added (e.g. a repeated name); say where.
  template <typename Add>
  void add_to_builder(const std::string& path, Add&& add) const {
    try {
      add();
    } catch (const Error& error) {
      fail(path, error.what());
    }
  }

  std::string_view source_name_;
  std::filesystem::path base_directory_;
  // Hulls already loaded, by (file as written, scale): shapes that share a mesh share one.
  mutable std::map<std::pair<std::string, std::vector<double>>, std::shared_ptr<const ConvexMesh>>
      meshes_;
};

ModelBuilder SceneReader::read(const Json& root, ItemLocations& locations) const {
  if (!root.is_object())
    fail("", message("expected a JSON object at the top level, got ", describe(root)));
  check_keys(root, "",
             {"name", "description", "dt", "gravity", "solver", "world", "ground", "bodies",
              "joints", "actuators"});
  ModelBuilder builder;
  if (root.contains("name")) builder.name = read_string(root["name"], "name");
  if (root.contains("description")) read_string(root["description"], "description");
  if (root.contains("dt")) builder.dt = read_number(root["dt"], "dt");
  if (root.contains("gravity")) builder.gravity = read_vec3(root["gravity"], "gravity");
  if (root.contains("solver")) read_solver(root["solver"], "solver", builder.solver);
  if (root.contains("world")) {
    const Json& world = root["world"];
    check_keys(world, "world", {"friction", "restitution"});
    if (world.contains("friction"))
      builder.world_friction = read_number(world["friction"], "world.friction");
    if (world.contains("restitution"))
      builder.world_restitution = read_number(world["restitution"], "world.restitution");
  }
  if (root.contains("ground")) read_ground(root["ground"], "ground", builder);
  if (root.contains("bodies")) {
    for_each_element(root["bodies"], "bodies", [&](const Json& body, const std::string& path) {
      BodySpec spec = read_body(body, path);
      locations.note("body '" + spec.name + "'", path);
      add_to_builder(path, [&] { builder.add_body(std::move(spec)); });
    });
  }
  if (root.contains("joints")) {
    for_each_element(root["joints"], "joints", [&](const Json& joint, const std::string& path) {
      JointSpec spec = read_joint(joint, path);
      locations.note("joint '" + spec.name + "'", path);
      add_to_builder(path, [&] { builder.add_joint(std::move(spec)); });
    });
  }
  if (root.contains("actuators")) {
    for_each_element(root["actuators"], "actuators",
                     [&](const Json& actuator, const std::string& path) {
                       ActuatorSpec spec = read_actuator(actuator, path);
                       locations.note("actuator '" + spec.name + "'", path);
                       add_to_builder(path, [&] { builder.add_actuator(std::move(spec)); });
                     });
  }
  return builder;
}

void SceneReader::read_solver(const Json& object, const std::string& path,
                              SolverSettings& solver) const {
  check_keys(object, path,
             {"type", "max_iterations", "tolerance", "friction_directions", "contact_margin",
              "contact_erp", "penetration_slop", "restitution_threshold",
              "stabilization_iterations", "stabilization_tolerance", "warm_start", "time_of_impact"});
  const auto field = [&](const char* key) { return key_path(path, key); };
  if (object.contains("warm_start")) solver.warm_start = read_bool(object["warm_start"], field("warm_start"));
  if (object.contains("time_of_impact"))
    solver.time_of_impact = read_bool(object["time_of_impact"], field("time_of_impact"));
  if (object.contains("type")) {
    solver.type = read_enum<SolverType>(
        object["type"], field("type"), "solver type",
        {{"interior_point", SolverType::InteriorPoint}, {"pgs", SolverType::ProjectedGaussSeidel}});
  }
  if (object.contains("max_iterations"))
    solver.max_iterations = read_int(object["max_iterations"], field("max_iterations"));
  if (object.contains("tolerance"))
    solver.tolerance = read_number(object["tolerance"], field("tolerance"));
  if (object.contains("friction_directions"))
    solver.friction_directions =
        read_int(object["friction_directions"], field("friction_directions"));
  if (object.contains("contact_margin"))
    solver.contact_margin = read_number(object["contact_margin"], field("contact_margin"));
  if (object.contains("contact_erp"))
    solver.contact_erp = read_number(object["contact_erp"], field("contact_erp"));
  if (object.contains("penetration_slop"))
    solver.penetration_slop = read_number(object["penetration_slop"], field("penetration_slop"));
  if (object.contains("restitution_threshold"))
    solver.restitution_threshold =
        read_number(object["restitution_threshold"], field("restitution_threshold"));
  if (object.contains("stabilization_iterations"))
    solver.stabilization_iterations =
        read_int(object["stabilization_iterations"], field("stabilization_iterations"));
  if (object.contains("stabilization_tolerance"))
    solver.stabilization_tolerance =
        read_number(object["stabilization_tolerance"], field("stabilization_tolerance"));
}

// "ground": true (the plane z = 0), false (none), one plane object, or an array of them.
void SceneReader::read_ground(const Json& value, const std::string& path,
                              ModelBuilder& builder) const {
  if (value.is_boolean()) {
    if (value.get<bool>()) add_to_builder(path, [&] { builder.add_ground_plane(); });
    return;
  }
  if (value.is_object()) {
    read_plane(value, path, builder);
    return;
  }
  if (value.is_array()) {
    for_each_element(value, path, [&](const Json& plane, const std::string& plane_path) {
      read_plane(plane, plane_path, builder);
    });
    return;
  }
  fail(path, message("expected true, false, a plane {\"normal\", \"offset\"} or an array of "
                     "planes, got ",
                     describe(value)));
}

void SceneReader::read_plane(const Json& object, const std::string& path,
                             ModelBuilder& builder) const {
  check_keys(object, path, {"normal", "offset"});
  Vec3 normal{0, 0, 1};
  double offset = 0.0;
  if (object.contains("normal")) normal = read_vec3(object["normal"], key_path(path, "normal"));
  if (object.contains("offset")) offset = read_number(object["offset"], key_path(path, "offset"));
  add_to_builder(path, [&] { builder.add_ground_plane(normal, offset); });
}

BodySpec SceneReader::read_body(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "position", "orientation", "euler", "linear_velocity",
              "angular_velocity", "mass", "inertia", "center_of_mass", "density", "friction",
              "restitution", "linear_damping", "angular_damping", "force", "torque", "shapes"});
  require_key(object, path, "name");
  const auto field = [&](const char* key) { return key_path(path, key); };
  BodySpec body;
  body.name = read_string(object["name"], field("name"));
  if (object.contains("type")) {
    body.type = read_enum<BodyType>(object["type"], field("type"), "body type",
                                    {{"dynamic", BodyType::Dynamic}, {"static", BodyType::Static}});
  }
  if (body.type == BodyType::Static) {
    for (const char* key :
         {"linear_velocity", "angular_velocity", "mass", "inertia", "center_of_mass", "density",
          "linear_damping", "angular_damping", "force", "torque"}) {
      refuse_key(object, path, key, "by a static body (it never moves)");
    }
  }
  if (object.contains("position")) body.position = read_vec3(object["position"], field("position"));
  body.orientation = read_rotation(object, path);
  if (object.contains("linear_velocity"))
    body.linear_velocity = read_vec3(object["linear_velocity"], field("linear_velocity"));
  if (object.contains("angular_velocity"))
    body.angular_velocity = read_vec3(object["angular_velocity"], field("angular_velocity"));
  if (object.contains("mass")) body.mass = read_number(object["mass"], field("mass"));
  if (object.contains("inertia")) body.inertia = read_vec3(object["inertia"], field("inertia"));
  if (object.contains("center_of_mass"))
    body.center_of_mass = read_vec3(object["center_of_mass"], field("center_of_mass"));
  if (object.contains("density")) body.density = read_number(object["density"], field("density"));
  if (object.contains("friction"))
    body.friction = read_number(object["friction"], field("friction"));
  if (object.contains("restitution"))
    body.restitution = read_number(object["restitution"], field("restitution"));
  if (object.contains("linear_damping"))
    body.linear_damping = read_number(object["linear_damping"], field("linear_damping"));
  if (object.contains("angular_damping"))
    body.angular_damping = read_number(object["angular_damping"], field("angular_damping"));
  if (object.contains("force")) body.force = read_vec3(object["force"], field("force"));
  if (object.contains("torque")) body.torque = read_vec3(object["torque"], field("torque"));
  if (object.contains("shapes")) {
    for_each_element(object["shapes"], field("shapes"),
                     [&](const Json& shape, const std::string& shape_path) {
                       body.shapes.push_back(read_shape(shape, shape_path));
                     });
  }
  return body;
}

ShapeSpec SceneReader::read_shape(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"type", "name", "position", "orientation", "euler", "radius", "half_extents",
              "half_length", "length", "file", "scale", "collision_group", "collision_mask"});
  const auto field = [&](const char* key) { return key_path(path, key); };
  ShapeSpec shape;
  if (object.contains("type")) {
    shape.type = read_enum<ShapeType>(object["type"], field("type"), "shape type",
                                      {{"sphere", ShapeType::Sphere},
                                       {"box", ShapeType::Box},
                                       {"capsule", ShapeType::Capsule},
                                       {"cylinder", ShapeType::Cylinder},
                                       {"plane", ShapeType::Plane},
                                       {"mesh", ShapeType::ConvexMesh}});
  }
  if (shape.type != ShapeType::ConvexMesh) {
    const char* reason = "except by a mesh";
    refuse_key(object, path, "file", reason);
    refuse_key(object, path, "scale", reason);
  }
  if (object.contains("name")) shape.name = read_string(object["name"], field("name"));
  if (object.contains("position"))
    shape.position = read_vec3(object["position"], field("position"));
  shape.orientation = read_rotation(object, path);

  const bool round = shape.type == ShapeType::Capsule || shape.type == ShapeType::Cylinder;
  const bool uses_radius = shape.type == ShapeType::Sphere || round;
  const bool uses_half_extents = shape.type == ShapeType::Box;
  const bool uses_length = round;
  const char* reason = shape.type == ShapeType::Sphere       ? "by a sphere"
                       : shape.type == ShapeType::Box        ? "by a box"
                       : shape.type == ShapeType::Plane      ? "by a plane"
                       : shape.type == ShapeType::Cylinder   ? "by a cylinder"
                       : shape.type == ShapeType::ConvexMesh ? "by a mesh"
                                                             : "by a capsule";
  if (uses_radius) {
    if (object.contains("radius")) shape.radius = read_number(object["radius"], field("radius"));
  } else {
    refuse_key(object, path, "radius", reason);
  }
  if (uses_half_extents) {
    if (object.contains("half_extents"))
      shape.half_extents = read_vec3(object["half_extents"], field("half_extents"));
  } else {
    refuse_key(object, path, "half_extents", reason);
  }
  if (uses_length) {
    if (object.contains("half_length") && object.contains("length"))
      fail(path, "give either \"half_length\" or \"length\", not both");
    if (object.contains("half_length"))
      shape.half_length = read_number(object["half_length"], field("half_length"));
    if (object.contains("length"))
      shape.half_length = 0.5 * read_number(object["length"], field("length"));
  } else {
    refuse_key(object, path, "half_length", reason);
    refuse_key(object, path, "length", reason);
  }
  if (object.contains("collision_group"))
    shape.collision_group = read_bits(object["collision_group"], field("collision_group"));
  if (object.contains("collision_mask"))
    shape.collision_mask = read_bits(object["collision_mask"], field("collision_mask"));
  // Last, once every key is known to be right: reading the mesh file may be slow.
  if (shape.type == ShapeType::ConvexMesh) read_mesh(object, path, shape);
  return shape;
}

// "file" (required; relative paths from the scene file's folder) and "scale": a number (the
// shape's uniform scale, a differentiable size parameter) or three numbers (applied to the
// file's coordinates before the hull is taken; the parameter is then 1).
void SceneReader::read_mesh(const Json& object, const std::string& path, ShapeSpec& shape) const {
  require_key(object, path, "file");
  const std::string file = read_string(object["file"], key_path(path, "file"));
  std::vector<double> scale_key;
  Vec3 file_scale{1, 1, 1};
  if (object.contains("scale")) {
    const Json& scale = object["scale"];
    if (scale.is_array()) {
      file_scale = read_vec3(scale, key_path(path, "scale"));
      if (!(file_scale.x > 0 && file_scale.y > 0 && file_scale.z > 0))
        fail(key_path(path, "scale"), message("each component must be positive, got ", describe(scale)));
      scale_key = {file_scale.x, file_scale.y, file_scale.z};
    } else {
      shape.scale = read_number(scale, key_path(path, "scale"));
    }
  }
  std::shared_ptr<const ConvexMesh>& mesh = meshes_[{file, scale_key}];
  if (!mesh) {
    const std::filesystem::path file_path(file);
    try {
      mesh = std::make_shared<const ConvexMesh>(
          load_convex_mesh(file_path.is_absolute() ? file_path : base_directory_ / file_path, file_scale));
    } catch (const Error& error) {
      fail(key_path(path, "file"), error.what());
    }
  }
  shape.mesh = mesh;
}

JointSpec SceneReader::read_joint(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "parent", "child", "anchor", "axis", "axis2", "limits", "damping",
              "collide_connected"});
  require_key(object, path, "name");
  require_key(object, path, "child");
  const auto field = [&](const char* key) { return key_path(path, key); };
  JointSpec joint;
  joint.name = read_string(object["name"], field("name"));
  if (object.contains("type")) {
    joint.type = read_enum<JointType>(object["type"], field("type"), "joint type",
                                      {{"fixed", JointType::Fixed},
                                       {"revolute", JointType::Revolute},
                                       {"prismatic", JointType::Prismatic},
                                       {"ball", JointType::Ball},
                                       {"universal", JointType::Universal}});
  }
  if (object.contains("parent")) joint.parent = read_string(object["parent"], field("parent"));
  joint.child = read_string(object["child"], field("child"));
  if (object.contains("anchor")) joint.anchor = read_vec3(object["anchor"], field("anchor"));

  const bool has_axis = joint.type == JointType::Revolute || joint.type == JointType::Prismatic ||
                        joint.type == JointType::Universal;
  if (has_axis) {
    if (object.contains("axis")) joint.axis = read_vec3(object["axis"], field("axis"));
  } else {
    refuse_key(object, path, "axis",
               joint.type == JointType::Fixed ? "by a fixed joint" : "by a ball joint");
  }
  if (joint.type == JointType::Universal) {
    if (object.contains("axis2")) joint.axis2 = read_vec3(object["axis2"], field("axis2"));
  } else {
    refuse_key(object, path, "axis2", "except by a universal joint");
  }
  if (object.contains("limits")) {
    if (joint.type == JointType::Fixed || joint.type == JointType::Ball) {
      refuse_key(object, path, "limits",
                 "by a fixed or ball joint (limits apply to revolute, prismatic and universal "
                 "joints)");
    }
    const std::vector<double> limits = read_numbers(object["limits"], field("limits"), 2);
    joint.lower_limit = limits[0];
    joint.upper_limit = limits[1];
  }
  if (object.contains("damping")) joint.damping = read_number(object["damping"], field("damping"));
  if (object.contains("collide_connected"))
    joint.collide_connected = read_bool(object["collide_connected"], field("collide_connected"));
  return joint;
}

ActuatorSpec SceneReader::read_actuator(const Json& object, const std::string& path) const {
  check_keys(object, path,
             {"name", "type", "joint", "dof", "gain", "max_torque", "max_velocity", "control"});
  require_key(object, path, "name");
  require_key(object, path, "joint");
  const auto field = [&](const char* key) { return key_path(path, key); };
  ActuatorSpec actuator;
  actuator.name = read_string(object["name"], field("name"));
  if (object.contains("type")) {
    actuator.type =
        read_enum<ActuatorType>(object["type"], field("type"), "actuator type",
                                {{"motor", ActuatorType::Motor}, {"servo", ActuatorType::Servo}});
  }
  actuator.joint = read_string(object["joint"], field("joint"));
  if (object.contains("dof")) actuator.dof = read_int(object["dof"], field("dof"));
  if (actuator.type == ActuatorType::Servo) {
    if (object.contains("gain")) actuator.gain = read_number(object["gain"], field("gain"));
    if (object.contains("max_velocity"))
      actuator.max_velocity = read_number(object["max_velocity"], field("max_velocity"));
  } else {
    refuse_key(object, path, "gain", "by a motor (only servos have a gain)");
    refuse_key(object, path, "max_velocity", "by a motor (only servos have a velocity bound)");
  }
  if (object.contains("max_torque"))
    actuator.max_torque = read_number(object["max_torque"], field("max_torque"));
  if (object.contains("control"))
    actuator.control = read_number(object["control"], field("control"));
  return actuator;
}

}  // namespace

Scene parse_scene(std::string_view json_text, std::string_view source_name) {
  const Json root = parse_json(json_text, source_name);
  ItemLocations locations;
  // A source name that is a path locates the scene's mesh files; any other ("<string>")
  // leaves them relative to the working directory.
  const std::filesystem::path base_directory =
      source_name.starts_with('<') ? std::filesystem::path() : std::filesystem::path(source_name).parent_path();
  const ModelBuilder builder = SceneReader(source_name, base_directory).read(root, locations);
  try {
    return builder.build();
  } catch (const Error& error) {
    throw Error(message(source_name, ": ", locations.locate(error.what())));
  }
}

Scene load_scene(const std::filesystem::path& path) {
  // Robot files by extension (diffphys/robot_loaders.hpp); everything else is a JSON scene.
  const std::string extension = path.extension().string();
  if (extension == ".urdf") return load_urdf(path);
  if (extension == ".xml" || extension == ".mjcf") return load_mjcf(path);
  const std::string source_name = path.string();
  std::error_code status_error;
  if (!std::filesystem::exists(path, status_error))
    throw Error(message(source_name, ": no such file"));
  if (std::filesystem::is_directory(path, status_error))
    throw Error(message(source_name, ": is a directory, not a scene file"));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(message(source_name, ": cannot open the file for reading"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(message(source_name, ": cannot read the scene file"));
  return parse_scene(text.str(), source_name);
}

}  // namespace diffphys
