// experiments/breakout_game.hpp — the Breakout-like game of `diffphys experiment breakout`
// (de Avila Belbute-Peres et al. 2018, §4.3), built with the engine: its constants, the scene
// (shared with the agent's model, which leaves out the bricks), and the game itself — the
// "environment" whose true paddle speed the agent does not know.
//
// The game runs in 3D with every motion in the x–z plane (x across, z up, no gravity): the
// walls are planes with normals along x and z, the paddle slides along x on a prismatic joint,
// the bricks and the paddle are boxes centred on y = 0 and the ball starts at y = 0 with no y
// velocity. Every contact normal then has a zero y component and, with friction 0, no contact
// exerts a torque on the ball, so the ball stays on y = 0 without spinning (asserted by
// tests/breakout_test.cpp) and no planar joint is needed (one would also take the ball's
// bounces off the time-of-impact path: docs/simulation.md, "Time of impact").
#pragma once

#include <array>
#include <random>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys::experiments::breakout {

// Every constant of the game, SI units. Restitution is 1 on every surface and friction 0, so
// the ball keeps its speed at every bounce (walls, bricks, a paddle that moves only along x).
struct GameConstants {
  double half_width = 0.8;        // m: side walls at x = ±half_width
  double height = 2.0;            // m: the ceiling at z = height; the bottom is open
  double ball_radius = 0.04;      // m
  double ball_mass = 0.1;         // kg
  double ball_speed = 1.2;        // m/s at every serve, kept by the elastic bounces
  double serve_height = 0.9;      // m: the ball is served from z = serve_height ...
  double serve_half_range = 0.4;  // m: ... at x uniform in ±serve_half_range ...
  double serve_min_angle = 30.0;  // degrees below horizontal, uniform in [min, max], ...
  double serve_max_angle = 60.0;  // ... to the left or to the right at random
  double lost_height = 0.0;       // m: a ball whose centre falls below this is a lost life
  std::array<double, 3> paddle_half_extents{0.12, 0.05, 0.03};  // m (x, y, z)
  double paddle_height = 0.1;                                   // m: the paddle's centre
  double paddle_mass = 1.0;                                     // kg
  // The paddle is a servo (a velocity row: docs/simulation.md, "Servos"). Each substep the
  // game sets its target to q + action · target_offset, action ∈ {−1, 0, +1}, so it moves at
  // gain · target_offset · action: the paddle speed is gain × target_offset.
  double target_offset = 100.0;      // m
  double servo_max_torque = 1e4;     // N: never reached (1.5 m/s in one substep takes 45 N)
  double servo_max_velocity = 20.0;  // m/s: above any speed used, so never saturated
  double true_paddle_speed = 1.5;    // m/s per action: the game's, unknown to the agent
  int brick_rows = 3, brick_columns = 8;
  std::array<double, 3> brick_half_extents{0.09, 0.05, 0.03};  // m; columns 0.2 m apart
  double lowest_brick_row = 1.55;                              // m: centre of the lowest row; rows 0.1 m apart
  double frame_time = 1.0 / 15.0;  // s: one frame = one action (Atari's 60 Hz with frame skip 4)
  int substeps = 2;                // simulator steps per frame (dt = frame_time / substeps)
  int lives = 5;
};

// The scene: body "ball" (index 1), body "paddle" (2) on prismatic joint "slide" along x
// (built at x = 0, so its coordinate q is the paddle's x) with servo "paddle", and with
// `bricks` the kinematic bodies "brick<row>_<column>" (3, 4, …). Walls are planes of the world
// body. The servo's gain is paddle_speed / target_offset.
Scene build_scene(const GameConstants& constants, double paddle_speed, bool bricks);

// The parameter slice that holds the paddle speed (as the servo gain) and the conversions.
inline constexpr const char* kPaddleGainSlice = "actuator/paddle/gain";
inline constexpr int kBallBody = 1;
inline constexpr int kPaddleBody = 2;

// What the agent observes after each frame: positions only (m), as the paper's colour
// segmentation gives them.
struct Observation {
  double ball_x = 0.0, ball_z = 0.0, paddle_x = 0.0;
};

// Where the agent's observations come from: the simulator's state (Game::observe) or the
// engine camera's frames, segmented by colour (breakout_camera.hpp).
enum class Vision { State, Camera };

// What happened during one frame.
struct FrameEvents {
  int bricks_broken = 0;
  bool life_lost = false;
  bool served = false;  // a new ball was served at the end of this frame
};

// The game: serves the ball from a seeded generator (the same seed, the same serves), breaks
// a brick the ball bounces off (it is moved out of the box: a kinematic body can be put
// anywhere between steps), counts the score and the lives.
class Game {
 public:
  Game(const GameConstants& constants, unsigned seed);
  // One frame: `substeps` simulator steps with the paddle's servo target at q + action · offset
  // (action −1, 0 or +1). Throws Error for another action or a step whose state is not healthy.
  FrameEvents play(int action);
  Observation observe() const;
  bool over() const { return lives_left_ == 0 || bricks_left_ == 0; }
  int score() const { return score_; }  // bricks broken
  int lives_lost() const { return constants_.lives - lives_left_; }
  int bricks_left() const { return bricks_left_; }
  int frames() const { return frames_; }
  const Simulator& simulator() const { return simulator_; }
  const GameConstants& constants() const { return constants_; }

 private:
  void serve();
  GameConstants constants_;
  Scene scene_;
  Simulator simulator_;
  std::mt19937 serves_;
  int paddle_joint_ = 0;
  int first_brick_ = 0;
  std::vector<bool> broken_;
  int bricks_left_ = 0, score_ = 0, lives_left_ = 0, frames_ = 0;
  std::vector<double> controls_;
};

// The state of a serve: the ball at (x, 0, serve_height) moving at ball_speed, downwards at an
// angle in [serve_min_angle, serve_max_angle] to the left or right, all drawn from `serves`.
void serve_ball(const GameConstants& constants, std::mt19937& serves, State& state);

}  // namespace diffphys::experiments::breakout
