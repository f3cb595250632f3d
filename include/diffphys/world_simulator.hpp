// diffphys/world_simulator.hpp — steps any World one world step at a time and keeps no
// history: the forward engine behind `diffphys simulate` (10⁶ steps in constant memory),
// where WorldRollout (world.hpp) keeps the tape a backward pass needs.
//
//   World world = load_world("examples/soft/cloth_on_pendulum.json");
//   WorldSimulator simulator(world, world.default_params(), world.initial_state());
//   for (int t = 0; t < T; ++t) {
//     const WorldStepStatus status = simulator.step();   // the scene's default controls
//     if (!status.converged()) ...
//   }
//   simulator.state().soft.positions; simulator.state().rigid.position;
//
// Every world is stepped by the world's schedule, as WorldRollout steps it
// (src/world/schedule.hpp: for a coupled world the rigid substeps with the two-way reactions,
// then the soft step with the frame poses), except that a simulation keeps the rigid scene's
// warm start (PGS only; a rollout turns it off so that recomputed steps repeat their bits).
// So a simulation and a WorldRollout of the same scene give the same bits where the scene has
// no PGS warm start (tested), and a one-part world's steps are its own engine's (Simulator,
// soft_step).
// After its first steps (its buffers grow to size), step() allocates nothing
// (tests/allocation_test.cpp).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/world.hpp"

namespace diffphys {

class WorldSimulator {
 public:
  // Copies the world's models and the parameters; validates both and the initial state
  // (throws Error naming the item and the value).
  WorldSimulator(const World& world, WorldParams params, WorldState initial);
  WorldSimulator(const WorldSimulator&) = delete;
  WorldSimulator& operator=(const WorldSimulator&) = delete;
  ~WorldSimulator();

  const World& world() const { return world_; }
  const WorldParams& params() const { return params_; }
  const WorldState& state() const { return state_; }
  long long steps() const { return steps_; }  // world steps taken

  // One world step. controls: layout().control_count values (the rigid actuators' for every
  // substep, then the soft forces) or empty for the scene's default controls and no forces.
  // Throws Error for a wrong size. The status refers to this simulator's storage and holds
  // until the next step().
  WorldStepStatus step(std::span<const double> controls = {});

  // Replaces the current state, checked as the initial state is (sizes, finite entries, unit
  // quaternions; throws Error naming the item): how a program drives a kinematic body between
  // steps, as Simulator::set_state. The steps taken are kept; a coupling that reads the state a
  // step back starts again as at the first step.
  void set_state(WorldState state);

  // The rigid part's contacts of the world step's last substep (empty without a rigid part).
  std::span<const Contact> rigid_contacts() const;

 private:
  struct Engine;
  World world_;
  WorldParams params_;
  WorldState state_;
  long long steps_ = 0;
  std::unique_ptr<Engine> engine_;
};

}  // namespace diffphys
