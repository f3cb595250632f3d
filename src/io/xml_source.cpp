// io/xml_source.cpp — see xml_source.hpp.
#include "io/xml_source.hpp"

#include <memory>

#include "diffphys/convex_mesh.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "math/rotation.hpp"

namespace diffphys::io {

XmlSource::XmlSource(const std::string& text, std::string source_name, std::filesystem::path base_directory)
    : document_(std::make_unique<tinyxml2::XMLDocument>()),
      source_name_(std::move(source_name)),
      base_directory_(std::move(base_directory)) {
  if (document_->Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) {
    // ErrorStr() repeats the line; keep tinyxml2's error name and detail.
    const char* detail = document_->ErrorStr();
    throw Error(message(source_name_, ":", document_->ErrorLineNum(), ": XML error: ", detail ? detail : "malformed"));
  }
  if (document_->RootElement() == nullptr) throw Error(message(source_name_, ": XML error: no root element"));
}

XmlSource::~XmlSource() = default;

std::unique_ptr<XmlSource> XmlSource::load(const std::filesystem::path& path) {
  const std::string source_name = path.string();
  std::error_code status_error;
  if (!std::filesystem::exists(path, status_error)) throw Error(message(source_name, ": no such file"));
  if (std::filesystem::is_directory(path, status_error))
    throw Error(message(source_name, ": is a directory, not a robot file"));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(message(source_name, ": cannot open the file for reading"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(message(source_name, ": cannot read the file"));
  return std::make_unique<XmlSource>(text.str(), source_name, path.parent_path());
}

const XMLElement* XmlSource::root() const {
  return document_->RootElement();
}

std::string describe(const XMLElement* element) {
  const char* name = element->Attribute("name");
  return name ? message("<", element->Name(), " '", name, "'>") : message("<", element->Name(), ">");
}

std::string XmlSource::where(const XMLElement* element) const {
  return message(source_name_, ":", element->GetLineNum(), ": ", describe(element));
}

void XmlSource::fail(const XMLElement* element, const std::string& what) const {
  throw Error(message(where(element), ": ", what));
}

std::optional<std::string> XmlSource::text(const XMLElement* element, const char* attribute) const {
  const char* value = element->Attribute(attribute);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string XmlSource::required_text(const XMLElement* element, const char* attribute) const {
  const auto value = text(element, attribute);
  if (!value) fail(element, message("missing required attribute '", attribute, "'"));
  return *value;
}

double XmlSource::parse_number(const XMLElement* element, const char* attribute, const std::string& value) const {
  const std::vector<double> parsed = parse_numbers(element, attribute, value, {1});
  return parsed[0];
}

std::vector<double> XmlSource::parse_numbers(const XMLElement* element, const char* attribute, const std::string& value,
                                             std::initializer_list<std::size_t> counts) const {
  std::vector<double> parsed;
  const char* cursor = value.c_str();
  while (true) {
    while (*cursor == ' ' || *cursor == '\t' || *cursor == '\n' || *cursor == '\r') ++cursor;
    if (*cursor == '\0') break;
    char* end = nullptr;
    errno = 0;
    const double number = std::strtod(cursor, &end);
    const bool separated =
        end != cursor && (*end == '\0' || *end == ' ' || *end == '\t' || *end == '\n' || *end == '\r');
    if (!separated) fail(element, message("attribute ", attribute, "=\"", value, "\": expected numbers"));
    if (!std::isfinite(number) || errno == ERANGE)
      fail(element, message("attribute ", attribute, "=\"", value, "\": numbers must be finite"));
    parsed.push_back(number);
    cursor = end;
  }
  if (std::find(counts.begin(), counts.end(), parsed.size()) == counts.end()) {
    std::string accepted;
    for (const std::size_t count : counts) accepted += (accepted.empty() ? "" : " or ") + std::to_string(count);
    fail(element, message("attribute ", attribute, "=\"", value, "\": expected ", accepted, " number",
                          counts.size() == 1 && *counts.begin() == 1 ? "" : "s", ", got ", parsed.size()));
  }
  return parsed;
}

std::optional<double> XmlSource::number(const XMLElement* element, const char* attribute) const {
  const auto value = text(element, attribute);
  if (!value) return std::nullopt;
  return parse_number(element, attribute, *value);
}

double XmlSource::required_number(const XMLElement* element, const char* attribute) const {
  return parse_number(element, attribute, required_text(element, attribute));
}

std::optional<std::vector<double>> XmlSource::numbers(const XMLElement* element, const char* attribute,
                                                      std::initializer_list<std::size_t> counts) const {
  const auto value = text(element, attribute);
  if (!value) return std::nullopt;
  return parse_numbers(element, attribute, *value, counts);
}

std::optional<Vec3> XmlSource::vec3(const XMLElement* element, const char* attribute) const {
  const auto values = numbers(element, attribute, {3});
  if (!values) return std::nullopt;
  return Vec3{(*values)[0], (*values)[1], (*values)[2]};
}

bool XmlSource::parse_bool(const XMLElement* element, const char* attribute, const std::string& value) const {
  if (value == "true") return true;
  if (value == "false") return false;
  fail(element, message("attribute ", attribute, "=\"", value, "\": expected true or false"));
}

void Warnings::add(const XmlSource& source, const XMLElement* element, const std::string& what) {
  messages_.emplace_back(element->GetLineNum(), message(source.where(element), ": ", what));
}

void Warnings::ignored(const XMLElement* element, const std::string& item, const std::string& reason) {
  Ignored& entry = ignored_[item];
  entry.reason = reason;
  entry.lines.push_back(element->GetLineNum());
}

std::vector<std::string> Warnings::finish(const XmlSource& source) const {
  std::vector<std::pair<int, std::string>> ordered = messages_;
  for (const auto& [item, entry] : ignored_) {
    std::vector<int> lines = entry.lines;
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    std::string listed;
    for (const int line : lines) listed += (listed.empty() ? "" : ", ") + std::to_string(line);
    ordered.emplace_back(lines.front(), message(source.source_name(), ":", lines.front(), ": ", item, " ignored (",
                                                entry.reason, ")", lines.size() > 1 ? "; lines " : "; line ", listed));
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> result;
  result.reserve(ordered.size());
  for (auto& entry : ordered) result.push_back(std::move(entry.second));
  return result;
}

Quat quat_from_roll_pitch_yaw(double roll, double pitch, double yaw) {
  const Quat qx = Quat::from_axis_angle({1, 0, 0}, roll);
  const Quat qy = Quat::from_axis_angle({0, 1, 0}, pitch);
  const Quat qz = Quat::from_axis_angle({0, 0, 1}, yaw);
  return (qz * qy * qx).normalized();
}

Quat quat_from_z_axis(const Vec3& direction) {
  const Vec3 z{0, 0, 1};
  const double c = dot(z, direction);
  if (c < -1.0 + 1e-14) return Quat{0, 1, 0, 0};
  const Vec3 axis = cross(z, direction);
  return Quat{1.0 + c, axis.x, axis.y, axis.z}.normalized();
}

MassProperties combine(const std::vector<MassProperties>& parts) {
  MassProperties total;
  for (const MassProperties& part : parts) {
    total.mass += part.mass;
    total.center += part.center * part.mass;
  }
  if (!(total.mass > 0)) return total;
  total.center = total.center / total.mass;
  for (const MassProperties& part : parts) {
    const Vec3 d = part.center - total.center;
    Mat3 shift = Mat3::identity() * dot(d, d);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) shift(i, j) -= d[i] * d[j];
    total.inertia = total.inertia + part.inertia + shift * part.mass;
  }
  return total;
}

PrincipalFrame principal_frame(const MassProperties& properties, const Vec3& frame_position,
                               const Quat& frame_orientation) {
  Vec3 moments;
  Mat3 axes;
  symmetric_eigen(properties.inertia, moments, axes);
  PrincipalFrame frame;
  frame.position = frame_position + frame_orientation.rotate(properties.center);
  frame.orientation = (frame_orientation * quat_from_matrix(axes)).normalized();
  frame.moments = moments;
  return frame;
}

Scene ItemLines::build(const ModelBuilder& builder, const XmlSource& source) const {
  try {
    return builder.build();
  } catch (const Error& error) {
    const std::string what = error.what();
    for (const auto& [item, line] : entries_) {
      const bool names_item = what.starts_with(item) &&
                              (what.size() == item.size() || what[item.size()] == ':' || what[item.size()] == ' ');
      if (names_item) throw Error(message(source.source_name(), ":", line, ": ", what));
    }
    throw Error(message(source.source_name(), ": ", what));
  }
}

std::optional<ShapeSpec> mesh_collision_shape(const std::filesystem::path& file, const Vec3& scale,
                                              std::string& why_not) {
  try {
    ShapeSpec shape;
    shape.type = ShapeType::ConvexMesh;
    shape.mesh = std::make_shared<const ConvexMesh>(load_convex_mesh(file, scale));
    shape.scale = 1.0;
    return shape;
  } catch (const Error& error) {
    why_not = error.what();
    return std::nullopt;
  }
}

}  // namespace diffphys::io
