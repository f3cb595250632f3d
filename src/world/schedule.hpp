// world/schedule.hpp — the world's schedule: steps every part of a world in order with the
// couplings between them (world/part.hpp), keeps the tape of a rollout (checkpoints within
// the memory budget, step records when they fit) and reverses it, owning once for all parts
// the loss, the closed-loop controller, gradient decay and clipping and the per-step norms.
// WorldRollout runs it for every world, and WorldSimulator steps it; its parts and the
// couplings between them are the registries' (world/part_kind.hpp, world/coupling_kind.hpp).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "diffphys/world.hpp"
#include "world/part.hpp"

namespace diffphys::world {

class Schedule {
 public:
  // The world and the parameters are referenced and must outlive the schedule.
  Schedule(const World& world, const WorldParams& params, RolloutOptions options = {});
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // Simulation (no tape): begin() checks θ and prepares `state`; then each step() takes
  // `state` one world step on, in place, and returns the parts' statuses of that step.
  void begin(WorldState& state);
  WorldStepStatus step(WorldState& state, std::span<const double> controls);
  // The rigid part's contacts of the last substep simulated (empty without a rigid part).
  std::span<const Contact> rigid_contacts() const;

  // A rollout of `steps` world steps: controls (steps × control_count) or empty (the scene's
  // defaults, no soft forces), or a controller's (then `controls` must be empty).
  void run(const WorldState& initial, std::span<const double> controls, int steps, WorldController* controller);
  int steps() const { return steps_; }
  WorldState state(int step) const;  // from storage or recomputed from the nearest checkpoint
  const WorldState& final_state() const { return final_state_; }
  // The parts' statuses of world step `step`: from the per-step logs, or when the budget did
  // not keep them, recomputed from the nearest checkpoint (valid until the next status() or run()).
  WorldStepStatus status(int step) const;
  bool converged() const;  // every step of every part of the last run
  bool statuses_kept() const { return logs_kept_; }
  std::span<const double> controls() const { return controls_; }  // as used (steps × control_count)
  int checkpoint_interval() const { return interval_; }
  std::size_t stored_state_bytes() const;
  std::size_t stored_record_bytes() const { return record_bytes_; }

  WorldGradients backward(const WorldLossGradient& loss_gradient, bool parameter_gradients) const;

 private:
  const World& world_;
  const WorldParams& params_;
  RolloutOptions options_;
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<std::unique_ptr<Coupling>> couplings_;
  bool lagged_ = false;  // some coupling reads x_{t−1}

  // The tape of the last run.
  int steps_ = 0;
  int interval_ = 1;
  bool controls_given_ = false;  // else the parts' defaults (no soft forces)
  std::vector<double> controls_;
  WorldController* controller_ = nullptr;
  std::vector<WorldState> checkpoints_;           // x_0, x_k, x_2k, ...
  std::vector<WorldState> checkpoint_previous_;   // lagged: x_{−1} (empty), x_{k−1}, ...
  bool logs_kept_ = true;                          // the parts' per-step statuses and norms
  std::size_t tape_budget_ = 0;                   // the budget less the per-step logs: states and records
  bool records_kept_ = false;                     // every step's records, slot t
  std::size_t record_bytes_ = 0, largest_record_bytes_ = 0;
  WorldState final_state_;
  WorldState simulated_previous_;  // simulation: x_{t−1}
  bool simulated_any_ = false;
  WorldState scratch_after_;

  std::span<const double> step_controls(int step) const;
  void begin_parts(WorldState& initial, int steps, bool keep_logs);
  // x_t (and x_{t−1}) recomputed from the checkpoint before t.
  void recompute(int t, WorldState& current, WorldState& previous) const;
  // One world step before → after, the parts' records in `slot`, the status as `status_step`
  // says (world/part.hpp: the run's step t, kNoStatus or kStatusOnly).
  void forward_step(const WorldState& before, const WorldState* previous, WorldState& after,
                    std::span<const double> controls, int slot, int status_step) const;
  std::size_t state_bytes(const WorldState& state) const;
  std::size_t record_bytes(int slot) const;
};

}  // namespace diffphys::world
