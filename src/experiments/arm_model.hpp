// experiments/arm_model.hpp — the 4-DoF servo arm of Degrave et al. 2019 §3.2, shared by the
// `arm-reach` and `arm-reach-random` experiments: the model, the end effector and its VJP,
// and one differentiable episode of an MLP controlling the arm towards a target.
#pragma once

#include <span>

#include "diffphys/model_builder.hpp"
#include "diffphys/neural.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys::experiments {

// The arm (docs/EXPERIMENTS.md, "The arm model"): a static 22 kg pedestal, a 0.5 m
// 7 kg upper arm on a 2-axis universal joint at the origin, a 0.5 m 3 kg forearm on a 2-axis
// universal elbow, standing straight up; 4 servos (gain 30 1/s, 30 N·m, 45°/s), dt 0.01 s,
// gravity −9.81 m/s², no ground (the targets are above the base).
struct ArmModel {
  Scene scene;
  int forearm = 0;  // body index
  Vec3 tip_local;   // the end effector in the forearm's body frame, m

  Vec3 end_effector(const State& state) const;
  // ADDS (∂p_tip/∂x)ᵀ·gradient into state_gradient (tangent layout, docs/gradients.md).
  void end_effector_vjp(const State& state, const Vec3& gradient, std::span<double> state_gradient) const;
};

ArmModel build_degrave_arm();

// What the network sees: the current distance to the target (closed loop, §3.2.1), or the
// target's coordinates (open loop, §3.2.2).
enum class ArmInput { DistanceToTarget, TargetPosition };

// The network's input for a target, with its VJP (DistanceToTarget); references `arm`.
FeatureMap arm_features(const ArmModel& arm, ArmInput input, const Vec3& target);

struct ArmEpisode {
  double average_distance = 0.0;  // the loss: (1/T) Σ_{t=1..T} |p_tip(t) − target|, m
  double final_distance = 0.0;    // at t = T, m
};

// Runs the closed-loop episode from the arm's rest state; when `gradient` is not empty, also
// the backward pass, writing dL/dW (L = average distance) into it.
ArmEpisode run_arm_episode(const ArmModel& arm, const Mlp& network, std::span<const double> weights,
                           ArmInput input, const Vec3& target, int steps, const RolloutOptions& options,
                           std::span<double> gradient);

// The same episode for ArmInput::TargetPosition, computed once per episode: the network's
// input is constant in time, so its output is one set of servo targets held for every step
// and dL/dW = (∂u/∂W)ᵀ Σ_t dL/du_t — the same numbers as the per-step MlpPolicy (a test
// checks it), at one network evaluation per episode instead of one per step.
ArmEpisode run_arm_open_loop_episode(const ArmModel& arm, const Mlp& network, std::span<const double> weights,
                                     const Vec3& target, int steps, const RolloutOptions& options,
                                     std::span<double> gradient);

}  // namespace diffphys::experiments
