// tests/world_test.cpp — one world (diffphys/world.hpp): any scene file loads into a World;
// WorldRollout reproduces each part's own rollout bit for bit (rigid Rollout, SoftRollout)
// with the same gradients in the world's flat layouts; the world's gradients
// match central differences through the world API alone (parameters of both parts, initial
// states, controls of both parts) on a two-way coupled scene; bad input is refused by name.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <optional>
#include <tuple>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "diffphys/coupled.hpp"
#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/soft_scene.hpp"
#include "diffphys/world.hpp"
#include "adjoint/checkpoint_spacing.hpp"

namespace diffphys {
namespace {

std::string example(const std::string& relative) { return std::string(test_paths::source_dir()) + "/examples/" + relative; }

// A weight per tangent component, fixed and varied, for a loss reaching every component.
double weight(std::size_t i) { return 0.3 + 0.1 * static_cast<double>((i * 7919) % 13) - 0.6 * static_cast<double>(i % 2); }

TEST(World, LoadsEveryKindOfSceneFile) {
  const World rigid = load_world(example("scenes/bouncing_ball.json"));
  EXPECT_EQ(rigid.kind(), "rigid");
  const World soft = load_world(example("soft/hanging_beam.json"));
  EXPECT_EQ(soft.kind(), "soft");
  const World both = load_world(example("soft/cloth_on_pendulum.json"));
  EXPECT_EQ(both.kind(), "rigid + soft");
  EXPECT_TRUE(both.coupling.two_way);
  // The world step is the soft step; the rigid part takes substeps within it.
  EXPECT_DOUBLE_EQ(both.dt(), both.soft->model.dt);
  EXPECT_EQ(both.rigid_steps_per_step(), 4);
  const World robot = load_world(example("robots/two_link_arm.urdf"));
  EXPECT_EQ(robot.kind(), "rigid");

  // Layouts: rigid slices first under their own names, soft ones under "soft/".
  const WorldLayout& layout = both.layout();
  EXPECT_EQ(layout.state_size, 13 * both.rigid->model.body_count() + 2 * both.soft->model.dof_count());
  EXPECT_EQ(layout.tangent_size, 12 * both.rigid->model.body_count() + 2 * both.soft->model.dof_count());
  EXPECT_EQ(layout.param_count, both.rigid->model.param_count() + both.soft->model.param_count());
  EXPECT_EQ(WorldLayout::find(layout.params, "soft/gravity", "parameter").size, 3);
  EXPECT_EQ(WorldLayout::find(layout.params, "body/pendulum/mass", "parameter").offset,
            both.rigid->model.layout.slices[3].offset);
  EXPECT_EQ(both.rigid->model.layout.slices[3].name, "body/pendulum/mass");
  EXPECT_EQ(layout.control_count, 4 * both.rigid->model.actuator_count() + both.soft->model.dof_count());
  const WorldState x0 = both.initial_state();
  const std::vector<double> packed = pack_state(both, x0);
  EXPECT_EQ(pack_state(both, unpack_state(both, packed)), packed);
}

TEST(World, ASectionedRigidSceneIsTheTopLevelOne) {
  const char* flat = R"({"name": "drop", "dt": 0.01, "bodies": [{"name": "ball", "position": [0, 0, 1], "mass": 1,
                         "shapes": [{"name": "s", "type": "sphere", "radius": 0.1}]}]})";
  const World a = parse_world(flat);
  const World b = parse_world(std::string(R"({"rigid": )") + flat + "}");
  EXPECT_EQ(a.kind(), "rigid");
  EXPECT_EQ(b.kind(), "rigid");
  EXPECT_EQ(a.default_params().values, b.default_params().values);
  EXPECT_EQ(pack_state(a, a.initial_state()), pack_state(b, b.initial_state()));
}

TEST(World, RefusesBadInputByName) {
  const char* scene = R"({"rigid": {"name": "drop", "bodies": []}, "coupling": {}})";
  try {
    parse_world(scene, "scene.json");
    FAIL() << "a coupling without a soft part was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("scene.json: coupling"), std::string::npos) << error.what();
  }
  try {
    parse_world(R"({"rigid": {"name": "drop", "bodies": []}, "bodies": []})", "scene.json");
    FAIL() << "top-level keys beside sections were accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("unknown key 'bodies'"), std::string::npos) << error.what();
  }
  // A key given twice inside a section, or a section given twice, is refused as at the top
  // level (not the last value kept), by its JSON path.
  for (const auto& [twice, expected] :
       {std::pair{R"({"rigid": {"dt": 0.5, "dt": 0.001, "bodies": []}})", "twice.json: rigid: duplicate key \"dt\""},
        std::pair{R"({"rigid": {"bodies": []}, "rigid": {"bodies": []}})", "twice.json: duplicate key \"rigid\""}})
    try {
      parse_world(twice, "twice.json");
      ADD_FAILURE() << "accepted: " << twice;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  const World world = load_world(example("soft/cloth_on_pendulum.json"));
  WorldParams params = world.default_params();
  try {
    params.slice(world, "soft/gravty");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("did you mean 'soft/gravity'"), std::string::npos) << error.what();
  }
  WorldRollout rollout(world, params);
  EXPECT_THROW(rollout.run(world.initial_state(), std::vector<double>(3, 0.0), 2), Error);
  // Non-finite parameters and controls are named by their world slice.
  const auto refused = [&](const WorldParams& p, std::span<const double> controls, const std::string& expected) {
    WorldRollout r(world, p);
    try {
      r.run(world.initial_state(), controls, 2);
      ADD_FAILURE() << "accepted; expected: " << expected;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  };
  WorldParams nan_param = params;
  nan_param.slice(world, "soft/contact_stiffness")[0] = std::nan("");
  refused(nan_param, {}, "parameter 'soft/contact_stiffness'[0] must be finite");
  std::vector<double> controls(2 * static_cast<std::size_t>(world.layout().control_count), 0.0);
  controls[static_cast<std::size_t>(world.layout().control_count + world.layout().soft_control_offset) + 4] = INFINITY;
  refused(params, controls, "control 'soft/forces'[4] at step 1 must be finite");
  EXPECT_THROW(unpack_state(world, std::vector<double>(5, 0.0)), Error);
}

TEST(World, RigidWorldIsTheRigidRollout) {
  const Scene scene = load_scene(example("scenes/servo_arm.json"));
  const World world = load_world(example("scenes/servo_arm.json"));
  const int steps = 400;
  std::vector<double> controls;
  for (int t = 0; t < steps; ++t)
    for (int a = 0; a < scene.model.actuator_count(); ++a) controls.push_back(0.3 * std::sin(0.1 * t + a));
  Rollout reference(scene.model, scene.params);
  reference.run(scene.state, controls, steps);
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), controls, steps);
  EXPECT_EQ(pack_state(world, rollout.final_state()), pack_state(world, WorldState{0, reference.final_state(), {}, {}}));
  const auto loss = [&](int t, const State& x, std::span<double> g) {
    for (std::size_t i = 0; i < g.size(); ++i) g[i] += weight(i + static_cast<std::size_t>(t)) * (i % 12 < 3 ? x.position[i / 12].z : 1.0);
  };
  const Gradients expected = reference.backward(loss);
  const WorldGradients got = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& g) { loss(t, x.rigid, g.rigid); });
  EXPECT_EQ(got.initial_state, expected.initial_state);
  EXPECT_EQ(got.controls, expected.controls);
  EXPECT_EQ(got.params, expected.params);
  EXPECT_EQ(got.not_differentiable, expected.not_differentiable);
}

