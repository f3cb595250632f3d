// bench/trajectory_gradients.hpp — owns what every gradient benchmark of
// `diffphys_gradient_bench` shares: the loss they all differentiate, the BM_Rollout
// families (step / run / run_backward of one problem), and, when MuJoCo was found, MuJoCo's
// gradient of the same loss by finite-differenced transition Jacobians chained back in time.
//
// The loss is the sum over every state x_0 … x_T of the squared centre-of-mass positions of
// the dynamic bodies, L = Σ_t Σ_b |p_b(t)|². diffphys' State holds the centres of mass; MuJoCo's
// side reads them from mjData::xipos, so both engines compute the same function of their own
// trajectories. gradient_bench.cpp (chains, masses, memory) and contact_gradient_bench.cpp
// (contact rollouts) use these; docs/BENCHMARKS.md, "Gradients", reports them.
#pragma once

#include <benchmark/benchmark.h>

#include <span>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/simulator.hpp"

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
#include "mujoco_scenes.hpp"
#endif

namespace diffphys::bench {

// Every trajectory benchmark's horizon, in steps.
inline constexpr int gradient_rollout_steps = 1000;
// mjd_transitionFD's perturbation (MuJoCo's own tests and samples use 1e-6).
inline constexpr double mujoco_difference_step = 1e-6;

// L_t = Σ_b |p_b(t)|² over the dynamic bodies of one state.
double position_loss(const Model& model, const State& state);
// dL_t/dx_t added into `gradient`, in the tangent layout of docs/gradients.md: 2 p_b in each
// dynamic body's dL/dp entries.
void add_position_loss_gradient(const Model& model, const State& state, std::span<double> gradient);
// The same as Rollout::backward's callback, for every t.
LossGradient position_loss_gradient(const Model& model);

// L of a plain `steps`-step rollout (no states kept): what each finite-difference evaluation
// costs. controls: steps × nactuator, or empty for all-zero controls.
double rollout_loss(const Model& model, const Params& params, const State& initial, std::span<const double> controls,
                    int steps, Workspace& workspace);

bool all_finite(std::span<const double> values);

// A scene with the per-step controls of a `steps`-step rollout.
struct RolloutProblem {
  Scene scene;
  std::vector<double> controls;  // steps × nactuator
  int steps = 0;
};

// Holds the scene's default controls (zero torques, the arm's servo targets) at every step.
RolloutProblem held_controls_problem(Scene scene, int steps);

// The timed loop of a gradient row: Rollout::run + Rollout::backward of L on `problem`, one
// whole trajectory an iteration; reports the steps and the gradients' sizes as counters and
// returns the last gradients.
Gradients time_run_and_backward(benchmark::State& bench_state, const RolloutProblem& problem,
                                bool parameter_gradients);

// BM_Rollout/<model>/{step, run, run_backward} for one problem: plain stepping with a reused
// Workspace (loss summed on the way), Rollout::run, and Rollout::run + Rollout::backward of L;
// and, but for run_once problems, run_backward_workspaces (RolloutOptions::keep_step_workspaces)
// and fresh_run_backward[_workspaces] (a new Rollout each iteration: the records' first allocation).
// `run_once`: one iteration and one repetition whatever the command line says (minutes).
void register_rollout_benchmarks(const std::string& model, const RolloutProblem& (*problem)(), bool run_once);

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO

// L_t = Σ_b |p_b(t)|² over MuJoCo's moving bodies (xipos: centres of mass) of the state in
// `data`, and, if `gradient` is not empty (size 2 nv + na), dL_t/dx_t in mjd_transitionFD's
// state layout: Σ_b 2 p_bᵀ J_b in the position half (J_b: Jacobian of body b's centre of
// mass, mj_jacBodyCom), zero elsewhere. Runs mj_kinematics and mj_comPos on `data`.
double mujoco_position_loss(const mjModel* model, mjData* data, std::vector<double>& jacobian,
                            std::span<double> gradient);

// A MuJoCo trajectory and the gradient of L by finite-differenced transition Jacobians.
class MujocoTrajectoryGradient {
 public:
  MujocoTrajectoryGradient(const MujocoWorld& world, int steps);

  // Rolls out from qpos0 at rest (mj_resetData: the model's release pose), holding the
  // controls (all zero), storing (qpos, qvel) of every step; returns L.
  double run();
  // dL/dx_0 (adjoint()) and dL/du_t (control_gradient()), going back from x_T: at each step
  // A_t, B_t from mjd_transitionFD, ū_t = B_tᵀ x̄_{t+1}, x̄_t = A_tᵀ x̄_{t+1} + ∂L/∂x_t.
  void backward(bool centred);

  // dL/dx_0 in mjd_transitionFD's layout (dq (nv), dv (nv), activations (na)).
  const std::vector<double>& adjoint() const { return adjoint_; }
  const std::vector<double>& control_gradient() const { return control_gradient_; }
  int state_size() const { return state_size_; }

 private:
  void load_state(int t);

  const MujocoWorld& world_;
  int steps_;
  int nq_ = 0, nv_ = 0, nu_ = 0, state_size_ = 0;
  std::vector<double> qpos_, qvel_, controls_;
  std::vector<double> transition_, control_transition_;
  std::vector<double> adjoint_, previous_adjoint_, loss_gradient_, control_gradient_, jacobian_;
};

#endif  // DIFFPHYS_BENCH_HAVE_MUJOCO

}  // namespace diffphys::bench
