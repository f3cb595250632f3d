// model/json_reader.cpp — see json_reader.hpp.
#include "model/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numbers>

#include "math/rotation.hpp"
#include "model/nearest_name.hpp"

namespace diffphys::json {

std::string key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string element_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

namespace {

// The first `length` bytes of `text`, shortened so as not to split a UTF-8 character.
std::string utf8_prefix(const std::string& text, std::size_t length) {
  if (length >= text.size()) return text;
  while (length > 0 && (static_cast<unsigned char>(text[length]) & 0xC0) == 0x80) --length;
  return text.substr(0, length);
}

// Appends `value` in its JSON form until `out` is longer than `limit` characters; each level
// writes at least one bracket, so the recursion stops within `limit` levels.
void append_prefix(const Json& value, std::string& out, std::size_t limit) {
  if (out.size() > limit) return;
  switch (value.type()) {
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const Json& element : value) {
        if (out.size() > limit) return;
        if (!first) out += ',';
        first = false;
        append_prefix(element, out, limit);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, element] : value.items()) {
        if (out.size() > limit) return;
        if (!first) out += ',';
        first = false;
        out += Json(utf8_prefix(key, limit)).dump();
        out += ':';
        append_prefix(element, out, limit);
      }
      out += '}';
      return;
    }
    case Json::value_t::string:
      out += Json(utf8_prefix(value.get_ref<const std::string&>(), limit)).dump();
      return;
    default: out += value.dump(); return;
  }
}

}  // namespace

std::string describe(const Json& value) {
  constexpr std::size_t max_length = 60;
  std::string text;
  append_prefix(value, text, max_length);
  if (text.size() > max_length) text = utf8_prefix(text, max_length - 3) + "...";
  return text;
}

namespace {


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

// How a value's type reads in a message: "expected an object, got a string ...".
const char* type_name(const Json& value) {
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

}  // namespace

void check_text(std::string_view text, std::string_view source_name) {
  int depth = 0, line = 1, column = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
    if (c == '\0')
      throw Error(message(source_name, ": line ", line, ", column ", column,
                          ": a NUL byte (binary data): a JSON file is text and contains none"));
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        throw Error(message(source_name, ": line ", line, ", column ", column, ": JSON nested deeper than ",
                            kMaxNesting, " levels (arrays and objects inside one another; diffphys files nest a few "
                            "levels)"));
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;  // unbalanced brackets are the parser's to report
    }
  }
}

Json parse(std::string_view text, std::string_view source_name) {
  check_text(text, source_name);
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

void Reader::fail(const std::string& path, const std::string& what) const {
  throw Error(path.empty() ? message(source_name_, ": ", what)
                           : message(source_name_, ": ", path, ": ", what));
}

// Refuses keys outside `allowed`, suggesting the nearest allowed key for a typo.
void Reader::check_keys(const Json& object, const std::string& path,
                std::initializer_list<std::string_view> allowed) const {
  if (!object.is_object())
    fail(path, message("expected an object, got ", type_name(object), " ", describe(object)));
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string nearest =
        nearest_name(key, std::span<const std::string_view>(allowed.begin(), allowed.size()), false);
    if (!nearest.empty()) fail(path, message("unknown key \"", key, "\" (did you mean \"", nearest, "\"?)"));
    fail(path, message("unknown key \"", key, "\" (allowed here: ", join(allowed), ")"));
  }
}

void Reader::require_key(const Json& object, const std::string& path, const char* key) const {
  if (!object.contains(key)) fail(path, message("missing required key \"", key, "\""));
}

// Refuses a key that the item's type would ignore, e.g. "half_extents" on a sphere.
void Reader::refuse_key(const Json& object, const std::string& path, const char* key,
                std::string_view reason) const {
  if (object.contains(key))
    fail(key_path(path, key), message("not used ", reason, ", got ", describe(object[key])));
}

double Reader::read_number(const Json& value, const std::string& path) const {
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

long long Reader::read_integer(const Json& value, const std::string& path, long long lowest,
                       long long highest) const {
  const double number = read_number(value, path);
  if (number != std::floor(number))
    fail(path, message("expected an integer, got ", describe(value)));
  if (number < static_cast<double>(lowest) || number > static_cast<double>(highest))
    fail(path,
         message("expected an integer in [", lowest, ", ", highest, "], got ", describe(value)));
  return static_cast<long long>(number);
}

int Reader::read_int(const Json& value, const std::string& path) const {
  return static_cast<int>(read_integer(value, path, std::numeric_limits<int>::min(),
                                       std::numeric_limits<int>::max()));
}

std::uint32_t Reader::read_bits(const Json& value, const std::string& path) const {
  return static_cast<std::uint32_t>(
      read_integer(value, path, 0, std::numeric_limits<std::uint32_t>::max()));
}

bool Reader::read_bool(const Json& value, const std::string& path) const {
  if (!value.is_boolean()) fail(path, message("expected true or false, got ", describe(value)));
  return value.get<bool>();
}

std::string Reader::read_string(const Json& value, const std::string& path) const {
  if (!value.is_string()) fail(path, message("expected a string, got ", describe(value)));
  return value.get<std::string>();
}

// A fixed-length array of numbers.
std::vector<double> Reader::read_numbers(const Json& value, const std::string& path,
                                 std::size_t count) const {
  if (!value.is_array() || value.size() != count)
    fail(path, message("expected an array of ", count, " numbers, got ", describe(value)));
  std::vector<double> numbers(count);
  for (std::size_t i = 0; i < count; ++i)
    numbers[i] = read_number(value[i], element_path(path, i));
  return numbers;
}

Vec3 Reader::read_vec3(const Json& value, const std::string& path) const {
  const std::vector<double> v = read_numbers(value, path, 3);
  return {v[0], v[1], v[2]};
}

// "orientation": [w, x, y, z] (normalised here) or "euler": [roll, pitch, yaw] in degrees,
// R = Rz(yaw) Ry(pitch) Rx(roll). Identity when neither is given.
Quat Reader::read_rotation(const Json& object, const std::string& path) const {
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
    return unit_or_normalized(quaternion);  // a unit one bit for bit (math/rotation.hpp)
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

const Json& Reader::optional_array(const Json& object, const char* key, const std::string& path) const {
  static const Json empty = Json::array();
  if (!object.contains(key)) return empty;
  const Json& value = object.at(key);
  if (!value.is_array()) fail(key_path(path, key), message("expected an array, got ", describe(value)));
  return value;
}

}  // namespace diffphys::json
