// diffphys/math.hpp — the small fixed-size algebra every stage speaks: Vec3, Mat3, Quat.
//
// Why our own and not Eigen: these types appear in every public header, and Eigen in every
// header costs minutes of compile time on a 2-core machine. The solvers' linear algebra is
// specialised (envelope LDLᵀ, small dense LU) and lives in src/solve/, so Eigen is not a
// dependency at all for now. Everything is inline and constexpr-friendly so the compiler
// sees through it in the hot loop.
//
// The types are templates on the scalar (Vec3T<T>, ...; Vec3 = Vec3T<double>) so that a
// stage written once can also run on dual numbers (adjoint/dual.hpp) to get exact local
// derivatives for the backward pass, as TDS does with its scalar policy.
//
// Conventions (DESIGN.md §5): SI units, z up, right-handed; quaternions stored (w, x, y, z)
// and always unit length when they mean a rotation; angular velocity in the world frame.
#pragma once

#include <cmath>
#include <type_traits>

namespace diffphys {

template <typename T>
struct Vec3T {
  using Scalar = T;
  T x = T(0), y = T(0), z = T(0);

  constexpr Vec3T() = default;
  constexpr Vec3T(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  // From a Vec3T of another scalar (double → dual: a constant).
  template <typename U>
    requires(!std::is_same_v<U, T> && std::is_convertible_v<U, T>)
  constexpr explicit Vec3T(const Vec3T<U>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)) {}

  constexpr const T& operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  constexpr T& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }

  constexpr Vec3T operator+(const Vec3T& o) const { return {x + o.x, y + o.y, z + o.z}; }
  constexpr Vec3T operator-(const Vec3T& o) const { return {x - o.x, y - o.y, z - o.z}; }
  constexpr Vec3T operator-() const { return {-x, -y, -z}; }
  constexpr Vec3T operator*(const T& s) const { return {x * s, y * s, z * s}; }
  constexpr Vec3T operator/(const T& s) const { return {x / s, y / s, z / s}; }
  constexpr Vec3T& operator+=(const Vec3T& o) { x += o.x; y += o.y; z += o.z; return *this; }
  constexpr Vec3T& operator-=(const Vec3T& o) { x -= o.x; y -= o.y; z -= o.z; return *this; }
  constexpr Vec3T& operator*=(const T& s) { x *= s; y *= s; z *= s; return *this; }
  constexpr bool operator==(const Vec3T& o) const = default;
};

using Vec3 = Vec3T<double>;

