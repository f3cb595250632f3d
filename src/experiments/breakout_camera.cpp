// experiments/breakout_camera.cpp — the camera that films the Breakout-like game and the colour
// segmentation that reads the ball's and the paddle's positions from its frames
// (breakout_camera.hpp).
#include "experiments/breakout_camera.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"

namespace diffphys::experiments::breakout {
namespace {

constexpr double kCameraDistance = 20.0;  // m, in front of the plane y = 0
constexpr double kFrameMargin = 0.1;      // m of view beyond the box at the top and the bottom

// Colour channels: which one marks an object.
enum Channel { kRed = 0, kGreen = 1, kBlue = 2 };

struct Centroid {
  double column = 0.0, row = 0.0, weight = 0.0;
};

// The centroid of the pixels weighted by how much `channel` exceeds the image's other two.
Centroid coloured_centroid(const CameraImage& image, Channel channel) {
  Centroid centroid;
  for (int j = 0; j < image.height; ++j)
    for (int i = 0; i < image.width; ++i) {
      const double* rgb = &image.colour[static_cast<std::size_t>((j * image.width + i) * 3)];
      const double others = std::max(rgb[(channel + 1) % 3], rgb[(channel + 2) % 3]);
      const double weight = std::max(0.0, rgb[channel] - others);
      centroid.column += weight * (i + 0.5);
      centroid.row += weight * (j + 0.5);
      centroid.weight += weight;
    }
  if (centroid.weight > 0.0) {
    centroid.column /= centroid.weight;
    centroid.row /= centroid.weight;
  }
  return centroid;
}

}  // namespace

struct CameraEyes::Impl {
  Impl(const Game& game, int threads)
      : camera(make_camera(game.constants())),
        renderer(game.simulator().model(), camera, make_appearance(game.simulator().model()), threads) {}

  static Camera make_camera(const GameConstants& constants) {
    Camera camera;
    camera.name = "breakout";
    const double centre_height = 0.5 * constants.height;
    camera.position = {0, -kCameraDistance, centre_height};
    camera.orientation = camera_look_at(camera.position, {0, 0, centre_height});
    camera.vertical_fov = 2.0 * std::atan((0.5 * constants.height + kFrameMargin) / kCameraDistance);
    camera.width = kCameraWidth;
    camera.height = kCameraHeight;
    camera.far_depth = 2 * kCameraDistance;
    return camera;
  }

  static Appearance make_appearance(const Model& model) {
    Appearance look = default_appearance(model);
    // Flat colours, as Atari's sprites: shading would brighten the ball's lit side and pull its
    // weighted centroid towards the light (by 5 mm, measured with the default light).
    look.ambient = 1.0;
    look.diffuse = 0.0;
    for (int s = 0; s < model.shape_count(); ++s) {
      const int body = model.shapes[static_cast<std::size_t>(s)].body;
      Vec3& colour = look.shapes[static_cast<std::size_t>(s)].colour;
      if (body == kBallBody)
        colour = {1.0, 0.1, 0.1};
      else if (body == kPaddleBody)
        colour = {0.1, 0.2, 1.0};
      else if (body > kPaddleBody)
        colour = {0.2, 0.8, 0.2};  // bricks
    }
    return look;
  }

  // The point of the plane y = 0 on the ray of pixel coordinates (column, row), measured from
  // the image's top-left corner (docs/camera.md, "Frames and pixels"). The camera frame looks
  // along +y with x_C = x and y_C = −z.
  Vec3 on_plane(double column, double row) const {
    const double f = 0.5 * camera.height / std::tan(0.5 * camera.vertical_fov);
    const double right = (column - 0.5 * camera.width) / f, down = (row - 0.5 * camera.height) / f;
    return {camera.position.x + right * kCameraDistance, 0, camera.position.z - down * kCameraDistance};
  }

  Camera camera;
  CameraRenderer renderer;
  CameraImage image;
  Observation last;  // the previous see()'s
  bool has_last = false;
};

CameraEyes::CameraEyes(const Game& game, int threads) : impl_(std::make_unique<Impl>(game, threads)) {}
CameraEyes::~CameraEyes() = default;
const CameraImage& CameraEyes::last_frame() const {
  return impl_->image;
}

Observation CameraEyes::see(const Game& game) {
  Impl& d = *impl_;
  d.renderer.render(game.simulator().params(), game.simulator().state(), d.image);
  const Centroid ball = coloured_centroid(d.image, kRed), paddle = coloured_centroid(d.image, kBlue);
  const bool ball_seen = ball.weight > 0.0, paddle_seen = paddle.weight > 0.0;
  if (!d.has_last && !(ball_seen && paddle_seen))
    throw Error(message("breakout camera: the ", ball_seen ? "paddle" : "ball", " is not in the first frame"));
  // An object not in the frame (a ball struck deep into a wall, behind the wall's nearer part)
  // stays where it was last seen.
  Observation seen = d.last;
  if (ball_seen) {
    const Vec3 position = d.on_plane(ball.column, ball.row);
    seen.ball_x = position.x;
    seen.ball_z = position.z;
  }
  if (paddle_seen) seen.paddle_x = d.on_plane(paddle.column, paddle.row).x;
  if (!(ball_seen && paddle_seen)) ++hidden_frames_;
  const Observation truth = game.observe();
  if (ball_seen)
    largest_error_ = std::max(largest_error_, std::hypot(seen.ball_x - truth.ball_x, seen.ball_z - truth.ball_z));
  if (paddle_seen) largest_error_ = std::max(largest_error_, std::abs(seen.paddle_x - truth.paddle_x));
  d.last = seen;
  d.has_last = true;
  return seen;
}

}  // namespace diffphys::experiments::breakout
