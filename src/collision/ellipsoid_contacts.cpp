// collision/ellipsoid_contacts.cpp — owns the contact geometry of an ellipsoid against every
// other shape (ellipsoid_contact) and its world bounding box (ellipsoid_extent).
//
// Method. For convex A (the ellipsoid) and B, the separation along a unit direction n that
// points from B towards A is σ(n) = min_{a∈A} n·a − max_{b∈B} n·b = −h_A(−n) − h_B(n), with
// h the support functions, and the pair's signed gap is max_{|n|=1} σ(n): the distance when
// they are apart, minus the penetration depth (the shortest translation that separates them)
// when they overlap — the separating-axis theorem for convex bodies (e.g. Ericson,
// Real-Time Collision Detection, 2005, §5.2.1). An ellipsoid's support function is smooth,
// h_A(m) = m·c + sqrt(mᵀ S m) with S = R diag(a²) Rᵀ, and so is σ against a plane (fixed n),
// a sphere (h_B = n·p + r) or another ellipsoid. A capsule, a box or a convex mesh is the
// hull of its vertices (grown by the capsule's radius), so σ is the minimum of one smooth
// function per vertex, and its maximum lies at a face normal, on the great circle of the
// directions normal to one edge, or at the maximum of one vertex's function. Each candidate
// is solved by Newton's method on the sphere (on the circle for an edge) with σ's closed-form
// gradient and Hessian, and the best true σ wins (vertices and edges whose bound cannot beat
// the best face are skipped). The maximum is unique while the overlap stays below the
// ellipsoid's smallest radius of curvature (min_k a_k² / max_k a_k): then A is its inner
// parallel body grown by a ball, and the problem is the distance of two convex sets.
//
// Derivatives (the backward pass's Dual<18>): every decision and every iteration runs on the
// values; the dual evaluation starts from the double solution n* and takes two Newton steps
// in dual arithmetic. At a solution the first step's derivative is −H⁻¹ ∂g/∂θ, the implicit
// function theorem's, so the contact's normal, gap and position carry exact derivatives.
#include "collision/ellipsoid_contacts.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "math/dual.hpp"

namespace diffphys::collision::detail {
namespace {

// Newton iterations of the double solve (it converges quadratically; 60 bounds a hard case).
constexpr int kEllipsoidMaxIterations = 60;
// Dual Newton steps from the double solution (the first carries the derivative; the second
// corrects the last rounding of the value).
constexpr int kEllipsoidPolishSteps = 2;
// A tangent step below this (radians) ends the double solve.
constexpr double kEllipsoidStepTolerance = 1e-15;
// Newton steps shorter than this (radians) where σ is concave skip the line search.
constexpr double kEllipsoidPlainNewtonStep = 1e-3;
// Feature ids: vertex i → i, edge i → kEdgeFeature + i, face i → kFaceFeature + i.
constexpr int kEdgeFeature = 1 << 14;
constexpr int kFaceFeature = 1 << 15;

template <typename T>
PosedShape values_of_shape(const PosedShapeT<T>& shape) {
  if constexpr (std::is_same_v<T, double>) {
    return shape;
  } else {
    PosedShape v;
    v.type = shape.type;
    v.position = values_of(shape.position);
    v.orientation = {value_of(shape.orientation.w), value_of(shape.orientation.x), value_of(shape.orientation.y),
                     value_of(shape.orientation.z)};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) v.rotation(i, j) = value_of(shape.rotation(i, j));
    v.size = values_of(shape.size);
    v.mesh = shape.mesh;
    return v;
  }
}

// S = R diag(a²) Rᵀ: h(m) = m·c + sqrt(mᵀ S m) is the ellipsoid's support function.
template <typename T>
Mat3T<T> ellipsoid_metric(const PosedShapeT<T>& e) {
  Mat3T<T> s;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      T sum = T(0.0);
      for (int k = 0; k < 3; ++k) sum += e.rotation(i, k) * e.rotation(j, k) * (e.size[k] * e.size[k]);
      s(i, j) = sum;
    }
  return s;
}

// Matrix over a scalar (Mat3T has only products).
template <typename T>
Mat3T<T> operator/(const Mat3T<T>& m, const T& s) {
  return m * (T(1.0) / s);
}

