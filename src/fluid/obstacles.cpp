// fluid/obstacles.cpp — see obstacles.hpp.
#include "fluid/obstacles.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "fluid/grid.hpp"

namespace diffphys::fluid {
namespace {

// One obstacle at one time: its θ slice read, its center moved to c + V t.
struct Ellipse {
  double center_x = 0, center_y = 0, inverse_a2 = 0, inverse_b2 = 0, a = 0, b = 0, cosine = 1, sine = 0;
  double velocity[2] = {0, 0};
};

Ellipse ellipse_at(const FluidModel& model, std::span<const double> theta, int obstacle, double time) {
  const double* slice = theta.data() + model.layout.obstacles + kObstacleParams * obstacle;
  Ellipse e;
  e.velocity[0] = slice[5];
  e.velocity[1] = slice[6];
  e.center_x = slice[0] + e.velocity[0] * time;
  e.center_y = slice[1] + e.velocity[1] * time;
  e.a = slice[2];
  e.b = slice[3];
  e.inverse_a2 = 1.0 / (e.a * e.a);
  e.inverse_b2 = 1.0 / (e.b * e.b);
  e.cosine = std::cos(slice[4]);
  e.sine = std::sin(slice[4]);
  return e;
}

// The obstacles of one call at its time: the first kCached computed once (their sines and
// cosines would otherwise be taken at every face), any further one on demand.
class Ellipses {
 public:
  Ellipses(const FluidModel& model, std::span<const double> theta, double time)
      : model_(model), theta_(theta), time_(time) {
    for (int o = 0; o < std::min(model.obstacle_count(), kCached); ++o)
      cached_[static_cast<std::size_t>(o)] = ellipse_at(model, theta, o, time);
  }
  Ellipse operator[](int o) const {
    return o < kCached ? cached_[static_cast<std::size_t>(o)] : ellipse_at(model_, theta_, o, time_);
  }

