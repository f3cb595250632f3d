// experiments/arm_model.cpp — the Degrave et al. 2019 §3.2 arm and its episodes.
#include "experiments/arm_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace diffphys::experiments {
namespace {

constexpr double kLinkLength = 0.5;    // m: two links, the arm is 1 m long (§3.2)
constexpr double kLinkRadius = 0.04;   // m
constexpr double kPedestalMass = 22.0;  // kg: static; 22 + 7 + 3 = 32 kg in all (§3.2)
constexpr double kUpperArmMass = 7.0;   // kg
constexpr double kForearmMass = 3.0;    // kg
constexpr double kServoGain = 30.0;     // 1/s
constexpr double kServoTorque = 30.0;   // N·m
constexpr double kServoVelocity = std::numbers::pi / 4;  // rad/s: 45°/s

}  // namespace

Vec3 ArmModel::end_effector(const State& state) const {
  const auto b = static_cast<std::size_t>(forearm);
  return state.position[b] + state.orientation[b].rotate(tip_local);
}

void ArmModel::end_effector_vjp(const State& state, const Vec3& gradient, std::span<double> state_gradient) const {
  const auto b = static_cast<std::size_t>(forearm);
  // p_tip = p + R r: δp_tip = δp + δθ × (R r), so dL/dθ = (R r) × dL/dp_tip.
  const Vec3 lever = state.orientation[b].rotate(tip_local);
  const Vec3 angular = cross(lever, gradient);
  double* slot = state_gradient.data() + kStateTangentPerBody * forearm;
  for (int i = 0; i < 3; ++i) {
    slot[i] += gradient[i];
    slot[3 + i] += angular[i];
  }
}

ArmModel build_degrave_arm() {
  ModelBuilder builder;
  builder.name = "degrave_arm_4dof";
  builder.dt = 0.01;  // §3.2.1: "8 s ... a simulation step of 0.01 s"

  BodySpec pedestal;  // the robot's base, bolted down: its mass does not move
  pedestal.name = "pedestal";
  pedestal.type = BodyType::Static;
  pedestal.position = {0, 0, -0.1};
  pedestal.mass = kPedestalMass;
  ShapeSpec base_box;
  base_box.type = ShapeType::Box;
  base_box.half_extents = {0.15, 0.15, 0.08};
  base_box.collision_mask = 0;  // nothing to touch
  pedestal.shapes.push_back(base_box);
  builder.add_body(pedestal);

  const char* link_names[2] = {"upper_arm", "forearm"};
  const char* joint_names[2] = {"base", "elbow"};
  const double masses[2] = {kUpperArmMass, kForearmMass};
  for (int link = 0; link < 2; ++link) {
    const double bottom = link * kLinkLength;
    BodySpec body;
    body.name = link_names[link];
    body.position = {0.0, 0.0, bottom + 0.5 * kLinkLength};
    body.mass = masses[link];
    // A slender rod along its z axis: m l²/12 across, m r²/2 about the axis.
    const double across = masses[link] * kLinkLength * kLinkLength / 12.0;
    body.inertia = Vec3{across, across, 0.5 * masses[link] * kLinkRadius * kLinkRadius};
    ShapeSpec capsule;
    capsule.type = ShapeType::Capsule;
    capsule.radius = kLinkRadius;
    capsule.half_length = 0.5 * kLinkLength - kLinkRadius;
    capsule.collision_mask = 0;  // the links never reach each other or the pedestal's top
    body.shapes.push_back(capsule);
    builder.add_body(body);

    JointSpec joint;
    joint.name = joint_names[link];
    joint.type = JointType::Universal;
    joint.parent = link == 0 ? std::string("pedestal") : std::string(link_names[0]);
    joint.child = body.name;
    joint.anchor = {0.0, 0.0, bottom};
    joint.axis = {1, 0, 0};
    joint.axis2 = {0, 1, 0};
    builder.add_joint(joint);

    for (int dof = 0; dof < 2; ++dof) {
      ActuatorSpec servo;
      servo.name = std::string(joint_names[link]) + (dof == 0 ? "_x" : "_y");
      servo.type = ActuatorType::Servo;
      servo.joint = joint.name;
      servo.dof = dof;
      servo.gain = kServoGain;
      servo.max_torque = kServoTorque;
      servo.max_velocity = kServoVelocity;
      builder.add_actuator(servo);
    }
  }
  ArmModel arm;
  arm.scene = builder.build();
  arm.forearm = arm.scene.model.body_index("forearm");
  arm.tip_local = {0.0, 0.0, 0.5 * kLinkLength};  // the forearm's free end (frame at its centre)
  return arm;
}