// The smooth separation σ(n) = n·(c_A − p) − sqrt(nᵀ S_A n) − [sqrt(nᵀ S_B n)] − r on unit n:
// the ellipsoid A against a point p grown by r (a sphere, a vertex, a capsule's end, or on an
// edge's circle any point of the edge), or against the ellipsoid B centred at p.
template <typename T>
struct Separation {
  Vec3T<T> offset;  // c_A − p
  Mat3T<T> metric_a;
  bool has_b = false;
  Mat3T<T> metric_b;
  T radius = T(0.0);

  T value(const Vec3T<T>& n) const {
    T v = dot(n, offset) - square_root(dot(n, metric_a * n)) - radius;
    if (has_b) v -= square_root(dot(n, metric_b * n));
    return v;
  }
  // Gradient and Hessian in R³ of the degree-1 homogeneous extension, at unit n.
  void derivatives(const Vec3T<T>& n, Vec3T<T>& gradient, Mat3T<T>& hessian) const {
    gradient = offset - n * radius;
    hessian = (Mat3T<T>::identity() - outer(n, n)) * (-radius);
    add_root_term(metric_a, n, gradient, hessian);
    if (has_b) add_root_term(metric_b, n, gradient, hessian);
  }

 private:
  static Mat3T<T> outer(const Vec3T<T>& u, const Vec3T<T>& v) {
    Mat3T<T> m;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m(i, j) = u[i] * v[j];
    return m;
  }
  // −q(n), q = sqrt(nᵀSn): ∇ = −Sn/q, ∇² = −(S − (Sn)(Sn)ᵀ/q²)/q.
  static void add_root_term(const Mat3T<T>& metric, const Vec3T<T>& n, Vec3T<T>& gradient, Mat3T<T>& hessian) {
    const Vec3T<T> sn = metric * n;
    const T q = square_root(dot(n, sn));
    gradient -= sn / q;
    hessian = hessian - (metric - outer(sn, sn) / (q * q)) / q;
  }
};

// One Newton step of the maximisation of σ on the unit sphere (ridge == nullptr) or on the
// circle normal to the unit vector *ridge, as a tangent vector at n. The Riemannian Hessian
// is tᵢᵀ ∇²σ tⱼ − (n·∇σ) δᵢⱼ. `concave` reports whether it is negative definite (a step
// towards a maximum); `gradient_step` is the reduced gradient as a tangent vector.
template <typename T>
struct TangentStep {
  Vec3T<T> newton, gradient_step;
  bool concave = false;
  double curvature = 0.0;  // |trace| of the reduced Hessian, for a gradient step's length
};

template <typename T>
TangentStep<T> tangent_step(const Separation<T>& separation, const Vec3T<T>& n, const Vec3T<T>* ridge) {
  Vec3T<T> gradient;
  Mat3T<T> hessian;
  separation.derivatives(n, gradient, hessian);
  const T euler = dot(n, gradient);
  TangentStep<T> step;
  if (ridge) {
    const Vec3T<T> t = normalized(cross(*ridge, n));
    const T g1 = dot(t, gradient);
    const T h11 = dot(t, hessian * t) - euler;
    step.concave = h11 < 0.0;
    step.curvature = std::abs(value_of(h11));
    step.newton = t * (-g1 / h11);
    step.gradient_step = t * g1;
    return step;
  }
  Vec3T<T> t1, t2;
  orthonormal_basis(n, t1, t2);
  const T g1 = dot(t1, gradient), g2 = dot(t2, gradient);
  const T h11 = dot(t1, hessian * t1) - euler;
  const T h22 = dot(t2, hessian * t2) - euler;
  const T h12 = dot(t1, hessian * t2);
  const T determinant = h11 * h22 - h12 * h12;
  step.concave = h11 < 0.0 && determinant > 0.0;
  step.curvature = std::abs(value_of(h11)) + std::abs(value_of(h22));
  const T d1 = -(h22 * g1 - h12 * g2) / determinant;
  const T d2 = -(h11 * g2 - h12 * g1) / determinant;
  step.newton = t1 * d1 + t2 * d2;
  step.gradient_step = t1 * g1 + t2 * g2;
  return step;
}

