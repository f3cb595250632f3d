// experiments/breakout_control.cpp — the policies that play the Breakout-like game and a game
// played to its end (breakout_control.hpp).
#include "experiments/breakout_control.hpp"

#include <algorithm>
#include <chrono>

#include "diffphys/error.hpp"
#include "experiments/breakout_camera.hpp"

namespace diffphys::experiments::breakout {

int ChasePolicy::act(const Observation& observation) {
  const double offset = observation.ball_x - observation.paddle_x;
  if (offset > dead_band_) return 1;
  if (offset < -dead_band_) return -1;
  return 0;
}

FrameDynamics::FrameDynamics(const Model& model, const Params& params, int substeps, double target_offset)
    : step_dynamics_(model, params, 1), substeps_(substeps), target_offset_(target_offset) {
  if (substeps < 1) throw Error(message("breakout: substeps per frame must be at least 1, not ", substeps));
  const auto n = static_cast<std::size_t>(tangent_size());
  current_.resize(static_cast<std::size_t>(state_size()));
  next_.resize(current_.size());
  step_A_.resize(n * n);
  step_B_.resize(n);
  product_.resize(n * n);
  chained_B_.resize(n);
}

void FrameDynamics::step(std::span<const double> state, std::span<const double> controls, std::span<double> next) {
  std::copy(state.begin(), state.end(), current_.begin());
  for (int k = 0; k < substeps_; ++k) {
    const double target = current_[kPaddleXPacked] + controls[0] * target_offset_;
    step_dynamics_.step(current_, std::span(&target, 1), next_);
    std::swap(current_, next_);
  }
  std::copy(current_.begin(), current_.end(), next.begin());
}

void FrameDynamics::linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                              std::span<double> A, std::span<double> B) {
  const auto n = static_cast<std::size_t>(tangent_size());
  std::copy(state.begin(), state.end(), current_.begin());
  std::fill(A.begin(), A.end(), 0.0);
  for (std::size_t i = 0; i < n; ++i) A[i * n + i] = 1.0;
  std::fill(B.begin(), B.end(), 0.0);
  for (int k = 0; k < substeps_; ++k) {
    const double target = current_[kPaddleXPacked] + controls[0] * target_offset_;
    step_dynamics_.linearize(current_, std::span(&target, 1), next_, step_A_, step_B_);
    std::swap(current_, next_);
    // The target follows q (the paddle's x, tangent entry kPaddleXTangent) and u · offset.
    for (std::size_t i = 0; i < n; ++i) {
      step_A_[i * n + kPaddleXTangent] += step_B_[i];
      step_B_[i] *= target_offset_;
    }
    // A ← A_k A, B ← A_k B + B_k.
    for (std::size_t i = 0; i < n; ++i) {
      double b = step_B_[i];
      for (std::size_t j = 0; j < n; ++j) b += step_A_[i * n + j] * B[j];
      chained_B_[i] = b;
      for (std::size_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::size_t l = 0; l < n; ++l) sum += step_A_[i * n + l] * A[l * n + j];
        product_[i * n + j] = sum;
      }
    }
    std::copy(product_.begin(), product_.end(), A.begin());
    std::copy(chained_B_.begin(), chained_B_.end(), B.begin());
  }
  std::copy(current_.begin(), current_.end(), next.begin());
}

namespace {

// w (x_paddle − x_ball)² while the ball descends, w_centre x_paddle² otherwise; its derivatives
// with respect to the tangent (x entries are positions, so ∂/∂δp_x = ∂/∂x).
double tracking_term(std::span<const double> state, CostDerivatives* derivatives) {
  const bool descending = state[kBallVzPacked] < 0.0;
  const double w = descending ? TrackingCost::kWeight : TrackingCost::kCentreWeight;
  const double error = state[kPaddleXPacked] - (descending ? state[kBallXPacked] : 0.0);
  if (derivatives) {
    const auto n = derivatives->x.size();
    derivatives->x[kPaddleXTangent] += 2 * w * error;
    derivatives->xx[kPaddleXTangent * n + kPaddleXTangent] += 2 * w;
    if (descending) {
      derivatives->x[kBallXTangent] -= 2 * w * error;
      derivatives->xx[kBallXTangent * n + kBallXTangent] += 2 * w;
      derivatives->xx[kBallXTangent * n + kPaddleXTangent] -= 2 * w;
      derivatives->xx[kPaddleXTangent * n + kBallXTangent] -= 2 * w;
    }
  }
  return w * error * error;
}

}  // namespace

