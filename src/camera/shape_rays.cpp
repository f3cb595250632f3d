// camera/shape_rays.cpp — ray–shape hits, outline distances and their VJPs (shape_rays.hpp).
//
// The hit distance t is differentiated implicitly: the hit lies on the surface φ(o + t d) = 0
// (φ the shape's signed distance near the hit, ∇φ = n), so
//   δt = −(n·δo + t n·δd + ∂φ/∂size δsize) / (n·d),
// the classic derivative of a ray intersection (e.g. Li et al. 2018, "Differentiable Monte
// Carlo ray tracing", §4). The normal n = ∇φ(P) pulls back through φ's Hessian at P. The
// outline distances are minima over a line (or over outline directions), differentiated by
// the envelope theorem: only the explicit dependence at the minimiser counts (plus the
// Lagrange term of the constraint m ⊥ d for the cylinder's caps).
#include "camera/shape_rays.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace diffphys::camera {
namespace {

constexpr Vec3 kAxis[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
constexpr double kInfinity = std::numeric_limits<double>::infinity();

double sign(double value) {
  return value < 0.0 ? -1.0 : 1.0;
}

// Pull-back of the surface quantities (point P = o + t d on φ = 0, normal n) given P̄ (the
// Hessian term of n̄ already added) and t̄. phi_size: ∂φ/∂size at the hit.
void surface_vjp(const Vec3& direction, const ShapeRayHit& hit, const Vec3& point_bar, double t_bar,
                 const double* phi_size, int size_count, ShapeRayGradient& gradient) {
  gradient.origin += point_bar;
  gradient.direction += point_bar * hit.t;
  t_bar += dot(direction, point_bar);
  const double incidence = dot(hit.normal, direction);  // < 0 for a front hit; 0 at tangency
  if (t_bar == 0.0 || std::abs(incidence) < 1e-300) return;
  const double k = -t_bar / incidence;
  gradient.origin += hit.normal * k;
  gradient.direction += hit.normal * (k * hit.t);
  for (int i = 0; i < size_count; ++i) gradient.size[i] += k * phi_size[i];
}

// Closest points of the line o + t d (d unit) and the point c: the offset q and parameter t*.
void line_to_point(const Vec3& origin, const Vec3& direction, const Vec3& centre, Vec3& offset, double& t_closest) {
  t_closest = dot(centre - origin, direction);
  offset = origin + direction * t_closest - centre;
}

// First hit of a unit ray with the sphere |x − c| = r, or +∞.
double sphere_entry(const Vec3& origin, const Vec3& direction, const Vec3& centre, double radius) {
  const Vec3 oc = origin - centre;
  const double b = dot(oc, direction);
  const double discriminant = b * b - (dot(oc, oc) - radius * radius);
  if (discriminant < 0.0) return kInfinity;
  const double t = -b - std::sqrt(discriminant);
  return t > 0.0 ? t : kInfinity;
}

// First hit of a unit ray with the side x² + y² = r², |z| ≤ half_length, or +∞.
double side_entry(const Vec3& origin, const Vec3& direction, double radius, double half_length) {
  const double a = direction.x * direction.x + direction.y * direction.y;
  if (a < 1e-14) return kInfinity;
  const double b = origin.x * direction.x + origin.y * direction.y;
  const double c = origin.x * origin.x + origin.y * origin.y - radius * radius;
  const double discriminant = b * b - a * c;
  if (discriminant < 0.0) return kInfinity;
  const double t = (-b - std::sqrt(discriminant)) / a;
  if (t <= 0.0 || std::abs(origin.z + t * direction.z) > half_length) return kInfinity;
  return t;
}

// ---- outline distances -------------------------------------------------------------------

// Sphere (and a cylinder seen along its axis): g = r − |q|, q the line's offset from the centre.
void sphere_outline(const Vec3& origin, const Vec3& direction, double radius, ShapeRayHit& hit) {
  line_to_point(origin, direction, Vec3{}, hit.outline_vector, hit.outline_t);
  hit.outline = radius - norm(hit.outline_vector);
}

// ∂(r − |q|) by the envelope theorem: ∂|q|/∂o = q/|q|, ∂|q|/∂d = t* q/|q|.
void distance_outline_vjp(const ShapeRayHit& hit, double outline_bar, ShapeRayGradient& gradient) {
  const double distance = norm(hit.outline_vector);
  if (distance < 1e-300) return;  // the ray through the centre: a cone point of g, measure zero
  const Vec3 unit = hit.outline_vector / distance;
  gradient.origin -= unit * outline_bar;
  gradient.direction -= unit * (outline_bar * hit.outline_t);
}

// Capsule: g = r − dist(line, segment [−L, L] e_z). Closest points of two lines (Ericson,
// "Real-Time Collision Detection" §5.1.8), the segment's parameter clamped.
void capsule_outline(const Vec3& origin, const Vec3& direction, double radius, double half_length, ShapeRayHit& hit) {
  const double b = direction.z, od = dot(origin, direction), denominator = 1.0 - b * b;
  double s = 0.0, t = -od;
  if (denominator > 1e-12) {
    t = (b * origin.z - od) / denominator;
    s = origin.z + t * b;
  }
  hit.outline_clamp = 0.0;
  if (std::abs(s) > half_length) {
    hit.outline_clamp = sign(s);
    s = hit.outline_clamp * half_length;
    t = s * b - od;
  }
  hit.outline_t = t;
  hit.outline_vector = origin + direction * t - kAxis[2] * s;
  hit.outline = radius - norm(hit.outline_vector);
}

// Box: the projected box is the zonotope of the three axes; its edges have the normals
// m_i = (d × e_i)/|d × e_i| and support h(m) = Σ_j h_j |m_j|, so g = min_i h(m_i) − |m_i·o|.
void box_outline(const Vec3& origin, const Vec3& direction, const double* half, ShapeRayHit& hit) {
  hit.outline = kInfinity;
  for (int i = 0; i < 3; ++i) {
    const Vec3 u = cross(direction, kAxis[i]);
    const double length = norm(u);
    if (length < 1e-9) continue;  // seen along axis i: that edge pair has no length, the other two bound
    const Vec3 m = u / length;
    const double gap =
        half[0] * std::abs(m.x) + half[1] * std::abs(m.y) + half[2] * std::abs(m.z) - std::abs(dot(m, origin));
    if (gap < hit.outline) {
      hit.outline = gap;
      hit.outline_part = i;
      hit.outline_vector = m;
    }
  }
}

void box_outline_vjp(const Vec3& origin, const Vec3& direction, const double* half, const ShapeRayHit& hit,
                     double outline_bar, ShapeRayGradient& gradient) {
  const int i = hit.outline_part;
  const Vec3& m = hit.outline_vector;
  const double side = sign(dot(m, origin));
  gradient.origin -= m * (outline_bar * side);
  for (int j = 0; j < 3; ++j) gradient.size[j] += outline_bar * std::abs(m[j]);
  const Vec3 m_bar =
      (Vec3{half[0] * sign(m.x), half[1] * sign(m.y), half[2] * sign(m.z)} - origin * side) * outline_bar;
  const double length = norm(cross(direction, kAxis[i]));
  const Vec3 u_bar = (m_bar - m * dot(m, m_bar)) / length;
  gradient.direction += cross(kAxis[i], u_bar);  // u = d × e_i
}

// Cylinder caps: on the arc m = cos θ e1 + sin θ e2 (e1 = (d × e_z)/|d × e_z|, e2 ⊥ d, e1 with
// e2_z = k > 0), the support gap of the cap z = +L is
//   F(θ) = L k sin θ + r √(1 − k² sin² θ) − a1 cos θ − a2 sin θ,  a_i = e_i·o,  θ ∈ (0, π).
// The bottom cap is the same with (a1, a2) negated and m negated.
struct CapArc {
  double L, r, k, a1, a2;
  double value(double theta) const {
    const double s = std::sin(theta), c = std::cos(theta);
    return L * k * s + r * std::sqrt(1.0 - k * k * s * s) - a1 * c - a2 * s;
  }
  double slope(double theta) const {
    const double s = std::sin(theta), c = std::cos(theta);
    const double root = std::sqrt(1.0 - k * k * s * s);
    return L * k * c - r * k * k * s * c / root + a1 * s - a2 * c;
  }
  double curvature(double theta) const {
    const double s = std::sin(theta), c = std::cos(theta);
    const double root = std::sqrt(1.0 - k * k * s * s);
    return -L * k * s - r * k * k * ((c * c - s * s) * root * root + k * k * s * s * c * c) / (root * root * root) +
           a1 * c + a2 * s;
  }
};

// Minimum of F over the open arc, or +∞ if it lies at an end (a kink: the straight sides).
// Sampling finds the basin; Newton safeguarded by bisection on F' polishes it.
double minimise_arc(const CapArc& arc, double& theta_min) {
  constexpr int kSamples = 24;
  constexpr double kPi = 3.14159265358979323846;
  int best = 0;
  double best_value = kInfinity;
  for (int j = 0; j < kSamples; ++j) {
    const double value = arc.value(kPi * (j + 0.5) / kSamples);
    if (value < best_value) best_value = value, best = j;
  }
  double low = kPi * std::max(best - 0.5, 0.0) / kSamples,
         high = kPi * std::min(best + 1.5, double(kSamples)) / kSamples;
  if (!(arc.slope(low) < 0.0 && arc.slope(high) > 0.0)) return kInfinity;
  double theta = kPi * (best + 0.5) / kSamples;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const double slope = arc.slope(theta);
    if (slope < 0.0)
      low = theta;
    else
      high = theta;
    const double curvature = arc.curvature(theta);
    double next = curvature > 0.0 ? theta - slope / curvature : 0.5 * (low + high);
    if (!(next > low && next < high)) next = 0.5 * (low + high);
    const double step = std::abs(next - theta);
    theta = next;
    if (step < 1e-14 || high - low < 1e-14) break;
  }
  theta_min = theta;
  return arc.value(theta);
}

void cylinder_outline(const Vec3& origin, const Vec3& direction, double radius, double half_length, ShapeRayHit& hit) {
  const Vec3 u = cross(direction, kAxis[2]);
  const double k = norm(u);
  if (k < 1e-9) {  // looking along the axis: the outline is the disc
    sphere_outline(origin, direction, radius, hit);
    hit.outline_part = 3;
    return;
  }
  const Vec3 e1 = u / k;
  const Vec3 e2 = -cross(direction, e1);  // e2_z = |d × e_z| = k > 0
  const double a1 = dot(e1, origin), a2 = dot(e2, origin);
  // The straight sides, m = ±e1 (the kinks of the support function).
  hit.outline = radius - std::abs(a1);
  hit.outline_part = 0;
  hit.outline_vector = e1 * sign(a1);
  for (int cap = 1; cap <= 2; ++cap) {
    const double flip = cap == 1 ? 1.0 : -1.0;
    const CapArc arc{half_length, radius, k, flip * a1, flip * a2};
    double theta = 0.0;
    const double value = minimise_arc(arc, theta);
    if (value < hit.outline) {
      hit.outline = value;
      hit.outline_part = cap;
      hit.outline_vector = (e1 * std::cos(theta) + e2 * std::sin(theta)) * flip;
    }
  }
}

void cylinder_outline_vjp(const Vec3& origin, const Vec3& direction, const double* size, const ShapeRayHit& hit,
                          double outline_bar, ShapeRayGradient& gradient) {
  const double radius = size[0], half_length = size[1];
  const Vec3& m = hit.outline_vector;
  if (hit.outline_part == 3) {
    distance_outline_vjp(hit, outline_bar, gradient);
    gradient.size[0] += outline_bar;
    return;
  }
  gradient.origin -= m * outline_bar;  // ∂(h(m) − m·o)/∂o = −m
  if (hit.outline_part == 0) {
    // g = r − |e1·o|, e1 = u/|u|, u = d × e_z: m = ±e1 moves with d.
    gradient.size[0] += outline_bar;
    const Vec3 u = cross(direction, kAxis[2]);
    const double length = norm(u);
    const Vec3 e1 = u / length;
    const Vec3 m_bar = origin * (-outline_bar * sign(dot(e1, origin)));  // ∂g/∂e1 = −sign(e1·o) o
    const Vec3 u_bar = (m_bar - e1 * dot(e1, m_bar)) / length;
    gradient.direction += cross(kAxis[2], u_bar);
    return;
  }
  // A cap's arc: envelope theorem with the constraint m·d = 0 (Lagrange multiplier
  // λ = ∇_m φ·d for φ(m) = L|m_z| + r√(m_x² + m_y²) − m·o): ∂g/∂d = −λ m.
  const double planar = std::sqrt(m.x * m.x + m.y * m.y);
  gradient.size[0] += outline_bar * planar;
  gradient.size[1] += outline_bar * std::abs(m.z);
  const Vec3 grad_phi = Vec3{radius * m.x / planar, radius * m.y / planar, half_length * sign(m.z)} - origin;
  gradient.direction -= m * (outline_bar * dot(grad_phi, direction));
}

// Convex mesh at scale s: the first entering face plane n·x = s·b (Kay & Kajiya's slabs for a
// general polytope: the ray is inside every face's half-space between t_near and t_far).
bool mesh_hit(const ConvexMesh& mesh, double scale, const Vec3& origin, const Vec3& direction, ShapeRayHit& hit) {
  double t_near = -kInfinity, t_far = kInfinity;
  int entering = -1;
  for (int f = 0; f < mesh.face_count(); ++f) {
    const ConvexMesh::Face& face = mesh.faces[static_cast<std::size_t>(f)];
    const double approach = dot(face.normal, direction);
    const double height = dot(face.normal, origin) - scale * face.offset;  // > 0: outside this face
    if (std::abs(approach) < 1e-15) {
      if (height > 0.0) return false;
      continue;
    }
    const double t = -height / approach;
    if (approach < 0.0) {
      if (t > t_near) t_near = t, entering = f;
    } else {
      t_far = std::min(t_far, t);
    }
  }
  if (entering < 0 || t_near > t_far || t_near <= 0.0) return false;
  hit.t = t_near;
  hit.face = entering;
  hit.normal = mesh.faces[static_cast<std::size_t>(entering)].normal;
  return true;
}

// g = min over edges e and both signs σ of s·max_v(m·v) − m·o, m = σ (d × e)/|d × e|.
void mesh_outline(const ConvexMesh& mesh, double scale, const Vec3& origin, const Vec3& direction, ShapeRayHit& hit) {
  hit.outline = kInfinity;
  for (int e = 0; e < mesh.edge_count(); ++e) {
    const ConvexMesh::Edge& edge = mesh.edges[static_cast<std::size_t>(e)];
    const Vec3 along = mesh.vertices[static_cast<std::size_t>(edge.vertex[1])] -
                       mesh.vertices[static_cast<std::size_t>(edge.vertex[0])];
    const Vec3 u = cross(direction, along);
    const double length = norm(u);
    if (length < 1e-9 * norm(along)) continue;  // an edge seen end-on projects to a point
    const Vec3 m = u / length;
    double highest = -kInfinity, lowest = kInfinity;
    int top = 0, bottom = 0;
    for (int v = 0; v < mesh.vertex_count(); ++v) {
      const double height = dot(m, mesh.vertices[static_cast<std::size_t>(v)]);
      if (height > highest) highest = height, top = v;
      if (height < lowest) lowest = height, bottom = v;
    }
    const double across = dot(m, origin);
    const double gap_plus = scale * highest - across, gap_minus = across - scale * lowest;
    if (gap_plus < hit.outline) {
      hit.outline = gap_plus;
      hit.outline_part = e;
      hit.outline_vector = m;
      hit.support = top;
    }
    if (gap_minus < hit.outline) {
      hit.outline = gap_minus;
      hit.outline_part = e;
      hit.outline_vector = -m;
      hit.support = bottom;
    }
  }
}

// g = s (m·v*) − m·o with m = σ (d × e)/|d × e| (envelope: the support vertex v* held).
void mesh_outline_vjp(const ConvexMesh& mesh, double scale, const Vec3& origin, const Vec3& direction,
                      const ShapeRayHit& hit, double outline_bar, ShapeRayGradient& gradient) {
  const Vec3& m = hit.outline_vector;
  const Vec3& support = mesh.vertices[static_cast<std::size_t>(hit.support)];
  gradient.origin -= m * outline_bar;
  gradient.size[0] += outline_bar * dot(m, support);
  const ConvexMesh::Edge& edge = mesh.edges[static_cast<std::size_t>(hit.outline_part)];
  const Vec3 along =
      mesh.vertices[static_cast<std::size_t>(edge.vertex[1])] - mesh.vertices[static_cast<std::size_t>(edge.vertex[0])];
  const Vec3 u = cross(direction, along);
  const double length = norm(u);
  const double side = dot(m, u) < 0.0 ? -1.0 : 1.0;  // m = side · u/|u|
  const Vec3 m_bar = (support * scale - origin) * outline_bar;
  const Vec3 u_bar = (m_bar - m * dot(m, m_bar)) * (side / length);
  gradient.direction += cross(along, u_bar);  // u = d × e
}

}  // namespace

