// soft/shape_distance.hpp — signed distances of points to the rigid shapes soft nodes collide
// with (planes, spheres, boxes with optional rounded edges, capsules), written once as
// templates on the scalar so that the barrier energy gets exact derivatives from HyperDual,
// plus frame transforms (a shape moving with a rigid body) and a continuous-collision bound.
//
// Smoothness (docs/soft-bodies.md, "Boxes and capsules"): outside a convex shape the
// Euclidean distance is C¹ with a Lipschitz gradient; its Hessian is piecewise smooth and
// jumps where the closest feature changes (a box's face → edge → corner regions, a capsule's
// cylinder → cap). Around a sharp box edge the level sets are cylinders of radius d, so the
// Hessian grows like 1/d as a node approaches the edge; `rounding` r bounds it by 1/r.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

#include "soft/energy_term.hpp"

namespace diffphys::soft {

// A frame pose as stored in θ: p (3), then R (frame → world) row-major (9).
// Frame coordinates of a world point: z = Rᵀ (x − p).
template <class T>
V3<T> to_frame(const T* pose, const V3<T>& x) {
  const V3<T> d{x.x - pose[0], x.y - pose[1], x.z - pose[2]};
  return {pose[3] * d.x + pose[6] * d.y + pose[9] * d.z, pose[4] * d.x + pose[7] * d.y + pose[10] * d.z,
          pose[5] * d.x + pose[8] * d.y + pose[11] * d.z};
}
// World point of frame coordinates: x = p + R z.
template <class T>
V3<T> from_frame(const T* pose, const V3<T>& z) {
  return {pose[0] + pose[3] * z.x + pose[4] * z.y + pose[5] * z.z, pose[1] + pose[6] * z.x + pose[7] * z.y + pose[8] * z.z,
          pose[2] + pose[9] * z.x + pose[10] * z.y + pose[11] * z.z};
}

// Signed distance from z (in the shape's parent frame: the world, or its moving frame) to the
// shape; when `normal` is given, also the outward unit gradient ∇d in the same frame.
template <class T>
T shape_distance(const Obstacle& shape, const V3<T>& z, V3<T>* normal) {
  const V3<T> centre{T(shape.point[0]), T(shape.point[1]), T(shape.point[2])};
  switch (shape.type) {
    case ObstacleType::Plane: {
      const V3<T> n{T(shape.normal[0]), T(shape.normal[1]), T(shape.normal[2])};
      if (normal != nullptr) *normal = n;
      return dot(n, z - centre);
    }
    case ObstacleType::Sphere: {
      const V3<T> offset = z - centre;
      const T length = sqrt(dot(offset, offset));
      if (normal != nullptr) {
        const T inverse = 1.0 / length;
        *normal = {offset.x * inverse, offset.y * inverse, offset.z * inverse};
      }
      return length - shape.radius;
    }
    case ObstacleType::Box:
    case ObstacleType::Capsule:
      break;
  }
  // Shape-local coordinates y = Qᵀ (z − c).
  const std::array<double, 9>& q = shape.rotation;
  const V3<T> offset = z - centre;
  const std::array<T, 3> y{q[0] * offset.x + q[3] * offset.y + q[6] * offset.z,
                           q[1] * offset.x + q[4] * offset.y + q[7] * offset.z,
                           q[2] * offset.x + q[5] * offset.y + q[8] * offset.z};
  std::array<T, 3> w{T(0.0), T(0.0), T(0.0)};  // y minus its closest point on the core (inner box / segment)
  if (shape.type == ObstacleType::Box) {
    bool outside = false;
    int deepest = 0;
    T largest(0.0);
    for (int i = 0; i < 3; ++i) {
      const double h = shape.half_extents[static_cast<std::size_t>(i)];
      const T excess = value_of(y[i]) >= 0.0 ? y[i] - h : -y[i] - h;  // |y_i| − h_i
      if (value_of(excess) > 0.0) {
        outside = true;
        w[i] = value_of(y[i]) >= 0.0 ? excess : -excess;
      }
      if (i == 0 || value_of(excess) > value_of(largest)) {
        largest = excess;
        deepest = i;
      }
    }
    if (!outside) {
      // Inside the inner box: only the sign matters (the barrier is +∞ there).
      if (normal != nullptr) {
        w[deepest] = T(value_of(y[deepest]) >= 0.0 ? 1.0 : -1.0);
        *normal = {q[0] * w[0] + q[1] * w[1] + q[2] * w[2], q[3] * w[0] + q[4] * w[1] + q[5] * w[2],
                   q[6] * w[0] + q[7] * w[1] + q[8] * w[2]};
      }
      return largest - shape.rounding;
    }
  } else {
    const double half = shape.half_length;
    const T along = value_of(y[2]) > half ? T(half) : (value_of(y[2]) < -half ? T(-half) : y[2]);
    w = {y[0], y[1], y[2] - along};
  }
  const T length = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  const T distance = length - (shape.type == ObstacleType::Box ? shape.rounding : shape.radius);
  if (normal != nullptr) {
    const T inverse = 1.0 / length;
    const std::array<T, 3> n{w[0] * inverse, w[1] * inverse, w[2] * inverse};
    *normal = {q[0] * n[0] + q[1] * n[1] + q[2] * n[2], q[3] * n[0] + q[4] * n[1] + q[5] * n[2],
               q[6] * n[0] + q[7] * n[1] + q[8] * n[2]};
  }
  return distance;
}

// Continuous collision: the largest α ≤ 1 such that z + s v stays outside the shape for
// s ∈ [0, α] (z, v in the shape's parent frame, z outside), with a 0.9 safety factor.
// Planes and spheres: exact roots. Boxes and capsules: g(s) = d(z + s v) is convex (distance to
// a convex set), so Newton's method from s = 0 approaches its first root monotonically from
// below and never passes it; a nonnegative slope on the way means no root ahead.
inline double shape_max_step(const Obstacle& shape, const V3<double>& z, const V3<double>& v) {
  double hit = kInfinity;
  if (shape.type == ObstacleType::Plane) {
    const V3<double> n{shape.normal[0], shape.normal[1], shape.normal[2]};
    const double approach = dot(n, v);
    if (approach < 0.0) hit = shape_distance(shape, z, static_cast<V3<double>*>(nullptr)) / -approach;
  } else if (shape.type == ObstacleType::Sphere) {
    // |z + s v − c|² = r²: the smallest positive root.
    const V3<double> offset = z - V3<double>{shape.point[0], shape.point[1], shape.point[2]};
    const double a = dot(v, v), b = 2.0 * dot(offset, v), c = dot(offset, offset) - shape.radius * shape.radius;
    const double discriminant = b * b - 4.0 * a * c;
    if (a > 0.0 && discriminant >= 0.0 && b < 0.0) hit = (-b - std::sqrt(discriminant)) / (2.0 * a);
  } else {
    V3<double> n{};
    double s = 0.0;
    double g = shape_distance(shape, z, &n);
    const double start = g;
    for (int iteration = 0; iteration < 60; ++iteration) {
      const double slope = dot(n, v);
      if (!(slope < 0.0)) break;  // moving away (or along): no root ahead
      s -= g / slope;
      if (s >= 1.0 / 0.9) break;  // the root lies beyond the step
      const V3<double> at{z.x + s * v.x, z.y + s * v.y, z.z + s * v.z};
      g = shape_distance(shape, at, &n);
      if (g <= 1e-10 * start) {
        hit = s;
        break;
      }
    }
    if (hit == kInfinity && s < 1.0 / 0.9 && g > 0.0 && dot(n, v) < 0.0) hit = s;  // not converged: s is still below the root
  }
  return std::min(1.0, 0.9 * hit);
}

}  // namespace diffphys::soft
