// viewer/shape_meshes.cpp — tessellation of the scene format's shapes and the poses that
// place them (viewer/shape_meshes.hpp).
#include "shape_meshes.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace diffphys::viewer {
namespace {

Vec3 unit(const Vec3& a) {
  const double length = std::sqrt(dot(a, a));
  return length > 0 ? Vec3{a[0] / length, a[1] / length, a[2] / length} : Vec3{0, 0, 0};
}

std::array<double, 4> normalised(const std::array<double, 4>& q) {
  const double length = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(length > 0)) return {1, 0, 0, 0};
  return {q[0] / length, q[1] / length, q[2] / length, q[3] / length};
}

int add_vertex(TriangleMesh& mesh, const Vec3& position, const Vec3& normal) {
  mesh.positions.push_back(position);
  mesh.normals.push_back(normal);
  return static_cast<int>(mesh.positions.size()) - 1;
}

// A quadrilateral a, b, c, d (counter-clockwise seen from outside) as two triangles.
void add_quad(TriangleMesh& mesh, int a, int b, int c, int d) {
  mesh.triangles.push_back({a, b, c});
  mesh.triangles.push_back({a, c, d});
}

// Rings of a surface of revolution about z: ring r is the circle at height z[r] of radius
// radius[r], its normals tilted by the polar angle polar[r] (0 at +z). Consecutive rings are
// joined by quadrilaterals.
void add_revolution(TriangleMesh& mesh, const std::vector<double>& z, const std::vector<double>& radius,
                    const std::vector<double>& polar, int segments) {
  const int first = static_cast<int>(mesh.positions.size());
  for (std::size_t r = 0; r < z.size(); ++r) {
    for (int s = 0; s <= segments; ++s) {
      const double azimuth = 2.0 * std::numbers::pi * s / segments;
      const double c = std::cos(azimuth), n = std::sin(azimuth);
      add_vertex(mesh, {radius[r] * c, radius[r] * n, z[r]},
                 {std::sin(polar[r]) * c, std::sin(polar[r]) * n, std::cos(polar[r])});
    }
  }
  const int row = segments + 1;
  for (int r = 0; r + 1 < static_cast<int>(z.size()); ++r) {
    for (int s = 0; s < segments; ++s) {
      const int a = first + r * row + s;
      const int b = first + (r + 1) * row + s;
      // Rings go from the top (+z) down: (a, b, b+1, a+1) runs counter-clockwise from outside.
      add_quad(mesh, a, b, b + 1, a + 1);
    }
  }
}

// A flat disc at height z facing ±z.
void add_disc(TriangleMesh& mesh, double radius, double z, bool facing_up, int segments) {
  const Vec3 normal{0, 0, facing_up ? 1.0 : -1.0};
  const int centre = add_vertex(mesh, {0, 0, z}, normal);
  const int first = static_cast<int>(mesh.positions.size());
  for (int s = 0; s < segments; ++s) {
    const double azimuth = 2.0 * std::numbers::pi * s / segments;
    add_vertex(mesh, {radius * std::cos(azimuth), radius * std::sin(azimuth), z}, normal);
  }
  for (int s = 0; s < segments; ++s) {
    const int a = first + s, b = first + (s + 1) % segments;
    if (facing_up)
      mesh.triangles.push_back({centre, a, b});
    else
      mesh.triangles.push_back({centre, b, a});
  }
}

}  // namespace

Vec3 Pose::rotate(const Vec3& v) const {
  // v + 2 w (u × v) + 2 u × (u × v), u the vector part (Rodrigues for a unit quaternion).
  const double w = orientation[0];
  const Vec3 u{orientation[1], orientation[2], orientation[3]};
  const Vec3 t = cross(u, v);
  const Vec3 t2 = cross(u, t);
  return {v[0] + 2 * (w * t[0] + t2[0]), v[1] + 2 * (w * t[1] + t2[1]), v[2] + 2 * (w * t[2] + t2[2])};
}

