// experiments/quadruped.cpp — `diffphys experiment quadruped`: Degrave et al. 2019 §3.3.
// The MLP 2 → 128 → 128 → 8 with a skip connection from its input (sin, cos of a 1.5 Hz clock)
// sets the 8 servo targets of the quadruped (quadruped_model.hpp); its output layer starts at
// zero, so the robot starts standing still. Adam maximises the torso's forward velocity
// averaged over the 2,000 steps of 10 s, one robot per update, the gradient back-propagated
// through every step and contact. Beside it, the same model driven by the hand-tuned open-loop
// trot, so the learned gait is compared like for like. Paper: 1.17 m/s after 500 evaluations
// (about 1 h on CPU); a hand-tuned trot on their model reached 0.7 m/s.
#include "experiments/quadruped.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <ostream>
#include <random>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "diffphys/gradient_health.hpp"
#include "diffphys/optimizer.hpp"
#include "experiments/experiment_io.hpp"
#include "experiments/quadruped_model.hpp"
#include "experiments/quadruped_public_model.hpp"

namespace diffphys::experiments {
namespace {

// How a robot is trained: the two recipes of docs/EXPERIMENTS.md (quadruped, quadruped-invented).
struct QuadrupedRecipe {
  std::string name;  // the experiment's name
  std::function<QuadrupedModel(double dt)> build;  // the robot at a time step
  double dt = 0.005;
  double learning_rate = 1e-3;
  double final_learning_rate = 1e-3;  // the end of a cosine schedule; equal: constant
  double gradient_clip_norm = 1.0;    // on dL/dW before each Adam step
  double gradient_decay = 1.0;        // α: the state gradient × α per step back
  double state_gradient_clip = 0.0;   // per step (0: off)
  // A non-finite dL/dW: the public code sets it to zero and goes on; false: stop.
  bool zero_non_finite_gradients = false;
  double episode_seconds = 10.0;  // §3.3
  int updates = 500;              // the paper's 500 evaluations
  // Curriculum over the episode length (0 updates: none): the first evaluation lasts
  // first_seconds and the length grows linearly to the full episode over curriculum_updates.
  double first_seconds = 0.0;
  int curriculum_updates = 0;
  bool hand_tuned_trot = false;     // the invented robot's open-loop trot beside it
  double required_velocity = 0.0;   // m/s: success
  bool beat_the_trot = false;       // success: the learned gait outruns the trot instead
  double torso_through_ground = 0.0;  // m: a torso centre below this went through the ground
};

// The invented robot (quadruped_model.hpp) and its training (session 6):
// Adam's steps are ~rate per weight, and each output reads 130 inputs of order 1: at 1e-3 the
// servo targets move by up to ~0.03 rad per update (through the R ≤ 0.5 rad map), enough to grow
// a gait from standing still within the curriculum; the rate then falls along a cosine to 1e-4.
// The raw gradient through thousands of steps of contacts explodes (|dL/dW| up to 1e13 once
// the legs move): the state gradient is decayed by α per step back (Degrave et al. §3.2's
// trick) with α = 1 − dt/(1 s), an effective horizon of 1 s (1.5 clock periods; horizons of
// 0.5 and 2 s learned no better on average in probes, docs/EXPERIMENTS.md), and clipped to 10
// per step. Curriculum: in an episode shorter than the clock's 0.67 s period, swinging a leg
// backwards in one half of the clock and forwards in the other does not cancel, so the
// gradient asks for a swing from the zero policy on; over whole periods it does not (at first
// order a swing and its half-period shift move the robot equally far).
// --quick: from 0.4 s up to 3 s episodes over 30 evaluations, then 10 more of 3 s; the learned
// policy must average 0.01 m/s over the 3 s (3 cm; it reaches 0.012 m/s). The zero policy
// stands still, and the target map cannot lean the robot (its targets have zero mean over a
// period), so reaching it takes legs swung in a learned rhythm. The torso's centre at rest is
// 0.18 m up and its spheres reach 0.05 m below it.
QuadrupedRecipe invented_recipe(bool quick) {
  QuadrupedRecipe recipe;
  recipe.name = "quadruped-invented";
  recipe.build = [](double dt) {
    QuadrupedDesign design;
    design.dt = dt;
    return build_quadruped(design);
  };
  recipe.dt = QuadrupedDesign{}.dt;
  recipe.final_learning_rate = 1e-4;
  recipe.gradient_decay = 1.0 - recipe.dt / 1.0;
  recipe.state_gradient_clip = 10.0;
  recipe.first_seconds = 0.4;
  recipe.curriculum_updates = quick ? 30 : 60;
  recipe.episode_seconds = quick ? 3.0 : 10.0;
  recipe.updates = quick ? 40 : 500;
  recipe.hand_tuned_trot = true;
  recipe.required_velocity = quick ? 0.01 : 0.0;
  recipe.beat_the_trot = !quick;
  recipe.torso_through_ground = 0.045;
  return recipe;
}

// The public code's robot and recipe (quadruped_public_model.hpp; 317070/TheanoPhysX): Adam at
// a constant 1e-3, dL/dW clipped to norm 1 and zeroed where not finite, the state gradient
// × 0.95 per step back (custom_ops.mulgrad on positions, velocities and rotations), no
// curriculum, batch of one, 10 s.
QuadrupedRecipe public_recipe(const ExperimentOptions& options) {
  const bool quick = options.quick;
  PublicQuadrupedDesign variant;
  for (const std::string& name : options.variants) {
    if (name == "solid-spheres") variant.repository_sphere_inertia = false;
    if (name == "stiff-servos") variant.repository_servo_compliance = false;
  }
  QuadrupedRecipe recipe;
  recipe.name = "quadruped";
  recipe.build = [variant](double dt) {
    PublicQuadrupedDesign design = variant;
    design.dt = dt;
    return build_public_quadruped(design);
  };
  recipe.dt = PublicQuadrupedDesign{}.dt;
  recipe.gradient_decay = 0.95;
  recipe.zero_non_finite_gradients = true;
  recipe.episode_seconds = quick ? 3.0 : 10.0;
  recipe.updates = quick ? 40 : 500;
  recipe.required_velocity = quick ? 0.3 : 1.17;  // the paper's 1.17 m/s
  recipe.torso_through_ground = 0.0;
  return recipe;
}

// The best weights' speed under random weight perturbations of these norms (perturbed_speeds).
constexpr double kPerturbationRadii[] = {1e-5, 1e-3};
constexpr int kPerturbationSamples = 8;

int steps_of(double seconds, double dt) {
  return static_cast<int>(std::lround(seconds / dt));
}

// The episode length of evaluation e (1-based) under the curriculum.
int episode_steps(int evaluation, int first_steps, int full_steps, int curriculum_updates) {
  if (curriculum_updates <= 1 || evaluation >= curriculum_updates) return full_steps;
  return first_steps + (full_steps - first_steps) * (evaluation - 1) / (curriculum_updates - 1);
}

// How much of a gait's figure is the time step's: the same servo targets (the policy's clock,
// or the trot's sines, sampled every dt/2) on the same robot stepped at dt/2, over the same
// seconds. A gait that holds its speed is a property of the robot; one that does not rides on
// the discretisation (docs/EXPERIMENTS.md (quadruped-invented), "The time step").
QuadrupedEpisode at_half_step(const QuadrupedRecipe& recipe, int steps,
                              const std::function<std::vector<double>(int, double)>& targets) {
  const double fine = recipe.dt / 2;
  return run_quadruped_open_loop(recipe.build(fine), targets(2 * steps, fine), 2 * steps);
}

// The same servo targets on the same robot with every row hard (the mixed LCP of
// Formulation::Complementarity): how much of a gait the compliance carries.
QuadrupedEpisode under_hard_contact(const QuadrupedModel& robot, std::span<const double> targets, int steps) {
  QuadrupedModel hard = robot;
  if (hard.scene.model.solver.formulation == Formulation::Complementarity) return {};
  set_formulation(hard.scene, Formulation::Complementarity);
  return run_quadruped_open_loop(hard, targets, steps);
}

// How much of the best figure rests on the weights' exact values: the speed of the best weights
// moved by `samples` random directions of Euclidean norm `radius` (Adam's steps reach ~0.13 in
// this norm). The 10 s average is chaotic in the weights (docs/EXPERIMENTS.md (quadruped-invented),
// "Where we fall short"), so the single best figure is the top of a spread, which this measures.
// The same seed gives the same directions at every norm.
struct PerturbedSpeeds {
  double radius = 0.0, mean = 0.0, lowest = 0.0, highest = 0.0;
};
PerturbedSpeeds perturbed_speeds(const QuadrupedModel& robot, const Mlp& network, std::span<const double> weights,
                                 int steps, double radius, int samples, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> gaussian;
  std::vector<double> direction(weights.size()), moved(weights.size());
  PerturbedSpeeds speeds{radius, 0.0, std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()};
  for (int sample = 0; sample < samples; ++sample) {
    double squared = 0.0;
    for (double& d : direction) {
      d = gaussian(random);
      squared += d * d;
    }
    const double scale = radius / std::sqrt(squared);
    for (std::size_t i = 0; i < weights.size(); ++i) moved[i] = weights[i] + scale * direction[i];
    const double speed =
        run_quadruped_episode(robot, network, moved, steps, RolloutOptions{}, {}).average_forward_velocity;
    speeds.mean += speed / samples;
    speeds.lowest = std::min(speeds.lowest, speed);
    speeds.highest = std::max(speeds.highest, speed);
  }
  return speeds;
}

ExperimentResult run_quadruped_recipe(const ExperimentOptions& options, const QuadrupedRecipe& recipe) {
  const QuadrupedModel robot = recipe.build(recipe.dt);
  const double dt = robot.scene.model.dt;
  const int steps = steps_of(recipe.episode_seconds, dt);
  const int first_steps = steps_of(recipe.first_seconds, dt);
  const int updates = recipe.updates;
  const int curriculum_updates = recipe.curriculum_updates;

  const Mlp network(quadruped_network_spec(), options.seed);
  std::vector<double> weights(network.weights().begin(), network.weights().end());
  std::vector<double> best_weights = weights;
  std::vector<double> gradient(weights.size());
  const double learning_rate = recipe.learning_rate;
  const LearningRateSchedule schedule = recipe.final_learning_rate == recipe.learning_rate
                                            ? LearningRateSchedule{}
                                            : LearningRateSchedule::cosine(updates, recipe.final_learning_rate);
  Adam adam(OptimizerSettings(learning_rate, schedule, GradientClip::norm(recipe.gradient_clip_norm)));
  RolloutOptions rollout_options;
  rollout_options.gradient_decay = recipe.gradient_decay;
  rollout_options.gradient_clip = recipe.state_gradient_clip;

  // The hand-tuned trot on the same model, same horizon.
  std::vector<double> trot_targets;
  QuadrupedEpisode trot;
  if (recipe.hand_tuned_trot) {
    trot_targets = trot_servo_targets(hand_tuned_trot(), steps, dt);
    trot = run_quadruped_open_loop(robot, trot_targets, steps);
    if (options.progress)
      *options.progress << "hand-tuned trot: average forward velocity " << trot.average_forward_velocity
                        << " m/s over " << steps * dt << " s" << std::endl;
  }

  const std::filesystem::path folder = experiment_folder(options, recipe.name);
  // Written row by row, so that a long run can be followed (and plotted) while it goes.
  std::ofstream curve(folder / "loss.csv");
  curve << "evaluation,episode_seconds,average_forward_velocity_m_s,distance_m,lowest_torso_height_m,gradient_norm,"
           "seconds,saturated_targets\n";
  curve << std::setprecision(9);
  const Stopwatch clock;
  QuadrupedEpisode initial, best, last;
  int best_evaluation = 0;
  double lowest_torso = robot.scene.state.position[static_cast<std::size_t>(robot.torso)].z;
  bool finite = true;
  long unconverged_steps = 0, simulated_steps = 0;
  double largest_residual = 0.0;
  int zeroed_gradients = 0;
  for (int evaluation = 1; evaluation <= updates; ++evaluation) {
    const Stopwatch update_clock;
    const int episode = episode_steps(evaluation, first_steps, steps, curriculum_updates);
    last = run_quadruped_episode(robot, network, weights, episode, rollout_options, gradient);
    finite = finite && last.finite;
    unconverged_steps += last.unconverged_steps;
    simulated_steps += episode;
    largest_residual = std::max(largest_residual, last.largest_residual);
    lowest_torso = std::min(lowest_torso, last.lowest_torso_height);
    double squared = 0.0;
    for (const double g : gradient) squared += g * g;
    if (evaluation == 1) initial = last;
    // The best policy is chosen among full-length episodes only (the curriculum's shorter ones
    // are not comparable).
    if (episode == steps && (best_evaluation == 0 || last.average_forward_velocity > best.average_forward_velocity)) {
      best = last;
      best_evaluation = evaluation;
      best_weights = weights;
    }
    if (!std::isfinite(squared) && recipe.zero_non_finite_gradients) {
      // The public code's rule: a non-finite component of dL/dW becomes 0.
      for (double& g : gradient)
        if (!std::isfinite(g)) g = 0.0;
      ++zeroed_gradients;
      squared = 0.0;
      for (const double g : gradient) squared += g * g;
    }
    if (!std::isfinite(squared)) {
      if (options.progress)
        *options.progress << "evaluation " << evaluation << ": non-finite gradient, stopping" << std::endl;
      finite = false;
      break;
    }
    adam.step(weights, gradient);
    const double seconds = update_clock.seconds();
    curve << evaluation << ',' << episode * dt << ',' << last.average_forward_velocity << ',' << last.distance << ','
          << last.lowest_torso_height << ',' << std::sqrt(squared) << ',' << seconds << ',' << last.saturated_targets
          << std::endl;
    if (options.progress)
      *options.progress << "evaluation " << evaluation << "/" << updates << "  " << episode * dt
                        << " s  average forward velocity " << std::fixed << std::setprecision(4)
                        << last.average_forward_velocity << " m/s  best " << best.average_forward_velocity
                        << " m/s  lowest torso " << last.lowest_torso_height << " m  |g| " << std::scientific
                        << std::setprecision(3) << std::sqrt(squared) << std::defaultfloat << std::setprecision(6)
                        << "  " << seconds << " s" << std::endl;
  }
  const double seconds = clock.seconds(), cpu_seconds = clock.cpu_seconds();

  // The best policy, its servo targets replayed open loop (the same controls): the recorded
  // trajectory, and the check that it is the gait the optimisation measured.
  const std::vector<double> best_targets = quadruped_servo_targets(robot, network, best_weights, steps, dt);
  const QuadrupedEpisode replay = run_quadruped_open_loop(robot, best_targets, steps);
  const QuadrupedEpisode best_half_step = at_half_step(recipe, steps, [&](int n, double step) {
    return quadruped_servo_targets(robot, network, best_weights, n, step);
  });
  const QuadrupedEpisode best_hard = under_hard_contact(robot, best_targets, steps);
  QuadrupedEpisode trot_half_step;
  if (recipe.hand_tuned_trot)
    trot_half_step = at_half_step(
        recipe, steps, [](int n, double step) { return trot_servo_targets(hand_tuned_trot(), n, step); });
  std::vector<PerturbedSpeeds> perturbed;
  for (const double radius : kPerturbationRadii)
    perturbed.push_back(
        perturbed_speeds(robot, network, best_weights, steps, radius, kPerturbationSamples, options.seed));
  const Model& model = robot.scene.model;
  // The gradient's health on the best policy's episode (diffphys/gradient_health.hpp): the
  // training loss's backward pass (decay and clipping as trained) and the raw dynamics'
  // sensitivity of the final state to earlier ones, per step in gradient_health.csv.
  GradientHealth best_health;
  std::vector<double> best_gradient(best_weights.size());
  run_quadruped_episode(robot, network, best_weights, steps, rollout_options, best_gradient, &best_health);
  const World world(recipe.name, "<experiment>", robot.scene, std::nullopt);
  const WorldParams world_params = world.default_params();
  WorldRollout best_rollout(world, world_params);
  best_rollout.run(world.initial_state(), best_targets, steps);
  const TerminalSensitivity best_sensitivity = terminal_sensitivity(world, world_params, best_rollout);
  const GradientHealthReport health = analyze_gradient_health(best_health, best_sensitivity, dt);
  {
    std::ofstream out(folder / "gradient_health.csv");
    write_gradient_health_csv(out, best_health, best_sensitivity);
  }
  record_trajectory(model, robot.scene.params, robot.scene.state, best_targets, steps, folder / "trajectory.json");
  if (recipe.hand_tuned_trot)
    record_trajectory(model, robot.scene.params, robot.scene.state, trot_targets, steps,
                      folder / "trajectory_trot.json");
  {
    std::ofstream out(folder / "best_weights.txt");
    out << std::setprecision(17);
    for (const double w : best_weights) out << w << '\n';
  }

  nlohmann::json figures;
  figures["experiment"] = recipe.name;
  figures["variant"] = options.quick ? "quick" : "default";
  figures["model_variants"] = options.variants;
  figures["parameters"] = network.parameter_count();
  figures["simulated_seconds"] = steps * dt;
  figures["dt"] = dt;
  figures["evaluations"] = updates;
  figures["learning_rate"] = learning_rate;
  figures["final_learning_rate"] = recipe.final_learning_rate;
  figures["gradient_clip_norm"] = recipe.gradient_clip_norm;
  figures["state_gradient_clip"] = recipe.state_gradient_clip;
  figures["zeroed_non_finite_gradients"] = zeroed_gradients;
  figures["curriculum_evaluations"] = curriculum_updates;
  figures["first_episode_seconds"] = first_steps * dt;
  if (robot.target_map == ServoTargetMap::Clip) {
    figures["target_limit_rad"] = robot.target_limit;
  } else {
    figures["shoulder_range_rad"] = servo_range(0);
    figures["elbow_range_rad"] = servo_range(1);
  }
  figures["gradient_decay"] = rollout_options.gradient_decay;
  figures["initial_average_forward_velocity_m_s"] = initial.average_forward_velocity;
  figures["best_average_forward_velocity_m_s"] = best.average_forward_velocity;
  figures["best_evaluation"] = best_evaluation;
  figures["best_distance_m"] = best.distance;
  figures["best_replayed_average_forward_velocity_m_s"] = replay.average_forward_velocity;
  figures["best_at_half_step_average_forward_velocity_m_s"] = best_half_step.average_forward_velocity;
  if (robot.scene.model.solver.formulation == Formulation::Convex) {
    figures["best_under_hard_contact_average_forward_velocity_m_s"] = best_hard.average_forward_velocity;
    figures["best_under_hard_contact_finite"] = best_hard.finite;
  }
  for (const PerturbedSpeeds& speeds : perturbed)
    figures["best_perturbed_average_forward_velocity_m_s"].push_back({{"weight_perturbation_norm", speeds.radius},
                                                                      {"samples", kPerturbationSamples},
                                                                      {"mean", speeds.mean},
                                                                      {"lowest", speeds.lowest},
                                                                      {"highest", speeds.highest}});
  figures["last_average_forward_velocity_m_s"] = last.average_forward_velocity;
  if (recipe.hand_tuned_trot) {
    figures["trot_average_forward_velocity_m_s"] = trot.average_forward_velocity;
    figures["trot_distance_m"] = trot.distance;
    figures["trot_at_half_step_average_forward_velocity_m_s"] = trot_half_step.average_forward_velocity;
    figures["trot_trajectory"] = (folder / "trajectory_trot.json").string();
  }
  figures["paper_average_forward_velocity_m_s"] = 1.17;
  figures["paper_evaluations"] = 500;
  figures["paper_trot_average_forward_velocity_m_s"] = 0.7;
  figures["lowest_torso_height_m"] = lowest_torso;
  figures["all_states_finite"] = finite;
  // The velocity solves of every training episode (docs/simulation.md, "Known limits").
  figures["training_unconverged_steps"] = unconverged_steps;
  figures["training_simulated_steps"] = simulated_steps;
  figures["training_largest_residual_m_s"] = largest_residual;
  figures["best_unconverged_steps"] = replay.unconverged_steps;
  figures["seconds_per_update"] = seconds / updates;
  figures["cpu_seconds_per_update"] = cpu_seconds / updates;
  figures["paper_seconds_per_update"] = 3600.0 / 500;
  figures["loss_curve"] = (folder / "loss.csv").string();
  figures["gradient_health"] = {{"verdict", health.verdict},
                                {"growth_per_second", health.growth_per_second},
                                {"largest_amplification", health.total_growth},
                                {"onset_step", health.onset_step},
                                {"onset_stage", health.onset_stage},
                                {"contact_changes", health.contact_changes},
                                {"per_step", (folder / "gradient_health.csv").string()}};
  figures["trajectory"] = (folder / "trajectory.json").string();
  ExperimentResult result;
  const bool sane = finite && lowest_torso > recipe.torso_through_ground;
  if (recipe.beat_the_trot) {
    // The paper's qualitative claim: the learned gait outruns the hand-tuned trot.
    result.success = sane && best.average_forward_velocity > trot.average_forward_velocity;
  } else {
    figures["required_average_forward_velocity_m_s"] = recipe.required_velocity;
    result.success = sane && best.average_forward_velocity >= recipe.required_velocity;
  }
  figures["success"] = result.success;
  result.json = figures.dump();
  write_text_file(folder / "figures.json", result.json + "\n");  // for scripts/plot-experiments
  return result;
}

}  // namespace

ExperimentResult run_quadruped(const ExperimentOptions& options) {
  return run_quadruped_recipe(options, public_recipe(options));
}

ExperimentResult run_quadruped_invented(const ExperimentOptions& options) {
  return run_quadruped_recipe(options, invented_recipe(options.quick));
}

}  // namespace diffphys::experiments
