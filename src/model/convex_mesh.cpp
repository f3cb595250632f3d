// model/convex_mesh.cpp — owns reading triangle-mesh files (OBJ through tinyobjloader, STL by a
// small parser of our own), their convex hull (libqhull, reentrant qhull_r API), the hull's
// polygon/edge topology and the mass properties of the solid hull.
//
// STL is parsed here rather than through a Debian library: the format is a list of
// triangles (binary: an 80-byte header, a count, 50 bytes per triangle; ASCII: "facet
// normal / outer loop / vertex x y z" blocks), and the candidates — assimp (a large
// multi-format importer) and ADMesh (reports errors on stderr, without line numbers) — would
// cost more than they save and give worse error messages.
#include "diffphys/convex_mesh.hpp"

#include <libqhull_r/qhull_ra.h>
#include <tiny_obj_loader.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "diffphys/error.hpp"

namespace diffphys {
namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The OBJ lines (comments cut) with their 1-based numbers, split into words.
std::vector<std::pair<int, std::vector<std::string>>> obj_lines(const std::string& text) {
  std::vector<std::pair<int, std::vector<std::string>>> lines;
  std::istringstream stream(text);
  std::string line;
  for (int number = 1; std::getline(stream, line); ++number) {
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> tokens;
    for (std::string word; words >> word;) tokens.push_back(word);
    if (!tokens.empty()) lines.emplace_back(number, std::move(tokens));
  }
  return lines;
}

// tinyobjloader reads a coordinate that is not a number ("nan", "1,5", a missing z) as 0 and
// keeps face indices outside the vertex list; both are refused here, naming the line. Faces
// are not used (the hull is of the vertices), but an index to nowhere means a broken file.
void check_obj(const std::string& text, const std::string& name) {
  const auto lines = obj_lines(text);
  long long vertex_total = 0;
  for (const auto& [number, words] : lines) vertex_total += words[0] == "v" ? 1 : 0;
  long long vertices_above = 0;
  for (const auto& [number, words] : lines) {
    const std::string& keyword = words[0];
    if (keyword == "v") {
      ++vertices_above;
      if (words.size() < 4)
        throw Error(message(name, ":", number, ": vertex ", vertices_above, " has ", words.size() - 1,
                            " coordinates, expected 'v x y z'"));
      for (std::size_t k = 1; k < words.size(); ++k) {
        char* end = nullptr;
        const double value = std::strtod(words[k].c_str(), &end);
        if (end == words[k].c_str() || *end != '\0' || !std::isfinite(value))
          throw Error(message(name, ":", number, ": vertex ", vertices_above, ": not a finite number: '", words[k], "'"));
      }
    } else if (keyword == "f" || keyword == "l" || keyword == "p") {
      for (std::size_t k = 1; k < words.size(); ++k) {
        const std::string index_text = words[k].substr(0, words[k].find('/'));
        long long index = 0;
        const char* last = index_text.data() + index_text.size();
        const auto [stop, error] = std::from_chars(index_text.data(), last, index);
        const bool known = error == std::errc() && stop == last &&
                           ((index > 0 && index <= vertex_total) || (index < 0 && -index <= vertices_above));
        if (!known)
          throw Error(message(name, ":", number, ": '", keyword, "' refers to vertex '", words[k], "', which does not exist (",
                              vertex_total, " vertices, numbered from 1; a negative index counts back from the line)"));
      }
    }
  }
}

std::vector<Vec3> read_obj(const std::filesystem::path& path) {
  // Checked first: tinyobjloader refuses some of these itself (a face index 0), in words
  // that name neither the vertex nor the index.
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  check_obj(text.str(), path.string());
  tinyobj::ObjReaderConfig config;
  config.triangulate = false;
  config.vertex_color = false;
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(path.string(), config)) {
    std::string reason = reader.Error();
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == '\r')) reason.pop_back();
    throw Error(
        message(path.string(), ": cannot read the OBJ file: ", reason.empty() ? std::string("unknown error") : reason));
  }
  const std::vector<tinyobj::real_t>& coordinates = reader.GetAttrib().vertices;
  std::vector<Vec3> points;
  points.reserve(coordinates.size() / 3);
  for (std::size_t i = 0; i + 2 < coordinates.size(); i += 3)
    points.push_back({static_cast<double>(coordinates[i]), static_cast<double>(coordinates[i + 1]),
                      static_cast<double>(coordinates[i + 2])});
  return points;
}

