// tests/neural_test.cpp — the neural controllers of diffphys/neural.hpp: the MLP's backward
// pass (weights and inputs; ReLU, tanh, skip connections, recurrent outputs) against central
// differences, the zero initial policy and the paper's parameter counts, a recurrent MlpPolicy
// differentiated through a whole closed-loop rollout against central differences, and the
// batch average's bits being the same for every thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/neural.hpp"
#include "diffphys/rollout.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::hinge_chain;

std::vector<double> random_vector(std::size_t size, std::uint32_t seed, double scale = 1.0) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-scale, scale);
  std::vector<double> values(size);
  for (double& v : values) v = uniform(generator);
  return values;
}

// L = Σ c_i y_i(W, x): checks dL/dW and dL/dx of Mlp::backward against central differences.
void expect_mlp_gradients_match(const MlpSpec& spec, std::uint32_t seed) {
  const Mlp network(spec, seed);
  std::vector<double> weights(network.weights().begin(), network.weights().end());
  for (double& w : weights) w += 0.05 * std::sin(7.0 * w + 1.0);  // biases non-zero too
  const std::vector<double> input = random_vector(static_cast<std::size_t>(network.input_size()), seed + 1);
  const std::vector<double> weighting = random_vector(static_cast<std::size_t>(network.output_size()), seed + 2);
  MlpTape tape;
  std::vector<double> output(static_cast<std::size_t>(network.output_size()));
  const auto loss = [&](std::span<const double> w, std::span<const double> x) {
    network.forward(w, x, tape, output);
    double sum = 0.0;
    for (std::size_t i = 0; i < output.size(); ++i) sum += weighting[i] * output[i];
    return sum;
  };
  loss(weights, input);
  std::vector<double> weight_gradient(weights.size(), 0.0), input_gradient(input.size(), 0.0);
  network.backward(weights, tape, weighting, weight_gradient, input_gradient);

  const double h = 1e-6;
  int compared = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    std::vector<double> plus = weights, minus = weights;
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (loss(plus, input) - loss(minus, input)) / (2 * h);
    EXPECT_NEAR(weight_gradient[k], numeric, 1e-7 * std::max(1.0, std::abs(numeric))) << "weight " << k;
    ++compared;
  }
  for (std::size_t k = 0; k < input.size(); ++k) {
    std::vector<double> plus = input, minus = input;
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (loss(weights, plus) - loss(weights, minus)) / (2 * h);
    EXPECT_NEAR(input_gradient[k], numeric, 1e-7 * std::max(1.0, std::abs(numeric))) << "input " << k;
    EXPECT_GT(std::abs(numeric), 1e-6) << "input " << k << " should matter";
  }
  EXPECT_EQ(compared, network.parameter_count());
}

TEST(Mlp, TanhNetworkGradientsMatchCentralDifferences) {
  MlpSpec spec;
  spec.inputs = 3;
  spec.hidden = {5, 4};
  spec.outputs = 2;
  spec.hidden_activation = Activation::Tanh;
  spec.output_activation = Activation::Tanh;
  spec.output_init_scale = 1.0;
  expect_mlp_gradients_match(spec, 11);
}

TEST(Mlp, ReluNetworkWithSkipToOutputGradientsMatchCentralDifferences) {
  MlpSpec spec;
  spec.inputs = 2;
  spec.hidden = {6, 6};
  spec.outputs = 3;
  spec.skip = SkipConnection::ToOutput;
  spec.output_init_scale = 1.0;
  expect_mlp_gradients_match(spec, 12);
  EXPECT_EQ(Mlp(spec, 1).layers().back().inputs, 6 + 2);
}

