// experiments/breakout_control.hpp — playing the Breakout-like game (breakout_game.hpp): the
// paper's iLQR controller on the agent's model (de Avila Belbute-Peres et al. 2018, §4.3:
// "The iLQR is set up with a time-horizon of 5 frames ... the cost consists of the squared
// difference in the x position of the paddle and the ball when the ball is descending, and the
// squared distance to the center of the screen otherwise"), a random and a hand-written
// policy, and a game played to its end by any of them.
#pragma once

#include <memory>
#include <random>
#include <span>
#include <vector>

#include "diffphys/ilqr.hpp"
#include "experiments/breakout_game.hpp"

namespace diffphys::experiments::breakout {

inline constexpr int kHorizon = 5;  // frames, the paper's

// A player: the action (−1, 0, +1) for the latest observation. new_ball() is called when a new
// ball is served, so that a policy does not difference positions across the serve.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual int act(const Observation& observation) = 0;
  virtual void new_ball() {}
};

// Uniformly random actions from its own seeded generator.
class RandomPolicy final : public Policy {
 public:
  explicit RandomPolicy(unsigned seed) : random_(seed) {}
  int act(const Observation&) override { return action_(random_); }

 private:
  std::mt19937 random_;
  std::uniform_int_distribution<int> action_{-1, 1};
};

// The hand-written policy: move the paddle toward the ball's x, stay within `dead_band` (m).
class ChasePolicy final : public Policy {
 public:
  explicit ChasePolicy(double dead_band) : dead_band_(dead_band) {}
  int act(const Observation& observation) override;

 private:
  double dead_band_;
};

// The model's dynamics as iLQR sees them: one control step is one frame, `substeps` simulator
// steps, and the control u ∈ [−1, 1] is the action as a fraction of the paddle speed: the servo
// target is q + u · offset at every simulator step, as the game sets it for a whole action.
// Its Jacobians chain the step Jacobians (jacobians.hpp) of each simulator step with the
// target's dependence on q: A_k ← A_k + B_k e_qᵀ, B_k ← offset · B_k.
class FrameDynamics final : public IlqrDynamics {
 public:
  FrameDynamics(const Model& model, const Params& params, int substeps, double target_offset);
  int state_size() const override { return step_dynamics_.state_size(); }
  int tangent_size() const override { return step_dynamics_.tangent_size(); }
  int control_size() const override { return 1; }
  void step(std::span<const double> state, std::span<const double> controls, std::span<double> next) override;
  void linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                 std::span<double> A, std::span<double> B) override;
  void difference(std::span<const double> state, std::span<const double> reference,
                  std::span<double> tangent) override {
    step_dynamics_.difference(state, reference, tangent);
  }
  SimulatorDynamics& simulator_dynamics() { return step_dynamics_; }

 private:
  SimulatorDynamics step_dynamics_;  // one simulator step per call
  int substeps_;
  double target_offset_;
  std::vector<double> current_, next_, step_A_, step_B_, product_, chained_B_;
};

// Flat-state indices (SimulatorDynamics::pack: 13 per body; tangent: 12 per body).
inline constexpr int kBallXPacked = kBallBody * 13 + 0;
inline constexpr int kBallVzPacked = kBallBody * 13 + 9;
inline constexpr int kPaddleXPacked = kPaddleBody * 13 + 0;
inline constexpr int kBallXTangent = kBallBody * 12 + 0;
inline constexpr int kPaddleXTangent = kPaddleBody * 12 + 0;

// The paper's cost: w (x_paddle − x_ball)² while the ball descends (v_z < 0), w_centre
// x_paddle² otherwise (the screen's centre is x = 0), at each of the horizon's frames and at its
// end, plus ½ r u² so that Q_uu stays positive where the paddle cannot change the cost. The
// paper gives no weights. w_centre = w made the plan leave the ball for the centre as soon as
// the model saw a bounce within the horizon, and a near-miss bounce (the paddle's corner) then
// lost the ball: 3.2 lives lost per game against 1.0 with w_centre = w/100 (docs/EXPERIMENTS.md,
// "breakout").
class TrackingCost final : public IlqrCost {
 public:
  static constexpr double kWeight = 1.0;          // w, 1/m²
  static constexpr double kCentreWeight = 0.01;   // w_centre, 1/m²
  static constexpr double kControlWeight = 1e-4;  // r
  double stage(int step, std::span<const double> state, std::span<const double> controls,
               CostDerivatives* derivatives) override;
  double final(std::span<const double> state, CostDerivatives* derivatives) override;
};

// iLQR MPC (horizon 5 frames, at most 5 iterations per plan) on the agent's model with the
// given paddle speed. The model's state: the observed positions, the ball's velocity the
// difference of its last two positions over a frame (zero on a new ball's first frame), the
// paddle at rest. The action is the plan's first control rounded to −1, 0 or +1.
class IlqrPolicy final : public Policy {
 public:
  IlqrPolicy(const GameConstants& constants, double model_paddle_speed);
  ~IlqrPolicy() override;
  int act(const Observation& observation) override;
  void new_ball() override;
  int iterations() const { return iterations_; }  // iLQR backward passes so far
  int plans() const { return plans_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int iterations_ = 0, plans_ = 0;
};

struct GameResult {
  int score = 0;  // bricks broken
  int lives_lost = 0;
  int frames = 0;
  double seconds = 0.0;               // wall time of the whole game, the policy's (and the camera's) included
  double largest_camera_error = 0.0;  // m, with Vision::Camera (CameraEyes::largest_error)
  int hidden_frames = 0;              // with Vision::Camera (CameraEyes::hidden_frames)
};

// Plays the game served from `seed` until it is over or after `max_frames` frames, the policy
// observing through `vision`.
GameResult play_game(const GameConstants& constants, Policy& policy, unsigned seed, int max_frames,
                     Vision vision = Vision::State);

}  // namespace diffphys::experiments::breakout
