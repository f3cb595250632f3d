// tests/soft_gradient_test.cpp — SoftRollout::backward (implicit function theorem) against
// central finite differences of the same rollout: every parameter in θ, the initial
// positions and velocities, and the per-node external forces.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "diffphys/soft_rollout.hpp"
#include "soft_test_scenes.hpp"

namespace diffphys::soft {
namespace {

// L = Σ a_k x_T,k + Σ b_k v_T,k + Σ c_k x_{T/2},k with fixed pseudo-random weights.
struct Loss {
  int steps = 0;
  double weight(std::size_t k, int which) const { return std::sin(1.3 * static_cast<double>(k) + 0.7 * which + 0.1); }
  double value(const SoftRollout& rollout) const {
    const SoftState final_state = rollout.final_state();
    const SoftState middle = rollout.state(steps / 2);
    double total = 0.0;
    for (std::size_t k = 0; k < final_state.positions.size(); ++k)
      total += weight(k, 0) * final_state.positions[k] + weight(k, 1) * final_state.velocities[k] +
               weight(k, 2) * middle.positions[k];
    return total;
  }
  SoftLossGradient gradient() const {
    return [this](int t, const SoftState& state, std::span<double> dx, std::span<double> dv) {
      for (std::size_t k = 0; k < state.positions.size(); ++k) {
        if (t == steps) {
          dx[k] += weight(k, 0);
          dv[k] += weight(k, 1);
        }
        if (t == steps / 2) dx[k] += weight(k, 2);
      }
    };
  }
};

void expect_close(double analytic, double numeric, const std::string& what) {
  const double scale = std::max(1.0, std::abs(numeric));
  EXPECT_NEAR(analytic, numeric, 2e-5 * scale) << what;
}

void check_rollout_gradients(SoftSpec spec, int steps, int checkpoint_interval = 0) {
  spec.newton.tolerance = 1e-12;  // finite differences need the minimiser to round-off
  SoftBuild built = build_soft(spec);
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  SoftParams params = built.params;
  std::vector<double> forces(static_cast<std::size_t>(steps) * dofs);
  for (std::size_t k = 0; k < forces.size(); ++k) forces[k] = 0.05 * std::cos(0.37 * static_cast<double>(k));
  for (std::size_t k = 0; k < dofs; ++k)
    if (built.model.pinned[k / 3]) {
      built.state.velocities[k] = 0.0;
    }
  Loss loss{steps};
  SoftRollout rollout(built.model, params, {checkpoint_interval});
  rollout.run(built.state, forces, steps);
  for (const SoftStepStatus& status : rollout.statuses()) ASSERT_TRUE(status.converged) << status.message;
  const SoftGradients gradients = rollout.backward(loss.gradient());
  ASSERT_TRUE(gradients.solver_converged);

  const auto evaluate = [&](const SoftState& initial, const std::vector<double>& f) {
    SoftRollout probe(built.model, params, {checkpoint_interval});
    probe.run(initial, f, steps);
    return loss.value(probe);
  };
  // Parameters (relative steps).
  for (const SoftParamLayout::Slice& slice : built.model.layout.slices)
    for (int i = 0; i < slice.size; ++i) {
      const auto p = static_cast<std::size_t>(slice.offset + i);
      const double original = params.values[p];
      // Parameters at 0 that must stay ≥ 0 (a node's extra mass, a friction of 0): one-sided,
      // with a step small against the lumped masses (cloth nodes weigh grams).
      const bool one_sided = original == 0.0 && slice.name != "gravity";
      const double epsilon = one_sided ? 1e-7 : 1e-5 * std::max(std::abs(original), 1.0);
      const auto at = [&](double value) {
        params.values[p] = value;
        const double loss_value = evaluate(built.state, forces);
        params.values[p] = original;
        return loss_value;
      };
      // Central, or the second-order one-sided (−3f₀ + 4f₁ − f₂)/(2ε).
      const double numeric = one_sided ? (-3 * at(original) + 4 * at(original + epsilon) - at(original + 2 * epsilon)) / (2 * epsilon)
                                       : (at(original + epsilon) - at(original - epsilon)) / (2 * epsilon);
      expect_close(gradients.params[p], numeric, slice.name + "[" + std::to_string(i) + "]");
    }
  // Initial state and the forces of the first and last step.
  const double epsilon = 1e-6;
  for (std::size_t k = 0; k < dofs; ++k) {
    for (int which = 0; which < 2; ++which) {
      SoftState plus = built.state, minus = built.state;
      auto& plus_values = which == 0 ? plus.positions : plus.velocities;
      auto& minus_values = which == 0 ? minus.positions : minus.velocities;
      plus_values[k] += epsilon;
      minus_values[k] -= epsilon;
      const double numeric = (evaluate(plus, forces) - evaluate(minus, forces)) / (2 * epsilon);
      const double analytic = which == 0 ? gradients.initial_positions[k] : gradients.initial_velocities[k];
      expect_close(analytic, numeric, (which == 0 ? "x0[" : "v0[") + std::to_string(k) + "]");
    }
    for (const int t : {0, steps - 1}) {
      const std::size_t index = static_cast<std::size_t>(t) * dofs + k;
      std::vector<double> plus = forces, minus = forces;
      plus[index] += epsilon;
      minus[index] -= epsilon;
      const double numeric = (evaluate(built.state, plus) - evaluate(built.state, minus)) / (2 * epsilon);
      const double analytic = built.model.pinned[k / 3] ? 0.0 : gradients.controls[index];
      expect_close(analytic, numeric, "f[" + std::to_string(t) + "][" + std::to_string(k) + "]");
    }
  }
}

TEST(SoftGradient, SpringChainEveryParameterAndInitialState) {
  check_rollout_gradients(testing::spring_chain_spec(), 12);
}

TEST(SoftGradient, SpringChainWithCheckpointing) {
  check_rollout_gradients(testing::spring_chain_spec(), 12, 5);
}

TEST(SoftGradient, TetsWithGroundContactAndFriction) {
  check_rollout_gradients(testing::tet_pair_spec(), 4);
}

TEST(SoftGradient, ClothOnSphereWithBending) {
  check_rollout_gradients(testing::small_cloth_spec(), 6);
}

}  // namespace
}  // namespace diffphys::soft
