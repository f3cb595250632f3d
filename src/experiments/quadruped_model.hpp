// experiments/quadruped_model.hpp — the quadruped of Degrave et al. 2019 §3.1/§3.3 (Fig. 3B)
// for the `quadruped` experiment: the model, its episodes (a closed-loop MLP on a 1.5 Hz
// clock, or any open-loop servo targets such as the hand-tuned trot) and the objective, the
// torso's average forward velocity, with its gradient with respect to the network's weights.
#pragma once

#include <span>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/neural.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys::experiments {

// The robot (docs/EXPERIMENTS.md (quadruped-invented), "The model"): a 0.5 × 0.25 × 0.1 m torso of
// 21.525 kg (75 % of 28.7 kg) touching the ground through 4 spheres inside its cuboid; four
// legs, each an upper and a lower leg of 0.08 m on hinges about the lateral y axis (shoulder,
// elbow), every hinge driven by a servo limited to 4 N·m; each lower leg touches the ground
// through a sphere at its end, the foot. x is forward, z up, the ground is z = 0; at rest
// the legs hang straight down and every joint coordinate is 0. dt = 0.005 s, half the
// paper's (QuadrupedDesign::dt).
// How the network's outputs u become servo targets y.
enum class ServoTargetMap {
  CentredTanh,  // y = R tanh(u − ū) (servo_range below): the invented robot's
  Clip,         // y = clip(u, ±QuadrupedModel::target_limit): the repository's motor min/max
};

struct QuadrupedModel {
  Scene scene;
  int torso = 0;  // body index
  ServoTargetMap target_map = ServoTargetMap::CentredTanh;
  double target_limit = 0.0;  // rad, ServoTargetMap::Clip
  // Servo order (8): for each leg FL, FR, HL, HR its shoulder then its elbow; a positive
  // angle swings the leg's lower end backwards (−x), i.e. pushes the body forwards in stance.
  static constexpr int kLegs = 4;
  static constexpr int kServos = 8;
};

// What the paper leaves open (docs/EXPERIMENTS.md (quadruped-invented), "The model"). The defaults are
// the experiment's robot; the other values were tried in the probes the doc reports.
struct QuadrupedDesign {
  double leg_length = 0.08;       // m, upper and lower leg each
  double shoulder_limit = 0.35;   // rad: stops at ± this (0: none)
  double elbow_lower = -0.6;      // rad: the elbow's stops (lower = upper: none); the upper
  double elbow_upper = 0.0;       // stop at 0 is a knee that cannot over-straighten
  double servo_gain = 10.0;       // 1/s: the servo asks for velocity gain·(target − angle)
  double servo_velocity = 6.283185307179586;  // rad/s, one turn per second
  // s. §3.3's 10 s are "1,000 time steps" (0.01 s), but our 8 cm legs are faster than the
  // paper's robot: at 0.01 s a gait's speed can change several-fold when the step is halved,
  // at 0.005 s it holds (docs/EXPERIMENTS.md (quadruped-invented), "The time step").
  double dt = 0.005;
};

QuadrupedModel build_quadruped(const QuadrupedDesign& design = {});

// What the robot did in one episode (forward pass).
struct QuadrupedEpisode {
  // The objective: (1/T) Σ_{t=1..T} v_x(t) of the torso's centre of mass, m/s.
  double average_forward_velocity = 0.0;
  double distance = 0.0;            // x_T − x_0 of the torso, m
  double lowest_torso_height = 0.0;  // min over t of the torso's centre height, m
  double final_torso_height = 0.0;   // m
  bool finite = true;                // every state finite
  // Steps whose velocity solve missed the solver's tolerance, and the largest residual (m/s).
  int unconverged_steps = 0;
  double largest_residual = 0.0;
  // Share of the period's servo targets with |y| > 0.95 R, where tanh passes less than 10 %
  // of the gradient (the policy's targets saturate).
  double saturated_targets = 0.0;
};

// The controller's input: sin and cos of a clock of `frequency` Hz (§3.3: 1.5 Hz).
constexpr double kClockFrequency = 1.5;  // Hz
FeatureMap clock_features(double frequency, double dt);
// The smallest number of steps of dt that spans whole clock periods (dt = 0.005 s: 400 steps,
// 3 periods): the policy's servo targets repeat with it. Throws Error if there is none.
int clock_period_steps(double dt);

// How the network's outputs u(t) become servo targets (docs/EXPERIMENTS.md (quadruped-invented), "The
// controller and the training"): y_i(t) = R tanh(u_i(t) − ū_i), ū_i the mean of u_i over a
// clock period. The targets are bounded by R, and their mean over a period is 0 to first order
// in u − ū: the policy can swing the legs but cannot lean the robot onto its stops and stand
// there.
// R of the shoulders (even servos): the default robot's stops, so that the two cannot drift apart.
constexpr double kShoulderRange = QuadrupedDesign{}.shoulder_limit;  // rad
constexpr double kElbowRange = 0.5;      // rad, R of the elbows (odd servos)
double servo_range(int servo);

// The servo targets (steps × 8, row-major) the network sets from the clock at dt.
std::vector<double> quadruped_servo_targets(const QuadrupedModel& robot, const Mlp& network,
                                            std::span<const double> weights, int steps, double dt);

// The MLP of §3.3: 2 → 128 → 128 → 8, ReLU, a linear output layer that reads both the top
// hidden layer and the input (skip connection), initialised to zero (the robot starts the
// optimisation standing still). 17,944 parameters.
MlpSpec quadruped_network_spec();

// Runs the episode of the network's servo targets (quadruped_servo_targets) from the rest state
// for `steps` steps; when `gradient` is not empty also the backward pass, writing dL/dW of
// L = −average_forward_velocity into it (so descending it speeds the robot up). The policy
// reads only the clock, so the rollout runs it open loop and back-propagates dL/du_t through
// the target map and the network once per step of the clock period.
// `health` (optional) receives the backward pass's gradient health.
QuadrupedEpisode run_quadruped_episode(const QuadrupedModel& robot, const Mlp& network,
                                       std::span<const double> weights, int steps, const RolloutOptions& options,
                                       std::span<double> gradient, GradientHealth* health = nullptr);

// The same measures for given servo targets (steps × 8, row-major), forward only.
QuadrupedEpisode run_quadruped_open_loop(const QuadrupedModel& robot, std::span<const double> servo_targets,
                                         int steps);

// The hand-tuned open-loop trot (docs/EXPERIMENTS.md (quadruped-invented), "The hand-tuned trot"):
// diagonal legs in phase, the two diagonals half a period apart; shoulder
// θ_s = o_s + A_s sin(2π f t + φ_leg), elbow θ_e = o_e + A_e sin(2π f t + φ_leg + δ), or with
// elbow_lift_only o_e + A_e max(0, sin(2π f t + φ_leg + δ)): the knee bends only to lift the
// foot and stays straight (cheap for a 4 N·m servo) while the leg carries the body.
struct TrotGait {
  double frequency = 1.5;        // Hz
  double shoulder_amplitude = 0.0;  // rad
  double elbow_amplitude = 0.0;     // rad
  double elbow_phase = 0.0;         // δ, rad
  double shoulder_offset = 0.0;     // rad, added to every shoulder
  double elbow_offset = 0.0;        // rad, added to every elbow
  bool elbow_lift_only = false;
};
TrotGait hand_tuned_trot();
// Servo targets (steps × 8) of a gait at the model's dt.
std::vector<double> trot_servo_targets(const TrotGait& gait, int steps, double dt);

}  // namespace diffphys::experiments
