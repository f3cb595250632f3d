// io/xml_source.cpp — see xml_source.hpp.
#include "io/xml_source.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "diffphys/convex_mesh.hpp"
#include "math/rotation.hpp"

namespace diffphys::io {

XmlSource::XmlSource(const std::string& text, std::string source_name, std::filesystem::path base_directory)
    : document_(std::make_unique<tinyxml2::XMLDocument>()),
      source_name_(std::move(source_name)),
      base_directory_(std::move(base_directory)) {
  if (document_->Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) {
    // tinyxml2 reports an empty file (or one of blanks and comments) as an error at line 0.
    if (document_->ErrorID() == tinyxml2::XML_ERROR_EMPTY_DOCUMENT)
      throw Error(message(source_name_, ": empty file: it holds no XML element"));
    // ErrorStr() repeats the line; keep tinyxml2's error name and detail.
    const char* detail = document_->ErrorStr();
    throw Error(message(source_name_, ":", document_->ErrorLineNum(), ": XML error: ", detail ? detail : "malformed"));
  }
  if (document_->RootElement() == nullptr) throw Error(message(source_name_, ": XML error: no root element"));
  file_names_.push_back(source_name_);
  document_files_[document_.get()] = 0;
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

XmlSource::Origin XmlSource::origin(const XMLElement* element) const {
  if (const auto spliced = origins_.find(element); spliced != origins_.end()) return spliced->second;
  const auto document = document_files_.find(element->GetDocument());
  return {document == document_files_.end() ? 0 : document->second, element->GetLineNum()};
}

int XmlSource::line(const XMLElement* element) const {
  return origin(element).line;
}

const std::string& XmlSource::file_of(const XMLElement* element) const {
  return file_names_[static_cast<std::size_t>(origin(element).file)];
}

int XmlSource::file_index(const XMLElement* element) const {
  return origin(element).file;
}

std::string XmlSource::where(const XMLElement* element) const {
  return message(file_of(element), ":", line(element), ": ", describe(element));
}

void XmlSource::expand_includes(const std::string& root_tag) {
  std::vector<std::filesystem::path> chain;
  std::error_code ignored;
  const std::filesystem::path self = std::filesystem::weakly_canonical(source_name_, ignored);
  if (!self.empty() && std::filesystem::exists(self, ignored)) chain.push_back(self);
  expand_in(document_->RootElement(), base_directory_, chain, root_tag);
}

void XmlSource::expand_in(XMLElement* element, const std::filesystem::path& directory,
                          std::vector<std::filesystem::path>& chain, const std::string& root_tag) {
  XMLElement* child = element->FirstChildElement();
  while (child) {
    XMLElement* next = child->NextSiblingElement();
    if (std::string_view(child->Name()) != "include") {
      expand_in(child, directory, chain, root_tag);
      child = next;
      continue;
    }
    const std::string name = required_text(child, "file");
    const std::filesystem::path path = directory / name;
    std::error_code status;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, status);
    if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
      std::string cycle;
      for (const auto& entry : chain) cycle += entry.filename().string() + " -> ";
      fail(child, message("include cycle: ", cycle, path.filename().string()));
    }
    if (!std::filesystem::exists(path, status))
      fail(child, message("included file '", path.string(), "': no such file"));
    if (std::filesystem::is_directory(path, status))
      fail(child, message("included file '", path.string(), "' is a directory"));
    std::ifstream stream(path, std::ios::binary);
    std::ostringstream text;
    text << stream.rdbuf();
    if (!stream || stream.bad()) fail(child, message("included file '", path.string(), "': cannot read it"));
    auto document = std::make_unique<tinyxml2::XMLDocument>();
    const std::string contents = text.str();
    if (document->Parse(contents.c_str(), contents.size()) != tinyxml2::XML_SUCCESS) {
      const char* detail = document->ErrorStr();
      throw Error(message(path.string(), ":", document->ErrorLineNum(), ": XML error: ", detail ? detail : "malformed",
                          " (included from ", where(child), ")"));
    }
    XMLElement* included_root = document->RootElement();
    if (included_root == nullptr)
      throw Error(message(path.string(), ": XML error: no root element (included from ", where(child), ")"));
    const int included_file = static_cast<int>(file_names_.size());
    file_names_.push_back(path.string());
    document_files_[document.get()] = included_file;
    tinyxml2::XMLDocument* target = element->GetDocument();
    included_.push_back(std::move(document));
    if (std::string_view(included_root->Name()) != root_tag)
      fail(included_root,
           message("an included file's root element must be <", root_tag, "> (included from ", where(child), ")"));
    // The included file may include others, relative to its own directory.
    chain.push_back(canonical);
    expand_in(included_root, path.parent_path(), chain, root_tag);
    chain.pop_back();
    // Splice copies of its root's children in place of the <include>, each copied element
    // remembering where it was written.
    XMLNode* previous = child;
    for (const XMLElement* source = included_root->FirstChildElement(); source; source = source->NextSiblingElement()) {
      XMLElement* copy = source->DeepClone(target)->ToElement();
      element->InsertAfterChild(previous, copy);
      previous = copy;
      // Walk the original and the copy together (DeepClone keeps the structure).
      std::vector<std::pair<const XMLElement*, const XMLElement*>> pending{{source, copy}};
      while (!pending.empty()) {
        const auto [from, to] = pending.back();
        pending.pop_back();
        const Origin written = origin(from);
        origins_[to] = written;
        for (const XMLElement *a = from->FirstChildElement(), *b = to->FirstChildElement(); a && b;
             a = a->NextSiblingElement(), b = b->NextSiblingElement())
          pending.emplace_back(a, b);
      }
    }
    element->DeleteChild(child);
    child = next;
  }
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
  messages_.emplace_back(std::pair{source.file_index(element), source.line(element)},
                         message(source.where(element), ": ", what));
}

void Warnings::ignored(const XMLElement* element, const std::string& item, const std::string& reason) {
  Ignored& entry = ignored_[item];
  entry.reason = reason;
  entry.elements.push_back(element);
}

std::vector<std::string> Warnings::finish(const XmlSource& source) const {
  std::vector<std::pair<std::pair<int, int>, std::string>> ordered = messages_;
  for (const auto& [item, entry] : ignored_) {
    // One message per file the item appears in, listing its lines there.
    std::map<int, std::vector<int>> lines_by_file;
    for (const XMLElement* element : entry.elements)
      lines_by_file[source.file_index(element)].push_back(source.line(element));
    for (auto& [file, lines] : lines_by_file) {
      std::sort(lines.begin(), lines.end());
      lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
      std::string listed;
      for (const int line : lines) listed += (listed.empty() ? "" : ", ") + std::to_string(line);
      ordered.emplace_back(std::pair{file, lines.front()},
                           message(source.file_name(file), ":", lines.front(), ": ", item, " ignored (", entry.reason,
                                   ")", lines.size() > 1 ? "; lines " : "; line ", listed));
    }
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
    for (const auto& [item, element] : entries_) {
      const bool names_item = what.starts_with(item) &&
                              (what.size() == item.size() || what[item.size()] == ':' || what[item.size()] == ' ');
      if (names_item) throw Error(message(source.file_of(element), ":", source.line(element), ": ", what));
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
