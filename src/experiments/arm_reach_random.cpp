// experiments/arm_reach_random.cpp — `diffphys experiment arm-reach-random`: Degrave et al.
// 2019 §3.2.2. A random target in the arm's reachable space is given as the network's input
// (an open-loop set-point controller), a batch of robots with fresh targets per update, the
// loss the distance averaged over 8 s at dt 0.01 s and over the batch; Adam with the learning
// rate scaled by the previous update's average error (§3.2.2), gradients clipped to norm 1.
// Default: 3 → 128 → 128 → 4, 16 robots per update; --full: the paper's 3 → 1024 → 1024 →
// 1024 → 4 (2,107,396 parameters), 128 robots. Paper: average error < 10 cm after 576 updates,
// < 5 cm after 2,563 (58 s per update on a GPU).
#include <cmath>
#include <numbers>
#include <ostream>
#include <random>

#include <nlohmann/json.hpp>

#include "diffphys/optimizer.hpp"
#include "experiments/arm_model.hpp"
#include "experiments/arm_reach.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

// Mean final and average distance over the held-out targets (forward only).
ArmEpisode held_out_error(const ArmModel& arm, const Mlp& network, std::span<const double> weights, int steps,
                          const RolloutOptions& options) {
  constexpr int kTargets = kArmHeldOutTargets;
  std::mt19937_64 generator(kArmHeldOutSeed);
  ArmEpisode mean;
  for (int i = 0; i < kTargets; ++i) {
    const ArmEpisode episode = run_arm_open_loop_episode(arm, network, weights, random_arm_target(generator), steps, options, {});
    mean.average_distance += episode.average_distance / kTargets;
    mean.final_distance += episode.final_distance / kTargets;
  }
  return mean;
}

}  // namespace

Vec3 random_arm_target(std::mt19937_64& generator) {
  const auto unit = [&] { return static_cast<double>(generator() >> 11) * 0x1.0p-53; };
  for (;;) {
    const double azimuth = 2.0 * std::numbers::pi * unit();
    const double radius = 0.3 + 0.4 * unit();
    const double height = 0.2 + 0.6 * unit();
    const Vec3 target{radius * std::cos(azimuth), radius * std::sin(azimuth), height};
    if (norm(target) <= 0.95) return target;
  }
}