TEST(World, SoftWorldIsTheSoftRollout) {
  const std::string path = example("soft/mass_spring.json");
  const soft::SoftBuild built = soft::build_soft_scene(soft::load_soft_scene(path), path);
  const World world = load_world(path);
  const int steps = 20;
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  std::vector<double> forces(static_cast<std::size_t>(steps) * dofs);
  for (std::size_t i = 0; i < forces.size(); ++i) forces[i] = 0.01 * std::cos(0.37 * static_cast<double>(i));
  soft::SoftRollout reference(built.model, built.params);
  reference.run(built.state, forces, steps);
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), forces, steps);
  EXPECT_EQ(rollout.final_state().soft.positions, reference.final_state().positions);
  EXPECT_EQ(rollout.final_state().soft.velocities, reference.final_state().velocities);
  const soft::SoftGradients expected =
      reference.backward([&](int t, const soft::SoftState& s, std::span<double> dx, std::span<double> dv) {
        for (std::size_t i = 0; i < dofs; ++i) {
          dx[i] += weight(i + static_cast<std::size_t>(t)) * s.positions[i];
          dv[i] += weight(i + 3);
        }
      });
  const WorldGradients got = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& g) {
    for (std::size_t i = 0; i < dofs; ++i) {
      g.soft_positions[i] += weight(i + static_cast<std::size_t>(t)) * x.soft.positions[i];
      g.soft_velocities[i] += weight(i + 3);
    }
  });
  EXPECT_TRUE(std::equal(expected.initial_positions.begin(), expected.initial_positions.end(), got.initial_state.begin()));
  EXPECT_TRUE(std::equal(expected.initial_velocities.begin(), expected.initial_velocities.end(), got.initial_state.begin() + static_cast<std::ptrdiff_t>(dofs)));
  EXPECT_EQ(got.controls, expected.controls);
  EXPECT_EQ(got.params, expected.params);
}

