// soft/obstacle_contact_energy.cpp — nodes against rigid obstacles (planes, spheres, boxes,
// capsules; static, or moving with a frame: a rigid body's pose): a smooth log barrier with
// lagged Coulomb friction, after Li et al. 2020, "Incremental potential contact" (IPC), eqs. 6
// and 13:
//
//   b(d)  = −κ (d − d̂)² ln(d/d̂)  for 0 < d < d̂,  0 for d ≥ d̂,  +∞ for d ≤ 0
//   D(x)  = μ λ f₀(|u|),  u = (I − n nᵀ)(x − x_t),  λ = −b′(d(x_t)),  n = ∇d(x_t)
//   f₀(y) = y²/ε − y³/(3ε²) + ε/3  for y < ε = ε_v h,  y otherwise
//
// d is the node's signed distance to the obstacle (soft/shape_distance.hpp). b is C² and vanishes beyond d̂, so the
// contact set is smooth; the normal force grows without bound as d → 0, so no node ever
// penetrates (the line search and max_feasible_step keep every iterate outside).
// λ, n are lagged: taken at the start of the step x_t (the previous positions), so D is a
// potential of x; its dependence on x_t is differentiated exactly in the backward pass.
// Parameters: contact_stiffness κ (J/m², shared), obstacle/<name>/friction μ.
// Effect on gradients (docs/soft-bodies.md): a node pressed with load W rests at d ≈ κd̂²/W
// (< d̂) where the barrier's stiffness is ≈ W²/(κd̂²); that stiffness enters the Hessian the
// implicit-function-theorem backward pass solves with, so a small d̂ makes contact act like a
// hard constraint in the gradients (stiff, worse conditioned), a large d̂ or κ smoother.
// Shapes moving with a frame (pose P_{t+1}, previous pose P_t, both θ slices that a coupled
// rollout sets every step): d is measured at P_{t+1}; friction uses the frame coordinates
// z = Rᵀ(x − p), so u = (I − nnᵀ)(z(x; P_{t+1}) − z(x_t; P_t)) is the slip relative to the
// moving surface, and λ, n are taken at (x_t, P_t). The static and moving cases are two terms
// (ContactLocal<false>, <true>) so that static obstacles do not carry the 24 pose inputs.
#include <cmath>

#include "soft/shape_distance.hpp"

namespace diffphys::soft {
namespace {

template <bool kMoving>
struct ContactLocal {
  static constexpr int kNodes = 1;
  static constexpr int kExtra = kMoving ? 29 : 5;  // κ, μ, x_t (3)[, pose (12), previous pose (12)]
  static constexpr const char* kName = kMoving ? "moving_obstacle_contact" : "obstacle_contact";
  static constexpr EnergyTerm::Kind kKind = EnergyTerm::Kind::Contact;

  std::vector<int> shapes;  // obstacles of this kind (static or moving)

  explicit ContactLocal(const SoftModel& model) {
    for (std::size_t o = 0; o < model.obstacles.size(); ++o)
      if ((model.obstacles[o].frame >= 0) == kMoving) shapes.push_back(static_cast<int>(o));
  }

  int count(const SoftModel& model) const { return model.node_count * static_cast<int>(shapes.size()); }
  std::array<int, 1> nodes(const SoftModel&, int e) const { return {e / static_cast<int>(shapes.size())}; }
  int obstacle_index(int e) const { return shapes[static_cast<std::size_t>(e % static_cast<int>(shapes.size()))]; }
  const Obstacle& obstacle(const SoftModel& model, int e) const {
    return model.obstacles[static_cast<std::size_t>(obstacle_index(e))];
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const SoftParamLayout& layout = in.model.layout;
    const auto o = static_cast<std::size_t>(obstacle_index(e));
    values[0] = in.params[static_cast<std::size_t>(layout.contact_stiffness)];
    sources[0] = {ExtraSource::Param, layout.contact_stiffness};
    values[1] = in.params[static_cast<std::size_t>(layout.obstacle_friction[o])];
    sources[1] = {in.lagged_terms ? ExtraSource::Param : ExtraSource::Constant, layout.obstacle_friction[o]};
    const int node = nodes(in.model, e)[0];
    for (int r = 0; r < 3; ++r) {
      values[2 + r] = in.previous_positions[static_cast<std::size_t>(3 * node + r)];
      sources[2 + r] = {in.lagged_terms ? ExtraSource::Previous : ExtraSource::Constant, 3 * node + r};
    }
    if constexpr (kMoving) {
      const auto frame = static_cast<std::size_t>(in.model.obstacles[o].frame);
      for (int k = 0; k < 12; ++k) {
        const int pose = layout.frame_pose[frame] + k, previous = layout.frame_previous_pose[frame] + k;
        values[5 + k] = in.params[static_cast<std::size_t>(pose)];
        sources[5 + k] = {ExtraSource::Param, pose};
        values[17 + k] = in.params[static_cast<std::size_t>(previous)];
        sources[17 + k] = {in.lagged_terms ? ExtraSource::Param : ExtraSource::Constant, previous};
      }
    }
  }

