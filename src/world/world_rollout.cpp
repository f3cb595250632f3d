// world/world_rollout.cpp — WorldRollout (diffphys/world.hpp): one rollout and one gradient for
// any world. A world of several parts runs the world's schedule (world/schedule.cpp: each
// part's step and step VJP in order, with the couplings between them, the tape and its
// reverse owned once for all parts), and so does a fluid world (the fluid part has no rollout
// of its own in the world). A rigid-only or soft-only world runs that part's own rollout — the
// rigid Rollout (adjoint/rollout.cpp) or SoftRollout (soft/soft_rollout.cpp) — which take the
// same steps and VJPs and add storage of their own (the rigid steps' solutions, the soft
// steps' Cholesky factors) that the schedule does not have yet; this file splits the world's
// flat controls and parameters into theirs and joins their states and gradients back.
#include "diffphys/world.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "world/part_kind.hpp"
#include "world/schedule.hpp"

namespace diffphys {

namespace {

soft::SoftRolloutOptions soft_options(const RolloutOptions& options) {
  soft::SoftRolloutOptions soft;
  soft.checkpoint_interval = options.checkpoint_interval;
  soft.memory_budget = options.memory_budget;
  soft.gradient_decay = options.gradient_decay;
  soft.gradient_clip = options.gradient_clip;
  soft.keep_step_records = options.keep_step_records;
  return soft;
}

void add_into(std::span<double> target, std::span<const double> values) {
  for (std::size_t i = 0; i < values.size(); ++i) target[i] += values[i];
}

// A WorldController seen by the rigid Rollout (a rigid-only world: its controls and tangent
// are the world's).
class RigidFeedback final : public Controller {
 public:
  explicit RigidFeedback(WorldController& controller) : controller_(controller) {}
  void act(int step, const State& state, std::span<double> controls) override {
    seen_.rigid = state;
    seen_.time = state.time;
    controller_.act(step, seen_, controls);
  }
  void act_backward(int step, const State& state, std::span<const double> control_gradient,
                    std::span<double> state_gradient) override {
    seen_.rigid = state;
    seen_.time = state.time;
    WorldStateGradient gradient{state_gradient, state_gradient, {}, {}, {}, {}};
    controller_.act_backward(step, seen_, control_gradient, gradient);
  }

 private:
  WorldController& controller_;
  WorldState seen_;
};

// A WorldController seen by the SoftRollout (a soft-only world: the forces are the world's
// controls; the tangent [x̄, v̄] is assembled in one vector for the controller).
class SoftFeedback final : public soft::SoftController {
 public:
  explicit SoftFeedback(WorldController& controller) : controller_(controller) {}
  void act(int step, const soft::SoftState& state, std::span<double> forces) override {
    seen_.soft = state;
    seen_.time = state.time;
    controller_.act(step, seen_, forces);
  }
  void act_backward(int step, const soft::SoftState& state, std::span<const double> force_gradient,
                    std::span<double> dL_dx, std::span<double> dL_dv) override {
    seen_.soft = state;
    seen_.time = state.time;
    tangent_.assign(dL_dx.size() + dL_dv.size(), 0.0);
    const std::span<double> all(tangent_);
    WorldStateGradient gradient{all, all.first(0), all.first(dL_dx.size()), all.subspan(dL_dx.size()), {}, {}};
    controller_.act_backward(step, seen_, force_gradient, gradient);
    add_into(dL_dx, gradient.soft_positions);
    add_into(dL_dv, gradient.soft_velocities);
  }