// What a world rollout keeps for its backward pass (every world, one part or several, runs
// the world's schedule): checkpoints every k steps and their bytes, step records when every
// state is kept — for a one-part world at least what that part's own rollout keeps (the rigid
// steps' solutions, the soft steps' Cholesky factors), so that its backward pass re-runs and
// refactorises nothing either.
TEST(World, CheckpointAccountingIsTheSchedules) {
  const int steps = 40;
  const Scene scene = load_scene(example("scenes/servo_arm.json"));
  const World rigid = load_world(example("scenes/servo_arm.json"));
  const WorldParams rigid_theta = rigid.default_params();
  const std::size_t rigid_state_bytes =
      static_cast<std::size_t>(scene.model.body_count()) * (sizeof(Vec3) * 3 + sizeof(Quat)) + sizeof(State);
  std::vector<double> held;  // the scene's default controls at every step, for both rollouts
  for (int t = 0; t < steps; ++t) held.insert(held.end(), scene.controls.begin(), scene.controls.end());
  for (const int interval : {0, 7}) {
    WorldRolloutOptions options;
    options.rollout.checkpoint_interval = interval;
    Rollout reference(scene.model, scene.params, options.rollout);
    reference.run(scene.state, held, steps);
    WorldRollout rollout(rigid, rigid_theta, options);
    rollout.run(rigid.initial_state(), held, steps);
    EXPECT_EQ(rollout.checkpoint_interval(), interval == 0 ? 1 : 7);
    // States 0..39 (the final one is kept apart), or 0, 7, ..., 35.
    EXPECT_EQ(rollout.stored_state_bytes(), (interval == 0 ? steps : 6) * rigid_state_bytes);
    EXPECT_EQ(rollout.stored_record_bytes() > 0, interval == 0);
    EXPECT_GE(rollout.stored_record_bytes(), reference.stored_record_bytes());
  }
  const std::string path = example("soft/mass_spring.json");
  const soft::SoftBuild built = soft::build_soft_scene(soft::load_soft_scene(path), path);
  const World soft_world = load_world(path);
  const WorldParams soft_theta = soft_world.default_params();
  const std::size_t state_bytes =
      2 * static_cast<std::size_t>(built.model.dof_count()) * sizeof(double) + sizeof(soft::SoftState);
  for (const int interval : {0, 7}) {
    WorldRolloutOptions options;
    options.rollout.checkpoint_interval = interval;
    soft::SoftRolloutOptions soft_options;
    soft_options.checkpoint_interval = interval;
    soft::SoftRollout reference(built.model, built.params, soft_options);
    reference.run(built.state, {}, steps);
    WorldRollout rollout(soft_world, soft_theta, options);
    rollout.run(soft_world.initial_state(), {}, steps);
    EXPECT_EQ(rollout.checkpoint_interval(), interval == 0 ? 1 : 7);
    EXPECT_EQ(rollout.stored_state_bytes(), (interval == 0 ? steps : 6) * state_bytes);
    EXPECT_EQ(rollout.stored_record_bytes() > 0, interval == 0);
    EXPECT_GE(rollout.stored_record_bytes(), reference.stored_record_bytes());
    if (interval == 0) {
      const WorldGradients g = rollout.backward([](int, const WorldState&, WorldStateGradient& d) { d.all[0] += 1.0; });
      EXPECT_EQ(g.soft_health.refactorised_steps, 0);  // every step's factor was kept
    }
  }
  // A world of both parts: the schedule's own accounting — every state and every step's
  // records (the rigid substeps' Workspaces, each part's step θ) when they fit, checkpoints
  // every k steps otherwise (the rigid and soft states, and the state before each
  // checkpoint, which the two-way contact reaction reads).
  const World coupled = load_world(example("soft/cloth_on_pendulum.json"));
  const WorldParams coupled_theta = coupled.default_params();
  const std::size_t world_state_bytes =
      static_cast<std::size_t>(coupled.rigid->model.body_count()) * (sizeof(Vec3) * 3 + sizeof(Quat)) + sizeof(State) +
      2 * static_cast<std::size_t>(coupled.soft->model.dof_count()) * sizeof(double) + sizeof(soft::SoftState);
  for (const int interval : {0, 7}) {
    WorldRolloutOptions options;
    options.rollout.checkpoint_interval = interval;
    WorldRollout rollout(coupled, coupled_theta, options);
    rollout.run(coupled.initial_state(), {}, 20);
    EXPECT_EQ(rollout.checkpoint_interval(), interval == 0 ? 1 : 7);
    const std::size_t kept = interval == 0 ? 20 : 3;  // states 0..19 (the final one is separate), or 0, 7, 14
    const bool lagged = coupled.coupling.two_way && std::any_of(coupled.soft->model.obstacles.begin(), coupled.soft->model.obstacles.end(),
                                                                 [](const soft::Obstacle& o) { return o.frame >= 0; });
    // Lagged: also the state before each checkpoint but the first.
    EXPECT_EQ(rollout.stored_state_bytes(), (lagged ? 2 * kept - 1 : kept) * world_state_bytes);
    EXPECT_EQ(rollout.stored_record_bytes() > 0, interval == 0);
  }
}

// Every world runs on the schedule: a world of one part takes that part's own engine's steps
// and gives its gradients bit for bit (the uncoupled part adds θ̄ straight into the world's),
// with every state kept and with checkpoints, for scenes whose records are solutions (contacts
// with a servo arm and a bouncing ball), Workspaces (the joint-only chain, joint coordinates)
// and Cholesky factors (a soft scene); and a WorldRollout run again (other controls, so other
// records) gives what a fresh one gives.
TEST(World, OnePartWorldsAreTheirPartsOwnRolloutsBitForBit) {
  const auto loss = [](int t, std::span<double> g) {
    for (std::size_t i = 0; i < g.size(); ++i) g[i] += weight(i + static_cast<std::size_t>(t));
  };
  const int steps = 24;
  for (const std::string path : {"scenes/servo_arm.json", "scenes/bouncing_ball.json", "scenes/chain10.json",
                                 "scenes/chain10_reduced.json", "scenes/pendulum_cart.json"}) {
    SCOPED_TRACE(path);
    const Scene scene = load_scene(example(path));
    const World world = load_world(example(path));
    const WorldParams params = world.default_params();
    const auto actuators = static_cast<std::size_t>(scene.model.actuator_count());
    for (const int interval : {0, 4}) {
      SCOPED_TRACE(interval);
      WorldRolloutOptions options;
      options.rollout.checkpoint_interval = interval;
      WorldRollout reused(world, params, options);
      for (const double amplitude : {0.0, 0.3}) {
        std::vector<double> controls;
        for (int t = 0; t < steps; ++t)
          for (std::size_t a = 0; a < actuators; ++a) controls.push_back(scene.controls[a] + amplitude * std::sin(0.3 * t + a));
        Rollout own(scene.model, scene.params, options.rollout);
        own.run(scene.state, controls, steps);
        const Gradients expected = own.backward([&](int t, const State&, std::span<double> g) { loss(t, g); });
        reused.run(world.initial_state(), controls, steps);
        EXPECT_EQ(pack_state(world, reused.final_state()), pack_state(world, WorldState{0, own.final_state(), {}, {}}));
        EXPECT_EQ(pack_state(world, reused.state(steps / 2 + 1)), pack_state(world, WorldState{0, own.state(steps / 2 + 1), {}, {}}));
        const WorldGradients got = reused.backward([&](int t, const WorldState&, WorldStateGradient& g) { loss(t, g.all); });
        EXPECT_EQ(got.initial_state, expected.initial_state);
        EXPECT_EQ(got.controls, expected.controls);
        EXPECT_EQ(got.params, expected.params);
      }
    }
  }
  const std::string path = example("soft/mass_spring.json");
  const soft::SoftBuild built = soft::build_soft_scene(soft::load_soft_scene(path), path);
  const World world = load_world(path);
  const WorldParams params = world.default_params();
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  for (const int interval : {0, 4}) {
    SCOPED_TRACE(interval);
    WorldRolloutOptions options;
    options.rollout.checkpoint_interval = interval;
    soft::SoftRolloutOptions soft_options;
    soft_options.checkpoint_interval = interval;
    WorldRollout reused(world, params, options);
    for (const double amplitude : {0.0, 0.02}) {
      std::vector<double> forces(static_cast<std::size_t>(steps) * dofs);
      for (std::size_t i = 0; i < forces.size(); ++i) forces[i] = amplitude * std::cos(0.37 * static_cast<double>(i));
      soft::SoftRollout own(built.model, built.params, soft_options);
      own.run(built.state, forces, steps);
      const soft::SoftGradients expected = own.backward([&](int t, const soft::SoftState&, std::span<double> dx, std::span<double> dv) {
        loss(t, dx);
        loss(t + 1, dv);
      });
      reused.run(world.initial_state(), forces, steps);
      EXPECT_EQ(reused.final_state().soft.positions, own.final_state().positions);
      const WorldGradients got = reused.backward([&](int t, const WorldState&, WorldStateGradient& g) {
        loss(t, g.soft_positions);
        loss(t + 1, g.soft_velocities);
      });
      EXPECT_TRUE(std::equal(expected.initial_positions.begin(), expected.initial_positions.end(), got.initial_state.begin()));
      EXPECT_TRUE(std::equal(expected.initial_velocities.begin(), expected.initial_velocities.end(),
                             got.initial_state.begin() + static_cast<std::ptrdiff_t>(dofs)));
      EXPECT_EQ(got.controls, expected.controls);
      EXPECT_EQ(got.params, expected.params);
      EXPECT_EQ(got.soft_health.refactorised_steps, expected.health.refactorised_steps);
    }
  }
}

