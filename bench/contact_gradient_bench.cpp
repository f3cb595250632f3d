// bench/contact_gradient_bench.cpp — owns the gradient benchmarks of contact rollouts in the
// convex formulation (issue #25): what forward + backward costs against forward alone, and
// against MuJoCo's centred finite differences of the same loss, with checks that each
// engine's gradient is the gradient of that loss.
//
// Two models, 1,000 steps each, all controls zero, the loss of trajectory_gradients.hpp
// (L = Σ_t Σ_b |p_b(t)|²):
//   box_tower4  4 cubes stacked 1 mm apart on the ground plane (BoxTowerDimensions), from
//               their release: they land on each other and rest; 1 ms steps, 1 s.
//   humanoid    MuJoCo's humanoid.xml from the file's pose (HumanoidDimensions): it drops,
//               folds, falls and lies on the floor; the file's 5 ms steps, 5 s.
// Families (one iteration = one whole trajectory):
//   BM_Rollout/<model>_convex/{step, run, run_backward}   as for the other BM_Rollout rows.
//   BM_ContactGradient/<model>/diffphys                   Rollout::run + backward: dL/dθ,
//                                                         dL/du_t and dL/dx_0.
//   BM_ContactGradient/<model>/diffphys_state_controls    the same without dL/dθ
//                                                         (RolloutOptions::parameter_gradients off).
//   BM_ContactGradient/<model>/mujoco_forward_only        MuJoCo's rollout storing states.
//   BM_ContactGradient/<model>/mujoco_fd_centred          that rollout + mjd_transitionFD
//                                                         (centred) at every step + the
//                                                         vector–Jacobian products back in time.
// MuJoCo loads the same model (box_tower_mjcf; humanoid.xml itself) with its Newton solver
// on the elliptic cone; its rows exist only when CMake found MuJoCo.
//
// The checks (outside the timing, once per process and model, reported as counters):
// the diffphys rows compare a few entries of dL/dx_0, dL/du_t and dL/dθ with central
// differences of the whole 1,000-step loss (fd_worst_rel_error, and each entry's two values);
// the MuJoCo row compares its dL/dx_0 for lifting the model (the top cube; the humanoid's
// root) with central differences of its own whole-rollout loss. That same lift is an entry
// on the diffphys side, so its value and the loss L itself can be read side by side.
#include "contact_gradient_bench.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench_models.hpp"
#include "diffphys_scenes.hpp"
#include "trajectory_gradients.hpp"

