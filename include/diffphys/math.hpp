// diffphys/math.hpp — the small fixed-size algebra every stage speaks: Vec3, Mat3, Quat.
//
// Why our own and not Eigen here: these types appear in every public header, and Eigen in
// every header costs minutes of compile time on a 2-core machine. Eigen stays inside the
// .cpp files that need dense or sparse linear algebra. Everything is inline and constexpr-
// friendly so the compiler sees through it in the hot loop.
//
// Conventions (DESIGN.md §5): SI units, z up, right-handed; quaternions stored (w, x, y, z)
// and always unit length when they mean a rotation; angular velocity in the world frame.
#pragma once

#include <cmath>

namespace diffphys {

struct Vec3 {
  double x = 0.0, y = 0.0, z = 0.0;

  constexpr Vec3() = default;
  constexpr Vec3(double x_, double y_, double z_) : x(x_), y(y_), z(z_) {}

  constexpr double operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr double& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3 operator+(const Vec3& o) const { return {x + o.x, y + o.y, z + o.z}; }
  constexpr Vec3 operator-(const Vec3& o) const { return {x - o.x, y - o.y, z - o.z}; }
  constexpr Vec3 operator-() const { return {-x, -y, -z}; }
  constexpr Vec3 operator*(double s) const { return {x * s, y * s, z * s}; }
  constexpr Vec3 operator/(double s) const { return {x / s, y / s, z / s}; }
  constexpr Vec3& operator+=(const Vec3& o) { x += o.x; y += o.y; z += o.z; return *this; }
  constexpr Vec3& operator-=(const Vec3& o) { x -= o.x; y -= o.y; z -= o.z; return *this; }
  constexpr Vec3& operator*=(double s) { x *= s; y *= s; z *= s; return *this; }
  constexpr bool operator==(const Vec3& o) const = default;
};

constexpr Vec3 operator*(double s, const Vec3& v) { return v * s; }
constexpr double dot(const Vec3& a, const Vec3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double norm(const Vec3& v) { return std::sqrt(dot(v, v)); }
constexpr double squared_norm(const Vec3& v) { return dot(v, v); }
inline Vec3 normalized(const Vec3& v) { return v / norm(v); }
inline bool is_finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}
constexpr Vec3 cwise_abs(const Vec3& v) {
  return {v.x < 0 ? -v.x : v.x, v.y < 0 ? -v.y : v.y, v.z < 0 ? -v.z : v.z};
}

// Two unit vectors completing n to a right-handed orthonormal frame (t1, t2, n). Branch-free
// construction of Duff et al. 2017, "Building an orthonormal basis, revisited" (JCGT 6(1)).
inline void orthonormal_basis(const Vec3& n, Vec3& t1, Vec3& t2) {
  const double sign = std::copysign(1.0, n.z);
  const double a = -1.0 / (sign + n.z);
  const double b = n.x * n.y * a;
  t1 = {1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x};
  t2 = {b, sign + n.y * n.y * a, -n.y};
}

// Row-major 3x3 matrix.
struct Mat3 {
  double m[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};

  static constexpr Mat3 identity() {
    Mat3 r;
    r.m[0][0] = r.m[1][1] = r.m[2][2] = 1.0;
    return r;
  }
  static constexpr Mat3 diagonal(const Vec3& d) {
    Mat3 r;
    r.m[0][0] = d.x;
    r.m[1][1] = d.y;
    r.m[2][2] = d.z;
    return r;
  }
  // [v]x, the matrix with [v]x w = v x w.
  static constexpr Mat3 skew(const Vec3& v) {
    Mat3 r;
    r.m[0][1] = -v.z; r.m[0][2] = v.y;
    r.m[1][0] = v.z;  r.m[1][2] = -v.x;
    r.m[2][0] = -v.y; r.m[2][1] = v.x;
    return r;
  }
  constexpr double operator()(int i, int j) const { return m[i][j]; }
  constexpr double& operator()(int i, int j) { return m[i][j]; }
  constexpr Vec3 row(int i) const { return {m[i][0], m[i][1], m[i][2]}; }
  constexpr Vec3 col(int j) const { return {m[0][j], m[1][j], m[2][j]}; }

