// viewer/replay_html.cpp — fills the replay page template (viewer/replay_html.hpp) with a
// trajectory, after checking that the trajectory is one the page can draw.
#include "replay_html.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "diffphys/error.hpp"
#include "model/json_reader.hpp"

namespace diffphys::viewer {
namespace {

constexpr std::string_view kPlaceholder = "@@DIFFPHYS_TRAJECTORY@@";

// null is not a number here: it is what a JSON writer makes of NaN or infinity, and the
// page would draw the body at the origin.
bool is_number_array(const nlohmann::json& value, std::size_t size) {
  if (!value.is_array() || value.size() != size) return false;
  for (const nlohmann::json& item : value)
    if (!item.is_number()) return false;
  return true;
}

// A body's orientation must be a unit quaternion (to the digits a trajectory keeps): the page
// would otherwise draw a zero quaternion as a collapsed body and scale others.
void check_unit_quaternion(const nlohmann::json& orientation, const std::string& where) {
  double squared_norm = 0.0;
  for (const nlohmann::json& item : orientation) squared_norm += item.get<double>() * item.get<double>();
  if (!(std::abs(std::sqrt(squared_norm) - 1.0) <= 1e-6))
    throw Error(message(where, ".orientation ", json::describe(orientation), " has norm ", std::sqrt(squared_norm),
                        "; expected a unit quaternion [w, x, y, z]"));
}

std::string shortened(const nlohmann::json& value) { return json::describe(value); }

// The path (e.g. "frames[3].contacts[0].impulse") of the first null in `value`, or "" if it
// has none: a writer's NaN or infinity, wherever it sits (velocities, contacts, energies, the
// loss curve, the model block), is refused, not drawn or plotted as garbage. Recursion is
// bounded by json::parse's nesting limit (64).
std::string first_null(const nlohmann::json& value, const std::string& path) {
  if (value.is_null()) return path.empty() ? "the document" : path;
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      if (std::string found = first_null(value[i], message(path, "[", i, "]")); !found.empty()) return found;
  } else if (value.is_object()) {
    for (const auto& [key, item] : value.items())
      if (std::string found = first_null(item, path.empty() ? key : path + "." + key); !found.empty()) return found;
  }
  return "";
}

// Frame f's time (`where` names it in messages): a number, not before the previous frame's.
double checked_frame_time(const nlohmann::json& frame, const std::string& where, std::size_t f, double previous_time) {
  if (!frame.is_object() || !frame.contains("time") || !frame["time"].is_number())
    throw Error(message(where, ".time must be a number"));
  const double time = frame["time"].get<double>();
  if (f > 0 && time < previous_time)
    throw Error(message(where, ".time ", time, " is before the previous frame's ", previous_time));
  return time;
}

// Node indices of a topology block's items (`width` per item) within [0, node_count).
void check_index_lists(const nlohmann::json& topology, const char* key, std::size_t width, long long node_count,
                       const std::string& source) {
  if (!topology.contains(key)) return;
  const nlohmann::json& items = topology[key];
  if (!items.is_array()) throw Error(message(source, ": topology.", key, " must be an array"));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const nlohmann::json& item = items[i];
    bool valid = item.is_array() && item.size() == width;
    for (std::size_t k = 0; valid && k < width; ++k)
      valid = item[k].is_number_integer() && item[k].get<long long>() >= 0 && item[k].get<long long>() < node_count;
    if (!valid)
      throw Error(message(source, ": topology.", key, "[", i, "] must be ", width, " node indices in [0, ", node_count,
                          "), got ", shortened(item)));
  }
}

// A null where a number was written (a non-finite value): `at` is its path, empty if none.
void check_no_null(const std::string& at, const std::string& source) {
  if (!at.empty())
    throw Error(message(source, ": ", at, " is null, where a number was written (a non-finite value: NaN or infinity); "
                        "the trajectory is not one the page can draw"));
}

