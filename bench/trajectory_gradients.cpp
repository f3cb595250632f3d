// bench/trajectory_gradients.cpp — owns the loss, the BM_Rollout families and MuJoCo's
// finite-differenced trajectory gradient shared by the gradient benchmarks
// (trajectory_gradients.hpp says what each is).
#include "trajectory_gradients.hpp"

#include <malloc.h>  // malloc_trim (glibc)

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace diffphys::bench {

// ---------------------------------------------------------------------------------------
// The loss, L = Σ_t Σ_b |p_b(t)|² over the dynamic bodies.

double position_loss(const Model& model, const State& state) {
  double loss = 0.0;
  for (int b = 0; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    if (model.bodies[i].type == BodyType::Dynamic) loss += squared_norm(state.position[i]);
  }
  return loss;
}

void add_position_loss_gradient(const Model& model, const State& state, std::span<double> gradient) {
  for (int b = 0; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    if (model.bodies[i].type != BodyType::Dynamic) continue;
    for (int k = 0; k < 3; ++k)
      gradient[kStateTangentPerBody * i + static_cast<std::size_t>(k)] += 2.0 * state.position[i][k];
  }
}

LossGradient position_loss_gradient(const Model& model) {
  return [&model](int, const State& state, std::span<double> gradient) {
    add_position_loss_gradient(model, state, gradient);
  };
}

bool all_finite(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

double rollout_loss(const Model& model, const Params& params, const State& initial, std::span<const double> controls,
                    int steps, Workspace& workspace) {
  const auto actuators = static_cast<std::size_t>(model.actuator_count());
  const std::vector<double> zero_controls(controls.empty() ? actuators : 0, 0.0);
  State current = initial, next = initial;
  double loss = position_loss(model, current);
  for (int t = 0; t < steps; ++t) {
    const std::span<const double> controls_t =
        controls.empty() ? std::span<const double>(zero_controls)
                         : controls.subspan(static_cast<std::size_t>(t) * actuators, actuators);
    step(model, params, current, controls_t, next, workspace);
    std::swap(current, next);
    loss += position_loss(model, current);
  }
  return loss;
}

// ---------------------------------------------------------------------------------------
// BM_Rollout: forward + backward against forward alone.

Gradients time_run_and_backward(benchmark::State& bench_state, const RolloutProblem& problem,
                                bool parameter_gradients) {
  const Model& model = problem.scene.model;
  RolloutOptions options;
  options.parameter_gradients = parameter_gradients;
  Rollout rollout(model, problem.scene.params, options);
  Gradients gradients;
  for (auto _ : bench_state) {
    rollout.run(problem.scene.state, problem.controls, problem.steps);
    gradients = rollout.backward(position_loss_gradient(model));
    benchmark::DoNotOptimize(gradients.initial_state.data());
    benchmark::DoNotOptimize(gradients.controls.data());
  }
  bench_state.counters["steps"] = problem.steps;
  bench_state.counters["state_gradient_size"] = static_cast<double>(gradients.initial_state.size());
  bench_state.counters["control_gradient_size"] = static_cast<double>(gradients.controls.size());
  return gradients;
}

RolloutProblem held_controls_problem(Scene scene, int steps) {
  RolloutProblem problem{std::move(scene), {}, steps};
  for (int t = 0; t < steps; ++t)
    problem.controls.insert(problem.controls.end(), problem.scene.controls.begin(), problem.scene.controls.end());
  return problem;
}

namespace {

// RunBackwardWorkspaces: with RolloutOptions::keep_step_workspaces (whole step Workspaces as
// records instead of the solutions). Fresh*: a new Rollout every iteration after the previous
// one's memory went back to the system, as a program that differentiates once pays (its
// records' first allocation and page faults; real time counts).
enum class RolloutPhase { Step, Run, RunBackward, RunBackwardWorkspaces, FreshRunBackward, FreshRunBackwardWorkspaces };

void report_rollout_counters(benchmark::State& bench_state, const RolloutProblem& problem) {
  const Model& model = problem.scene.model;
  bench_state.counters["steps"] = problem.steps;
  bench_state.counters["actuators"] = model.actuator_count();
  bench_state.counters["params"] = model.param_count();
  bench_state.counters["bodies"] = model.body_count() - 1;
}

void time_rollout(benchmark::State& bench_state, const RolloutProblem& problem, RolloutPhase phase) {
  const Model& model = problem.scene.model;
  const Params& params = problem.scene.params;
  const State& initial = problem.scene.state;
  report_rollout_counters(bench_state, problem);
  if (phase == RolloutPhase::Step) {
    Workspace workspace;
    double loss = 0.0;
    for (auto _ : bench_state) {
      loss = rollout_loss(model, params, initial, problem.controls, problem.steps, workspace);
      benchmark::DoNotOptimize(loss);
    }
    if (!std::isfinite(loss)) bench_state.SkipWithError("the rollout became non-finite");
    bench_state.counters["loss"] = loss;
    return;
  }
  RolloutOptions options;
  options.keep_step_workspaces =
      phase == RolloutPhase::RunBackwardWorkspaces || phase == RolloutPhase::FreshRunBackwardWorkspaces;
  const bool fresh = phase == RolloutPhase::FreshRunBackward || phase == RolloutPhase::FreshRunBackwardWorkspaces;
  auto rollout = std::make_unique<Rollout>(model, params, options);
  Gradients gradients;
  for (auto _ : bench_state) {
    if (fresh) {
      // The previous Rollout's memory back to the system first (untimed), so that this one's
      // records fault their pages in as in a new process (else the allocator hands the old
      // pages back).
      bench_state.PauseTiming();
      rollout.reset();
      malloc_trim(0);
      bench_state.ResumeTiming();
      rollout = std::make_unique<Rollout>(model, params, options);
    }
    rollout->run(initial, problem.controls, problem.steps);
    if (phase != RolloutPhase::Run) {
      gradients = rollout->backward(position_loss_gradient(model));
      benchmark::DoNotOptimize(gradients.params.data());
    }
  }
  const Rollout& last = *rollout;
  bench_state.counters["checkpoint_interval"] = last.checkpoint_interval();
  bench_state.counters["stored_MiB"] = static_cast<double>(last.stored_state_bytes()) / (1 << 20);
  bench_state.counters["records_MiB"] = static_cast<double>(last.stored_record_bytes()) / (1 << 20);
  bench_state.counters["solutions_MiB"] = static_cast<double>(last.stored_solution_bytes()) / (1 << 20);
  bench_state.counters["workspaces_MiB"] = static_cast<double>(last.stored_workspace_bytes()) / (1 << 20);
  const auto statuses = last.statuses();
  bench_state.counters["unconverged_steps"] = static_cast<double>(
      std::count_if(statuses.begin(), statuses.end(), [](const StepStatus& status) { return !status.converged; }));
  if (phase != RolloutPhase::Run) {
    bench_state.counters["contact_changes"] = static_cast<double>(gradients.health.contact_changes.size());
    bench_state.counters["solver_converged"] = gradients.health.solver_converged ? 1 : 0;
    if (!all_finite(gradients.params) || !all_finite(gradients.controls) || !all_finite(gradients.initial_state))
      bench_state.SkipWithError("the gradient is not finite");
  }
}

}  // namespace

void register_rollout_benchmarks(const std::string& model, const RolloutProblem& (*problem)(), bool run_once) {
  const struct {
    const char* name;
    RolloutPhase phase;
  } phases[] = {{"step", RolloutPhase::Step},
                {"run", RolloutPhase::Run},
                {"run_backward", RolloutPhase::RunBackward},
                {"run_backward_workspaces", RolloutPhase::RunBackwardWorkspaces},
                {"fresh_run_backward", RolloutPhase::FreshRunBackward},
                {"fresh_run_backward_workspaces", RolloutPhase::FreshRunBackwardWorkspaces}};
  for (const auto& [name, phase] : phases) {
    // The pile's rows take minutes each: its own three phases only.
    if (run_once && phase != RolloutPhase::Step && phase != RolloutPhase::Run && phase != RolloutPhase::RunBackward)
      continue;
    auto* family = benchmark::RegisterBenchmark(
        ("BM_Rollout/" + model + "/" + name).c_str(),
        [problem, which = phase](benchmark::State& bench_state) { time_rollout(bench_state, problem(), which); });
    if (run_once)
      family->Iterations(1)->Repetitions(1)->Unit(benchmark::kSecond);
    else
      family->Unit(benchmark::kMillisecond);
  }
}

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO

// ---------------------------------------------------------------------------------------
// MuJoCo: the same loss, its gradient by mjd_transitionFD chained back in time.

double mujoco_position_loss(const mjModel* model, mjData* data, std::vector<double>& jacobian,
                            std::span<double> gradient) {
  const int nv = model->nv;
  mj_kinematics(model, data);
  mj_comPos(model, data);
  std::fill(gradient.begin(), gradient.end(), 0.0);
  jacobian.resize(3 * static_cast<std::size_t>(nv));
  double loss = 0.0;
  for (int body = 1; body < model->nbody; ++body) {
    const double* position = data->xipos + 3 * body;
    loss += position[0] * position[0] + position[1] * position[1] + position[2] * position[2];
    if (gradient.empty()) continue;
    mj_jacBodyCom(model, data, jacobian.data(), nullptr, body);
    for (int k = 0; k < 3; ++k)
      for (int dof = 0; dof < nv; ++dof)
        gradient[static_cast<std::size_t>(dof)] += 2.0 * position[k] * jacobian[static_cast<std::size_t>(k * nv + dof)];
  }
  return loss;
}

MujocoTrajectoryGradient::MujocoTrajectoryGradient(const MujocoWorld& world, int steps) : world_(world), steps_(steps) {
  const mjModel* model = world_.model();
  nq_ = model->nq;
  nv_ = model->nv;
  nu_ = model->nu;
  state_size_ = 2 * nv_ + model->na;
  qpos_.resize(static_cast<std::size_t>((steps + 1) * nq_));
  qvel_.resize(static_cast<std::size_t>((steps + 1) * nv_));
  controls_.assign(static_cast<std::size_t>(steps * nu_), 0.0);
  transition_.resize(static_cast<std::size_t>(state_size_ * state_size_));
  control_transition_.resize(static_cast<std::size_t>(state_size_ * nu_));
  adjoint_.resize(static_cast<std::size_t>(state_size_));
  previous_adjoint_.resize(static_cast<std::size_t>(state_size_));
  loss_gradient_.resize(static_cast<std::size_t>(state_size_));
  control_gradient_.resize(static_cast<std::size_t>(steps * nu_));
}

double MujocoTrajectoryGradient::run() {
  const mjModel* model = world_.model();
  mjData* data = world_.data();
  mj_resetData(model, data);
  double loss = 0.0;
  for (int t = 0; t <= steps_; ++t) {
    std::copy_n(data->qpos, nq_, qpos_.begin() + t * nq_);
    std::copy_n(data->qvel, nv_, qvel_.begin() + t * nv_);
    loss += mujoco_position_loss(model, data, jacobian_, {});
    if (t == steps_) break;
    std::copy_n(controls_.begin() + t * nu_, nu_, data->ctrl);
    mj_step(model, data);
  }
  return loss;
}

void MujocoTrajectoryGradient::backward(bool centred) {
  const mjModel* model = world_.model();
  mjData* data = world_.data();
  load_state(steps_);
  mujoco_position_loss(model, data, jacobian_, adjoint_);
  for (int t = steps_ - 1; t >= 0; --t) {
    load_state(t);
    std::copy_n(controls_.begin() + t * nu_, nu_, data->ctrl);
    mjd_transitionFD(model, data, mujoco_difference_step, centred ? 1 : 0, transition_.data(),
                     control_transition_.data(), nullptr, nullptr);
    mju_mulMatTVec(control_gradient_.data() + t * nu_, control_transition_.data(), adjoint_.data(), state_size_, nu_);
    mju_mulMatTVec(previous_adjoint_.data(), transition_.data(), adjoint_.data(), state_size_, state_size_);
    mujoco_position_loss(model, data, jacobian_, loss_gradient_);
    for (int k = 0; k < state_size_; ++k)
      adjoint_[static_cast<std::size_t>(k)] =
          previous_adjoint_[static_cast<std::size_t>(k)] + loss_gradient_[static_cast<std::size_t>(k)];
  }
}

void MujocoTrajectoryGradient::load_state(int t) {
  mjData* data = world_.data();
  std::copy_n(qpos_.begin() + t * nq_, nq_, data->qpos);
  std::copy_n(qvel_.begin() + t * nv_, nv_, data->qvel);
  data->time = t * world_.model()->opt.timestep;
}

#endif  // DIFFPHYS_BENCH_HAVE_MUJOCO

}  // namespace diffphys::bench