  constexpr Vec3 operator*(const Vec3& v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
  constexpr Mat3 operator*(const Mat3& o) const {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r.m[i][j] = m[i][0] * o.m[0][j] + m[i][1] * o.m[1][j] + m[i][2] * o.m[2][j];
    return r;
  }
  constexpr Mat3 operator+(const Mat3& o) const {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] + o.m[i][j];
    return r;
  }
  constexpr Mat3 operator-(const Mat3& o) const { return *this + o * -1.0; }
  constexpr Mat3 operator*(double s) const {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] * s;
    return r;
  }
  constexpr Mat3 transposed() const {
    Mat3 r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[j][i];
    return r;
  }
  // R^T v without forming R^T.
  constexpr Vec3 transpose_times(const Vec3& v) const {
    return {m[0][0] * v.x + m[1][0] * v.y + m[2][0] * v.z,
            m[0][1] * v.x + m[1][1] * v.y + m[2][1] * v.z,
            m[0][2] * v.x + m[1][2] * v.y + m[2][2] * v.z};
  }
};

// Unit quaternion q = (w, x, y, z) rotating body-frame vectors into the world frame.
struct Quat {
  double w = 1.0, x = 0.0, y = 0.0, z = 0.0;

  constexpr Quat() = default;
  constexpr Quat(double w_, double x_, double y_, double z_) : w(w_), x(x_), y(y_), z(z_) {}

  static constexpr Quat identity() { return {}; }
  // Rotation by `angle` radians about the unit `axis`.
  static Quat from_axis_angle(const Vec3& axis, double angle) {
    const double s = std::sin(0.5 * angle);
    return {std::cos(0.5 * angle), axis.x * s, axis.y * s, axis.z * s};
  }
  // exp of the rotation vector r (angle |r| about r/|r|); exact, unit length by construction.
  static Quat from_rotation_vector(const Vec3& r) {
    const double angle = norm(r);
    if (angle < 1e-12) return Quat{1.0, 0.5 * r.x, 0.5 * r.y, 0.5 * r.z}.normalized();
    return from_axis_angle(r / angle, angle);
  }

  constexpr Vec3 vec() const { return {x, y, z}; }
  constexpr Quat conjugate() const { return {w, -x, -y, -z}; }
  constexpr double squared_norm() const { return w * w + x * x + y * y + z * z; }
  Quat normalized() const {
    const double n = std::sqrt(squared_norm());
    return {w / n, x / n, y / n, z / n};
  }
  constexpr bool operator==(const Quat& o) const = default;

  // Hamilton product: (this ⊗ o) rotates by o first, then by this.
  constexpr Quat operator*(const Quat& o) const {
    return {w * o.w - x * o.x - y * o.y - z * o.z, w * o.x + x * o.w + y * o.z - z * o.y,
            w * o.y - x * o.z + y * o.w + z * o.x, w * o.z + x * o.y - y * o.x + z * o.w};
  }
  // Rotate v (body) into the world: v + 2w(u×v) + 2u×(u×v), u the vector part.
  constexpr Vec3 rotate(const Vec3& v) const {
    const Vec3 u{x, y, z};
    const Vec3 t = cross(u, v) * 2.0;
    return v + t * w + cross(u, t);
  }
  constexpr Vec3 inverse_rotate(const Vec3& v) const { return conjugate().rotate(v); }

  constexpr Mat3 to_matrix() const {
    Mat3 r;
    r.m[0][0] = 1 - 2 * (y * y + z * z); r.m[0][1] = 2 * (x * y - w * z); r.m[0][2] = 2 * (x * z + w * y);
    r.m[1][0] = 2 * (x * y + w * z); r.m[1][1] = 1 - 2 * (x * x + z * z); r.m[1][2] = 2 * (y * z - w * x);
    r.m[2][0] = 2 * (x * z - w * y); r.m[2][1] = 2 * (y * z + w * x); r.m[2][2] = 1 - 2 * (x * x + y * y);
    return r;
  }
};

inline bool is_finite(const Quat& q) {
  return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
}

// Rotation vector (axis * angle, angle in (-pi, pi]) of a unit quaternion: the log map.
inline Vec3 rotation_vector(const Quat& q_in) {
  const Quat q = q_in.w < 0 ? Quat{-q_in.w, -q_in.x, -q_in.y, -q_in.z} : q_in;
  const double s = norm(q.vec());
  if (s < 1e-12) return q.vec() * 2.0;
  return q.vec() * (2.0 * std::atan2(s, q.w) / s);
}

}  // namespace diffphys