bool ray_shape(const RayTarget& target, const Vec3& origin, const Vec3& direction, ShapeRayHit& hit) {
  const double* size = target.size;
  const ShapeType type = target.type;
  switch (type) {
    case ShapeType::Sphere: {
      const double radius = size[0];
      sphere_outline(origin, direction, radius, hit);
      if (hit.outline <= 0.0) return false;
      const double half_chord = std::sqrt(std::max(radius * radius - squared_norm(hit.outline_vector), 0.0));
      hit.t = hit.outline_t - half_chord;
      if (hit.t <= 0.0) return false;
      hit.point = origin + direction * hit.t;
      hit.normal = hit.point / radius;
      return true;
    }
    case ShapeType::Box: {
      double t_near = -kInfinity, t_far = kInfinity;
      int axis = -1;
      for (int i = 0; i < 3; ++i) {  // slabs (Kay & Kajiya 1986)
        if (std::abs(direction[i]) < 1e-15) {
          if (std::abs(origin[i]) > size[i]) return false;
          continue;
        }
        double t1 = (-size[i] - origin[i]) / direction[i], t2 = (size[i] - origin[i]) / direction[i];
        if (t1 > t2) std::swap(t1, t2);
        if (t1 > t_near) t_near = t1, axis = i;
        t_far = std::min(t_far, t2);
      }
      if (axis < 0 || t_near > t_far || t_near <= 0.0) return false;
      box_outline(origin, direction, size, hit);
      if (hit.outline <= 0.0) return false;
      hit.t = t_near;
      hit.face = axis;
      hit.point = origin + direction * hit.t;
      hit.normal = kAxis[axis] * -sign(direction[axis]);
      return true;
    }
    case ShapeType::Capsule:
    case ShapeType::Cylinder: {
      const double radius = size[0], half_length = size[1];
      const bool capsule = type == ShapeType::Capsule;
      if (capsule)
        capsule_outline(origin, direction, radius, half_length, hit);
      else
        cylinder_outline(origin, direction, radius, half_length, hit);
      if (hit.outline <= 0.0) return false;
      double t = side_entry(origin, direction, radius, half_length);
      int face = 0;
      for (int cap = 1; cap <= 2; ++cap) {
        const double side = cap == 1 ? 1.0 : -1.0;
        double t_cap = kInfinity;
        if (capsule) {
          t_cap = sphere_entry(origin, direction, kAxis[2] * (side * half_length), radius);
        } else if (direction.z * side < 0.0) {  // the cap faces the ray
          const double t_plane = (side * half_length - origin.z) / direction.z;
          const Vec3 p = origin + direction * t_plane;
          if (t_plane > 0.0 && p.x * p.x + p.y * p.y <= radius * radius) t_cap = t_plane;
        }
        if (t_cap < t) t = t_cap, face = cap;
      }
      if (t == kInfinity) return false;
      hit.t = t;
      hit.face = face;
      hit.point = origin + direction * t;
      if (face == 0) {
        hit.normal = normalized(Vec3{hit.point.x, hit.point.y, 0.0});
      } else {
        const double side = face == 1 ? 1.0 : -1.0;
        hit.normal = capsule ? normalized(hit.point - kAxis[2] * (side * half_length)) : kAxis[2] * side;
      }
      return true;
    }
    case ShapeType::Plane: {
      if (direction.z >= 0.0 || origin.z <= 0.0) return false;
      hit.outline = -direction.z;
      hit.t = -origin.z / direction.z;
      hit.point = origin + direction * hit.t;
      hit.point.z = 0.0;
      hit.normal = kAxis[2];
      return true;
    }
    case ShapeType::ConvexMesh: {
      mesh_outline(*target.mesh, size[0], origin, direction, hit);
      if (hit.outline <= 0.0 || !mesh_hit(*target.mesh, size[0], origin, direction, hit)) return false;
      hit.point = origin + direction * hit.t;
      return true;
    }
    case ShapeType::Ellipsoid:  // refused by check_appearance (camera_setup.cpp)
      return false;
  }
  return false;
}