 private:
  WorldController& controller_;
  WorldState seen_;
  std::vector<double> tangent_;
};

}  // namespace

// The engine: the world's schedule, or the one part's rollout. A part's rollout refers to this
// engine's copy of its parameters, refreshed from the WorldParams at run() (the schedule's
// parts read theirs from the WorldParams when a run begins).
struct WorldRollout::Engine {
  Params rigid_params;
  soft::SoftParams soft_params;
  std::optional<Rollout> rigid;
  std::optional<soft::SoftRollout> soft;
  std::unique_ptr<world::Schedule> schedule;
  std::vector<double> rigid_controls, soft_controls;  // this run's, in each engine's layout
  std::unique_ptr<Controller> rigid_feedback;          // closed loop: the WorldController, as each engine sees it
  std::unique_ptr<soft::SoftController> soft_feedback;
  mutable StepStatus recomputed_rigid;  // status(t) of a rigid rollout whose statuses were not kept
};

WorldRollout::WorldRollout(const World& world, const WorldParams& params, WorldRolloutOptions options)
    : world_(world), params_(params), options_(options), engine_(std::make_unique<Engine>()) {
  Engine& engine = *engine_;
  // A kind without a rollout of its own in the world (a fluid) is stepped by the schedule.
  if (world::runs_on_schedule(world_)) {
    engine.schedule = std::make_unique<world::Schedule>(world_, params_, options_.rollout);
  } else if (world_.has_rigid()) {
    engine.rigid_params = rigid_params(world_, params_);
    engine.rigid.emplace(world_.rigid->model, engine.rigid_params, options_.rollout);
  } else {
    engine.soft_params = soft_params(world_, params_);
    engine.soft.emplace(world_.soft->model, engine.soft_params, soft_options(options_.rollout));
  }
}

WorldRollout::~WorldRollout() = default;

void WorldRollout::run(const WorldState& initial, std::span<const double> controls, int steps) {
  if (steps < 0) throw Error(message("world rollout: steps must be ≥ 0, got ", steps));
  const WorldLayout& layout = world_.layout();
  const auto per_step = static_cast<std::size_t>(layout.control_count);
  const auto count = static_cast<std::size_t>(steps);
  if (!controls.empty() && controls.size() != count * per_step)
    throw Error(message("world rollout: expected ", count * per_step, " control values (", steps, " steps × ", per_step,
                        ") or none, got ", controls.size()));
  for (std::size_t i = 0; i < controls.size(); ++i)
    if (!std::isfinite(controls[i])) {
      const int within = static_cast<int>(i % per_step);
      const auto slice = std::find_if(layout.controls.begin(), layout.controls.end(), [&](const NamedSlice& s) {
        return within >= s.offset && within < s.offset + s.size;
      });
      throw Error(message("world rollout: control '", slice->name, "'[", within - slice->offset, "] at step ", i / per_step,
                          " must be finite, got ", controls[i]));
    }
  refresh_params();
  Engine& engine = *engine_;
  if (engine.schedule) {
    engine.schedule->run(initial, controls, steps, nullptr);
    steps_ = steps;
    final_state_ = engine.schedule->final_state();
    return;
  }
  // Controls: each world step's rigid block (substeps × nactuator, in Rollout's order) and
  // soft block (3 per node); without controls, the scene's defaults held and no forces.
  const auto rigid_block = static_cast<std::size_t>(layout.soft_control_offset);
  const std::vector<double> defaults = world_.default_controls();
  engine.rigid_controls.resize(count * rigid_block);
  for (std::size_t t = 0; t < count; ++t) {
    const double* from = controls.empty() ? defaults.data() : controls.data() + t * per_step;
    std::copy(from, from + rigid_block, engine.rigid_controls.begin() + static_cast<std::ptrdiff_t>(t * rigid_block));
  }
  engine.soft_controls.clear();
  if (world_.has_soft() && !controls.empty()) {
    const auto dofs = per_step - rigid_block;
    engine.soft_controls.resize(count * dofs);
    for (std::size_t t = 0; t < count; ++t)
      std::copy(controls.begin() + static_cast<std::ptrdiff_t>(t * per_step + rigid_block),
                controls.begin() + static_cast<std::ptrdiff_t>((t + 1) * per_step),
                engine.soft_controls.begin() + static_cast<std::ptrdiff_t>(t * dofs));
  }

  if (engine.rigid) {
    engine.rigid->run(initial.rigid, engine.rigid_controls, steps);
  } else {
    engine.soft->run(initial.soft, engine.soft_controls, steps);
  }
  steps_ = steps;
  final_state_ = state(steps);
}

void WorldRollout::refresh_params() {
  const WorldLayout& layout = world_.layout();
  Engine& engine = *engine_;
  if (params_.values.size() != static_cast<std::size_t>(layout.param_count))
    throw Error(message("world rollout: expected ", layout.param_count, " parameter values, got ", params_.values.size()));
  // Non-finite inputs, named in the world's layout (each part checks its own physical ranges).
  for (const NamedSlice& slice : layout.params)
    for (int k = 0; k < slice.size; ++k)
      if (!std::isfinite(params_.values[static_cast<std::size_t>(slice.offset + k)]))
        throw Error(message("world rollout: parameter '", slice.name, "'[", k, "] must be finite, got ",
                            params_.values[static_cast<std::size_t>(slice.offset + k)]));
  // The soft part's copies of its colliders' sizes were taken when the scene was read.
  for (const NamedSlice& slice : world_.collider_geometry())
    for (int k = 0; k < slice.size; ++k) {
      const auto i = static_cast<std::size_t>(slice.offset + k);
      const double scene = world_.rigid->params.values[i];
      if (params_.values[i] != scene)
        throw Error(message("world rollout: parameter '", slice.name, "'[", k, "] is ", params_.values[i], ", the scene's ", scene,
                            ": the soft part collides with this shape at the size the scene was read with, so it cannot ",
                            "change in a rollout (change it in the scene file)"));
    }
  // Refresh the part's rollout's parameters in place: it holds a reference to this vector.
  if (engine.rigid) engine.rigid_params.values = rigid_params(world_, params_).values;
  if (engine.soft) engine.soft_params.values = soft_params(world_, params_).values;
}

void WorldRollout::run(const WorldState& initial, WorldController& controller, int steps) {
  if (steps < 0) throw Error(message("world rollout: steps must be ≥ 0, got ", steps));
  Engine& engine = *engine_;
  refresh_params();
  if (engine.schedule) {
    engine.schedule->run(initial, {}, steps, &controller);
  } else if (engine.rigid) {
    engine.rigid_feedback = std::make_unique<RigidFeedback>(controller);
    engine.rigid->run(initial.rigid, *engine.rigid_feedback, steps);
  } else {
    engine.soft_feedback = std::make_unique<SoftFeedback>(controller);
    engine.soft->run(initial.soft, *engine.soft_feedback, steps);
  }
  steps_ = steps;
  final_state_ = state(steps);
}

std::vector<double> WorldRollout::controls() const {
  const Engine& engine = *engine_;
  const auto per_step = static_cast<std::size_t>(world_.layout().control_count);
  const auto count = static_cast<std::size_t>(steps_);
  if (engine.schedule) {
    const std::span<const double> used = engine.schedule->controls();
    return {used.begin(), used.end()};
  }
  if (engine.rigid) {
    const std::span<const double> used = engine.rigid->controls();
    return {used.begin(), used.end()};
  }
  // A soft world: its forces are the world's controls (none given: zeros).
  const std::span<const double> forces = engine.soft->controls();
  if (forces.empty()) return std::vector<double>(count * per_step, 0.0);
  return {forces.begin(), forces.end()};
}

WorldState WorldRollout::state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("world rollout: step ", step, " outside [0, ", steps_, "]"));
  WorldState state;
  const Engine& engine = *engine_;
  if (engine.schedule) {
    state = engine.schedule->state(step);
  } else if (engine.rigid) {
    state.rigid = engine.rigid->state(step);
    state.time = state.rigid.time;
  } else {
    state.soft = engine.soft->state(step);
    state.time = state.soft.time;
  }
  return state;
}