namespace diffphys::bench {
namespace {

constexpr int gradient_tower_height = 4;
const char* const contact_gradient_model_names[] = {"box_tower4", "humanoid"};

const RolloutProblem& box_tower_gradient_problem() {
  static const RolloutProblem problem = held_controls_problem(
      build_box_tower_scene(gradient_tower_height, SolverType::InteriorPoint, Formulation::Convex),
      gradient_rollout_steps);
  return problem;
}

const RolloutProblem& humanoid_gradient_problem() {
  static const RolloutProblem problem =
      held_controls_problem(build_humanoid_scene(Formulation::Convex), gradient_rollout_steps);
  return problem;
}

const RolloutProblem& contact_gradient_problem(const std::string& model) {
  return model == "humanoid" ? humanoid_gradient_problem() : box_tower_gradient_problem();
}

// ---------------------------------------------------------------------------------------
// diffphys' gradient against central differences of its own loss.

// One entry of the gradient: how to move it by `delta` in a copy of the problem, and where
// Rollout::backward puts its derivative.
struct GradientEntry {
  std::string name;
  double step;  // central-difference step, in the entry's unit
  std::function<void(RolloutProblem&, double delta)> perturb;
  std::function<double(const Model&, const Gradients&)> analytic;
};

// Translates the named bodies (every dynamic body if `bodies` is empty) along world axis
// `axis`, in position (kind 0) or in linear velocity (kind 1): for an articulated body, a
// motion every joint allows.
GradientEntry translation_entry(std::string name, double step, std::vector<std::string> bodies, int axis, int kind) {
  const auto selected = [bodies](const Model& model) {
    std::vector<std::size_t> indices;
    for (int b = 0; b < model.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      const bool named = std::find(bodies.begin(), bodies.end(), model.bodies[i].name) != bodies.end();
      if (model.bodies[i].type == BodyType::Dynamic && (bodies.empty() || named)) indices.push_back(i);
    }
    return indices;
  };
  return {std::move(name), step,
          [=](RolloutProblem& problem, double delta) {
            State& state = problem.scene.state;
            for (const std::size_t i : selected(problem.scene.model))
              (kind == 0 ? state.position[i] : state.linear_velocity[i])[axis] += delta;
          },
          [=](const Model& model, const Gradients& gradients) {
            double sum = 0.0;
            for (const std::size_t i : selected(model))
              sum += gradients.initial_state[kStateTangentPerBody * i + static_cast<std::size_t>(6 * kind + axis)];
            return sum;
          }};
}

GradientEntry control_entry(std::string name, double step, const std::string& actuator, int t) {
  const auto index = [actuator, t](const Model& model) {
    return static_cast<std::size_t>(t * model.actuator_count() + model.actuator_index(actuator));
  };
  return {std::move(name), step,
          [=](RolloutProblem& problem, double delta) { problem.controls[index(problem.scene.model)] += delta; },
          [=](const Model& model, const Gradients& gradients) { return gradients.controls[index(model)]; }};
}

GradientEntry parameter_entry(std::string name, double step, const std::string& slice, int component) {
  const auto k = static_cast<std::size_t>(component);
  return {std::move(name), step,
          [=](RolloutProblem& problem, double delta) {
            problem.scene.params.slice(problem.scene.model, slice)[k] += delta;
          },
          [=](const Model& model, const Gradients& gradients) { return gradients.param(model, slice)[k]; }};
}

// The entries checked for each model. The first is the one MuJoCo's row checks as well.
// Steps: the humanoid's 5 s of falling amplify an initial perturbation so much that its loss
// is far from linear over steps of 1e-6 m already (measured: the lift's central difference
// reads 3.0e4 at 1e-6 m, 1.358e4 at 1e-7 and 1.3636e4 at 1e-8, against 1.3637e4 analytic),
// hence the small steps there; the tower's loss is nearly linear.
std::vector<GradientEntry> checked_entries(const std::string& model) {
  if (model == "humanoid")
    return {translation_entry("dL_dlift", 1e-8, {}, 2, 0),
            translation_entry("dL_dvx0", 1e-8, {}, 0, 1),
            control_entry("dL_du_abdomen_y_t100", 1e-6, "abdomen_y", 100),
            control_entry("dL_du_right_knee_t400", 1e-6, "right_knee", 400),
            parameter_entry("dL_dmass_torso", 1e-7, "body/torso/mass", 0),
            parameter_entry("dL_dcontact_time_constant", 1e-10, "compliance/contact/time_constant", 0)};
  return {translation_entry("dL_dlift", 1e-6, {"box3"}, 2, 0), translation_entry("dL_dvz0_box1", 1e-5, {"box1"}, 2, 1),
          parameter_entry("dL_dmass_box0", 1e-3, "body/box0/mass", 0),
          parameter_entry("dL_dgravity_z", 1e-5, "gravity", 2),
          parameter_entry("dL_dcontact_time_constant", 1e-9, "compliance/contact/time_constant", 0)};
}

struct EntryCheck {
  std::string name;
  double analytic = 0.0;
  double central_difference = 0.0;
};

struct GradientCheck {
  double loss = 0.0;
  std::vector<EntryCheck> entries;
  double worst_relative_error = 0.0;  // max over entries of |a − c| / max(|a|, |c|)
};

GradientCheck check_diffphys_gradient(const std::string& model_name) {
  const RolloutProblem& problem = contact_gradient_problem(model_name);
  const Model& model = problem.scene.model;
  Rollout rollout(model, problem.scene.params);
  rollout.run(problem.scene.state, problem.controls, problem.steps);
  const Gradients gradients = rollout.backward(position_loss_gradient(model));
  Workspace workspace;
  GradientCheck check;
  check.loss =
      rollout_loss(model, problem.scene.params, problem.scene.state, problem.controls, problem.steps, workspace);
  for (const GradientEntry& entry : checked_entries(model_name)) {
    double losses[2] = {};
    for (int side = 0; side < 2; ++side) {
      RolloutProblem moved = problem;
      entry.perturb(moved, side == 0 ? entry.step : -entry.step);
      losses[side] = rollout_loss(moved.scene.model, moved.scene.params, moved.scene.state, moved.controls, moved.steps,
                                  workspace);
    }
    const EntryCheck result{entry.name, entry.analytic(model, gradients), (losses[0] - losses[1]) / (2 * entry.step)};
    const double size = std::max(std::abs(result.analytic), std::abs(result.central_difference));
    if (size > 0)
      check.worst_relative_error =
          std::max(check.worst_relative_error, std::abs(result.analytic - result.central_difference) / size);
    check.entries.push_back(result);
  }
  return check;
}

// Computed once per process and model (a check costs two rollouts per entry).
const GradientCheck& diffphys_gradient_check(const std::string& model) {
  static std::map<std::string, GradientCheck> checks;
  auto found = checks.find(model);
  if (found == checks.end()) found = checks.emplace(model, check_diffphys_gradient(model)).first;
  return found->second;
}

void report_check(benchmark::State& bench_state, const GradientCheck& check) {
  bench_state.counters["loss"] = check.loss;
  bench_state.counters["fd_worst_rel_error"] = check.worst_relative_error;
  for (const EntryCheck& entry : check.entries) {
    bench_state.counters[entry.name + "_analytic"] = entry.analytic;
    bench_state.counters[entry.name + "_central_diff"] = entry.central_difference;
  }
}

void contact_gradient_diffphys(benchmark::State& bench_state, const std::string& model_name, bool parameter_gradients) {
  const Gradients gradients =
      time_run_and_backward(bench_state, contact_gradient_problem(model_name), parameter_gradients);
  if (!all_finite(gradients.initial_state) || !all_finite(gradients.controls))
    bench_state.SkipWithError("the gradient is not finite");
  report_check(bench_state, diffphys_gradient_check(model_name));
}

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO

// ---------------------------------------------------------------------------------------
// MuJoCo: the same model and loss, the gradient by centred finite differences.

// The model in MuJoCo, Newton on the elliptic cone, and the body whose free joint's height
// is the lift of checked_entries' first entry.
struct MujocoContactModel {
  MujocoWorld world;
  int lift_qpos = 0;  // qpos index of that height
  int lift_dof = 0;   // its index in mjd_transitionFD's state

