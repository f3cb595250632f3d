// tests/state_health_test.cpp — state health in every step (issue #19; docs/robustness.md,
// "State health"): what the step reports when its state is NaN or too fast, what `simulate`
// does with it, and the scales refused before the first step (model/scale_limits.hpp).
//
// Each case here was silent garbage before: the step said "converged" and `simulate` exited 0
// with a 1e300 mass ratio (NaN), a 1e18 one (a 1 g ball thrown to 464 m), a sphere 5 m under
// the ground (expelled at 1020 m/s), dt = 1e300 or a position of 1e308 (−inf and null in the
// trajectory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cli_test_helpers.hpp"
#include "diffphys/error.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "test_paths.hpp"

// A namespace of its own: the tests are one unity build.
namespace diffphys::state_health_test {
namespace {

// A 1 kg ball of radius 10 cm at height z over the ground plane; `solver` is the scene's
// "solver" object (may be empty).
std::string ball_scene(double z, const std::string& solver = "{}") {
  return R"({"dt": 0.001, "ground": true, "solver": )" + solver +
         R"(, "bodies": [{"name": "ball", "position": [0, 0, )" + std::to_string(z) +
         R"(], "mass": 1, "shapes": [{"type": "sphere", "radius": 0.1}]}]})";
}

std::string refusal(const std::string& json) {
  try {
    parse_scene(json, "scene.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(accepted)";
}

// Steps `scene` from its own state `steps` times; returns the first unhealthy status, or the
// last status when all were healthy.
StepStatus first_unhealthy(const Scene& scene, const State& initial, int steps, int* step_number = nullptr) {
  State state = initial, next;
  Workspace workspace;
  StepStatus status;
  for (int t = 1; t <= steps; ++t) {
    status = step(scene.model, scene.params, state, scene.controls, next, workspace);
    std::swap(state, next);
    if (status.health != StateHealth::Ok) {
      if (step_number) *step_number = t;
      return status;
    }
  }
  return status;
}

TEST(StateHealth, SphereUnderTheGroundIsReportedTooFastAtItsFirstStep) {
  const Scene scene = parse_scene(ball_scene(-5.0));
  int at = 0;
  const StepStatus status = first_unhealthy(scene, scene.state, 10, &at);
  EXPECT_EQ(at, 1);
  EXPECT_EQ(status.health, StateHealth::TooFast);
  EXPECT_FALSE(status.converged) << "an unhealthy step is never reported converged";
  EXPECT_EQ(status.health_body, 1);
  EXPECT_FALSE(status.health_angular);
  EXPECT_NEAR(status.health_value, 1019.98, 0.01);
  const std::string text = health_message(scene.model, status);
  EXPECT_NE(text.find("body 'ball': linear speed 1019.98 m/s above solver.max_speed 1000 m/s"), std::string::npos)
      << text;
  EXPECT_STREQ(to_string(status.health), "too_fast");
}

TEST(StateHealth, NonFiniteStateIsReportedInEveryFormulation) {
  for (const char* solver : {R"({})", R"({"type": "pgs"})", R"({"formulation": "convex"})"}) {
    SCOPED_TRACE(solver);
    const Scene scene = parse_scene(ball_scene(1.0, solver));
    State initial = scene.state;
    initial.linear_velocity[1].z = std::numeric_limits<double>::quiet_NaN();  // step() does not validate its input
    const StepStatus status = first_unhealthy(scene, initial, 1);
    EXPECT_EQ(status.health, StateHealth::NonFinite);
    EXPECT_FALSE(status.converged);
    EXPECT_EQ(status.health_body, 1);
    EXPECT_TRUE(std::isnan(status.health_value));
    EXPECT_NE(health_message(scene.model, status).find("body 'ball': non-finite state"), std::string::npos);
  }
}

TEST(StateHealth, JointCoordinatesAreCheckedToo) {
  const Scene scene =
      load_scene(std::filesystem::path(test_paths::source_dir()) / "examples/scenes/chain10_reduced.json");
  ASSERT_EQ(scene.model.solver.coordinates, Coordinates::Reduced);
  State initial = scene.state;
  initial.angular_velocity[3].x = std::numeric_limits<double>::infinity();
  const StepStatus status = first_unhealthy(scene, initial, 1);
  EXPECT_EQ(status.health, StateHealth::NonFinite);
  EXPECT_FALSE(status.converged);
  EXPECT_GE(status.health_body, 1);
}

TEST(StateHealth, AngularSpeedAndTheScenesBoundsAreUsed) {
  {
    const Scene scene = parse_scene(ball_scene(1.0, R"({"max_angular_speed": 50})"));
    State initial = scene.state;
    initial.angular_velocity[1] = {0, 0, 60};
    const StepStatus status = first_unhealthy(scene, initial, 1);
    EXPECT_EQ(status.health, StateHealth::TooFast);
    EXPECT_TRUE(status.health_angular);
    EXPECT_NEAR(status.health_value, 60, 1e-9);
    EXPECT_NE(health_message(scene.model, status).find("angular speed 60 rad/s above solver.max_angular_speed 50"),
              std::string::npos)
        << health_message(scene.model, status);
  }
  {
    // A fall from 2 m passes 1 m/s after 0.102 s: step 102 at dt = 1 ms.
    const Scene scene = parse_scene(ball_scene(2.0, R"({"max_speed": 1})"));
    int at = 0;
    const StepStatus status = first_unhealthy(scene, scene.state, 200, &at);
    EXPECT_EQ(status.health, StateHealth::TooFast);
    EXPECT_EQ(at, 102);
  }
  EXPECT_NE(refusal(ball_scene(1.0, R"({"max_speed": 0})")).find("solver: max_speed must be positive, got 0"),
            std::string::npos);
  EXPECT_NE(refusal(ball_scene(1.0, R"({"max_angular_speed": -1})")).find("max_angular_speed must be positive"),
            std::string::npos);
}

// The check must not trip on what the project ships: every example steps healthy (the
// fastest measured, features.urdf at 29 m/s and chain10 at 69 rad/s, are far below the bounds).
TEST(StateHealth, ShippedScenesStayHealthy) {
  const std::filesystem::path root(test_paths::source_dir());
  std::vector<std::filesystem::path> scenes;
  for (const char* folder : {"examples/scenes", "examples/robots"})
    for (const auto& entry : std::filesystem::directory_iterator(root / folder))
      if (entry.is_regular_file()) scenes.push_back(entry.path());
  std::sort(scenes.begin(), scenes.end());
  ASSERT_GE(scenes.size(), 10u);
  for (const std::filesystem::path& path : scenes) {
    SCOPED_TRACE(path.filename().string());
    const Scene scene = load_scene(path);
    Simulator simulator(scene.model, scene.params, scene.state);
    for (int t = 0; t < 300; ++t) {
      const StepStatus status = simulator.step(scene.controls);
      ASSERT_EQ(status.health, StateHealth::Ok) << "step " << t + 1 << ": " << health_message(scene.model, status);
      ASSERT_EQ(status.health_body, -1);
    }
  }
}

TEST(StateHealth, RolloutReportsTheFirstUnhealthyStepInItsGradientHealth) {
  const Scene scene = parse_scene(ball_scene(-5.0));
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, 3);
  EXPECT_EQ(rollout.statuses()[0].health, StateHealth::TooFast);
  const Gradients gradients = rollout.backward([](int, const State&, std::span<double>) {});
  EXPECT_FALSE(gradients.health.solver_converged);
  EXPECT_EQ(gradients.health.first_unhealthy_step, 1);
  EXPECT_NE(gradients.health.state_health_message.find("body 'ball'"), std::string::npos);

  const Scene healthy = parse_scene(ball_scene(1.0));
  Rollout fine(healthy.model, healthy.params);
  fine.run(healthy.state, {}, 3);
  EXPECT_EQ(fine.backward([](int, const State&, std::span<double>) {}).health.first_unhealthy_step, -1);
}

// Scales refused before the first step (model/scale_limits.hpp), each naming file, item, value.
TEST(StateHealth, MeaninglessScalesAreRefusedAtLoad) {
  EXPECT_NE(refusal(R"({"dt": 1e300, "bodies": []})").find("scene.json: dt: 1e+300 s is longer than 1 s"),
            std::string::npos)
      << refusal(R"({"dt": 1e300, "bodies": []})");
  EXPECT_EQ(refusal(R"({"dt": 1, "bodies": []})"), "(accepted)");
  const std::string far = refusal(ball_scene(1e308));
  EXPECT_NE(far.find("scene.json: bodies[0]: body 'ball': position 1e+308 m is further than 1e+06 m"),
            std::string::npos)
      << far;
  EXPECT_EQ(refusal(ball_scene(-1e6)), "(accepted)");

  // A 1 g ball under a heavy box: 1e18 threw the ball to 464 m, 1e300 gave NaN.
  for (const char* heavy : {"1e300", "1e18", "1e11"}) {
    const std::string text = refusal(std::string(R"({"dt": 0.001, "ground": true, "bodies": [
          {"name": "ball", "position": [0, 0, 0.05], "mass": 0.001, "shapes": [{"type": "sphere", "radius": 0.05}]},
          {"name": "heavy", "position": [0, 0, 0.25], "mass": )") +
                                     heavy + R"(, "shapes": [{"type": "box", "half_extents": [0.1, 0.1, 0.1]}]}]})");
    SCOPED_TRACE(heavy);
    EXPECT_NE(text.find("scene.json: bodies[0]: body 'ball': mass ratio "), std::string::npos) << text;
    EXPECT_NE(text.find("is above 1e+10, beyond what double precision can step"), std::string::npos) << text;
  }
  // Bodies that can never touch (a collision exclusion) may differ by any ratio; joined ones may not.
  const std::string jointed = refusal(R"({"dt": 0.001, "bodies": [
      {"name": "light", "position": [0, 0, 1], "mass": 1e-6, "inertia": [1e-9, 1e-9, 1e-9]},
      {"name": "heavy", "position": [0, 0, 2], "mass": 1e6, "inertia": [1e6, 1e6, 1e6]}],
    "joints": [{"name": "hinge", "type": "revolute", "parent": "heavy", "child": "light", "anchor": [0, 0, 1.5],
                "axis": [0, 1, 0]}]})");
  EXPECT_NE(jointed.find("scene.json: joints[0]: joint 'hinge': mass ratio 1e+12 between body 'heavy' (1e+06 kg) and "
                         "body 'light' (1e-06 kg)"),
            std::string::npos)
      << jointed;
}

TEST(StateHealth, SimulateStopsWithAMessageAndWritesNothing) {
  const std::filesystem::path folder = testing::fresh_test_folder("state_health");
  { std::ofstream(folder / "under.json") << ball_scene(-5.0); }
  const std::filesystem::path out = folder / "trajectory.json";
  const auto [code, output] = testing::run_cli(
      "simulate " + (folder / "under.json").string() + " -n 100 -o " + out.string(), "state_health_under");
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("diffphys: error: step 1 (t = 0.001 s): body 'ball': linear speed 1019.98 m/s above "
                        "solver.max_speed 1000 m/s; stopped, nothing written"),
            std::string::npos)
      << output;
  EXPECT_FALSE(std::filesystem::exists(out));
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace diffphys::state_health_test
