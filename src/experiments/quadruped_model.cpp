// experiments/quadruped_model.cpp — the Degrave et al. 2019 §3.3 quadruped, its episodes and
// the hand-tuned trot. Dimensions and the reasons for them: docs/EXPERIMENTS.md (quadruped-invented).
#include "experiments/quadruped_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kTotalMass = 28.7;                 // kg (§3.3)
constexpr double kTorsoMass = 0.75 * kTotalMass;    // kg: "75% of the mass ... in its torso"
constexpr double kUpperLegMass = 1.0;               // kg, each
constexpr double kLowerLegMass = (kTotalMass - kTorsoMass) / 4 - kUpperLegMass;  // 0.79375 kg each
constexpr Vec3 kTorsoHalfExtents{0.25, 0.125, 0.05};  // m: a 0.5 × 0.25 × 0.1 m cuboid
constexpr double kTorsoSphereRadius = 0.05;         // m: touches the cuboid's faces from inside
constexpr double kLegRadius = 0.02;                 // m: the leg capsules and the foot spheres
constexpr double kShoulderX = 0.2;                  // m: shoulders at ±0.2 m along the torso
constexpr double kShoulderY = 0.155;                // m: just outside the torso's sides
constexpr double kFriction = 1.0;
constexpr double kQuadrupedServoTorque = 4.0;       // N·m (§3.3)
constexpr std::uint32_t kRobotGroup = 2;  // robot shapes touch the ground only (group 1)

// A slender rod of length l along z: m l²/12 across, m r²/2 about its axis.
Vec3 rod_inertia(double mass, double length, double radius) {
  const double across = mass * length * length / 12.0;
  return {across, across, 0.5 * mass * radius * radius};
}

ShapeSpec ground_only(ShapeSpec shape) {
  shape.collision_group = kRobotGroup;
  shape.collision_mask = 1;
  return shape;
}

}  // namespace

QuadrupedModel build_quadruped(const QuadrupedDesign& design) {
  const double kLegLength = design.leg_length;
  const double kStandingHeight = 2 * kLegLength + kLegRadius;  // torso centre at rest, m
  ModelBuilder builder;
  builder.name = "degrave_quadruped";
  builder.dt = design.dt;
  builder.world_friction = kFriction;
  builder.add_ground_plane();

  BodySpec torso;
  torso.name = "torso";
  torso.position = {0.0, 0.0, kStandingHeight};
  torso.mass = kTorsoMass;
  torso.center_of_mass = Vec3{};
  const Vec3 full = kTorsoHalfExtents * 2.0;
  torso.inertia = Vec3{kTorsoMass / 12 * (full.y * full.y + full.z * full.z),
                       kTorsoMass / 12 * (full.x * full.x + full.z * full.z),
                       kTorsoMass / 12 * (full.x * full.x + full.y * full.y)};
  torso.friction = kFriction;
  ShapeSpec cuboid;  // drawn, never collides: the spheres inside it do (Fig. 3B caption)
  cuboid.name = "torso/cuboid";
  cuboid.type = ShapeType::Box;
  cuboid.half_extents = kTorsoHalfExtents;
  cuboid.collision_mask = 0;
  torso.shapes.push_back(cuboid);
  const double sphere_x = kTorsoHalfExtents.x - kTorsoSphereRadius;
  const double sphere_y = kTorsoHalfExtents.y - kTorsoSphereRadius;
  for (int i = 0; i < 4; ++i) {
    ShapeSpec sphere;
    sphere.name = "torso/sphere" + std::to_string(i);
    sphere.type = ShapeType::Sphere;
    sphere.radius = kTorsoSphereRadius;
    sphere.position = {(i & 1) ? -sphere_x : sphere_x, (i & 2) ? -sphere_y : sphere_y, 0.0};
    torso.shapes.push_back(ground_only(sphere));
  }
  builder.add_body(torso);

  const char* leg_names[QuadrupedModel::kLegs] = {"front_left", "front_right", "hind_left", "hind_right"};
  const double leg_x[QuadrupedModel::kLegs] = {kShoulderX, kShoulderX, -kShoulderX, -kShoulderX};
  const double leg_y[QuadrupedModel::kLegs] = {kShoulderY, -kShoulderY, kShoulderY, -kShoulderY};
  for (int leg = 0; leg < QuadrupedModel::kLegs; ++leg) {
    const std::string name = leg_names[leg];
    const double masses[2] = {kUpperLegMass, kLowerLegMass};
    const char* segment_names[2] = {"_upper", "_lower"};
    const char* joint_names[2] = {"_shoulder", "_elbow"};
    const double lower[2] = {-design.shoulder_limit, design.elbow_lower};
    const double upper[2] = {design.shoulder_limit, design.elbow_upper};
    for (int segment = 0; segment < 2; ++segment) {
      const double top = kStandingHeight - segment * kLegLength;  // the joint at the segment's top
      BodySpec body;
      body.name = name + segment_names[segment];
      body.position = {leg_x[leg], leg_y[leg], top - 0.5 * kLegLength};
      body.mass = masses[segment];
      body.center_of_mass = Vec3{};
      body.inertia = rod_inertia(masses[segment], kLegLength, kLegRadius);
      body.friction = kFriction;
      ShapeSpec capsule;  // drawn, never collides: a sphere at the lower leg's end is its foot
      capsule.type = ShapeType::Capsule;
      capsule.radius = kLegRadius;
      capsule.half_length = 0.5 * kLegLength;  // joint to joint (lower leg: knee to foot centre)
      capsule.collision_mask = 0;
      body.shapes.push_back(capsule);
      if (segment == 1) {
        ShapeSpec foot;
        foot.name = name + "_foot";
        foot.type = ShapeType::Sphere;
        foot.radius = kLegRadius;
        foot.position = {0.0, 0.0, -0.5 * kLegLength};
        body.shapes.push_back(ground_only(foot));
      }
      builder.add_body(body);

      JointSpec joint;
      joint.name = name + joint_names[segment];
      joint.type = JointType::Revolute;
      joint.parent = segment == 0 ? std::string("torso") : name + segment_names[0];
      joint.child = body.name;
      joint.anchor = {leg_x[leg], leg_y[leg], top};
      joint.axis = {0, 1, 0};
      if (lower[segment] < upper[segment]) {
        joint.lower_limit = lower[segment];
        joint.upper_limit = upper[segment];
      }
      builder.add_joint(joint);

      ActuatorSpec servo;
      servo.name = joint.name;
      servo.type = ActuatorType::Servo;
      servo.joint = joint.name;
      servo.gain = design.servo_gain;
      servo.max_torque = kQuadrupedServoTorque;
      servo.max_velocity = design.servo_velocity;
      builder.add_actuator(servo);
    }
  }
  QuadrupedModel robot;
  robot.scene = builder.build();
  robot.torso = robot.scene.model.body_index("torso");
  return robot;
}

