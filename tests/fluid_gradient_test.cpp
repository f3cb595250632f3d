// tests/fluid_gradient_test.cpp — every gradient class of FluidRollout::backward against
// central finite differences of a loss computed by stepping fluid_step directly: the initial
// velocities and scalars, the forces at every step, fluid/viscosity and fluid/buoyancy; for
// both advection schemes, backward Euler and Crank–Nicolson viscosity, mixed walls with a moving
// lid, a single-level and a multigrid pressure solve; and checkpointed against stored.
//
// Error budget of a central difference with step ε: truncation ε²|L'''|/6 plus the loss's noise
// δL / ε. The solves stop at relative residual 1e-14, so δL ≈ 1e-14 |L| (|L| ≈ 5 here):
// ε = 1e-6 m/s on velocities (scale 1.5 m/s) and scalars, 1e-6 / h on forces (a force f moves a
// velocity by h f) and 1e-6 of each θ's value gives ≈ 5e-8 noise and truncation below 1e-10. Agreement is required to
// 1e-6 ‖g‖∞ + 1e-6 |g|: twenty times the budget, far below any real error (a dropped term of
// the adjoint changes entries by O(‖g‖)). The loss is nonlinear (a square) and read at an
// intermediate step too, so the rollout's loss callback is checked at every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diffphys/fluid_rollout.hpp"
#include "fluid/fluid_step.hpp"
#include "fluid_test_support.hpp"

