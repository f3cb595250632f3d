// tests/fluid_world_test.cpp — the fluid as a part of the world (src/fluid/fluid_part.cpp):
// a fluid-only world's rollout takes the same steps as FluidRollout and its backward pass gives
// the same gradients, bit for bit (stored, checkpointed, step records re-run); the world's
// gradients of every class (initial velocity and scalar fields, forces at every step,
// fluid/viscosity, fluid/buoyancy) against central differences of WorldRollout itself; the
// world's layout names the fluid's slices; clipping is reported in the fluid's health.
//
// Central differences: the solves stop at relative residual 1e-14 (small_box_spec), so the
// loss's noise is ≈ 1e-14 |L| with |L| ≈ 5; steps of 1e-6 m/s (velocities, scale 1.5 m/s),
// 1e-6 on scalars (scale 1), 1e-6 / h on forces (a force moves a velocity by h f) and 1e-6 of
// θ's value give ≈ 5e-8 of noise and truncation ε²|L'''|/6 below 1e-10. Required:
// 1e-6 ‖g‖∞ + 1e-6 |g| (twenty times that budget; a dropped adjoint term is O(‖g‖)).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "diffphys/fluid_rollout.hpp"
#include "diffphys/world.hpp"
#include "fluid_test_support.hpp"

namespace diffphys {
namespace {

using fluid::AdvectionScheme;
using fluid::FluidBuild;
using fluid::FluidState;

struct FluidWorldCase {
  World world;
  FluidState initial;
  std::vector<double> controls;  // steps × 2 ncell
  std::vector<double> velocity_weights, scalar_weights;  // zero on the wall faces
  int steps = 4;
};

FluidWorldCase make_case(AdvectionScheme scheme, double theta, unsigned seed) {
  FluidBuild built = fluid::build_fluid(fluid::testing::small_box_spec(scheme, theta));
  FluidState initial = built.state;
  fluid::testing::randomise(built.model, initial, seed, 1.5);
  FluidWorldCase c{World("box", "<test>", std::nullopt, std::nullopt, {}, std::move(built)), initial, {}, {}, {}, 4};
  const fluid::FluidModel& model = c.world.fluid->model;
  std::mt19937 random(seed + 1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  c.controls.resize(static_cast<std::size_t>(c.steps) * model.control_count());
  for (double& f : c.controls) f = uniform(random);
  // A random linear functional of the interior faces (the wall faces are not state).
  c.velocity_weights.assign(static_cast<std::size_t>(model.velocity_count()), 0.0);
  for (int j = 0; j < model.ny; ++j)
    for (int i = 1; i < model.nx; ++i) c.velocity_weights[static_cast<std::size_t>(j * (model.nx + 1) + i)] = uniform(random);
  for (int j = 1; j < model.ny; ++j)
    for (int i = 0; i < model.nx; ++i) c.velocity_weights[static_cast<std::size_t>(model.u_count() + j * model.nx + i)] = uniform(random);
  c.scalar_weights.resize(initial.scalars.size());
  for (double& w : c.scalar_weights) w = uniform(random);
  return c;
}

// L = a·u_T + b·s_T + ½ Σ s_T² + ½ Σ u_1² (final and intermediate, linear and quadratic).
double loss_at(const FluidWorldCase& c, int t, const FluidState& s) {
  double loss = 0.0;
  if (t == 1)
    for (const double u : s.velocities) loss += 0.5 * u * u;
  if (t == c.steps) {
    for (std::size_t k = 0; k < s.velocities.size(); ++k) loss += c.velocity_weights[k] * s.velocities[k];
    for (std::size_t k = 0; k < s.scalars.size(); ++k) loss += c.scalar_weights[k] * s.scalars[k] + 0.5 * s.scalars[k] * s.scalars[k];
  }
  return loss;
}

// dL/du_t and dL/ds_t of loss_at, added into the spans.
void loss_gradient_at(const FluidWorldCase& c, int t, const FluidState& s, std::span<double> du, std::span<double> ds) {
  if (t == 1)
    for (std::size_t k = 0; k < du.size(); ++k) du[k] += s.velocities[k];
  if (t == c.steps) {
    for (std::size_t k = 0; k < du.size(); ++k) du[k] += c.velocity_weights[k];
    for (std::size_t k = 0; k < ds.size(); ++k) ds[k] += c.scalar_weights[k] + s.scalars[k];
  }
}

WorldState world_state(const World& world, const FluidState& fluid) {
  WorldState state = world.initial_state();
  state.fluid = fluid;
  state.time = fluid.time;
  return state;
}

WorldGradients world_gradients(const FluidWorldCase& c, const WorldParams& params, const WorldRolloutOptions& options,
                               const std::vector<double>& controls, const FluidState& initial) {
  WorldRollout rollout(c.world, params, options);
  rollout.run(world_state(c.world, initial), controls, c.steps);
  return rollout.backward([&](int t, const WorldState& x, WorldStateGradient& g) {
    loss_gradient_at(c, t, x.fluid, g.fluid_velocities, g.fluid_scalars);
  });
}

double world_loss(const FluidWorldCase& c, const WorldParams& params, const std::vector<double>& controls, const FluidState& initial) {
  WorldRollout rollout(c.world, params);
  rollout.run(world_state(c.world, initial), controls, c.steps);
  double loss = 0.0;
  for (int t = 0; t <= c.steps; ++t) loss += loss_at(c, t, rollout.state(t).fluid);
  return loss;
}

TEST(FluidWorld, LayoutNamesTheFluidsSlices) {
  const FluidWorldCase c = make_case(AdvectionScheme::MacCormack, 1.0, 3);
  const WorldLayout& layout = c.world.layout();
  const fluid::FluidModel& model = c.world.fluid->model;
  EXPECT_EQ(c.world.kind(), "fluid");
  EXPECT_EQ(c.world.dt(), model.dt);
  const NamedSlice& u = WorldLayout::find(layout.state, "fluid/velocity_u", "state");
  const NamedSlice& v = WorldLayout::find(layout.state, "fluid/velocity_v", "state");
  const NamedSlice& s1 = WorldLayout::find(layout.tangent, "fluid/scalar/scalar1", "tangent");
  EXPECT_EQ(u.offset, 0);
  EXPECT_EQ(u.size, model.u_count());
  EXPECT_EQ(v.offset, model.u_count());
  EXPECT_EQ(v.size, model.v_count());
  EXPECT_EQ(s1.offset, model.velocity_count() + model.cell_count());
  EXPECT_EQ(layout.state_size, model.velocity_count() + 2 * model.cell_count());
  EXPECT_EQ(layout.tangent_size, layout.state_size);
  EXPECT_EQ(WorldLayout::find(layout.controls, "fluid/force", "control").size, 2 * model.cell_count());
  EXPECT_EQ(layout.control_count, 2 * model.cell_count());
  const WorldParams params = c.world.default_params();
  EXPECT_EQ(params.slice(c.world, "fluid/viscosity")[0], 0.02);
  EXPECT_EQ(params.slice(c.world, "fluid/buoyancy")[1], -0.3);
  // pack and unpack round-trip the fields.
  const WorldState x = world_state(c.world, c.initial);
  const std::vector<double> packed = pack_state(c.world, x);
  EXPECT_EQ(std::vector<double>(packed.begin(), packed.begin() + model.velocity_count()), c.initial.velocities);
  EXPECT_EQ(unpack_state(c.world, packed).fluid.scalars, c.initial.scalars);
}

// The same steps and adjoints as FluidRollout: every state, every gradient, the same bits —
// with every state and record kept, and checkpointed every 3 steps (records re-run).
TEST(FluidWorld, RolloutAndGradientsAreFluidRolloutsBitForBit) {
  for (const AdvectionScheme scheme : {AdvectionScheme::SemiLagrangian, AdvectionScheme::MacCormack}) {
    const FluidWorldCase c = make_case(scheme, scheme == AdvectionScheme::MacCormack ? 0.5 : 1.0, 11);
    const fluid::FluidModel& model = c.world.fluid->model;
    fluid::FluidRollout reference(model, c.world.fluid->params);
    reference.run(c.initial, c.controls, c.steps);
    const fluid::FluidGradients expected =
        reference.backward([&](int t, const FluidState& s, std::span<double> du, std::span<double> ds) { loss_gradient_at(c, t, s, du, ds); });
    const WorldParams params = c.world.default_params();
    for (const int interval : {0, 3}) {
      WorldRolloutOptions options;
      options.rollout.checkpoint_interval = interval;
      WorldRollout rollout(c.world, params, options);
      rollout.run(world_state(c.world, c.initial), c.controls, c.steps);
      for (int t = 0; t <= c.steps; ++t) {
        const FluidState mine = rollout.state(t).fluid, theirs = reference.state(t);
        EXPECT_EQ(mine.velocities, theirs.velocities) << "step " << t << ", interval " << interval;
        EXPECT_EQ(mine.scalars, theirs.scalars) << "step " << t;
        EXPECT_EQ(mine.time, theirs.time);
      }
      ASSERT_TRUE(rollout.converged());
      EXPECT_EQ(rollout.status(0).fluid->pressure_iterations, reference.statuses()[0].pressure_iterations);
      const WorldGradients g = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& dx) {
        loss_gradient_at(c, t, x.fluid, dx.fluid_velocities, dx.fluid_scalars);
      });
      const auto faces = static_cast<std::ptrdiff_t>(model.velocity_count());
      EXPECT_EQ(std::vector<double>(g.initial_state.begin(), g.initial_state.begin() + faces), expected.initial_velocities);
      EXPECT_EQ(std::vector<double>(g.initial_state.begin() + faces, g.initial_state.end()), expected.initial_scalars);
      EXPECT_EQ(g.controls, expected.controls);
      EXPECT_EQ(g.params, expected.params);
      EXPECT_TRUE(g.solver_converged);
      EXPECT_EQ(g.fluid_health.state_gradient_norm.size(), static_cast<std::size_t>(c.steps + 1));
      EXPECT_GT(g.fluid_health.state_gradient_norm[0], 0.0);
    }
  }
}

// Every gradient class of the world's backward pass against central differences of WorldRollout.
TEST(FluidWorld, GradientsMatchCentralDifferences) {
  const FluidWorldCase c = make_case(AdvectionScheme::MacCormack, 1.0, 5);
  const fluid::FluidModel& model = c.world.fluid->model;
  const WorldParams params = c.world.default_params();
  const WorldGradients g = world_gradients(c, params, {}, c.controls, c.initial);
  double largest = 0.0;
  for (const auto* v : {&g.initial_state, &g.controls, &g.params})
    for (const double x : *v) largest = std::max(largest, std::abs(x));
  ASSERT_GT(largest, 0.0);
  const auto check = [&](double analytic, double numeric, const std::string& what) {
    EXPECT_NEAR(analytic, numeric, 1e-6 * largest + 1e-6 * std::abs(numeric)) << what;
  };
  // θ: both slices, steps of 1e-6 of each value.
  for (std::size_t p = 0; p < params.values.size(); ++p) {
    const double eps = 1e-6 * std::abs(params.values[p]);
    WorldParams plus = params, minus = params;
    plus.values[p] += eps;
    minus.values[p] -= eps;
    check(g.params[p], (world_loss(c, plus, c.controls, c.initial) - world_loss(c, minus, c.controls, c.initial)) / (2 * eps),
          "theta " + std::to_string(p));
  }
  // x₀: every 5th interior face velocity and every 7th scalar value.
  const int faces = model.velocity_count();
  std::vector<bool> wall(static_cast<std::size_t>(faces), false);
  for (int j = 0; j < model.ny; ++j) wall[j * (model.nx + 1)] = wall[j * (model.nx + 1) + model.nx] = true;
  for (int i = 0; i < model.nx; ++i) wall[model.u_count() + i] = wall[model.u_count() + model.ny * model.nx + i] = true;
  for (int k = 0; k < faces; k += 5) {
    if (wall[static_cast<std::size_t>(k)]) {
      EXPECT_EQ(g.initial_state[static_cast<std::size_t>(k)], 0.0) << "wall face " << k;
      continue;
    }
    FluidState plus = c.initial, minus = c.initial;
    plus.velocities[static_cast<std::size_t>(k)] += 1e-6;
    minus.velocities[static_cast<std::size_t>(k)] -= 1e-6;
    check(g.initial_state[static_cast<std::size_t>(k)],
          (world_loss(c, params, c.controls, plus) - world_loss(c, params, c.controls, minus)) / 2e-6, "u0 face " + std::to_string(k));
  }
  for (std::size_t k = 0; k < c.initial.scalars.size(); k += 7) {
    FluidState plus = c.initial, minus = c.initial;
    plus.scalars[k] += 1e-6;
    minus.scalars[k] -= 1e-6;
    check(g.initial_state[static_cast<std::size_t>(faces) + k],
          (world_loss(c, params, c.controls, plus) - world_loss(c, params, c.controls, minus)) / 2e-6, "s0 " + std::to_string(k));
  }
  // Forces: every 9th of the T × 2 ncell.
  const double eps = 1e-6 / model.dt;
  for (std::size_t k = 0; k < c.controls.size(); k += 9) {
    std::vector<double> plus = c.controls, minus = c.controls;
    plus[k] += eps;
    minus[k] -= eps;
    check(g.controls[k], (world_loss(c, params, plus, c.initial) - world_loss(c, params, minus, c.initial)) / (2 * eps),
          "force " + std::to_string(k));
  }
}

// The schedule's clipping and decay apply to the fluid's slice and are reported in its health.
TEST(FluidWorld, ClippingAndDecayReachTheFluid) {
  const FluidWorldCase c = make_case(AdvectionScheme::SemiLagrangian, 1.0, 7);
  const WorldParams params = c.world.default_params();
  const WorldGradients plain = world_gradients(c, params, {}, c.controls, c.initial);
  WorldRolloutOptions clipped;
  clipped.rollout.gradient_clip = 1e-3;
  const WorldGradients g = world_gradients(c, params, clipped, c.controls, c.initial);
  // x̄_T and x̄_1 (where the loss adds large terms) are clipped; between them the adjoint
  // contracts (the projection is a contraction), so not every step is.
  EXPECT_GE(g.fluid_health.clipped_steps, 2);
  EXPECT_EQ(g.fluid_health.state_gradient_norm[static_cast<std::size_t>(c.steps)], 1e-3);
  EXPECT_GT(plain.fluid_health.state_gradient_norm[static_cast<std::size_t>(c.steps)], 1e-3);
  for (const double norm : g.fluid_health.state_gradient_norm) EXPECT_LE(norm, 1e-3 * (1 + 1e-12));
  WorldRolloutOptions decayed;
  decayed.rollout.gradient_decay = 0.5;
  const WorldGradients d = world_gradients(c, params, decayed, c.controls, c.initial);
  EXPECT_LT(d.fluid_health.state_gradient_norm[0], plain.fluid_health.state_gradient_norm[0]);
  EXPECT_EQ(plain.fluid_health.clipped_steps, 0);
}

}  // namespace
}  // namespace diffphys
