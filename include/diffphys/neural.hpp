// diffphys/neural.hpp — small neural controllers trained through the simulator (Degrave et
// al. 2019, "A differentiable physics engine for deep learning in robotics", §2–3):
//
//   * Mlp: a dense network (ReLU / tanh / identity), optional skip connections from the input,
//     optional recurrent state h_t, with exact backward passes for weights and inputs. The
//     output layer starts at zero, so the initial policy outputs zero (Degrave et al. §3.2).
//   * MlpPolicy: a rollout Controller (diffphys/rollout.hpp) that maps the State to the
//     network's input through a user feature function with its own VJP, and accumulates
//     dL/dW across the rollout, back-propagating through h_t in reverse time.
//   * average_over_batch: several robots (episodes) per update, run in parallel threads,
//     their losses and gradients averaged in episode order (same bits for any thread count).
//
//   Mlp network(MlpSpec{.inputs = 1, .hidden = {128, 128}, .outputs = 4}, seed);
//   MlpPolicy policy(network, network.weights(), FeatureMap{1, features, features_vjp});
//   rollout.run(x0, policy, T);  rollout.backward(loss);  policy.weight_gradient();
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "diffphys/rollout.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

enum class Activation { Identity, Relu, Tanh };

// Where the network's external input is fed besides the first layer. Degrave et al. §3.3:
// "a dense layer ... which has as input both the input layer and the top layer of the hidden
// layers" (ToOutput); ToEveryLayer concatenates the input to every layer's input.
enum class SkipConnection { None, ToOutput, ToEveryLayer };

struct MlpSpec {
  int inputs = 1;                  // external inputs s_t
  std::vector<int> hidden;         // widths of the hidden layers (may be empty: linear map)
  int outputs = 1;                 // outputs u_t
  Activation hidden_activation = Activation::Relu;
  Activation output_activation = Activation::Identity;
  SkipConnection skip = SkipConnection::None;
  // Size of the recurrent state h (0: feed-forward). With recurrence the network reads
  // [s_t, h_{t−1}] and writes [u_t, a_t] with h_t = tanh(a_t), h_{−1} = 0 (Degrave et al.
  // eq. 3: π(x_t) = g(s(x_t), h_t | W)).
  int recurrent = 0;
  // Scale of the output layer's initial weights; 0 (the paper's choice) makes the initial
  // policy output exactly zero. Hidden layers: Glorot uniform, biases zero.
  double output_init_scale = 0.0;
  // Draw the hidden layers' biases like their weights instead of starting them at 0. For the
  // first layer this is exactly a constant input of 1 with its own weights: it gives the
  // policy input-independent features from the start, so it can learn a set point faster
  // than a gain on its input (docs/EXPERIMENTS.md, arm-reach).
  bool random_hidden_biases = false;
};

// Activations of one forward pass, kept for its backward pass. One per thread.
struct MlpTape {
  std::vector<double> values;   // layer inputs and pre-activations, laid out by Mlp
  std::vector<double> scratch;  // backward's running gradients
};

class Mlp {
 public:
  // Throws Error for non-positive sizes, naming the item and value.
  Mlp(MlpSpec spec, std::uint64_t seed);

  const MlpSpec& spec() const { return spec_; }
  int parameter_count() const { return parameter_count_; }
  int input_size() const { return spec_.inputs + spec_.recurrent; }    // [s, h_prev]
  int output_size() const { return spec_.outputs + spec_.recurrent; }  // [u, a]: h = tanh(a)
  std::span<double> weights() { return weights_; }
  std::span<const double> weights() const { return weights_; }

