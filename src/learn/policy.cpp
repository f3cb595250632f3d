// learn/policy.cpp — MlpPolicy: the network as a closed-loop rollout Controller, with
// back-propagation through time over its recurrent state (Degrave et al. 2019, eq. 3 and
// Fig. 2: the controller and the physics unrolled together as one recurrent network).
#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "diffphys/neural.hpp"

namespace diffphys {

MlpPolicy::MlpPolicy(const Mlp& network, std::span<const double> weights, FeatureMap features)
    : network_(network), weights_(weights), features_(std::move(features)) {
  const MlpSpec& spec = network_.spec();
  if (static_cast<int>(weights_.size()) != network_.parameter_count())
    throw Error(message("mlp policy: expected ", network_.parameter_count(), " weights, got ", weights_.size()));
  if (features_.size != spec.inputs)
    throw Error(message("mlp policy: the feature map has ", features_.size, " features but the network reads ",
                        spec.inputs));
  if (features_.size > 0 && !features_.compute)
    throw Error("mlp policy: the feature map has no compute function");
  scale_.assign(static_cast<std::size_t>(spec.outputs), 1.0);
  offset_.assign(static_cast<std::size_t>(spec.outputs), 0.0);
  output_.assign(static_cast<std::size_t>(network_.output_size()), 0.0);
  output_gradient_.assign(output_.size(), 0.0);
  input_gradient_.assign(static_cast<std::size_t>(network_.input_size()), 0.0);
  recurrent_gradient_.assign(static_cast<std::size_t>(spec.recurrent), 0.0);
  weight_gradient_.assign(weights_.size(), 0.0);
}

void MlpPolicy::set_output_map(std::vector<double> scale, std::vector<double> offset) {
  const auto outputs = static_cast<std::size_t>(network_.spec().outputs);
  if (scale.size() != outputs || offset.size() != outputs)
    throw Error(message("mlp policy: the output map needs ", outputs, " scales and offsets, got ", scale.size(),
                        " and ", offset.size()));
  for (std::size_t i = 0; i < outputs; ++i)
    if (!std::isfinite(scale[i]) || !std::isfinite(offset[i]))
      throw Error(message("mlp policy: output ", i, " has a non-finite scale or offset (", scale[i], ", ",
                          offset[i], ")"));
  scale_ = std::move(scale);
  offset_ = std::move(offset);
}

void MlpPolicy::act(int step, const State& state, std::span<double> controls) {
  const MlpSpec& spec = network_.spec();
  const int input_size = network_.input_size();
  if (static_cast<int>(controls.size()) != spec.outputs)
    throw Error(message("mlp policy: the model has ", controls.size(), " actuators but the network has ",
                        spec.outputs, " outputs"));
  if (step == 0) steps_recorded_ = 0;  // a new rollout
  if (step != steps_recorded_)
    throw Error(message("mlp policy: act() called for step ", step, " after step ", steps_recorded_ - 1));
  const auto row_offset = static_cast<std::size_t>(step) * static_cast<std::size_t>(input_size);
  if (inputs_.size() < row_offset + static_cast<std::size_t>(input_size))
    inputs_.resize(row_offset + static_cast<std::size_t>(input_size));
  const std::span<double> row(inputs_.data() + row_offset, static_cast<std::size_t>(input_size));
  if (features_.size > 0) features_.compute(step, state, row.first(static_cast<std::size_t>(features_.size)));
  // Recurrent input h_{t−1} = tanh(a_{t−1}); h_{−1} = 0.
  for (int k = 0; k < spec.recurrent; ++k) {
    const auto slot = static_cast<std::size_t>(spec.inputs + k);
    row[slot] = step == 0 ? 0.0 : std::tanh(output_[static_cast<std::size_t>(spec.outputs + k)]);
  }
  for (int i = 0; i < spec.inputs; ++i)
    if (!std::isfinite(row[static_cast<std::size_t>(i)]))
      throw Error(message("mlp policy: feature ", i, " is not finite (", row[static_cast<std::size_t>(i)],
                          ") at step ", step));
  network_.forward(weights_, row, tape_, output_);
  for (int i = 0; i < spec.outputs; ++i) {
    const auto u = static_cast<std::size_t>(i);
    controls[u] = scale_[u] * output_[u] + offset_[u];
  }
  ++steps_recorded_;
  next_backward_step_ = steps_recorded_ - 1;
}

void MlpPolicy::act_backward(int step, const State& state, std::span<const double> control_gradient,
                             std::span<double> state_gradient) {
  const MlpSpec& spec = network_.spec();
  const int input_size = network_.input_size();
  if (step >= 0 && step == steps_recorded_ - 1) {  // the start of a (possibly repeated) backward pass
    std::fill(weight_gradient_.begin(), weight_gradient_.end(), 0.0);
    std::fill(recurrent_gradient_.begin(), recurrent_gradient_.end(), 0.0);
    next_backward_step_ = step;
  }
  if (step != next_backward_step_ || step < 0)
    throw Error(message("mlp policy: act_backward() called for step ", step, ", expected step ",
                        next_backward_step_, " (steps must come in descending order after a rollout)"));
  const std::span<const double> row(inputs_.data() + static_cast<std::size_t>(step) * static_cast<std::size_t>(input_size),
                                    static_cast<std::size_t>(input_size));
  network_.forward(weights_, row, tape_, output_);  // this step's activations, recomputed
  for (int i = 0; i < spec.outputs; ++i) {
    const auto u = static_cast<std::size_t>(i);
    output_gradient_[u] = control_gradient[u] * scale_[u];
  }
  // h_t = tanh(a_t): dL/da_t = dL/dh_t (1 − h_t²), with dL/dh_t from step t + 1.
  for (int k = 0; k < spec.recurrent; ++k) {
    const auto slot = static_cast<std::size_t>(spec.outputs + k);
    const double h = std::tanh(output_[slot]);
    output_gradient_[slot] = recurrent_gradient_[static_cast<std::size_t>(k)] * (1.0 - h * h);
  }
  network_.backward(weights_, tape_, output_gradient_, weight_gradient_, input_gradient_);
  if (features_.size > 0 && features_.backward)
    features_.backward(step, state, std::span<const double>(input_gradient_).first(static_cast<std::size_t>(features_.size)),
                       state_gradient);
  for (int k = 0; k < spec.recurrent; ++k)
    recurrent_gradient_[static_cast<std::size_t>(k)] = input_gradient_[static_cast<std::size_t>(spec.inputs + k)];
  --next_backward_step_;
}

}  // namespace diffphys
