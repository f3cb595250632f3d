// bench/step_bench.cpp — owns the step benchmarks (the `diffphys_bench` executable).
//
// Each benchmark iteration is ONE step of one model, in steady state: the scene is built and
// stepped through a warm-up first (so the Workspace's buffers have grown and start-up
// transients are over), then every iteration advances the evolving state by one step. Names
// are BM_<Model>/<engine>[_<solver>][/<size>], e.g. BM_Chain/diffphys/10 and
// BM_Chain/mujoco/10, so that bench/ratios.py can pair the two engines' rows. Counters give
// what was measured: bodies, velocity dofs, and per step the constraint rows, contacts,
// solver iterations and the fraction of steps whose solver stopped above its tolerance
// (unconverged_steps; MuJoCo: steps that used all its iterations). BM_HumanoidFall and
// BM_HumanoidLying load MuJoCo's humanoid.xml in both engines and report where its torso and
// head came to rest (torso_height, head_height, m), to show both lie on the floor. The
// MuJoCo half is compiled only when CMake found MuJoCo (DIFFPHYS_BENCH_HAVE_MUJOCO). Rows that
// take tens of seconds per step (the pile with the interior-point solver) are registered only
// when DIFFPHYS_BENCH_SLOW=1 is in the environment.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bench_models.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys_scenes.hpp"

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
#include "mujoco_scenes.hpp"
#endif

namespace diffphys::bench {
namespace {

constexpr int chain_link_counts[] = {1, 2, 5, 10, 20, 50};

// Per-step quantities summed over the timed steps; reported as averages per step.
struct StepTally {
  double rows = 0.0;
  double contacts = 0.0;
  double solver_iterations = 0.0;
  double steps_in_contact = 0.0;
  double steps_not_converged = 0.0;  // the solver stopped above its tolerance

  void add(int row_count, int contact_count, int iterations, bool converged = true) {
    rows += row_count;
    contacts += contact_count;
    solver_iterations += iterations;
    steps_in_contact += contact_count > 0 ? 1.0 : 0.0;
    steps_not_converged += converged ? 0.0 : 1.0;
  }

  void report(benchmark::State& state, int bodies, int velocity_dofs, bool with_contacts) const {
    using benchmark::Counter;
    state.counters["bodies"] = Counter(bodies);
    state.counters["dofs"] = Counter(velocity_dofs);
    state.counters["rows"] = Counter(rows, Counter::kAvgIterations);
    state.counters["solver_iters"] = Counter(solver_iterations, Counter::kAvgIterations);
    state.counters["unconverged_steps"] = Counter(steps_not_converged, Counter::kAvgIterations);
    if (with_contacts) {
      state.counters["contacts"] = Counter(contacts, Counter::kAvgIterations);
      state.counters["contact_steps"] = Counter(steps_in_contact, Counter::kAvgIterations);
    }
  }
};

// ---------------------------------------------------------------------------------------
// diffphys

// A scene being stepped: the current state, the one the next step writes, and the scratch.
class DiffphysStepper {
 public:
  explicit DiffphysStepper(Scene scene) : scene_(std::move(scene)), next_(scene_.state) {}

  StepStatus step() {
    const StepStatus status =
        diffphys::step(scene_.model, scene_.params, scene_.state, scene_.controls, next_, workspace_);
    std::swap(scene_.state, next_);
    return status;
  }
  void advance(int steps) {
    for (int k = 0; k < steps; ++k) step();
  }

  State& state() { return scene_.state; }
  const State& state() const { return scene_.state; }
  const Model& model() const { return scene_.model; }

  int dynamic_body_count() const {
    return static_cast<int>(std::count_if(scene_.model.bodies.begin(), scene_.model.bodies.end(),
                                          [](const Body& body) { return body.type == BodyType::Dynamic; }));
  }
  bool state_is_finite() const {
    for (int b = 0; b < scene_.state.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      if (!is_finite(scene_.state.position[i]) || !is_finite(scene_.state.orientation[i]) ||
          !is_finite(scene_.state.linear_velocity[i]) || !is_finite(scene_.state.angular_velocity[i]))
        return false;
    }
    return true;
  }