// Binary STL: 80-byte header, uint32 triangle count, then per triangle 12 little-endian
// float32 (normal, three vertices) and a 2-byte attribute.
std::vector<Vec3> read_binary_stl(const std::string& bytes, const std::string& name) {
  constexpr std::size_t kHeader = 84, kTriangle = 50;
  std::uint32_t triangle_count = 0;
  std::memcpy(&triangle_count, bytes.data() + 80, 4);
  const std::size_t expected = kHeader + kTriangle * static_cast<std::size_t>(triangle_count);
  if (bytes.size() != expected)
    throw Error(message(name, ": binary STL declares ", triangle_count, " triangles (", expected,
                        " bytes) but the file has ", bytes.size(), " bytes"));
  std::vector<Vec3> points;
  points.reserve(3 * static_cast<std::size_t>(triangle_count));
  for (std::size_t t = 0; t < triangle_count; ++t) {
    const char* record = bytes.data() + kHeader + kTriangle * t;
    for (int v = 0; v < 3; ++v) {
      float xyz[3];
      std::memcpy(xyz, record + 12 + 12 * v, sizeof xyz);
      if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
        throw Error(message(name, ": triangle ", t + 1, ", vertex ", v + 1, ": not a finite number: (", xyz[0], ", ",
                            xyz[1], ", ", xyz[2], ")"));
      points.push_back({xyz[0], xyz[1], xyz[2]});
    }
  }
  return points;
}

// ASCII STL: every "vertex x y z" line gives a point; other keywords are checked for
// spelling only (a misspelt keyword is an error with its line number).
std::vector<Vec3> read_ascii_stl(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  std::string line;
  std::vector<Vec3> points;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    std::istringstream words(line);
    std::string keyword;
    if (!(words >> keyword)) continue;
    keyword = lowercase(keyword);
    if (keyword == "vertex") {
      std::string pieces[3];
      Vec3 point;
      for (int k = 0; k < 3; ++k) {
        if (!(words >> pieces[k]))
          throw Error(message(name, ":", line_number, ": expected three coordinates after 'vertex'"));
        char* end = nullptr;
        point[k] = std::strtod(pieces[k].c_str(), &end);
        if (end == pieces[k].c_str() || *end != '\0' || !std::isfinite(point[k]))
          throw Error(message(name, ":", line_number, ": not a finite number: '", pieces[k], "'"));
      }
      points.push_back(point);
    } else if (keyword != "solid" && keyword != "facet" && keyword != "outer" && keyword != "endloop" &&
               keyword != "endfacet" && keyword != "endsolid") {
      throw Error(message(name, ":", line_number, ": unexpected '", keyword,
                          "' (an ASCII STL has solid, facet, outer loop, vertex, endloop, "
                          "endfacet, endsolid)"));
    }
  }
  return points;
}

std::vector<Vec3> read_stl(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(message(name, ": cannot open the file for reading"));
  std::ostringstream buffer;
  buffer << file.rdbuf();
  if (file.bad()) throw Error(message(name, ": cannot read the file"));
  const std::string bytes = buffer.str();
  // "solid" starts ASCII files, but also some binary headers: a binary file is recognised by
  // its size matching its triangle count.
  if (bytes.size() >= 84) {
    std::uint32_t triangle_count = 0;
    std::memcpy(&triangle_count, bytes.data() + 80, 4);
    if (bytes.size() == 84 + 50 * static_cast<std::size_t>(triangle_count)) return read_binary_stl(bytes, name);
  }
  // A text file (no NUL byte) starting with "solid" is ASCII; anything else is binary.
  const std::size_t start = bytes.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && lowercase(bytes.substr(start, 5)) == "solid" &&
      bytes.find('\0') == std::string::npos)
    return read_ascii_stl(bytes, name);
  if (bytes.size() < 84)
    throw Error(message(name, ": not an STL file (", bytes.size(),
                        " bytes: too short for binary STL, and no 'solid' keyword)"));
  return read_binary_stl(bytes, name);  // reports the size mismatch
}

// Newell's normal of a planar polygon (exact for axis-aligned faces), unit.
Vec3 newell_normal(const std::vector<int>& polygon, const std::vector<Vec3>& points) {
  Vec3 normal;
  for (std::size_t i = 0; i < polygon.size(); ++i) {
    const Vec3& p = points[static_cast<std::size_t>(polygon[i])];
    const Vec3& q = points[static_cast<std::size_t>(polygon[(i + 1) % polygon.size()])];
    normal += Vec3{(p.y - q.y) * (p.z + q.z), (p.z - q.z) * (p.x + q.x), (p.x - q.x) * (p.y + q.y)};
  }
  return normal / norm(normal);
}

