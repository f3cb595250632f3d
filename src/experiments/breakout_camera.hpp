// experiments/breakout_camera.hpp — the agent's eyes in `diffphys experiment breakout
// --variant camera`: the engine's ray-cast camera (diffphys/camera.hpp) films the game from in
// front, and the ball and the paddle are found in each frame by their colour, as the paper's
// agent finds them in Atari frames ("a model of the environments is built by applying color
// filters, segmenting the diverse objects (the paddle, the ball, etc.) and translating these
// positions into the physics engine", de Avila Belbute-Peres et al. 2018, §4.3).
//
// The camera looks along +y at the game's plane from 20 m away with a field of view just
// covering the box (nearly orthographic), at 160 × 200 pixels (Atari's frames are 160 wide).
// The ball is red, the paddle blue, the bricks green, the walls grey, the background black. An
// object's position is the centroid of its pixels weighted by how much their colour exceeds the
// other two channels (the soft outlines give sub-pixel weights), carried back along the pixel
// ray of that centroid to the plane y = 0.
#pragma once

#include <memory>

#include "diffphys/camera.hpp"
#include "experiments/breakout_game.hpp"

namespace diffphys::experiments::breakout {

inline constexpr int kCameraWidth = 160, kCameraHeight = 200;  // pixels

class CameraEyes {
 public:
  // A renderer of `game`'s model (bricks included).
  CameraEyes(const Game& game, int threads = 1);
  ~CameraEyes();
  // Renders the game's current state and finds the ball and the paddle by colour. An object not
  // in the frame keeps the position it was last seen at (hidden_frames() counts such frames);
  // throws Error when one is not in the first frame.
  Observation see(const Game& game);
  const CameraImage& last_frame() const;
  // The largest distance between what the camera saw and the state's position, over every
  // object seen so far (m): the segmentation's error.
  double largest_error() const { return largest_error_; }
  int hidden_frames() const { return hidden_frames_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  double largest_error_ = 0.0;
  int hidden_frames_ = 0;
};

}  // namespace diffphys::experiments::breakout