// The schedule's checkpoints change what is stored, not the result: recomputed segments (with
// their records, or each step re-run before it is reversed) repeat the forward steps bit for
// bit, so the gradients are the same numbers as when everything is kept.
TEST(World, CoupledCheckpointsGiveTheSameGradients) {
  const World world = load_world(example("soft/cloth_on_pendulum.json"));
  ASSERT_TRUE(world.coupling.two_way);
  const WorldParams params = world.default_params();
  const int steps = 12;
  const auto loss = [&](int t, const WorldState&, WorldStateGradient& g) {
    for (std::size_t i = 0; i < g.all.size(); ++i) g.all[i] += weight(i + static_cast<std::size_t>(t));
  };
  const auto run = [&](int interval, bool keep_records, std::size_t budget) {
    WorldRolloutOptions options;
    options.rollout.checkpoint_interval = interval;
    options.rollout.keep_step_records = keep_records;
    options.rollout.memory_budget = budget;
    WorldRollout rollout(world, params, options);
    rollout.run(world.initial_state(), {}, steps);
    return std::make_pair(rollout.backward(loss), pack_state(world, rollout.state(steps / 2 + 1)));
  };
  const auto [all, middle] = run(0, true, std::size_t{256} << 20);
  for (const auto& [interval, keep, budget] : {std::tuple{1, false, std::size_t{256} << 20}, std::tuple{5, true, std::size_t{256} << 20},
                                               std::tuple{5, false, std::size_t{256} << 20}, std::tuple{0, true, std::size_t{40000}}}) {
    SCOPED_TRACE(::testing::Message() << "interval " << interval << ", records " << keep << ", budget " << budget);
    const auto [got, got_middle] = run(interval, keep, budget);
    EXPECT_EQ(got.initial_state, all.initial_state);
    EXPECT_EQ(got.controls, all.controls);
    EXPECT_EQ(got.params, all.params);
    EXPECT_EQ(got_middle, middle);
  }
}