// The maximiser of σ from n (double): Newton where σ is concave, a gradient step otherwise,
// each halved until σ does not decrease.
Vec3 maximize(const Separation<double>& separation, Vec3 n, const Vec3* ridge) {
  for (int iteration = 0; iteration < kEllipsoidMaxIterations; ++iteration) {
    const TangentStep<double> step = tangent_step(separation, n, ridge);
    Vec3 move = step.concave ? step.newton : step.gradient_step / std::max(step.curvature, kTinyLength);
    if (!is_finite(move)) break;
    const double length = norm(move);
    if (length < kEllipsoidStepTolerance) break;
    if (length > 1.0) move = move / length;  // at most a radian at a time
    // Close to a maximum, σ changes by O(step²), below its own rounding: the last Newton
    // steps are taken as they are (quadratic convergence), not checked against σ.
    if (step.concave && length < kEllipsoidPlainNewtonStep) {
      n = normalized(n + move);
      continue;
    }
    const double before = separation.value(n);
    bool accepted = false;
    for (int halving = 0; halving < 40 && !accepted; ++halving) {
      const Vec3 trial = normalized(n + move);
      if (separation.value(trial) >= before) {
        n = trial;
        accepted = true;
      } else {
        move = move * 0.5;
      }
    }
    if (!accepted) break;
  }
  return n;
}

// Dual Newton steps from the double solution (see the header comment).
template <typename T>
Vec3T<T> polish(const Separation<T>& separation, Vec3T<T> n, const Vec3T<T>* ridge) {
  if constexpr (!std::is_same_v<T, double>) {
    for (int iteration = 0; iteration < kEllipsoidPolishSteps; ++iteration) {
      const TangentStep<T> step = tangent_step(separation, n, ridge);
      n = normalized(n + step.newton);
    }
  }
  return n;
}

// The other shape as the hull of vertices (grown by `radius`), edges and faces: a sphere
// (one vertex), a capsule (two vertices, one edge), a box or a convex mesh.
template <typename T>
struct Hull {
  const PosedShapeT<T>& shape;
  bool capsule() const { return shape.type == ShapeType::Capsule || shape.type == ShapeType::Cylinder; }
  T radius() const { return shape.type == ShapeType::Sphere || capsule() ? shape.size.x : T(0.0); }
  int vertex_count() const {
    switch (shape.type) {
      case ShapeType::Sphere:
        return 1;
      case ShapeType::Capsule:
      case ShapeType::Cylinder:
        return 2;
      case ShapeType::Box:
        return 8;
      case ShapeType::ConvexMesh:
        return static_cast<int>(shape.mesh->vertices.size());
      default:
        return 0;
    }
  }
  Vec3T<T> vertex(int i) const {
    switch (shape.type) {
      case ShapeType::Capsule:
      case ShapeType::Cylinder:
        return shape.position + shape.rotation.col(2) * (i == 0 ? -shape.size.y : shape.size.y);
      case ShapeType::Box: {
        const Vec3T<T> local{(i & 1) ? shape.size.x : -shape.size.x, (i & 2) ? shape.size.y : -shape.size.y,
                             (i & 4) ? shape.size.z : -shape.size.z};
        return to_world(shape, local);
      }
      case ShapeType::ConvexMesh:
        return to_world(shape, Vec3T<T>(shape.mesh->vertices[static_cast<std::size_t>(i)]) * shape.size.x);
      default:
        return shape.position;
    }
  }
  // Edges: a capsule's one (0, 1); a box's 12 as (vertex i, axis k) with bit k of i clear,
  // numbered 3i + k (the others are skipped); a mesh's own list.
  int edge_slots() const {
    switch (shape.type) {
      case ShapeType::Capsule:
      case ShapeType::Cylinder:
        return 1;
      case ShapeType::Box:
        return 24;
      case ShapeType::ConvexMesh:
        return static_cast<int>(shape.mesh->edges.size());
      default:
        return 0;
    }
  }
  bool edge(int slot, int& v0, int& v1) const {
    switch (shape.type) {
      case ShapeType::Box: {
        const int i = slot / 3, k = slot % 3;
        if (i & (1 << k)) return false;
        v0 = i;
        v1 = i | (1 << k);
        return true;
      }
      case ShapeType::ConvexMesh: {
        const ConvexMesh::Edge& e = shape.mesh->edges[static_cast<std::size_t>(slot)];
        v0 = e.vertex[0];
        v1 = e.vertex[1];
        return true;
      }
      default:
        v0 = 0;
        v1 = 1;
        return true;
    }
  }
  int face_count() const {
    if (shape.type == ShapeType::Box) return 6;
    if (shape.type == ShapeType::ConvexMesh) return static_cast<int>(shape.mesh->faces.size());
    return 0;
  }
  // Outward unit normal of face i and the hull's support along it, max_b n·b.
  void face(int i, Vec3T<T>& normal, T& support) const {
    if (shape.type == ShapeType::Box) {
      const int axis = i / 2;
      normal = shape.rotation.col(axis) * ((i & 1) ? -1.0 : 1.0);
      support = dot(normal, shape.position) + shape.size[axis];
      return;
    }
    const ConvexMesh::Face& f = shape.mesh->faces[static_cast<std::size_t>(i)];
    normal = shape.rotation * Vec3T<T>(f.normal);
    support = dot(normal, shape.position) + shape.size.x * f.offset;
  }
  // The hull's support function at unit n (radius included).
  double support(const Vec3& n) const {
    double best = -kInfinity;
    for (int i = 0; i < vertex_count(); ++i) best = std::max(best, dot(n, vertex(i)));
    return best + radius();
  }
};

