// tests/breakout_test.cpp — the breakout experiment (experiments/breakout*.hpp): the game's
// physics against closed forms (the paddle moves at its speed per action; the ball keeps its
// speed through elastic bounces and stays in the x–z plane without spinning; a brick the ball
// hits breaks), the trajectory loss's gradient against central differences, and the --quick
// variant: the paddle speed learned from a first guess 4× off, and iLQR on the learned model
// breaking clearly more bricks than random play on the same serves, deterministically; the
// camera's colour segmentation against the state; and the command refusing bad options, naming
// them.
#include "experiments/breakout.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test_helpers.hpp"
#include "diffphys/error.hpp"
#include "experiments/breakout_camera.hpp"
#include "experiments/breakout_control.hpp"
#include "experiments/breakout_game.hpp"
#include "experiments/breakout_learning.hpp"

namespace diffphys::experiments::breakout {
namespace {

TEST(Breakout, PaddleMovesAtItsSpeedPerAction) {
  // x after n frames of action a from rest at 0: a · s · n · T (no limit reached).
  const GameConstants constants;
  Game game(constants, 3);
  const double frame_travel = constants.true_paddle_speed * constants.frame_time;
  for (int f = 0; f < 4; ++f) game.play(1);
  EXPECT_NEAR(game.observe().paddle_x, 4 * frame_travel, 1e-9);
  for (int f = 0; f < 3; ++f) game.play(0);
  EXPECT_NEAR(game.observe().paddle_x, 4 * frame_travel, 1e-9);
  for (int f = 0; f < 6; ++f) game.play(-1);
  EXPECT_NEAR(game.observe().paddle_x, -2 * frame_travel, 1e-9);
  EXPECT_THROW(game.play(2), Error);
}

TEST(Breakout, BallKeepsItsSpeedInThePlaneAndBreaksBricks) {
  // Restitution 1, friction 0, no gravity: |v| stays the serve's speed through every bounce
  // (walls, bricks, the paddle), y and ω stay 0 (to round-off); the score counts broken bricks.
  const GameConstants constants;
  Game game(constants, 5);
  ChasePolicy chase(0.5 * constants.paddle_half_extents[0]);
  int bounces = 0;
  Vec3 previous_velocity = game.simulator().state().linear_velocity[kBallBody];
  while (game.frames() < 900 && !game.over()) {
    const FrameEvents events = game.play(chase.act(game.observe()));
    const State& state = game.simulator().state();
    const Vec3& v = state.linear_velocity[kBallBody];
    if (!events.served) {
      EXPECT_NEAR(norm(v), constants.ball_speed, 1e-6 * constants.ball_speed) << "frame " << game.frames();
      if (dot(v, previous_velocity) < 0.99 * constants.ball_speed * constants.ball_speed) ++bounces;
    }
    previous_velocity = v;
    ASSERT_NEAR(state.position[kBallBody].y, 0.0, 1e-12);
    ASSERT_NEAR(v.y, 0.0, 1e-12);
    ASSERT_LT(norm(state.angular_velocity[kBallBody]), 1e-10);  // round-off of the contact rows
    EXPECT_LE(std::abs(state.position[kBallBody].x), constants.half_width - constants.ball_radius + 1e-6);
    EXPECT_LE(state.position[kBallBody].z, constants.height - constants.ball_radius + 1e-6);
  }
  EXPECT_GT(bounces, 10);
  EXPECT_GT(game.score(), 3);  // bricks broke ...
  int gone = 0;                // ... and left the box: exactly `score` of them
  const State& state = game.simulator().state();
  for (int b = kPaddleBody + 1; b < state.body_count(); ++b) gone += state.position[b].z > constants.height ? 1 : 0;
  EXPECT_EQ(gone, game.score());
  EXPECT_EQ(game.bricks_left(), constants.brick_rows * constants.brick_columns - game.score());
}

TEST(Breakout, ModelReplaysThePlayExactlyAtTheTrueSpeed) {
  // The model is the game without its bricks: at the game's own speed it reproduces the
  // observed paddle to round-off, so the loss's minimum is the truth.
  const GameConstants constants;
  const std::vector<Episode> play = random_episodes(constants, 2, 40, 11);
  PaddleSpeedLoss loss(constants, play);
  EXPECT_EQ(loss.frames(), 80);
  EXPECT_LT(loss.evaluate(constants.true_paddle_speed, nullptr), 1e-20);
  EXPECT_GT(loss.evaluate(1.1 * constants.true_paddle_speed, nullptr), 1e-4);
  // Random play loses its 5 balls long before 3,000 frames: the episode stops before the action
  // that ended the game, every action between two observations.
  const std::vector<Episode> long_play = random_episodes(constants, 1, 3000, 11);
  EXPECT_LT(long_play[0].actions.size(), 3000u);
  EXPECT_EQ(long_play[0].observations.size(), long_play[0].actions.size() + 1);
}

TEST(Breakout, TrajectoryLossGradientMatchesCentralDifferences) {
  // dL/d(speed) from Rollout::backward (the servo gain's slice of dL/dθ and the target's path
  // through q) against central differences with a step of 1e-5 of the speed, at speeds below,
  // near and above the truth.
  const GameConstants constants;
  const std::vector<Episode> play = random_episodes(constants, 2, 30, 4);
  PaddleSpeedLoss loss(constants, play);
  for (const double speed : {0.7, 1.45, 3.0, 6.0}) {
    double gradient = 0.0;
    loss.evaluate(speed, &gradient);
    const double step = 1e-5 * speed;
    const double central = (loss.evaluate(speed + step, nullptr) - loss.evaluate(speed - step, nullptr)) / (2 * step);
    EXPECT_NEAR(gradient, central, 1e-6 * std::abs(central) + 1e-12) << "speed " << speed;
    EXPECT_GT(std::abs(gradient), 1e-4) << "speed " << speed;  // not a vanishing gradient
  }
}

TEST(Breakout, FrameDynamicsJacobiansMatchCentralDifferences) {
  // One frame (two simulator steps, target q + u · offset at each) from a state with the ball
  // in flight: the columns of A for the paddle's x and the ball's velocity, and B, against
  // central differences of FrameDynamics::step.
  const GameConstants constants;
  Scene scene = build_scene(constants, 1.5, false);
  FrameDynamics dynamics(scene.model, scene.params, constants.substeps, constants.target_offset);
  State state = scene.state;
  state.position[kBallBody] = {0.1, 0, 0.8};
  state.linear_velocity[kBallBody] = {0.6, 0, -1.0};
  state.position[kPaddleBody] = {-0.2, 0, constants.paddle_height};
  const int n = dynamics.tangent_size(), size = dynamics.state_size();
  std::vector<double> x(static_cast<std::size_t>(size)), next(x.size()), A(static_cast<std::size_t>(n * n)),
      B(static_cast<std::size_t>(n)), plus(x.size()), minus(x.size()), d(static_cast<std::size_t>(n));
  dynamics.simulator_dynamics().pack(state, x);
  const double u = 0.3;
  dynamics.linearize(x, std::span(&u, 1), next, A, B);
  const double h = 1e-6;
  for (const double du : {h, -h}) {
    const double v = u + du;
    dynamics.step(x, std::span(&v, 1), du > 0 ? plus : minus);
  }
  dynamics.difference(plus, minus, d);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(B[i], d[i] / (2 * h), 1e-6) << "B row " << i;
  EXPECT_NEAR(B[kPaddleXTangent], constants.true_paddle_speed * constants.frame_time, 1e-9);
  for (const int column : {kPaddleXTangent, kBallBody * 12 + 6, kBallBody * 12 + 8}) {
    // Packed and tangent entries coincide for positions and velocities: 13·b + k ↔ 12·b + k (k < 3),
    // 13·b + 7 + k ↔ 12·b + 6 + k.
    const int body = column / 12, k = column % 12;
    const int packed = body * 13 + (k < 3 ? k : k + 1);
    std::vector<double> shifted = x;
    shifted[static_cast<std::size_t>(packed)] += h;
    dynamics.step(shifted, std::span(&u, 1), plus);
    shifted[static_cast<std::size_t>(packed)] -= 2 * h;
    dynamics.step(shifted, std::span(&u, 1), minus);
    dynamics.difference(plus, minus, d);
    for (int i = 0; i < n; ++i)
      EXPECT_NEAR(A[static_cast<std::size_t>(i * n + column)], d[static_cast<std::size_t>(i)] / (2 * h), 1e-6)
          << "A row " << i << ", column " << column;
  }
}

TEST(Breakout, CameraFindsTheBallAndThePaddleByColour) {
  // Through 300 frames of a game, the colour segmentation of the camera's frames places the
  // ball and the paddle where the state has them, to a tenth of a 1.1 cm pixel.
  const GameConstants constants;
  Game game(constants, 5);
  CameraEyes eyes(game);
  ChasePolicy chase(0.5 * constants.paddle_half_extents[0]);
  for (int f = 0; f < 300 && !game.over(); ++f) {
    eyes.see(game);  // compared with the state inside (largest_error)
    game.play(chase.act(game.observe()));
  }
  EXPECT_LT(eyes.largest_error(), 1e-3);  // measured 0.38 mm; with the default shading 5 mm
  EXPECT_EQ(eyes.hidden_frames(), 0);  // both were in every frame
  EXPECT_EQ(eyes.last_frame().width, kCameraWidth);
}

TEST(Breakout, QuickVariantLearnsTheSpeedAndOutscoresRandomPlay) {
  ExperimentOptions options;
  options.quick = true;
  options.out_dir = testing::fresh_test_folder("breakout").string();
  const ExperimentResult result = run_breakout(options);
  const nlohmann::json json = nlohmann::json::parse(result.json);
  EXPECT_TRUE(result.success) << result.json;
  // From 6 m/s, within 1% of the game's 1.5 m/s.
  EXPECT_DOUBLE_EQ(json.at("initial_paddle_speed").get<double>(), 6.0);
  EXPECT_NEAR(json.at("learned_paddle_speed").get<double>(), 1.5, 0.01 * 1.5) << result.json;
  const auto& players = json.at("players");
  const double learned = players.at("ilqr_learned").at("mean_bricks").get<double>();
  const double random = players.at("random").at("mean_bricks").get<double>();
  EXPECT_GE(learned, 2.0 * random + 2.0) << result.json;
  EXPECT_LT(players.at("ilqr_learned").at("mean_lives_lost").get<double>(),
            players.at("random").at("mean_lives_lost").get<double>());
  const std::filesystem::path out = json.at("out").get<std::string>();
  for (const char* file : {"fitting.csv", "scores.csv", "figures.json"})
    EXPECT_TRUE(std::filesystem::exists(out / file));
  // Deterministic: the same seed gives the same figures (times aside).
  nlohmann::json again = nlohmann::json::parse(run_breakout(options).json);
  nlohmann::json first = json;
  for (nlohmann::json* figures : {&first, &again}) {
    figures->erase("wall_time_s");
    figures->erase("cpu_time_s");
    figures->erase("fit_seconds");
    for (auto& [name, player] : figures->at("players").items()) player.erase("ms_per_frame");
  }
  EXPECT_EQ(first, again);
}

TEST(Breakout, CommandRefusesBadOptionsNamingThem) {
  // Through `diffphys experiment breakout`: exit 1 and a message naming the option and value.
  const std::string out = " --out " + testing::fresh_test_folder("breakout_bad_options").string();
  const std::pair<const char*, const char*> cases[] = {
      {"--quick --full", "--quick and --full cannot be combined"},
      {"--variant pixels", "unknown --variant 'pixels'; it has: camera"},
      {"--seed -3", "--seed: expected an integer in [0, 4294967295], got -3"},
  };
  for (const auto& [options, expected] : cases) {
    const auto [status, text] =
        testing::run_cli(std::string("experiment breakout ") + options + out, "breakout_bad", 60);
    EXPECT_EQ(status, 1) << options << ": " << text;
    EXPECT_NE(text.find(expected), std::string::npos) << options << ": " << text;
  }
}

}  // namespace
}  // namespace diffphys::experiments::breakout
