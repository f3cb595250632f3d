// experiments/cartpole_physics.hpp — what the two cart–pole experiments share (de Avila
// Belbute-Peres et al. 2018, §4.3): random-action data of the true cart–pole, the diffphys
// cart–pole model (two articulated boxes) with its learned physical parameters, the
// system identification of those parameters through Rollout::backward, and the iLQR MPC
// (horizon 5, cost θ²) that balances the true system on a model. `cartpole-ilqr` learns the
// model once; `cartpole-data-efficiency` learns it, and an MLP dynamics model
// (cartpole_mlp.hpp), from growing amounts of data. Why the model is parametrised so:
// docs/EXPERIMENTS.md ("cartpole-ilqr").
#pragma once

#include <array>
#include <cmath>
#include <iosfwd>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "diffphys/ilqr.hpp"
#include "experiments/cartpole_ilqr.hpp"

namespace diffphys::experiments::cartpole {

using StateVector = TrueCartPole::StateVector;  // (x, ẋ, θ, θ̇): m, m/s, rad, rad/s

constexpr double kForceLimit = 10.0;                 // N, Gym's force_mag as a bound
constexpr double kAngleLimit = 12.0 * M_PI / 180.0;  // rad, Gym's failure angle
constexpr double kPositionLimit = 2.4;               // m, Gym's failure position
constexpr int kMpcHorizon = 5;                       // control steps, the paper's
constexpr int kMaxStepsBalanced = 1000;              // the paper's reward cap

// One observed control step of the true system: `next` after `force` (N) held for τ from
// `state`. `episode` numbers the random-action episode it belongs to (consecutive
// transitions of one episode follow each other in time).
struct Transition {
  StateVector state, next;
  double force = 0.0;
  int episode = 0;
};

// Random-action episodes of the true system (Gym's start: uniform ±0.05; a new uniform force
// in ±10 N every step), each until the pole leaves ±`max_angle` or after `max_steps` steps.
// Episodes are numbered from `first_episode`.
std::vector<Transition> collect(const TrueCartPole& truth, int episodes, int max_steps, double max_angle,
                                std::mt19937& random, int first_episode = 0);

// The learned quantities: cart mass m_c (kg), pole mass m_p (kg), pole length L (m).
struct PhysicsGuess {
  double cart_mass, pole_mass, pole_length;
};

// The model pole's moment of inertia about its centre (kg·m²): a box of square section 0.05 m.
double pole_inertia(double pole_mass, double pole_length);

// The diffphys cart–pole with a guess: one control step (`substeps` simulator steps of dt,
// force held) from a reduced state. The hinge-to-centre distance d of the pole is fixed.
class PhysicsCartPole {
 public:
  PhysicsCartPole(const PhysicsGuess& guess, double hinge_offset, int substeps, double dt);
  ~PhysicsCartPole();
  void set_guess(const PhysicsGuess& guess);
  StateVector predict(const StateVector& state, double force);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct PhysicsFitSettings {
  PhysicsGuess initial{10.0, 2.0, 0.6};  // ten and twenty times too heavy, pole 0.6 m (truth 1 m)
  int substeps = 2;                      // simulator steps (semi-implicit Euler) per control step
  double time_step = 0.02;               // s, one control step
  int iterations = 200;                  // Adam, full batch
};

struct PhysicsFit {
  PhysicsGuess learned{};
  double hinge_offset = 0.0;  // the model's d: half the initial length, kept
  // Per iteration: normalised loss, one-step MSE (SI), and (m_c, m_p, L) before the update.
  std::vector<double> loss_curve, mse_curve;
  std::vector<std::array<double, 3>> param_curve;
  double seconds = 0.0;
};

// Learns log(m_c, m_p, L) by Adam (rate 0.05 cosine-decayed to 0.005) on the one-step
// prediction error of `train`, each coordinate normalised by the spread of its one-step
// change, with the gradient from Rollout::backward. Progress every 10 iterations to
// `progress` when not null.
PhysicsFit fit_physics(const std::vector<Transition>& train, const PhysicsFitSettings& settings,
                       std::ostream* progress);

// Held-out one-step prediction MSE of (x, ẋ, θ, θ̇) in SI units, with a model's prediction.
template <typename Predict>
double one_step_mse(const std::vector<Transition>& data, Predict&& predict) {
  double sum = 0.0;
  for (const Transition& d : data) {
    const StateVector predicted = predict(d.state, d.force);
    for (int j = 0; j < 4; ++j)
      sum += std::pow(predicted[static_cast<std::size_t>(j)] - d.next[static_cast<std::size_t>(j)], 2);
  }
  return sum / (4.0 * static_cast<double>(data.size()));
}

// Open-loop prediction over `steps` control steps: from every observed state that has
// `steps` more transitions in its episode, the model is rolled forward under the recorded
// forces and compared with the observed state `steps` later. Returns the MSE of
// (x, ẋ, θ, θ̇) over those windows (SI units) and their count.
struct MultiStepError {
  double mse = 0.0;
  int windows = 0;
};
template <typename Predict>
MultiStepError multi_step_mse(const std::vector<Transition>& data, int steps, Predict&& predict) {
  MultiStepError result;
  for (std::size_t start = 0; start + static_cast<std::size_t>(steps) <= data.size(); ++start) {
    const std::size_t last = start + static_cast<std::size_t>(steps) - 1;
    if (data[last].episode != data[start].episode) continue;
    StateVector s = data[start].state;
    for (std::size_t t = start; t <= last; ++t) s = predict(s, data[t].force);
    for (int j = 0; j < 4; ++j)
      result.mse += std::pow(s[static_cast<std::size_t>(j)] - data[last].next[static_cast<std::size_t>(j)], 2);
    ++result.windows;
  }
  if (result.windows > 0) result.mse /= 4.0 * result.windows;
  return result;
}

// A model-based controller of the true system: the force to apply now.
class BalancingController {
 public:
  virtual ~BalancingController() = default;
  virtual double force(const StateVector& state) = 0;
  virtual int last_iterations() const = 0;  // iLQR backward passes of the latest plan
};

// The paper's MPC settings for both models: iLQR with at most 10 iterations per plan,
// forces bounded to ±10 N. The cost (the same on every model): θ² at each of the 5 steps and
// at the horizon's end, plus 1e-4 F² so that Q_uu stays positive definite where the angle
// does not depend on F.
IlqrSettings mpc_settings();
constexpr double kAngleWeight = 2.0;   // Q_θθ: ½·2·θ² = θ²
constexpr double kForceWeight = 2e-4;  // R:   ½·2e-4·F² = 1e-4 F²

// iLQR MPC on the diffphys model with the given guess.
class PhysicsMpc final : public BalancingController {
 public:
  PhysicsMpc(const PhysicsGuess& guess, double hinge_offset, int substeps, double dt);
  ~PhysicsMpc() override;
  double force(const StateVector& state) override;
  int last_iterations() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct BalanceResult {
  int steps_balanced = 0;
  double seconds_per_step = 0.0;
  double mean_ilqr_iterations = 0.0;
  double mean_squared_angle = 0.0;                // the MPC's objective on the true system, rad²
  std::vector<std::array<double, 5>> trajectory;  // (x, ẋ, θ, θ̇, F) per step
  const char* ended_by = "cap";                   // "cap" (max_steps), "angle" or "position"
};

// Runs `controller` on the true system from a Gym-like random start (uniform ±0.05 drawn
// from `seed`) until the pole passes ±12°, the cart ±2.4 m, or `max_steps` steps. Progress
// every 100 steps to `progress` when not null, each line starting with `label`.
BalanceResult balance(const TrueCartPole& truth, BalancingController& controller, int max_steps, unsigned seed,
                      std::ostream* progress, const char* label);

}  // namespace diffphys::experiments::cartpole
