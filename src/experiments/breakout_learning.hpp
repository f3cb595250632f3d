// experiments/breakout_learning.hpp — learning the paddle speed of the Breakout-like game
// (de Avila Belbute-Peres et al. 2018, §4.3: "The paddle velocity when moving at each step is
// learned by unrolling game episodes with randomly chosen actions, performing the same actions
// in the physics simulation and then fitting the simulation parameter via gradient descent to
// minimize the mean squared error to the observed trajectory").
//
// The agent's model is the game's scene without the bricks (breakout_game.hpp) with a paddle
// speed of its own: the servo gain, an entry of θ. Each observed episode is replayed in the
// model from its first observed positions with the same actions; the loss is the mean squared
// error of the paddle's x over the episode's frames, and its gradient with respect to the speed
// comes from Rollout::backward (the servo's gain slice of dL/dθ, plus the path through the
// servo target q + action · offset, which a closed-loop Controller carries back into x̄).
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "experiments/breakout_game.hpp"

namespace diffphys::experiments::breakout {

// One random-action episode of the game: observations[0] before the first action and
// observations[f + 1] after actions[f].
struct Episode {
  std::vector<Observation> observations;
  std::vector<int> actions;
  double largest_camera_error = 0.0;  // m, with Vision::Camera (CameraEyes::largest_error)
  int hidden_frames = 0;              // with Vision::Camera (CameraEyes::hidden_frames)
};

// `episodes` games of `frames` frames each under uniformly random actions (−1, 0, +1): game e
// serves from seed `seed + e`, the actions come from one generator seeded with `seed`; the
// observations come from `vision`. An episode ends early, without its last action, if that
// action ended the game.
std::vector<Episode> random_episodes(const GameConstants& constants, int episodes, int frames, unsigned seed,
                                     Vision vision = Vision::State);

// The trajectory loss of a paddle speed on a set of episodes.
class PaddleSpeedLoss {
 public:
  // Throws Error when there are no frames to fit.
  PaddleSpeedLoss(const GameConstants& constants, const std::vector<Episode>& episodes);
  ~PaddleSpeedLoss();
  // The mean squared error of the model's paddle x against the observed one over every frame
  // after the first (m²); with `gradient` not null, dL/d(paddle speed) ((m²)/(m/s)) too.
  double evaluate(double paddle_speed, double* gradient);
  int frames() const;  // the frames compared (every episode's, but its first)
  // The loss of a paddle that never moves: the mean squared observed displacement of the
  // paddle from its episode's first position (m²). Loss / this ≈ (s/s_true − 1)² away from
  // the walls, whatever the data.
  double still_paddle_loss() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct SpeedFit {
  std::vector<double> speeds;  // before each update, m/s (last: the learned speed)
  std::vector<double> losses;  // the loss (mean squared error) at those speeds, m²
  double learned = 0.0;        // m/s
  int frames_used = 0;         // frames of play observed (every episode's, with its first)
  double seconds = 0.0;
};

// Gradient descent on log(speed) from `initial_speed` for `iterations` updates, full batch: the
// loss divided by still_paddle_loss() (dimensionless, about (s/s_true − 1)², whose curvature in
// log s is 2 at the truth), rate 0.25 (the error halves per update near the truth), gradient
// clipped to ±1 (at most a 0.25 step in log s from a guess far off). Progress every 10 updates
// to `progress` if not null.
SpeedFit fit_paddle_speed(const GameConstants& constants, const std::vector<Episode>& episodes, double initial_speed,
                          int iterations, std::ostream* progress);

}  // namespace diffphys::experiments::breakout
