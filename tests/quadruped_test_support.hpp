// tests/quadruped_test_support.hpp — the check both quadruped robots' tests share: a 40-step
// closed-loop episode's weight gradient (through contacts, servos and the target map) against
// central differences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "experiments/quadruped_model.hpp"

namespace diffphys::testing {

// A smaller network than the experiment's, whose output layer is not zero, so that the legs
// move on the ground from step 0; every 23rd weight (h = 10⁻⁶, relative 10⁻⁵), α = 1 and no
// clipping: the exact gradient. At least 6 of the compared entries must be significant.
inline void expect_episode_weight_gradient_matches_central_differences(const experiments::QuadrupedModel& robot) {
  MlpSpec spec = experiments::quadruped_network_spec();
  spec.hidden = {16, 16};
  spec.output_init_scale = 0.5;
  spec.random_hidden_biases = true;
  const Mlp network(spec, 11);
  std::vector<double> weights(network.weights().begin(), network.weights().end());
  const int steps = 40;
  const RolloutOptions options;
  std::vector<double> gradient(weights.size());
  experiments::run_quadruped_episode(robot, network, weights, steps, options, gradient);
  const auto loss = [&](const std::vector<double>& w) {
    return -experiments::run_quadruped_episode(robot, network, w, steps, options, {}).average_forward_velocity;
  };
  const double h = 1e-6;
  int significant = 0;
  for (std::size_t k = 0; k < weights.size(); k += 23) {
    std::vector<double> plus = weights, minus = weights;
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (loss(plus) - loss(minus)) / (2 * h);
    EXPECT_NEAR(gradient[k], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "weight " << k;
    if (std::abs(numeric) > 1e-4) ++significant;
  }
  EXPECT_GT(significant, 5);
}

}  // namespace diffphys::testing
