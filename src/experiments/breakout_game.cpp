// experiments/breakout_game.cpp — the Breakout-like game (breakout_game.hpp): the scene, the
// serves, and a frame of play with its bricks, score and lives.
#include "experiments/breakout_game.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys::experiments::breakout {
namespace {

// Collision groups: the world's walls keep the default group 1. The paddle touches the ball
// only (the joint's limits keep it inside the walls); bricks touch the ball (kinematic
// bodies never touch the paddle's or the world's shapes anyway).
constexpr std::uint32_t kBallGroup = 2, kPaddleGroup = 4, kBrickGroup = 8;
constexpr double kBrickColumnPitch = 0.2, kBrickRowPitch = 0.1;  // m
constexpr double kBrokenBrickHeight = 100.0;                     // m: where a broken brick is put, far outside the box

}  // namespace

Scene build_scene(const GameConstants& constants, double paddle_speed, bool bricks) {
  if (!(paddle_speed > 0.0) || !std::isfinite(paddle_speed))
    throw Error(message("breakout: the paddle speed must be positive and finite, not ", paddle_speed, " m/s"));
  ModelBuilder builder;
  builder.name = bricks ? "breakout" : "breakout-model";
  builder.dt = constants.frame_time / constants.substeps;
  builder.gravity = {0, 0, 0};
  builder.world_friction = 0.0;
  builder.world_restitution = 1.0;
  builder.add_ground_plane({1, 0, 0}, -constants.half_width);   // left wall
  builder.add_ground_plane({-1, 0, 0}, -constants.half_width);  // right wall
  builder.add_ground_plane({0, 0, -1}, -constants.height);      // ceiling

  BodySpec ball;
  ball.name = "ball";
  ball.position = {0, 0, constants.serve_height};
  ball.mass = constants.ball_mass;
  ball.friction = 0.0;
  ball.restitution = 1.0;
  ShapeSpec sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = constants.ball_radius;
  sphere.collision_group = kBallGroup;
  ball.shapes.push_back(sphere);
  builder.add_body(ball);

  BodySpec paddle;
  paddle.name = "paddle";
  paddle.position = {0, 0, constants.paddle_height};
  paddle.mass = constants.paddle_mass;
  paddle.friction = 0.0;
  paddle.restitution = 1.0;
  ShapeSpec box;
  box.type = ShapeType::Box;
  box.half_extents = {constants.paddle_half_extents[0], constants.paddle_half_extents[1],
                      constants.paddle_half_extents[2]};
  box.collision_group = kPaddleGroup;
  box.collision_mask = kBallGroup;
  paddle.shapes.push_back(box);
  builder.add_body(paddle);
  JointSpec slide;
  slide.name = "slide";
  slide.type = JointType::Prismatic;
  slide.child = "paddle";
  slide.anchor = {0, 0, constants.paddle_height};
  slide.axis = {1, 0, 0};
  const double reach = constants.half_width - constants.paddle_half_extents[0];
  slide.lower_limit = -reach;
  slide.upper_limit = reach;
  builder.add_joint(slide);
  ActuatorSpec servo;
  servo.name = "paddle";
  servo.type = ActuatorType::Servo;
  servo.joint = "slide";
  servo.gain = paddle_speed / constants.target_offset;
  servo.max_torque = constants.servo_max_torque;
  servo.max_velocity = constants.servo_max_velocity;
  builder.add_actuator(servo);

  if (bricks)
    for (int row = 0; row < constants.brick_rows; ++row)
      for (int column = 0; column < constants.brick_columns; ++column) {
        BodySpec brick;
        brick.name = "brick" + std::to_string(row) + "_" + std::to_string(column);
        brick.type = BodyType::Kinematic;
        brick.position = {(column - 0.5 * (constants.brick_columns - 1)) * kBrickColumnPitch, 0,
                          constants.lowest_brick_row + row * kBrickRowPitch};
        brick.friction = 0.0;
        brick.restitution = 1.0;
        ShapeSpec brick_box;
        brick_box.type = ShapeType::Box;
        brick_box.half_extents = {constants.brick_half_extents[0], constants.brick_half_extents[1],
                                  constants.brick_half_extents[2]};
        brick_box.collision_group = kBrickGroup;
        brick.shapes.push_back(brick_box);
        builder.add_body(brick);
      }
  return builder.build();
}

