// tests/convex_uniqueness_test.cpp — issue #25's uniqueness check on the step the hard
// formulation failed worst in training: the convex problem (solve/convex.hpp) has one solution,
// so Newton from different starts and Gauss–Seidel on its dual (convex_test_support.hpp) reach
// the same velocities.
//
// The step is read from tests/data/quadruped_worst_step.json: the state of every body of the
// §3.3 quadruped (experiments/quadruped_model.hpp) and its 8 servo targets at one step of a
// training run, with a "source" object saying which run, evaluation, step and commit, and the
// hard formulation's StepStatus there. Bodies and servos are named, so the file does not depend
// on the model's order; numbers are written to round-trip exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "convex_test_support.hpp"
#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"
#include "experiments/quadruped_model.hpp"
#include "rigid/step_workspace.hpp"
#include "solve/convex.hpp"
#include "test_paths.hpp"

namespace diffphys::convex_uniqueness_test {
namespace {

using testing::solve_dual_by_gauss_seidel;

struct CapturedStep {
  State state;
  std::vector<double> controls;  // (nactuator) servo targets, rad
  nlohmann::json source;         // where the step came from
};

Vec3 vec3_of(const nlohmann::json& value) {
  return {value.at(0).get<double>(), value.at(1).get<double>(), value.at(2).get<double>()};
}

// Reads a captured step for `model`: every dynamic body and every actuator exactly once.
CapturedStep read_captured_step(const Model& model, const State& rest, const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) throw Error(message("cannot read ", path.string()));
  const nlohmann::json data = nlohmann::json::parse(file);
  CapturedStep step{rest, std::vector<double>(static_cast<std::size_t>(model.actuator_count()), 0.0),
                    data.at("source")};
  step.state.time = data.at("time").get<double>();
  std::vector<int> seen(static_cast<std::size_t>(model.body_count()), 0);
  for (const nlohmann::json& body : data.at("bodies")) {
    const auto b = static_cast<std::size_t>(model.body_index(body.at("name").get<std::string>()));
    ++seen[b];
    const nlohmann::json& q = body.at("orientation");
    step.state.position[b] = vec3_of(body.at("position"));
    step.state.orientation[b] = {q.at(0).get<double>(), q.at(1).get<double>(), q.at(2).get<double>(),
                                 q.at(3).get<double>()};
    step.state.linear_velocity[b] = vec3_of(body.at("linear_velocity"));
    step.state.angular_velocity[b] = vec3_of(body.at("angular_velocity"));
  }
  for (int b = 1; b < model.body_count(); ++b)
    if (seen[static_cast<std::size_t>(b)] != 1)
      throw Error(message(path.string(), ": body ", model.bodies[static_cast<std::size_t>(b)].name, " given ",
                          seen[static_cast<std::size_t>(b)], " times"));
  std::vector<int> set(step.controls.size(), 0);
  for (const nlohmann::json& servo : data.at("servo_targets")) {
    const auto a = static_cast<std::size_t>(model.actuator_index(servo.at("actuator").get<std::string>()));
    ++set[a];
    step.controls[a] = servo.at("target").get<double>();
  }
  if (std::count(set.begin(), set.end(), 1) != model.actuator_count())
    throw Error(message(path.string(), ": every servo needs exactly one target"));
  validate_state(model, step.state);
  return step;
}

// The largest |a_i − b_i| and where, for a readable failure.
struct Difference {
  double largest = 0.0;
  std::size_t index = 0;
};
Difference largest_difference(std::span<const double> a, std::span<const double> b) {
  Difference difference;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > difference.largest) difference = {std::abs(a[i] - b[i]), i};
  return difference;
}

// The step the hard formulation met worst in the quadruped's training (seed 2, evaluation 301,
// step 1314; tests/data/quadruped_worst_step.json and docs/simulation.md, "Known limits"),
// stepped in the convex formulation at its default compliance: the step converges, and Newton
// from rest, from the free velocity and from a far start, and Gauss–Seidel on the dual, reach
// the step's velocities (Newton from the state's velocities) to 1e-10.
TEST(ConvexUniqueness, QuadrupedWorstTrainingStepHasOneSolutionWhateverTheMethod) {
  experiments::QuadrupedModel robot = experiments::build_quadruped();
  set_formulation(robot.scene, Formulation::Convex);
  const Scene& scene = robot.scene;
  const CapturedStep captured =
      read_captured_step(scene.model, scene.state,
                         std::filesystem::path(test_paths::source_dir()) / "tests/data/quadruped_worst_step.json");
  SCOPED_TRACE(captured.source.dump());
  Workspace workspace;
  State next = captured.state;
  const StepStatus status = step(scene.model, scene.params, captured.state, captured.controls, next, workspace);
  ASSERT_TRUE(status.converged) << "residual " << status.residual;
  const Workspace::Impl& record = workspace.impl();
  ASSERT_GT(record.limit_rows_end, record.joint_rows) << "a leg on its stops";
  ASSERT_GT(record.rows.size(), record.first_contact_row) << "on its feet";

  const solve::MassBlocks mass = record.bodies.mass_blocks();
  solve::ConvexWorkspace convex;
  std::vector<double> lambda(record.rows.size()), solved(record.velocity.size());
  const std::vector<double> zero(record.velocity.size(), 0.0);
  std::vector<double> far(record.velocity.size());
  for (std::size_t i = 0; i < far.size(); ++i) far[i] = i % 2 == 0 ? 10.0 : -10.0;  // m/s, rad/s
  const std::span<const double> free_velocity = record.free_velocity;
  const std::pair<const char*, std::span<const double>> starts[] = {
      {"rest", zero}, {"free velocity", free_velocity}, {"far", far}};
  for (const auto& [name, start] : starts) {
    const solve::MlcpResult result =
        solve::solve_convex(record.rows, mass, free_velocity, start, 100, 1e-12, convex, lambda, solved);
    EXPECT_TRUE(result.converged) << "from " << name << ": residual " << result.residual;
    const Difference difference = largest_difference(solved, record.velocity);
    EXPECT_LE(difference.largest, 1e-10) << "from " << name << ", velocity entry " << difference.index;
  }
  // Gauss–Seidel on the dual of the same problem: the stiff joints between 0.8 kg legs and a
  // 21.5 kg torso make it crawl (1e-6 m/s from the answer after 50,000 sweeps), but it gets
  // there: it stops after about 150,000 sweeps (3 s at -O1), 4e-13 m/s from Newton's answer.
  const std::vector<double> dual = solve_dual_by_gauss_seidel(record.rows, mass, free_velocity, 300000);
  const Difference difference = largest_difference(dual, record.velocity);
  EXPECT_LE(difference.largest, 1e-10) << "Gauss–Seidel on the dual, velocity entry " << difference.index;
}

}  // namespace
}  // namespace diffphys::convex_uniqueness_test
