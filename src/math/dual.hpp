// math/dual.hpp — forward-mode dual numbers with N tangent directions.
//
// Dual<N> carries a value and its derivatives along N seeded directions. A stage written on
// the scalar template (Vec3T<T>, QuatT<T>, Mat3T<T>) and evaluated on Dual<N> returns exact
// derivatives of its outputs with respect to its few local inputs — the "local forward mode"
// the backward pass uses where hand-derived derivatives are not worth it. Comparisons look
// at the value only, so a dual evaluation takes the same branches as the double one: the
// discrete decisions (which feature touches, which case applies) are held fixed, which is
// exactly what the gradient of a fixed contact set means.
#pragma once

#include <array>
#include <cmath>

namespace diffphys {

template <int N>
struct Dual {
  double value = 0.0;
  std::array<double, N> derivative{};

  constexpr Dual() = default;
  constexpr Dual(double v) : value(v) {}  // NOLINT: constants convert implicitly
  // The input variable number `index` with value v.
  static constexpr Dual variable(double v, int index) {
    Dual d(v);
    d.derivative[static_cast<std::size_t>(index)] = 1.0;
    return d;
  }

  constexpr Dual operator-() const {
    Dual r;
    r.value = -value;
    for (int i = 0; i < N; ++i) r.derivative[i] = -derivative[i];
    return r;
  }
  constexpr Dual& operator+=(const Dual& o) {
    value += o.value;
    for (int i = 0; i < N; ++i) derivative[i] += o.derivative[i];
    return *this;
  }
  constexpr Dual& operator-=(const Dual& o) {
    value -= o.value;
    for (int i = 0; i < N; ++i) derivative[i] -= o.derivative[i];
    return *this;
  }
  constexpr Dual& operator*=(const Dual& o) {
    for (int i = 0; i < N; ++i) derivative[i] = derivative[i] * o.value + value * o.derivative[i];
    value *= o.value;
    return *this;
  }
  constexpr Dual& operator/=(const Dual& o) {
    const double inverse = 1.0 / o.value;
    const double quotient = value * inverse;
    for (int i = 0; i < N; ++i) derivative[i] = (derivative[i] - quotient * o.derivative[i]) * inverse;
    value = quotient;
    return *this;
  }
  friend constexpr Dual operator+(Dual a, const Dual& b) { return a += b; }
  friend constexpr Dual operator-(Dual a, const Dual& b) { return a -= b; }
  friend constexpr Dual operator*(Dual a, const Dual& b) { return a *= b; }
  friend constexpr Dual operator/(Dual a, const Dual& b) { return a /= b; }
  friend constexpr bool operator<(const Dual& a, const Dual& b) { return a.value < b.value; }
  friend constexpr bool operator>(const Dual& a, const Dual& b) { return a.value > b.value; }
  friend constexpr bool operator<=(const Dual& a, const Dual& b) { return a.value <= b.value; }
  friend constexpr bool operator>=(const Dual& a, const Dual& b) { return a.value >= b.value; }
  friend constexpr bool operator==(const Dual& a, const Dual& b) { return a.value == b.value; }
};

// f(a) with f' given: the chain rule on every direction.
template <int N>
constexpr Dual<N> chain(const Dual<N>& a, double f, double derivative_of_f) {
  Dual<N> r(f);
  for (int i = 0; i < N; ++i) r.derivative[static_cast<std::size_t>(i)] = derivative_of_f * a.derivative[static_cast<std::size_t>(i)];
  return r;
}

template <int N>
Dual<N> sqrt(const Dual<N>& a) {
  const double root = std::sqrt(a.value);
  return chain(a, root, 0.5 / root);
}
template <int N>
Dual<N> sin(const Dual<N>& a) {
  return chain(a, std::sin(a.value), std::cos(a.value));
}
template <int N>
Dual<N> cos(const Dual<N>& a) {
  return chain(a, std::cos(a.value), -std::sin(a.value));
}
template <int N>
Dual<N> abs(const Dual<N>& a) {
  return a.value < 0 ? -a : a;
}
template <int N>
Dual<N> atan2(const Dual<N>& y, const Dual<N>& x) {
  const double denominator = x.value * x.value + y.value * y.value;
  Dual<N> r(std::atan2(y.value, x.value));
  for (int i = 0; i < N; ++i)
    r.derivative[static_cast<std::size_t>(i)] =
        (x.value * y.derivative[static_cast<std::size_t>(i)] - y.value * x.derivative[static_cast<std::size_t>(i)]) / denominator;
  return r;
}

// The value of a scalar, dual or not: for the decisions (branches) a stage makes.
inline double value_of(double x) { return x; }
template <int N>
double value_of(const Dual<N>& x) {
  return x.value;
}

}  // namespace diffphys