// A coupled world under a budget too small for its per-step logs (#22 item 4): the statuses
// are recomputed on demand and equal the kept ones, the summaries are the same, the gradients
// the same bits; and where the states do not all fit, the checkpoints are spaced so that one
// segment's step records fit beside them.
TEST(World, CoupledPerStepLogsStayInsideTheMemoryBudget) {
  // A small two-way coupled world whose logs are large beside its states: a pendulum taking one
  // rigid step per world step, one cloth cell hanging from its bob. (A joint-only rigid
  // part records whole Workspaces, as the rigid Rollout does: with more substeps a segment's
  // records outweigh every state, and no checkpoint spacing would be worth taking.)
  const World world = parse_world(R"({
    "rigid": {"name": "pendulum", "dt": 0.01,
      "bodies": [{"name": "arm", "position": [0.2, 0, 1.2], "mass": 1, "inertia": [0.001, 0.01, 0.01],
                  "shapes": [{"type": "box", "half_extents": [0.2, 0.05, 0.02]}]}],
      "joints": [{"name": "hinge", "type": "revolute", "parent": "world", "child": "arm", "anchor": [0, 0, 1.2], "axis": [0, 1, 0]}]},
    "soft": {"name": "flag", "dt": 0.01,
      "cloth_materials": [{"name": "silk", "stretch_modulus": 60, "poisson_ratio": 0.3, "bending_stiffness": 0.0002, "areal_density": 0.1}],
      "cloth_rectangles": [{"material": "silk", "origin": [0.4, -0.05, 1.18], "edge_u": [0, 0.1, 0], "edge_v": [0, 0, -0.1], "cells": [1, 1]}]},
    "coupling": {"two_way": true,
      "attachments": [{"body": "arm", "region": {"min": [0.39, -0.1, 1.17], "max": [0.41, 0.1, 1.19]}, "stiffness": 500}]}
  })", "logs.json");
  const WorldParams params = world.default_params();
  const int steps = 400;
  const auto loss = [&](int t, const WorldState&, WorldStateGradient& g) {
    for (std::size_t i = 0; i < g.all.size(); ++i) g.all[i] += weight(i + static_cast<std::size_t>(t));
  };
  const auto options_with = [](std::size_t budget) {
    WorldRolloutOptions options;
    options.rollout.memory_budget = budget;
    return options;
  };
  WorldRollout kept(world, params, options_with(std::size_t{256} << 20));
  kept.run(world.initial_state(), {}, steps);
  const WorldGradients expected = kept.backward(loss);
  ASSERT_TRUE(expected.per_step_kept);
  ASSERT_EQ(expected.rigid_health.state_gradient_norm.size(), static_cast<std::size_t>(steps) + 1);
  const std::size_t state_bytes = kept.stored_state_bytes() / (static_cast<std::size_t>(steps) + 1);
  const std::size_t record_bytes = kept.stored_record_bytes() / static_cast<std::size_t>(steps);
  ASSERT_GT(state_bytes, 0u);
  ASSERT_GT(record_bytes, 0u);

  // A budget whose quarter holds half the run's logs (each step's at least a rigid and a soft
  // status), in which the states do not all fit but checkpoints with one segment's records do.
  const std::size_t budget = 2 * static_cast<std::size_t>(steps) * (sizeof(StepStatus) + sizeof(soft::SoftStepStatus));
  ASSERT_GT((static_cast<std::size_t>(steps) + 1) * state_bytes, budget);
  const int best = adjoint::checkpoint_spacing_with_records(steps, state_bytes, record_bytes / 4 * 5, budget);
  ASSERT_GT(best, 1) << "no spacing fits: S " << state_bytes << ", R " << record_bytes << ", budget " << budget;
  WorldRollout lean(world, params, options_with(budget));
  lean.run(world.initial_state(), {}, steps);
  EXPECT_GT(lean.checkpoint_interval(), 1);
  EXPECT_LE(static_cast<double>(lean.stored_state_bytes() +
                                static_cast<std::size_t>(lean.checkpoint_interval()) * (record_bytes + state_bytes)),
            static_cast<double>(budget));
  EXPECT_EQ(lean.converged(), kept.converged());
  for (const int t : {0, 1, 17, steps - 1}) {
    SCOPED_TRACE(t);
    const WorldStepStatus a = kept.status(t);
    const auto rigid = std::vector<StepStatus>(a.rigid.begin(), a.rigid.end());
    const soft::SoftStepStatus soft = *a.soft;
    const WorldStepStatus b = lean.status(t);
    ASSERT_EQ(b.rigid.size(), rigid.size());
    for (std::size_t k = 0; k < rigid.size(); ++k) {
      EXPECT_EQ(b.rigid[k].iterations, rigid[k].iterations);
      EXPECT_EQ(b.rigid[k].residual, rigid[k].residual);
      EXPECT_EQ(b.rigid[k].contact_count, rigid[k].contact_count);
      EXPECT_EQ(b.rigid[k].joint_error, rigid[k].joint_error);
    }
    EXPECT_EQ(b.soft->iterations, soft.iterations);
    EXPECT_EQ(b.soft->residual, soft.residual);
    EXPECT_EQ(b.soft->objective, soft.objective);
  }
  const WorldGradients got = lean.backward(loss);
  EXPECT_FALSE(got.per_step_kept);
  EXPECT_FALSE(got.rigid_health.per_step_kept);
  EXPECT_TRUE(got.rigid_health.state_gradient_norm.empty());
  EXPECT_TRUE(got.soft_health.state_gradient_norm.empty());
  EXPECT_EQ(got.rigid_health.contact_change_count, expected.rigid_health.contact_change_count);
  EXPECT_EQ(got.rigid_health.largest_state_gradient_norm, expected.rigid_health.largest_state_gradient_norm);
  EXPECT_EQ(got.solver_converged, expected.solver_converged);
  EXPECT_EQ(got.initial_state, expected.initial_state);
  EXPECT_EQ(got.controls, expected.controls);
  EXPECT_EQ(got.params, expected.params);
}

// The loss of the coupled test below: every tangent component of every step's state that is
// linear in the packed state (all but the rotation), weighted.
double coupled_loss(const World& world, const WorldRollout& rollout) {
  double loss = 0.0;
  for (int t = 0; t <= rollout.steps(); ++t) {
    const std::vector<double> x = pack_state(world, rollout.state(t));
    for (std::size_t i = 0; i < x.size(); ++i) {
      const bool rigid = i < static_cast<std::size_t>(world.layout().soft_state_offset);
      if (rigid && (i % 13 >= 3 && i % 13 < 7)) continue;  // the quaternion
      loss += weight(i + static_cast<std::size_t>(t)) * x[i];
    }
  }
  return loss;
}