// A soft part's document ("diffphys-soft-trajectory"): node positions per frame, the
// topology block. A fixed obstacle's "frame" is written as null: only the frames are searched
// for nulls.
void check_soft_trajectory(const nlohmann::json& trajectory, const std::string& source) {
  check_no_null(trajectory.contains("frames") ? first_null(trajectory["frames"], "frames") : "", source);
  const auto node_count_item = trajectory.find("node_count");
  if (node_count_item == trajectory.end() || !node_count_item->is_number_integer() || node_count_item->get<long long>() < 1)
    throw Error(message(source, ": \"node_count\" must be a positive integer, got ",
                        node_count_item == trajectory.end() ? std::string("nothing") : shortened(*node_count_item)));
  const long long node_count = node_count_item->get<long long>();
  const auto topology = trajectory.find("topology");
  if (topology == trajectory.end() || !topology->is_object())
    throw Error(message(source, ": \"topology\" is missing (the soft mesh's surface triangles and spring edges); "
                        "write the trajectory again with this version of 'diffphys simulate --out'"));
  check_index_lists(*topology, "surface_triangles", 3, node_count, source);
  check_index_lists(*topology, "edges", 2, node_count, source);
  if (trajectory.contains("obstacles") && !trajectory["obstacles"].is_array())
    throw Error(message(source, ": \"obstacles\" must be an array"));
  const auto frames = trajectory.find("frames");
  if (frames == trajectory.end() || !frames->is_array() || frames->empty())
    throw Error(message(source, ": \"frames\" must be a non-empty array"));
  double previous_time = 0.0;
  for (std::size_t f = 0; f < frames->size(); ++f) {
    const nlohmann::json& frame = (*frames)[f];
    const std::string where = message(source, ": frames[", f, "]");
    previous_time = checked_frame_time(frame, where, f, previous_time);
    if (!frame.contains("positions") || !is_number_array(frame["positions"], static_cast<std::size_t>(3 * node_count)))
      throw Error(message(where, ".positions must be ", 3 * node_count, " numbers (x, y, z of each of the ", node_count,
                          " nodes)"));
  }
}

void check_dt(const nlohmann::json& trajectory, const std::string& source) {
  if (const auto dt = trajectory.find("dt");
      dt != trajectory.end() && (!dt->is_number() || !(dt->get<double>() > 0.0)))
    throw Error(message(source, ": \"dt\" is ", shortened(*dt), ", expected the time step in seconds (> 0)"));
}

// Version 1 is the only layout there has been (docs/scene-format.md#trajectory-files); a later
// one may mean something else by the same keys.
void check_version(const nlohmann::json& trajectory, const std::string& source) {
  if (const auto version = trajectory.find("version"); version != trajectory.end() && *version != 1)
    throw Error(message(source, ": \"version\" is ", shortened(*version),
                        ", expected 1 (the only trajectory layout this diffphys reads)"));
}

// The rigid bodies' document ("diffphys-trajectory"): names, one pose per body per frame, the
// optional model block and loss curve.
void check_rigid_trajectory(const nlohmann::json& trajectory, const std::string& source) {
  check_no_null(first_null(trajectory, ""), source);
  check_version(trajectory, source);
  const auto bodies = trajectory.find("bodies");
  if (bodies == trajectory.end() || !bodies->is_array())
    throw Error(message(source, ": \"bodies\" must be an array of body names"));
  const auto frames = trajectory.find("frames");
  if (frames == trajectory.end() || !frames->is_array() || frames->empty())
    throw Error(message(source, ": \"frames\" must be a non-empty array"));
  double previous_time = 0.0;
  for (std::size_t f = 0; f < frames->size(); ++f) {
    const nlohmann::json& frame = (*frames)[f];
    const std::string where = message(source, ": frames[", f, "]");
    previous_time = checked_frame_time(frame, where, f, previous_time);
    if (!frame.contains("bodies") || !frame["bodies"].is_array() || frame["bodies"].size() != bodies->size()) {
      throw Error(message(where, ".bodies must have ", bodies->size(), " entries, one per name in \"bodies\""));
    }
    for (std::size_t b = 0; b < bodies->size(); ++b) {
      const nlohmann::json& body = frame["bodies"][b];
      if (!body.is_object() || !body.contains("position") || !is_number_array(body["position"], 3) ||
          !body.contains("orientation") || !is_number_array(body["orientation"], 4)) {
        throw Error(message(where, ".bodies[", b,
                            "] needs \"position\" [x, y, z] and \"orientation\" [w, x, y, z], got ", shortened(body)));
      }
      check_unit_quaternion(body["orientation"], message(where, ".bodies[", b, "]"));
    }
  }
  if (trajectory.contains("model") && (!trajectory["model"].is_object() || !trajectory["model"].contains("bodies") ||
                                       !trajectory["model"]["bodies"].is_array()))
    throw Error(message(source, ": \"model\" must be an object with a \"bodies\" array"));
  if (trajectory.contains("loss") && !trajectory["loss"].is_array())
    throw Error(message(source, ": \"loss\" must be an array of numbers"));
}