FeatureMap clock_features(double frequency, double dt) {
  FeatureMap features;
  features.size = 2;
  features.compute = [frequency, dt](int step, const State&, std::span<double> out) {
    const double phase = 2 * std::numbers::pi * frequency * step * dt;
    out[0] = std::sin(phase);
    out[1] = std::cos(phase);
  };
  return features;  // the clock does not depend on the state: no backward
}

MlpSpec quadruped_network_spec() {
  MlpSpec spec{2, {128, 128}, QuadrupedModel::kServos};
  spec.hidden_activation = Activation::Relu;
  spec.output_activation = Activation::Identity;
  spec.skip = SkipConnection::ToOutput;
  return spec;
}

namespace {

QuadrupedEpisode measure(const QuadrupedModel& robot, const Rollout& rollout, int steps) {
  const auto torso = static_cast<std::size_t>(robot.torso);
  QuadrupedEpisode episode;
  const State initial = rollout.state(0);
  episode.lowest_torso_height = initial.position[torso].z;
  for (int t = 1; t <= steps; ++t) {
    const State x = rollout.state(t);
    const Vec3& p = x.position[torso];
    const Vec3& v = x.linear_velocity[torso];
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.z) || !std::isfinite(v.x))
      episode.finite = false;
    episode.average_forward_velocity += v.x;
    episode.lowest_torso_height = std::min(episode.lowest_torso_height, p.z);
  }
  episode.average_forward_velocity /= steps;
  const State& last = rollout.final_state();
  episode.distance = last.position[torso].x - initial.position[torso].x;
  episode.final_torso_height = last.position[torso].z;
  for (const StepStatus& status : rollout.statuses()) {
    if (!status.converged) ++episode.unconverged_steps;
    episode.largest_residual = std::max(episode.largest_residual, status.residual);
  }
  return episode;
}

}  // namespace