WorldStepStatus WorldRollout::status(int step) const {
  if (step < 0 || step >= steps_) throw Error(message("world rollout: step ", step, " outside [0, ", steps_, ")"));
  const Engine& engine = *engine_;
  const auto t = static_cast<std::size_t>(step);
  WorldStepStatus status;
  if (engine.schedule) {
    status = engine.schedule->status(step);
  } else if (engine.rigid) {
    if (engine.rigid->statuses_kept()) {
      status.rigid = engine.rigid->statuses().subspan(t, 1);
    } else {
      engine.recomputed_rigid = engine.rigid->status(step);  // recomputed from its checkpoint
      status.rigid = std::span<const StepStatus>(&engine.recomputed_rigid, 1);
    }
  } else {
    status.soft = &engine.soft->statuses()[t];
  }
  return status;
}

bool WorldStepStatus::converged() const {
  const std::span<const world::PartKind> kinds = world::part_kinds();
  return std::all_of(kinds.begin(), kinds.end(), [&](const world::PartKind& kind) { return kind.converged(*this); });
}

bool WorldRollout::statuses_kept() const {
  const Engine& engine = *engine_;
  if (engine.schedule) return engine.schedule->statuses_kept();
  return engine.rigid ? engine.rigid->statuses_kept() : true;
}

bool WorldRollout::converged() const {
  const Engine& engine = *engine_;
  if (engine.schedule) return engine.schedule->converged();
  if (engine.rigid) return engine.rigid->converged();  // kept whatever the number of steps
  for (int t = 0; t < steps_; ++t)
    if (!status(t).converged()) return false;
  return true;
}

int WorldRollout::checkpoint_interval() const {
  const Engine& engine = *engine_;
  if (engine.schedule) return engine.schedule->checkpoint_interval();
  if (engine.rigid) return engine.rigid->checkpoint_interval();
  return engine.soft ? engine.soft->checkpoint_interval() : 1;
}

std::size_t WorldRollout::stored_state_bytes() const {
  const Engine& engine = *engine_;
  if (engine.schedule) return engine.schedule->stored_state_bytes();
  if (engine.rigid) return engine.rigid->stored_state_bytes();
  return engine.soft ? engine.soft->stored_state_bytes() : 0;
}

std::size_t WorldRollout::stored_record_bytes() const {
  const Engine& engine = *engine_;
  if (engine.schedule) return engine.schedule->stored_record_bytes();
  if (engine.rigid) return engine.rigid->stored_record_bytes();
  return engine.soft ? engine.soft->stored_record_bytes() : 0;
}

