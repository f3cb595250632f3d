// viewer/replay_html.cpp — fills the replay page template (viewer/replay_html.hpp) with a
// trajectory, after checking that the trajectory is one the page can draw.
#include "replay_html.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys::viewer {
namespace {

constexpr std::string_view kPlaceholder = "@@DIFFPHYS_TRAJECTORY@@";

bool is_number_array(const nlohmann::json& value, std::size_t size) {
  if (!value.is_array() || value.size() != size) return false;
  for (const nlohmann::json& item : value)
    if (!item.is_number() && !item.is_null()) return false;
  return true;
}

std::string shortened(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace

void check_trajectory(std::string_view trajectory_json, std::string_view source_name) {
  const std::string source(source_name);
  nlohmann::json trajectory;
  try {
    trajectory = nlohmann::json::parse(trajectory_json);
  } catch (const nlohmann::json::parse_error& error) {
    throw Error(message(source, ": not a JSON document (", error.what(), ")"));
  }
  if (!trajectory.is_object())
    throw Error(message(source, ": expected a trajectory (a JSON object), got ", shortened(trajectory)));
  const auto format = trajectory.find("format");
  if (format == trajectory.end() || *format != "diffphys-trajectory") {
    throw Error(message(source, ": \"format\" is ", format == trajectory.end() ? "missing" : shortened(*format),
                        ", expected \"diffphys-trajectory\" (a file written by "
                        "'diffphys simulate --out')"));
  }
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
    if (!frame.is_object() || !frame.contains("time") || !frame["time"].is_number())
      throw Error(message(where, ".time must be a number"));
    const double time = frame["time"].get<double>();
    if (f > 0 && time < previous_time)
      throw Error(message(where, ".time ", time, " is before the previous frame's ", previous_time));
    previous_time = time;
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
    }
  }
  if (trajectory.contains("model") && (!trajectory["model"].is_object() || !trajectory["model"].contains("bodies") ||
                                       !trajectory["model"]["bodies"].is_array()))
    throw Error(message(source, ": \"model\" must be an object with a \"bodies\" array"));
  if (trajectory.contains("loss") && !trajectory["loss"].is_array())
    throw Error(message(source, ": \"loss\" must be an array of numbers"));
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