  // Node coordinates in the shape's parent frame at the end (pose) or start (previous pose)
  // of the step.
  template <class T>
  V3<T> local(const T* extra, const V3<T>& x, bool previous) const {
    if constexpr (kMoving) return to_frame(extra + (previous ? 17 : 5), x);
    return x;
  }
  const double* pose(const TermInputs& in, int e, bool previous) const {
    const auto frame = static_cast<std::size_t>(obstacle(in.model, e).frame);
    const SoftParamLayout& layout = in.model.layout;
    return in.params.data() + (previous ? layout.frame_previous_pose[frame] : layout.frame_pose[frame]);
  }
  double distance_at(const TermInputs& in, int e, std::span<const double> positions, bool previous) const {
    const int node = nodes(in.model, e)[0];
    V3<double> z = load3(positions.data() + 3 * node);
    if constexpr (kMoving) z = to_frame(pose(in, e, previous), z);
    return shape_distance(obstacle(in.model, e), z, static_cast<V3<double>*>(nullptr));
  }

  // Outside the barrier band now and (for friction) at the start of the step: E ≡ 0 nearby.
  bool inactive(const TermInputs& in, int e) const {
    const double d_hat = in.model.contact.barrier_distance;
    return distance_at(in, e, in.positions, false) > d_hat &&
           (!in.lagged_terms || distance_at(in, e, in.previous_positions, true) >= d_hat);
  }

  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    const Obstacle& shape = obstacle(in.model, e);
    const double d_hat = in.model.contact.barrier_distance;
    const T& kappa = extra[0];
    const V3<T> z = local(extra, load3(x), false);
    const T d = shape_distance(shape, z, static_cast<V3<T>*>(nullptr));
    if (value_of(d) <= 0.0) return T(kInfinity);
    T total = 0.0;
    if (value_of(d) < d_hat) total = -kappa * (d - d_hat) * (d - d_hat) * log(d / d_hat);
    if (!in.lagged_terms) return total;
    // Lagged friction: λ and n at x_t (and the previous pose).
    V3<T> n;
    const V3<T> previous = local(extra, load3(extra + 2), true);
    const T d_previous = shape_distance(shape, previous, &n);
    if (!(value_of(d_previous) > 0.0 && value_of(d_previous) < d_hat)) return total;
    const T gap = d_previous - d_hat;
    const T normal_force = kappa * (2.0 * gap * log(d_previous / d_hat) + gap * gap / d_previous);
    const V3<T> displacement = z - previous;
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

  // Continuous collision against the shape at its end-of-step pose (soft/shape_distance.hpp).
  double max_step(const TermInputs& in, int e, const double* x, const double* dx) const {
    V3<double> z = load3(x), v = load3(dx);
    if constexpr (kMoving) {
      const double* p = pose(in, e, false);
      z = to_frame(p, z);
      const std::array<double, 12> rotation_only{0, 0, 0, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]};
      v = to_frame(rotation_only.data(), v);
    }
    return shape_max_step(obstacle(in.model, e), z, v);
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_obstacle_contact_term(const SoftModel& model) {
  return make_local_term(ContactLocal<false>(model));
}

std::unique_ptr<EnergyTerm> make_moving_obstacle_contact_term(const SoftModel& model) {
  return make_local_term(ContactLocal<true>(model));
}

}  // namespace diffphys::soft
