// learn/shac.cpp — the ShacTrainer of diffphys/shac.hpp (Xu et al. 2022, Algorithm 1): N
// environments, each a rigid Rollout run for a window of h steps under a stochastic tanh-
// Gaussian policy (a Controller, so the engine's backward pass carries the actor's gradient
// through the physics), a critic trained on TD(λ) returns, a target critic for bootstrapping.
// Environments run on a thread pool; each writes its own slots, reduced in environment order,
// and the noise is a pure function of (seed, update, environment, step, actuator), so the
// bits do not depend on the thread count.
#include "diffphys/shac.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <numeric>
#include <random>

#include "batch/thread_pool.hpp"
#include "diffphys/error.hpp"
#include "diffphys/optimizer.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

// splitmix64 (Steele, Lea & Flood 2014): a counter-based stream, so that noise needs no
// generator state shared between threads.
std::uint64_t mix_bits(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A standard normal number from a counter (Box–Muller on two uniform draws in (0, 1]).
double normal_from_counter(std::uint64_t key) {
  const double u1 = (static_cast<double>(mix_bits(key) >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(mix_bits(key ^ 0x5bd1e9955bd1e995ULL) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Running mean and variance of the observations (Chan et al.'s parallel update), frozen into
// (mean, 1/std) for each window.
struct ObservationStatistics {
  double count = 0.0;
  std::vector<double> mean, m2;
  std::vector<double> frozen_mean, frozen_inverse_std;

  explicit ObservationStatistics(std::size_t size)
      : mean(size, 0.0), m2(size, 0.0), frozen_mean(size, 0.0), frozen_inverse_std(size, 1.0) {}

  void add(std::span<const double> samples, std::size_t rows) {
    const std::size_t size = mean.size();
    if (rows == 0) return;
    std::vector<double> batch_mean(size, 0.0), batch_m2(size, 0.0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t k = 0; k < size; ++k) batch_mean[k] += samples[r * size + k];
    for (double& m : batch_mean) m /= static_cast<double>(rows);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t k = 0; k < size; ++k) {
        const double d = samples[r * size + k] - batch_mean[k];
        batch_m2[k] += d * d;
      }
    const double n = static_cast<double>(rows), total = count + n;
    for (std::size_t k = 0; k < size; ++k) {
      const double delta = batch_mean[k] - mean[k];
      mean[k] += delta * n / total;
      m2[k] += batch_m2[k] + delta * delta * count * n / total;
    }
    count = total;
  }

  // ŝ_k = clamp((s_k − mean_k)/std_k, ±kClip) (rl_games' RunningMeanStd, which SHAC uses):
  // a feature nearly constant so far (a robot at rest in its first window) would otherwise
  // reach the network at 10⁴ times its size the first time it moves.
  static constexpr double kClip = 5.0;
  double normalised(std::size_t k, double raw) const {
    return std::clamp((raw - frozen_mean[k]) * frozen_inverse_std[k], -kClip, kClip);
  }
  // dŝ_k/ds_k at a normalised value: 1/std_k inside the clamp, 0 where it clips.
  double slope(std::size_t k, double normalised_value) const {
    return std::abs(normalised_value) < kClip ? frozen_inverse_std[k] : 0.0;
  }

  void freeze() {
    for (std::size_t k = 0; k < mean.size(); ++k) {
      frozen_mean[k] = mean[k];
      const double variance = count > 1.0 ? m2[k] / count : 1.0;
      frozen_inverse_std[k] = 1.0 / std::sqrt(variance + 1e-8);
    }
  }
};

}  // namespace

// The actor as a rollout Controller: u = scale ⊙ tanh(μ(ŝ) + σ ⊙ ε) + offset, ŝ the frozen
// normalisation of s(x_t). With gradients requested, act_backward accumulates dL/dW and
// dL/dlog σ (and the action penalty's share of the loss) and carries ŝ's adjoint into x̄_t.
class ShacActor final : public Controller {
 public:
  struct Shared {
    const Mlp* network = nullptr;
    std::span<const double> weights, log_std;
    const ObservationStatistics* statistics = nullptr;
    const FeatureMap* observation = nullptr;
    std::span<const double> scale, offset;
    double action_penalty = 0.0;
    const Model* relative_to = nullptr;  // relative servo targets: the model whose coordinates they add to
  };

  // `inputs` = the observation's size plus the goal's.
  ShacActor(Shared shared, int inputs, int window)
      : shared_(shared),
        observation_(static_cast<std::size_t>(inputs)),
        inputs_(static_cast<std::size_t>(window) * observation_.size()),
        noisy_(static_cast<std::size_t>(window) * shared.scale.size()),
        output_(shared.scale.size()),
        output_gradient_(shared.scale.size()),
        input_gradient_(observation_.size()) {}

  // A window starting at episode step `first_step` towards `goal`, with noise ε (window ×
  // actuators; empty: none) and the loss weight w_t of each step's action penalty (window;
  // empty: no gradient).
  void start(int first_step, std::span<const double> goal, std::span<const double> noise,
             std::span<const double> penalty_weights, std::span<double> weight_gradient,
             std::span<double> log_std_gradient) {
    first_step_ = first_step;
    const auto state_features = static_cast<std::size_t>(shared_.observation->size);
    std::copy(goal.begin(), goal.end(), observation_.begin() + static_cast<std::ptrdiff_t>(state_features));
    noise_ = noise;
    penalty_weights_ = penalty_weights;
    weight_gradient_ = weight_gradient;
    log_std_gradient_ = log_std_gradient;
    keep_steps_ = !weight_gradient.empty();
  }
  // action_penalty · |tanh(z_t)|² of step t of the window (its share of r_t).
  double penalty_at(int t) const { return penalties_[keep_steps_ ? static_cast<std::size_t>(t) : 0]; }

  void act(int step, const State& state, std::span<double> controls) override {
    const std::size_t actuators = shared_.scale.size(), size = observation_.size();
    if (controls.size() != actuators)
      throw Error(message("shac: the model has ", controls.size(), " actuators, the actor ", actuators, " outputs"));
    // Without a backward pass to come (an evaluation policy) every step takes slot 0.
    const auto t = keep_steps_ ? static_cast<std::size_t>(step) : 0;
    if (inputs_.size() < (t + 1) * size) {
      inputs_.resize((t + 1) * size);
      noisy_.resize((t + 1) * actuators);
    }
    if (penalties_.size() <= t) penalties_.resize(t + 1);
    shared_.observation->compute(first_step_ + step, state,
                                 std::span<double>(observation_).first(static_cast<std::size_t>(shared_.observation->size)));
    const std::span<double> input(inputs_.data() + t * size, size);
    for (std::size_t k = 0; k < size; ++k) {
      if (!std::isfinite(observation_[k]))
        throw Error(message("shac: observation ", k, " is not finite (", observation_[k], ") at episode step ",
                            first_step_ + step));
      input[k] = shared_.statistics->normalised(k, observation_[k]);
    }
    shared_.network->forward(shared_.weights, input, tape_, output_);
    double squared = 0.0;
    for (std::size_t a = 0; a < actuators; ++a) {
      double z = output_[a];
      if (!noise_.empty()) z += std::exp(shared_.log_std[a]) * noise_[static_cast<std::size_t>(step) * actuators + a];
      const double action = std::tanh(z);
      noisy_[t * actuators + a] = action;
      squared += action * action;
      controls[a] = shared_.scale[a] * action + shared_.offset[a];
      if (shared_.relative_to != nullptr) {
        const Actuator& actuator = shared_.relative_to->actuators[a];
        controls[a] += joint_position(*shared_.relative_to, state, actuator.joint, actuator.dof);
      }
    }
    penalties_[t] = shared_.action_penalty * squared;
  }

  void act_backward(int step, const State& state, std::span<const double> control_gradient,
                    std::span<double> state_gradient) override {
    if (weight_gradient_.empty()) return;
    const std::size_t actuators = shared_.scale.size(), size = observation_.size();
    const auto t = static_cast<std::size_t>(step);
    const std::span<const double> input(inputs_.data() + t * size, size);
    shared_.network->forward(shared_.weights, input, tape_, output_);  // this step's activations again
    const double penalty_weight = penalty_weights_.empty() ? 0.0 : penalty_weights_[t];
    for (std::size_t a = 0; a < actuators; ++a) {
      const double action = noisy_[t * actuators + a];
      // L holds +w_t · penalty · tanh(z)² (a negative reward): its derivative joins ū's.
      const double action_adjoint =
          control_gradient[a] * shared_.scale[a] + 2.0 * penalty_weight * shared_.action_penalty * action;
      const double z_adjoint = action_adjoint * (1.0 - action * action);
      output_gradient_[a] = z_adjoint;
      if (!noise_.empty())
        log_std_gradient_[a] += z_adjoint * std::exp(shared_.log_std[a]) * noise_[t * actuators + a];
      if (shared_.relative_to != nullptr) {  // u = q(x) + …: ū reaches x through the coordinate
        const Actuator& actuator = shared_.relative_to->actuators[a];
        joint_position_vjp(*shared_.relative_to, state, actuator.joint, actuator.dof, control_gradient[a], state_gradient);
      }
    }
    shared_.network->backward(shared_.weights, tape_, output_gradient_, weight_gradient_, input_gradient_);
    for (std::size_t k = 0; k < size; ++k) input_gradient_[k] *= shared_.statistics->slope(k, input[k]);
    if (shared_.observation->backward)
      shared_.observation->backward(
          first_step_ + step, state,
          std::span<const double>(input_gradient_).first(static_cast<std::size_t>(shared_.observation->size)),
          state_gradient);
  }

 private:
  Shared shared_;
  std::vector<double> observation_, inputs_, noisy_, output_, output_gradient_, input_gradient_, penalties_;
  MlpTape tape_;
  int first_step_ = 0;
  std::span<const double> noise_, penalty_weights_;
  std::span<double> weight_gradient_, log_std_gradient_;
  bool keep_steps_ = false;
};

namespace {

// The deterministic policy handed out by ShacTrainer::policy(): its own copies of everything.
class ShacPolicy final : public Controller {
 public:
  ShacPolicy(const Mlp& network, std::vector<double> weights, std::vector<double> log_std,
             ObservationStatistics statistics, FeatureMap observation, std::vector<double> goal,
             std::vector<double> scale, std::vector<double> offset, const Model* relative_to)
      : network_(network),
        weights_(std::move(weights)),
        log_std_(std::move(log_std)),
        statistics_(std::move(statistics)),
        observation_(std::move(observation)),
        goal_(std::move(goal)),
        scale_(std::move(scale)),
        offset_(std::move(offset)),
        relative_to_(relative_to == nullptr ? nullptr : std::make_unique<Model>(*relative_to)),
        actor_(ShacActor::Shared{&network_, weights_, log_std_, &statistics_, &observation_, scale_, offset_, 0.0,
                                 relative_to_.get()},
               network_.spec().inputs, 1) {
    actor_.start(0, goal_, {}, {}, {}, {});
  }
  void act(int step, const State& state, std::span<double> controls) override { actor_.act(step, state, controls); }
  void act_backward(int, const State&, std::span<const double>, std::span<double>) override {
    throw Error("shac: the evaluation policy has no backward pass (train through ShacTrainer::update)");
  }

 private:
  Mlp network_;
  std::vector<double> weights_, log_std_;
  ObservationStatistics statistics_;
  FeatureMap observation_;
  std::vector<double> goal_, scale_, offset_;
  std::unique_ptr<Model> relative_to_;
  ShacActor actor_;
};

}  // namespace

namespace {

// One environment: its state between windows, its rollout and actor, and what its last
// window produced for the reduction and the critic.
struct ShacEnvironment {
  State state;  // x at the start of the next window
  int episode = 0, episode_step = 0;
  double episode_return = 0.0;
  std::vector<double> goal;          // (goal_size) of the current episode
  std::unique_ptr<Rollout> rollout;
  std::unique_ptr<ShacActor> actor;
  std::vector<double> noise;         // (h × actuators) ε of the window
  std::vector<double> gradient;      // dL_env/d(actor weights, log σ)
  std::vector<double> observations;  // ((h + 1) × size) raw s(x_t), t = 0..h
  std::vector<double> rewards;       // (h) r_t, the action penalty included
  std::vector<double> scratch;       // (12 nbody) a reward's gradient
  std::vector<double> value_input, value_output, value_gradient, value_input_gradient;
  std::vector<double> value_weight_sink;  // the target critic's weight gradient, not used
  MlpTape value_tape;
  double loss = 0.0;
  bool finite = true;
};

double squared_norm(std::span<const double> values) {
  double sum = 0.0;
  for (double v : values) sum += v * v;
  return sum;
}

}  // namespace

struct ShacTrainer::Impl {
  ShacTask task;
  ShacSettings settings;
  int observation_size = 0, actuators = 0;
  Mlp actor, critic;
  std::vector<double> actor_parameters;  // actor weights, then log σ
  std::vector<double> critic_weights, target_weights;
  Adam actor_optimizer, critic_optimizer;
  ObservationStatistics statistics;
  std::vector<double> penalty_weights;  // w_t = γ^t / h: the weight of r_t in an environment's loss
  std::vector<ShacEnvironment> environments;
  batch::ThreadPool pool;
  int updates = 0;
  long long simulated_steps = 0;
  // The critic's passes: inputs (N h × size, normalised), targets (N h), order, scratch.
  std::vector<double> critic_inputs, critic_targets, critic_gradient, critic_output, critic_output_gradient;
  std::vector<std::size_t> order;
  MlpTape critic_tape;

  Impl(ShacTask task_in, ShacSettings settings_in)
      : task(std::move(task_in)),
        settings(std::move(settings_in)),
        observation_size(validated_observation_size(task, settings) + task.goal_size),
        actuators(task.model.actuator_count()),
        actor(MlpSpec{observation_size, settings.actor_hidden, actuators, settings.hidden_activation}, settings.seed),
        critic(critic_spec(observation_size, settings), mix_bits(settings.seed ^ 0xc0ffee)),
        actor_optimizer(OptimizerSettings(settings.actor_rate, {}, {}), 0.7, 0.95),
        critic_optimizer(OptimizerSettings(settings.critic_rate, {}, {}), 0.7, 0.95),
        statistics(static_cast<std::size_t>(observation_size)),
        pool(settings.threads) {
    if (task.action_scale.empty()) task.action_scale.assign(static_cast<std::size_t>(actuators), 1.0);
    if (task.action_offset.empty()) task.action_offset.assign(static_cast<std::size_t>(actuators), 0.0);
    const auto count = static_cast<std::size_t>(actuators);
    if (task.action_scale.size() != count || task.action_offset.size() != count)
      throw Error(message("shac: the model has ", actuators, " actuators; action_scale has ", task.action_scale.size(),
                          " and action_offset ", task.action_offset.size(), " entries"));
    actor_parameters.assign(actor.weights().begin(), actor.weights().end());
    actor_parameters.resize(actor_parameters.size() + count, settings.initial_log_std);
    critic_weights.assign(critic.weights().begin(), critic.weights().end());
    target_weights = critic_weights;
    // SHAC's running statistics start as mean 0, variance 1 with a tiny weight.
    statistics.count = 1e-4;
    std::fill(statistics.m2.begin(), statistics.m2.end(), 1e-4);
    statistics.freeze();
    const auto h = static_cast<std::size_t>(settings.window);
    penalty_weights.resize(h);
    for (std::size_t t = 0; t < h; ++t) penalty_weights[t] = std::pow(settings.discount, static_cast<double>(t)) / static_cast<double>(h);
    environments.resize(static_cast<std::size_t>(settings.environments));
    for (std::size_t i = 0; i < environments.size(); ++i) {
      ShacEnvironment& env = environments[i];
      env.goal.resize(static_cast<std::size_t>(task.goal_size));
      start_episode(i);
      env.rollout = std::make_unique<Rollout>(task.model, task.params, task.rollout_options);
      env.actor = std::make_unique<ShacActor>(shared_actor(), observation_size, settings.window);
      env.noise.resize(h * count);
      env.gradient.resize(actor_parameters.size());
      env.observations.resize((h + 1) * static_cast<std::size_t>(observation_size));
      env.rewards.resize(h);
      env.scratch.resize(static_cast<std::size_t>(kStateTangentPerBody * task.model.body_count()));
      env.value_input.resize(static_cast<std::size_t>(observation_size));
      env.value_input_gradient.resize(static_cast<std::size_t>(observation_size));
      env.value_output.resize(1);
      env.value_gradient.resize(1);
      env.value_weight_sink.resize(static_cast<std::size_t>(critic.parameter_count()));
    }
    critic_gradient.resize(critic_weights.size());
    critic_output.resize(1);
    critic_output_gradient.resize(1);
  }

  // The actor's output layer starts at zero (the zero policy, as Degrave et al.); the
  // critic's starts like its hidden layers, or its first steps would move only its bias.
  static MlpSpec critic_spec(int inputs, const ShacSettings& s) {
    MlpSpec spec{inputs, s.critic_hidden, 1, s.hidden_activation};
    spec.output_init_scale = 1.0;
    return spec;
  }

  static int validated_observation_size(const ShacTask& task, const ShacSettings& s) {
    if (task.observation.size <= 0 || !task.observation.compute)
      throw Error(message("shac: the observation needs a positive size and a compute function (size ", task.observation.size, ")"));
    if (!task.reward) throw Error("shac: the task has no reward function");
    if (task.goal_size < 0 || (task.goal_size > 0 && !task.goal))
      throw Error(message("shac: goal_size ", task.goal_size, " needs a goal function (and may not be negative)"));
    if (!task.initial_state) throw Error("shac: the task has no initial_state function");
    if (task.model.actuator_count() <= 0) throw Error("shac: the model has no actuators to control");
    if (s.environments <= 0) throw Error(message("shac: environments must be positive, got ", s.environments));
    if (s.window <= 0) throw Error(message("shac: window must be positive, got ", s.window));
    if (task.episode_steps <= 0 || task.episode_steps % s.window != 0)
      throw Error(message("shac: episode_steps (", task.episode_steps, ") must be a positive multiple of the window (",
                          s.window, ")"));
    if (!(s.discount >= 0.0 && s.discount <= 1.0)) throw Error(message("shac: discount must lie in [0, 1], got ", s.discount));
    if (!(s.td_lambda >= 0.0 && s.td_lambda <= 1.0)) throw Error(message("shac: td_lambda must lie in [0, 1], got ", s.td_lambda));
    if (!(s.target_critic_alpha >= 0.0 && s.target_critic_alpha <= 1.0))
      throw Error(message("shac: target_critic_alpha must lie in [0, 1], got ", s.target_critic_alpha));
    if (s.critic_iterations < 0 || s.critic_minibatches <= 0)
      throw Error(message("shac: critic_iterations must be >= 0 and critic_minibatches positive, got ",
                          s.critic_iterations, " and ", s.critic_minibatches));
    if (s.threads <= 0) throw Error(message("shac: threads must be positive, got ", s.threads));
    if (s.decay_updates < 0) throw Error(message("shac: decay_updates must be non-negative, got ", s.decay_updates));
    if (!(s.actor_rate > 0.0 && s.critic_rate > 0.0))
      throw Error(message("shac: actor_rate and critic_rate must be positive, got ", s.actor_rate, " and ", s.critic_rate));
    if (!std::isfinite(s.initial_log_std)) throw Error(message("shac: initial_log_std must be finite, got ", s.initial_log_std));
    if (!(s.gradient_clip >= 0.0)) throw Error(message("shac: gradient_clip must be non-negative, got ", s.gradient_clip));
    if (!(task.action_penalty >= 0.0)) throw Error(message("shac: action_penalty must be non-negative, got ", task.action_penalty));
    if (task.relative_servo_targets)
      for (const Actuator& actuator : task.model.actuators)
        if (actuator.type != ActuatorType::Servo)
          throw Error(message("shac: relative_servo_targets needs servo actuators; '", actuator.name, "' is a motor"));
    return task.observation.size;
  }

  std::span<const double> actor_weights() const {
    return std::span<const double>(actor_parameters).first(static_cast<std::size_t>(actor.parameter_count()));
  }
  std::span<const double> log_std() const {
    return std::span<const double>(actor_parameters).last(static_cast<std::size_t>(actuators));
  }

  ShacActor::Shared shared_actor() const {
    return {&actor,           actor_weights(), log_std(),         &statistics,
            &task.observation, task.action_scale, task.action_offset, task.action_penalty,
            task.relative_servo_targets ? &task.model : nullptr};
  }

  // Environment i's next episode: its x_0 and its goal.
  void start_episode(std::size_t i) {
    ShacEnvironment& env = environments[i];
    env.state = task.initial_state(static_cast<int>(i), env.episode);
    validate_state(task.model, env.state);
    if (task.goal_size > 0) task.goal(static_cast<int>(i), env.episode, env.goal);
    for (const double g : env.goal)
      if (!std::isfinite(g))
        throw Error(message("shac: the goal of environment ", i, "'s episode ", env.episode, " is not finite (", g, ")"));
    env.episode_step = 0;
    env.episode_return = 0.0;
  }

  // The raw observation: s(x) then the goal.
  void observe(int step, const State& x, std::span<const double> goal, std::span<double> row) const {
    const auto state_features = static_cast<std::size_t>(task.observation.size);
    task.observation.compute(step, x, row.first(state_features));
    std::copy(goal.begin(), goal.end(), row.begin() + static_cast<std::ptrdiff_t>(state_features));
  }

  void normalise(std::span<const double> raw, std::span<double> normalised) const {
    for (std::size_t k = 0; k < raw.size(); ++k)
      normalised[k] = statistics.normalised(k, raw[k]);
  }

  // The noise of update `update` for environment i: a pure function of the seed and indices.
  void draw_noise(int update, std::size_t i) {
    const std::uint64_t key = mix_bits(mix_bits(mix_bits(settings.seed) + static_cast<std::uint64_t>(update)) + i);
    std::vector<double>& noise = environments[i].noise;
    for (std::size_t k = 0; k < noise.size(); ++k) noise[k] = normal_from_counter(key + k);
  }

  // Runs environment i's window from its state with the current actor and this update's
  // noise; fills its observations, rewards, loss and gradient (does not advance it).
  void run_window(std::size_t i, int update) {
    ShacEnvironment& env = environments[i];
    const int h = settings.window;
    const auto size = static_cast<std::size_t>(observation_size);
    draw_noise(update, i);
    std::fill(env.gradient.begin(), env.gradient.end(), 0.0);
    const std::span<double> gradient(env.gradient);
    env.actor->start(env.episode_step, env.goal, env.noise, penalty_weights,
                     gradient.first(static_cast<std::size_t>(actor.parameter_count())),
                     gradient.last(static_cast<std::size_t>(actuators)));
    env.rollout->run(env.state, *env.actor, h);
    double loss = 0.0;
    for (int t = 0; t <= h; ++t) {
      const State x = env.rollout->state(t);
      const std::span<double> row(env.observations.data() + static_cast<std::size_t>(t) * size, size);
      observe(env.episode_step + t, x, env.goal, row);
      if (t == 0) continue;
      const double reward = task.reward(env.episode_step + t, x, env.goal, {}) - env.actor->penalty_at(t - 1);
      env.rewards[static_cast<std::size_t>(t - 1)] = reward;
      loss -= penalty_weights[static_cast<std::size_t>(t - 1)] * reward;
    }
    const double end_weight = std::pow(settings.discount, h) / h;
    const std::span<const double> last(env.observations.data() + static_cast<std::size_t>(h) * size, size);
    normalise(last, env.value_input);
    critic.forward(target_weights, env.value_input, env.value_tape, env.value_output);
    loss -= end_weight * env.value_output[0];
    env.loss = loss;
    env.rollout->backward([&](int t, const State& x, std::span<double> state_gradient) {
      if (t == 0) return;
      std::fill(env.scratch.begin(), env.scratch.end(), 0.0);
      task.reward(env.episode_step + t, x, env.goal, env.scratch);
      const double weight = penalty_weights[static_cast<std::size_t>(t - 1)];
      for (std::size_t k = 0; k < state_gradient.size(); ++k) state_gradient[k] -= weight * env.scratch[k];
      if (t != h) return;
      // The bootstrap −γ^h/h · V'(ŝ(x_h)): through the target critic (its tape from the
      // forward evaluation above) and the normalisation.
      env.value_gradient[0] = -end_weight;
      std::fill(env.value_weight_sink.begin(), env.value_weight_sink.end(), 0.0);
      critic.backward(target_weights, env.value_tape, env.value_gradient, env.value_weight_sink, env.value_input_gradient);
      for (std::size_t k = 0; k < size; ++k) env.value_input_gradient[k] *= statistics.slope(k, env.value_input[k]);
      if (task.observation.backward)
        task.observation.backward(
            env.episode_step + h, x,
            std::span<const double>(env.value_input_gradient).first(static_cast<std::size_t>(task.observation.size)),
            state_gradient);
    });
    env.finite = std::isfinite(loss) &&
                 std::all_of(env.gradient.begin(), env.gradient.end(), [](double v) { return std::isfinite(v); });
  }

  // Every environment's window (on the pool), then their losses and gradients averaged in
  // environment order. Returns L; `gradient` receives dL/d(actor weights, log σ).
  double run_windows(int update, std::span<double> gradient, int& non_finite) {
    pool.parallel_for(settings.environments, [&](int i) { run_window(static_cast<std::size_t>(i), update); });
    std::fill(gradient.begin(), gradient.end(), 0.0);
    double loss = 0.0;
    non_finite = 0;
    for (const ShacEnvironment& env : environments) {
      if (!env.finite) {
        ++non_finite;
        continue;
      }
      loss += env.loss;
      for (std::size_t k = 0; k < gradient.size(); ++k) gradient[k] += env.gradient[k];
    }
    const double inverse = 1.0 / settings.environments;
    for (double& g : gradient) g *= inverse;
    return loss * inverse;
  }

  // TD(λ) returns of every environment's window from the target critic (Sutton & Barto
  // 2018, eq. 12.2, truncated at h): G_{h−1} = r_{h−1} + γ V'(s_h), G_t = r_t + γ((1 − λ)
  // V'(s_{t+1}) + λ G_{t+1}); and the normalised inputs s_t, t < h, they are targets for.
  void critic_data() {
    const auto h = static_cast<std::size_t>(settings.window), size = static_cast<std::size_t>(observation_size);
    critic_inputs.resize(environments.size() * h * size);
    critic_targets.resize(environments.size() * h);
    std::vector<double> next_values(h);
    for (std::size_t i = 0; i < environments.size(); ++i) {
      ShacEnvironment& env = environments[i];
      for (std::size_t t = 0; t < h; ++t) {
        normalise(std::span<const double>(env.observations.data() + (t + 1) * size, size), env.value_input);
        critic.forward(target_weights, env.value_input, critic_tape, critic_output);
        next_values[t] = critic_output[0];
        normalise(std::span<const double>(env.observations.data() + t * size, size),
                  std::span<double>(critic_inputs.data() + (i * h + t) * size, size));
      }
      double g = env.rewards[h - 1] + settings.discount * next_values[h - 1];
      critic_targets[i * h + h - 1] = g;
      for (std::size_t t = h - 1; t-- > 0;) {
        g = env.rewards[t] + settings.discount * ((1.0 - settings.td_lambda) * next_values[t] + settings.td_lambda * g);
        critic_targets[i * h + t] = g;
      }
    }
  }

  // Mean (V(s) − G)² over samples `indices`; with `gradient` non-empty, ADDS its gradient.
  double critic_loss(std::span<const std::size_t> indices, std::span<double> gradient) {
    const auto size = static_cast<std::size_t>(observation_size);
    double sum = 0.0;
    const double inverse = 1.0 / static_cast<double>(indices.size());
    for (const std::size_t n : indices) {
      critic.forward(critic_weights, std::span<const double>(critic_inputs.data() + n * size, size), critic_tape,
                     critic_output);
      const double error = critic_output[0] - critic_targets[n];
      sum += error * error;
      if (gradient.empty()) continue;
      critic_output_gradient[0] = 2.0 * error * inverse;
      critic.backward(critic_weights, critic_tape, critic_output_gradient, gradient, {});
    }
    return sum * inverse;
  }

  // The critic's passes over the window's samples in shuffled minibatches (Fisher–Yates on
  // the counter stream: the same order on every platform), then the target's soft update.
  void train_critic(int update, ShacUpdate& report) {
    critic_data();
    order.resize(critic_targets.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    report.critic_loss = critic_loss(order, {});
    std::uint64_t key = mix_bits(mix_bits(settings.seed ^ 0x5eed) + static_cast<std::uint64_t>(update));
    const std::size_t batches = std::min(order.size(), static_cast<std::size_t>(settings.critic_minibatches));
    for (int pass = 0; pass < settings.critic_iterations; ++pass) {
      for (std::size_t k = order.size(); k > 1; --k) std::swap(order[k - 1], order[mix_bits(key++) % k]);
      for (std::size_t b = 0; b < batches; ++b) {
        const std::size_t first = order.size() * b / batches, last = order.size() * (b + 1) / batches;
        std::fill(critic_gradient.begin(), critic_gradient.end(), 0.0);
        critic_loss(std::span<const std::size_t>(order.data() + first, last - first), critic_gradient);
        critic_optimizer.step(critic_weights, critic_gradient);
      }
    }
    std::iota(order.begin(), order.end(), std::size_t{0});
    report.critic_loss_after = critic_loss(order, {});
    const double alpha = settings.target_critic_alpha;
    for (std::size_t k = 0; k < target_weights.size(); ++k)
      target_weights[k] = alpha * target_weights[k] + (1.0 - alpha) * critic_weights[k];
  }

  // Environments move on to the end of their window; those whose episode ended (or whose
  // window was not finite) start the next episode.
  void advance(ShacUpdate& report) {
    const auto h = static_cast<std::size_t>(settings.window), size = static_cast<std::size_t>(observation_size);
    for (std::size_t i = 0; i < environments.size(); ++i) {
      ShacEnvironment& env = environments[i];
      statistics.add(std::span<const double>(env.observations).first(h * size), h);
      env.state = env.rollout->final_state();
      env.episode_step += settings.window;
      for (const double r : env.rewards) env.episode_return += r;
      const bool healthy = std::all_of(env.rollout->statuses().begin(), env.rollout->statuses().end(),
                                       [](const StepStatus& s) { return s.health == StateHealth::Ok; });
      if (env.episode_step >= task.episode_steps || !env.finite || !healthy) {
        if (env.episode_step >= task.episode_steps) {
          ++report.episodes_finished;
          report.mean_episode_return += env.episode_return;
        }
        ++env.episode;
        start_episode(i);
      }
    }
    if (report.episodes_finished > 0) report.mean_episode_return /= report.episodes_finished;
    if (settings.normalize_observations) statistics.freeze();
  }

  ShacUpdate update() {
    const auto start = std::chrono::steady_clock::now();
    ShacUpdate report;
    report.update = ++updates;
    if (settings.decay_updates > 0) {  // linear decay; the last updates keep a sliver of the rate
      const double left = std::max(1.0 - static_cast<double>(updates - 1) / settings.decay_updates, 1e-3);
      actor_optimizer.set_learning_rate(settings.actor_rate * left);
      critic_optimizer.set_learning_rate(settings.critic_rate * left);
    }
    std::vector<double> gradient(actor_parameters.size());
    report.actor_loss = run_windows(updates, gradient, report.non_finite_environments);
    if (report.non_finite_environments == settings.environments)
      throw Error(message("shac: update ", updates, ": the gradient of every environment is not finite"));
    double reward_sum = 0.0;
    for (const ShacEnvironment& env : environments)
      for (const double r : env.rewards) reward_sum += r;
    report.mean_reward = reward_sum / static_cast<double>(settings.environments * settings.window);
    report.actor_gradient_norm = std::sqrt(squared_norm(gradient));
    if (settings.gradient_clip > 0.0 && report.actor_gradient_norm > settings.gradient_clip)
      for (double& g : gradient) g *= settings.gradient_clip / report.actor_gradient_norm;
    actor_optimizer.step(actor_parameters, gradient);
    train_critic(updates, report);
    advance(report);
    simulated_steps += static_cast<long long>(settings.environments) * settings.window;
    report.simulated_steps = simulated_steps;
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  }
};

namespace {

void check_goal(const ShacTask& task, std::span<const double> goal) {
  if (static_cast<int>(goal.size()) != task.goal_size)
    throw Error(message("shac: the task's goal has ", task.goal_size, " numbers, got ", goal.size()));
}

}  // namespace

ShacTrainer::ShacTrainer(ShacTask task, ShacSettings settings)
    : impl_(std::make_unique<Impl>(std::move(task), std::move(settings))) {}

ShacTrainer::~ShacTrainer() = default;

ShacUpdate ShacTrainer::update() { return impl_->update(); }

double ShacTrainer::actor_loss(std::span<double> gradient) {
  if (gradient.size() != impl_->actor_parameters.size())
    throw Error(message("shac: actor_loss needs a gradient of size ", impl_->actor_parameters.size(), ", got ",
                        gradient.size()));
  int non_finite = 0;
  return impl_->run_windows(impl_->updates + 1, gradient, non_finite);
}

int ShacTrainer::actor_parameter_count() const { return static_cast<int>(impl_->actor_parameters.size()); }

std::span<double> ShacTrainer::actor_parameters() { return impl_->actor_parameters; }

double ShacTrainer::value(const State& state, int step, std::span<const double> goal) const {
  check_goal(impl_->task, goal);
  const auto size = static_cast<std::size_t>(impl_->observation_size);
  std::vector<double> raw(size), input(size), output(1);
  impl_->observe(step, state, goal, raw);
  impl_->normalise(raw, input);
  MlpTape tape;
  impl_->critic.forward(impl_->critic_weights, input, tape, output);
  return output[0];
}

std::unique_ptr<Controller> ShacTrainer::policy(std::span<const double> goal) const {
  check_goal(impl_->task, goal);
  const Impl& s = *impl_;
  const std::span<const double> weights = s.actor_weights(), log_std = s.log_std();
  return std::make_unique<ShacPolicy>(s.actor, std::vector<double>(weights.begin(), weights.end()),
                                      std::vector<double>(log_std.begin(), log_std.end()), s.statistics,
                                      s.task.observation, std::vector<double>(goal.begin(), goal.end()),
                                      s.task.action_scale, s.task.action_offset,
                                      s.task.relative_servo_targets ? &s.task.model : nullptr);
}

}  // namespace diffphys
