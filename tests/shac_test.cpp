// tests/shac_test.cpp — the short-horizon actor-critic trainer (diffphys/shac.hpp) and the joint
// coordinate VJPs its observations use (joint_position_vjp, joint_velocity_vjp): gradients
// against central differences, the critic against the closed-form value of a constant
// reward, learning a task a zero policy cannot do, the same bits for any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "diffphys/model_builder.hpp"
#include "diffphys/shac.hpp"
#include "diffphys/simulator.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::error_of;
using testing::joint_spec;
using testing::motor_spec;

// x ⊕ δ along tangent entry k of the 12-per-body layout (p, θ world-frame, v, ω).
State shac_test_perturbed(const State& state, std::size_t k, double step) {
  State out = state;
  const auto body = k / 12, slot = k % 12;
  const auto axis = static_cast<int>(slot % 3);
  if (slot < 3) {
    out.position[body][axis] += step;
  } else if (slot < 6) {
    Vec3 rotation{0, 0, 0};
    rotation[axis] = step;
    out.orientation[body] = Quat::from_rotation_vector(rotation) * state.orientation[body];
  } else if (slot < 9) {
    out.linear_velocity[body][axis] += step;
  } else {
    out.angular_velocity[body][axis] += step;
  }
  return out;
}

// Two boxes under the world: a universal joint, then a hinge, then a slider on a third box;
// posed and set moving away from their build pose so every coordinate is non-trivial.
Scene shac_test_joint_tour() {
  ModelBuilder builder;
  builder.add_body(box_body("a", {0, 0, -0.3}, {0.05, 0.05, 0.15}, 1.0));
  builder.add_body(box_body("b", {0, 0, -0.75}, {0.05, 0.05, 0.15}, 1.0));
  builder.add_body(box_body("c", {0.1, 0, -0.9}, {0.05, 0.05, 0.05}, 0.5));
  JointSpec universal = joint_spec("u", JointType::Universal, "world", "a", {0, 0, 0}, {1, 0, 0});
  universal.axis2 = {0, 1, 0};
  builder.add_joint(universal);
  builder.add_joint(joint_spec("h", JointType::Revolute, "a", "b", {0, 0, -0.6}, {0.3, 1, 0.1}));
  builder.add_joint(joint_spec("s", JointType::Prismatic, "b", "c", {0.1, 0, -0.9}, {1, 0.2, 0}));
  Scene scene = builder.build();
  Simulator simulator(scene.model, scene.params, scene.state);
  // Motion first, so that the joints sit away from zero and every velocity is non-zero.
  State state = scene.state;
  std::mt19937_64 generator(7);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  for (std::size_t b = 1; b < state.position.size(); ++b)
    for (int k = 0; k < 3; ++k) {
      state.linear_velocity[b][k] = uniform(generator);
      state.angular_velocity[b][k] = uniform(generator);
    }
  Simulator moving(scene.model, scene.params, state);
  for (int t = 0; t < 200; ++t) moving.step();
  scene.state = moving.state();
  return scene;
}

TEST(JointCoordinateVjp, PositionsAndVelocitiesMatchCentralDifferences) {
  const Scene scene = shac_test_joint_tour();
  const Model& model = scene.model;
  const std::size_t tangent = 12 * scene.state.position.size();
  for (int j = 0; j < model.joint_count(); ++j)
    for (int dof = 0; dof < joint_dof_count(model.joints[static_cast<std::size_t>(j)].type); ++dof)
      for (const bool velocity : {false, true}) {
        const auto value = [&](const State& s) {
          return velocity ? joint_velocity(model, s, j, dof) : joint_position(model, s, j, dof);
        };
        std::vector<double> analytic(tangent, 0.0);
        if (velocity) joint_velocity_vjp(model, scene.state, j, dof, 1.0, analytic);
        else joint_position_vjp(model, scene.state, j, dof, 1.0, analytic);
        double largest = 0.0;
        for (const double g : analytic) largest = std::max(largest, std::abs(g));
        ASSERT_GT(largest, 0.1) << model.joints[static_cast<std::size_t>(j)].name;
        for (std::size_t k = 12; k < tangent; ++k) {  // body 0, the world, is not moved
          constexpr double h = 1e-6;
          const double numeric = (value(shac_test_perturbed(scene.state, k, h)) -
                                  value(shac_test_perturbed(scene.state, k, -h))) / (2 * h);
          EXPECT_NEAR(analytic[k], numeric, 1e-7 * std::max(1.0, std::abs(numeric)))
              << model.joints[static_cast<std::size_t>(j)].name << " dof " << dof << (velocity ? " rate" : " position")
              << " tangent entry " << k;
        }
      }
}