template <typename T>
constexpr Vec3T<T> operator*(const std::type_identity_t<T>& s, const Vec3T<T>& v) { return v * s; }
template <typename T>
constexpr T dot(const Vec3T<T>& a, const Vec3T<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <typename T>
constexpr Vec3T<T> cross(const Vec3T<T>& a, const Vec3T<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
template <typename T>
inline T norm(const Vec3T<T>& v) { using std::sqrt; return sqrt(dot(v, v)); }
template <typename T>
constexpr T squared_norm(const Vec3T<T>& v) { return dot(v, v); }
template <typename T>
inline Vec3T<T> normalized(const Vec3T<T>& v) { return v / norm(v); }
inline bool is_finite(const Vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}
constexpr Vec3 cwise_abs(const Vec3& v) {
  return {v.x < 0 ? -v.x : v.x, v.y < 0 ? -v.y : v.y, v.z < 0 ? -v.z : v.z};
}

// Two unit vectors completing n to a right-handed orthonormal frame (t1, t2, n). Branch-free
// construction of Duff et al. 2017, "Building an orthonormal basis, revisited" (JCGT 6(1)).
template <typename T>
inline void orthonormal_basis(const Vec3T<T>& n, Vec3T<T>& t1, Vec3T<T>& t2) {
  const double sign = n.z < 0 ? -1.0 : 1.0;  // the branch is fixed; derivatives flow through n
  const T a = -1.0 / (sign + n.z);
  const T b = n.x * n.y * a;
  t1 = {1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x};
  t2 = {b, sign + n.y * n.y * a, -n.y};
}

// Row-major 3x3 matrix.
template <typename T>
struct Mat3T {
  T m[3][3] = {{T(0), T(0), T(0)}, {T(0), T(0), T(0)}, {T(0), T(0), T(0)}};

  constexpr Mat3T() = default;
  template <typename U>
    requires(!std::is_same_v<U, T> && std::is_convertible_v<U, T>)
  constexpr explicit Mat3T(const Mat3T<U>& o) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] = T(o.m[i][j]);
  }

  static constexpr Mat3T identity() {
    Mat3T r;
    r.m[0][0] = r.m[1][1] = r.m[2][2] = 1.0;
    return r;
  }
  static constexpr Mat3T diagonal(const Vec3T<T>& d) {
    Mat3T r;
    r.m[0][0] = d.x;
    r.m[1][1] = d.y;
    r.m[2][2] = d.z;
    return r;
  }
  // [v]x, the matrix with [v]x w = v x w.
  static constexpr Mat3T skew(const Vec3T<T>& v) {
    Mat3T r;
    r.m[0][1] = -v.z; r.m[0][2] = v.y;
    r.m[1][0] = v.z;  r.m[1][2] = -v.x;
    r.m[2][0] = -v.y; r.m[2][1] = v.x;
    return r;
  }
  constexpr const T& operator()(int i, int j) const { return m[i][j]; }
  constexpr T& operator()(int i, int j) { return m[i][j]; }
  constexpr Vec3T<T> row(int i) const { return {m[i][0], m[i][1], m[i][2]}; }
  constexpr Vec3T<T> col(int j) const { return {m[0][j], m[1][j], m[2][j]}; }

  constexpr Vec3T<T> operator*(const Vec3T<T>& v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
  constexpr Mat3T operator*(const Mat3T& o) const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        r.m[i][j] = m[i][0] * o.m[0][j] + m[i][1] * o.m[1][j] + m[i][2] * o.m[2][j];
    return r;
  }
  constexpr Mat3T operator+(const Mat3T& o) const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] + o.m[i][j];
    return r;
  }
  constexpr Mat3T operator-(const Mat3T& o) const { return *this + o * T(-1.0); }
  constexpr Mat3T operator*(const T& s) const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[i][j] * s;
    return r;
  }
  constexpr Mat3T transposed() const {
    Mat3T r;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r.m[i][j] = m[j][i];
    return r;
  }
  // R^T v without forming R^T.
  constexpr Vec3T<T> transpose_times(const Vec3T<T>& v) const {
    return {m[0][0] * v.x + m[1][0] * v.y + m[2][0] * v.z,
            m[0][1] * v.x + m[1][1] * v.y + m[2][1] * v.z,
            m[0][2] * v.x + m[1][2] * v.y + m[2][2] * v.z};
  }
};

// Unit quaternion q = (w, x, y, z) rotating body-frame vectors into the world frame.
template <typename T>
struct QuatT {
  T w = T(1), x = T(0), y = T(0), z = T(0);

  constexpr QuatT() = default;
  constexpr QuatT(T w_, T x_, T y_, T z_) : w(w_), x(x_), y(y_), z(z_) {}
  template <typename U>
    requires(!std::is_same_v<U, T> && std::is_convertible_v<U, T>)
  constexpr explicit QuatT(const QuatT<U>& o) : w(T(o.w)), x(T(o.x)), y(T(o.y)), z(T(o.z)) {}

