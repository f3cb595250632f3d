// experiments/breakout.cpp — `diffphys experiment breakout` (breakout.hpp): random-action play,
// the paddle speed's fit, and games on fixed seeds by four players — random, hand-written
// (chase the ball's x), and iLQR MPC on the agent's model before and after learning.
#include "experiments/breakout.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "experiments/breakout_camera.hpp"
#include "experiments/breakout_control.hpp"
#include "experiments/breakout_game.hpp"
#include "experiments/breakout_learning.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

using namespace breakout;

// The agent's first guess of the paddle speed: four times the game's (1.5 m/s). A model that
// believes the paddle faster than it is plans small moves, which round to "stay".
constexpr double kInitialSpeedFactor = 4.0;
// Learned within this fraction of the truth (the --quick variant's assertion).
constexpr double kSpeedTolerance = 0.01;

struct PlayerScores {
  std::string name;
  std::vector<GameResult> games;
  double mean_score() const {
    double sum = 0.0;
    for (const GameResult& game : games) sum += game.score;
    return games.empty() ? 0.0 : sum / static_cast<double>(games.size());
  }
  double mean_lives_lost() const {
    double sum = 0.0;
    for (const GameResult& game : games) sum += game.lives_lost;
    return games.empty() ? 0.0 : sum / static_cast<double>(games.size());
  }
  double ms_per_frame() const {
    double seconds = 0.0;
    int frames = 0;
    for (const GameResult& game : games) {
      seconds += game.seconds;
      frames += game.frames;
    }
    return frames > 0 ? 1e3 * seconds / frames : 0.0;
  }
};

}  // namespace

