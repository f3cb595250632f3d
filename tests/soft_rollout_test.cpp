// tests/soft_rollout_test.cpp — SoftRollout's parity with the rigid Rollout: the forward
// pass's Cholesky factors reused by the backward pass (and the same gradients when they are
// not kept), a closed-loop SoftController with its backward, gradient decay and clipping, and
// the backward health report (gradient norms, NaN/Inf named by step and stage, Newton
// non-convergence). Gradients are checked against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "diffphys/soft_rollout.hpp"
#include "soft_test_scenes.hpp"

namespace diffphys::soft {
namespace {

double weight(std::size_t k, int which) { return std::sin(1.3 * static_cast<double>(k) + 0.7 * which + 0.1); }

// L = Σ a_k x_T,k + Σ b_k v_T,k (+ Σ c_k x_{T/2},k when `middle`).
double loss_value(const SoftRollout& rollout, bool middle) {
  const SoftState& last = rollout.final_state();
  double total = 0.0;
  for (std::size_t k = 0; k < last.positions.size(); ++k)
    total += weight(k, 0) * last.positions[k] + weight(k, 1) * last.velocities[k];
  if (middle) {
    const SoftState half = rollout.state(rollout.steps() / 2);
    for (std::size_t k = 0; k < half.positions.size(); ++k) total += weight(k, 2) * half.positions[k];
  }
  return total;
}

SoftLossGradient loss_gradient(int steps, bool middle) {
  return [steps, middle](int t, const SoftState& state, std::span<double> dx, std::span<double> dv) {
    for (std::size_t k = 0; k < state.positions.size(); ++k) {
      if (t == steps) {
        dx[k] += weight(k, 0);
        dv[k] += weight(k, 1);
      }
      if (middle && t == steps / 2) dx[k] += weight(k, 2);
    }
  };
}

SoftBuild chain() {
  SoftSpec spec = testing::spring_chain_spec();
  spec.newton.tolerance = 1e-12;  // finite differences need the minimiser to round-off
  return build_soft(spec);
}

SoftBuild tets() {
  SoftSpec spec = testing::tet_pair_spec();
  spec.newton.tolerance = 1e-12;
  return build_soft(spec);
}

void expect_near_numeric(double analytic, double numeric, const std::string& what) {
  EXPECT_NEAR(analytic, numeric, 2e-5 * std::max(1.0, std::abs(numeric))) << what;
}

// A PD controller pulling every free node towards a target below its rest position:
// f = −k (x − x_rest + drop e_z) − d v; its own parameters k, d get gradients.
class SpringDamperController final : public SoftController {
 public:
  SpringDamperController(const SoftModel& model, double k, double d) : model_(model), k_(k), d_(d) {}
  void act(int, const SoftState& s, std::span<double> forces) override {
    for (std::size_t i = 0; i < forces.size(); ++i) forces[i] = -k_ * offset(s, i) - d_ * s.velocities[i];
  }
  void act_backward(int, const SoftState& s, std::span<const double> force_bar, std::span<double> dx,
                    std::span<double> dv) override {
    ++backward_calls;
    for (std::size_t i = 0; i < force_bar.size(); ++i) {
      dx[i] += -k_ * force_bar[i] + injected;
      dv[i] += -d_ * force_bar[i];
      k_bar += -offset(s, i) * force_bar[i];
      d_bar += -s.velocities[i] * force_bar[i];
    }
  }
  double k_bar = 0.0, d_bar = 0.0, injected = 0.0;
  int backward_calls = 0;