void serve_ball(const GameConstants& constants, std::mt19937& serves, State& state) {
  std::uniform_real_distribution<double> along(-constants.serve_half_range, constants.serve_half_range);
  std::uniform_real_distribution<double> angle(constants.serve_min_angle, constants.serve_max_angle);
  std::bernoulli_distribution to_the_right(0.5);
  const double x = along(serves);
  const double radians = angle(serves) * std::numbers::pi / 180.0;
  const double sense = to_the_right(serves) ? 1.0 : -1.0;
  const auto ball = static_cast<std::size_t>(kBallBody);
  state.position[ball] = {x, 0, constants.serve_height};
  state.orientation[ball] = Quat::identity();
  state.linear_velocity[ball] = {sense * constants.ball_speed * std::cos(radians), 0,
                                 -constants.ball_speed * std::sin(radians)};
  state.angular_velocity[ball] = {0, 0, 0};
}

Game::Game(const GameConstants& constants, unsigned seed)
    : constants_(constants),
      scene_(build_scene(constants, constants.true_paddle_speed, true)),
      simulator_(scene_.model, scene_.params, scene_.state),
      serves_(seed),
      paddle_joint_(scene_.model.joint_index("slide")),
      first_brick_(kPaddleBody + 1),
      broken_(static_cast<std::size_t>(constants.brick_rows * constants.brick_columns), false),
      bricks_left_(constants.brick_rows * constants.brick_columns),
      lives_left_(constants.lives),
      controls_(1, 0.0) {
  serve();
}

void Game::serve() {
  State state = simulator_.state();
  serve_ball(constants_, serves_, state);
  simulator_.set_state(std::move(state));
}

FrameEvents Game::play(int action) {
  if (action < -1 || action > 1) throw Error(message("breakout: action ", action, " is not −1, 0 or +1"));
  if (over()) throw Error("breakout: the game is over");
  FrameEvents events;
  const Model& model = simulator_.model();
  for (int k = 0; k < constants_.substeps; ++k) {
    controls_[0] = joint_position(model, simulator_.state(), paddle_joint_, 0) + action * constants_.target_offset;
    const StepStatus status = simulator_.step(controls_);
    if (status.health != StateHealth::Ok) throw Error("breakout: " + health_message(model, status));
    // A brick the ball bounced off this step breaks: it leaves the box.
    State moved;
    for (const Contact& contact : simulator_.contacts()) {
      if (!(contact.normal_impulse > 0.0)) continue;
      for (const int body : {contact.body_a, contact.body_b}) {
        if (body < first_brick_) continue;
        const auto brick = static_cast<std::size_t>(body - first_brick_);
        if (broken_[brick]) continue;
        if (moved.body_count() == 0) moved = simulator_.state();
        broken_[brick] = true;
        moved.position[static_cast<std::size_t>(body)].z = kBrokenBrickHeight + static_cast<double>(brick);
        ++events.bricks_broken;
      }
    }
    if (moved.body_count() > 0) simulator_.set_state(std::move(moved));
  }
  bricks_left_ -= events.bricks_broken;
  score_ += events.bricks_broken;
  ++frames_;
  if (simulator_.state().position[static_cast<std::size_t>(kBallBody)].z < constants_.lost_height) {
    events.life_lost = true;
    --lives_left_;
    if (lives_left_ > 0) {
      serve();
      events.served = true;
    }
  }
  return events;
}

Observation Game::observe() const {
  const State& state = simulator_.state();
  const Vec3& ball = state.position[static_cast<std::size_t>(kBallBody)];
  return {ball.x, ball.z, state.position[static_cast<std::size_t>(kPaddleBody)].x};
}

}  // namespace diffphys::experiments::breakout
