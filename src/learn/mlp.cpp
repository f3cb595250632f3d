// learn/mlp.cpp — the dense network of diffphys/neural.hpp: layout, initialisation, forward
// and the exact backward pass (reverse-mode through W x + b and the activations).
#include <algorithm>
#include <cmath>
#include <random>

#include "diffphys/error.hpp"
#include "diffphys/neural.hpp"

namespace diffphys {
namespace {

double activate(Activation activation, double z) {
  switch (activation) {
    case Activation::Relu: return z > 0.0 ? z : 0.0;
    case Activation::Tanh: return std::tanh(z);
    case Activation::Identity: return z;
  }
  return z;
}

// dσ/dz at pre-activation z.
double activation_slope(Activation activation, double z) {
  switch (activation) {
    case Activation::Relu: return z > 0.0 ? 1.0 : 0.0;
    case Activation::Tanh: {
      const double t = std::tanh(z);
      return 1.0 - t * t;
    }
    case Activation::Identity: return 1.0;
  }
  return 1.0;
}

// Uniform in [−bound, bound] from the raw 64-bit stream, so the weights are the same bits
// with every standard library (std::uniform_real_distribution is not specified exactly).
double uniform(std::mt19937_64& generator, double bound) {
  const double unit = static_cast<double>(generator() >> 11) * 0x1.0p-53;  // [0, 1)
  return bound * (2.0 * unit - 1.0);
}

}  // namespace

Mlp::Mlp(MlpSpec spec, std::uint64_t seed) : spec_(std::move(spec)) {
  if (spec_.inputs < 0 || spec_.inputs + spec_.recurrent <= 0)
    throw Error(message("mlp: inputs must be positive, got ", spec_.inputs));
  if (spec_.outputs <= 0) throw Error(message("mlp: outputs must be positive, got ", spec_.outputs));
  if (spec_.recurrent < 0) throw Error(message("mlp: recurrent size must be >= 0, got ", spec_.recurrent));
  for (std::size_t i = 0; i < spec_.hidden.size(); ++i)
    if (spec_.hidden[i] <= 0)
      throw Error(message("mlp: hidden layer ", i, " width must be positive, got ", spec_.hidden[i]));
  if (!std::isfinite(spec_.output_init_scale))
    throw Error(message("mlp: output_init_scale must be finite, got ", spec_.output_init_scale));

  const int input = input_size();
  const int layer_count = static_cast<int>(spec_.hidden.size()) + 1;
  int previous = input;
  int offset = 0, tape = 0;
  widest_ = std::max(input, output_size());
  for (int l = 0; l < layer_count; ++l) {
    const bool last = l == layer_count - 1;
    Layer layer;
    layer.reads_external_input = l > 0 && (spec_.skip == SkipConnection::ToEveryLayer ||
                                           (spec_.skip == SkipConnection::ToOutput && last));
    layer.inputs = previous + (layer.reads_external_input ? input : 0);
    layer.outputs = last ? output_size() : spec_.hidden[static_cast<std::size_t>(l)];
    layer.activation = last ? spec_.output_activation : spec_.hidden_activation;
    layer.weight_offset = offset;
    offset += layer.inputs * layer.outputs;
    layer.bias_offset = offset;
    offset += layer.outputs;
    layer.tape_input = tape;
    tape += layer.inputs;
    layer.tape_preactivation = tape;
    tape += layer.outputs;
    widest_ = std::max({widest_, layer.inputs, layer.outputs});
    layers_.push_back(layer);
    previous = layer.outputs;
  }
  parameter_count_ = offset;
  tape_size_ = tape;

  weights_.assign(static_cast<std::size_t>(parameter_count_), 0.0);
  std::mt19937_64 generator(seed);
  for (int l = 0; l < layer_count; ++l) {
    const Layer& layer = layers_[static_cast<std::size_t>(l)];
    const bool last = l == layer_count - 1;
    // Glorot & Bengio 2010 uniform, biases 0: the default of Lasagne, in which Degrave et
    // al. built their controllers. (He et al.'s larger bound for ReLU makes a 1-input layer's
    // features ~10× larger, so the input-dependent part of the policy outgrows the biases.)
    const double fan_in = layer.inputs, fan_out = layer.outputs;
    double bound = std::sqrt(6.0 / (fan_in + fan_out));
    if (last) bound *= spec_.output_init_scale;
    if (bound == 0.0) continue;
    for (int k = 0; k < layer.inputs * layer.outputs; ++k)
      weights_[static_cast<std::size_t>(layer.weight_offset + k)] = uniform(generator, bound);
    if (spec_.random_hidden_biases && !last)
      for (int k = 0; k < layer.outputs; ++k)
        weights_[static_cast<std::size_t>(layer.bias_offset + k)] = uniform(generator, bound);
  }
}

void Mlp::forward(std::span<const double> weights, std::span<const double> input, MlpTape& tape,
                  std::span<double> output) const {
  if (static_cast<int>(weights.size()) != parameter_count_)
    throw Error(message("mlp: expected ", parameter_count_, " weights, got ", weights.size()));
  if (static_cast<int>(input.size()) != input_size())
    throw Error(message("mlp: expected an input of size ", input_size(), ", got ", input.size()));
  if (static_cast<int>(output.size()) != output_size())
    throw Error(message("mlp: expected an output of size ", output_size(), ", got ", output.size()));
  if (static_cast<int>(tape.values.size()) != tape_size_) tape.values.assign(static_cast<std::size_t>(tape_size_), 0.0);

  double* values = tape.values.data();
  const int input_count = input_size();
  std::copy(input.begin(), input.end(), values + layers_.front().tape_input);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const bool last = l + 1 == layers_.size();
    double* x = values + layer.tape_input;
    if (layer.reads_external_input)  // the skip part sits after the previous activations
      std::copy(input.begin(), input.end(), x + (layer.inputs - input_count));
    double* z = values + layer.tape_preactivation;
    const double* W = weights.data() + layer.weight_offset;
    const double* b = weights.data() + layer.bias_offset;
    for (int i = 0; i < layer.outputs; ++i) {
      const double* row = W + static_cast<std::ptrdiff_t>(i) * layer.inputs;
      double sum = b[i];
      for (int j = 0; j < layer.inputs; ++j) sum += row[j] * x[j];
      z[i] = sum;
    }
    if (last) {
      // The recurrent part a is returned before its tanh (the caller forms h = tanh(a)).
      for (int i = 0; i < layer.outputs; ++i)
        output[static_cast<std::size_t>(i)] = i < spec_.outputs ? activate(layer.activation, z[i]) : z[i];
    } else {
      double* next = values + layers_[l + 1].tape_input;
      for (int i = 0; i < layer.outputs; ++i) next[i] = activate(layer.activation, z[i]);
    }
  }
}

