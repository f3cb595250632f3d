// world/world_simulator.cpp — WorldSimulator (diffphys/world_simulator.hpp): one world step at
// a time, no history, through the world's schedule (world/schedule.cpp) — the steps
// WorldRollout takes, with the rigid scene's warm start (a simulation recomputes nothing).
// After its first steps (its buffers grown), step() allocates nothing.
#include "diffphys/world_simulator.hpp"

#include <utility>

#include "diffphys/error.hpp"
#include "world/schedule.hpp"

namespace diffphys {

struct WorldSimulator::Engine {
  std::unique_ptr<world::Schedule> schedule;
};

WorldSimulator::WorldSimulator(const World& world, WorldParams params, WorldState initial)
    : world_(world), params_(std::move(params)), state_(std::move(initial)), engine_(std::make_unique<Engine>()) {
  if (params_.values.size() != static_cast<std::size_t>(world_.layout().param_count))
    throw Error(message("world simulator: expected ", world_.layout().param_count, " parameter values, got ", params_.values.size()));
  engine_->schedule = std::make_unique<world::Schedule>(world_, params_);
  engine_->schedule->begin(state_);  // validates θ and the initial state, prepares it
}

WorldSimulator::~WorldSimulator() = default;

void WorldSimulator::set_state(WorldState state) {
  engine_->schedule->begin(state);  // validates it (and θ) as the constructor does
  state_ = std::move(state);
}

std::span<const Contact> WorldSimulator::rigid_contacts() const { return engine_->schedule->rigid_contacts(); }

WorldStepStatus WorldSimulator::step(std::span<const double> controls) {
  const WorldLayout& layout = world_.layout();
  if (!controls.empty() && controls.size() != static_cast<std::size_t>(layout.control_count))
    throw Error(message("world simulator: expected ", layout.control_count, " control values (", world_.kind(),
                        " world) or none, got ", controls.size()));
  const WorldStepStatus status = engine_->schedule->step(state_, controls);
  ++steps_;
  return status;
}

}  // namespace diffphys
