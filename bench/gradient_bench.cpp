// bench/gradient_bench.cpp — owns the gradient benchmarks (the `diffphys_gradient_bench`
// executable): what the backward pass costs, against the forward pass, against finite
// differences and against MuJoCo's finite-differenced transition Jacobians.
//
// Every benchmark differentiates the same kind of loss: the sum over every state x_0 … x_T
// of the squared centre-of-mass positions of the dynamic bodies, L = Σ_t Σ_b |p_b(t)|².
// Families (one iteration = one whole trajectory):
//
//   BM_Rollout/<model>/<phase>      a 1,000-step rollout of chain10 (10-link chain, a motor
//                                   on every hinge, zero torques; chain10_reduced: the same
//                                   in joint coordinates), arm (4-DoF servo arm,
//                                   the servo targets as per-step controls) and pile_pgs
//                                   (100 settled spheres, PGS; one iteration, one
//                                   repetition: minutes). Phases:
//                                   step (plain diffphys::step, a reused Workspace),
//                                   run (Rollout::run, which stores the states) and
//                                   run_backward (Rollout::run + Rollout::backward: dL/dθ,
//                                   dL/du_t, dL/dx_0).
//   BM_MassGradient/<method>/<N>    dL/dm_k for every link of an N-link chain (N = 1 … 20),
//                                   100 steps: analytic (one run, one backward) or
//                                   finite_differences (central, 2 N plain rollouts);
//                                   forward is one plain rollout, the unit of both.
//   BM_ChainGradient/<method>       dL/dx_0 and dL/du_t of a 1,000-step rollout of the
//                                   10-link motor chain: diffphys (run + backward, in
//                                   maximal and in joint coordinates) against
//                                   MuJoCo (roll out storing states, mjd_transitionFD at
//                                   every step, centred or forward, and the vector–Jacobian
//                                   products back in time). MuJoCo rows only when CMake
//                                   found MuJoCo (DIFFPHYS_BENCH_HAVE_MUJOCO).
//   BM_Rollout/{box_tower4,humanoid}_convex/<phase> and BM_ContactGradient/<model>/<method>:
//                                   contact rollouts in the convex formulation against
//                                   MuJoCo's centred differences (contact_gradient_bench.cpp).
// The loss, the BM_Rollout phases and MuJoCo's trajectory gradient live in
// trajectory_gradients.{hpp,cpp}.
//
// `diffphys_gradient_bench --peak_memory_budget_mb=B [--peak_memory_steps=T]
// [--peak_memory_model=motor_chain|chain]` does no benchmark: it differentiates a T-step
// (default 100,000) rollout of the 10-link motor chain (zero torques held, 10 controls a step)
// or of the passive chain (no actuators: no controls in, no dL/du out) with
// RolloutOptions::memory_budget = B MiB and prints one JSON object with the peak resident set
// size (getrusage ru_maxrss), which is why each run needs its own process.
// scripts/bench-gradients runs all of it; docs/BENCHMARKS.md "Gradients" reports it.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench_models.hpp"
#include "contact_gradient_bench.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys_scenes.hpp"
#include "trajectory_gradients.hpp"

