// math/rotation.cpp — see rotation.hpp.
#include "math/rotation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace diffphys {

Quat unit_or_normalized(const Quat& q) {
  if (std::abs(q.squared_norm() - 1.0) <= 1e-12) return q;
  return q.normalized();
}

Quat quat_from_matrix(const Mat3& r) {
  const double trace = r(0, 0) + r(1, 1) + r(2, 2);
  Quat q;
  if (trace > 0.0) {
    const double s = 2.0 * std::sqrt(1.0 + trace);
    q = {0.25 * s, (r(2, 1) - r(1, 2)) / s, (r(0, 2) - r(2, 0)) / s, (r(1, 0) - r(0, 1)) / s};
  } else if (r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + r(0, 0) - r(1, 1) - r(2, 2));
    q = {(r(2, 1) - r(1, 2)) / s, 0.25 * s, (r(0, 1) + r(1, 0)) / s, (r(0, 2) + r(2, 0)) / s};
  } else if (r(1, 1) > r(2, 2)) {
    const double s = 2.0 * std::sqrt(1.0 + r(1, 1) - r(0, 0) - r(2, 2));
    q = {(r(0, 2) - r(2, 0)) / s, (r(0, 1) + r(1, 0)) / s, 0.25 * s, (r(1, 2) + r(2, 1)) / s};
  } else {
    const double s = 2.0 * std::sqrt(1.0 + r(2, 2) - r(0, 0) - r(1, 1));
    q = {(r(1, 0) - r(0, 1)) / s, (r(0, 2) + r(2, 0)) / s, (r(1, 2) + r(2, 1)) / s, 0.25 * s};
  }
  if (q.w < 0) q = {-q.w, -q.x, -q.y, -q.z};
  return q.normalized();
}

void symmetric_eigen(const Mat3& symmetric, Vec3& eigenvalues, Mat3& eigenvectors) {
  Mat3 a = symmetric;
  Mat3 v = Mat3::identity();
  // Cyclic Jacobi (Golub & Van Loan, Matrix Computations, §8.5): each rotation zeroes one
  // off-diagonal entry; a 3x3 converges to machine precision in a handful of sweeps.
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a(0, 1) * a(0, 1) + a(0, 2) * a(0, 2) + a(1, 2) * a(1, 2);
    const double scale = a(0, 0) * a(0, 0) + a(1, 1) * a(1, 1) + a(2, 2) * a(2, 2);
    if (off <= 1e-30 * std::max(scale, 1e-300)) break;
    for (int p = 0; p < 2; ++p) {
      for (int q = p + 1; q < 3; ++q) {
        if (a(p, q) == 0.0) continue;
        const double theta = (a(q, q) - a(p, p)) / (2.0 * a(p, q));
        const double t = std::copysign(1.0, theta) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
        const double c = 1.0 / std::sqrt(t * t + 1.0);
        const double s = t * c;
        Mat3 rotation = Mat3::identity();
        rotation(p, p) = c;
        rotation(q, q) = c;
        rotation(p, q) = s;
        rotation(q, p) = -s;
        a = rotation.transposed() * a * rotation;
        v = v * rotation;
      }
    }
  }
  int order[3] = {0, 1, 2};
  std::sort(order, order + 3, [&](int i, int j) { return a(i, i) < a(j, j); });
  Mat3 sorted;
  for (int k = 0; k < 3; ++k) {
    eigenvalues[k] = a(order[k], order[k]);
    for (int row = 0; row < 3; ++row) sorted(row, k) = v(row, order[k]);
  }
  // Make the eigenvector frame right-handed.
  const Vec3 third = cross(sorted.col(0), sorted.col(1));
  if (dot(third, sorted.col(2)) < 0)
    for (int row = 0; row < 3; ++row) sorted(row, 2) = -sorted(row, 2);
  eigenvectors = sorted;
}

double signed_angle(const Vec3& from, const Vec3& to, const Vec3& axis) {
  const Vec3 from_planar = from - axis * dot(axis, from);
  const Vec3 to_planar = to - axis * dot(axis, to);
  return std::atan2(dot(cross(from_planar, to_planar), axis), dot(from_planar, to_planar));
}

}  // namespace diffphys
