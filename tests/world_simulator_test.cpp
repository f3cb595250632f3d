// tests/world_simulator_test.cpp — WorldSimulator (diffphys/world_simulator.hpp): stepping a
// world without history gives the same bits as each part's own engine — a rigid world as
// Simulator, a soft world and a rigid + soft world (one-way and two-way, with given
// controls of both parts) as WorldRollout (both step every world by the world's schedule); the step
// statuses per part; bad controls refused by name.
#include "soft_test_scenes.hpp"
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_simulator.hpp"

namespace diffphys {
namespace {

std::string scene_path(const std::string& relative) { return std::string(test_paths::source_dir()) + "/examples/" + relative; }

std::string read_scene_text(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Bit-identical flat states (NaN-safe: compares the bits' values through ==, and NaN fails).
void expect_same_state(const World& world, const WorldState& a, const WorldState& b, int step) {
  const std::vector<double> x = pack_state(world, a), y = pack_state(world, b);
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], y[i]) << "component " << i << " at world step " << step;
  EXPECT_EQ(a.time, b.time) << "at world step " << step;
}

// Simulates `steps` world steps and compares every state with a WorldRollout of the same world.
void expect_simulator_is_the_rollout(const World& world, int steps, const std::vector<double>& controls) {
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), controls, steps);
  WorldSimulator simulator(world, params, world.initial_state());
  const auto per_step = static_cast<std::size_t>(world.layout().control_count);
  for (int t = 0; t < steps; ++t) {
    const std::span<const double> step_controls =
        controls.empty() ? std::span<const double>() : std::span<const double>(controls).subspan(static_cast<std::size_t>(t) * per_step, per_step);
    const WorldStepStatus status = simulator.step(step_controls);
    EXPECT_EQ(status.converged(), rollout.status(t).converged());
    EXPECT_EQ(status.rigid.size(), rollout.status(t).rigid.size());
    if (status.soft != nullptr) {
      EXPECT_EQ(status.soft->iterations, rollout.status(t).soft->iterations);
    }
    expect_same_state(world, simulator.state(), rollout.state(t + 1), t + 1);
  }
  EXPECT_EQ(simulator.steps(), steps);
}

// Small controls of every part at every step (rigid substeps' actuators and soft forces).
std::vector<double> varied_controls(const World& world, int steps, double scale) {
  std::vector<double> controls = world.default_controls();
  controls.resize(static_cast<std::size_t>(steps * world.layout().control_count));
  for (std::size_t k = 0; k < controls.size(); ++k) controls[k] = scale * std::sin(0.37 * static_cast<double>(k));
  return controls;
}

TEST(WorldSimulator, RigidWorldIsTheSimulator) {
  for (const char* scene : {"scenes/servo_arm.json", "scenes/box_stack.json", "robots/cartpole.xml"}) {
    SCOPED_TRACE(scene);
    const World world = load_world(scene_path(scene));
    WorldSimulator simulator(world, world.default_params(), world.initial_state());
    Simulator reference(world.rigid->model, world.rigid->params, world.rigid->state);
    for (int t = 0; t < 40; ++t) {
      const WorldStepStatus status = simulator.step();
      const StepStatus expected = reference.step(world.rigid->controls);
      ASSERT_EQ(status.rigid.size(), 1u);
      EXPECT_EQ(status.rigid[0].iterations, expected.iterations);
      EXPECT_EQ(status.soft, nullptr);
      WorldState reference_state;
      reference_state.rigid = reference.state();
      reference_state.time = reference.state().time;
      expect_same_state(world, simulator.state(), reference_state, t + 1);
    }
    EXPECT_EQ(simulator.rigid_contacts().size(), reference.contacts().size());
  }
}

// A simulation keeps the scene's PGS warm start (a rollout turns it off so that recomputed
// steps repeat their bits): the box stack under warm-started PGS is the Simulator's, bit for
// bit, and the warm start matters there (a WorldRollout, cold-started, ends elsewhere).
TEST(WorldSimulator, GaussSeidelWarmStartIsKeptInASimulation) {
  Scene scene = load_scene(scene_path("scenes/box_stack.json"));
  scene.model.solver.type = SolverType::ProjectedGaussSeidel;
  scene.model.solver.warm_start = true;
  const World world("pgs_stack", "<test>", scene, std::nullopt);
  const WorldParams params = world.default_params();  // a WorldRollout keeps a reference to it
  WorldSimulator simulator(world, params, world.initial_state());
  Simulator reference(scene.model, scene.params, scene.state);
  const int steps = 40;
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), {}, steps);
  for (int t = 0; t < steps; ++t) {
    const WorldStepStatus status = simulator.step();
    const StepStatus expected = reference.step(scene.controls);
    EXPECT_EQ(status.rigid[0].iterations, expected.iterations);
    WorldState reference_state;
    reference_state.rigid = reference.state();
    reference_state.time = reference.state().time;
    expect_same_state(world, simulator.state(), reference_state, t + 1);
  }
  EXPECT_NE(pack_state(world, rollout.final_state()), pack_state(world, simulator.state()));
}