namespace diffphys::bench {
namespace {

constexpr int trajectory_chain_links = 10;
constexpr int mass_gradient_steps = 100;
constexpr int mass_gradient_max_links = 20;
constexpr int memory_default_steps = 100000;
// Central-difference step for a link mass, relative to the mass.
constexpr double mass_difference_step = 1e-6;
// Horizon of the check that MuJoCo's and diffphys' dL/du_t agree (see
// control_gradient_difference_between_engines).
constexpr int agreement_check_steps = 100;

const RolloutProblem& chain_rollout_problem() {
  static const RolloutProblem problem =
      held_controls_problem(build_motor_chain_scene(trajectory_chain_links), gradient_rollout_steps);
  return problem;
}

const RolloutProblem& reduced_chain_rollout_problem() {
  static const RolloutProblem problem = held_controls_problem(
      build_motor_chain_scene(trajectory_chain_links, Coordinates::Reduced), gradient_rollout_steps);
  return problem;
}

const RolloutProblem& arm_rollout_problem() {
  static const RolloutProblem problem = held_controls_problem(build_arm_scene(), gradient_rollout_steps);
  return problem;
}

const RolloutProblem& pile_rollout_problem() {
  static const RolloutProblem problem =
      held_controls_problem(build_settled_sphere_pile_scene(SolverType::ProjectedGaussSeidel), gradient_rollout_steps);
  return problem;
}

// ---------------------------------------------------------------------------------------
// BM_MassGradient: analytic against central finite differences, one mass per link.

std::string link_mass_name(int link) {
  return "body/link" + std::to_string(link) + "/mass";
}

std::vector<double> analytic_mass_gradient(const Scene& scene, int steps) {
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, {}, steps);
  const Gradients gradients = rollout.backward(position_loss_gradient(scene.model));
  const int links = scene.model.body_count() - 1;
  std::vector<double> gradient(static_cast<std::size_t>(links));
  for (int link = 0; link < links; ++link)
    gradient[static_cast<std::size_t>(link)] = gradients.param(scene.model, link_mass_name(link))[0];
  return gradient;
}

std::vector<double> finite_difference_mass_gradient(const Scene& scene, int steps, Params& perturbed,
                                                    Workspace& workspace) {
  const int links = scene.model.body_count() - 1;
  std::vector<double> gradient(static_cast<std::size_t>(links));
  for (int link = 0; link < links; ++link) {
    double& mass = perturbed.slice(scene.model, link_mass_name(link))[0];
    const double nominal = mass, h = mass_difference_step * nominal;
    mass = nominal + h;
    const double above = rollout_loss(scene.model, perturbed, scene.state, {}, steps, workspace);
    mass = nominal - h;
    const double below = rollout_loss(scene.model, perturbed, scene.state, {}, steps, workspace);
    mass = nominal;
    gradient[static_cast<std::size_t>(link)] = (above - below) / (2 * h);
  }
  return gradient;
}

void mass_gradient_analytic(benchmark::State& bench_state) {
  const Scene scene = build_chain_scene(static_cast<int>(bench_state.range(0)));
  std::vector<double> gradient;
  for (auto _ : bench_state) {
    gradient = analytic_mass_gradient(scene, mass_gradient_steps);
    benchmark::DoNotOptimize(gradient.data());
  }
  bench_state.counters["params"] = static_cast<double>(gradient.size());
  bench_state.counters["steps"] = mass_gradient_steps;
}

// One plain rollout of the same chain: the unit the other two are measured in.
void mass_gradient_forward(benchmark::State& bench_state) {
  const Scene scene = build_chain_scene(static_cast<int>(bench_state.range(0)));
  Workspace workspace;
  double loss = 0.0;
  for (auto _ : bench_state) {
    loss = rollout_loss(scene.model, scene.params, scene.state, {}, mass_gradient_steps, workspace);
    benchmark::DoNotOptimize(loss);
  }
  bench_state.counters["steps"] = mass_gradient_steps;
}

void mass_gradient_finite_differences(benchmark::State& bench_state) {
  const Scene scene = build_chain_scene(static_cast<int>(bench_state.range(0)));
  Params perturbed = scene.params;
  Workspace workspace;
  std::vector<double> gradient;
  for (auto _ : bench_state) {
    gradient = finite_difference_mass_gradient(scene, mass_gradient_steps, perturbed, workspace);
    benchmark::DoNotOptimize(gradient.data());
  }
  // Agreement with the analytic gradient (outside the timing): the largest absolute
  // difference over the links, relative to the largest entry of the analytic gradient.
  const std::vector<double> analytic = analytic_mass_gradient(scene, mass_gradient_steps);
  double largest = 0.0, difference = 0.0;
  for (std::size_t k = 0; k < analytic.size(); ++k) {
    largest = std::max(largest, std::abs(analytic[k]));
    difference = std::max(difference, std::abs(analytic[k] - gradient[k]));
  }
  bench_state.counters["params"] = static_cast<double>(gradient.size());
  bench_state.counters["steps"] = mass_gradient_steps;
  bench_state.counters["rel_diff_vs_analytic"] = largest > 0 ? difference / largest : difference;
}

// ---------------------------------------------------------------------------------------
// BM_ChainGradient: dL/dx_0 and dL/du_t, diffphys against MuJoCo's transition Jacobians.

void chain_gradient_diffphys(benchmark::State& bench_state, const RolloutProblem& (*chain_problem)(),
                             bool parameter_gradients) {
  time_run_and_backward(bench_state, chain_problem(), parameter_gradients);
}

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO

// |dL/du (MuJoCo) − dL/du (diffphys)| / |dL/du (diffphys)| over a `steps`-step rollout of
// the chain: both are gradients with respect to the same hinge torques, so they agree where
// the two engines' trajectories agree. That is a check of the plumbing (layouts, transposes,
// signs), made on a short horizon: the released chain is chaotic, and over 1,000 steps the
// two engines' motions (within ~2e-3 rad after 0.3 s) and hence their gradients part ways,
// while each still matches central differences of its own loss.
double control_gradient_difference_between_engines(const MujocoWorld& world, bool centred, int steps,
                                                   Coordinates coordinates) {
  MujocoTrajectoryGradient mujoco(world, steps);
  mujoco.run();
  mujoco.backward(centred);
  const RolloutProblem problem =
      held_controls_problem(build_motor_chain_scene(trajectory_chain_links, coordinates), steps);
  Rollout rollout(problem.scene.model, problem.scene.params);
  rollout.run(problem.scene.state, problem.controls, steps);
  const std::vector<double> reference = rollout.backward(position_loss_gradient(problem.scene.model)).controls;
  double difference = 0.0, size = 0.0;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    difference += std::pow(mujoco.control_gradient()[k] - reference[k], 2);
    size += reference[k] * reference[k];
  }
  return std::sqrt(difference / size);
}