 private:
  double offset(const SoftState& s, std::size_t i) const {
    return s.positions[i] - model_.rest_positions[i] + (i % 3 == 2 ? 0.05 : 0.0);
  }
  const SoftModel& model_;
  double k_, d_;
};

TEST(SoftRollout, BackwardReusesTheForwardFactorsWithIdenticalGradients) {
  const SoftBuild built = tets();
  constexpr int kSteps = 6;
  const auto gradients_with = [&](SoftRolloutOptions options, std::size_t* record_bytes) {
    SoftRollout rollout(built.model, built.params, options);
    rollout.run(built.state, {}, kSteps);
    if (record_bytes != nullptr) *record_bytes = rollout.stored_record_bytes();
    return rollout.backward(loss_gradient(kSteps, true));
  };
  std::size_t kept_bytes = 0, refactorised_bytes = 1;
  SoftRolloutOptions kept;
  const SoftGradients reused = gradients_with(kept, &kept_bytes);
  SoftRolloutOptions refactorise;
  refactorise.keep_step_records = false;
  const SoftGradients recomputed = gradients_with(refactorise, &refactorised_bytes);
  SoftRolloutOptions segments;
  segments.checkpoint_interval = 4;  // two segments, their factors recomputed with them
  const SoftGradients segmented = gradients_with(segments, nullptr);
  SoftRolloutOptions tight;
  tight.memory_budget = 1;  // nothing fits: checkpoints and refactorisation
  const SoftGradients budgeted = gradients_with(tight, nullptr);

  EXPECT_GT(kept_bytes, 0u);
  EXPECT_EQ(refactorised_bytes, 0u);
  EXPECT_EQ(reused.health.refactorised_steps, 0);
  EXPECT_EQ(recomputed.health.refactorised_steps, kSteps);
  EXPECT_EQ(segmented.health.refactorised_steps, 0);
  EXPECT_EQ(budgeted.health.refactorised_steps, kSteps);
  // The kept factor is the one refactorising at x* computes: the same numbers, bit for bit.
  for (const SoftGradients* other : {&recomputed, &segmented, &budgeted}) {
    EXPECT_EQ(reused.params, other->params);
    EXPECT_EQ(reused.initial_positions, other->initial_positions);
    EXPECT_EQ(reused.initial_velocities, other->initial_velocities);
    EXPECT_EQ(reused.controls, other->controls);
  }
}

TEST(SoftRollout, ClosedLoopControllerGradientsMatchCentralDifferences) {
  SoftBuild built = chain();
  SoftParams params = built.params;
  constexpr int kSteps = 10;
  constexpr double kGain = 30.0, kDamping = 2.0;
  const auto evaluate = [&](const SoftState& initial, double gain, double damping) {
    SpringDamperController controller(built.model, gain, damping);
    SoftRollout rollout(built.model, params);
    rollout.run(initial, controller, kSteps);
    return loss_value(rollout, true);
  };
  SpringDamperController controller(built.model, kGain, kDamping);
  SoftRollout rollout(built.model, params);
  rollout.run(built.state, controller, kSteps);
  for (const SoftStepStatus& status : rollout.statuses()) ASSERT_TRUE(status.converged) << status.message;
  ASSERT_EQ(rollout.controls().size(), static_cast<std::size_t>(kSteps * built.model.dof_count()));
  const SoftGradients gradients = rollout.backward(loss_gradient(kSteps, true));
  EXPECT_EQ(controller.backward_calls, kSteps);
  EXPECT_TRUE(gradients.health.solver_converged);
  EXPECT_EQ(gradients.health.first_non_finite_step, -1);

  // The same closed loop with checkpoint segments (forces reused, factors recomputed with
  // each segment): the same gradients, and act_backward once per step.
  SpringDamperController segmented_controller(built.model, kGain, kDamping);
  SoftRollout segmented(built.model, params, {3});
  segmented.run(built.state, segmented_controller, kSteps);
  const SoftGradients segmented_gradients = segmented.backward(loss_gradient(kSteps, true));
  EXPECT_EQ(segmented_controller.backward_calls, kSteps);
  EXPECT_EQ(segmented_gradients.params, gradients.params);
  EXPECT_EQ(segmented_gradients.initial_positions, gradients.initial_positions);
  EXPECT_EQ(segmented_controller.k_bar, controller.k_bar);

  const double epsilon = 1e-6;
  expect_near_numeric(
      controller.k_bar,
      (evaluate(built.state, kGain + epsilon, kDamping) - evaluate(built.state, kGain - epsilon, kDamping)) /
          (2 * epsilon),
      "controller gain");
  expect_near_numeric(
      controller.d_bar,
      (evaluate(built.state, kGain, kDamping + epsilon) - evaluate(built.state, kGain, kDamping - epsilon)) /
          (2 * epsilon),
      "controller damping");
  for (std::size_t k = 0; k < built.state.positions.size(); ++k) {
    if (built.model.pinned[k / 3]) continue;
    for (int which = 0; which < 2; ++which) {
      SoftState plus = built.state, minus = built.state;
      (which == 0 ? plus.positions : plus.velocities)[k] += epsilon;
      (which == 0 ? minus.positions : minus.velocities)[k] -= epsilon;
      const double numeric = (evaluate(plus, kGain, kDamping) - evaluate(minus, kGain, kDamping)) / (2 * epsilon);
      expect_near_numeric(which == 0 ? gradients.initial_positions[k] : gradients.initial_velocities[k], numeric,
                          (which == 0 ? "x0[" : "v0[") + std::to_string(k) + "]");
    }
  }
  for (const SoftParamLayout::Slice& slice : built.model.layout.slices)
    for (int i = 0; i < slice.size; ++i) {
      const auto p = static_cast<std::size_t>(slice.offset + i);
      const double original = params.values[p];
      if (original == 0.0 && slice.name != "gravity") continue;  // bounded at 0: soft_gradient_test
      const double step = 1e-5 * std::max(std::abs(original), 1.0);
      params.values[p] = original + step;
      const double plus = evaluate(built.state, kGain, kDamping);
      params.values[p] = original - step;
      const double minus = evaluate(built.state, kGain, kDamping);
      params.values[p] = original;
      expect_near_numeric(gradients.params[p], (plus - minus) / (2 * step), slice.name + "[" + std::to_string(i) + "]");
    }
}

// Open loop with forces; the loss only at T, so that dL/df_t of the decayed backward is
// α^(T−1−t) times the true one, and dL/dx_0 α^T times.
TEST(SoftRollout, GradientDecayScalesEachStepBackAgainstCentralDifferences) {
  const SoftBuild built = tets();
  constexpr int kSteps = 4;
  constexpr double kDecay = 0.7;
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  std::vector<double> forces(kSteps * dofs);
  for (std::size_t k = 0; k < forces.size(); ++k) forces[k] = 0.02 * std::cos(0.37 * static_cast<double>(k));
  SoftRolloutOptions options;
  options.gradient_decay = kDecay;
  SoftRollout rollout(built.model, built.params, options);
  rollout.run(built.state, forces, kSteps);
  const SoftGradients gradients = rollout.backward(loss_gradient(kSteps, false));
  const auto evaluate = [&](const SoftState& initial, const std::vector<double>& f) {
    SoftRollout probe(built.model, built.params);
    probe.run(initial, f, kSteps);
    return loss_value(probe, false);
  };
  const double epsilon = 1e-6;
  for (std::size_t k = 0; k < dofs; k += 5) {
    for (int t = 0; t < kSteps; ++t) {
      std::vector<double> plus = forces, minus = forces;
      plus[static_cast<std::size_t>(t) * dofs + k] += epsilon;
      minus[static_cast<std::size_t>(t) * dofs + k] -= epsilon;
      const double numeric = (evaluate(built.state, plus) - evaluate(built.state, minus)) / (2 * epsilon);
      expect_near_numeric(gradients.controls[static_cast<std::size_t>(t) * dofs + k],
                          std::pow(kDecay, kSteps - 1 - t) * numeric,
                          "decayed f[" + std::to_string(t) + "][" + std::to_string(k) + "]");
    }
    SoftState plus = built.state, minus = built.state;
    plus.positions[k] += epsilon;
    minus.positions[k] -= epsilon;
    const double numeric = (evaluate(plus, forces) - evaluate(minus, forces)) / (2 * epsilon);
    expect_near_numeric(gradients.initial_positions[k], std::pow(kDecay, kSteps) * numeric,
                        "decayed x0[" + std::to_string(k) + "]");
  }
}

TEST(SoftRollout, GradientClippingCapsTheStateAdjointNorm) {
  const SoftBuild built = chain();
  constexpr int kSteps = 5;
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  std::vector<double> forces(kSteps * dofs, 0.1);
  SoftRollout plain(built.model, built.params);
  plain.run(built.state, forces, kSteps);
  const SoftGradients unclipped = plain.backward(loss_gradient(kSteps, false));
  const double final_norm = unclipped.health.state_gradient_norm[kSteps];
  ASSERT_GT(final_norm, 0.0);
  SoftRolloutOptions options;
  options.gradient_clip = 0.5 * final_norm;
  SoftRollout clipped_rollout(built.model, built.params, options);
  clipped_rollout.run(built.state, forces, kSteps);
  const SoftGradients clipped = clipped_rollout.backward(loss_gradient(kSteps, false));
  EXPECT_GE(clipped.health.clipped_steps, 1);
  for (const double norm : clipped.health.state_gradient_norm) EXPECT_LE(norm, options.gradient_clip * (1 + 1e-12));
  EXPECT_NEAR(clipped.health.state_gradient_norm[kSteps], options.gradient_clip, 1e-12 * final_norm);
  // dL/df_{T−1} comes from the clipped (x̄_T, v̄_T) alone: half the true gradient.
  const double epsilon = 1e-6;
  for (std::size_t k = 3; k < dofs; ++k) {  // node 0 is pinned
    const std::size_t index = (kSteps - 1) * dofs + k;
    std::vector<double> plus = forces, minus = forces;
    plus[index] += epsilon;
    minus[index] -= epsilon;
    SoftRollout probe(built.model, built.params);
    probe.run(built.state, plus, kSteps);
    const double up = loss_value(probe, false);
    probe.run(built.state, minus, kSteps);
    const double down = loss_value(probe, false);
    expect_near_numeric(clipped.controls[index], 0.5 * (up - down) / (2 * epsilon),
                        "clipped f[T-1][" + std::to_string(k) + "]");
  }
}

TEST(SoftRollout, HealthNamesTheStepAndStageOfANonFiniteGradient) {
  const SoftBuild built = chain();
  constexpr int kSteps = 8;
  SoftRollout rollout(built.model, built.params);
  rollout.run(built.state, {}, kSteps);
  const SoftGradients from_loss = rollout.backward([](int t, const SoftState&, std::span<double> dx, std::span<double>) {
    if (t == 5) dx[4] = std::numeric_limits<double>::quiet_NaN();
    if (t == kSteps) dx[4] += 1.0;
  });
  EXPECT_EQ(from_loss.health.first_non_finite_step, 5);
  EXPECT_EQ(from_loss.health.first_non_finite_stage, "loss gradient");
  EXPECT_TRUE(std::isfinite(from_loss.health.state_gradient_norm[6]));
  EXPECT_TRUE(std::isnan(from_loss.health.state_gradient_norm[5]));

  SpringDamperController controller(built.model, 10.0, 1.0);
  SoftRollout closed(built.model, built.params);
  closed.run(built.state, controller, kSteps);
  controller.injected = std::numeric_limits<double>::infinity();
  const SoftGradients from_controller = closed.backward(loss_gradient(kSteps, false));
  EXPECT_EQ(from_controller.health.first_non_finite_step, kSteps - 1);
  EXPECT_EQ(from_controller.health.first_non_finite_stage, "controller");

  // A clean backward reports nothing and a finite norm at every step.
  const SoftGradients clean = rollout.backward(loss_gradient(kSteps, true));
  EXPECT_EQ(clean.health.first_non_finite_step, -1);
  EXPECT_TRUE(clean.health.first_non_finite_stage.empty());
  ASSERT_EQ(clean.health.state_gradient_norm.size(), static_cast<std::size_t>(kSteps + 1));
  for (const double norm : clean.health.state_gradient_norm) EXPECT_TRUE(std::isfinite(norm));
  EXPECT_GT(clean.health.state_gradient_norm[0], 0.0);
}

TEST(SoftRollout, HealthListsNewtonNonConvergenceSteps) {
  SoftSpec spec = testing::tet_pair_spec();
  spec.newton.max_iterations = 1;
  spec.newton.tolerance = 1e-14;
  const SoftBuild built = build_soft(spec);
  constexpr int kSteps = 3;
  SoftRollout rollout(built.model, built.params);
  rollout.run(built.state, {}, kSteps);
  const SoftGradients gradients = rollout.backward(loss_gradient(kSteps, false));
  EXPECT_FALSE(gradients.health.solver_converged);
  EXPECT_FALSE(gradients.solver_converged);
  std::vector<int> expected;
  for (int t = 0; t < kSteps; ++t)
    if (!rollout.statuses()[static_cast<std::size_t>(t)].converged) expected.push_back(t);
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(gradients.health.non_converged_steps, expected);
}

}  // namespace
}  // namespace diffphys::soft
