// diffphys/convex_mesh.hpp — convex polyhedra for collision shapes: the hull of a triangle mesh
// (OBJ or STL file, or a point list), with the topology the narrow phase needs and the mass
// properties of the solid.
//
// A ConvexMesh is built once (load_convex_mesh, convex_hull) and never changes; a Model owns
// its meshes and a ShapeType::ConvexMesh shape refers to one by index. Coordinates are those
// of the file (the mesh frame), at scale 1; a shape multiplies them by its uniform scale, a
// differentiable size parameter like a sphere's radius. Faces are the hull's facets with
// coplanar triangles merged (a cube has 6 quadrilateral faces, not 12 triangles), so that a
// mesh resting on a face gets the same contact manifold as the primitive it approximates.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/math.hpp"

namespace diffphys {

struct ConvexMesh {
  // Limits of the narrow phase's fixed-size buffers (collision/narrow_phase.cpp): a face is
  // clipped against another on the stack, without allocation.
  static constexpr int kMaxFaceVertices = 32;

  struct Face {
    Vec3 normal;        // outward unit normal, mesh frame
    double offset = 0;  // the face plane is dot(normal, x) = offset, m
    int first = 0;      // polygon: face_vertices[first, first + count), counter-clockwise
    int count = 0;      // seen from outside (right-handed about `normal`)
  };
  struct Edge {
    int vertex[2] = {0, 0};  // vertex indices, vertex[0] < vertex[1]
    int face[2] = {0, 0};    // the two faces that share the edge
  };

  std::string source;              // where the mesh came from (for messages)
  std::vector<Vec3> vertices;      // (nvertex) hull vertices, mesh frame, m
  std::vector<Face> faces;         // (nface)
  std::vector<int> face_vertices;  // vertex indices of every face polygon, concatenated
  std::vector<int> face_edges;     // parallel to face_vertices: edge from vertex i to i + 1
  std::vector<Edge> edges;         // (nedge) each hull edge once
  // Mass properties of the solid at unit density and scale 1 (Mirtich 1996): volume (m³),
  // centroid (mesh frame, m), inertia about the centroid along the mesh axes (kg·m² per
  // kg/m³). At scale s: volume s³, centroid s, inertia s⁵.
  double volume = 0.0;
  Vec3 centroid;
  Mat3 inertia;

  int vertex_count() const { return static_cast<int>(vertices.size()); }
  int face_count() const { return static_cast<int>(faces.size()); }
  int edge_count() const { return static_cast<int>(edges.size()); }
};

// The convex hull of `points` (libqhull), merged into polygonal faces, with its topology and
// mass properties. Throws Error naming `source` and the reason when the points are too few,
// not finite, or span no volume (all on a plane or a line), or when a hull face has more
// than ConvexMesh::kMaxFaceVertices vertices.
ConvexMesh convex_hull(std::span<const Vec3> points, std::string_view source);

// The vertices of a triangle mesh file, by extension: .obj (tinyobjloader) or .stl (ASCII or
// binary). Each is multiplied component-wise by `scale`. Throws Error naming the file and
// the reason (missing, unreadable, unknown extension, malformed, no vertices).
std::vector<Vec3> read_mesh_vertices(const std::filesystem::path& path, Vec3 scale = {1, 1, 1});

// convex_hull(read_mesh_vertices(path, scale)), with the file named in every error.
ConvexMesh load_convex_mesh(const std::filesystem::path& path, Vec3 scale = {1, 1, 1});

}  // namespace diffphys