void chain_gradient_mujoco(benchmark::State& bench_state, bool centred) {
  const MujocoWorld world(motor_chain_mjcf(trajectory_chain_links));
  MujocoTrajectoryGradient trajectory(world, gradient_rollout_steps);
  for (auto _ : bench_state) {
    trajectory.run();
    trajectory.backward(centred);
    benchmark::DoNotOptimize(trajectory.adjoint().data());
  }
  bench_state.counters["steps"] = gradient_rollout_steps;
  bench_state.counters["state_gradient_size"] = trajectory.state_size();
  bench_state.counters["control_gradient_size"] = static_cast<double>(trajectory.control_gradient().size());
  bench_state.counters["control_gradient_rel_diff_vs_diffphys_100_steps"] =
      control_gradient_difference_between_engines(world, centred, agreement_check_steps, Coordinates::Maximal);
  // In joint coordinates both engines take the same semi-implicit Euler step of the same
  // equations, so the two gradients should agree to the finite differences' own error.
  bench_state.counters["control_gradient_rel_diff_vs_diffphys_reduced_100_steps"] =
      control_gradient_difference_between_engines(world, centred, agreement_check_steps, Coordinates::Reduced);
  if (!all_finite(trajectory.adjoint()) || !all_finite(trajectory.control_gradient()))
    bench_state.SkipWithError("MuJoCo's gradient is not finite");
}

// Forward alone, for reference: the rollout storing states.
void chain_rollout_mujoco(benchmark::State& bench_state) {
  const MujocoWorld world(motor_chain_mjcf(trajectory_chain_links));
  MujocoTrajectoryGradient trajectory(world, gradient_rollout_steps);
  for (auto _ : bench_state) trajectory.run();
  bench_state.counters["steps"] = gradient_rollout_steps;
}

#endif  // DIFFPHYS_BENCH_HAVE_MUJOCO

// ---------------------------------------------------------------------------------------
// --peak_memory_budget_mb: peak resident memory of differentiating a long chain rollout.

double peak_resident_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

int measure_peak_memory(double budget_mib, int steps, bool motors) {
  using Clock = std::chrono::steady_clock;
  const RolloutProblem problem =
      motors ? held_controls_problem(build_motor_chain_scene(trajectory_chain_links), steps)
             : RolloutProblem{build_chain_scene(trajectory_chain_links), {}, steps};
  const Model& model = problem.scene.model;
  const double baseline = peak_resident_mib();
  RolloutOptions options;
  options.memory_budget = static_cast<std::size_t>(budget_mib * (1 << 20));
  Rollout rollout(model, problem.scene.params, options);
  // CPU time beside the wall clock: on a shared machine it is the one that compares horizons.
  const std::clock_t cpu_start = std::clock();
  const auto start = Clock::now();
  rollout.run(problem.scene.state, problem.controls, steps);
  const auto run_end = Clock::now();
  const std::clock_t cpu_run_end = std::clock();
  const double after_run = peak_resident_mib();
  const Gradients gradients = rollout.backward(position_loss_gradient(model));
  const auto backward_end = Clock::now();
  const std::clock_t cpu_backward_end = std::clock();
  const auto cpu_seconds = [](std::clock_t ticks) { return static_cast<double>(ticks) / CLOCKS_PER_SEC; };
  const double after_backward = peak_resident_mib();
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  std::printf(
      "{\"model\": \"%s%d\", \"steps\": %d, \"memory_budget_MiB\": %g, \"checkpoint_interval\": %d, "
      "\"per_step_logs_kept\": %s, \"controls_MiB\": %.3f, "
      "\"stored_state_MiB\": %.3f, \"peak_rss_MiB_before_run\": %.1f, \"peak_rss_MiB_after_run\": %.1f, "
      "\"peak_rss_MiB\": %.1f, \"run_seconds\": %.3f, \"backward_seconds\": %.3f, "
      "\"run_cpu_seconds\": %.3f, \"backward_cpu_seconds\": %.3f, \"cpu_us_per_step\": %.2f, \"gradient_finite\": %s}\n",
      motors ? "motor_chain" : "chain", trajectory_chain_links, steps, budget_mib, rollout.checkpoint_interval(),
      rollout.statuses_kept() ? "true" : "false",
      static_cast<double>(problem.controls.size() * sizeof(double)) / (1 << 20),
      static_cast<double>(rollout.stored_state_bytes()) / (1 << 20), baseline, after_run, after_backward,
      seconds(run_end - start), seconds(backward_end - run_end), cpu_seconds(cpu_run_end - cpu_start),
      cpu_seconds(cpu_backward_end - cpu_run_end), 1e6 * cpu_seconds(cpu_backward_end - cpu_start) / std::max(steps, 1),
      all_finite(gradients.params) && all_finite(gradients.controls) ? "true" : "false");
  return 0;
}

