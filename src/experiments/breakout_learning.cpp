// experiments/breakout_learning.cpp — random-action episodes of the game and the paddle
// speed's fit to them through Rollout::backward (breakout_learning.hpp).
#include "experiments/breakout_learning.hpp"

#include <chrono>
#include <cmath>
#include <memory>
#include <ostream>

#include "diffphys/error.hpp"
#include "diffphys/optimizer.hpp"
#include "diffphys/rollout.hpp"
#include "experiments/breakout_camera.hpp"

namespace diffphys::experiments::breakout {
namespace {

// The episode's actions as servo targets, decided at every simulator step from the model's
// own paddle coordinate q: target = q + action · offset, as the game does. Its derivative
// ∂target/∂q = 1 is carried back into x̄ (act_backward).
class ActionReplay final : public Controller {
 public:
  ActionReplay(const Model& model, const std::vector<int>& actions, int substeps, double offset)
      : model_(model), actions_(actions), substeps_(substeps), offset_(offset), joint_(model.joint_index("slide")) {}
  void act(int step, const State& state, std::span<double> controls) override {
    const int action = actions_[static_cast<std::size_t>(step / substeps_)];
    controls[0] = joint_position(model_, state, joint_, 0) + action * offset_;
  }
  void act_backward(int, const State& state, std::span<const double> control_gradient,
                    std::span<double> state_gradient) override {
    joint_position_vjp(model_, state, joint_, 0, control_gradient[0], state_gradient);
  }

