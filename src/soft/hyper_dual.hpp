// soft/hyper_dual.hpp — second-order forward-mode numbers: value, gradient and Hessian.
//
// HyperDual<N> carries f, ∇f (N) and ∇²f (N × N, full and symmetric) with respect to N seeded
// local variables. A soft energy term writes its energy once as a template on the scalar; run
// on HyperDual over the term's few DOFs (a spring's 6, a tet's 12) and its parameters, it
// yields the exact local gradient, Hessian and mixed DOF/parameter derivatives the Newton
// solver and the implicit-function-theorem backward pass need — the "local forward mode" of
// issue 5, one order further than math/dual.hpp. Comparisons look at the value only, so a
// HyperDual evaluation takes the same branches as the double one.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>

namespace diffphys::soft {

template <int N>
struct HyperDual {
  // The Hessian is symmetric: only its upper triangle is stored, row by row (packed).
  static constexpr int kPacked = N * (N + 1) / 2;
  static constexpr int packed_index(int i, int j) {
    if (i > j) {
      const int t = i;
      i = j;
      j = t;
    }
    return i * N - i * (i - 1) / 2 + (j - i);
  }
  double value = 0.0;
  std::array<double, N> gradient{};
  std::array<double, kPacked> hessian{};
  double second(int i, int j) const { return hessian[static_cast<std::size_t>(packed_index(i, j))]; }

  constexpr HyperDual() = default;
  constexpr HyperDual(double v) : value(v) {}  // NOLINT: constants convert implicitly
  static HyperDual variable(double v, int index) {
    HyperDual d(v);
    d.gradient[static_cast<std::size_t>(index)] = 1.0;
    return d;
  }

  HyperDual operator-() const {
    HyperDual r;
    r.value = -value;
    for (int i = 0; i < N; ++i) r.gradient[i] = -gradient[i];
    for (int i = 0; i < kPacked; ++i) r.hessian[i] = -hessian[i];
    return r;
  }
  HyperDual& operator+=(const HyperDual& o) {
    value += o.value;
    for (int i = 0; i < N; ++i) gradient[i] += o.gradient[i];
    for (int i = 0; i < kPacked; ++i) hessian[i] += o.hessian[i];
    return *this;
  }
  HyperDual& operator-=(const HyperDual& o) {
    value -= o.value;
    for (int i = 0; i < N; ++i) gradient[i] -= o.gradient[i];
    for (int i = 0; i < kPacked; ++i) hessian[i] -= o.hessian[i];
    return *this;
  }
  // (ab)'' = a''b + ab'' + a'b'ᵀ + b'a'ᵀ
  HyperDual& operator*=(const HyperDual& o) {
    int p = 0;
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j, ++p)
        hessian[p] = hessian[p] * o.value + value * o.hessian[p] + gradient[i] * o.gradient[j] +
                     o.gradient[i] * gradient[j];
    for (int i = 0; i < N; ++i) gradient[i] = gradient[i] * o.value + value * o.gradient[i];
    value *= o.value;
    return *this;
  }
  HyperDual& operator/=(const HyperDual& o) { return *this *= reciprocal(o); }
  HyperDual& operator*=(double s) {
    value *= s;
    for (auto& g : gradient) g *= s;
    for (auto& h : hessian) h *= s;
    return *this;
  }

  friend HyperDual operator+(HyperDual a, const HyperDual& b) { return a += b; }
  friend HyperDual operator-(HyperDual a, const HyperDual& b) { return a -= b; }
  friend HyperDual operator*(HyperDual a, const HyperDual& b) { return a *= b; }
  friend HyperDual operator/(HyperDual a, const HyperDual& b) { return a /= b; }
  friend HyperDual operator*(HyperDual a, double s) { return a *= s; }
  friend HyperDual operator*(double s, HyperDual a) { return a *= s; }
  friend HyperDual operator+(HyperDual a, double s) { a.value += s; return a; }
  friend HyperDual operator+(double s, HyperDual a) { a.value += s; return a; }
  friend HyperDual operator-(HyperDual a, double s) { a.value -= s; return a; }
  friend HyperDual operator-(double s, const HyperDual& a) { return -a + s; }
  friend bool operator<(const HyperDual& a, const HyperDual& b) { return a.value < b.value; }
  friend bool operator>(const HyperDual& a, const HyperDual& b) { return a.value > b.value; }
  friend bool operator<=(const HyperDual& a, const HyperDual& b) { return a.value <= b.value; }
  friend bool operator>=(const HyperDual& a, const HyperDual& b) { return a.value >= b.value; }

  // f(a) given f, f', f'': the second-order chain rule.
  static HyperDual chain(const HyperDual& a, double f, double df, double ddf) {
    HyperDual r(f);
    for (int i = 0; i < N; ++i) r.gradient[i] = df * a.gradient[i];
    int p = 0;
    for (int i = 0; i < N; ++i)
      for (int j = i; j < N; ++j, ++p) r.hessian[p] = df * a.hessian[p] + ddf * a.gradient[i] * a.gradient[j];
    return r;
  }
  static HyperDual reciprocal(const HyperDual& a) {
    const double inverse = 1.0 / a.value;
    return chain(a, inverse, -inverse * inverse, 2.0 * inverse * inverse * inverse);
  }
};

template <int N>
HyperDual<N> sqrt(const HyperDual<N>& a) {
  const double root = std::sqrt(a.value);
  return HyperDual<N>::chain(a, root, 0.5 / root, -0.25 / (root * a.value));
}
template <int N>
HyperDual<N> log(const HyperDual<N>& a) {
  return HyperDual<N>::chain(a, std::log(a.value), 1.0 / a.value, -1.0 / (a.value * a.value));
}
// atan2(y, x) with the second derivatives of both arguments.
template <int N>
HyperDual<N> atan2(const HyperDual<N>& y, const HyperDual<N>& x) {
  const double r2 = x.value * x.value + y.value * y.value;
  const double fy = x.value / r2, fx = -y.value / r2;
  const double fyy = -2.0 * x.value * y.value / (r2 * r2);
  const double fxx = -fyy;
  const double fxy = (y.value * y.value - x.value * x.value) / (r2 * r2);
  HyperDual<N> r(std::atan2(y.value, x.value));
  for (int i = 0; i < N; ++i) r.gradient[i] = fy * y.gradient[i] + fx * x.gradient[i];
  int p = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j, ++p)
      r.hessian[p] = fy * y.hessian[p] + fx * x.hessian[p] +
                             fyy * y.gradient[i] * y.gradient[j] +
                             fxx * x.gradient[i] * x.gradient[j] +
                             fxy * (x.gradient[i] * y.gradient[j] + y.gradient[i] * x.gradient[j]);
  return r;
}

inline double value_of(double x) { return x; }
template <int N>
double value_of(const HyperDual<N>& x) {
  return x.value;
}

// Scalar-generic helpers the energies use (std:: for double, the overloads above otherwise).
using std::atan2;
using std::log;
using std::sqrt;

}  // namespace diffphys::soft