  MujocoContactModel(const std::string& mjcf, const char* lifted_body) : world(mjcf) {
    use_newton_elliptic(world.model());
    const mjModel* model = world.model();
    const int joint = model->body_jntadr[mj_name2id(model, mjOBJ_BODY, lifted_body)];
    lift_qpos = model->jnt_qposadr[joint] + 2;
    lift_dof = model->jnt_dofadr[joint] + 2;
  }
};

MujocoContactModel mujoco_contact_model(const std::string& model) {
  if (model == "humanoid") return {humanoid_mjcf(), "torso"};
  return {box_tower_mjcf(gradient_tower_height), "box3"};
}

// L of MuJoCo's rollout from qpos0 with qpos[index] moved by delta.
double mujoco_rollout_loss(const MujocoWorld& world, int steps, int index, double delta) {
  const mjModel* model = world.model();
  mjData* data = world.data();
  mj_resetData(model, data);
  data->qpos[index] += delta;
  std::vector<double> jacobian;
  double loss = mujoco_position_loss(model, data, jacobian, {});
  for (int t = 0; t < steps; ++t) {
    mj_step(model, data);
    loss += mujoco_position_loss(model, data, jacobian, {});
  }
  return loss;
}

void contact_gradient_mujoco(benchmark::State& bench_state, const std::string& model_name) {
  const MujocoContactModel contact_model = mujoco_contact_model(model_name);
  const MujocoWorld& world = contact_model.world;
  MujocoTrajectoryGradient trajectory(world, gradient_rollout_steps);
  double loss = 0.0;
  for (auto _ : bench_state) {
    loss = trajectory.run();
    trajectory.backward(true);
    benchmark::DoNotOptimize(trajectory.adjoint().data());
  }
  bench_state.counters["steps"] = gradient_rollout_steps;
  bench_state.counters["state_gradient_size"] = trajectory.state_size();
  bench_state.counters["control_gradient_size"] = static_cast<double>(trajectory.control_gradient().size());
  bench_state.counters["loss"] = loss;
  // Not an error that drops the row: the time is what the method costs whatever it returns,
  // and on the tower its chained Jacobians overflow (docs/BENCHMARKS.md says why).
  bench_state.counters["gradient_finite"] =
      all_finite(trajectory.adjoint()) && all_finite(trajectory.control_gradient());
  // Its own check: the lift entry against central differences of whole rollouts, with the
  // step of diffphys' check.
  const double step = checked_entries(model_name).front().step;
  const double above = mujoco_rollout_loss(world, gradient_rollout_steps, contact_model.lift_qpos, step);
  const double below = mujoco_rollout_loss(world, gradient_rollout_steps, contact_model.lift_qpos, -step);
  bench_state.counters["dL_dlift_fd_transition"] =
      trajectory.adjoint()[static_cast<std::size_t>(contact_model.lift_dof)];
  bench_state.counters["dL_dlift_central_diff"] = (above - below) / (2 * step);
}

void contact_rollout_mujoco(benchmark::State& bench_state, const std::string& model_name) {
  const MujocoContactModel contact_model = mujoco_contact_model(model_name);
  MujocoTrajectoryGradient trajectory(contact_model.world, gradient_rollout_steps);
  double loss = 0.0;
  for (auto _ : bench_state) {
    loss = trajectory.run();
    benchmark::DoNotOptimize(loss);
  }
  bench_state.counters["steps"] = gradient_rollout_steps;
  bench_state.counters["loss"] = loss;
}

#endif  // DIFFPHYS_BENCH_HAVE_MUJOCO

}  // namespace

void register_contact_gradient_benchmarks() {
  using benchmark::RegisterBenchmark;
  register_rollout_benchmarks("box_tower4_convex", box_tower_gradient_problem, false);
  register_rollout_benchmarks("humanoid_convex", humanoid_gradient_problem, false);
  for (const std::string model : contact_gradient_model_names) {
    const std::string family = "BM_ContactGradient/" + model + "/";
    RegisterBenchmark((family + "diffphys").c_str(), contact_gradient_diffphys, model, true)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark((family + "diffphys_state_controls").c_str(), contact_gradient_diffphys, model, false)
        ->Unit(benchmark::kMillisecond);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
    RegisterBenchmark((family + "mujoco_forward_only").c_str(), contact_rollout_mujoco, model)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark((family + "mujoco_fd_centred").c_str(), contact_gradient_mujoco, model)
        ->Unit(benchmark::kMillisecond);
#endif
  }
}

}  // namespace diffphys::bench