TEST(JointCoordinateVjp, RefusesBadIndices) {
  const Scene scene = shac_test_joint_tour();
  std::vector<double> gradient(12 * scene.state.position.size(), 0.0);
  EXPECT_NE(error_of([&] { joint_position_vjp(scene.model, scene.state, 7, 0, 1.0, gradient); }).find("joint index 7"),
            std::string::npos);
  EXPECT_NE(error_of([&] { joint_velocity_vjp(scene.model, scene.state, 1, 1, 1.0, gradient); }).find("got dof 1"),
            std::string::npos);
  std::vector<double> short_gradient(5, 0.0);
  EXPECT_NE(error_of([&] { joint_position_vjp(scene.model, scene.state, 0, 0, 1.0, short_gradient); })
                .find("state_gradient has 5 entries"),
            std::string::npos);
}

// A pendulum (a 1 kg box on a hinge about y, 0.5 m below it) with a motor of up to
// `torque_scale` N·m; reward −(θ − θ*)² − 0.01 θ̇²; observation (θ, θ̇) through the joint VJPs.
// θ* = kHoldAngle, or with `goals` a goal drawn per episode in [−0.5, 0.5] rad.
constexpr double kHoldAngle = 0.5;

// With `servo`: a velocity servo (gain 30 1/s, 50 N·m, 2 rad/s) whose target is the angle now
// plus the action (relative_servo_targets), torque_scale then being the action's scale in rad.
// Its torque bound is never reached: with 5 N·m the relative-target runs touch it, and there
// three of 32 actor gradient entries were 1.3e-5…2.8e-5 off (relative) at every difference
// step — the interior point's answer for a row at its bound, not the relative targets' VJP.
ShacTask pendulum_task(double torque_scale, double start_speed, bool goals = false, bool servo = false) {
  ModelBuilder builder;
  builder.dt = 0.01;
  builder.add_body(box_body("bob", {0, 0, -0.5}, {0.05, 0.05, 0.05}, 1.0));
  builder.add_joint(joint_spec("hinge", JointType::Revolute, "world", "bob", {0, 0, 0}, {0, 1, 0}, 0.05));
  if (servo) builder.add_actuator(testing::servo_spec("servo", "hinge", 0.0, 30.0, 50.0, 2.0));
  else builder.add_actuator(motor_spec("motor", "hinge"));
  Scene scene = builder.build();
  ShacTask task;
  task.model = scene.model;
  task.params = scene.params;
  const Model model = scene.model;
  const State rest = scene.state;
  task.initial_state = [model, rest, start_speed](int environment, int episode) {
    // A swing whose speed depends on the environment and episode: a pure function of both.
    State x = rest;
    const double speed = start_speed * std::sin(1.0 + 0.7 * environment + 1.3 * episode);
    x.angular_velocity[1] = {0, speed, 0};
    x.linear_velocity[1] = cross(Vec3{0, speed, 0}, x.position[1]);
    return x;
  };
  task.observation.size = 2;
  task.observation.compute = [model](int, const State& x, std::span<double> s) {
    s[0] = joint_position(model, x, 0, 0);
    s[1] = joint_velocity(model, x, 0, 0);
  };
  task.observation.backward = [model](int, const State& x, std::span<const double> s_bar, std::span<double> x_bar) {
    joint_position_vjp(model, x, 0, 0, s_bar[0], x_bar);
    joint_velocity_vjp(model, x, 0, 0, s_bar[1], x_bar);
  };
  if (goals) {
    task.goal_size = 1;
    task.goal = [](int environment, int episode, std::span<double> goal) {
      goal[0] = 0.5 * std::sin(2.1 + 1.7 * environment + 0.9 * episode);
    };
  }
  task.reward = [model](int, const State& x, std::span<const double> goal, std::span<double> gradient) {
    const double target = goal.empty() ? kHoldAngle : goal[0];
    const double angle = joint_position(model, x, 0, 0), rate = joint_velocity(model, x, 0, 0);
    if (!gradient.empty()) {
      joint_position_vjp(model, x, 0, 0, -2.0 * (angle - target), gradient);
      joint_velocity_vjp(model, x, 0, 0, -0.02 * rate, gradient);
    }
    return -(angle - target) * (angle - target) - 0.01 * rate * rate;
  };
  task.episode_steps = 128;
  task.action_scale = {torque_scale};
  task.relative_servo_targets = servo;
  return task;
}

