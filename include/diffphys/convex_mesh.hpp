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
//
// Faces may have any number of vertices (the cap of a finely tessellated cylinder has one per
// segment), but the face–face manifold clips polygons in fixed stack buffers so that no step
// allocates. Each face therefore also has a clipping polygon of at most kMaxFaceVertices of
// its own vertices: the face itself when it is small enough, else the vertices that keep most
// of its area (Visvalingam & Whyatt 1993: repeatedly drop the vertex whose triangle with its
// two neighbours is smallest). A subset of a convex polygon's vertices is a convex polygon
// inside it, so clipped contact points stay true surface points; only the sliver between the
// two (at most `clip_deviation` wide) does not bear face–face contacts. Every other query —
// separating axes, closest features, planes, capsules — uses the whole face.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/math.hpp"

namespace diffphys {

struct ConvexMesh {
  // Limits of the narrow phase's fixed-size buffers (collision/convex_mesh_contacts.cpp): a
  // face's clipping polygon is clipped against another's on the stack, without allocation.
  static constexpr int kMaxFaceVertices = 32;

  struct Face {
    Vec3 normal;        // outward unit normal, mesh frame
    double offset = 0;  // the face plane is dot(normal, x) = offset, m
    int first = 0;      // polygon: face_vertices[first, first + count), counter-clockwise
    int count = 0;      // seen from outside (right-handed about `normal`)
    // Clipping polygon: clip_vertices[clip_first, clip_first + clip_count), a subset of the
    // face's vertices in the face's order; clip_count = min(count, kMaxFaceVertices).
    int clip_first = 0;
    int clip_count = 0;
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
  std::vector<int> clip_vertices;  // vertex indices of every face's clipping polygon, concatenated
  // The largest distance from a face vertex left out of its clipping polygon to that polygon
  // (mesh frame, scale 1), m; 0 when every face has at most kMaxFaceVertices vertices.
  double clip_deviation = 0.0;
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
// not finite, or span no volume (all on a plane or a line). Faces of more than
// ConvexMesh::kMaxFaceVertices vertices get a smaller clipping polygon (above).
ConvexMesh convex_hull(std::span<const Vec3> points, std::string_view source);

// The vertices of a triangle mesh file, by extension: .obj (tinyobjloader) or .stl (ASCII or
// binary). Each is multiplied component-wise by `scale`. Throws Error naming the file and
// the reason (missing, unreadable, unknown extension, malformed, no vertices).
std::vector<Vec3> read_mesh_vertices(const std::filesystem::path& path, Vec3 scale = {1, 1, 1});

// convex_hull(read_mesh_vertices(path, scale)), with the file named in every error.
ConvexMesh load_convex_mesh(const std::filesystem::path& path, Vec3 scale = {1, 1, 1});

}  // namespace diffphys