enum class CandidateKind { Point, Edge, Face };

struct Candidate {
  CandidateKind kind = CandidateKind::Point;
  int index = 0;
  Vec3 normal;
  double gap = kInfinity;
};

// The ellipsoid's smooth separation from point p grown by r.
template <typename T>
Separation<T> point_separation(const PosedShapeT<T>& ellipsoid, const Mat3T<T>& metric, const Vec3T<T>& p,
                               const T& radius) {
  Separation<T> separation;
  separation.offset = ellipsoid.position - p;
  separation.metric_a = metric;
  separation.radius = radius;
  return separation;
}

Vec3 unit_or(const Vec3& v, const Vec3& fallback) {
  const double length = norm(v);
  return length > kTinyLength ? v / length : fallback;
}

// The best candidate of a hull against the ellipsoid (double).
Candidate best_hull_candidate(const PosedShape& ellipsoid, const Mat3& metric, const Hull<double>& hull) {
  const double smallest_axis = std::min({ellipsoid.size.x, ellipsoid.size.y, ellipsoid.size.z});
  const double radius = hull.radius();
  const Vec3& c = ellipsoid.position;
  const auto true_gap = [&](const Vec3& n) { return dot(n, c) - std::sqrt(dot(n, metric * n)) - hull.support(n); };
  Candidate best;
  best.gap = -kInfinity;
  for (int i = 0; i < hull.face_count(); ++i) {
    Vec3 normal;
    double support = 0.0;
    hull.face(i, normal, support);
    const double gap = dot(normal, c) - std::sqrt(dot(normal, metric * normal)) - support;
    if (gap > best.gap) best = {CandidateKind::Face, i, normal, gap};
  }
  // σ at a vertex's or an edge's maximum is at most the distance from that feature to the
  // ball of the smallest semi-axis inside the ellipsoid, less the radius.
  for (int i = 0; i < hull.vertex_count(); ++i) {
    const Vec3 p = hull.vertex(i);
    if (norm(c - p) - smallest_axis - radius <= best.gap) continue;
    const Separation<double> separation = point_separation(ellipsoid, metric, p, radius);
    const Vec3 n = maximize(separation, unit_or(c - p, {0, 0, 1}), nullptr);
    const double gap = true_gap(n);
    if (gap > best.gap) best = {CandidateKind::Point, i, n, gap};
  }
  for (int slot = 0; slot < hull.edge_slots(); ++slot) {
    int v0 = 0, v1 = 0;
    if (!hull.edge(slot, v0, v1)) continue;
    const Vec3 p0 = hull.vertex(v0), p1 = hull.vertex(v1);
    const Vec3 closest = p0 + (p1 - p0) * closest_parameter_on_segment(p0, p1, c);
    if (norm(c - closest) - smallest_axis - radius <= best.gap) continue;
    const Vec3 w = unit_or(p1 - p0, {0, 0, 1});
    const Vec3 across = (c - p0) - w * dot(c - p0, w);
    const Vec3 start = unit_or(across, perpendicular_to(w));
    const Separation<double> separation = point_separation(ellipsoid, metric, p0, radius);
    const Vec3 n = maximize(separation, start, &w);
    const double gap = true_gap(n);
    if (gap > best.gap) best = {CandidateKind::Edge, slot, n, gap};
  }
  return best;
}

}  // namespace