// The actor's gradient against central differences, the pendulum driven by its motor, or by
// its servo with relative targets (scale 0.05 rad < max_velocity/gain: the servo's linear
// range, where the rate depends on the target).
void check_actor_gradient(bool servo) {
  ShacTask task = pendulum_task(servo ? 0.05 : 4.0, 1.5, true, servo);
  task.action_penalty = 0.1;
  ShacSettings settings;
  settings.environments = 3;
  settings.window = 8;
  settings.actor_hidden = {6};
  settings.critic_hidden = {6};
  settings.initial_log_std = -0.5;
  task.episode_steps = 16;
  ShacTrainer trainer(task, settings);
  // A few updates first: a non-zero actor, a trained critic, observation statistics, an
  // environment past its first window.
  for (int k = 0; k < 3; ++k) trainer.update();
  std::vector<double> analytic(static_cast<std::size_t>(trainer.actor_parameter_count()));
  trainer.actor_loss(analytic);
  std::span<double> parameters = trainer.actor_parameters();
  int checked = 0;
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const double saved = parameters[k];
    constexpr double h = 1e-6;
    std::vector<double> unused(parameters.size());
    parameters[k] = saved + h;
    const double plus = trainer.actor_loss(unused);
    parameters[k] = saved - h;
    const double minus = trainer.actor_loss(unused);
    parameters[k] = saved;
    const double numeric = (plus - minus) / (2 * h);
    // Central differences' error at h = 1e-6: ~1e-10 here (rounding of a loss ~0.1).
    EXPECT_NEAR(analytic[k], numeric, 1e-9 + 1e-5 * std::abs(numeric)) << "actor parameter " << k;
    if (std::abs(numeric) > 1e-6) ++checked;
  }
  EXPECT_GT(checked, static_cast<int>(parameters.size()) * 3 / 4);  // most entries are not trivially 0
}

TEST(Shac, ActorGradientMatchesCentralDifferences) { check_actor_gradient(false); }

TEST(Shac, ActorGradientThroughRelativeServoTargetsMatchesCentralDifferences) { check_actor_gradient(true); }

TEST(Shac, CriticLearnsTheClosedFormValueOfAConstantReward) {
  // The pendulum at rest at the bottom with its motor scaled to zero: every reward is
  // −θ*² and the state never changes, so V = −θ*²/(1 − γ) whatever λ is.
  for (const double lambda : {0.0, 1.0}) {
    ShacTask task = pendulum_task(0.0, 0.0);
    ShacSettings settings;
    settings.environments = 2;
    settings.window = 16;
    settings.discount = 0.9;
    settings.td_lambda = lambda;
    settings.critic_hidden = {8};
    settings.critic_rate = 5e-4;  // Adam's steps jitter the fit by O(rate): small, for a tight check
    task.episode_steps = 32;
    ShacTrainer trainer(task, settings);
    const State rest = task.initial_state(0, 0);
    const double expected = -kHoldAngle * kHoldAngle / (1.0 - settings.discount);
    ShacUpdate last;
    for (int k = 0; k < 400; ++k) last = trainer.update();
    EXPECT_NEAR(trainer.value(rest, 0), expected, 1e-3 * std::abs(expected)) << "lambda " << lambda;
    EXPECT_NEAR(last.mean_reward, -kHoldAngle * kHoldAngle, 1e-12);
    EXPECT_LT(last.critic_loss_after, 1e-6);
  }
}

