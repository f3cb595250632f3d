// io/mesh_mass.cpp — see mesh_mass.hpp.
#include "io/mesh_mass.hpp"

#include <tiny_obj_loader.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/convex_mesh.hpp"  // read_mesh_vertices
#include "diffphys/error.hpp"

namespace diffphys::io {
namespace {

std::vector<std::array<int, 3>> obj_triangles(const std::filesystem::path& file, std::size_t vertex_count) {
  tinyobj::ObjReaderConfig config;
  config.triangulate = false;  // fan-triangulated below, so that polygons keep their order
  config.vertex_color = false;
  tinyobj::ObjReader reader;
  if (!reader.ParseFromFile(file.string(), config))
    throw Error(message(file.string(), ": cannot read the OBJ file: ", reader.Error()));
  std::vector<std::array<int, 3>> triangles;
  for (const tinyobj::shape_t& shape : reader.GetShapes()) {
    std::size_t offset = 0;
    for (const unsigned char count : shape.mesh.num_face_vertices) {
      const auto index = [&](std::size_t k) {
        const int vertex = shape.mesh.indices[offset + k].vertex_index;
        if (vertex < 0 || static_cast<std::size_t>(vertex) >= vertex_count)
          throw Error(message(file.string(), ": a face refers to vertex ", vertex + 1, " of ", vertex_count));
        return vertex;
      };
      for (std::size_t k = 1; k + 1 < count; ++k) triangles.push_back({index(0), index(k), index(k + 1)});
      offset += count;
    }
  }
  return triangles;
}

}  // namespace

SolidMesh solid_mesh(const std::filesystem::path& file, const Vec3& scale) {
  const std::string name = file.string();
  // The vertices, validated and scaled as for collision shapes (convex_mesh.hpp).
  const std::vector<Vec3> vertices = read_mesh_vertices(file, scale);
  std::string extension = file.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::array<int, 3>> triangles;
  if (extension == ".obj") {
    triangles = obj_triangles(file, vertices.size());
  } else {
    // STL: three vertices per triangle, in order.
    for (std::size_t i = 0; i + 2 < vertices.size(); i += 3)
      triangles.push_back({static_cast<int>(i), static_cast<int>(i + 1), static_cast<int>(i + 2)});
  }
  // Corners at the same position are one vertex (STL repeats them; OBJ files repeat them
  // along texture seams), so that the edges between triangles can be matched.
  {
    std::map<std::array<double, 3>, int> index_of;
    std::vector<int> welded(vertices.size());
    for (std::size_t i = 0; i < vertices.size(); ++i)
      welded[i] =
          index_of.emplace(std::array{vertices[i].x, vertices[i].y, vertices[i].z}, static_cast<int>(i)).first->second;
    for (auto& t : triangles)
      for (int& corner : t) corner = welded[static_cast<std::size_t>(corner)];
  }
  if (triangles.empty()) throw Error(message(name, ": the mesh has no faces, so it bounds no volume"));
  // Closed and consistently oriented: every directed edge is matched by its reverse once.
  std::map<std::pair<int, int>, int> directed;
  for (const auto& t : triangles)
    for (int k = 0; k < 3; ++k) ++directed[{t[static_cast<std::size_t>(k)], t[static_cast<std::size_t>((k + 1) % 3)]}];
  std::size_t open = 0;
  for (const auto& [edge, count] : directed) {
    const auto reverse = directed.find({edge.second, edge.first});
    if (count != 1 || reverse == directed.end() || reverse->second != 1) ++open;
  }
  if (open > 0)
    throw Error(message(name, ": the mesh is not a closed, consistently oriented surface (", open, " of ",
                        directed.size(),
                        " edges are not shared by exactly two triangles running opposite ways), so the volume "
                        "it bounds is undefined"));
  // Divergence theorem: the solid is the signed sum of the tetrahedra (origin, a, b, c). The
  // origin is moved to the vertices' mean first so that the sums do not cancel.
  Vec3 origin;
  for (const Vec3& v : vertices) origin += v;
  origin = origin / static_cast<double>(vertices.size());
  double volume = 0.0;
  Vec3 first;
  double second[3][3] = {};
  for (const auto& t : triangles) {
    const Vec3 a = vertices[static_cast<std::size_t>(t[0])] - origin;
    const Vec3 b = vertices[static_cast<std::size_t>(t[1])] - origin;
    const Vec3 c = vertices[static_cast<std::size_t>(t[2])] - origin;
    const double v = dot(a, cross(b, c)) / 6.0;
    const Vec3 s = a + b + c;
    volume += v;
    first += s * (v / 4.0);
    // ∫ x_i x_j over the tetrahedron (0, a, b, c).
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) second[i][j] += v / 20.0 * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j]);
  }
  if (!(volume > 0))
    throw Error(message(name, ": the mesh bounds a volume of ", volume,
                        " m³; a solid needs a positive one (are its faces turned inwards?)"));
  SolidMesh solid;
  solid.volume = volume;
  const Vec3 centre = first / volume;  // relative to origin
  solid.centroid = origin + centre;
  Mat3 covariance;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) covariance(i, j) = second[i][j] - volume * centre[i] * centre[j];
  const double trace = covariance(0, 0) + covariance(1, 1) + covariance(2, 2);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) solid.inertia(i, j) = (i == j ? trace : 0.0) - covariance(i, j);
  // Convex: at every edge, the far corner of one triangle lies on or behind the other's plane
  // (a closed surface that folds outwards everywhere is convex).
  double extent = 0.0;
  for (const Vec3& v : vertices) extent = std::max(extent, norm(v - solid.centroid));
  std::map<std::pair<int, int>, std::size_t> triangle_of_edge;
  for (std::size_t t = 0; t < triangles.size(); ++t)
    for (int k = 0; k < 3; ++k)
      triangle_of_edge[{triangles[t][static_cast<std::size_t>(k)],
                        triangles[t][static_cast<std::size_t>((k + 1) % 3)]}] = t;
  for (std::size_t t = 0; t < triangles.size() && solid.convex; ++t) {
    const auto corner = [&](std::size_t triangle, int k) {
      return vertices[static_cast<std::size_t>(triangles[triangle][static_cast<std::size_t>(k)])];
    };
    const Vec3 a = corner(t, 0), b = corner(t, 1), c = corner(t, 2);
    const Vec3 normal = cross(b - a, c - a);
    const double length = norm(normal);
    if (!(length > 0)) continue;  // a degenerate sliver decides nothing
    for (int k = 0; k < 3 && solid.convex; ++k) {
      const int from = triangles[t][static_cast<std::size_t>(k)],
                to = triangles[t][static_cast<std::size_t>((k + 1) % 3)];
      const std::size_t other = triangle_of_edge.at({to, from});
      for (int m = 0; m < 3; ++m) {
        const int vertex = triangles[other][static_cast<std::size_t>(m)];
        if (vertex == from || vertex == to) continue;
        if (dot(normal, vertices[static_cast<std::size_t>(vertex)] - a) / length > 1e-9 * extent) solid.convex = false;
      }
    }
  }
  return solid;
}

}  // namespace diffphys::io
