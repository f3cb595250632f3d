// world/world_simulator.cpp — WorldSimulator (diffphys/world_simulator.hpp): one world step
// at a time, no history. A rigid-only or soft-only world is stepped by that part's step
// function (rigid step() with the scene's warm start, soft_step()); a world of several parts,
// or a fluid, by the world's schedule (world/schedule.cpp), the same steps WorldRollout takes.
// Buffers are sized once here so that step() allocates nothing.
#include "diffphys/world_simulator.hpp"

#include <algorithm>
#include <utility>

#include "diffphys/error.hpp"
#include "rigid/articulated.hpp"
#include "world/part_kind.hpp"
#include "world/schedule.hpp"

namespace diffphys {

// A one-part world's engine and scratch, or the schedule of a world of several parts.
struct WorldSimulator::Engine {
  Engine(const World& world, const WorldParams& params)
      : soft_workspace(world.soft && !world.rigid ? std::make_optional<soft::SoftWorkspace>(world.soft->model) : std::nullopt) {
    if (world::runs_on_schedule(world)) {  // several parts, or a kind stepped by the schedule only (a fluid)
      schedule = std::make_unique<world::Schedule>(world, params);
      return;
    }
    if (world.rigid) {
      rigid_model = world.rigid->model;
      rigid_params = diffphys::rigid_params(world, params);
      validate_params(rigid_model, rigid_params);
      if (rigid_model.solver.coordinates == Coordinates::Reduced) rigid::validate_reduced_coordinates(rigid_model);
      rigid_statuses.assign(1, StepStatus{});
    }
    if (world.soft) {
      soft_params = diffphys::soft_params(world, params);
      soft::validate_soft_params(world.soft->model, soft_params);
    }
    default_controls = world.default_controls();
  }

  std::unique_ptr<world::Schedule> schedule;

  Model rigid_model;
  Params rigid_params;
  Workspace rigid_workspace;
  State rigid_next;
  std::vector<StepStatus> rigid_statuses;  // (1) of the last world step

  soft::SoftParams soft_params;
  std::optional<soft::SoftWorkspace> soft_workspace;
  soft::SoftState soft_next;
  soft::SoftStepStatus soft_status;

  std::vector<double> default_controls;  // (control_count) the scene's
};

WorldSimulator::WorldSimulator(const World& world, WorldParams params, WorldState initial)
    : world_(world), params_(std::move(params)), state_(std::move(initial)) {
  if (params_.values.size() != static_cast<std::size_t>(world_.layout().param_count))
    throw Error(message("world simulator: expected ", world_.layout().param_count, " parameter values, got ", params_.values.size()));
  engine_ = std::make_unique<Engine>(world_, params_);
  Engine& engine = *engine_;
  if (engine.schedule) {
    engine.schedule->begin(state_);
  } else if (world_.rigid) {
    validate_state(engine.rigid_model, state_.rigid);
    engine.rigid_next = state_.rigid;
  } else {
    soft::prepare_soft_state(world_.soft->model, state_.soft);
    engine.soft_next = state_.soft;
  }
}

WorldSimulator::~WorldSimulator() = default;

std::span<const Contact> WorldSimulator::rigid_contacts() const {
  if (engine_->schedule) return engine_->schedule->rigid_contacts();
  return world_.rigid ? engine_->rigid_workspace.contacts() : std::span<const Contact>();
}

WorldStepStatus WorldSimulator::step(std::span<const double> controls) {
  const WorldLayout& layout = world_.layout();
  if (!controls.empty() && controls.size() != static_cast<std::size_t>(layout.control_count))
    throw Error(message("world simulator: expected ", layout.control_count, " control values (", world_.kind(),
                        " world) or none, got ", controls.size()));
  Engine& engine = *engine_;
  WorldStepStatus status;
  if (engine.schedule) {
    status = engine.schedule->step(state_, controls);
    ++steps_;
    return status;
  }
  const std::span<const double> all = controls.empty() ? std::span<const double>(engine.default_controls) : controls;
  const auto rigid_block = static_cast<std::size_t>(layout.soft_control_offset);
  // No soft forces unless given (an empty span, as SoftRollout takes none).
  const std::span<const double> forces = controls.empty() ? std::span<const double>() : controls.subspan(rigid_block);
  if (world_.rigid) {
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