ExperimentResult run_arm_reach_random(const ExperimentOptions& options) {
  for (const std::string& variant : options.variants)
    if (variant == "shac") return run_arm_reach_random_shac(options);
  const ArmModel arm = build_degrave_arm();
  MlpSpec spec{3, {128, 128}, 4};
  int robots = 16, updates = 600, steps = 800;
  // Adam's base rate, scaled by the previous error (§3.2.2 gives neither value: tuned here).
  double base_rate = 3e-3;
  const int threads = 2;  // the result does not depend on it (average_over_batch)
  if (options.full) {
    spec.hidden = {1024, 1024, 1024};
    robots = 128;
    updates = 2563;
    base_rate = 1e-3;
  }
  if (options.quick) {  // CI (~20 s): a smaller network, 4 s, 8 robots, 80 updates
    spec.hidden = {64, 64};
    robots = 8;
    updates = 80;
    steps = 400;
  }
  // --quick asserts that the error on 16 held-out targets falls at least 1.5× (0.69 m → 0.31 m
  // here; the run is deterministic, the same bits for every thread count).
  const double quick_required_factor = 1.5;
  spec.random_hidden_biases = true;
  const Mlp network(spec, options.seed);
  std::vector<double> weights(network.weights().begin(), network.weights().end());
  std::vector<double> gradient(weights.size()), step(weights.size());
  // Adam at rate 1, its step scaled by lr·(previous error / first error) (§3.2.2).
  Adam adam(OptimizerSettings(1.0, {}, GradientClip::norm(1.0)));
  RolloutOptions rollout_options;

  const std::filesystem::path folder = experiment_folder(options, "arm-reach-random");
  const std::filesystem::path curve_path = folder / "loss.csv";
  CsvTable curve({"update", "average_distance_m", "final_distance_m", "learning_rate", "seconds"});
  int updates_to_10cm = -1, updates_to_5cm = -1, final_updates_to_10cm = -1, final_updates_to_5cm = -1;
  double first_error = 0.0, previous_error = 0.0, first_final = 0.0;
  double last_average = 0.0, last_final = 0.0;
  std::vector<double> final_distances(static_cast<std::size_t>(robots));
  const ArmEpisode untrained = held_out_error(arm, network, weights, steps, rollout_options);
  const Stopwatch whole_run;
  for (int update = 1; update <= updates; ++update) {
    const Stopwatch this_update;
    std::mt19937_64 generator(options.seed * 1000003ull + static_cast<std::uint64_t>(update));
    std::vector<Vec3> targets(static_cast<std::size_t>(robots));
    for (Vec3& target : targets) target = random_arm_target(generator);
    const double average = average_over_batch(robots, threads, gradient, [&](int robot, std::span<double> out) {
      const ArmEpisode episode = run_arm_open_loop_episode(arm, network, weights, targets[static_cast<std::size_t>(robot)],
                                                           steps, rollout_options, out);
      final_distances[static_cast<std::size_t>(robot)] = episode.final_distance;
      return episode.average_distance;
    });
    double final_average = 0.0;
    for (const double d : final_distances) final_average += d / robots;
    if (update == 1) {
      first_error = previous_error = average;
      first_final = final_average;
    }
    const double rate = base_rate * previous_error / first_error;
    std::copy(weights.begin(), weights.end(), step.begin());
    adam.step(step, gradient);
    for (std::size_t k = 0; k < weights.size(); ++k) weights[k] += rate * (step[k] - weights[k]);
    previous_error = average;
    const double seconds = this_update.seconds();
    last_average = average;
    last_final = final_average;
    if (updates_to_10cm < 0 && average < 0.10) updates_to_10cm = update;
    if (updates_to_5cm < 0 && average < 0.05) updates_to_5cm = update;
    if (final_updates_to_10cm < 0 && final_average < 0.10) final_updates_to_10cm = update;
    if (final_updates_to_5cm < 0 && final_average < 0.05) final_updates_to_5cm = update;
    curve.add_row({static_cast<double>(update), average, final_average, rate, seconds});
    if (update % 50 == 0) curve.write(curve_path);  // long runs: the curve so far
    if (options.progress)
      *options.progress << "update " << update << "/" << updates << "  average distance " << average
                        << " m  final distance " << final_average << " m  rate " << rate << "  " << seconds << " s"
                        << std::endl;
  }
  const double total_seconds = whole_run.seconds(), cpu_seconds = whole_run.cpu_seconds();
  curve.write(curve_path);
  const ArmEpisode trained = held_out_error(arm, network, weights, steps, rollout_options);
  // The trained controller reaching for the first held-out target, for the viewer.
  std::mt19937_64 held_out(kArmHeldOutSeed);
  MlpPolicy trained_policy(network, weights, arm_features(arm, ArmInput::TargetPosition, random_arm_target(held_out)));
  record_trajectory(arm.scene.model, arm.scene.params, arm.scene.state, trained_policy, steps,
                    folder / "trajectory.json");
  nlohmann::json figures;
  figures["experiment"] = "arm-reach-random";
  figures["variant"] = options.quick ? "quick" : (options.full ? "full" : "default");
  figures["parameters"] = network.parameter_count();
  figures["hidden"] = spec.hidden;
  figures["robots_per_update"] = robots;
  figures["simulated_seconds"] = steps * arm.scene.model.dt;
  figures["updates"] = updates;
  figures["updates_to_10cm_average"] = updates_to_10cm;
  figures["updates_to_5cm_average"] = updates_to_5cm;
  figures["updates_to_10cm_final"] = final_updates_to_10cm;
  figures["updates_to_5cm_final"] = final_updates_to_5cm;
  figures["paper_updates_to_10cm"] = 576;
  figures["paper_updates_to_5cm"] = 2563;
  figures["first_average_distance_m"] = first_error;
  figures["first_final_distance_m"] = first_final;
  figures["last_average_distance_m"] = last_average;
  figures["last_final_distance_m"] = last_final;
  figures["seconds_per_update"] = total_seconds / updates;
  // CPU time of the whole process (every thread), per update: less sensitive to a loaded machine.
  figures["cpu_seconds_per_update"] = cpu_seconds / updates;
  figures["paper_seconds_per_update_gpu"] = 58.0;
  figures["loss_curve"] = curve_path.string();
  figures["trajectory"] = (folder / "trajectory.json").string();
  return finish_arm_reach_random(figures, untrained, trained, options.quick, quick_required_factor, updates_to_10cm);
}

ExperimentResult finish_arm_reach_random(nlohmann::json& figures, const ArmEpisode& untrained,
                                         const ArmEpisode& trained, bool quick, double quick_factor,
                                         int updates_to_10cm) {
  figures["held_out_targets"] = kArmHeldOutTargets;
  figures["held_out_average_distance_before_m"] = untrained.average_distance;
  figures["held_out_average_distance_after_m"] = trained.average_distance;
  figures["held_out_final_distance_before_m"] = untrained.final_distance;
  figures["held_out_final_distance_after_m"] = trained.final_distance;
  ExperimentResult result;
  if (quick) {
    figures["required_average_distance_drop"] = quick_factor;
    result.success = trained.average_distance * quick_factor <= untrained.average_distance;
  } else {
    result.success = updates_to_10cm > 0;
  }
  figures["success"] = result.success;
  result.json = figures.dump();
  return result;
}

}  // namespace diffphys::experiments
