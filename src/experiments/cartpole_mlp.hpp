// experiments/cartpole_mlp.hpp — the learned-only baseline of de Avila Belbute-Peres et al.
// 2018, §4.3: an MLP dynamics model of the cart–pole ("an MLP with two hidden layers of size
// 100 trained on the same data"), trained by the engine's Adam on the same random-action
// transitions as the physics model, and iLQR MPC on it with the same horizon and cost.
//
// The network (diffphys::Mlp) maps the normalised (x, ẋ, θ, θ̇, F) to the normalised state
// change s' − s; each input and output is shifted and scaled to zero mean and unit spread over
// the training data. Hidden units are tanh, so the model is smooth and iLQR's linearisation
// is its exact Jacobian (from the network's backward pass: one pass per output row).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "diffphys/neural.hpp"
#include "experiments/cartpole_physics.hpp"

namespace diffphys::experiments::cartpole {

class MlpCartPole {
 public:
  static constexpr int kInputs = 5;   // x, ẋ, θ, θ̇, F
  static constexpr int kOutputs = 4;  // Δx, Δẋ, Δθ, Δθ̇ over one control step

  // The normalisation comes from `data` (throws Error when it is empty); weights: Glorot
  // uniform hidden layers drawn from `seed`, output layer zero (the initial model predicts
  // the mean change).
  MlpCartPole(const std::vector<Transition>& data, const std::vector<int>& hidden, std::uint64_t seed);

  // s' = s + Δs(s, F). Throws Error for a non-finite state or force. No allocation.
  StateVector predict(const StateVector& state, double force);
  // s' as predict(), A = ∂s'/∂s (4 × 4, row-major) and B = ∂s'/∂F (4): exact.
  void linearize(const StateVector& state, double force, StateVector& next, std::span<double> A, std::span<double> B);

  // The mean squared error of the normalised change over `batch` and the 4 outputs:
  // L = 1/|batch| Σ 1/4 Σ_j (y_j − ŷ_j)². Writes dL/dW into `gradient` when it is not empty.
  double loss(std::span<const Transition* const> batch, std::span<double> gradient);

  std::span<double> weights() { return weights_; }
  int parameter_count() const { return network_.parameter_count(); }

 private:
  // Normalised network input from (s, F), after checking it is finite.
  void normalise(const StateVector& state, double force);

  Mlp network_;
  std::vector<double> weights_;
  MlpTape tape_;
  std::array<double, kInputs> input_mean_{}, input_scale_{};
  std::array<double, kOutputs> output_mean_{}, output_scale_{};
  std::vector<double> input_, output_, output_gradient_, input_gradient_;
  std::vector<double> unused_weight_gradient_;  // Mlp::backward's dL/dW while linearising: never read
};

struct MlpFitSettings {
  std::vector<int> hidden{100, 100};  // the paper's baseline
  int batch_size = 32;                // transitions per Adam update (all of them when fewer)
  double learning_rate = 1e-3;        // Adam, cosine-decayed to 1/100 of this over max_updates
  int max_updates = 8000;
  int check_every = 50;       // validation loss every this many updates
  int validation_stride = 5;  // every 5th transition is held out for early stopping
};

struct MlpFit {
  std::unique_ptr<MlpCartPole> model;                   // the weights with the lowest validation loss
  int chosen_updates = 0;                               // after that many updates (0: the initial weights)
  double validation_loss = 0.0;                         // their validation loss (normalised)
  std::vector<std::array<double, 2>> validation_curve;  // (updates, validation loss) at every check
  double seconds = 0.0;
};

// Adam on minibatches (shuffled epochs drawn from `seed`) of 4 of every 5 transitions, with
// early stopping on the fifth: the weights with the lowest validation loss, checked every
// check_every updates, are kept. Deterministic. Throws Error for fewer than
// validation_stride transitions or inconsistent settings.
MlpFit fit_mlp(const std::vector<Transition>& train, const MlpFitSettings& settings, std::uint64_t seed);

// The MLP model as iLQR dynamics: state (x, ẋ, θ, θ̇), control F. Referenced, must outlive it.
class MlpDynamics final : public IlqrDynamics {
 public:
  explicit MlpDynamics(MlpCartPole& model) : model_(model) {}
  int state_size() const override { return 4; }
  int control_size() const override { return 1; }
  void step(std::span<const double> state, std::span<const double> controls, std::span<double> next) override;
  void linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                 std::span<double> A, std::span<double> B) override;

 private:
  MlpCartPole& model_;
};

// iLQR MPC on the MLP model: the settings, horizon and cost of PhysicsMpc (mpc_settings()).
// The model is referenced and must outlive the controller.
class MlpMpc final : public BalancingController {
 public:
  explicit MlpMpc(MlpCartPole& model);
  ~MlpMpc() override;
  double force(const StateVector& state) override;
  int last_iterations() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace diffphys::experiments::cartpole