TEST(World, CoupledGradientsMatchCentralDifferences) {
  World world = load_world(example("soft/cloth_on_pendulum.json"));
  world.soft->model.newton.tolerance = 1e-12;
  world.rigid->model.solver.tolerance = 1e-13;
  const int steps = 2;
  const WorldLayout& layout = world.layout();
  const WorldState x0 = world.initial_state();
  std::vector<double> controls;
  for (int t = 0; t < steps; ++t) {
    const std::vector<double> u = world.default_controls();
    controls.insert(controls.end(), u.begin(), u.end());
  }
  for (std::size_t i = static_cast<std::size_t>(layout.soft_control_offset); i < controls.size(); ++i)
    controls[i] = 0.002 * std::sin(static_cast<double>(i));
  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(x0, controls, steps);
  const std::size_t soft_state = static_cast<std::size_t>(layout.soft_state_offset);
  const WorldGradients analytic = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& g) {
    const std::vector<double> packed = pack_state(world, x);
    for (std::size_t i = 0; i < packed.size(); ++i) {
      const double w = weight(i + static_cast<std::size_t>(t));
      if (i >= soft_state) {
        g.all[static_cast<std::size_t>(layout.soft_tangent_offset) + (i - soft_state)] += w;
      } else if (i % 13 < 3) {
        g.rigid[12 * (i / 13) + i % 13] += w;
      } else if (i % 13 >= 7) {
        g.rigid[12 * (i / 13) + i % 13 - 1] += w;
      }
    }
  });
  ASSERT_TRUE(analytic.solver_converged);

  // Central differences of the same loss, each input moved through the world's vectors.
  const auto check = [&](const std::string& what, double gradient, const auto& loss_at, double h) {
    const double numeric = (loss_at(h) - loss_at(-h)) / (2 * h);
    EXPECT_NEAR(gradient, numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << what;
  };
  for (const char* name : {"body/pendulum/mass", "body/pendulum/inertia", "soft/cloth_material/silk/stretch_modulus",
                           "soft/cloth_material/silk/areal_density", "soft/frame_attachment_stiffness"}) {
    const NamedSlice& slice = WorldLayout::find(layout.params, name, "parameter");
    const auto index = static_cast<std::size_t>(slice.offset);
    const double value = params.values[index];
    check(name, analytic.params[index], [&](double d) {
      WorldParams moved = params;
      moved.values[index] += d;
      WorldRollout r(world, moved);
      r.run(x0, controls, steps);
      return coupled_loss(world, r);
    }, 1e-5 * std::max(std::abs(value), 1e-2));
  }
  // The pendulum's angular velocity about the hinge, a soft node's position and velocity.
  const int pendulum = 1;
  const std::vector<double> packed0 = pack_state(world, x0);
  const auto state_entry = [&](const std::string& what, std::size_t packed_index, std::size_t tangent_index) {
    check(what, analytic.initial_state[tangent_index], [&](double d) {
      std::vector<double> moved = packed0;
      moved[packed_index] += d;
      WorldRollout r(world, params);
      r.run(unpack_state(world, moved), controls, steps);
      return coupled_loss(world, r);
    }, 1e-6);
  };
  state_entry("x0/pendulum/angular_velocity[1]", 13 * pendulum + 11, 12 * pendulum + 10);
  const std::size_t node = 20;
  state_entry("x0/soft/positions[node 20, x]", soft_state + 3 * node, static_cast<std::size_t>(layout.soft_tangent_offset) + 3 * node);
  const std::size_t dofs = static_cast<std::size_t>(world.soft->model.dof_count());
  state_entry("x0/soft/velocities[node 20, z]", soft_state + dofs + 3 * node + 2,
              static_cast<std::size_t>(layout.soft_tangent_offset) + dofs + 3 * node + 2);
  // A soft force in the second step.
  const std::size_t force = static_cast<std::size_t>(layout.control_count + layout.soft_control_offset) + 3 * node + 2;
  check("control soft/forces t=1", analytic.controls[force], [&](double d) {
    std::vector<double> moved = controls;
    moved[force] += d;
    WorldRollout r(world, params);
    r.run(x0, moved, steps);
    return coupled_loss(world, r);
  }, 1e-6);
}

// The rigid part of a coupled world records each substep's solution and replays it in the
// backward pass (world/rigid_part.cpp): with a puck sliding on the ground beside the pendulum
// (contacts and friction in every one of the 4 rigid substeps of a world step), the gradients
// match central differences of the whole rollout and are the same bits whether every step's
// record was kept, recomputed by checkpoints, or re-run.
TEST(World, CoupledRigidContactsReplayedFromTheirSolutions) {
  std::ifstream file(example("soft/cloth_on_pendulum.json"));
  std::stringstream text;
  text << file.rdbuf();
  std::string scene = text.str();
  const std::string bodies = "\"bodies\": [";
  const std::size_t at = scene.find(bodies);
  ASSERT_NE(at, std::string::npos);
  scene.insert(at + bodies.size(),
               R"({"name": "puck", "position": [0.8, 0.5, 0.0499], "linear_velocity": [0.6, 0.1, 0], "mass": 0.3,
                   "friction": 0.4, "shapes": [{"type": "sphere", "radius": 0.05}]}, )");
  scene.insert(scene.find("\"bodies\""), "\"ground\": true, ");
  World world = parse_world(scene, "puck_and_pendulum.json", example("soft"));
  world.soft->model.newton.tolerance = 1e-12;
  world.rigid->model.solver.tolerance = 1e-13;
  ASSERT_EQ(world.rigid_steps_per_step(), 4);
  const int steps = 3;
  const WorldParams params = world.default_params();
  const WorldState x0 = world.initial_state();
  const auto loss_gradient = [&](int t, const WorldState& x, WorldStateGradient& g) {
    const std::vector<double> packed = pack_state(world, x);
    for (std::size_t i = 0; i < static_cast<std::size_t>(world.layout().soft_state_offset); ++i) {
      const double w = weight(i + static_cast<std::size_t>(t));
      if (i % 13 < 3) g.rigid[12 * (i / 13) + i % 13] += w;
      else if (i % 13 >= 7) g.rigid[12 * (i / 13) + i % 13 - 1] += w;
    }
  };
  const auto rigid_loss = [&](const WorldRollout& r) {
    double loss = 0.0;
    for (int t = 0; t <= r.steps(); ++t) {
      const std::vector<double> x = pack_state(world, r.state(t));
      for (std::size_t i = 0; i < static_cast<std::size_t>(world.layout().soft_state_offset); ++i)
        if (i % 13 < 3 || i % 13 >= 7) loss += weight(i + static_cast<std::size_t>(t)) * x[i];
    }
    return loss;
  };
  const auto gradients = [&](int interval, bool keep) {
    WorldRolloutOptions options;
    options.rollout.checkpoint_interval = interval;
    options.rollout.keep_step_records = keep;
    WorldRollout rollout(world, params, options);
    rollout.run(x0, {}, steps);
    EXPECT_TRUE(rollout.status(steps - 1).rigid.back().contact_count > 0);
    return rollout.backward(loss_gradient);
  };
  const WorldGradients kept = gradients(0, true);
  ASSERT_TRUE(kept.solver_converged);
  for (const auto& [interval, keep] : {std::pair{2, true}, std::pair{0, false}}) {
    const WorldGradients other = gradients(interval, keep);
    EXPECT_EQ(other.initial_state, kept.initial_state) << interval << keep;
    EXPECT_EQ(other.params, kept.params) << interval << keep;
  }
  const auto check = [&](const std::string& what, double gradient, const auto& loss_at, double h) {
    const double numeric = (loss_at(h) - loss_at(-h)) / (2 * h);
    EXPECT_NEAR(gradient, numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << what;
  };
  for (const char* name : {"body/puck/mass", "body/puck/friction", "body/pendulum/mass"}) {
    const NamedSlice& slice = WorldLayout::find(world.layout().params, name, "parameter");
    const auto index = static_cast<std::size_t>(slice.offset);
    check(name, kept.params[index], [&](double d) {
      WorldParams moved = params;
      moved.values[index] += d;
      WorldRollout r(world, moved);
      r.run(x0, {}, steps);
      return rigid_loss(r);
    }, 1e-6 * std::max(std::abs(params.values[index]), 1e-2));
  }
  const int puck = 1;  // bodies: the puck inserted first, then the pendulum
  ASSERT_EQ(world.rigid->model.bodies[puck].name, "puck");
  const std::vector<double> packed0 = pack_state(world, x0);
  for (const auto& [what, packed, tangent] : {std::tuple{"x0/puck/linear_velocity[0]", 13 * puck + 7, 12 * puck + 6},
                                              std::tuple{"x0/puck/position[1]", 13 * puck + 1, 12 * puck + 1}}) {
    check(what, kept.initial_state[static_cast<std::size_t>(tangent)], [&, p = packed](double d) {
      std::vector<double> moved = packed0;
      moved[static_cast<std::size_t>(p)] += d;
      WorldRollout r(world, params);
      r.run(unpack_state(world, moved), {}, steps);
      return rigid_loss(r);
    }, 1e-6);
  }
}