// ---------------------------------------------------------------------------------------

void register_benchmarks() {
  using benchmark::RegisterBenchmark;
  register_rollout_benchmarks("chain10", chain_rollout_problem, false);
  register_rollout_benchmarks("chain10_reduced", reduced_chain_rollout_problem, false);
  register_rollout_benchmarks("arm", arm_rollout_problem, false);
  // The pile: 10–100 s per iteration (and ~15 s to settle it first), so one iteration and
  // one repetition whatever --benchmark_repetitions says.
  register_rollout_benchmarks("pile_pgs", pile_rollout_problem, true);

  const struct {
    const char* name;
    void (*function)(benchmark::State&);
  } mass_gradient_methods[] = {{"forward", mass_gradient_forward},
                               {"analytic", mass_gradient_analytic},
                               {"finite_differences", mass_gradient_finite_differences}};
  for (const auto& method : mass_gradient_methods)
    RegisterBenchmark((std::string("BM_MassGradient/") + method.name).c_str(), method.function)
        ->DenseRange(1, mass_gradient_max_links)
        ->Unit(benchmark::kMillisecond);

  // dL/dθ as well (185 parameters), unless the name ends in _state_controls: dL/dx_0 and
  // dL/du_t only (RolloutOptions::parameter_gradients off), what MuJoCo's rows compute.
  RegisterBenchmark("BM_ChainGradient/diffphys", chain_gradient_diffphys, chain_rollout_problem, true)
      ->Unit(benchmark::kMillisecond);
  // The same chain in joint coordinates (rigid/articulated.hpp), MuJoCo's own description.
  RegisterBenchmark("BM_ChainGradient/diffphys_reduced", chain_gradient_diffphys, reduced_chain_rollout_problem, true)
      ->Unit(benchmark::kMillisecond);
  RegisterBenchmark("BM_ChainGradient/diffphys_reduced_state_controls", chain_gradient_diffphys,
                    reduced_chain_rollout_problem, false)
      ->Unit(benchmark::kMillisecond);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_ChainGradient/mujoco_forward_only", chain_rollout_mujoco)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("BM_ChainGradient/mujoco_fd_centred", chain_gradient_mujoco, true)->Unit(benchmark::kMillisecond);
  RegisterBenchmark("BM_ChainGradient/mujoco_fd_forward", chain_gradient_mujoco, false)->Unit(benchmark::kMillisecond);
#endif

  register_contact_gradient_benchmarks();
}

// The value of `--name=value` among argv, or nullptr.
const char* flag_value(int argc, char** argv, std::string_view name) {
  for (int k = 1; k < argc; ++k) {
    const std::string_view argument = argv[k];
    if (argument.size() > name.size() + 3 && argument.substr(0, 2) == "--" && argument.substr(2, name.size()) == name &&
        argument[2 + name.size()] == '=')
      return argv[k] + 3 + name.size();
  }
  return nullptr;
}

}  // namespace
}  // namespace diffphys::bench

int main(int argc, char** argv) {
  using namespace diffphys::bench;
  if (const char* budget = flag_value(argc, argv, "peak_memory_budget_mb")) {
    const char* steps = flag_value(argc, argv, "peak_memory_steps");
    const char* model = flag_value(argc, argv, "peak_memory_model");
    if (model != nullptr && std::string_view(model) != "chain" && std::string_view(model) != "motor_chain") {
      std::fprintf(stderr, "diffphys_gradient_bench: --peak_memory_model must be chain or motor_chain, got '%s'\n", model);
      return 1;
    }
    return measure_peak_memory(std::atof(budget), steps ? std::atoi(steps) : memory_default_steps,
                               model == nullptr || std::string_view(model) == "motor_chain");
  }
  register_benchmarks();
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  benchmark::AddCustomContext("mujoco_version", mj_versionString());
#else
  benchmark::AddCustomContext("mujoco_version", "not built (MuJoCo not found at configure time)");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