FeatureMap arm_features(const ArmModel& arm, ArmInput input, const Vec3& target) {
  FeatureMap features;
  if (input == ArmInput::DistanceToTarget) {
    features.size = 1;
    features.compute = [&arm, target](int, const State& state, std::span<double> out) {
      out[0] = norm(arm.end_effector(state) - target);
    };
    features.backward = [&arm, target](int, const State& state, std::span<const double> feature_gradient,
                                       std::span<double> state_gradient) {
      const Vec3 offset = arm.end_effector(state) - target;
      const double distance = norm(offset);
      if (distance > 0.0) arm.end_effector_vjp(state, offset * (feature_gradient[0] / distance), state_gradient);
    };
  } else {
    features.size = 3;  // the target does not depend on the state: no backward
    features.compute = [target](int, const State&, std::span<double> out) {
      out[0] = target.x;
      out[1] = target.y;
      out[2] = target.z;
    };
  }
  return features;
}

namespace {

// The loss L = (1/T) Σ_{t=1..T} |p_tip(t) − target| and the final distance of a rollout.
ArmEpisode measure_episode(const ArmModel& arm, const Rollout& rollout, const Vec3& target, int steps) {
  ArmEpisode episode;
  for (int t = 1; t <= steps; ++t) episode.average_distance += norm(arm.end_effector(rollout.state(t)) - target);
  episode.average_distance /= steps;
  episode.final_distance = norm(arm.end_effector(rollout.final_state()) - target);
  return episode;
}

// The rollout's backward pass for that loss: dL/dx_t = (1/T) (p_tip − target)ᵀ/|…| ∂p_tip/∂x_t.
Gradients average_distance_backward(const ArmModel& arm, Rollout& rollout, const Vec3& target, int steps) {
  return rollout.backward([&](int t, const State& state, std::span<double> state_gradient) {
    if (t == 0) return;  // x_0 does not depend on the weights
    const Vec3 offset = arm.end_effector(state) - target;
    const double distance = norm(offset);
    if (distance > 0.0) arm.end_effector_vjp(state, offset * (1.0 / (steps * distance)), state_gradient);
  });
}

}  // namespace

ArmEpisode run_arm_episode(const ArmModel& arm, const Mlp& network, std::span<const double> weights,
                           ArmInput input, const Vec3& target, int steps, const RolloutOptions& options,
                           std::span<double> gradient) {
  MlpPolicy policy(network, weights, arm_features(arm, input, target));
  Rollout rollout(arm.scene.model, arm.scene.params, options);
  rollout.run(arm.scene.state, policy, steps);

  const ArmEpisode episode = measure_episode(arm, rollout, target, steps);
  if (gradient.empty()) return episode;

  average_distance_backward(arm, rollout, target, steps);
  std::copy(policy.weight_gradient().begin(), policy.weight_gradient().end(), gradient.begin());
  return episode;
}

ArmEpisode run_arm_open_loop_episode(const ArmModel& arm, const Mlp& network, std::span<const double> weights,
                                     const Vec3& target, int steps, const RolloutOptions& options,
                                     std::span<double> gradient) {
  const int actuators = arm.scene.model.actuator_count();
  const double input[3] = {target.x, target.y, target.z};
  std::vector<double> servo_targets(static_cast<std::size_t>(actuators));
  MlpTape tape;
  network.forward(weights, input, tape, servo_targets);
  std::vector<double> controls(static_cast<std::size_t>(steps * actuators));
  for (int t = 0; t < steps; ++t)
    std::copy(servo_targets.begin(), servo_targets.end(), controls.begin() + static_cast<std::ptrdiff_t>(t * actuators));
  Rollout rollout(arm.scene.model, arm.scene.params, options);
  rollout.run(arm.scene.state, controls, steps);

  const ArmEpisode episode = measure_episode(arm, rollout, target, steps);
  if (gradient.empty()) return episode;

  const Gradients g = average_distance_backward(arm, rollout, target, steps);
  std::vector<double> output_gradient(static_cast<std::size_t>(actuators), 0.0);
  for (int t = 0; t < steps; ++t)
    for (int a = 0; a < actuators; ++a)
      output_gradient[static_cast<std::size_t>(a)] += g.controls[static_cast<std::size_t>(t * actuators + a)];
  std::fill(gradient.begin(), gradient.end(), 0.0);
  network.backward(weights, tape, output_gradient, gradient, {});
  return episode;
}

}  // namespace diffphys::experiments
