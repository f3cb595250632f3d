// model/json_reader.hpp — reading the project's JSON files (rigid, soft and coupled scenes)
// with messages that name the file, the JSON path (bodies[1].mass) and the offending value:
// parsing that refuses duplicate keys and reports syntax errors by line and column, and a
// Reader of typed values (finite numbers, integers in range, fixed-length arrays, rotations,
// enum strings, known keys with a "did you mean" for typos). Internal to the library: only
// the loaders include it, so nlohmann/json stays out of the public headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/math.hpp"

namespace diffphys::json {

using Json = nlohmann::json;

// "parent.key" ("key" at the top level) and "parent[index]".
std::string key_path(const std::string& parent, std::string_view key);
std::string element_path(const std::string& parent, std::size_t index);
// The value as it appears in the file, shortened so a message stays on one line. Only the
// first characters are ever written, so a huge or deeply nested value costs nothing.
std::string describe(const Json& value);

// How deeply arrays and objects may nest in a file the project reads. Its own files nest
// at most 7 levels (a trajectory's model block); nlohmann parses any depth, but copying or
// printing a value recurses once per level, and ~75,000 levels overflow the stack.
inline constexpr int kMaxNesting = 64;

// Scans the text without parsing it. Throws Error "<source_name>: line L, column C: JSON
// nested deeper than 64 levels ..." at the bracket that opens level 65, and "...: a NUL byte
// ..." at a NUL byte: nlohmann takes NUL for the end of the input, so a text with binary data
// after a valid document would otherwise be read up to the NUL and the rest dropped.
void check_text(std::string_view text, std::string_view source_name);

// Parses `text`, refusing a NUL byte and nesting beyond kMaxNesting (check_text) and a key repeated
// within one object (nlohmann keeps the last one silently); syntax errors name
// `source_name`, the line and column, and explain NaN/Infinity.
Json parse(std::string_view text, std::string_view source_name);

class Reader {
 public:
  explicit Reader(std::string source_name) : source_name_(std::move(source_name)) {}

  const std::string& source_name() const { return source_name_; }

  // Throws Error "<file>: <path>: <what>" ("<file>: <what>" for an empty path).
  [[noreturn]] void fail(const std::string& path, const std::string& what) const;
  // Refuses keys outside `allowed`, suggesting the nearest allowed key for a typo.
  void check_keys(const Json& object, const std::string& path, std::initializer_list<std::string_view> allowed) const;
  void require_key(const Json& object, const std::string& path, const char* key) const;
  // Refuses a key that the item's type would ignore, e.g. "half_extents" on a sphere.
  void refuse_key(const Json& object, const std::string& path, const char* key, std::string_view reason) const;

  double read_number(const Json& value, const std::string& path) const;  // finite
  long long read_integer(const Json& value, const std::string& path, long long lowest, long long highest) const;
  int read_int(const Json& value, const std::string& path) const;
  std::uint32_t read_bits(const Json& value, const std::string& path) const;
  bool read_bool(const Json& value, const std::string& path) const;
  std::string read_string(const Json& value, const std::string& path) const;
  // A fixed-length array of numbers.
  std::vector<double> read_numbers(const Json& value, const std::string& path, std::size_t count) const;
  Vec3 read_vec3(const Json& value, const std::string& path) const;
  // "orientation": [w, x, y, z] (normalised here) or "euler": [roll, pitch, yaw] in degrees,
  // R = Rz(yaw) Ry(pitch) Rx(roll). Identity when neither is given.
  Quat read_rotation(const Json& object, const std::string& path) const;
  // object[key] if present (it must be an array), else an empty array.
  const Json& optional_array(const Json& object, const char* key, const std::string& path) const;

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

  // Calls read_item(element, element_path) for each element of an array of objects.
  template <typename ReadItem>
  void for_each_element(const Json& value, const std::string& path, ReadItem&& read_item) const {
    if (!value.is_array()) fail(path, message("expected an array, got ", describe(value)));
    for (std::size_t i = 0; i < value.size(); ++i) read_item(value[i], element_path(path, i));
  }

 private:
  std::string source_name_;
};

}  // namespace diffphys::json
