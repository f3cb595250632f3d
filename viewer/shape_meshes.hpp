// viewer/shape_meshes.hpp — the shapes a trajectory's model block can carry (sphere, box,
// capsule, cylinder, convex mesh; docs/scene-format.md, "Shapes") as triangle meshes in the
// shape's own frame, for the software renderer (viewer/render_trajectory.hpp), and the poses
// that place them. Capsules and cylinders run along the shape's z, as in scene files.
// Curved surfaces carry their exact normals (smooth shading); flat faces their face normal.
#pragma once

#include <array>
#include <vector>

#include "raster.hpp"

namespace diffphys::viewer {

// Triangles over shared corners; each corner has a normal (unit, outward).
struct TriangleMesh {
  std::vector<Vec3> positions;
  std::vector<Vec3> normals;  // one per position
  std::vector<std::array<int, 3>> triangles;
};

// A rigid transform: a point x of the frame is at position + R(orientation) x in the parent.
struct Pose {
  Vec3 position{0, 0, 0};
  std::array<double, 4> orientation{1, 0, 0, 0};  // unit quaternion [w, x, y, z]

  Vec3 rotate(const Vec3& vector) const;
  Vec3 apply(const Vec3& point) const { return add(position, rotate(point)); }
  // This pose after `inner`: the pose in this pose's parent of a frame placed by `inner` in this one.
  Pose compose(const Pose& inner) const;

 private:
  static Vec3 add(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
};

// The rotation taking +z onto `direction` (non-zero), the shortest one.
std::array<double, 4> rotation_from_z(const Vec3& direction);
// A row-major 3×3 rotation matrix as a unit quaternion [w, x, y, z].
std::array<double, 4> quaternion_from_matrix(const std::array<double, 9>& rotation);

// `segments` around the z axis, `rings` from pole to pole (at least 3 and 2).
TriangleMesh sphere_mesh(double radius, int segments = 48, int rings = 24);
TriangleMesh box_mesh(const Vec3& half_extents);
// The segment from −half_length to +half_length on z, swept by a sphere of `radius`.
TriangleMesh capsule_mesh(double radius, double half_length, int segments = 32, int cap_rings = 8);
TriangleMesh cylinder_mesh(double radius, double half_length, int segments = 40);
// Polygons (lists of vertex indices, counter-clockwise seen from outside), each fanned into
// triangles with its own flat normal; vertices scaled by `scale`. Indices must be in range.
TriangleMesh polygon_mesh(const std::vector<Vec3>& vertices, const std::vector<std::vector<int>>& faces, double scale);

}  // namespace diffphys::viewer