template <typename T>
void ellipsoid_contact(const PosedShapeT<T>& ellipsoid, const PosedShapeT<T>& other, double margin,
                       ContactWriter<T>& contacts) {
  // Decisions on values.
  const PosedShape e = values_of_shape(ellipsoid);
  const PosedShape o = values_of_shape(other);
  const Mat3 metric = ellipsoid_metric(e);
  Candidate chosen;
  if (o.type == ShapeType::Plane) {
    const Vec3 normal = o.rotation.col(2);
    chosen = {CandidateKind::Face, 0, normal,
              dot(normal, e.position - o.position) - std::sqrt(dot(normal, metric * normal))};
  } else if (o.type == ShapeType::Ellipsoid) {
    Separation<double> separation = point_separation(e, metric, o.position, 0.0);
    separation.has_b = true;
    separation.metric_b = ellipsoid_metric(o);
    const Vec3 n = maximize(separation, unit_or(e.position - o.position, {0, 0, 1}), nullptr);
    chosen = {CandidateKind::Point, 0, n, separation.value(n)};
  } else {
    chosen = best_hull_candidate(e, metric, Hull<double>{o});
  }
  if (!(chosen.gap < margin)) return;

  // The chosen candidate's geometry in T.
  const Mat3T<T> metric_t = ellipsoid_metric(ellipsoid);
  const Vec3T<T> start(chosen.normal);
  Vec3T<T> n;
  T gap = T(0.0);
  int feature = 0;
  if (other.type == ShapeType::Plane) {
    n = other.rotation.col(2);
    gap = dot(n, ellipsoid.position - other.position) - square_root(dot(n, metric_t * n));
  } else if (other.type == ShapeType::Ellipsoid) {
    Separation<T> separation = point_separation(ellipsoid, metric_t, other.position, T(0.0));
    separation.has_b = true;
    separation.metric_b = ellipsoid_metric(other);
    n = polish(separation, start, static_cast<const Vec3T<T>*>(nullptr));
    gap = separation.value(n);
  } else {
    const Hull<T> hull{other};
    switch (chosen.kind) {
      case CandidateKind::Face: {
        T support;
        hull.face(chosen.index, n, support);
        gap = dot(n, ellipsoid.position) - square_root(dot(n, metric_t * n)) - support;
        feature = kFaceFeature + chosen.index;
        break;
      }
      case CandidateKind::Point: {
        const Separation<T> separation =
            point_separation(ellipsoid, metric_t, hull.vertex(chosen.index), hull.radius());
        n = polish(separation, start, static_cast<const Vec3T<T>*>(nullptr));
        gap = separation.value(n);
        feature = chosen.index;
        break;
      }
      case CandidateKind::Edge: {
        int v0 = 0, v1 = 0;
        hull.edge(chosen.index, v0, v1);
        const Vec3T<T> p0 = hull.vertex(v0);
        const Vec3T<T> w = normalized(hull.vertex(v1) - p0);
        const Separation<T> separation = point_separation(ellipsoid, metric_t, p0, hull.radius());
        // Normal to the edge in T too, so that the derivatives keep n ⟂ w.
        n = polish(separation, normalized(start - w * dot(start, w)), &w);
        gap = separation.value(n);
        feature = kEdgeFeature + chosen.index;
        break;
      }
    }
  }
  // The ellipsoid's point of support along −n, c − S n / sqrt(nᵀ S n), and B's point a gap
  // below it along n.
  const Vec3T<T> sn = metric_t * n;
  const Vec3T<T> on_ellipsoid = ellipsoid.position - sn / square_root(dot(n, sn));
  contacts.add(on_ellipsoid, on_ellipsoid - n * gap, n, gap, feature);
}

Vec3 ellipsoid_extent(const PosedShape& ellipsoid) {
  Vec3 extent;
  for (int i = 0; i < 3; ++i) {
    double sum = 0.0;
    for (int k = 0; k < 3; ++k) {
      const double column = ellipsoid.rotation(i, k) * ellipsoid.size[k];
      sum += column * column;
    }
    extent[i] = std::sqrt(sum);
  }
  return extent;
}

template void ellipsoid_contact<double>(const PosedShapeT<double>&, const PosedShapeT<double>&, double,
                                        ContactWriter<double>&);
template void ellipsoid_contact<Dual<18>>(const PosedShapeT<Dual<18>>&, const PosedShapeT<Dual<18>>&, double,
                                          ContactWriter<Dual<18>>&);

}  // namespace diffphys::collision::detail