 private:
  static constexpr int kCached = 8;
  const FluidModel& model_;
  std::span<const double> theta_;
  double time_;
  std::array<Ellipse, kCached> cached_{};
};

// χ at a point and, when asked, its partial derivatives in the (moved) center, the semi-axes
// and the angle (obstacles.hpp gives the formulas).
struct Indicator {
  double chi = 0;
  double d_center[2] = {0, 0};
  double d_axes[2] = {0, 0};
  double d_angle = 0;
};

template <bool kDerivatives>
Indicator indicator(const Ellipse& e, double ramp_half_width, double x, double y) {
  Indicator out;
  const double dx = x - e.center_x, dy = y - e.center_y;
  const double p = e.cosine * dx + e.sine * dy, q = -e.sine * dx + e.cosine * dy;
  const double f = p * p * e.inverse_a2 + q * q * e.inverse_b2 - 1.0;
  const double gx = 2.0 * p * e.inverse_a2, gy = 2.0 * q * e.inverse_b2;
  const double g2 = gx * gx + gy * gy;
  if (!(g2 > 0.0)) {  // the center itself: deep inside
    out.chi = 1.0;
    return out;
  }
  const double g = std::sqrt(g2);
  const double d = f / g;
  const double s = (ramp_half_width - d) / (2.0 * ramp_half_width);
  if (s <= 0.0) return out;
  if (s >= 1.0) {
    out.chi = 1.0;
    return out;
  }
  out.chi = s * s * s * (s * (6.0 * s - 15.0) + 10.0);
  if constexpr (kDerivatives) {
    const double chi_d = -30.0 * s * s * (1.0 - s) * (1.0 - s) / (2.0 * ramp_half_width);
    // d_z = f_z/g − f g_z/g², g_z = (gx gx_z + gy gy_z)/g.
    const double f_over_g2 = f / g2;
    const double d_p = gx / g - f_over_g2 * (gx * 2.0 * e.inverse_a2) / g;
    const double d_q = gy / g - f_over_g2 * (gy * 2.0 * e.inverse_b2) / g;
    const double a3 = e.a * e.a * e.a, b3 = e.b * e.b * e.b;
    const double d_a = (-2.0 * p * p / a3) / g - f_over_g2 * (gx * (-4.0 * p / a3)) / g;
    const double d_b = (-2.0 * q * q / b3) / g - f_over_g2 * (gy * (-4.0 * q / b3)) / g;
    // (p, q) = R(−φ)(x − c): ∂p/∂c = (−cos φ, −sin φ), ∂q/∂c = (sin φ, −cos φ), ∂p/∂φ = q, ∂q/∂φ = −p.
    out.d_center[0] = chi_d * (-e.cosine * d_p + e.sine * d_q);
    out.d_center[1] = chi_d * (-e.sine * d_p - e.cosine * d_q);
    out.d_axes[0] = chi_d * d_a;
    out.d_axes[1] = chi_d * d_b;
    out.d_angle = chi_d * (q * d_p - p * d_q);
  }
  return out;
}

// Calls visit(kind, component, index, x, y) for every interior face, u faces then v faces.
template <typename Visit>
void for_each_interior_face(const FluidModel& model, Visit&& visit) {
  for (const FieldKind kind : {FieldKind::U, FieldKind::V}) {
    const Lattice lat = lattice(model, kind);
    const int component = kind == FieldKind::U ? 0 : 1;
    const int base = kind == FieldKind::U ? 0 : model.u_count();
    for (int j = 0; j < lat.size_y; ++j)
      for (int i = 0; i < lat.size_x; ++i)
        if (is_interior(model, kind, i, j))
          visit(component, base + lat.index(i, j), (i + lat.offset_x) * model.spacing, (j + lat.offset_y) * model.spacing);
  }
}

}  // namespace

bool obstacle_inside_domain(const FluidModel& model, std::span<const double> theta, int obstacle, double time,
                            double where[2]) {
  const Ellipse e = ellipse_at(model, theta, obstacle, time);
  where[0] = e.center_x;
  where[1] = e.center_y;
  return e.center_x >= 0.0 && e.center_x <= model.nx * model.spacing && e.center_y >= 0.0 &&
         e.center_y <= model.ny * model.spacing;
}

double obstacle_indicator(const FluidModel& model, std::span<const double> theta, int obstacle, double time, double x,
                          double y) {
  return indicator<false>(ellipse_at(model, theta, obstacle, time), model.obstacle_band * model.spacing, x, y).chi;
}

void penalize_obstacles(const FluidModel& model, std::span<const double> theta, double time, double* velocities,
                        std::span<double> forces) {
  std::fill(forces.begin(), forces.end(), 0.0);
  const int count = model.obstacle_count();
  if (count == 0) return;
  const double rate = model.dt / model.obstacle_permeability;                     // λ
  const double force_scale = model.spacing * model.spacing / model.obstacle_permeability;  // Δx²/η
  const double width = model.obstacle_band * model.spacing;
  const Ellipses ellipses(model, theta, time);
  for_each_interior_face(model, [&](int component, int index, double x, double y) {
    double weight = 0.0, target = 0.0;  // Σ χ_o, Σ χ_o u_o
    for (int o = 0; o < count; ++o) {
      const Ellipse e = ellipses[o];
      const double chi = indicator<false>(e, width, x, y).chi;
      weight += chi;
      target += chi * e.velocity[component];
    }
    if (weight == 0.0) return;
    const double penalized = (velocities[index] + rate * target) / (1.0 + rate * weight);
    velocities[index] = penalized;
    if (forces.empty()) return;
    for (int o = 0; o < count; ++o) {
      const Ellipse e = ellipses[o];
      const double chi = indicator<false>(e, width, x, y).chi;
      forces[static_cast<std::size_t>(2 * o + component)] += force_scale * chi * (penalized - e.velocity[component]);
    }
  });
}

void penalize_obstacles_vjp(const FluidModel& model, std::span<const double> theta, double time,
                            const double* penalized, double* velocities_bar, std::span<const double> forces_bar,
                            std::span<double> params_bar) {
  const int count = model.obstacle_count();
  if (count == 0) return;
  const double rate = model.dt / model.obstacle_permeability;
  const double force_scale = model.spacing * model.spacing / model.obstacle_permeability;
  const double width = model.obstacle_band * model.spacing;
  const Ellipses ellipses(model, theta, time);
  for_each_interior_face(model, [&](int component, int index, double x, double y) {
    double weight = 0.0;
    double bar = velocities_bar[index];  // ∂L/∂u' plus F's direct dependence on u' below
    for (int o = 0; o < count; ++o) {
      const double chi = indicator<false>(ellipses[o], width, x, y).chi;
      weight += chi;
      if (!forces_bar.empty()) bar += forces_bar[static_cast<std::size_t>(2 * o + component)] * force_scale * chi;
    }
    if (weight == 0.0) return;  // χ = 0 and, the ramp being C², ∂χ = 0: the stage is the identity here
    const double u = penalized[index];
    const double denominator = 1.0 + rate * weight;
    velocities_bar[index] = bar / denominator;
    for (int o = 0; o < count; ++o) {
      const Ellipse e = ellipses[o];
      const Indicator ind = indicator<true>(e, width, x, y);
      const double u_o = e.velocity[component];
      const double force_bar = forces_bar.empty() ? 0.0 : forces_bar[static_cast<std::size_t>(2 * o + component)];
      // u' = (u + λ Σ χ u_o)/(1 + λ Σ χ): ∂u'/∂χ_o = λ(u_o − u')/(1 + λΣχ), ∂u'/∂u_o = λχ_o/(1 + λΣχ);
      // F_o = Δx²/η χ_o (u' − u_o).
      const double chi_bar = bar * rate * (u_o - u) / denominator + force_bar * force_scale * (u - u_o);
      const double velocity_bar = bar * rate * ind.chi / denominator - force_bar * force_scale * ind.chi;
      double* slice = params_bar.data() + model.layout.obstacles + kObstacleParams * o;
      slice[0] += chi_bar * ind.d_center[0];
      slice[1] += chi_bar * ind.d_center[1];
      slice[2] += chi_bar * ind.d_axes[0];
      slice[3] += chi_bar * ind.d_axes[1];
      slice[4] += chi_bar * ind.d_angle;
      // c(t) = c + V t: V moves the center, and is the solid's velocity.
      slice[5] += chi_bar * ind.d_center[0] * time;
      slice[6] += chi_bar * ind.d_center[1] * time;
      slice[5 + component] += velocity_bar;
    }
  });
}

}  // namespace diffphys::fluid