// The polygon of a merged qhull facet, ordered counter-clockwise about `normal` (by angle
// around the vertices' mean), starting from the lowest vertex index so that the order does
// not depend on qhull's internal one.
std::vector<int> ordered_polygon(std::vector<int> indices, const std::vector<Vec3>& points, const Vec3& normal) {
  Vec3 center;
  for (int i : indices) center += points[static_cast<std::size_t>(i)];
  center = center / static_cast<double>(indices.size());
  Vec3 u, v;
  orthonormal_basis(normal, u, v);
  std::vector<std::pair<double, int>> by_angle;
  for (int i : indices) {
    const Vec3 d = points[static_cast<std::size_t>(i)] - center;
    by_angle.emplace_back(std::atan2(dot(d, v), dot(d, u)), i);
  }
  std::sort(by_angle.begin(), by_angle.end());
  std::vector<int> polygon;
  for (const auto& entry : by_angle) polygon.push_back(entry.second);
  if (dot(newell_normal(polygon, points), normal) < 0.0) std::reverse(polygon.begin(), polygon.end());
  std::rotate(polygon.begin(), std::min_element(polygon.begin(), polygon.end()), polygon.end());
  return polygon;
}

// The clipping polygon of a face (diffphys/convex_mesh.hpp): the polygon itself when it has at
// most kMaxFaceVertices vertices; else Visvalingam–Whyatt simplification (Visvalingam &
// Whyatt 1993, "Line generalisation by repeated elimination of points"): drop, one at a time,
// the vertex whose triangle with its current neighbours has the least area (ties, up to
// rounding: the first in the face's order), until kMaxFaceVertices remain. Raises `deviation` to the largest
// distance from a dropped vertex to the kept polygon's boundary.
std::vector<int> clipping_polygon(const std::vector<int>& polygon, const std::vector<Vec3>& points, const Vec3& normal,
                                  double& deviation) {
  if (static_cast<int>(polygon.size()) <= ConvexMesh::kMaxFaceVertices) return polygon;
  const auto point = [&](int index) { return points[static_cast<std::size_t>(index)]; };
  std::vector<int> kept = polygon;
  while (static_cast<int>(kept.size()) > ConvexMesh::kMaxFaceVertices) {
    const std::size_t n = kept.size();
    std::vector<double> areas(n);
    double largest_area = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      const Vec3 previous = point(kept[(k + n - 1) % n]), current = point(kept[k]), next = point(kept[(k + 1) % n]);
      areas[k] = 0.5 * dot(cross(current - previous, next - current), normal);
      largest_area = std::max(largest_area, areas[k]);
    }
    // Areas equal up to rounding are ties, broken by the face's order, so that a regular
    // polygon loses every other vertex and keeps a regular one.
    const double smallest_area = *std::min_element(areas.begin(), areas.end());
    std::size_t smallest = 0;
    while (areas[smallest] > smallest_area + 1e-9 * largest_area) ++smallest;
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(smallest));
  }
  for (const int dropped : polygon) {
    if (std::find(kept.begin(), kept.end(), dropped) != kept.end()) continue;
    double closest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < kept.size(); ++k) {
      const Vec3 start = point(kept[k]), end = point(kept[(k + 1) % kept.size()]);
      const Vec3 along = end - start;
      const double t = std::clamp(dot(point(dropped) - start, along) / dot(along, along), 0.0, 1.0);
      closest = std::min(closest, norm(point(dropped) - (start + along * t)));
    }
    deviation = std::max(deviation, closest);
  }
  return kept;
}

