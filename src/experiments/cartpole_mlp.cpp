// experiments/cartpole_mlp.cpp — the MLP dynamics model of the cart–pole (cartpole_mlp.hpp):
// normalisation, prediction and exact Jacobians through Mlp::backward, training by Adam with a
// held-out choice of the training length, and iLQR MPC on it.
#include "experiments/cartpole_mlp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include "diffphys/error.hpp"
#include "diffphys/optimizer.hpp"

namespace diffphys::experiments::cartpole {
namespace {

MlpSpec network_spec(const std::vector<int>& hidden) {
  MlpSpec spec;
  spec.inputs = MlpCartPole::kInputs;
  spec.hidden = hidden;
  spec.outputs = MlpCartPole::kOutputs;
  spec.hidden_activation = Activation::Tanh;  // smooth: iLQR linearises it
  spec.output_activation = Activation::Identity;
  return spec;
}

// Mean and spread (population standard deviation; 1 where the data do not vary) of `value`
// over the transitions.
template <typename Value>
std::pair<double, double> mean_and_spread(const std::vector<Transition>& data, Value&& value) {
  double mean = 0.0, squares = 0.0;
  for (const Transition& d : data) mean += value(d);
  mean /= static_cast<double>(data.size());
  for (const Transition& d : data) squares += std::pow(value(d) - mean, 2);
  const double spread = std::sqrt(squares / static_cast<double>(data.size()));
  return {mean, spread > 0.0 ? spread : 1.0};
}

// An index in [0, n) from the raw 64-bit stream, so that the shuffles are the same with every
// standard library (std::shuffle's use of the generator is not specified). The modulo's bias,
// below n / 2⁶⁴, does not matter for a shuffle of training data.
std::size_t random_index(std::mt19937_64& generator, std::size_t n) {
  return static_cast<std::size_t>(generator() % n);
}

// settings.max_updates Adam updates of the model on minibatches of `data` (shuffled epochs),
// the rate cosine-decayed to 1/100 of its start; after every check_every updates,
// `check(updates_done)`.
template <typename Check>
void train(MlpCartPole& model, const std::vector<const Transition*>& data, const MlpFitSettings& settings,
           std::uint64_t seed, Check&& check) {
  Adam adam(OptimizerSettings(settings.learning_rate,
                              LearningRateSchedule::cosine(settings.max_updates, 0.01 * settings.learning_rate)));
  const int updates = settings.max_updates;
  std::mt19937_64 generator(seed);
  std::vector<const Transition*> order = data;
  std::vector<double> gradient(static_cast<std::size_t>(model.parameter_count()));
  const std::size_t batch = std::min(static_cast<std::size_t>(settings.batch_size), order.size());
  std::size_t next = order.size();  // start with a shuffle
  for (int update = 1; update <= updates; ++update) {
    if (next + batch > order.size()) {
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random_index(generator, i)]);
      next = 0;
    }
    model.loss(std::span<const Transition* const>(order).subspan(next, batch), gradient);
    next += batch;
    adam.step(model.weights(), gradient);
    if (update % settings.check_every == 0) check(update);
  }
}

}  // namespace

MlpCartPole::MlpCartPole(const std::vector<Transition>& data, const std::vector<int>& hidden, std::uint64_t seed)
    : network_(network_spec(hidden), seed),
      weights_(network_.weights().begin(), network_.weights().end()),
      input_(kInputs),
      output_(kOutputs),
      output_gradient_(kOutputs),
      input_gradient_(kInputs),
      unused_weight_gradient_(static_cast<std::size_t>(network_.parameter_count())) {
  if (data.empty()) throw Error("cartpole MLP model: no transitions to normalise its inputs and outputs by");
  for (int j = 0; j < 4; ++j) {
    std::tie(input_mean_[j], input_scale_[j]) = mean_and_spread(data, [j](const Transition& d) { return d.state[j]; });
    std::tie(output_mean_[j], output_scale_[j]) =
        mean_and_spread(data, [j](const Transition& d) { return d.next[j] - d.state[j]; });
  }
  std::tie(input_mean_[4], input_scale_[4]) = mean_and_spread(data, [](const Transition& d) { return d.force; });
}

void MlpCartPole::normalise(const StateVector& state, double force) {
  for (int j = 0; j < kInputs; ++j) {
    const double value = j < 4 ? state[j] : force;
    if (!std::isfinite(value))
      throw Error(message("cartpole MLP model: non-finite input ", j, " (x, x_dot, theta, theta_dot, F): ", value));
    input_[static_cast<std::size_t>(j)] = (value - input_mean_[j]) / input_scale_[j];
  }
}

StateVector MlpCartPole::predict(const StateVector& state, double force) {
  normalise(state, force);
  network_.forward(weights_, input_, tape_, output_);
  StateVector next;
  for (int j = 0; j < kOutputs; ++j) next[j] = state[j] + output_mean_[j] + output_scale_[j] * output_[j];
  return next;
}

