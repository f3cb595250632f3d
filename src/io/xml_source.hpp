// io/xml_source.hpp — what the URDF and MJCF loaders share: reading an XML file with tinyxml2,
// typed attribute reading with errors that name the file, the line and the element, the
// collection of warnings (what a file says that diffphys ignores or approximates), rotations
// written as Euler angles, frames (Pose), and mass properties of shapes given as full inertia
// tensors.
//
// Every refusal reads "robot.urdf:12: <link 'forearm'>: mass must be positive, got -1":
// file and line from tinyxml2 (XMLElement::GetLineNum), the element's tag and name, the
// offending value. Warnings have the same form and end up in Scene::warnings.
//
// A source may span several files: MJCF's <include> splices another file's elements into
// the document (expand_includes). Those elements keep their own file and line for messages,
// so every message goes through XmlSource::file_of / line, never GetLineNum directly.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/math.hpp"
#include "diffphys/model_builder.hpp"

namespace tinyxml2 {
class XMLDocument;
class XMLElement;
class XMLNode;
}  // namespace tinyxml2

namespace diffphys::io {

using tinyxml2::XMLElement;
using tinyxml2::XMLNode;

// A frame: where a body, joint or geom sits in its parent; `parent * local` composes them.
struct Pose {
  Vec3 position;
  Quat orientation;
  Pose operator*(const Pose& local) const {
    return {position + orientation.rotate(local.position), (orientation * local.orientation).normalized()};
  }
};

class XmlSource {
 public:
  // Parses `text`; a syntax error throws Error "<source_name>:<line>: XML error: ...".
  XmlSource(const std::string& text, std::string source_name, std::filesystem::path base_directory);
  ~XmlSource();
  XmlSource(const XmlSource&) = delete;
  XmlSource& operator=(const XmlSource&) = delete;

  // Reads and parses a file; a missing or unreadable file is an Error naming it.
  static std::unique_ptr<XmlSource> load(const std::filesystem::path& path);

  const XMLElement* root() const;
  const std::string& source_name() const { return source_name_; }

  // Replaces every <include file="..."> element, at any depth, by the children of the named
  // file's root element, which must be `root_tag` (MuJoCo's rule for MJCF). The path is
  // relative to the directory of the file holding the <include>; included files may include
  // others. Refuses, naming the <include>'s file and line: a missing or unreadable file, an
  // XML error in it (with its own file and line), a wrong root, an include cycle.
  void expand_includes(const std::string& root_tag);

  // Where an element was written: its file (this source's name, or an included file's path)
  // and its line there. file_index orders files: 0 is this source, then included files in
  // the order they were read.
  int line(const XMLElement* element) const;
  const std::string& file_of(const XMLElement* element) const;
  int file_index(const XMLElement* element) const;
  const std::string& file_name(int file_index) const { return file_names_[static_cast<std::size_t>(file_index)]; }
  const std::filesystem::path& base_directory() const { return base_directory_; }

  // "file:line: <tag 'name'>" for messages.
  std::string where(const XMLElement* element) const;
  [[noreturn]] void fail(const XMLElement* element, const std::string& what) const;

  // Attribute readers; each refuses a malformed value naming the element and the attribute.
  std::optional<std::string> text(const XMLElement* element, const char* attribute) const;
  std::string required_text(const XMLElement* element, const char* attribute) const;
  std::optional<double> number(const XMLElement* element, const char* attribute) const;
  double required_number(const XMLElement* element, const char* attribute) const;
  // A whitespace-separated list of finite numbers; `counts` lists the accepted lengths.
  std::optional<std::vector<double>> numbers(const XMLElement* element, const char* attribute,
                                             std::initializer_list<std::size_t> counts) const;
  // The same for an attribute value found elsewhere (an MJCF default), reported at `element`.
  std::vector<double> parse_numbers(const XMLElement* element, const char* attribute, const std::string& value,
                                    std::initializer_list<std::size_t> counts) const;
  double parse_number(const XMLElement* element, const char* attribute, const std::string& value) const;
  std::optional<Vec3> vec3(const XMLElement* element, const char* attribute) const;
  bool parse_bool(const XMLElement* element, const char* attribute, const std::string& value) const;