WorldGradients WorldRollout::backward(const WorldLossGradient& loss_gradient) const {
  const WorldLayout& layout = world_.layout();
  const Engine& engine = *engine_;
  if (engine.schedule) {
    WorldGradients result = engine.schedule->backward(loss_gradient, options_.rollout.parameter_gradients);
    for (const NamedSlice& slice : world_.collider_geometry()) result.not_differentiable.push_back(slice.name);
    return result;
  }
  const auto per_step = static_cast<std::size_t>(layout.control_count);
  const auto rigid_block = static_cast<std::size_t>(layout.soft_control_offset);
  const auto soft_tangent = static_cast<std::size_t>(layout.soft_tangent_offset);
  const auto dofs = world_.has_soft() ? static_cast<std::size_t>(world_.soft->model.dof_count()) : 0;
  WorldGradients result;
  result.initial_state.assign(static_cast<std::size_t>(layout.tangent_size), 0.0);
  result.controls.assign(static_cast<std::size_t>(steps_) * per_step, 0.0);
  if (options_.rollout.parameter_gradients) result.params.assign(static_cast<std::size_t>(layout.param_count), 0.0);

  // The loss sees the world's state and one flat tangent gradient, whatever the engine.
  WorldState seen;
  std::vector<double> tangent(static_cast<std::size_t>(layout.tangent_size));
  const auto call_loss = [&](int step) {
    std::fill(tangent.begin(), tangent.end(), 0.0);
    const std::span<double> all(tangent);
    WorldStateGradient gradient{all, all.first(soft_tangent), all.subspan(soft_tangent, dofs),
                                all.subspan(soft_tangent + dofs, dofs), {}, {}};
    if (loss_gradient) loss_gradient(step, seen, gradient);
  };
  // Each part's gradient into the world's layouts.
  const auto take_rigid = [&](const Gradients& rigid) {
    std::copy(rigid.initial_state.begin(), rigid.initial_state.end(), result.initial_state.begin());
    const auto actuators = static_cast<std::size_t>(world_.rigid->model.actuator_count());
    const auto substeps = static_cast<std::size_t>(world_.rigid_steps_per_step());
    for (std::size_t t = 0; t < static_cast<std::size_t>(steps_); ++t)
      std::copy(rigid.controls.begin() + static_cast<std::ptrdiff_t>(t * substeps * actuators),
                rigid.controls.begin() + static_cast<std::ptrdiff_t>((t + 1) * substeps * actuators),
                result.controls.begin() + static_cast<std::ptrdiff_t>(t * per_step));
    if (!result.params.empty() && !rigid.params.empty())
      std::copy(rigid.params.begin(), rigid.params.end(), result.params.begin());
    result.rigid_health = rigid.health;
    result.per_step_kept = rigid.health.per_step_kept;
    result.not_differentiable = rigid.not_differentiable;
    result.solver_converged = result.solver_converged && rigid.health.solver_converged;
  };
  const auto take_soft = [&](const soft::SoftGradients& soft) {
    std::copy(soft.initial_positions.begin(), soft.initial_positions.end(), result.initial_state.begin() + static_cast<std::ptrdiff_t>(soft_tangent));
    std::copy(soft.initial_velocities.begin(), soft.initial_velocities.end(),
              result.initial_state.begin() + static_cast<std::ptrdiff_t>(soft_tangent + dofs));
    if (!soft.controls.empty())
      for (std::size_t t = 0; t < static_cast<std::size_t>(steps_); ++t)
        std::copy(soft.controls.begin() + static_cast<std::ptrdiff_t>(t * dofs), soft.controls.begin() + static_cast<std::ptrdiff_t>((t + 1) * dofs),
                  result.controls.begin() + static_cast<std::ptrdiff_t>(t * per_step + rigid_block));
    if (!result.params.empty())
      std::copy(soft.params.begin(), soft.params.end(), result.params.begin() + layout.soft_param_offset);
    result.soft_health = soft.health;
    result.solver_converged = result.solver_converged && soft.solver_converged;
  };

  if (engine.rigid) {
    // The rigid tangent is the whole world tangent: the loss adds straight into the engine's.
    const Gradients g = engine.rigid->backward([&](int step, const State& state, std::span<double> dL_dx) {
      seen.rigid = state;
      seen.time = state.time;
      WorldStateGradient gradient{dL_dx, dL_dx, {}, {}, {}, {}};
      if (loss_gradient) loss_gradient(step, seen, gradient);
    });
    take_rigid(g);
  } else {
    const soft::SoftGradients g =
        engine.soft->backward([&](int step, const soft::SoftState& state, std::span<double> dL_dx, std::span<double> dL_dv) {
          seen.soft = state;
          seen.time = state.time;
          call_loss(step);
          add_into(dL_dx, std::span<const double>(tangent).first(dofs));
          add_into(dL_dv, std::span<const double>(tangent).subspan(dofs, dofs));
        });
    take_soft(g);
  }
  return result;
}

}  // namespace diffphys
