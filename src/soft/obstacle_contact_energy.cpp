// soft/obstacle_contact_energy.cpp — nodes against static obstacles (planes, spheres): a
// smooth log barrier with lagged Coulomb friction, after Li et al. 2020, "Incremental
// potential contact" (IPC), eqs. 6 and 13:
//
//   b(d)  = −κ (d − d̂)² ln(d/d̂)  for 0 < d < d̂,  0 for d ≥ d̂,  +∞ for d ≤ 0
//   D(x)  = μ λ f₀(|u|),  u = (I − n nᵀ)(x − x_t),  λ = −b′(d(x_t)),  n = ∇d(x_t)
//   f₀(y) = y²/ε − y³/(3ε²) + ε/3  for y < ε = ε_v h,  y otherwise
//
// d is the node's signed distance to the obstacle. b is C² and vanishes beyond d̂, so the
// contact set is smooth; the normal force grows without bound as d → 0, so no node ever
// penetrates (the line search and max_feasible_step keep every iterate outside).
// λ, n are lagged: taken at the start of the step x_t (the previous positions), so D is a
// potential of x; its dependence on x_t is differentiated exactly in the backward pass.
// Parameters: contact_stiffness κ (J/m², shared), obstacle/<name>/friction μ.
// Effect on gradients (docs/soft-bodies.md): a node pressed with load W rests at d ≈ κd̂²/W
// (< d̂) where the barrier's stiffness is ≈ W²/(κd̂²); that stiffness enters the Hessian the
// implicit-function-theorem backward pass solves with, so a small d̂ makes contact act like a
// hard constraint in the gradients (stiff, worse conditioned), a large d̂ or κ smoother.
#include <cmath>

#include "soft/energy_term.hpp"

namespace diffphys::soft {
namespace {

// Signed distance and its outward unit gradient at p.
template <class T>
T signed_distance(const Obstacle& obstacle, const V3<T>& p, V3<T>* normal) {
  const V3<T> point{T(obstacle.point[0]), T(obstacle.point[1]), T(obstacle.point[2])};
  if (obstacle.type == ObstacleType::Plane) {
    const V3<T> n{T(obstacle.normal[0]), T(obstacle.normal[1]), T(obstacle.normal[2])};
    if (normal != nullptr) *normal = n;
    return dot(n, p - point);
  }
  const V3<T> offset = p - point;
  const T length = sqrt(dot(offset, offset));
  if (normal != nullptr) {
    const T inverse = 1.0 / length;
    *normal = {offset.x * inverse, offset.y * inverse, offset.z * inverse};
  }
  return length - obstacle.radius;
}

struct ContactLocal {
  static constexpr int kNodes = 1;
  static constexpr int kExtra = 5;  // κ, μ, x_t (3)
  static constexpr const char* kName = "obstacle_contact";
  static constexpr EnergyTerm::Kind kKind = EnergyTerm::Kind::Contact;

  int count(const SoftModel& model) const {
    return model.node_count * static_cast<int>(model.obstacles.size());
  }
  std::array<int, 1> nodes(const SoftModel& model, int e) const {
    return {e / static_cast<int>(model.obstacles.size())};
  }
  const Obstacle& obstacle(const SoftModel& model, int e) const {
    return model.obstacles[static_cast<std::size_t>(e % static_cast<int>(model.obstacles.size()))];
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const SoftParamLayout& layout = in.model.layout;
    const auto o = static_cast<std::size_t>(e % static_cast<int>(in.model.obstacles.size()));
    values[0] = in.params[static_cast<std::size_t>(layout.contact_stiffness)];
    sources[0] = {ExtraSource::Param, layout.contact_stiffness};
    values[1] = in.params[static_cast<std::size_t>(layout.obstacle_friction[o])];
    sources[1] = {in.lagged_terms ? ExtraSource::Param : ExtraSource::Constant, layout.obstacle_friction[o]};
    const int node = nodes(in.model, e)[0];
    for (int r = 0; r < 3; ++r) {
      values[2 + r] = in.previous_positions[static_cast<std::size_t>(3 * node + r)];
      sources[2 + r] = {in.lagged_terms ? ExtraSource::Previous : ExtraSource::Constant, 3 * node + r};
    }
  }