 private:
  Scene scene_;
  State next_;
  Workspace workspace_;
};

const char* solver_label(const SolverSettings& solver) {
  if (solver.formulation == Formulation::Convex) return "convex Newton";
  return solver.type == SolverType::InteriorPoint ? "interior point" : "projected Gauss-Seidel";
}

// Times steps of `stepper` until the benchmark has enough; `before_step(k)` runs first in
// iteration k (inside the timing: it stands for work the user's loop would do as well).
template <typename BeforeStep>
void time_diffphys_steps(benchmark::State& state, DiffphysStepper& stepper, bool with_contacts,
                         BeforeStep&& before_step) {
  StepTally tally;
  long iteration = 0;
  for (auto _ : state) {
    before_step(iteration++);
    const StepStatus status = stepper.step();
    tally.add(status.row_count, status.contact_count, status.iterations, status.converged);
  }
  if (!stepper.state_is_finite()) state.SkipWithError("diffphys state became non-finite");
  const int bodies = stepper.dynamic_body_count();
  tally.report(state, bodies, 6 * bodies, with_contacts);
  state.SetLabel(std::string("solver=") + solver_label(stepper.model().solver));
}

void time_diffphys_steps(benchmark::State& state, DiffphysStepper& stepper, bool with_contacts) {
  time_diffphys_steps(state, stepper, with_contacts, [](long) {});
}

void chain_diffphys(benchmark::State& state, Coordinates coordinates) {
  DiffphysStepper stepper(build_chain_scene(static_cast<int>(state.range(0)), coordinates));
  stepper.advance(chain_warmup_steps);
  if (coordinates == Coordinates::Maximal) {
    time_diffphys_steps(state, stepper, false);
    return;
  }
  const State warm = stepper.state();
  time_diffphys_steps(state, stepper, false, [&](long iteration) {
    if (iteration % ChainDimensions::reduced_reset_period_steps == 0 && iteration > 0) stepper.state() = warm;
  });
}

// A drop repeated every `period` steps: one whole cycle first (contact buffers grown), then
// the timed steps with the drop put back every `period` (a copy of the state, timed).
void time_diffphys_drops(benchmark::State& state, Scene scene, int period) {
  DiffphysStepper stepper(std::move(scene));
  const State drop = stepper.state();
  stepper.advance(period);
  stepper.state() = drop;
  time_diffphys_steps(state, stepper, true, [&](long iteration) {
    if (iteration % period == 0 && iteration > 0) stepper.state() = drop;
  });
}

void bouncing_sphere_diffphys(benchmark::State& state) {
  time_diffphys_drops(state, build_bouncing_sphere_scene(), BouncingSphereDimensions::reset_period_steps);
}

void arm_diffphys(benchmark::State& state) {
  DiffphysStepper stepper(build_arm_scene());
  stepper.advance(arm_warmup_steps);
  time_diffphys_steps(state, stepper, false);
}

// The pile after settle_steps, stepped once per process with PGS and shared by every pile
// benchmark (Google Benchmark calls a benchmark function several times).
const State& settled_pile_state() {
  static const State settled = [] {
    DiffphysStepper stepper(build_sphere_pile_scene(SolverType::ProjectedGaussSeidel));
    stepper.advance(SpherePileDimensions::settle_steps);
    return stepper.state();
  }();
  return settled;
}

void sphere_pile_diffphys(benchmark::State& state, SolverType solver) {
  DiffphysStepper stepper(build_sphere_pile_scene(solver));
  stepper.state() = settled_pile_state();
  stepper.advance(5);  // grow this Workspace's buffers
  time_diffphys_steps(state, stepper, true);
}

// The convex formulation from the same settled pile: its springs take 100 steps to settle
// onto their own rest state first.
void sphere_pile_diffphys_convex(benchmark::State& state) {
  DiffphysStepper stepper(build_sphere_pile_scene(SolverType::InteriorPoint, Formulation::Convex));
  stepper.state() = settled_pile_state();
  stepper.advance(100);
  time_diffphys_steps(state, stepper, true);
}

void box_tower_diffphys(benchmark::State& state, SolverType solver, Formulation formulation) {
  DiffphysStepper stepper(build_box_tower_scene(static_cast<int>(state.range(0)), solver, formulation));
  stepper.advance(BoxTowerDimensions::settle_steps);
  time_diffphys_steps(state, stepper, true);
}

void box_pile_diffphys(benchmark::State& state, SolverType solver, Formulation formulation) {
  time_diffphys_drops(state, build_box_pile_scene(solver, formulation), BoxPileDimensions::reset_period_steps);
}

// MuJoCo's humanoid.xml in the convex formulation. Falling: the first 0.5 s from the file's
// pose, repeated (the drop put back every fall_period_steps, timed). Lying: from 3 s of
// simulated time on, when the humanoid has fallen and come to rest on the floor.
void report_humanoid_posture(benchmark::State& state, const DiffphysStepper& stepper) {
  for (const char* body : {"torso", "head"})
    state.counters[std::string(body) + "_height"] =
        stepper.state().position[static_cast<std::size_t>(stepper.model().body_index(body))].z;
}

void humanoid_fall_diffphys(benchmark::State& state) {
  time_diffphys_drops(state, build_humanoid_scene(Formulation::Convex), HumanoidDimensions::fall_period_steps);
}

void humanoid_lying_diffphys(benchmark::State& state) {
  DiffphysStepper stepper(build_humanoid_scene(Formulation::Convex));
  stepper.advance(HumanoidDimensions::lying_settle_steps);
  time_diffphys_steps(state, stepper, true);
  report_humanoid_posture(state, stepper);
}

// For solvers too slow for a warm-up: grows the buffers inside the one timed step.
void sphere_pile_diffphys_single_step(benchmark::State& state, SolverType solver) {
  DiffphysStepper stepper(build_sphere_pile_scene(solver));
  stepper.state() = settled_pile_state();
  time_diffphys_steps(state, stepper, true);
}

bool slow_benchmarks_requested() {
  const char* setting = std::getenv("DIFFPHYS_BENCH_SLOW");
  return setting != nullptr && std::string(setting) == "1";
}

// ---------------------------------------------------------------------------------------
// MuJoCo

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO

template <typename BeforeStep>
void time_mujoco_steps(benchmark::State& state, const MujocoWorld& world, bool with_contacts,
                       BeforeStep&& before_step) {
  const mjModel* model = world.model();
  mjData* data = world.data();
  StepTally tally;
  long iteration = 0;
  for (auto _ : state) {
    before_step(iteration++);
    mj_step(model, data);
    tally.add(data->nefc, data->ncon, data->solver_iter, data->solver_iter < model->opt.iterations);
  }
  if (data->warning[mjWARN_BADQACC].number > 0) state.SkipWithError("MuJoCo reset the simulation (bad qacc)");
  if (data->warning[mjWARN_CONTACTFULL].number > 0 || data->warning[mjWARN_CNSTRFULL].number > 0)
    state.SkipWithError("MuJoCo ran out of contact or constraint slots");
  tally.report(state, model->nbody - 1, model->nv, with_contacts);
  state.SetLabel(std::string("solver=") + (model->opt.solver == mjSOL_PGS  ? "PGS"
                                           : model->opt.solver == mjSOL_CG ? "CG"
                                                                           : "Newton"));
}

void time_mujoco_steps(benchmark::State& state, const MujocoWorld& world, bool with_contacts) {
  time_mujoco_steps(state, world, with_contacts, [](long) {});
}

void advance_mujoco(const MujocoWorld& world, int steps) {
  for (int k = 0; k < steps; ++k) mj_step(world.model(), world.data());
}

void chain_mujoco(benchmark::State& state) {
  const MujocoWorld world(chain_mjcf(static_cast<int>(state.range(0))));
  advance_mujoco(world, chain_warmup_steps);
  time_mujoco_steps(state, world, false);
}

// Puts the drop state (qpos0, zero velocity, time 0) back, as diffphys' benchmark does.
void reset_to_drop(const MujocoWorld& world) {
  const mjModel* model = world.model();
  mjData* data = world.data();
  std::copy_n(model->qpos0, model->nq, data->qpos);
  std::fill_n(data->qvel, model->nv, 0.0);
  data->time = 0.0;
}

// A drop repeated every `period` steps: one whole cycle first (contact buffers grown), then
// the timed steps with the drop put back every `period`.
void time_mujoco_drops(benchmark::State& state, const MujocoWorld& world, int period) {
  advance_mujoco(world, period);
  reset_to_drop(world);
  time_mujoco_steps(state, world, true, [&](long iteration) {
    if (iteration % period == 0 && iteration > 0) reset_to_drop(world);
  });
}

void bouncing_sphere_mujoco(benchmark::State& state) {
  time_mujoco_drops(state, MujocoWorld(bouncing_sphere_mjcf()), BouncingSphereDimensions::reset_period_steps);
}

// The servo law diffphys solves as a constraint, evaluated for MuJoCo's velocity actuators:
// desired velocity gain·(target − q); MuJoCo clips it to ctrlrange (the velocity bound) and
// the force to forcerange (the torque bound).
void set_servo_controls(const MujocoWorld& world) {
  const mjModel* model = world.model();
  mjData* data = world.data();
  for (int actuator = 0; actuator < model->nu; ++actuator) {
    const int joint = model->actuator_trnid[2 * actuator];
    const double position = data->qpos[model->jnt_qposadr[joint]];
    data->ctrl[actuator] = ArmDimensions::servo_gain * (ArmDimensions::targets[actuator] - position);
  }
}

void arm_mujoco(benchmark::State& state) {
  const MujocoWorld world(arm_mjcf());
  for (int k = 0; k < arm_warmup_steps; ++k) {
    set_servo_controls(world);
    mj_step(world.model(), world.data());
  }
  time_mujoco_steps(state, world, false, [&](long) { set_servo_controls(world); });
}

// MuJoCo's pile after settle_steps with PGS: (qpos, qvel), computed once per process.
const std::pair<std::vector<double>, std::vector<double>>& settled_mujoco_pile() {
  static const auto settled = [] {
    const MujocoWorld world(sphere_pile_mjcf("PGS"));
    advance_mujoco(world, SpherePileDimensions::settle_steps);
    const mjModel* model = world.model();
    const mjData* data = world.data();
    return std::pair{std::vector<double>(data->qpos, data->qpos + model->nq),
                     std::vector<double>(data->qvel, data->qvel + model->nv)};
  }();
  return settled;
}

void sphere_pile_mujoco(benchmark::State& state, const char* solver, const char* cone) {
  const MujocoWorld world(sphere_pile_mjcf(solver, cone));
  const auto& [qpos, qvel] = settled_mujoco_pile();
  std::copy(qpos.begin(), qpos.end(), world.data()->qpos);
  std::copy(qvel.begin(), qvel.end(), world.data()->qvel);
  advance_mujoco(world, 5);
  time_mujoco_steps(state, world, true);
}

void box_tower_mujoco(benchmark::State& state) {
  const MujocoWorld world(box_tower_mjcf(static_cast<int>(state.range(0))));
  advance_mujoco(world, BoxTowerDimensions::settle_steps);
  time_mujoco_steps(state, world, true);
}

void box_pile_mujoco(benchmark::State& state) {
  time_mujoco_drops(state, MujocoWorld(box_pile_mjcf()), BoxPileDimensions::reset_period_steps);
}

// humanoid.xml as the file gives it, on the elliptic cone (use_newton_elliptic).
void humanoid_fall_mujoco(benchmark::State& state) {
  const MujocoWorld world(humanoid_mjcf());
  use_newton_elliptic(world.model());
  time_mujoco_drops(state, world, HumanoidDimensions::fall_period_steps);
}

void humanoid_lying_mujoco(benchmark::State& state) {
  const MujocoWorld world(humanoid_mjcf());
  use_newton_elliptic(world.model());
  advance_mujoco(world, HumanoidDimensions::lying_settle_steps);
  time_mujoco_steps(state, world, true);
  mj_kinematics(world.model(), world.data());
  for (const char* body : {"torso", "head"})
    state.counters[std::string(body) + "_height"] =
        world.data()->xipos[3 * mj_name2id(world.model(), mjOBJ_BODY, body) + 2];
}

#endif  // DIFFPHYS_BENCH_HAVE_MUJOCO

void register_benchmarks() {
  using benchmark::RegisterBenchmark;
  const auto with_chain_sizes = [](benchmark::internal::Benchmark* benchmark) {
    for (const int links : chain_link_counts) benchmark->Arg(links);
  };
  with_chain_sizes(RegisterBenchmark("BM_Chain/diffphys", chain_diffphys, Coordinates::Maximal));
  // The chain in joint coordinates (rigid/articulated.hpp), as MuJoCo simulates it.
  with_chain_sizes(RegisterBenchmark("BM_Chain/diffphys_reduced", chain_diffphys, Coordinates::Reduced));
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  with_chain_sizes(RegisterBenchmark("BM_Chain/mujoco", chain_mujoco));
#endif

  RegisterBenchmark("BM_BouncingSphere/diffphys", bouncing_sphere_diffphys);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_BouncingSphere/mujoco", bouncing_sphere_mujoco);
#endif

  RegisterBenchmark("BM_Arm4Dof/diffphys", arm_diffphys);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_Arm4Dof/mujoco", arm_mujoco);
#endif

  RegisterBenchmark("BM_SpherePile/diffphys_pgs", sphere_pile_diffphys, SolverType::ProjectedGaussSeidel);
  // The interior point's dense LU on the pile's ~2000 rows takes tens of seconds per step, so
  // this row runs only on request (DIFFPHYS_BENCH_SLOW=1), as a single timed step.
  if (slow_benchmarks_requested())
    RegisterBenchmark("BM_SpherePile/diffphys_interior_point", sphere_pile_diffphys_single_step,
                      SolverType::InteriorPoint)
        ->Iterations(1)
        ->Unit(benchmark::kSecond);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_SpherePile/mujoco_pgs", sphere_pile_mujoco, "PGS", "pyramidal");
  RegisterBenchmark("BM_SpherePile/mujoco_newton", sphere_pile_mujoco, "Newton", "pyramidal");
#endif

  // The convex formulation (issue #25) against MuJoCo's Newton on the elliptic cone, its own
  // convex problem: the pile, towers of growing height (one island each) and a tumbling pile
  // of boxes. The interior point's towers up to 8 boxes, for the contrast (its box pile only
  // with DIFFPHYS_BENCH_SLOW=1).
  RegisterBenchmark("BM_SpherePile/diffphys_convex", sphere_pile_diffphys_convex);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_SpherePile/mujoco_newton_elliptic", sphere_pile_mujoco, "Newton", "elliptic");
#endif
  for (const int height : BoxTowerDimensions::heights) {
    RegisterBenchmark("BM_BoxTower/diffphys_convex", box_tower_diffphys, SolverType::InteriorPoint,
                      Formulation::Convex)
        ->Arg(height);
    if (height <= 8)
      RegisterBenchmark("BM_BoxTower/diffphys_interior_point", box_tower_diffphys, SolverType::InteriorPoint,
                        Formulation::Complementarity)
          ->Arg(height);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
    RegisterBenchmark("BM_BoxTower/mujoco_newton_elliptic", box_tower_mujoco)->Arg(height);
#endif
  }
  RegisterBenchmark("BM_BoxPile/diffphys_convex", box_pile_diffphys, SolverType::InteriorPoint, Formulation::Convex);
  if (slow_benchmarks_requested())  // seconds for some of its steps
    RegisterBenchmark("BM_BoxPile/diffphys_interior_point", box_pile_diffphys, SolverType::InteriorPoint,
                      Formulation::Complementarity);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_BoxPile/mujoco_newton_elliptic", box_pile_mujoco);
#endif

  // MuJoCo's humanoid.xml, the same file loaded by both engines: falling, then lying.
  RegisterBenchmark("BM_HumanoidFall/diffphys_convex", humanoid_fall_diffphys);
  RegisterBenchmark("BM_HumanoidLying/diffphys_convex", humanoid_lying_diffphys);
#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
  RegisterBenchmark("BM_HumanoidFall/mujoco_newton_elliptic", humanoid_fall_mujoco);
  RegisterBenchmark("BM_HumanoidLying/mujoco_newton_elliptic", humanoid_lying_mujoco);
#endif
}

}  // namespace
}  // namespace diffphys::bench

int main(int argc, char** argv) {
  diffphys::bench::register_benchmarks();
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