  static constexpr QuatT identity() { return {}; }
  // Rotation by `angle` radians about the unit `axis`.
  static QuatT from_axis_angle(const Vec3T<T>& axis, const T& angle) {
    using std::cos;
    using std::sin;
    const T s = sin(0.5 * angle);
    return {cos(0.5 * angle), axis.x * s, axis.y * s, axis.z * s};
  }
  // exp of the rotation vector r (angle |r| about r/|r|); exact, unit length by construction.
  // Written as (cos(|r|/2), sinc(|r|/2) r/2) so that it is smooth through r = 0.
  static QuatT from_rotation_vector(const Vec3T<T>& r) {
    using std::cos;
    using std::sin;
    using std::sqrt;
    const T angle_squared = dot(r, r);
    if (angle_squared < 1e-16) {
      // Taylor series of cos(a/2) and sin(a/2)/a to the order that is exact in double.
      const T w = 1.0 - angle_squared / 8.0;
      const T half_sinc = 0.5 - angle_squared / 48.0;
      return {w, r.x * half_sinc, r.y * half_sinc, r.z * half_sinc};
    }
    const T angle = sqrt(angle_squared);
    const T half_sinc = sin(0.5 * angle) / angle;
    return {cos(0.5 * angle), r.x * half_sinc, r.y * half_sinc, r.z * half_sinc};
  }

  constexpr Vec3T<T> vec() const { return {x, y, z}; }
  constexpr QuatT conjugate() const { return {w, -x, -y, -z}; }
  constexpr T squared_norm() const { return w * w + x * x + y * y + z * z; }
  QuatT normalized() const {
    using std::sqrt;
    const T n = sqrt(squared_norm());
    return {w / n, x / n, y / n, z / n};
  }
  constexpr bool operator==(const QuatT& o) const = default;

  // Hamilton product: (this ⊗ o) rotates by o first, then by this.
  constexpr QuatT operator*(const QuatT& o) const {
    return {w * o.w - x * o.x - y * o.y - z * o.z, w * o.x + x * o.w + y * o.z - z * o.y,
            w * o.y - x * o.z + y * o.w + z * o.x, w * o.z + x * o.y - y * o.x + z * o.w};
  }
  // Rotate v (body) into the world: v + 2w(u×v) + 2u×(u×v), u the vector part.
  constexpr Vec3T<T> rotate(const Vec3T<T>& v) const {
    const Vec3T<T> u{x, y, z};
    const Vec3T<T> t = cross(u, v) * T(2.0);
    return v + t * w + cross(u, t);
  }
  constexpr Vec3T<T> inverse_rotate(const Vec3T<T>& v) const { return conjugate().rotate(v); }

  constexpr Mat3T<T> to_matrix() const {
    Mat3T<T> r;
    r.m[0][0] = 1 - 2 * (y * y + z * z); r.m[0][1] = 2 * (x * y - w * z); r.m[0][2] = 2 * (x * z + w * y);
    r.m[1][0] = 2 * (x * y + w * z); r.m[1][1] = 1 - 2 * (x * x + z * z); r.m[1][2] = 2 * (y * z - w * x);
    r.m[2][0] = 2 * (x * z - w * y); r.m[2][1] = 2 * (y * z + w * x); r.m[2][2] = 1 - 2 * (x * x + y * y);
    return r;
  }
};

using Mat3 = Mat3T<double>;
using Quat = QuatT<double>;

inline bool is_finite(const Quat& q) {
  return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
}

// Rotation vector (axis * angle, angle in (-pi, pi]) of a unit quaternion: the log map.
template <typename T>
inline Vec3T<T> rotation_vector(const QuatT<T>& q_in) {
  using std::atan2;
  using std::sqrt;
  const QuatT<T> q = q_in.w < 0 ? QuatT<T>{-q_in.w, -q_in.x, -q_in.y, -q_in.z} : q_in;
  const T s_squared = dot(q.vec(), q.vec());
  // 2 atan2(s, w)/s, smooth through s = 0: for tiny s its series 2/w (1 − s²/(3w²)).
  if (s_squared < 1e-16) return q.vec() * (2.0 / q.w * (1.0 - s_squared / (3.0 * q.w * q.w)));
  const T s = sqrt(s_squared);
  return q.vec() * (2.0 * atan2(s, q.w) / s);
}

}  // namespace diffphys