// One part's document, by its "format".
void check_part_trajectory(const nlohmann::json& trajectory, const std::string& source) {
  check_dt(trajectory, source);
  const auto format = trajectory.find("format");
  if (format != trajectory.end() && *format == "diffphys-soft-trajectory") return check_soft_trajectory(trajectory, source);
  if (format != trajectory.end() && *format == "diffphys-trajectory") return check_rigid_trajectory(trajectory, source);
  throw Error(message(source, ": \"format\" is ", format == trajectory.end() ? "missing" : shortened(*format),
                      ", expected \"diffphys-trajectory\", \"diffphys-soft-trajectory\" or \"diffphys-world-trajectory\" (a "
                      "file written by 'diffphys simulate --out')"));
}

}  // namespace

bool replay_page_built() { return DIFFPHYS_REPLAY_PAGE_BUILT != 0; }

void require_replay_page() {
  if (!replay_page_built())
    throw Error(
        "this diffphys was built without the web viewer (configured with -DDIFFPHYS_VIEWER=OFF), so it cannot "
        "write replay pages; configure with -DDIFFPHYS_VIEWER=ON (needs Node.js and npm, docs/viewer.md) and build "
        "again");
}

void check_trajectory(std::string_view trajectory_json, std::string_view source_name) {
  const std::string source(source_name);
  // The scene reader's parse: line and column of a syntax error without the library's prefix,
  // NUL bytes, nesting and number overflow refused before anything recurses into the value.
  const nlohmann::json trajectory = json::parse(trajectory_json, source);
  if (!trajectory.is_object())
    throw Error(message(source, ": expected a trajectory (a JSON object), got ", shortened(trajectory)));
  const auto format = trajectory.find("format");
  if (format == trajectory.end() || *format != "diffphys-world-trajectory") {
    check_part_trajectory(trajectory, source);
    return;
  }
  // A world of several parts: each part's own document under "parts", one frame per world step.
  check_dt(trajectory, source);
  check_version(trajectory, source);
  const auto parts = trajectory.find("parts");
  if (parts == trajectory.end() || !parts->is_object() || parts->empty())
    throw Error(message(source, ": \"parts\" must be an object holding each part's trajectory (\"rigid\", \"soft\")"));
  std::size_t frame_count = 0;
  for (const auto& [kind, document] : parts->items()) {
    const std::string where = message(source, ": parts.", kind);
    if (kind != "rigid" && kind != "soft")
      throw Error(message(where, ": unknown kind of part (this diffphys writes and shows \"rigid\" and \"soft\")"));
    if (!document.is_object()) throw Error(message(where, ": expected the part's trajectory (a JSON object)"));
    const std::string expected = kind == "rigid" ? "diffphys-trajectory" : "diffphys-soft-trajectory";
    if (!document.contains("format") || document["format"] != expected)
      throw Error(message(where, ": \"format\" must be \"", expected, "\""));
    check_part_trajectory(document, where);
    const std::size_t frames = document["frames"].size();
    if (frame_count != 0 && frames != frame_count)
      throw Error(message(where, ": ", frames, " frames, but the parts before it have ", frame_count,
                          " (every part records every world step)"));
    frame_count = frames;
  }
}

std::string replay_html(std::string_view trajectory_json, std::string_view source_name) {
  check_trajectory(trajectory_json, source_name);
  const std::string_view page = replay_page_template();
  const std::size_t at = page.find(kPlaceholder);
  if (at == std::string_view::npos)
    throw Error("the replay page template has no trajectory placeholder (a build problem)");
  std::string html;
  html.reserve(page.size() + trajectory_json.size() + trajectory_json.size() / 16);
  html.append(page.substr(0, at));
  // '<' only occurs inside JSON strings, where \u003c means the same character.
  for (const char c : trajectory_json) {
    if (c == '<')
      html += "\\u003c";
    else
      html += c;
  }
  html.append(page.substr(at + kPlaceholder.size()));
  return html;
}

void write_replay_html(std::string_view trajectory_json, std::string_view source_name,
                       const std::filesystem::path& path) {
  const std::string html = replay_html(trajectory_json, source_name);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error(message(path.string(), ": cannot open the replay page for writing"));
  file << html;
  file.flush();
  if (!file) throw Error(message(path.string(), ": could not write the whole replay page"));
}

}  // namespace diffphys::viewer