void Mlp::backward(std::span<const double> weights, MlpTape& tape, std::span<const double> output_gradient,
                   std::span<double> weight_gradient, std::span<double> input_gradient) const {
  if (static_cast<int>(tape.values.size()) != tape_size_)
    throw Error("mlp: backward called before forward on this tape");
  if (static_cast<int>(output_gradient.size()) != output_size())
    throw Error(message("mlp: expected an output gradient of size ", output_size(), ", got ", output_gradient.size()));
  if (static_cast<int>(weight_gradient.size()) != parameter_count_)
    throw Error(message("mlp: expected a weight gradient of size ", parameter_count_, ", got ", weight_gradient.size()));
  if (!input_gradient.empty() && static_cast<int>(input_gradient.size()) != input_size())
    throw Error(message("mlp: expected an input gradient of size ", input_size(), ", got ", input_gradient.size()));

  const int input_count = input_size();
  // scratch: [dL/dz of the current layer (widest), dL/dx of the current layer (widest),
  //           dL/d input accumulated from skip connections (input_count)]
  const auto needed = static_cast<std::size_t>(2 * widest_ + input_count);
  if (tape.scratch.size() != needed) tape.scratch.assign(needed, 0.0);
  double* dL_dz = tape.scratch.data();
  double* dL_dx = dL_dz + widest_;
  double* dL_dinput = dL_dx + widest_;
  std::fill(dL_dinput, dL_dinput + input_count, 0.0);

  const double* values = tape.values.data();
  // dL/d(activation) of the top layer is the output gradient.
  std::copy(output_gradient.begin(), output_gradient.end(), dL_dx);
  for (std::size_t l = layers_.size(); l-- > 0;) {
    const Layer& layer = layers_[l];
    const bool last = l + 1 == layers_.size();
    const double* z = values + layer.tape_preactivation;
    const double* x = values + layer.tape_input;
    for (int i = 0; i < layer.outputs; ++i) {
      const double slope = last && i >= spec_.outputs ? 1.0 : activation_slope(layer.activation, z[i]);
      dL_dz[i] = dL_dx[i] * slope;
    }
    const double* W = weights.data() + layer.weight_offset;
    double* dL_dW = weight_gradient.data() + layer.weight_offset;
    double* dL_db = weight_gradient.data() + layer.bias_offset;
    std::fill(dL_dx, dL_dx + layer.inputs, 0.0);
    for (int i = 0; i < layer.outputs; ++i) {
      const double g = dL_dz[i];
      if (g == 0.0) continue;  // inactive ReLU units: nothing to add
      dL_db[i] += g;
      double* grad_row = dL_dW + static_cast<std::ptrdiff_t>(i) * layer.inputs;
      const double* row = W + static_cast<std::ptrdiff_t>(i) * layer.inputs;
      for (int j = 0; j < layer.inputs; ++j) {
        grad_row[j] += g * x[j];
        dL_dx[j] += g * row[j];
      }
    }
    if (layer.reads_external_input) {
      const double* skip = dL_dx + (layer.inputs - input_count);
      for (int j = 0; j < input_count; ++j) dL_dinput[j] += skip[j];
    }
    // dL_dx's first part is now dL/d(activation) of layer l − 1 (or of the input for l = 0).
  }
  if (!input_gradient.empty())
    for (int j = 0; j < input_count; ++j) input_gradient[static_cast<std::size_t>(j)] = dL_dx[j] + dL_dinput[j];
}

}  // namespace diffphys