TEST(Mlp, SkipToEveryLayerAndRecurrentOutputsGradientsMatchCentralDifferences) {
  MlpSpec spec;
  spec.inputs = 2;
  spec.hidden = {5, 4, 3};
  spec.outputs = 2;
  spec.recurrent = 3;
  spec.hidden_activation = Activation::Tanh;
  spec.skip = SkipConnection::ToEveryLayer;
  spec.output_init_scale = 1.0;
  expect_mlp_gradients_match(spec, 13);
  const Mlp network(spec, 1);
  EXPECT_EQ(network.input_size(), 5);
  EXPECT_EQ(network.layers()[1].inputs, 5 + 5);
  EXPECT_EQ(network.layers()[3].inputs, 3 + 5);
}

TEST(Mlp, LinearNetworkWithoutHiddenLayersIsAffine) {
  MlpSpec spec;
  spec.inputs = 2;
  spec.outputs = 1;
  spec.output_init_scale = 1.0;
  expect_mlp_gradients_match(spec, 14);
  EXPECT_EQ(Mlp(spec, 1).parameter_count(), 3);
}

TEST(Mlp, ParameterCountsMatchThePaper) {
  // Degrave et al. 2019 §3.2.1: 1 → 128 → 128 → 4 has 17,284 parameters.
  EXPECT_EQ(Mlp(MlpSpec{1, {128, 128}, 4}, 1).parameter_count(), 17284);
  // §3.2.2: 3 → 1024 → 1024 → 1024 → 4 has 2,107,396 parameters.
  EXPECT_EQ(Mlp(MlpSpec{3, {1024, 1024, 1024}, 4}, 1).parameter_count(), 2107396);
  // §3.3: 2 → 128 → 128 → 8 with the input also fed to the output layer: 17,944 by our
  // count (the paper prints 17,952, 8 more: one extra input to the output layer).
  MlpSpec quadruped{2, {128, 128}, 8};
  quadruped.skip = SkipConnection::ToOutput;
  EXPECT_EQ(Mlp(quadruped, 1).parameter_count(), 17944);
}

TEST(Mlp, InitialNetworkOutputsZeroButHiddenLayersAreRandom) {
  MlpSpec spec{3, {16, 16}, 4};
  spec.recurrent = 2;
  const Mlp network(spec, 7);
  MlpTape tape;
  std::vector<double> output(static_cast<std::size_t>(network.output_size()), 1.0);
  network.forward(network.weights(), random_vector(5, 3), tape, output);
  for (const double y : output) EXPECT_EQ(y, 0.0);
  const Mlp::Layer& first = network.layers().front();
  double first_layer_norm = 0.0;
  for (int k = 0; k < first.inputs * first.outputs; ++k) first_layer_norm += std::abs(network.weights()[static_cast<std::size_t>(k)]);
  EXPECT_GT(first_layer_norm, 1.0);
  // The same seed gives the same weights; another seed different ones.
  EXPECT_TRUE(std::equal(network.weights().begin(), network.weights().end(), Mlp(spec, 7).weights().begin()));
  EXPECT_NE(network.weights()[0], Mlp(spec, 8).weights()[0]);
}

TEST(Mlp, RefusesBadSizesWithClearErrors) {
  EXPECT_THROW(Mlp(MlpSpec{0, {4}, 2}, 1), Error);
  EXPECT_THROW(Mlp(MlpSpec{2, {4, 0}, 2}, 1), Error);
  EXPECT_THROW(Mlp(MlpSpec{2, {4}, 0}, 1), Error);
  const Mlp network(MlpSpec{2, {4}, 1}, 1);
  MlpTape tape;
  std::vector<double> output(1);
  std::vector<double> input(3);
  try {
    network.forward(network.weights(), input, tape, output);
    FAIL() << "a wrong input size must throw";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("input of size 2, got 3"), std::string::npos) << error.what();
  }
}

