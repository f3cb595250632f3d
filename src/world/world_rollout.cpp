// world/world_rollout.cpp — WorldRollout (diffphys/world.hpp): one rollout and one gradient for
// any world, through the world's schedule (world/schedule.cpp: each part's step and step VJP
// in order, with the couplings between them, the tape and its reverse owned once for all
// parts). A world of one part takes that part's own rollout's steps and gradients bit for bit
// (tests/world_test.cpp); this file checks the world's inputs and reports in its layouts.
#include "diffphys/world.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "world/part_kind.hpp"
#include "world/schedule.hpp"

namespace diffphys {


// The engine: the world's schedule (it refers to the WorldRollout's parameters, which its
// parts read when a run begins).
struct WorldRollout::Engine {
  std::unique_ptr<world::Schedule> schedule;
};

WorldRollout::WorldRollout(const World& world, const WorldParams& params, WorldRolloutOptions options)
    : world_(world), params_(params), options_(options), engine_(std::make_unique<Engine>()) {
  engine_->schedule = std::make_unique<world::Schedule>(world_, params_, options_.rollout);
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
  engine_->schedule->run(initial, controls, steps, nullptr);
  steps_ = steps;
  final_state_ = engine_->schedule->final_state();
}

void WorldRollout::refresh_params() {
  const WorldLayout& layout = world_.layout();
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
}

void WorldRollout::run(const WorldState& initial, WorldController& controller, int steps) {
  if (steps < 0) throw Error(message("world rollout: steps must be ≥ 0, got ", steps));
  refresh_params();
  engine_->schedule->run(initial, {}, steps, &controller);
  steps_ = steps;
  final_state_ = engine_->schedule->final_state();
}

std::vector<double> WorldRollout::controls() const {
  const std::span<const double> used = engine_->schedule->controls();
  return {used.begin(), used.end()};
}

WorldState WorldRollout::state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("world rollout: step ", step, " outside [0, ", steps_, "]"));
  return engine_->schedule->state(step);
}

WorldStepStatus WorldRollout::status(int step) const {
  if (step < 0 || step >= steps_) throw Error(message("world rollout: step ", step, " outside [0, ", steps_, ")"));
  return engine_->schedule->status(step);
}

bool WorldStepStatus::converged() const {
  const std::span<const world::PartKind> kinds = world::part_kinds();
  return std::all_of(kinds.begin(), kinds.end(), [&](const world::PartKind& kind) { return kind.converged(*this); });
}

bool WorldRollout::statuses_kept() const { return engine_->schedule->statuses_kept(); }
bool WorldRollout::converged() const { return engine_->schedule->converged(); }
int WorldRollout::checkpoint_interval() const { return engine_->schedule->checkpoint_interval(); }
std::size_t WorldRollout::stored_state_bytes() const { return engine_->schedule->stored_state_bytes(); }
std::size_t WorldRollout::stored_record_bytes() const { return engine_->schedule->stored_record_bytes(); }

WorldGradients WorldRollout::backward(const WorldLossGradient& loss_gradient) const {
  WorldGradients result = engine_->schedule->backward(loss_gradient, options_.rollout.parameter_gradients);
  for (const NamedSlice& slice : world_.collider_geometry()) result.not_differentiable.push_back(slice.name);
  return result;
}

}  // namespace diffphys