void MlpCartPole::linearize(const StateVector& state, double force, StateVector& next, std::span<double> A,
                            std::span<double> B) {
  next = predict(state, force);
  // Row i of ∂y/∂u (normalised output i, normalised inputs) is the input gradient of the
  // backward pass seeded with e_i; s' = s + μ_out + σ_out y(u), u = (in − μ_in)/σ_in.
  for (int i = 0; i < kOutputs; ++i) {
    std::fill(output_gradient_.begin(), output_gradient_.end(), 0.0);
    output_gradient_[static_cast<std::size_t>(i)] = 1.0;
    network_.backward(weights_, tape_, output_gradient_, unused_weight_gradient_, input_gradient_);
    for (int j = 0; j < 4; ++j)
      A[static_cast<std::size_t>(4 * i + j)] =
          (i == j ? 1.0 : 0.0) + output_scale_[i] * input_gradient_[static_cast<std::size_t>(j)] / input_scale_[j];
    B[static_cast<std::size_t>(i)] = output_scale_[i] * input_gradient_[4] / input_scale_[4];
  }
}

double MlpCartPole::loss(std::span<const Transition* const> batch, std::span<double> gradient) {
  std::fill(gradient.begin(), gradient.end(), 0.0);
  const double count = static_cast<double>(batch.size());
  double total = 0.0;
  for (const Transition* d : batch) {
    normalise(d->state, d->force);
    network_.forward(weights_, input_, tape_, output_);
    for (int j = 0; j < kOutputs; ++j) {
      const double target = (d->next[j] - d->state[j] - output_mean_[j]) / output_scale_[j];
      const double error = output_[static_cast<std::size_t>(j)] - target;
      total += error * error / (kOutputs * count);
      output_gradient_[static_cast<std::size_t>(j)] = 2.0 * error / (kOutputs * count);
    }
    if (!gradient.empty()) network_.backward(weights_, tape_, output_gradient_, gradient, {});
  }
  return total;
}

MlpFit fit_mlp(const std::vector<Transition>& train_data, const MlpFitSettings& settings, std::uint64_t seed) {
  const auto stride = static_cast<std::size_t>(settings.validation_stride);
  if (settings.check_every < 1 || settings.max_updates < settings.check_every || settings.batch_size < 1)
    throw Error(message("cartpole MLP model: check_every (", settings.check_every, ") must be in [1, max_updates = ",
                        settings.max_updates, "] and batch_size (", settings.batch_size, ") positive"));
  if (settings.validation_stride < 2 || train_data.size() < stride)
    throw Error(message("cartpole MLP model: needs at least validation_stride = ", settings.validation_stride,
                        " (>= 2) training transitions, got ", train_data.size()));
  const auto begin = std::chrono::steady_clock::now();
  MlpFit fit;
  fit.model = std::make_unique<MlpCartPole>(train_data, settings.hidden, seed);
  std::vector<const Transition*> fitting, validation;
  for (std::size_t i = 0; i < train_data.size(); ++i)
    (i % stride == stride - 1 ? validation : fitting).push_back(&train_data[i]);
  // Every check_every updates, the loss on the held-out part; the best weights are kept.
  std::vector<double> best_weights(fit.model->weights().begin(), fit.model->weights().end());
  fit.validation_loss = fit.model->loss(validation, {});
  train(*fit.model, fitting, settings, seed + 1, [&](int updates) {
    const double validation_loss = fit.model->loss(validation, {});
    fit.validation_curve.push_back({static_cast<double>(updates), validation_loss});
    if (validation_loss < fit.validation_loss) {
      fit.validation_loss = validation_loss;
      fit.chosen_updates = updates;
      std::copy(fit.model->weights().begin(), fit.model->weights().end(), best_weights.begin());
    }
  });
  std::copy(best_weights.begin(), best_weights.end(), fit.model->weights().begin());
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return fit;
}

void MlpDynamics::step(std::span<const double> state, std::span<const double> controls, std::span<double> next) {
  const StateVector s_next = model_.predict({state[0], state[1], state[2], state[3]}, controls[0]);
  std::copy(s_next.begin(), s_next.end(), next.begin());
}

void MlpDynamics::linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                            std::span<double> A, std::span<double> B) {
  StateVector s_next;
  model_.linearize({state[0], state[1], state[2], state[3]}, controls[0], s_next, A, B);
  std::copy(s_next.begin(), s_next.end(), next.begin());
}

struct MlpMpc::Impl {
  explicit Impl(MlpCartPole& model)
      : dynamics(model),
        cost(dynamics, weights(), {kForceWeight}, weights(), std::vector<double>(4, 0.0)),
        mpc(dynamics, cost, kMpcHorizon, mpc_settings()) {}
  // The physics model's cost in this state's coordinates: only θ (index 2) is weighted.
  static std::vector<double> weights() {
    std::vector<double> Q(16, 0.0);
    Q[2 * 4 + 2] = kAngleWeight;
    return Q;
  }
  MlpDynamics dynamics;
  QuadraticCost cost;
  Mpc mpc;
  std::array<double, 4> state{};
};

MlpMpc::MlpMpc(MlpCartPole& model) : impl_(std::make_unique<Impl>(model)) {}
MlpMpc::~MlpMpc() = default;

double MlpMpc::force(const StateVector& state) {
  impl_->state = state;
  return impl_->mpc.control(impl_->state)[0];
}

int MlpMpc::last_iterations() const {
  return impl_->mpc.last_plan().iterations;
}

}  // namespace diffphys::experiments::cartpole