double TrackingCost::stage(int, std::span<const double> state, std::span<const double> controls,
                           CostDerivatives* derivatives) {
  const double u = controls[0];
  if (derivatives) {
    derivatives->u[0] += kControlWeight * u;
    derivatives->uu[0] += kControlWeight;
  }
  return tracking_term(state, derivatives) + 0.5 * kControlWeight * u * u;
}

double TrackingCost::final(std::span<const double> state, CostDerivatives* derivatives) {
  return tracking_term(state, derivatives);
}

struct IlqrPolicy::Impl {
  Impl(const GameConstants& game_constants, double speed)
      : constants(game_constants),
        scene(build_scene(game_constants, speed, false)),
        dynamics(scene.model, scene.params, game_constants.substeps, game_constants.target_offset),
        mpc(dynamics, cost, kHorizon, settings()),
        model_state(scene.state),
        packed(static_cast<std::size_t>(dynamics.state_size())) {}

  static IlqrSettings settings() {
    IlqrSettings settings;
    settings.max_iterations = 5;
    settings.tolerance = 1e-6;
    settings.control_lower = {-1.0};
    settings.control_upper = {1.0};
    return settings;
  }

  GameConstants constants;
  Scene scene;
  FrameDynamics dynamics;  // references scene.params
  TrackingCost cost;
  Mpc mpc;
  State model_state;
  std::vector<double> packed;
  Observation previous;
  bool has_previous = false;
};

IlqrPolicy::IlqrPolicy(const GameConstants& constants, double model_paddle_speed)
    : impl_(std::make_unique<Impl>(constants, model_paddle_speed)) {}
IlqrPolicy::~IlqrPolicy() = default;

void IlqrPolicy::new_ball() {
  impl_->has_previous = false;
  impl_->mpc.reset();
}

int IlqrPolicy::act(const Observation& observation) {
  Impl& d = *impl_;
  const auto ball = static_cast<std::size_t>(kBallBody), paddle = static_cast<std::size_t>(kPaddleBody);
  State& state = d.model_state;
  state.position[ball] = {observation.ball_x, 0, observation.ball_z};
  // The paper: "The ball's velocity is estimated by the difference in its position from the
  // last two frames."
  const double frame = d.constants.frame_time;
  state.linear_velocity[ball] = d.has_previous ? Vec3{(observation.ball_x - d.previous.ball_x) / frame, 0,
                                                      (observation.ball_z - d.previous.ball_z) / frame}
                                               : Vec3{0, 0, 0};
  // A paddle seen a fraction of a millimetre beyond its joint's limit (camera frames) would start
  // the model with the limit's row active, whose fixed active set gives the plan no way off the
  // wall (∂x/∂u = 0): it is put at the limit.
  const double reach = d.constants.half_width - d.constants.paddle_half_extents[0];
  state.position[paddle] = {std::clamp(observation.paddle_x, -reach, reach), 0, d.constants.paddle_height};
  state.linear_velocity[paddle] = {0, 0, 0};
  d.previous = observation;
  d.has_previous = true;
  d.dynamics.simulator_dynamics().pack(state, d.packed);
  const double u = d.mpc.control(d.packed)[0];
  iterations_ += d.mpc.last_plan().iterations;
  ++plans_;
  // The nearest of the actions' velocities −s, 0, +s to the planned u · s.
  if (u > 0.5) return 1;
  if (u < -0.5) return -1;
  return 0;
}

GameResult play_game(const GameConstants& constants, Policy& policy, unsigned seed, int max_frames, Vision vision) {
  const auto begin = std::chrono::steady_clock::now();
  Game game(constants, seed);
  std::unique_ptr<CameraEyes> eyes = vision == Vision::Camera ? std::make_unique<CameraEyes>(game) : nullptr;
  policy.new_ball();
  while (!game.over() && game.frames() < max_frames) {
    const FrameEvents events = game.play(policy.act(eyes ? eyes->see(game) : game.observe()));
    if (events.served) policy.new_ball();
  }
  GameResult result;
  result.score = game.score();
  result.lives_lost = game.lives_lost();
  result.frames = game.frames();
  if (eyes) {
    result.largest_camera_error = eyes->largest_error();
    result.hidden_frames = eyes->hidden_frames();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return result;
}

}  // namespace diffphys::experiments::breakout
