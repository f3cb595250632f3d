// diffphys/shac.hpp — short-horizon actor-critic through the simulator: SHAC (Xu, Makoviychuk,
// Narang, Ramos, Matusik, Garg & Macklin 2022, "Accelerated Policy Learning with Parallel
// Differentiable Simulation", Algorithm 1).
//
// Back-propagation through a whole episode explodes or vanishes where contacts make the
// dynamics stiff (diffphys/gradient_health.hpp shows it per step). SHAC cuts the episode into
// windows of h steps: N environments each run h steps with a stochastic policy, the actor
// descends the exact gradient (through the engine's backward pass) of
//     L = −1/(N h) Σ_env [ Σ_{t<h} γ^t r_t + γ^h V'(s_h) ],
// where V' (a target copy of the learned critic) bootstraps the rest of the episode; the
// critic regresses TD(λ) returns of the same windows; the environments carry on from where
// the window left them and are reset when their episode (a time limit of H steps) ends.
//
//   ShacTask task{model, params, initial_state, observation, reward, 1000, scale, offset};
//   ShacTrainer trainer(task, ShacSettings{.environments = 16});
//   for (int k = 0; k < 500; ++k) ShacUpdate u = trainer.update();
//   std::unique_ptr<Controller> policy = trainer.policy();  // deterministic: σ = 0
//
// Deterministic: the same settings and seed give the same bits for any thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/neural.hpp"
#include "diffphys/params.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

// What is learned: the robot, how its episodes start, what the policy sees, what it earns.
struct ShacTask {
  Model model;
  Params params;
  // x_0 of environment `environment`'s episode number `episode` (0, 1, ...). Must be a pure
  // function of its arguments (and the task's own seed), or runs stop being reproducible.
  std::function<State(int environment, int episode)> initial_state;
  // The policy's and the critic's input s(x_t); `step` is the step within the episode (a
  // clock may read it). Its backward ADDS (∂s/∂x)ᵀ s̄; the trainer normalises s itself.
  FeatureMap observation;
  // A goal-conditioned task (a target to reach): goal_size numbers per episode, written by
  // goal(environment, episode, g) (a pure function, as initial_state), appended to the
  // observation and handed to the reward. 0: no goal.
  int goal_size = 0;
  std::function<void(int environment, int episode, std::span<double> goal)> goal;
  // r_t of the step x_t → x_{t+1}, read from x_{t+1} at episode step t + 1. ADDS ∂r/∂x_{t+1}
  // into gradient (tangent layout, 12 per body) unless it is empty.
  std::function<double(int step, const State& next, std::span<const double> goal, std::span<double> gradient)> reward;
  // initial_state, goal, observation and reward are called from several threads at once
  // (ShacSettings::threads): they must not share mutable state.
  int episode_steps = 1000;  // H: the time limit after which an environment starts again
  // Controls u = action_scale ⊙ tanh(z) + action_offset, z = μ(s) + σ ⊙ ε (one per actuator;
  // empty: scale 1, offset 0).
  std::vector<double> action_scale, action_offset;
  double action_penalty = 0.0;  // r_t −= action_penalty · |tanh(z)|²
  // Servo actuators only: the target is the servo's coordinate now plus the control above,
  // so that a small action_scale (≤ max_velocity / gain) keeps the servo in its linear range
  // where the step has a gradient (a saturated servo's rate does not depend on its target).
  bool relative_servo_targets = false;
  RolloutOptions rollout_options;
};

struct ShacSettings {
  int environments = 16;      // N
  int window = 32;            // h, steps back-propagated through
  double discount = 0.99;     // γ
  double td_lambda = 0.95;    // λ of the critic's TD(λ) returns
  std::vector<int> actor_hidden = {64, 64};
  std::vector<int> critic_hidden = {64, 64};
  Activation hidden_activation = Activation::Tanh;
  double actor_rate = 2e-3;   // Adam, β = (0.7, 0.95) as SHAC
  double critic_rate = 2e-3;  // Adam, β = (0.7, 0.95)
  // Both rates fall linearly to zero over this many updates, as SHAC's schedule (0: constant).
  int decay_updates = 0;
  int critic_iterations = 16;   // passes over the window's N h samples per update
  int critic_minibatches = 4;   // per pass
  double target_critic_alpha = 0.2;  // V' ← α V' + (1 − α) V after each update
  double initial_log_std = -1.0;     // log σ of the exploration noise at the start (learned)
  double gradient_clip = 1.0;        // the actor gradient's norm (0: off)
  bool normalize_observations = true;  // running mean and variance, frozen within a window
  int threads = 1;
  std::uint64_t seed = 1;
};

struct ShacUpdate {
  int update = 0;                 // 1, 2, ...
  double actor_loss = 0.0;        // L above, before the actor's step
  double mean_reward = 0.0;       // per transition over the window's N h transitions
  double critic_loss = 0.0;       // mean (V(s_t) − G_t^λ)² over the window, before the critic's passes
  double critic_loss_after = 0.0;  // the same after them
  double actor_gradient_norm = 0.0;  // before clipping
  int non_finite_environments = 0;   // whose gradient was not finite: dropped, and the environment reset
  int episodes_finished = 0;         // in this update
  double mean_episode_return = 0.0;  // undiscounted Σ r over those episodes (0 when none finished)
  long long simulated_steps = 0;     // N h per update, summed over the updates so far
  double seconds = 0.0;              // wall time of this update
};

class ShacTrainer {
 public:
  // Throws Error for sizes that do not fit the model (observation size 0, action maps of
  // the wrong length, non-positive counts, γ or λ outside [0, 1], ...), naming the item.
  ShacTrainer(ShacTask task, ShacSettings settings);
  ~ShacTrainer();
  ShacTrainer(const ShacTrainer&) = delete;
  ShacTrainer& operator=(const ShacTrainer&) = delete;

  // One window of every environment, an actor step, the critic's passes.
  ShacUpdate update();

  // The current policy without noise (z = μ(s), the current normalisation), for evaluation
  // rollouts, pursuing `goal` (goal_size numbers). It copies the weights: later updates do not change it. Its act() reads the
  // step it is given as the episode step.
  std::unique_ptr<Controller> policy(std::span<const double> goal = {}) const;

  // The actor's loss L and its gradient (actor weights, then log σ) for the environments'
  // current states and the next update's noise — what update() descends — without changing
  // anything. For gradient checks.
  double actor_loss(std::span<double> gradient);
  int actor_parameter_count() const;            // weights + log σ
  std::span<double> actor_parameters();         // weights, then log σ (tests may perturb them)
  // The critic (not the target copy) at the observation of x at episode step `step`.
  double value(const State& state, int step, std::span<const double> goal = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace diffphys