namespace {

// The network's servo targets over one period of its clock: the policy reads only the clock,
// so its targets repeat every `period` steps, and one table of network evaluations (with
// their tapes, for the backward pass) serves the whole episode.
struct ServoTable {
  int period = 0;                   // steps
  std::vector<MlpTape> tapes;       // (period) one network evaluation per step of the period
  std::vector<double> outputs;      // (period × 8) the network's u
  std::vector<double> targets;      // (period × 8) y = R tanh(u − ū) or clip(u, ±limit), rad
};

ServoTable servo_table(const QuadrupedModel& robot, const Mlp& network, std::span<const double> weights,
                       double dt) {
  if (network.spec().inputs != 2 || network.spec().outputs != QuadrupedModel::kServos)
    throw Error(message("quadruped: the network must map 2 clock inputs to 8 servo targets, not ",
                        network.spec().inputs, " to ", network.spec().outputs));
  ServoTable table;
  table.period = clock_period_steps(dt);
  const auto period = static_cast<std::size_t>(table.period);
  constexpr std::size_t n = QuadrupedModel::kServos;
  table.tapes.resize(period);
  std::vector<double>& outputs = table.outputs;
  outputs.resize(period * n);
  const FeatureMap clock = clock_features(kClockFrequency, dt);
  double input[2];
  double mean[n] = {};
  for (std::size_t k = 0; k < period; ++k) {
    clock.compute(static_cast<int>(k), State{}, input);
    const std::span<double> u = std::span(outputs).subspan(k * n, n);
    network.forward(weights, input, table.tapes[k], u);
    for (std::size_t i = 0; i < n; ++i) mean[i] += u[i] / static_cast<double>(period);
  }
  table.targets.resize(period * n);
  for (std::size_t k = 0; k < period; ++k)
    for (std::size_t i = 0; i < n; ++i)
      table.targets[k * n + i] =
          robot.target_map == ServoTargetMap::Clip
              ? std::clamp(outputs[k * n + i], -robot.target_limit, robot.target_limit)
              : servo_range(static_cast<int>(i)) * std::tanh(outputs[k * n + i] - mean[i]);
  return table;
}

// A target the map holds at its bound: |y| > 0.95 R for the tanh (less than 10 % of the
// gradient passes), clipped for the clip (none passes).
bool target_saturated(const QuadrupedModel& robot, const ServoTable& table, std::size_t k) {
  if (robot.target_map == ServoTargetMap::Clip) return std::abs(table.outputs[k]) >= robot.target_limit;
  return std::abs(table.targets[k]) > 0.95 * servo_range(static_cast<int>(k % QuadrupedModel::kServos));
}

std::vector<double> episode_targets(const ServoTable& table, int steps) {
  constexpr std::size_t n = QuadrupedModel::kServos;
  std::vector<double> targets(static_cast<std::size_t>(steps) * n);
  for (std::size_t t = 0; t < static_cast<std::size_t>(steps); ++t)
    for (std::size_t i = 0; i < n; ++i)
      targets[t * n + i] = table.targets[(t % static_cast<std::size_t>(table.period)) * n + i];
  return targets;
}

}  // namespace

double servo_range(int servo) {
  return servo % 2 == 0 ? kShoulderRange : kElbowRange;
}

int clock_period_steps(double dt) {
  // The smallest whole number of steps that is a whole number of clock periods (dt = 0.005 s:
  // 400 steps, 3 periods of 1.5 Hz).
  for (int steps = 1; steps <= 100000; ++steps) {
    const double periods = kClockFrequency * steps * dt;
    if (std::abs(periods - std::round(periods)) < 1e-9) return steps;
  }
  throw Error(message("quadruped: no whole number of steps of dt = ", dt, " s spans whole clock periods"));
}

std::vector<double> quadruped_servo_targets(const QuadrupedModel& robot, const Mlp& network,
                                            std::span<const double> weights, int steps, double dt) {
  return episode_targets(servo_table(robot, network, weights, dt), steps);
}