  // output = f(weights; input) for input [s, h_prev] and output [u, a] (the recurrent part
  // a is pre-tanh: callers apply tanh). Records what backward needs into `tape`. No
  // allocation once the tape has grown.
  void forward(std::span<const double> weights, std::span<const double> input, MlpTape& tape,
               std::span<double> output) const;
  // Given dL/d output, ADDS dL/dW into weight_gradient and WRITES dL/d input into
  // input_gradient (may be empty when not needed).
  void backward(std::span<const double> weights, MlpTape& tape,
                std::span<const double> output_gradient, std::span<double> weight_gradient,
                std::span<double> input_gradient) const;

  // Flat weight layout: per layer ℓ, W_ℓ (rows = outputs, columns = inputs, row-major)
  // then b_ℓ. Layer ℓ reads [previous layer's activations, s (if skipped to it)].
  struct Layer {
    int inputs = 0, outputs = 0;
    bool reads_external_input = false;  // a skip connection feeds s into this layer
    int weight_offset = 0;              // W_ℓ in the flat weights
    int bias_offset = 0;                // b_ℓ
    Activation activation = Activation::Identity;
    int tape_input = 0;                 // offset of the layer's input in the tape
    int tape_preactivation = 0;         // offset of W x + b in the tape
  };
  std::span<const Layer> layers() const { return layers_; }

 private:
  MlpSpec spec_;
  std::vector<Layer> layers_;
  std::vector<double> weights_;
  int parameter_count_ = 0;
  int tape_size_ = 0;
  int widest_ = 0;
};

// Network input from the state, with its VJP. compute() writes `size` features of x_t;
// backward() ADDS (∂features/∂x_t)ᵀ·feature_gradient into state_gradient (tangent layout of
// docs/gradients.md, 12 per body). Features that do not depend on the state (a clock, a
// target) may leave backward empty.
struct FeatureMap {
  int size = 0;
  std::function<void(int step, const State& state, std::span<double> features)> compute;
  std::function<void(int step, const State& state, std::span<const double> feature_gradient,
                     std::span<double> state_gradient)>
      backward;
};

// A closed-loop controller u_t = scale ⊙ g(s(x_t), h_{t−1} | W) + offset for a Rollout. It
// references the network and weights (which must outlive it and not change during a
// rollout), stores each step's network input during the forward pass, and in act_backward
// recomputes that step's activations and back-propagates: weights into weight_gradient(),
// features into the state gradient, h into the previous step.
class MlpPolicy final : public Controller {
 public:
  MlpPolicy(const Mlp& network, std::span<const double> weights, FeatureMap features);

  // Per-output affine map from network outputs to controls (default: scale 1, offset 0).
  void set_output_map(std::vector<double> scale, std::vector<double> offset);

  void act(int step, const State& state, std::span<double> controls) override;
  void act_backward(int step, const State& state, std::span<const double> control_gradient,
                    std::span<double> state_gradient) override;

  // dL/dW of the latest backward pass (accumulated over its act_backward calls; each
  // backward pass of a rollout starts again from zero).
  std::span<const double> weight_gradient() const { return weight_gradient_; }

 private:
  const Mlp& network_;
  std::span<const double> weights_;
  FeatureMap features_;
  std::vector<double> scale_, offset_;
  std::vector<double> inputs_;  // (T × input_size) the network input of each step
  std::vector<double> output_, output_gradient_, input_gradient_;
  std::vector<double> recurrent_gradient_;  // dL/dh_t carried back to step t
  std::vector<double> weight_gradient_;
  MlpTape tape_;
  int steps_recorded_ = 0;
  int next_backward_step_ = -1;
};

// Runs `episodes` independent episodes (robots), up to `threads` at a time, and returns the
// average of their losses; average_gradient (size of the weights) receives the average of
// their gradients. episode(i, gradient) runs episode i, WRITES its gradient and returns its
// loss; it must be safe to call concurrently for different i. Gradients are summed in
// episode order, so the result is the same for every thread count. Exceptions thrown by an
// episode are rethrown here.
double average_over_batch(int episodes, int threads, std::span<double> average_gradient,
                          const std::function<double(int episode, std::span<double> gradient)>& episode);

}  // namespace diffphys