  // Outside the barrier band now and (for friction) at the start of the step: E ≡ 0 nearby.
  bool inactive(const TermInputs& in, int e) const {
    const Obstacle& shape = obstacle(in.model, e);
    const int node = nodes(in.model, e)[0];
    const double d_hat = in.model.contact.barrier_distance;
    const auto distance = [&](std::span<const double> positions) {
      return signed_distance(shape, load3(positions.data() + 3 * node), static_cast<V3<double>*>(nullptr));
    };
    return distance(in.positions) > d_hat && (!in.lagged_terms || distance(in.previous_positions) >= d_hat);
  }

  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    const Obstacle& shape = obstacle(in.model, e);
    const double d_hat = in.model.contact.barrier_distance;
    const T& kappa = extra[0];
    const T d = signed_distance(shape, load3(x), static_cast<V3<T>*>(nullptr));
    if (value_of(d) <= 0.0) return T(kInfinity);
    T total = 0.0;
    if (value_of(d) < d_hat) total = -kappa * (d - d_hat) * (d - d_hat) * log(d / d_hat);
    if (!in.lagged_terms) return total;
    // Lagged friction: λ and n at x_t.
    V3<T> n;
    const V3<T> previous = load3(extra + 2);
    const T d_previous = signed_distance(shape, previous, &n);
    if (!(value_of(d_previous) > 0.0 && value_of(d_previous) < d_hat)) return total;
    const T gap = d_previous - d_hat;
    const T normal_force = kappa * (2.0 * gap * log(d_previous / d_hat) + gap * gap / d_previous);
    const V3<T> displacement = load3(x) - previous;
    const T normal_part = dot(n, displacement);
    const V3<T> tangential{displacement.x - n.x * normal_part, displacement.y - n.y * normal_part,
                           displacement.z - n.z * normal_part};
    const T y2 = dot(tangential, tangential);
    const double epsilon = in.model.contact.friction_velocity * in.dt;
    T f0;
    if (value_of(y2) < epsilon * epsilon) {
      // y³ = y2^{3/2} is C² with zero derivatives at 0, where the chain rule would give 0·∞.
      f0 = y2 / epsilon + epsilon / 3.0;
      if (value_of(y2) > 0.0) f0 -= y2 * sqrt(y2) / (3.0 * epsilon * epsilon);
    } else {
      f0 = sqrt(y2);
    }
    return total + extra[1] * normal_force * f0;
  }

  // Continuous collision: 0.9 of the fraction of the step at which the node would reach the
  // obstacle's surface.
  double max_step(const TermInputs& in, int e, const double* x, const double* dx) const {
    const Obstacle& shape = obstacle(in.model, e);
    const V3<double> p = load3(x), v = load3(dx);
    double hit = kInfinity;
    if (shape.type == ObstacleType::Plane) {
      const V3<double> n{shape.normal[0], shape.normal[1], shape.normal[2]};
      const double approach = dot(n, v);
      if (approach < 0.0) hit = signed_distance(shape, p, static_cast<V3<double>*>(nullptr)) / -approach;
    } else {
      // |p + s v − c|² = r²: the smallest positive root.
      const V3<double> offset = p - V3<double>{shape.point[0], shape.point[1], shape.point[2]};
      const double a = dot(v, v), b = 2.0 * dot(offset, v), c = dot(offset, offset) - shape.radius * shape.radius;
      const double discriminant = b * b - 4.0 * a * c;
      if (a > 0.0 && discriminant >= 0.0 && b < 0.0) hit = (-b - std::sqrt(discriminant)) / (2.0 * a);
    }
    return std::min(1.0, 0.9 * hit);
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_obstacle_contact_term(const SoftModel&) {
  return make_local_term(ContactLocal{});
}

}  // namespace diffphys::soft