namespace diffphys::fluid {
namespace {

struct GradientCase {
  FluidBuild built;
  FluidState initial;
  std::vector<double> controls;  // steps × 2 ncell
  int steps = 3;
  std::vector<double> velocity_weights, scalar_weights;  // of the linear part of the loss
};

// L = a·u_T + b·s_T + ½ Σ (s_T)² + ½ Σ (u_1)²: linear and quadratic, final and intermediate.
double loss_of(const GradientCase& c, const FluidParams& params, const FluidState& initial,
               const std::vector<double>& controls) {
  const FluidModel& model = c.built.model;
  FluidWorkspace workspace(model);
  FluidState current = initial, next = initial;
  double loss = 0.0;
  const std::size_t control_size = static_cast<std::size_t>(model.control_count());
  for (int t = 0; t < c.steps; ++t) {
    const FluidStepStatus status =
        fluid_step(model, params, current, std::span<const double>(controls).subspan(t * control_size, control_size),
                   next, workspace);
    EXPECT_TRUE(status.converged) << status.message;
    std::swap(current, next);
    if (t + 1 == 1)
      for (const double u : current.velocities) loss += 0.5 * u * u;
  }
  for (std::size_t k = 0; k < current.velocities.size(); ++k) loss += c.velocity_weights[k] * current.velocities[k];
  for (std::size_t k = 0; k < current.scalars.size(); ++k)
    loss += c.scalar_weights[k] * current.scalars[k] + 0.5 * current.scalars[k] * current.scalars[k];
  return loss;
}

GradientCase make_case(const FluidSpec& spec, unsigned seed, int steps = 3) {
  GradientCase c{build_fluid(spec), {}, {}, steps, {}, {}};
  const FluidModel& model = c.built.model;
  c.initial = c.built.state;
  testing::randomise(model, c.initial, seed, 1.5);
  std::mt19937 random(seed + 1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  c.controls.resize(static_cast<std::size_t>(c.steps) * model.control_count());
  for (double& f : c.controls) f = uniform(random);
  c.velocity_weights.resize(static_cast<std::size_t>(model.velocity_count()));
  for (double& w : c.velocity_weights) w = uniform(random);
  c.scalar_weights.resize(c.initial.scalars.size());
  for (double& w : c.scalar_weights) w = uniform(random);
  return c;
}

FluidGradients analytic_gradients(const GradientCase& c, FluidRolloutOptions options = {}) {
  FluidRollout rollout(c.built.model, c.built.params, options);
  rollout.run(c.initial, c.controls, c.steps);
  return rollout.backward([&](int t, const FluidState& s, std::span<double> dL_du, std::span<double> dL_ds) {
    if (t == 1)
      for (std::size_t k = 0; k < s.velocities.size(); ++k) dL_du[k] += s.velocities[k];
    if (t == c.steps) {
      for (std::size_t k = 0; k < s.velocities.size(); ++k) dL_du[k] += c.velocity_weights[k];
      for (std::size_t k = 0; k < s.scalars.size(); ++k) dL_ds[k] += c.scalar_weights[k] + s.scalars[k];
    }
  });
}

// Compares analytic[k] with (L(x + ε e_k) − L(x − ε e_k)) / 2ε for every k in `indices`;
// returns the worst error relative to ‖g‖∞.
double expect_matches_central_differences(const std::string& what, const std::vector<double>& analytic,
                                          const std::vector<int>& indices, const std::function<double(int)>& step_of,
                                          const std::function<double(int, double)>& loss_with_offset) {
  std::vector<double> numeric(analytic.size(), 0.0);
  double scale = 0.0;
  for (const int k : indices) {
    const double step = step_of(k);
    numeric[k] = (loss_with_offset(k, step) - loss_with_offset(k, -step)) / (2 * step);
    scale = std::max(scale, std::abs(numeric[k]));
  }
  EXPECT_GT(scale, 1e-3) << what << ": the loss must depend on these inputs for the check to mean anything";
  double worst = 0.0;
  for (const int k : indices) {
    const double error = std::abs(analytic[k] - numeric[k]);
    worst = std::max(worst, error / scale);
    EXPECT_LE(error, 1e-6 * scale + 1e-6 * std::abs(numeric[k]))
        << what << "[" << k << "]: analytic " << analytic[k] << ", central difference " << numeric[k];
  }
  return worst;
}

// Every entry of each class, or every `stride`-th one (a longer rollout).
void check_every_gradient_class(const FluidSpec& spec, unsigned seed, int steps = 3, FluidRolloutOptions options = {},
                                int stride = 1) {
  const GradientCase c = make_case(spec, seed, steps);
  const FluidModel& model = c.built.model;
  const FluidGradients g = analytic_gradients(c, options);
  EXPECT_TRUE(g.solver_converged);
  const auto fixed_step = [](int) { return 1e-6; };

  std::vector<int> faces;
  for (int k = 0; k < model.velocity_count(); ++k)
    if (c.initial.velocities[k] != 0.0 && k % stride == 0) faces.push_back(k);  // interior faces (walls are held at 0)
  const double velocity_worst =
      expect_matches_central_differences("dL/du0", g.initial_velocities, faces, fixed_step, [&](int k, double delta) {
        FluidState perturbed = c.initial;
        perturbed.velocities[k] += delta;
        return loss_of(c, c.built.params, perturbed, c.controls);
      });
  // Wall faces carry no gradient (they are not free).
  for (int k = 0; k < model.velocity_count(); ++k) {
    if (c.initial.velocities[k] == 0.0) {
      EXPECT_EQ(g.initial_velocities[k], 0.0) << "wall face " << k;
    }
  }

  std::vector<int> scalar_entries;
  for (std::size_t k = 0; k < c.initial.scalars.size(); k += static_cast<std::size_t>(stride))
    scalar_entries.push_back(static_cast<int>(k));
  const double scalar_worst = expect_matches_central_differences(
      "dL/ds0", g.initial_scalars, scalar_entries, fixed_step, [&](int k, double delta) {
        FluidState perturbed = c.initial;
        perturbed.scalars[k] += delta;
        return loss_of(c, c.built.params, perturbed, c.controls);
      });

  std::vector<int> control_entries;
  for (std::size_t k = 0; k < c.controls.size(); k += static_cast<std::size_t>(stride))
    control_entries.push_back(static_cast<int>(k));
  const double control_worst = expect_matches_central_differences(
      "dL/df", g.controls, control_entries, [&](int) { return 1e-6 / model.dt; },
      [&](int k, double delta) {
        std::vector<double> perturbed = c.controls;
        perturbed[k] += delta;
        return loss_of(c, c.built.params, c.initial, perturbed);
      });

  std::vector<int> param_entries(static_cast<std::size_t>(model.param_count()));
  for (int k = 0; k < model.param_count(); ++k) param_entries[k] = k;
  const double param_worst = expect_matches_central_differences(
      "dL/dθ", g.params, param_entries,
      [&](int k) { return 1e-6 * std::abs(c.built.params.values[k]); },  // ν = 0.02, β = 0.8, −0.3
      [&](int k, double delta) {
        FluidParams perturbed = c.built.params;
        perturbed.values[k] += delta;
        return loss_of(c, perturbed, c.initial, c.controls);
      });
  EXPECT_NE(g.param(model, "fluid/viscosity")[0], 0.0);
  EXPECT_EQ(g.param(model, "fluid/buoyancy").size(), 2u);
  std::printf("worst error / ||g||inf: velocities %.1e, scalars %.1e, forces %.1e, params %.1e\n", velocity_worst,
              scalar_worst, control_worst, param_worst);
}

TEST(FluidGradient, EveryClassMatchesCentralDifferencesSemiLagrangianBackwardEuler) {
  check_every_gradient_class(testing::small_box_spec(AdvectionScheme::SemiLagrangian, 1.0), 11);
}

TEST(FluidGradient, EveryClassMatchesCentralDifferencesMacCormackCrankNicolson) {
  check_every_gradient_class(testing::small_box_spec(AdvectionScheme::MacCormack, 0.5), 12);
}

// 8 × 8: the pressure solve has two multigrid levels (8² → 4²), so the adjoint projection runs
// the V-cycle preconditioner too.
TEST(FluidGradient, EveryClassMatchesCentralDifferencesOnAMultigridGrid) {
  FluidSpec spec = testing::small_box_spec(AdvectionScheme::MacCormack, 1.0);
  spec.nx = spec.ny = 8;
  check_every_gradient_class(spec, 13);
}

// 12 steps on 10 × 8 (a 5 × 4 coarse level), checkpointed every 5 steps (segments of 5, 5
// and 2 re-run in the reverse sweep): every 7th entry of each class, and θ.
TEST(FluidGradient, ALongerCheckpointedRolloutMatchesCentralDifferences) {
  FluidSpec spec = testing::small_box_spec(AdvectionScheme::MacCormack, 0.5);
  spec.nx = 10;
  spec.ny = 8;
  check_every_gradient_class(spec, 16, 12, {.checkpoint_interval = 5}, 7);
}

// Checkpointed (a state every 2 steps, segments re-run) and stored give the same bits.
TEST(FluidGradient, CheckpointedEqualsStored) {
  GradientCase c = make_case(testing::small_box_spec(AdvectionScheme::MacCormack, 0.5), 14);
  c.steps = 5;
  c.controls.resize(static_cast<std::size_t>(c.steps) * c.built.model.control_count(), 0.25);
  const FluidGradients stored = analytic_gradients(c, {.checkpoint_interval = 1});
  const FluidGradients checkpointed = analytic_gradients(c, {.checkpoint_interval = 2});
  EXPECT_EQ(stored.initial_velocities, checkpointed.initial_velocities);
  EXPECT_EQ(stored.initial_scalars, checkpointed.initial_scalars);
  EXPECT_EQ(stored.controls, checkpointed.controls);
  EXPECT_EQ(stored.params, checkpointed.params);
  FluidRollout rollout(c.built.model, c.built.params, {.checkpoint_interval = 2});
  rollout.run(c.initial, c.controls, c.steps);
  FluidRollout all(c.built.model, c.built.params, {.checkpoint_interval = 1});
  all.run(c.initial, c.controls, c.steps);
  EXPECT_LT(rollout.stored_bytes(), all.stored_bytes());
  EXPECT_EQ(rollout.state(3).velocities, all.state(3).velocities);
  // A budget below the states and records: the interval is chosen (⌈√5⌉ = 3, grown until the
  // budget holds), and the gradients are still the same bits.
  FluidRollout budgeted(c.built.model, c.built.params, {.memory_budget = all.stored_bytes() / 2});
  budgeted.run(c.initial, c.controls, c.steps);
  EXPECT_GT(budgeted.checkpoint_interval(), 1);
  const FluidGradients automatic = analytic_gradients(c, {.memory_budget = all.stored_bytes() / 2});
  EXPECT_EQ(stored.initial_velocities, automatic.initial_velocities);
  EXPECT_EQ(stored.controls, automatic.controls);
  EXPECT_EQ(stored.params, automatic.params);
}

// The step VJP from its record (what the rollout uses) and with the forward stages re-run (no
// record) give the same bits.
TEST(FluidGradient, StepAdjointWithoutARecordEqualsWithOne) {
  const GradientCase c = make_case(testing::small_box_spec(AdvectionScheme::MacCormack, 0.5), 15);
  const FluidModel& model = c.built.model;
  FluidWorkspace workspace(model);
  FluidState next;
  std::vector<double> record(step_record_size(model));
  const std::span<const double> controls(c.controls.data(), static_cast<std::size_t>(model.control_count()));
  ASSERT_TRUE(fluid_step_recorded(model, c.built.params, c.initial, controls, next, workspace, record).converged);
  std::vector<double> results[2];
  for (int with_record = 0; with_record < 2; ++with_record) {
    std::vector<double> velocities_bar(static_cast<std::size_t>(model.velocity_count()), 0.0);
    std::vector<double> scalars_bar(c.initial.scalars.size(), 0.0), controls_bar(controls.size(), 0.0);
    std::vector<double> params_bar(static_cast<std::size_t>(model.param_count()), 0.0);
    FluidStepStatus status;
    fluid_step_vjp(model, c.built.params, c.initial, controls,
                   with_record ? std::span<const double>(record) : std::span<const double>(), c.velocity_weights,
                   c.scalar_weights, velocities_bar, scalars_bar, controls_bar, params_bar, workspace, status);
    EXPECT_TRUE(status.converged);
    results[with_record] = velocities_bar;
    for (const auto* part : {&scalars_bar, &controls_bar, &params_bar})
      results[with_record].insert(results[with_record].end(), part->begin(), part->end());
  }
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace diffphys::fluid
