// tests/fluid_stage_test.cpp — the fluid's stages one at a time: advection's VJP (each field
// kind, both schemes, with MacCormack's clamp active) against central differences of the stage
// alone, and the projection's symmetry and idempotence, on which its VJP (the same projection)
// rests.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "fluid/advection.hpp"
#include "fluid/pressure.hpp"
#include "fluid_test_support.hpp"

namespace diffphys::fluid {
namespace {

struct Fixture {
  FluidBuild built;
  FluidState state;  // its velocities: the carrier
};

Fixture make_fixture(AdvectionScheme scheme, unsigned seed) {
  FluidSpec spec = testing::small_box_spec(scheme, 1.0);
  spec.nx = 7;
  spec.ny = 6;
  spec.dt = 0.08;  // CFL up to 1.2 at 1.5 m/s: departure points cross cells
  Fixture f{build_fluid(spec), {}};
  f.state = f.built.state;
  testing::randomise(f.built.model, f.state, seed, 1.5);
  return f;
}

// ⟨w, A(field; u, v)⟩ for fixed weights w.
double weighted_advection(const FluidModel& model, FieldKind kind, const std::vector<double>& field,
                          const std::vector<double>& velocities, const std::vector<double>& weights) {
  const int count = lattice(model, kind).count();
  std::vector<double> out(static_cast<std::size_t>(count)), hat(out.size()), check(hat.size()), hat_bar(hat.size()),
      check_bar(hat.size()), low(hat.size()), high(hat.size());
  const double* u = velocities.data();
  advect(model, kind, field.data(), u, u + model.u_count(), out.data(),
         {hat.data(), check.data(), hat_bar.data(), check_bar.data(), low.data(), high.data()});
  double sum = 0.0;
  for (int k = 0; k < count; ++k) sum += weights[k] * out[k];
  return sum;
}

// Central differences (step 1e-6 on values of order 1; the stage is exact arithmetic, no
// solve: noise ≈ 1e-16 / 1e-6) against the VJP, to 1e-7 of the largest entry. For the
// velocity field advected by itself the field and the carrier are the same vector.
void check_advection_vjp(AdvectionScheme scheme, FieldKind kind, unsigned seed) {
  const Fixture f = make_fixture(scheme, seed);
  const FluidModel& model = f.built.model;
  const Lattice lat = lattice(model, kind);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> field(static_cast<std::size_t>(lat.count()));
  for (int j = 0; j < lat.size_y; ++j)
    for (int i = 0; i < lat.size_x; ++i)
      field[lat.index(i, j)] = is_interior(model, kind, i, j) ? uniform(random) : 0.0;
  std::vector<double> weights(field.size());
  for (double& w : weights) w = uniform(random);

  std::vector<double> field_bar(field.size(), 0.0), velocity_bar(f.state.velocities.size(), 0.0);
  std::vector<double> hat(field.size()), check(field.size()), hat_bar(field.size()), check_bar(field.size()),
      low(field.size()), high(field.size());
  const double* u = f.state.velocities.data();
  advect_vjp(model, kind, field.data(), u, u + model.u_count(), weights.data(), field_bar.data(), velocity_bar.data(),
             velocity_bar.data() + model.u_count(),
             {hat.data(), check.data(), hat_bar.data(), check_bar.data(), low.data(), high.data()});

  if (scheme == AdvectionScheme::MacCormack) {  // the clamp must act somewhere, or its branch is untested
    advect_semi_lagrangian(model, kind, field.data(), u, u + model.u_count(), model.dt, hat.data());
    advect_semi_lagrangian(model, kind, hat.data(), u, u + model.u_count(), -model.dt, check.data());
    int clamped = 0, interior = 0;
    for (int j = 0; j < lat.size_y; ++j)
      for (int i = 0; i < lat.size_x; ++i) {
        if (!is_interior(model, kind, i, j)) continue;
        ++interior;
        const int n = lat.index(i, j);
        const double corrected = hat[n] + 0.5 * (field[n] - check[n]);
        double lower = 0, upper = 0;
        stencil_bounds(lat, field.data(), departure_stencil(model, kind, lat, u, u + model.u_count(), model.dt, i, j),
                       lower, upper);
        clamped += corrected < lower || corrected > upper;
      }
    EXPECT_GT(clamped, 0);
    EXPECT_LT(clamped, interior);
  }

  const double step = 1e-6;
  double scale = 0.0;
  std::vector<double> numeric_field(field.size()), numeric_velocity(velocity_bar.size());
  for (std::size_t k = 0; k < field.size(); ++k) {
    std::vector<double> plus = field, minus = field;
    plus[k] += step;
    minus[k] -= step;
    numeric_field[k] = (weighted_advection(model, kind, plus, f.state.velocities, weights) -
                        weighted_advection(model, kind, minus, f.state.velocities, weights)) /
                       (2 * step);
    scale = std::max(scale, std::abs(numeric_field[k]));
  }
  for (std::size_t k = 0; k < velocity_bar.size(); ++k) {
    if (f.state.velocities[k] == 0.0) continue;  // wall faces
    std::vector<double> plus = f.state.velocities, minus = f.state.velocities;
    plus[k] += step;
    minus[k] -= step;
    numeric_velocity[k] = (weighted_advection(model, kind, field, plus, weights) -
                           weighted_advection(model, kind, field, minus, weights)) /
                          (2 * step);
    scale = std::max(scale, std::abs(numeric_velocity[k]));
  }
  for (std::size_t k = 0; k < field.size(); ++k)
    EXPECT_NEAR(field_bar[k], numeric_field[k], 1e-7 * scale) << "field sample " << k;
  for (std::size_t k = 0; k < velocity_bar.size(); ++k)
    if (f.state.velocities[k] != 0.0) {
      EXPECT_NEAR(velocity_bar[k], numeric_velocity[k], 1e-7 * scale) << "face " << k;
    }
}

TEST(FluidAdvection, VjpMatchesCentralDifferencesForEveryKindAndScheme) {
  unsigned seed = 20;
  for (const AdvectionScheme scheme : {AdvectionScheme::SemiLagrangian, AdvectionScheme::MacCormack})
    for (const FieldKind kind : {FieldKind::U, FieldKind::V, FieldKind::Cell}) {
      SCOPED_TRACE(::testing::Message() << "scheme " << static_cast<int>(scheme) << ", kind "
                                        << static_cast<int>(kind));
      check_advection_vjp(scheme, kind, seed++);
    }
}

// P = I + G A⁺ D is an orthogonal projection: ⟨P a, b⟩ = ⟨a, P b⟩ and P P a = P a, both to
// the solve's tolerance (1e-14 here) relative to the vectors' sizes.
TEST(FluidProjection, IsSymmetricAndIdempotent) {
  FluidSpec spec = testing::small_box_spec(AdvectionScheme::MacCormack, 1.0);
  spec.nx = 16;
  spec.ny = 12;
  const FluidBuild built = build_fluid(spec);
  const FluidModel& model = built.model;
  PressureSolver solver(model);
  FluidState a = built.state, b = built.state;
  testing::randomise(model, a, 31, 1.0);
  testing::randomise(model, b, 32, 1.0);
  const std::size_t faces = static_cast<std::size_t>(model.velocity_count());
  std::vector<double> pa(faces), pb(faces), ppa(faces), pressure(static_cast<std::size_t>(model.cell_count())),
      divergence(pressure.size());
  project(model, solver, a.velocities.data(), pa.data(), pressure.data(), divergence.data());
  project(model, solver, b.velocities.data(), pb.data(), pressure.data(), divergence.data());
  project(model, solver, pa.data(), ppa.data(), pressure.data(), divergence.data());
  double pa_b = 0, a_pb = 0, norm_a = 0, norm_b = 0, difference = 0, norm_pa = 0;
  for (std::size_t k = 0; k < faces; ++k) {
    pa_b += pa[k] * b.velocities[k];
    a_pb += a.velocities[k] * pb[k];
    norm_a += a.velocities[k] * a.velocities[k];
    norm_b += b.velocities[k] * b.velocities[k];
    difference += (ppa[k] - pa[k]) * (ppa[k] - pa[k]);
    norm_pa += pa[k] * pa[k];
  }
  EXPECT_NEAR(pa_b, a_pb, 1e-12 * std::sqrt(norm_a * norm_b));
  EXPECT_LT(std::sqrt(difference), 1e-12 * std::sqrt(norm_pa));
  EXPECT_LT(norm_pa, norm_a);  // it removed the gradient part of a random field
}

}  // namespace
}  // namespace diffphys::fluid
