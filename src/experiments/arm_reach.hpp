// experiments/arm_reach.hpp — Degrave et al. 2019 §3.2.1 and §3.2.2: an MLP controlling the
// 4-DoF servo arm to a fixed target (arm_reach.cpp) and to random targets (arm_reach_random.cpp).
#pragma once

#include <cstdint>
#include <random>

#include <nlohmann/json_fwd.hpp>

#include "diffphys/math.hpp"
#include "experiments/experiments.hpp"

namespace diffphys::experiments {

ExperimentResult run_arm_reach(const ExperimentOptions& options);
// --variant shac: run_arm_reach_random_shac instead (arm_reach_shac.cpp).
ExperimentResult run_arm_reach_random(const ExperimentOptions& options);
// The same task and held-out targets, a state-feedback policy trained by SHAC (Xu et al.
// 2022; issue #17 item 2), diffphys/shac.hpp.
ExperimentResult run_arm_reach_random_shac(const ExperimentOptions& options);

// A target uniform over azimuth, horizontal radius in [0.3, 0.7] m and height in [0.2,
// 0.8] m above the base, |p| ≤ 0.95 m (docs/EXPERIMENTS.md, arm-reach-random).
Vec3 random_arm_target(std::mt19937_64& generator);
// The 16 held-out targets are the first 16 drawn from this seed, the same for every run.
inline constexpr std::uint64_t kArmHeldOutSeed = 20190307;
inline constexpr int kArmHeldOutTargets = 16;

struct ArmEpisode;  // experiments/arm_model.hpp
// What both arm-reach-random trainers (BPTT, SHAC) end with: the held-out figures (the
// targets, the average and final distances before and after training) and the verdict —
// with --quick the held-out average distance falls by `quick_factor`, else some evaluation got
// under 10 cm (updates_to_10cm > 0).
ExperimentResult finish_arm_reach_random(nlohmann::json& figures, const ArmEpisode& untrained,
                                         const ArmEpisode& trained, bool quick, double quick_factor,
                                         int updates_to_10cm);

}  // namespace diffphys::experiments