void ray_shape_vjp(const RayTarget& target, const Vec3& origin, const Vec3& direction, const ShapeRayHit& hit,
                   const ShapeRayCotangent& cotangent, ShapeRayGradient& gradient) {
  const double* size = target.size;
  const ShapeType type = target.type;
  const Vec3& n = hit.normal;
  const Vec3& n_bar = cotangent.normal;
  Vec3 point_bar = cotangent.point;
  double phi_size[3] = {0.0, 0.0, 0.0};
  int size_count = 0;
  switch (type) {
    case ShapeType::Sphere: {
      const double radius = size[0];
      gradient.size[0] += cotangent.outline;
      distance_outline_vjp(hit, cotangent.outline, gradient);
      point_bar += (n_bar - n * dot(n, n_bar)) / radius;  // ∇²φ = (I − n nᵀ)/r
      phi_size[0] = -1.0;
      size_count = 1;
      break;
    }
    case ShapeType::Box: {
      box_outline_vjp(origin, direction, size, hit, cotangent.outline, gradient);
      phi_size[hit.face] = -1.0;  // φ = ±x_i − h_i on face i; flat: no Hessian
      size_count = 3;
      break;
    }
    case ShapeType::Capsule:
    case ShapeType::Cylinder: {
      const double radius = size[0];
      if (type == ShapeType::Capsule) {
        gradient.size[0] += cotangent.outline;
        distance_outline_vjp(hit, cotangent.outline, gradient);
        const double distance = norm(hit.outline_vector);
        if (distance > 1e-300)
          gradient.size[1] += cotangent.outline * hit.outline_clamp * hit.outline_vector.z / distance;
      } else {
        cylinder_outline_vjp(origin, direction, size, hit, cotangent.outline, gradient);
      }
      size_count = 2;
      if (hit.face == 0) {  // side: φ = √(x² + y²) − r, ∇²φ = (I − n nᵀ − e_z e_zᵀ)/r
        point_bar += (n_bar - n * dot(n, n_bar) - kAxis[2] * n_bar.z) / radius;
        phi_size[0] = -1.0;
      } else if (type == ShapeType::Capsule) {  // cap σ: φ = |x − σL e_z| − r
        const double side = hit.face == 1 ? 1.0 : -1.0;
        const Vec3 tangential = (n_bar - n * dot(n, n_bar)) / radius;
        point_bar += tangential;
        gradient.size[1] -= side * tangential.z;  // n depends on the cap centre σL e_z
        phi_size[0] = -1.0;
        phi_size[1] = -side * n.z;
      } else {  // flat cap σ: φ = σz − L
        phi_size[1] = -1.0;
      }
      break;
    }
    case ShapeType::Plane: {
      gradient.direction.z -= cotangent.outline;
      break;
    }
    case ShapeType::ConvexMesh: {
      mesh_outline_vjp(*target.mesh, size[0], origin, direction, hit, cotangent.outline, gradient);
      phi_size[0] = -target.mesh->faces[static_cast<std::size_t>(hit.face)].offset;  // φ = n·x − s b
      size_count = 1;
      break;
    }
    case ShapeType::Ellipsoid:  // never hit (ray_shape)
      break;
  }
  surface_vjp(direction, hit, point_bar, cotangent.t, phi_size, size_count, gradient);
}

double shape_inside_measure(const RayTarget& target, const Vec3& point) {
  const double* size = target.size;
  switch (target.type) {
    case ShapeType::Sphere:
      return norm(point) - size[0];
    case ShapeType::Box:
      return std::max({std::abs(point.x) - size[0], std::abs(point.y) - size[1], std::abs(point.z) - size[2]});
    case ShapeType::Capsule:
      return norm(point - kAxis[2] * std::clamp(point.z, -size[1], size[1])) - size[0];
    case ShapeType::Cylinder:
      return std::max(std::sqrt(point.x * point.x + point.y * point.y) - size[0], std::abs(point.z) - size[1]);
    case ShapeType::Plane:
      return point.z;
    case ShapeType::ConvexMesh: {
      double highest = -kInfinity;
      for (const ConvexMesh::Face& face : target.mesh->faces)
        highest = std::max(highest, dot(face.normal, point) - size[0] * face.offset);
      return highest;
    }
    case ShapeType::Ellipsoid:  // refused by check_appearance (camera_setup.cpp)
      return kInfinity;
  }
  return kInfinity;
}

}  // namespace diffphys::camera
