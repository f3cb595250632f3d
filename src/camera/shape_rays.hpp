// camera/shape_rays.hpp — one ray against one shape, in the shape's frame: the first hit
// (distance, point, outward normal) and the ray's signed distance to the shape's outline, with
// the exact vector–Jacobian product of both (docs/camera.md, "What is differentiated").
//
// Why in the shape frame: every shape is then one formula in its own axes (sphere at the
// origin, box aligned, capsule and cylinder along z, plane z = 0), and the renderer
// (camera_render.cpp) carries poses in and gradients out once per shape.
//
// The outline distance g: the signed distance, in the plane perpendicular to the ray, from the
// ray to the outline of the shape projected along the ray (positive when the ray hits). Its
// zero set is exactly the rays tangent to the shape. Sphere and capsule: r − (distance of the
// line to the centre or axis segment), exact. Box: the smallest gap to the three edge lines of
// the projected hexagon (a zonotope, so its edge normals are d × e_i): exact inside and near
// edges, mitred outside corners. Cylinder: min over the outline's directions m ⊥ d of the
// support function h(m) − m·o, whose minimiser is found by sampling and safeguarded Newton on
// each cap's arc, plus the two straight sides (exact, to Newton's tolerance). Convex mesh: like
// the box, the smallest support gap over the edge normals m_e = (d × e)/|d × e| of its edges
// (the projected outline's edges are among them): exact inside, mitred outside. Plane: −d·n, the
// sine of the angle below the horizon (the renderer fades planes out by distance instead).
#pragma once

#include "diffphys/model.hpp"

namespace diffphys::camera {

struct ShapeRayHit {
  double t = 0.0;        // distance along the (unit) ray to the first hit, m
  double outline = 0.0;  // g (see above), m; plane: −d·n, dimensionless
  Vec3 point;            // hit point, shape frame, m
  Vec3 normal;           // outward unit normal at the hit, shape frame
  // What the VJP needs to know about how the values above were found.
  int face = 0;                // surface part hit: box axis; capsule 0 side, 1 top, 2 bottom; cylinder the
                               // same; mesh face
  int outline_part = 0;        // active outline piece: box axis; cylinder 0 side, 1 top arc, 2 bottom arc,
                               // 3 disc; mesh edge
  int support = 0;             // mesh: the vertex farthest along the outline normal
  Vec3 outline_vector;         // sphere, capsule, disc: the line's offset q from the centre or segment;
                               // box, cylinder, mesh: the outline normal m
  double outline_t = 0.0;      // sphere, capsule, disc: the line's parameter at q
  double outline_clamp = 0.0;  // capsule: ±1 when the closest segment point is an end, else 0
};

// Cotangents of a hit's outputs.
struct ShapeRayCotangent {
  double t = 0.0, outline = 0.0;
  Vec3 point, normal;
};

// Gradient with respect to the ray (shape frame) and the shape's size parameters.
struct ShapeRayGradient {
  Vec3 origin, direction;
  double size[3] = {0.0, 0.0, 0.0};
};

// What a ray is cast against: the shape's type, its size parameters (shape_size_count of
// them: radius, half extents, ..., a mesh's scale) and, for a convex mesh, its hull.
struct RayTarget {
  ShapeType type = ShapeType::Sphere;
  const double* size = nullptr;
  const ConvexMesh* mesh = nullptr;
};

// First hit of the ray origin + t·direction, t > 0 (direction a unit vector, shape frame)
// with outline > 0. False if it misses or the shape is behind the origin.
bool ray_shape(const RayTarget& target, const Vec3& origin, const Vec3& direction, ShapeRayHit& hit);

// Accumulates into `gradient` the cotangent's pull-back through ray_shape at `hit`.
void ray_shape_vjp(const RayTarget& target, const Vec3& origin, const Vec3& direction, const ShapeRayHit& hit,
                   const ShapeRayCotangent& cotangent, ShapeRayGradient& gradient);

// Signed distance-like value of a point to the shape (shape frame): ≤ 0 inside or on it,
// > 0 outside. Used to refuse a camera inside a shape.
double shape_inside_measure(const RayTarget& target, const Vec3& point);

}  // namespace diffphys::camera