// Volume, centroid and inertia about the centroid of the solid at unit density, by the
// divergence theorem over the boundary: each face is split into a fan of triangles and each
// triangle (a, b, c) contributes the signed tetrahedron (o, a, b, c) from an interior point
// o (Eberly, "Polyhedral Mass Properties (Revisited)", 2002; Mirtich 1996). The
// tetrahedron's second moment ∫ x xᵀ dV = det/120 · (Σ vᵢvᵢᵀ + (Σ vᵢ)(Σ vᵢ)ᵀ) (Tonon 2004).
void compute_mass_properties(ConvexMesh& mesh) {
  Vec3 origin;
  for (const Vec3& p : mesh.vertices) origin += p;
  origin = origin / static_cast<double>(mesh.vertices.size());
  double volume = 0.0;
  Vec3 first_moment;
  Mat3 second_moment;
  for (const ConvexMesh::Face& face : mesh.faces) {
    const auto vertex = [&](int k) {
      return mesh.vertices[static_cast<std::size_t>(mesh.face_vertices[static_cast<std::size_t>(face.first + k)])] -
             origin;
    };
    for (int k = 1; k + 1 < face.count; ++k) {
      const Vec3 a = vertex(0), b = vertex(k), c = vertex(k + 1);
      const double det = dot(a, cross(b, c));
      volume += det / 6.0;
      first_moment += (a + b + c) * (det / 24.0);
      const Vec3 sum = a + b + c;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          second_moment(i, j) += det / 120.0 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + sum[i] * sum[j]);
    }
  }
  mesh.volume = volume;
  const Vec3 centroid_offset = first_moment / volume;
  mesh.centroid = origin + centroid_offset;
  // Covariance about the centroid, then I = tr(C) 1 − C.
  Mat3 covariance = second_moment;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) covariance(i, j) -= volume * centroid_offset[i] * centroid_offset[j];
  const double trace = covariance(0, 0) + covariance(1, 1) + covariance(2, 2);
  mesh.inertia = Mat3::identity() * trace - covariance;
}

// Runs qhull and returns the merged facets as (normal, vertex indices).
std::vector<std::pair<Vec3, std::vector<int>>> qhull_facets(std::span<const Vec3> points, const std::string& name) {
  std::vector<coordT> coordinates;
  coordinates.reserve(3 * points.size());
  for (const Vec3& p : points) coordinates.insert(coordinates.end(), {p.x, p.y, p.z});
  // qhull writes its diagnostics to a stream: capture them for the error message.
  char* diagnostics = nullptr;
  std::size_t diagnostics_size = 0;
  FILE* error_stream = open_memstream(&diagnostics, &diagnostics_size);
  qhT qh_storage;
  qhT* qh = &qh_storage;
  qh_zero(qh, error_stream);
  // Default options merge coplanar facets (C-0, Qx), which gives polygonal faces.
  char options[] = "qhull";
  const int exit_code =
      qh_new_qhull(qh, 3, static_cast<int>(points.size()), coordinates.data(), False, options, nullptr, error_stream);
  std::vector<std::pair<Vec3, std::vector<int>>> facets;
  if (exit_code == 0) {
    facetT* facet;
    FORALLfacets {
      std::vector<int> indices;
      vertexT* vertex;
      vertexT** vertexp;
      FOREACHvertex_(facet->vertices) indices.push_back(qh_pointid(qh, vertex->point));
      const Vec3 normal{facet->normal[0], facet->normal[1], facet->normal[2]};
      facets.emplace_back(normal, std::move(indices));
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int current_long = 0, total_long = 0;
  qh_memfreeshort(qh, &current_long, &total_long);
  std::fclose(error_stream);
  std::string detail = diagnostics ? std::string(diagnostics, diagnostics_size) : std::string();
  std::free(diagnostics);
  if (exit_code != 0) {
    const std::size_t line_end = detail.find('\n');
    const std::string first_line = detail.substr(0, line_end);
    const bool flat = detail.find("flat") != std::string::npos || detail.find("coplanar") != std::string::npos ||
                      detail.find("QH6154") != std::string::npos;
    throw Error(message(
        name, ": degenerate mesh: ",
        flat ? "its points span no volume (they lie on a plane or a line)" : "qhull could not build the convex hull",
        first_line.empty() ? "" : " (qhull: " + first_line + ")"));
  }
  return facets;
}

}  // namespace

ConvexMesh convex_hull(std::span<const Vec3> points, std::string_view source) {
  const std::string name(source);
  if (points.size() < 4)
    throw Error(
        message(name, ": degenerate mesh: ", points.size(), " points; a convex hull with volume needs at least 4"));
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!is_finite(points[i]))
      throw Error(
          message(name, ": vertex #", i, " is not finite: (", points[i].x, ", ", points[i].y, ", ", points[i].z, ")"));
  const std::vector<std::pair<Vec3, std::vector<int>>> facets = qhull_facets(points, name);

  ConvexMesh mesh;
  mesh.source = name;
  // Hull vertices in the order of the input points (deterministic), renumbered densely.
  std::map<int, int> vertex_of_point;
  for (const auto& facet : facets)
    for (int point : facet.second) vertex_of_point.emplace(point, 0);
  for (auto& [point, vertex] : vertex_of_point) {
    vertex = static_cast<int>(mesh.vertices.size());
    mesh.vertices.push_back(points[static_cast<std::size_t>(point)]);
  }
  // Faces as polygons; the face order is fixed by the lowest vertex index, then the next.
  std::vector<std::vector<int>> polygons;
  for (const auto& [qhull_normal, point_indices] : facets) {
    std::vector<int> indices;
    for (int point : point_indices) indices.push_back(vertex_of_point.at(point));
    polygons.push_back(ordered_polygon(std::move(indices), mesh.vertices, qhull_normal));
  }
  std::sort(polygons.begin(), polygons.end());
  std::map<std::pair<int, int>, int> edge_of_pair;
  for (const std::vector<int>& polygon : polygons) {
    ConvexMesh::Face face;
    face.normal = newell_normal(polygon, mesh.vertices);
    face.first = static_cast<int>(mesh.face_vertices.size());
    face.count = static_cast<int>(polygon.size());
    face.offset = -std::numeric_limits<double>::infinity();
    const int face_index = static_cast<int>(mesh.faces.size());
    for (std::size_t k = 0; k < polygon.size(); ++k) {
      const int from = polygon[k];
      const int to = polygon[(k + 1) % polygon.size()];
      face.offset = std::max(face.offset, dot(face.normal, mesh.vertices[static_cast<std::size_t>(from)]));
      const std::pair<int, int> key{std::min(from, to), std::max(from, to)};
      auto [entry, inserted] = edge_of_pair.emplace(key, static_cast<int>(mesh.edges.size()));
      if (inserted) {
        ConvexMesh::Edge edge;
        edge.vertex[0] = key.first;
        edge.vertex[1] = key.second;
        edge.face[0] = edge.face[1] = face_index;
        mesh.edges.push_back(edge);
      } else {
        mesh.edges[static_cast<std::size_t>(entry->second)].face[1] = face_index;
      }
      mesh.face_vertices.push_back(from);
      mesh.face_edges.push_back(entry->second);
    }
    const std::vector<int> clip = clipping_polygon(polygon, mesh.vertices, face.normal, mesh.clip_deviation);
    face.clip_first = static_cast<int>(mesh.clip_vertices.size());
    face.clip_count = static_cast<int>(clip.size());
    mesh.clip_vertices.insert(mesh.clip_vertices.end(), clip.begin(), clip.end());
    mesh.faces.push_back(face);
  }
  for (const ConvexMesh::Edge& edge : mesh.edges)
    if (edge.face[0] == edge.face[1])
      throw Error(message(name,
                          ": degenerate mesh: the hull is not closed (qhull merged facets "
                          "inconsistently; try removing near-duplicate vertices)"));
  compute_mass_properties(mesh);
  if (!(mesh.volume > 0.0))
    throw Error(message(name, ": degenerate mesh: its hull has no volume (", mesh.volume, " m³)"));
  return mesh;
}

