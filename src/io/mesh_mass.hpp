// io/mesh_mass.hpp — mass properties of the solid a triangle mesh file bounds, for MJCF mesh
// geoms whose body takes its mass from its geoms (MuJoCo's rule: density × the mesh's volume,
// or the geom's mass, distributed uniformly through the solid).
//
// The mesh is the file's own triangles (OBJ faces, fan-triangulated; STL triangles), not its
// convex hull: a mug is hollow. Volume, centroid and inertia come from the divergence
// theorem, one signed tetrahedron per triangle (what MuJoCo 2.2 computes with
// <compiler exactmeshinertia="true">; its default formula agrees on convex meshes only).
#pragma once

#include <filesystem>

#include "diffphys/math.hpp"

namespace diffphys::io {

struct SolidMesh {
  double volume = 0.0;  // m³
  Vec3 centroid;        // mesh frame, m
  Mat3 inertia;         // about the centroid, mesh axes, per unit density (kg·m² per kg/m³)
  bool convex = true;   // no edge folds inwards (MuJoCo 2.2's default mesh formula is exact then)
};

// Reads `file` (OBJ or STL) with its coordinates multiplied by `scale`. Throws Error naming
// the file when it cannot be read, when the surface is not closed and consistently oriented
// (an edge not shared by exactly two triangles running opposite ways), or when the volume it
// bounds is not positive.
SolidMesh solid_mesh(const std::filesystem::path& file, const Vec3& scale);

}  // namespace diffphys::io