 private:
  struct Origin {
    int file = 0;
    int line = 0;
  };
  Origin origin(const XMLElement* element) const;
  // Expands the <include> children of `element` (and below), in element's own document;
  // `directory` is that document's file's; `chain` lists the files being expanded.
  void expand_in(XMLElement* element, const std::filesystem::path& directory, std::vector<std::filesystem::path>& chain,
                 const std::string& root_tag);

  std::unique_ptr<tinyxml2::XMLDocument> document_;
  std::string source_name_;
  std::filesystem::path base_directory_;
  std::vector<std::unique_ptr<tinyxml2::XMLDocument>> included_;  // kept alive while expanding
  std::vector<std::string> file_names_;                           // by file index
  std::map<const tinyxml2::XMLDocument*, int> document_files_;    // document → file index
  std::map<const XMLElement*, Origin> origins_;                   // spliced copies → where written
};

// Warnings of one load, in file order. Repeated ignorable items (the same attribute on many
// elements) are merged into one message listing every line.
// Messages are ordered by file (the main file first, then included files) and line.
class Warnings {
 public:
  void add(const XmlSource& source, const XMLElement* element, const std::string& what);
  // "<tag>@<attribute>" ignored on this line for `reason`; merged across lines of one file.
  void ignored(const XMLElement* element, const std::string& item, const std::string& reason);
  std::vector<std::string> finish(const XmlSource& source) const;

 private:
  struct Ignored {
    std::string reason;
    std::vector<const XMLElement*> elements;
  };
  std::vector<std::pair<std::pair<int, int>, std::string>> messages_;  // ((file, line), message)
  std::map<std::string, Ignored> ignored_;                             // by item
};

// The tag and, if it has one, the name of an element: "<joint 'elbow'>".
std::string describe(const XMLElement* element);

// Rotation of fixed-axis roll, pitch, yaw (URDF rpy): R = Rz(yaw) Ry(pitch) Rx(roll).
Quat quat_from_roll_pitch_yaw(double roll, double pitch, double yaw);
// The shortest rotation taking +z onto the unit vector `direction`.
Quat quat_from_z_axis(const Vec3& direction);

// Mass, centre of mass and inertia tensor (about the centre of mass), all in one frame.
struct MassProperties {
  double mass = 0.0;
  Vec3 center;
  Mat3 inertia;
};
// Sum of parts (parallel-axis theorem); the result is about the combined centre of mass.
MassProperties combine(const std::vector<MassProperties>& parts);

// A body placed in its principal frame: the frame's pose (world) and the principal moments
// (ascending), from mass properties given in a frame posed at (frame_position, frame_orientation).
struct PrincipalFrame {
  Vec3 position;     // centre of mass, world
  Quat orientation;  // principal axes → world
  Vec3 moments;      // principal moments, ascending, kg·m²
};
PrincipalFrame principal_frame(const MassProperties& properties, const Vec3& frame_position,
                               const Quat& frame_orientation);

// Where each item the builder may name ("body 'forearm'", "joint 'elbow'") is in the file.
// build() refusals come back as "file:line: body 'forearm': mass must be positive, got -1".
class ItemLines {
 public:
  void note(std::string item, const XMLElement* element) { entries_.emplace_back(std::move(item), element); }
  Scene build(const ModelBuilder& builder, const XmlSource& source) const;

 private:
  std::vector<std::pair<std::string, const XMLElement*>> entries_;
};

// THE place where a mesh becomes a collision shape: the convex hull of `file` (OBJ or STL,
// diffphys/convex_mesh.hpp) with its coordinates scaled by `scale`. A mesh that cannot be
// read (a missing file, a degenerate hull) returns nothing, with the reason
// in `why_not`, and the caller skips it with a warning naming the element.
std::optional<ShapeSpec> mesh_collision_shape(const std::filesystem::path& file, const Vec3& scale,
                                              std::string& why_not);

}  // namespace diffphys::io