std::vector<Vec3> read_mesh_vertices(const std::filesystem::path& path, Vec3 scale) {
  const std::string name = path.string();
  std::error_code status_error;
  if (!std::filesystem::exists(path, status_error)) throw Error(message(name, ": no such file"));
  if (std::filesystem::is_directory(path, status_error))
    throw Error(message(name, ": is a directory, not a mesh file"));
  if (!is_finite(scale) || !(scale.x > 0 && scale.y > 0 && scale.z > 0))
    throw Error(message(name, ": mesh scale must be positive, got (", scale.x, ", ", scale.y, ", ", scale.z, ")"));
  const std::string extension = lowercase(path.extension().string());
  std::vector<Vec3> points;
  if (extension == ".obj") {
    points = read_obj(path);
  } else if (extension == ".stl") {
    points = read_stl(path);
  } else {
    throw Error(message(name, ": unknown mesh format '", extension, "' (supported: .obj, .stl)"));
  }
  if (points.empty()) throw Error(message(name, ": the mesh has no vertices"));
  for (Vec3& p : points) p = {p.x * scale.x, p.y * scale.y, p.z * scale.z};
  return points;
}

ConvexMesh load_convex_mesh(const std::filesystem::path& path, Vec3 scale) {
  const std::vector<Vec3> points = read_mesh_vertices(path, scale);
  return convex_hull(points, path.string());
}

}  // namespace diffphys