// The soft part collides with copies of the rigid colliders' shapes, sized when the scene was
// read: a rollout refuses other sizes, and the gradient names those slices as incomplete.
TEST(World, ColliderSizesAreFixedInACoupledWorld) {
  const World world = load_world(example("soft/cloth_on_pendulum.json"));
  std::vector<std::string> names;
  for (const NamedSlice& slice : world.collider_geometry()) names.push_back(slice.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shape/rod/radius", "shape/rod/half_length", "shape/bob/half_extents"}));
  WorldParams params = world.default_params();
  {
    WorldRollout rollout(world, params);
    rollout.run(world.initial_state(), {}, 1);
    const WorldGradients g = rollout.backward({});
    for (const std::string& name : names)
      EXPECT_NE(std::find(g.not_differentiable.begin(), g.not_differentiable.end(), name), g.not_differentiable.end()) << name;
  }
  params.slice(world, "shape/bob/half_extents")[2] = 0.04;
  WorldRollout rollout(world, params);
  try {
    rollout.run(world.initial_state(), {}, 1);
    FAIL() << "a changed collider size was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("'shape/bob/half_extents'[2] is 0.04"), std::string::npos) << error.what();
  }
}

// Decay and clipping act on every part (RolloutOptions): in a one-way coupled world the soft
// adjoint of a final-state loss reaches x_0 only through soft steps, so a decay α per step
// scales it by exactly α^T; a clip bounds every recorded norm and counts the steps it cut.
TEST(World, DecayAndClippingReachTheSoftPartOfACoupledWorld) {
  std::ifstream file(example("soft/cloth_on_pendulum.json"));
  std::stringstream text;
  text << file.rdbuf();
  std::string scene = text.str();
  const std::size_t two_way = scene.find("\"two_way\": true");
  ASSERT_NE(two_way, std::string::npos);
  scene.replace(two_way, std::string("\"two_way\": true").size(), "\"two_way\": false");
  const World world = parse_world(scene, "one_way.json", example("soft"));
  ASSERT_FALSE(world.coupling.two_way);
  const int steps = 3;
  const WorldParams params = world.default_params();
  const auto loss = [&](int t, const WorldState&, WorldStateGradient& g) {
    if (t != steps) return;
    for (std::size_t i = 0; i < g.soft_positions.size(); ++i) g.soft_positions[i] += weight(i);
  };
  // Clipping: a loss at every step, each large beside the clip.
  const auto every_step = [&](int, const WorldState&, WorldStateGradient& g) {
    for (std::size_t i = 0; i < g.soft_positions.size(); ++i) g.soft_positions[i] += weight(i);
  };
  const auto gradients = [&](double decay, double clip, const WorldLossGradient& loss_gradient) {
    WorldRolloutOptions options;
    options.rollout.gradient_decay = decay;
    options.rollout.gradient_clip = clip;
    WorldRollout rollout(world, params, options);
    rollout.run(world.initial_state(), {}, steps);
    return rollout.backward(loss_gradient);
  };
  const WorldGradients plain = gradients(1.0, 0.0, loss);
  const WorldGradients decayed = gradients(0.5, 0.0, loss);
  const auto soft = static_cast<std::size_t>(world.layout().soft_tangent_offset);
  double largest = 0.0;
  for (std::size_t i = soft; i < plain.initial_state.size(); ++i) largest = std::max(largest, std::abs(plain.initial_state[i]));
  ASSERT_GT(largest, 0.0);
  for (std::size_t i = soft; i < plain.initial_state.size(); ++i)
    EXPECT_NEAR(decayed.initial_state[i], 0.125 * plain.initial_state[i], 1e-12 * largest) << i;
  const WorldGradients clipped = gradients(1.0, 1e-3, every_step);
  EXPECT_EQ(clipped.soft_health.clipped_steps, steps + 1);
  for (const double norm : clipped.soft_health.state_gradient_norm) EXPECT_LE(norm, 1e-3);
}

// Closed loop through the world (WorldController): a linear feedback on the state, u = K x,
// differentiated through the controller's own act_backward, against central differences of
// the closed-loop loss in an initial-state component; rigid (a motor's force from the cart's
// velocity) and soft (damping forces on every node).
// A packed state entry's place in the tangent: a rigid body's 13 [p, q, v, ω] map to its 12
// [p, δθ, v, ω] (the quaternion to none), the soft entries keep their order.
std::optional<std::size_t> tangent_of(const World& world, std::size_t packed) {
  const auto soft_state = static_cast<std::size_t>(world.layout().soft_state_offset);
  if (packed >= soft_state) return packed - soft_state + static_cast<std::size_t>(world.layout().soft_tangent_offset);
  if (packed % 13 < 3) return 12 * (packed / 13) + packed % 13;
  if (packed % 13 >= 7) return 12 * (packed / 13) + packed % 13 - 1;
  return std::nullopt;
}

class LinearFeedback final : public WorldController {
 public:
  LinearFeedback(const World& world, double gain) : world_(world), gain_(gain) {
    if (world.has_rigid())
      for (int b = 0; b < world.rigid->model.body_count(); ++b)
        if (world.rigid->model.bodies[static_cast<std::size_t>(b)].type == BodyType::Dynamic) dynamic_.push_back(static_cast<std::size_t>(b));
  }
  // u_i = gain · x̂_i, x̂ the packed state's velocity entries taken cyclically.
  void act(int, const WorldState& state, std::span<double> controls) override {
    const std::vector<double> x = pack_state(world_, state);
    for (std::size_t i = 0; i < controls.size(); ++i) controls[i] = gain_ * x[source(i)];
  }
  void act_backward(int, const WorldState&, std::span<const double> control_gradient,
                    WorldStateGradient& state_gradient) override {
    for (std::size_t i = 0; i < control_gradient.size(); ++i) state_gradient.all[tangent(source(i))] += gain_ * control_gradient[i];
  }

 private:
  const World& world_;
  double gain_;
  std::vector<std::size_t> dynamic_;  // the rigid part's dynamic bodies
  // Velocity entries of the packed state: v_x of every dynamic rigid body, every soft velocity.
  std::size_t source(std::size_t i) const {
    if (world_.has_soft()) return static_cast<std::size_t>(world_.layout().soft_state_offset + world_.soft->model.dof_count()) + i;
    return 13 * dynamic_[i % dynamic_.size()] + 7;
  }
  std::size_t tangent(std::size_t packed) const { return *tangent_of(world_, packed); }
};

void expect_closed_loop_gradient(const World& world, double gain, int steps, std::size_t packed, std::size_t tangent,
                                 double h = 1e-6) {
  SCOPED_TRACE(world.source);
  const WorldParams params = world.default_params();
  LinearFeedback controller(world, gain);
  WorldRollout rollout(world, params);
  rollout.run(world.initial_state(), controller, steps);
  EXPECT_EQ(rollout.controls().size(), static_cast<std::size_t>(steps * world.layout().control_count));
  const auto loss_gradient = [&](int, const WorldState& x, WorldStateGradient& dx) {
    const std::vector<double> packed_x = pack_state(world, x);
    for (std::size_t i = 0; i < packed_x.size(); ++i)
      if (const auto at = tangent_of(world, i)) dx.all[*at] += weight(i);  // the quaternion is left out of the loss
  };
  const WorldGradients g = rollout.backward(loss_gradient);
  const std::vector<double> x0 = pack_state(world, world.initial_state());
  const auto loss_at = [&](double d) {
    std::vector<double> moved = x0;
    moved[packed] += d;
    WorldRollout r(world, params);
    r.run(unpack_state(world, moved), controller, steps);
    double loss = 0.0;
    for (int t = 0; t <= steps; ++t) {
      const std::vector<double> x = pack_state(world, r.state(t));
      for (std::size_t i = 0; i < x.size(); ++i)
        if (tangent_of(world, i)) loss += weight(i) * x[i];
    }
    return loss;
  };
  const double numeric = (loss_at(h) - loss_at(-h)) / (2 * h);
  EXPECT_NEAR(g.initial_state[tangent], numeric, 1e-6 * std::max(1.0, std::abs(numeric)));
  // The feedback matters: open loop (the controls the controller chose, held), the gradient differs.
  WorldRollout open(world, params);
  open.run(world.initial_state(), rollout.controls(), steps);
  EXPECT_EQ(pack_state(world, open.final_state()), pack_state(world, rollout.final_state()));
  const WorldGradients g_open = open.backward(loss_gradient);
  EXPECT_GT(std::abs(g.initial_state[tangent] - g_open.initial_state[tangent]), 1e-3 * std::abs(numeric));
}

TEST(World, ClosedLoopGradientsMatchCentralDifferences) {
  // joints_tour: a motor on the cart's rail pushes with u = gain · v_x(cart); the cart's
  // initial v_x (packed 13 + 7, tangent 12 + 6).
  expect_closed_loop_gradient(load_world(example("scenes/joints_tour.json")), -1.5, 60, 13 + 7, 12 + 6);
  // mass_spring: node 1's z velocity.
  const World soft = load_world(example("soft/mass_spring.json"));
  const std::size_t dofs = static_cast<std::size_t>(soft.soft->model.dof_count());
  expect_closed_loop_gradient(soft, -0.05, 10, dofs + 5, dofs + 5);
  // Both parts (two-way): damping forces on the cloth's nodes from their velocities, through
  // the world's schedule; node 1's z velocity.
  // Solved tightly, as in the coupled test above. Its central differences agree with the
  // analytic gradient to 1e-8 at steps of 1e-3 and 1e-4 and drift from 1e-5 down (the
  // solvers' stopping noise: 3e-5 at 1e-6, 3e-4 at 1e-7), so the step is 1e-4.
  World both = load_world(example("soft/cloth_on_pendulum.json"));
  both.soft->model.newton.tolerance = 1e-12;
  both.rigid->model.solver.tolerance = 1e-13;
  ASSERT_EQ(both.layout().control_count, both.soft->model.dof_count());  // no rigid actuators
  const auto both_dofs = static_cast<std::size_t>(both.soft->model.dof_count());
  expect_closed_loop_gradient(both, -0.05, 6, static_cast<std::size_t>(both.layout().soft_state_offset) + both_dofs + 5,
                              static_cast<std::size_t>(both.layout().soft_tangent_offset) + both_dofs + 5, 1e-4);
}

}  // namespace
}  // namespace diffphys