TEST(WorldSimulator, SoftWorldIsTheRollout) {
  const World world = load_world(scene_path("soft/tet_drop.json"));
  expect_simulator_is_the_rollout(world, 30, {});
  expect_simulator_is_the_rollout(world, 10, varied_controls(world, 10, 0.05));
}

TEST(WorldSimulator, TwoWayCoupledWorldIsTheRollout) {
  const World world = load_world(scene_path("soft/cloth_on_pendulum.json"));
  ASSERT_TRUE(world.coupling.two_way);
  expect_simulator_is_the_rollout(world, 12, {});
  expect_simulator_is_the_rollout(world, 6, varied_controls(world, 6, 0.02));
}

TEST(WorldSimulator, OneWayCoupledWorldIsTheRollout) {
  std::string text = read_scene_text(scene_path("soft/cloth_on_pendulum.json"));
  const std::string key = "\"two_way\": true";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(text.find(key), key.size(), "\"two_way\": false");
  const World world = parse_world(text, "one_way.json", scene_path("soft"));
  ASSERT_FALSE(world.coupling.two_way);
  expect_simulator_is_the_rollout(world, 12, {});
  expect_simulator_is_the_rollout(world, 6, varied_controls(world, 6, 0.02));
}

// Two-way contact: a cloth falls onto a light free tray (tests/soft_coupled_test.cpp), so that
// the contact reaction of the previous soft step acts on the rigid window (x_{t−1}, θ_{t−1}).
TEST(WorldSimulator, TwoWayContactReactionIsTheRollout) {
  const std::string scene = soft::testing::cloth_on_tray_scene(true);
  const World world = parse_world(scene, "tray.json");
  expect_simulator_is_the_rollout(world, 20, {});
  WorldSimulator simulator(world, world.default_params(), world.initial_state());
  for (int t = 0; t < 20; ++t) simulator.step();
  EXPECT_LT(simulator.state().rigid.linear_velocity[1].z, 0.0) << "the cloth's contact pushes the tray down";
}

TEST(WorldSimulator, StatusesPerPart) {
  const World world = load_world(scene_path("soft/cloth_on_pendulum.json"));
  WorldSimulator simulator(world, world.default_params(), world.initial_state());
  EXPECT_TRUE(simulator.rigid_contacts().empty()) << "no contacts before the first step";
  const WorldStepStatus status = simulator.step();
  EXPECT_EQ(status.rigid.size(), static_cast<std::size_t>(world.coupling.substeps));
  ASSERT_NE(status.soft, nullptr);
  EXPECT_GT(status.soft->iterations, 0);
  EXPECT_TRUE(status.converged());
  EXPECT_NEAR(simulator.state().time, world.dt(), 1e-15);
}

TEST(WorldSimulator, RefusesBadControlsAndParametersByName) {
  const World world = load_world(scene_path("soft/cloth_on_pendulum.json"));
  WorldSimulator simulator(world, world.default_params(), world.initial_state());
  const std::vector<double> three(3, 0.0);
  try {
    simulator.step(three);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("expected " + std::to_string(world.layout().control_count) + " control values"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("got 3"), std::string::npos) << error.what();
  }
  WorldParams bad = world.default_params();
  bad.slice(world, "body/pendulum/mass")[0] = -1.0;
  EXPECT_THROW(WorldSimulator(world, bad, world.initial_state()), Error);
  WorldParams short_params;
  short_params.values.assign(2, 0.0);
  EXPECT_THROW(WorldSimulator(world, short_params, world.initial_state()), Error);
}

// set_frame_pose, called at every coupled step, checks without building its messages (which
// allocate) but still names the frame and the value when one is bad.
TEST(WorldSimulator, FramePoseErrorsNameTheFrame) {
  World world = load_world(scene_path("soft/cloth_on_pendulum.json"));
  const soft::SoftModel& model = world.soft->model;
  soft::SoftParams params = world.soft->params;
  const std::string frame = "frame '" + model.frames[0] + "'";
  const auto message_of = [&](const soft::Vector3& position, const std::array<double, 4>& orientation) {
    try {
      soft::set_frame_pose(model, params, 0, position, orientation, false);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of({0.0, NAN, 0.0}, {1, 0, 0, 0}).find(frame + " position must be finite"), std::string::npos)
      << message_of({0.0, NAN, 0.0}, {1, 0, 0, 0});
  EXPECT_NE(message_of({0, 0, 0}, {0, 0, 0, 0}).find(frame + ": orientation must be a nonzero finite quaternion"), std::string::npos)
      << message_of({0, 0, 0}, {0, 0, 0, 0});
  EXPECT_EQ(message_of({0, 0, 1}, {2, 0, 0, 0}), "no error");  // normalised
}

}  // namespace
}  // namespace diffphys