ExperimentResult run_breakout(const ExperimentOptions& options) {
  if (options.quick && options.full)
    throw Error(
        "experiment breakout: --quick and --full cannot be combined (--quick is the test variant, "
        "--full the longer run)");
  const Stopwatch stopwatch;
  const bool quick = options.quick;
  const GameConstants constants;
  const double initial_speed = kInitialSpeedFactor * constants.true_paddle_speed;
  // --variant camera: every player sees the game through the engine's camera (breakout_camera.hpp).
  const bool camera = std::find(options.variants.begin(), options.variants.end(), "camera") != options.variants.end();
  const Vision vision = camera ? Vision::Camera : Vision::State;
  double largest_camera_error = 0.0;  // m
  int hidden_frames = 0;              // frames in which the camera did not see the ball or the paddle

  // Learning: random-action episodes of the game, the model's speed fitted to them.
  const int episodes = quick ? 3 : (options.full ? 10 : 5);
  const int episode_frames = 40;
  const int iterations = quick ? 40 : 60;
  const std::vector<Episode> play = random_episodes(constants, episodes, episode_frames, options.seed * 7919u, vision);
  for (const Episode& episode : play)
    largest_camera_error = std::max(largest_camera_error, episode.largest_camera_error);
  for (const Episode& episode : play) hidden_frames += episode.hidden_frames;
  if (options.progress)
    *options.progress << "learning from " << episodes << " random-action episodes of " << episode_frames
                      << " frames; the model's paddle speed starts at " << initial_speed << " m/s" << std::endl;
  const SpeedFit fit = fit_paddle_speed(constants, play, initial_speed, iterations, options.progress);
  const double relative_error = std::abs(fit.learned - constants.true_paddle_speed) / constants.true_paddle_speed;

  // Games on fixed seeds: every player meets the same serves.
  const int games = quick ? 2 : (options.full ? 10 : 5);
  const int max_frames = quick ? 450 : 1500;
  std::vector<PlayerScores> players;
  auto play_games = [&](const std::string& name, auto make_policy) {
    PlayerScores scores{name, {}};
    for (int g = 0; g < games; ++g) {
      const unsigned seed = options.seed * 1000u + static_cast<unsigned>(g);
      auto policy = make_policy(seed);
      scores.games.push_back(play_game(constants, *policy, seed, max_frames, vision));
      const GameResult& result = scores.games.back();
      largest_camera_error = std::max(largest_camera_error, result.largest_camera_error);
      hidden_frames += result.hidden_frames;
      if (options.progress)
        *options.progress << name << ", game " << g + 1 << "/" << games << ": " << result.score << " bricks, "
                          << result.lives_lost << " lives lost in " << result.frames << " frames ("
                          << 1e3 * result.seconds / std::max(1, result.frames) << " ms per frame)" << std::endl;
    }
    players.push_back(std::move(scores));
  };
  play_games("random", [](unsigned seed) { return std::make_unique<RandomPolicy>(seed + 17u); });
  play_games("chase", [&](unsigned) { return std::make_unique<ChasePolicy>(0.5 * constants.paddle_half_extents[0]); });
  play_games("ilqr_learned", [&](unsigned) { return std::make_unique<IlqrPolicy>(constants, fit.learned); });
  play_games("ilqr_initial", [&](unsigned) { return std::make_unique<IlqrPolicy>(constants, initial_speed); });

  // Not in --quick. (1) The fit from less play: one random-action episode of 2, 4, 8 and 16
  // frames. (2) The paper's Fig. 6 plots reward against the data learned from; here the model is
  // exact once its one parameter is, so the reward follows the speed's error: the same games by
  // iLQR on the speeds the fit passed through after 5, 10 and 15 updates.
  struct FitPoint {
    int frames_of_play = 0;
    double learned = 0.0;
  };
  std::vector<FitPoint> less_play;
  struct PathPoint {
    int update = 0;
    double speed = 0.0;
    PlayerScores scores;
  };
  std::vector<PathPoint> along_fit;
  if (!quick) {
    for (const int frames : {2, 4, 8, 16}) {
      const std::vector<Episode> short_play =
          random_episodes(constants, 1, frames, options.seed * 7919u + 101u, vision);
      less_play.push_back({static_cast<int>(short_play[0].observations.size()),
                           fit_paddle_speed(constants, short_play, initial_speed, iterations, nullptr).learned});
      if (options.progress)
        *options.progress << "fit from " << less_play.back().frames_of_play
                          << " frames of play: " << less_play.back().learned << " m/s" << std::endl;
    }
    for (const int update : {5, 10, 15}) {
      PathPoint point{update, fit.speeds[static_cast<std::size_t>(update)], {}};
      play_games("ilqr_update_" + std::to_string(update),
                 [&](unsigned) { return std::make_unique<IlqrPolicy>(constants, point.speed); });
      point.scores = players.back();
      players.pop_back();
      along_fit.push_back(point);
    }
  }

  // Outputs.
  const std::filesystem::path out = experiment_folder(options, "breakout");
  CsvTable fitting({"update", "paddle_speed", "relative_error", "trajectory_mse"});
  for (std::size_t i = 0; i < fit.speeds.size(); ++i)
    fitting.add_row({static_cast<double>(i), fit.speeds[i],
                     (fit.speeds[i] - constants.true_paddle_speed) / constants.true_paddle_speed, fit.losses[i]});
  fitting.write(out / "fitting.csv");
  CsvTable scores({"player", "game", "seed", "bricks", "lives_lost", "frames", "seconds"});
  for (std::size_t p = 0; p < players.size(); ++p)
    for (std::size_t g = 0; g < players[p].games.size(); ++g) {
      const GameResult& game = players[p].games[g];
      scores.add_row({static_cast<double>(p), static_cast<double>(g), static_cast<double>(options.seed * 1000u + g),
                      static_cast<double>(game.score), static_cast<double>(game.lives_lost),
                      static_cast<double>(game.frames), game.seconds});
    }
  scores.write(out / "scores.csv");

  CsvTable reward({"update", "paddle_speed", "relative_error", "mean_bricks", "mean_lives_lost"});
  auto add_reward_row = [&](int update, double speed, const PlayerScores& player) {
    reward.add_row({static_cast<double>(update), speed,
                    (speed - constants.true_paddle_speed) / constants.true_paddle_speed, player.mean_score(),
                    player.mean_lives_lost()});
  };
  add_reward_row(0, initial_speed, players[3]);
  for (const PathPoint& point : along_fit) add_reward_row(point.update, point.speed, point.scores);
  add_reward_row(iterations, fit.learned, players[2]);
  reward.write(out / "reward_along_fit.csv");
  CsvTable less({"frames_of_play", "paddle_speed", "relative_error"});
  for (const FitPoint& point : less_play)
    less.add_row({static_cast<double>(point.frames_of_play), point.learned,
                  (point.learned - constants.true_paddle_speed) / constants.true_paddle_speed});
  less.write(out / "fit_vs_frames.csv");

  const PlayerScores& random = players[0];
  const PlayerScores& learned = players[2];
  // What cannot be faked: the speed is learned from a first guess 4× off, and the controller
  // on the learned model breaks clearly more bricks than random play on the same serves.
  const bool learned_speed = relative_error <= kSpeedTolerance;
  const bool beats_random = learned.mean_score() >= 2.0 * random.mean_score() + 2.0;
  const bool success = learned_speed && beats_random;

  nlohmann::json json;
  json["experiment"] = "breakout";
  json["quick"] = quick;
  json["full"] = options.full;
  json["seed"] = options.seed;
  json["vision"] = camera ? "camera" : "state";
  if (camera) {
    json["camera_pixels"] = {kCameraWidth, kCameraHeight};
    json["largest_camera_error"] = largest_camera_error;
    json["camera_hidden_frames"] = hidden_frames;
  }
  json["variants"] = options.variants;
  json["true_paddle_speed"] = constants.true_paddle_speed;
  json["initial_paddle_speed"] = initial_speed;
  json["learned_paddle_speed"] = fit.learned;
  json["relative_error"] = relative_error;
  json["speed_tolerance"] = kSpeedTolerance;
  json["episodes"] = episodes;
  json["frames_of_play"] = fit.frames_used;
  json["updates"] = iterations;
  json["fit_seconds"] = fit.seconds;
  json["trajectory_mse"] = {fit.losses.front(), fit.losses.back()};
  json["games"] = games;
  json["max_frames"] = max_frames;
  json["bricks"] = constants.brick_rows * constants.brick_columns;
  json["lives"] = constants.lives;
  json["horizon"] = kHorizon;
  for (const PlayerScores& player : players) {
    nlohmann::json& entry = json["players"][player.name];
    entry["mean_bricks"] = player.mean_score();
    entry["mean_lives_lost"] = player.mean_lives_lost();
    entry["ms_per_frame"] = player.ms_per_frame();
    for (const GameResult& game : player.games) {
      entry["bricks"].push_back(game.score);
      entry["lives_lost"].push_back(game.lives_lost);
      entry["frames"].push_back(game.frames);
    }
  }
  for (const FitPoint& point : less_play)
    json["fit_vs_frames"].push_back(
        {{"frames_of_play", point.frames_of_play}, {"learned_paddle_speed", point.learned}});
  for (const PathPoint& point : along_fit)
    json["reward_along_fit"].push_back({{"update", point.update},
                                        {"paddle_speed", point.speed},
                                        {"mean_bricks", point.scores.mean_score()},
                                        {"mean_lives_lost", point.scores.mean_lives_lost()}});
  json["paper"] = {{"figure", "Fig. 6: reward against frames of play (log scale); human level 31"},
                   {"numbers", "none in the text"}};
  json["wall_time_s"] = stopwatch.seconds();
  json["cpu_time_s"] = stopwatch.cpu_seconds();
  json["out"] = out.string();
  json["success"] = success;
  const std::string text = json.dump();
  write_text_file(out / "figures.json", text + "\n");
  return {text, success};
}

}  // namespace diffphys::experiments