TEST(Shac, LearnsToHoldAPendulumAtTheAngleItIsGiven) {
  ShacTask task = pendulum_task(4.0, 1.0, true);
  ShacSettings settings;
  settings.environments = 8;
  settings.window = 16;
  settings.actor_hidden = {32, 32};
  settings.critic_hidden = {32, 32};
  ShacTrainer trainer(task, settings);
  // A zero policy hangs at θ = 0 and earns −θ*² per step at best (1/8 on average over the
  // goals, plus its swing).
  double first_critic_loss = 0.0, late_critic_loss = 0.0, late_reward = 0.0;
  constexpr int kUpdates = 160;
  for (int k = 1; k <= kUpdates; ++k) {
    const ShacUpdate u = trainer.update();
    if (k <= 10) first_critic_loss += u.critic_loss / 10;
    if (k > kUpdates - 10) {
      late_critic_loss += u.critic_loss / 10;
      late_reward += u.mean_reward / 10;
    }
  }
  EXPECT_GT(late_reward, -0.02);               // holding near θ* (noise included)
  EXPECT_LT(late_critic_loss, 0.1 * first_critic_loss);  // the critic's TD error falls
  // The deterministic policy holds the angle it is given, from rest.
  for (const double goal : {0.4, -0.3}) {
    const std::vector<double> goal_vector{goal};
    std::unique_ptr<Controller> policy = trainer.policy(goal_vector);
    Rollout rollout(task.model, task.params);
    rollout.run(pendulum_task(4.0, 0.0).initial_state(0, 0), *policy, 300);
    EXPECT_NEAR(joint_position(task.model, rollout.final_state(), 0, 0), goal, 0.05) << "goal " << goal;
  }
}

TEST(Shac, SameBitsForOneAndTwoThreads) {
  std::vector<std::vector<double>> results;
  for (const int threads : {1, 2}) {
    ShacSettings settings;
    settings.environments = 5;
    settings.window = 8;
    settings.threads = threads;
    settings.actor_hidden = {8};
    settings.critic_hidden = {8};
    ShacTask task = pendulum_task(4.0, 1.5);
    task.episode_steps = 16;
    ShacTrainer trainer(task, settings);
    for (int k = 0; k < 4; ++k) trainer.update();
    const std::span<double> parameters = trainer.actor_parameters();
    results.emplace_back(parameters.begin(), parameters.end());
    results.back().push_back(trainer.value(task.initial_state(1, 2), 3));
    results.back().push_back(trainer.update().critic_loss_after);
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(Shac, RefusesBadSettings) {
  const auto refusal = [](auto change) {
    ShacTask task = pendulum_task(1.0, 1.0);
    ShacSettings settings;
    change(task, settings);
    return error_of([&] { ShacTrainer trainer(task, settings); });
  };
  EXPECT_NE(refusal([](ShacTask& t, ShacSettings&) { t.episode_steps = 100; })
                .find("episode_steps (100) must be a positive multiple of the window (32)"),
            std::string::npos);
  EXPECT_NE(refusal([](ShacTask&, ShacSettings& s) { s.discount = 1.5; }).find("discount must lie in [0, 1], got 1.5"),
            std::string::npos);
  EXPECT_NE(refusal([](ShacTask& t, ShacSettings&) { t.action_scale = {1, 2}; })
                .find("action_scale has 2"),
            std::string::npos);
  EXPECT_NE(refusal([](ShacTask& t, ShacSettings&) { t.observation.size = 0; }).find("observation needs a positive size"),
            std::string::npos);
  EXPECT_NE(refusal([](ShacTask&, ShacSettings& s) { s.environments = 0; }).find("environments must be positive, got 0"),
            std::string::npos);
}

}  // namespace
}  // namespace diffphys