 private:
  const Model& model_;
  const std::vector<int>& actions_;
  int substeps_;
  double offset_;
  int joint_;
};

// The model's state at an episode's first observation: the ball where it was seen, moving at
// the difference of its first two positions over a frame; the paddle where it was seen, at
// rest (its servo sets its velocity in the first step).
void initial_model_state(const GameConstants& constants, const Episode& episode, State& state) {
  const Observation& first = episode.observations[0];
  const Observation& second = episode.observations[1];
  const auto ball = static_cast<std::size_t>(kBallBody), paddle = static_cast<std::size_t>(kPaddleBody);
  state.position[ball] = {first.ball_x, 0, first.ball_z};
  state.linear_velocity[ball] = {(second.ball_x - first.ball_x) / constants.frame_time, 0,
                                 (second.ball_z - first.ball_z) / constants.frame_time};
  state.angular_velocity[ball] = {0, 0, 0};
  state.position[paddle] = {first.paddle_x, 0, constants.paddle_height};
  state.linear_velocity[paddle] = {0, 0, 0};
}

}  // namespace

std::vector<Episode> random_episodes(const GameConstants& constants, int episodes, int frames, unsigned seed,
                                     Vision vision) {
  if (episodes < 1 || frames < 2)
    throw Error(
        message("breakout: random episodes need at least 1 episode of 2 frames, not ", episodes, " of ", frames));
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> action(-1, 1);
  std::vector<Episode> result;
  for (int e = 0; e < episodes; ++e) {
    Game game(constants, seed + static_cast<unsigned>(e));
    std::unique_ptr<CameraEyes> eyes = vision == Vision::Camera ? std::make_unique<CameraEyes>(game) : nullptr;
    auto observe = [&] { return eyes ? eyes->see(game) : game.observe(); };
    Episode episode;
    episode.observations.push_back(observe());
    for (int f = 0; f < frames; ++f) {
      const int a = action(random);
      game.play(a);
      if (game.over()) break;  // its last ball is gone (and out of the camera's frame): not observed
      episode.actions.push_back(a);
      episode.observations.push_back(observe());
    }
    if (eyes) {
      episode.largest_camera_error = eyes->largest_error();
      episode.hidden_frames = eyes->hidden_frames();
    }
    result.push_back(std::move(episode));
  }
  return result;
}

struct PaddleSpeedLoss::Impl {
  Impl(const GameConstants& game_constants, const std::vector<Episode>& observed)
      : constants(game_constants),
        episodes(observed),
        scene(build_scene(game_constants, game_constants.true_paddle_speed, false)),
        params(scene.params) {
    for (const Episode& episode : episodes) {
      frame_count += static_cast<int>(episode.actions.size());
      for (std::size_t f = 1; f < episode.observations.size(); ++f)
        still_loss += std::pow(episode.observations[f].paddle_x - episode.observations[0].paddle_x, 2);
    }
    if (frame_count == 0) throw Error("breakout: no observed frames to fit the paddle speed to");
    still_loss /= frame_count;
    if (!(still_loss > 0.0))
      throw Error("breakout: the paddle never moved in the observed episodes: its speed cannot be fitted");
  }
  GameConstants constants;
  const std::vector<Episode>& episodes;
  Scene scene;
  Params params;  // the model's θ, its gain set to the speed being evaluated
  int frame_count = 0;
  double still_loss = 0.0;  // m²
};

PaddleSpeedLoss::PaddleSpeedLoss(const GameConstants& constants, const std::vector<Episode>& episodes)
    : impl_(std::make_unique<Impl>(constants, episodes)) {}
PaddleSpeedLoss::~PaddleSpeedLoss() = default;
int PaddleSpeedLoss::frames() const {
  return impl_->frame_count;
}
double PaddleSpeedLoss::still_paddle_loss() const {
  return impl_->still_loss;
}

double PaddleSpeedLoss::evaluate(double paddle_speed, double* gradient) {
  Impl& d = *impl_;
  if (!(paddle_speed > 0.0) || !std::isfinite(paddle_speed))
    throw Error(message("breakout: the paddle speed must be positive and finite, not ", paddle_speed, " m/s"));
  const Model& model = d.scene.model;
  d.params.slice(model, kPaddleGainSlice)[0] = paddle_speed / d.constants.target_offset;
  const int substeps = d.constants.substeps;
  const int joint = model.joint_index("slide");
  const double weight = 1.0 / d.frame_count;
  double loss = 0.0, gain_gradient = 0.0;
  Rollout rollout(model, d.params);
  State initial = d.scene.state;
  for (const Episode& episode : d.episodes) {
    const int frames = static_cast<int>(episode.actions.size());
    if (frames == 0) continue;
    initial_model_state(d.constants, episode, initial);
    ActionReplay replay(model, episode.actions, substeps, d.constants.target_offset);
    rollout.run(initial, replay, frames * substeps);
    for (int f = 1; f <= frames; ++f) {
      const double error = joint_position(model, rollout.state(f * substeps), joint, 0) -
                           episode.observations[static_cast<std::size_t>(f)].paddle_x;
      loss += weight * error * error;
    }
    if (!gradient) continue;
    const Gradients g = rollout.backward([&](int step, const State& state, std::span<double> dL_dx) {
      if (step == 0 || step % substeps != 0) return;
      const int f = step / substeps;
      const double error =
          joint_position(model, state, joint, 0) - episode.observations[static_cast<std::size_t>(f)].paddle_x;
      joint_position_vjp(model, state, joint, 0, 2.0 * weight * error, dL_dx);
    });
    gain_gradient += g.param(model, kPaddleGainSlice)[0];
  }
  // speed = gain · offset, so dL/d(speed) = dL/d(gain) / offset.
  if (gradient) *gradient = gain_gradient / d.constants.target_offset;
  return loss;
}

SpeedFit fit_paddle_speed(const GameConstants& constants, const std::vector<Episode>& episodes, double initial_speed,
                          int iterations, std::ostream* progress) {
  PaddleSpeedLoss loss(constants, episodes);
  SpeedFit fit;
  for (const Episode& episode : episodes) fit.frames_used += static_cast<int>(episode.observations.size());
  std::vector<double> log_speed{std::log(initial_speed)};
  GradientDescent descent{OptimizerSettings(0.25, {}, GradientClip::value(1.0))};
  const double scale = 1.0 / loss.still_paddle_loss();
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i <= iterations; ++i) {
    const double speed = std::exp(log_speed[0]);
    double gradient = 0.0;
    const double value = loss.evaluate(speed, i < iterations ? &gradient : nullptr);
    fit.speeds.push_back(speed);
    fit.losses.push_back(value);
    if (progress && (i % 10 == 0 || i == iterations))
      *progress << "learn " << i << "/" << iterations << ": paddle speed " << speed << " m/s (truth "
                << constants.true_paddle_speed << "), trajectory MSE " << value << " m²" << std::endl;
    if (i == iterations) break;
    // Chain rule to the normalised loss in log s: ∂(L·scale)/∂log s = scale · s · ∂L/∂s.
    const std::vector<double> log_gradient{scale * speed * gradient};
    descent.step(log_speed, log_gradient);
  }
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  fit.learned = fit.speeds.back();
  return fit;
}

}  // namespace diffphys::experiments::breakout
