// world/world_simulator.cpp — WorldSimulator (diffphys/world_simulator.hpp): one world step
// at a time, no history. Each part is stepped by its own engine's step function (rigid
// step(), soft_step(); rigid + soft: coupled::coupled_step, the per-step function of
// CoupledRollout::run), on buffers sized once here so that step() allocates nothing.
#include "diffphys/world_simulator.hpp"

#include <algorithm>
#include <utility>

#include "diffphys/error.hpp"
#include "rigid/articulated.hpp"
#include "soft/coupled_step.hpp"

namespace diffphys {

// The parts' engines and their scratch. Rigid + soft: the rigid window steps the rigid state
// in place, substep by substep, recording each substep's status.
struct WorldSimulator::Engine final : coupled::RigidWindow {
  Engine(const World& world, const WorldParams& params)
      : soft_workspace(world.soft ? std::make_optional<soft::SoftWorkspace>(world.soft->model) : std::nullopt) {
    if (world.rigid) {
      rigid_model = world.rigid->model;
      // As CoupledRollout (and Rollout): a coupled world's rigid steps start cold.
      if (world.soft) rigid_model.solver.warm_start = false;
      rigid_params = diffphys::rigid_params(world, params);
      validate_params(rigid_model, rigid_params);
      if (rigid_model.solver.coordinates == Coordinates::Reduced) rigid::validate_reduced_coordinates(rigid_model);
      rigid_statuses.assign(static_cast<std::size_t>(world.rigid_steps_per_step()), StepStatus{});
      actuators = static_cast<std::size_t>(rigid_model.actuator_count());
    }
    if (world.soft) {
      soft_params = diffphys::soft_params(world, params);
      soft::validate_soft_params(world.soft->model, soft_params);
    }
    default_controls = world.default_controls();
  }

  // The rigid window of a coupled step: `substeps` rigid steps of *rigid_state in place.
  const State& run(const Params& theta) override {
    for (std::size_t k = 0; k < rigid_statuses.size(); ++k) {
      rigid_statuses[k] = diffphys::step(rigid_model, theta, *rigid_state, window_controls.subspan(k * actuators, actuators),
                                         rigid_next, rigid_workspace);
      std::swap(*rigid_state, rigid_next);
    }
    return *rigid_state;
  }

  Model rigid_model;
  Params rigid_params;
  Workspace rigid_workspace;
  State rigid_next, rigid_window_start;
  State* rigid_state = nullptr;                 // the simulator's, during a coupled step
  std::span<const double> window_controls;      // this world step's rigid controls
  std::vector<StepStatus> rigid_statuses;       // (substeps) of the last world step
  std::size_t actuators = 0;

  soft::SoftParams soft_params;
  std::optional<soft::SoftWorkspace> soft_workspace;
  soft::SoftState soft_next, soft_previous;     // x_{t+1} being written; x_{t−1} (two-way contact)
  soft::SoftParams step_params, previous_step_params;  // soft θ with this and the last step's poses
  Params window_params;                          // two-way: rigid θ with the reactions
  coupled::CoupledStepScratch scratch;
  soft::SoftStepStatus soft_status;

  std::vector<double> default_controls;         // (control_count) the scene's
};

WorldSimulator::WorldSimulator(const World& world, WorldParams params, WorldState initial)
    : world_(world), params_(std::move(params)), state_(std::move(initial)) {
  if (params_.values.size() != static_cast<std::size_t>(world_.layout().param_count))
    throw Error(message("world simulator: expected ", world_.layout().param_count, " parameter values, got ", params_.values.size()));
  engine_ = std::make_unique<Engine>(world_, params_);
  Engine& engine = *engine_;
  if (world_.rigid) {
    validate_state(engine.rigid_model, state_.rigid);
    engine.rigid_next = state_.rigid;
    engine.rigid_window_start = state_.rigid;
  }
  if (world_.soft) {
    soft::prepare_soft_state(world_.soft->model, state_.soft);
    engine.soft_next = state_.soft;
    engine.soft_previous = state_.soft;
    engine.step_params = engine.soft_params;
    engine.previous_step_params = engine.soft_params;
  }
  if (world_.rigid && world_.soft) {
    engine.window_params = engine.rigid_params;
    const coupled::CoupledStepModel model{engine.rigid_model, world_.soft->model, world_.coupling.frame_bodies,
                                          world_.coupling.substeps, world_.coupling.two_way};
    coupled::check_initial_coupled_state(model, engine.soft_params, state_.rigid, state_.soft);
  }
}

WorldSimulator::~WorldSimulator() = default;

std::span<const Contact> WorldSimulator::rigid_contacts() const {
  return world_.rigid ? engine_->rigid_workspace.contacts() : std::span<const Contact>();
}

WorldStepStatus WorldSimulator::step(std::span<const double> controls) {
  const WorldLayout& layout = world_.layout();
  if (!controls.empty() && controls.size() != static_cast<std::size_t>(layout.control_count))
    throw Error(message("world simulator: expected ", layout.control_count, " control values (", world_.kind(),
                        " world) or none, got ", controls.size()));
  Engine& engine = *engine_;
  const std::span<const double> all = controls.empty() ? std::span<const double>(engine.default_controls) : controls;
  const auto rigid_block = static_cast<std::size_t>(layout.soft_control_offset);
  // No soft forces unless given (an empty span, as CoupledRollout and SoftRollout take none).
  const std::span<const double> forces = controls.empty() ? std::span<const double>() : controls.subspan(rigid_block);
  WorldStepStatus status;
  if (world_.rigid && world_.soft) {
    engine.rigid_window_start = state_.rigid;
    engine.rigid_state = &state_.rigid;
    engine.window_controls = all.first(rigid_block);
    const coupled::CoupledStepModel model{engine.rigid_model, world_.soft->model, world_.coupling.frame_bodies,
                                          world_.coupling.substeps, world_.coupling.two_way};
    const bool first = steps_ == 0;
    const coupled::CoupledStepInputs in{engine.rigid_params, engine.soft_params, engine.rigid_window_start, state_.soft, forces,
                                        first ? nullptr : &engine.previous_step_params,
                                        first ? nullptr : &engine.soft_previous};
    engine.soft_status = coupled::coupled_step(model, in, engine, engine.window_params, engine.step_params, engine.soft_next,
                                               *engine.soft_workspace, engine.scratch);
    std::swap(engine.soft_previous, state_.soft);  // x_t becomes x_{t−1}
    std::swap(state_.soft, engine.soft_next);
    std::swap(engine.previous_step_params, engine.step_params);  // θ_{t+1} is the next step's `previous`
    status.rigid = engine.rigid_statuses;
    status.soft = &engine.soft_status;
    state_.time = state_.soft.time;
  } else if (world_.rigid) {
    engine.rigid_statuses[0] = diffphys::step(engine.rigid_model, engine.rigid_params, state_.rigid, all.first(rigid_block),
                                              engine.rigid_next, engine.rigid_workspace);
    std::swap(state_.rigid, engine.rigid_next);
    status.rigid = engine.rigid_statuses;
    state_.time = state_.rigid.time;
  } else {
    engine.soft_status =
        soft::soft_step(world_.soft->model, engine.soft_params, state_.soft, forces, engine.soft_next, *engine.soft_workspace);
    std::swap(state_.soft, engine.soft_next);
    status.soft = &engine.soft_status;
    state_.time = state_.soft.time;
  }
  ++steps_;
  return status;
}

}  // namespace diffphys