Pose Pose::compose(const Pose& inner) const {
  const auto& a = orientation;
  const auto& b = inner.orientation;
  const std::array<double, 4> product{
      a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
      a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  return {apply(inner.position), normalised(product)};
}

std::array<double, 4> rotation_from_z(const Vec3& direction) {
  const Vec3 d = unit(direction);
  // The half-way quaternion: [1 + z·d, z × d], normalised; for d = −z, a half turn about x.
  const double w = 1.0 + d[2];
  if (w < 1e-12) return {0, 1, 0, 0};
  return normalised({w, -d[1], d[0], 0.0});
}

std::array<double, 4> quaternion_from_matrix(const std::array<double, 9>& m) {
  // Shepperd's method: the largest of the four diagonal combinations, for stability.
  const double trace = m[0] + m[4] + m[8];
  std::array<double, 4> q;
  if (trace >= std::max({m[0], m[4], m[8]})) {
    const double s = 2.0 * std::sqrt(std::max(0.0, 1.0 + trace));
    q = {0.25 * s, (m[7] - m[5]) / s, (m[2] - m[6]) / s, (m[3] - m[1]) / s};
  } else if (m[0] >= m[4] && m[0] >= m[8]) {
    const double s = 2.0 * std::sqrt(std::max(0.0, 1.0 + m[0] - m[4] - m[8]));
    q = {(m[7] - m[5]) / s, 0.25 * s, (m[1] + m[3]) / s, (m[2] + m[6]) / s};
  } else if (m[4] >= m[8]) {
    const double s = 2.0 * std::sqrt(std::max(0.0, 1.0 + m[4] - m[0] - m[8]));
    q = {(m[2] - m[6]) / s, (m[1] + m[3]) / s, 0.25 * s, (m[5] + m[7]) / s};
  } else {
    const double s = 2.0 * std::sqrt(std::max(0.0, 1.0 + m[8] - m[0] - m[4]));
    q = {(m[3] - m[1]) / s, (m[2] + m[6]) / s, (m[5] + m[7]) / s, 0.25 * s};
  }
  return normalised(q);
}

TriangleMesh sphere_mesh(double radius, int segments, int rings) {
  segments = std::max(segments, 3);
  rings = std::max(rings, 2);
  std::vector<double> z, ring_radius, polar;
  for (int r = 0; r <= rings; ++r) {
    const double angle = std::numbers::pi * r / rings;
    z.push_back(radius * std::cos(angle));
    ring_radius.push_back(radius * std::sin(angle));
    polar.push_back(angle);
  }
  TriangleMesh mesh;
  add_revolution(mesh, z, ring_radius, polar, segments);
  return mesh;
}

TriangleMesh box_mesh(const Vec3& half) {
  TriangleMesh mesh;
  // Each face: its outward axis and two in-face axes with u × v = normal.
  for (int axis = 0; axis < 3; ++axis) {
    for (const double sign : {1.0, -1.0}) {
      Vec3 normal{0, 0, 0};
      normal[static_cast<std::size_t>(axis)] = sign;
      const auto u_axis = static_cast<std::size_t>((axis + 1) % 3), v_axis = static_cast<std::size_t>((axis + 2) % 3);
      Vec3 u{0, 0, 0}, v{0, 0, 0};
      u[u_axis] = half[u_axis];
      v[v_axis] = sign * half[v_axis];
      Vec3 centre{0, 0, 0};
      centre[static_cast<std::size_t>(axis)] = sign * half[static_cast<std::size_t>(axis)];
      const auto corner = [&](double a, double b) {
        return add_vertex(
            mesh, {centre[0] + a * u[0] + b * v[0], centre[1] + a * u[1] + b * v[1], centre[2] + a * u[2] + b * v[2]},
            normal);
      };
      const int c0 = corner(-1, -1), c1 = corner(1, -1), c2 = corner(1, 1), c3 = corner(-1, 1);
      add_quad(mesh, c0, c1, c2, c3);
    }
  }
  return mesh;
}

TriangleMesh capsule_mesh(double radius, double half_length, int segments, int cap_rings) {
  segments = std::max(segments, 3);
  cap_rings = std::max(cap_rings, 1);
  std::vector<double> z, ring_radius, polar;
  // The upper hemisphere from its pole to the equator, then the lower from the equator down.
  for (int r = 0; r <= cap_rings; ++r) {
    const double angle = 0.5 * std::numbers::pi * r / cap_rings;
    z.push_back(half_length + radius * std::cos(angle));
    ring_radius.push_back(radius * std::sin(angle));
    polar.push_back(angle);
  }
  for (int r = 0; r <= cap_rings; ++r) {
    const double angle = 0.5 * std::numbers::pi * (1.0 + static_cast<double>(r) / cap_rings);
    z.push_back(-half_length + radius * std::cos(angle));
    ring_radius.push_back(radius * std::sin(angle));
    polar.push_back(angle);
  }
  TriangleMesh mesh;
  add_revolution(mesh, z, ring_radius, polar, segments);
  return mesh;
}

TriangleMesh cylinder_mesh(double radius, double half_length, int segments) {
  segments = std::max(segments, 3);
  TriangleMesh mesh;
  const double side = 0.5 * std::numbers::pi;
  add_revolution(mesh, {half_length, -half_length}, {radius, radius}, {side, side}, segments);
  add_disc(mesh, radius, half_length, true, segments);
  add_disc(mesh, radius, -half_length, false, segments);
  return mesh;
}

TriangleMesh polygon_mesh(const std::vector<Vec3>& vertices, const std::vector<std::vector<int>>& faces, double scale) {
  TriangleMesh mesh;
  const auto at = [&](int index) {
    const Vec3& v = vertices[static_cast<std::size_t>(index)];
    return Vec3{scale * v[0], scale * v[1], scale * v[2]};
  };
  for (const std::vector<int>& face : faces) {
    if (face.size() < 3) continue;
    // Newell's normal: robust for a polygon that is not quite planar.
    Vec3 normal{0, 0, 0};
    for (std::size_t k = 0; k < face.size(); ++k) {
      const Vec3 a = at(face[k]), b = at(face[(k + 1) % face.size()]);
      normal[0] += (a[1] - b[1]) * (a[2] + b[2]);
      normal[1] += (a[2] - b[2]) * (a[0] + b[0]);
      normal[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    normal = unit(normal);
    const int first = static_cast<int>(mesh.positions.size());
    for (const int index : face) add_vertex(mesh, at(index), normal);
    for (int k = 1; k + 1 < static_cast<int>(face.size()); ++k)
      mesh.triangles.push_back({first, first + k, first + k + 1});
  }
  return mesh;
}

}  // namespace diffphys::viewer