// A pendulum (one hinged box, a motor on the hinge) controlled by a recurrent tanh MLP that
// sees the bob's x position and x velocity.
struct PendulumTask {
  Scene scene;
  int bob = 1;
  PendulumTask() {
    ModelBuilder builder = hinge_chain(1, 0.5, 1.0, 0.6);
    builder.dt = 1e-2;
    ActuatorSpec motor;
    motor.name = "hinge_motor";
    motor.joint = "hinge0";
    builder.add_actuator(motor);
    scene = builder.build();
  }
  FeatureMap features() const {
    FeatureMap map;
    map.size = 2;
    map.compute = [this](int, const State& state, std::span<double> out) {
      out[0] = 3.0 * state.position[static_cast<std::size_t>(bob)].x;
      out[1] = state.linear_velocity[static_cast<std::size_t>(bob)].x;
    };
    map.backward = [this](int, const State&, std::span<const double> gradient, std::span<double> state_gradient) {
      state_gradient[static_cast<std::size_t>(kStateTangentPerBody * bob + 0)] += 3.0 * gradient[0];
      state_gradient[static_cast<std::size_t>(kStateTangentPerBody * bob + 6)] += gradient[1];
    };
    return map;
  }
};

TEST(MlpPolicy, RecurrentPolicyGradientsThroughAClosedLoopRolloutMatchCentralDifferences) {
  const PendulumTask task;
  MlpSpec spec{2, {6, 5}, 1};
  spec.hidden_activation = Activation::Tanh;
  spec.recurrent = 2;
  spec.skip = SkipConnection::ToOutput;
  spec.output_init_scale = 1.0;  // non-zero so every path carries gradient
  const Mlp network(spec, 21);
  const int steps = 80;
  RolloutOptions options;
  options.checkpoint_interval = 9;  // segments recomputed from stored controls
  // L = Σ_t (z of the bob)² / T + x of the bob at T.
  const auto loss_gradient = [&](int t, const State& state, std::span<double> out) {
    out[kStateTangentPerBody * 1 + 2] += 2.0 * state.position[1].z / steps;
    if (t == steps) out[kStateTangentPerBody * 1 + 0] += 1.0;
  };
  const auto loss_of = [&](std::span<const double> weights, double start_x) {
    MlpPolicy policy(network, weights, task.features());
    policy.set_output_map({2.0}, {0.1});
    State initial = task.scene.state;
    initial.position[1].x += start_x;
    Rollout rollout(task.scene.model, task.scene.params, options);
    rollout.run(initial, policy, steps);
    double loss = rollout.final_state().position[1].x;
    for (int t = 0; t <= steps; ++t) loss += std::pow(rollout.state(t).position[1].z, 2) / steps;
    return loss;
  };
  std::vector<double> weights(network.weights().begin(), network.weights().end());
  MlpPolicy policy(network, weights, task.features());
  policy.set_output_map({2.0}, {0.1});
  Rollout rollout(task.scene.model, task.scene.params, options);
  rollout.run(task.scene.state, policy, steps);
  const Gradients g = rollout.backward(loss_gradient);
  const std::vector<double> analytic(policy.weight_gradient().begin(), policy.weight_gradient().end());

  const double h = 1e-6;
  int significant = 0;
  // Every weight of the network (85 of them): each needs two 80-step rollouts.
  for (std::size_t k = 0; k < weights.size(); ++k) {
    std::vector<double> plus = weights, minus = weights;
    plus[k] += h;
    minus[k] -= h;
    const double numeric = (loss_of(plus, 0.0) - loss_of(minus, 0.0)) / (2 * h);
    EXPECT_NEAR(analytic[k], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "weight " << k;
    if (std::abs(numeric) > 1e-3) ++significant;
  }
  EXPECT_GT(significant, static_cast<int>(weights.size()) / 2);
  // Through the features into the initial state.
  const double numeric_x0 = (loss_of(weights, h) - loss_of(weights, -h)) / (2 * h);
  EXPECT_NEAR(g.initial_state[kStateTangentPerBody * 1 + 0], numeric_x0, 1e-5 * std::max(1.0, std::abs(numeric_x0)));
  // A second backward pass of the same rollout gives the same gradient, not twice it.
  rollout.backward(loss_gradient);
  for (std::size_t k = 0; k < analytic.size(); ++k) EXPECT_EQ(policy.weight_gradient()[k], analytic[k]);
}

TEST(MlpPolicy, InitialPolicyHoldsTheRestControlsAndItsGradientIsNotZero) {
  const PendulumTask task;
  const Mlp network(MlpSpec{2, {8, 8}, 1}, 5);
  MlpPolicy policy(network, network.weights(), task.features());
  Rollout rollout(task.scene.model, task.scene.params);
  rollout.run(task.scene.state, policy, 30);
  for (const double u : rollout.controls()) EXPECT_EQ(u, 0.0);
  rollout.backward([&](int t, const State&, std::span<double> out) {
    if (t == 30) out[kStateTangentPerBody * 1 + 0] += 1.0;
  });
  double output_layer_gradient = 0.0;
  const Mlp::Layer& last = network.layers().back();
  for (int k = last.weight_offset; k < last.bias_offset + last.outputs; ++k)
    output_layer_gradient += std::abs(policy.weight_gradient()[static_cast<std::size_t>(k)]);
  EXPECT_GT(output_layer_gradient, 1e-6);  // learning can start from the zero policy
}

TEST(MlpPolicy, RefusesMismatchedSizes) {
  const PendulumTask task;
  const Mlp network(MlpSpec{2, {4}, 2}, 5);  // two outputs for one actuator
  EXPECT_THROW(MlpPolicy(network, network.weights(), FeatureMap{3, {}, {}}), Error);
  MlpPolicy policy(network, network.weights(), task.features());
  Rollout rollout(task.scene.model, task.scene.params);
  EXPECT_THROW(rollout.run(task.scene.state, policy, 5), Error);
}

TEST(Batch, AverageIsTheSameBitsForEveryThreadCountAndEqualsTheMean) {
  const PendulumTask task;
  const Mlp network(MlpSpec{2, {8}, 1, Activation::Tanh, Activation::Identity, SkipConnection::None, 0, 0.5}, 3);
  const auto episode = [&](int index, std::span<double> gradient) {
    MlpPolicy policy(network, network.weights(), task.features());
    State initial = task.scene.state;
    initial.linear_velocity[1].x = 0.1 * index;  // each robot starts differently
    Rollout rollout(task.scene.model, task.scene.params);
    rollout.run(initial, policy, 40);
    rollout.backward([&](int t, const State&, std::span<double> out) {
      if (t == 40) out[kStateTangentPerBody * 1 + 0] += 1.0;
    });
    std::copy(policy.weight_gradient().begin(), policy.weight_gradient().end(), gradient.begin());
    return rollout.final_state().position[1].x;
  };
  const auto size = static_cast<std::size_t>(network.parameter_count());
  std::vector<double> one(size), two(size), three(size);
  const double loss_one = average_over_batch(5, 1, one, episode);
  const double loss_two = average_over_batch(5, 2, two, episode);
  const double loss_three = average_over_batch(5, 3, three, episode);
  EXPECT_EQ(loss_one, loss_two);
  EXPECT_EQ(loss_one, loss_three);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, three);
  // The mean of the episodes run one by one.
  std::vector<double> mean(size, 0.0), single(size);
  double loss_mean = 0.0;
  for (int i = 0; i < 5; ++i) {
    loss_mean += episode(i, single) / 5;
    for (std::size_t k = 0; k < size; ++k) mean[k] += single[k] / 5;
  }
  EXPECT_NEAR(loss_one, loss_mean, 1e-14);
  for (std::size_t k = 0; k < size; ++k) EXPECT_NEAR(one[k], mean[k], 1e-12 * (1 + std::abs(mean[k])));
  EXPECT_THROW(average_over_batch(0, 1, one, episode), Error);
  EXPECT_THROW(average_over_batch(3, 2, one,
                                  [](int i, std::span<double>) -> double {
                                    if (i == 2) throw Error("episode 2 failed");
                                    return 0.0;
                                  }),
               Error);
}

}  // namespace
}  // namespace diffphys