QuadrupedEpisode run_quadruped_episode(const QuadrupedModel& robot, const Mlp& network,
                                       std::span<const double> weights, int steps, const RolloutOptions& options,
                                       std::span<double> gradient, GradientHealth* health) {
  ServoTable table = servo_table(robot, network, weights, robot.scene.model.dt);
  Rollout rollout(robot.scene.model, robot.scene.params, options);
  rollout.run(robot.scene.state, episode_targets(table, steps), steps);
  QuadrupedEpisode episode = measure(robot, rollout, steps);
  std::size_t saturated = 0;
  for (std::size_t k = 0; k < table.targets.size(); ++k)
    if (target_saturated(robot, table, k)) ++saturated;
  episode.saturated_targets = static_cast<double>(saturated) / static_cast<double>(table.targets.size());
  if (gradient.empty()) return episode;

  // L = −(1/T) Σ_{t=1..T} v_x(t): dL/dv_x(t) = −1/T in the torso's linear-velocity slot.
  const int slot = kStateTangentPerBody * robot.torso + 6;
  Gradients g = rollout.backward([&](int t, const State&, std::span<double> state_gradient) {
    if (t >= 1) state_gradient[static_cast<std::size_t>(slot)] -= 1.0 / steps;
  });
  // dL/dy_k: the targets of step t are row t mod period of the table.
  constexpr std::size_t n = QuadrupedModel::kServos;
  const auto period = static_cast<std::size_t>(table.period);
  std::vector<double> target_gradient(period * n, 0.0);
  for (std::size_t t = 0; t < static_cast<std::size_t>(steps); ++t)
    for (std::size_t i = 0; i < n; ++i) target_gradient[(t % period) * n + i] += g.controls[t * n + i];
  // Through y = R tanh(z), z_k = u_k − (1/P) Σ_j u_j: dL/du_k = dL/dz_k − (1/P) Σ_j dL/dz_j.
  // Through y = clip(u, ±limit): dL/du = dL/dy inside the limits, 0 outside.
  const bool clip = robot.target_map == ServoTargetMap::Clip;
  std::vector<double> output_gradient(period * n);
  double mean[n] = {};
  for (std::size_t k = 0; k < period; ++k)
    for (std::size_t i = 0; i < n; ++i) {
      if (clip) {
        output_gradient[k * n + i] =
            std::abs(table.outputs[k * n + i]) < robot.target_limit ? target_gradient[k * n + i] : 0.0;
        continue;
      }
      const double range = servo_range(static_cast<int>(i));
      const double y = table.targets[k * n + i] / range;
      output_gradient[k * n + i] = target_gradient[k * n + i] * range * (1 - y * y);
      mean[i] += output_gradient[k * n + i] / static_cast<double>(period);
    }
  std::fill(gradient.begin(), gradient.end(), 0.0);
  std::vector<double> row(n);
  for (std::size_t k = 0; k < period; ++k) {
    for (std::size_t i = 0; i < n; ++i) row[i] = output_gradient[k * n + i] - mean[i];
    network.backward(weights, table.tapes[k], row, gradient, {});
  }
  if (health) *health = std::move(g.health);
  return episode;
}

QuadrupedEpisode run_quadruped_open_loop(const QuadrupedModel& robot, std::span<const double> servo_targets,
                                         int steps) {
  Rollout rollout(robot.scene.model, robot.scene.params);
  rollout.run(robot.scene.state, servo_targets, steps);
  return measure(robot, rollout, steps);
}

TrotGait hand_tuned_trot() {
  // The fastest of a grid over frequency, amplitudes, elbow phase and elbow wave at dt 0.005 s
  // whose speed holds (within 15 %) when the step is halved and quartered (docs/EXPERIMENTS.md
  // (quadruped), "The hand-tuned trot", which lists the grid): 0.249 m/s.
  TrotGait gait;
  gait.frequency = 2.25;
  gait.shoulder_amplitude = 0.35;
  gait.elbow_amplitude = -0.35;
  gait.elbow_phase = 1.25 * std::numbers::pi;
  gait.elbow_lift_only = false;
  return gait;
}

std::vector<double> trot_servo_targets(const TrotGait& gait, int steps, double dt) {
  // Leg order FL, FR, HL, HR: the diagonals FL+HR and FR+HL alternate.
  const double leg_phase[QuadrupedModel::kLegs] = {0.0, std::numbers::pi, std::numbers::pi, 0.0};
  std::vector<double> targets(static_cast<std::size_t>(steps * QuadrupedModel::kServos));
  for (int t = 0; t < steps; ++t)
    for (int leg = 0; leg < QuadrupedModel::kLegs; ++leg) {
      const double phase = 2 * std::numbers::pi * gait.frequency * t * dt + leg_phase[leg];
      const auto row = static_cast<std::size_t>(t * QuadrupedModel::kServos + 2 * leg);
      targets[row] = gait.shoulder_offset + gait.shoulder_amplitude * std::sin(phase);
      const double wave = std::sin(phase + gait.elbow_phase);
      targets[row + 1] = gait.elbow_offset + gait.elbow_amplitude * (gait.elbow_lift_only ? std::max(0.0, wave) : wave);
    }
  return targets;
}

}  // namespace diffphys::experiments
