// world/rigid_part.hpp — the rigid bodies as a part of the world (world/part.hpp): a world step
// is the coupling's `substeps` rigid steps (rigid/step, adjoint/step_vjp) with one step θ, the
// scene's θ plus what couplings add (two-way: the soft bodies' reactions as body forces).
#pragma once

#include <cstdint>
#include <vector>

#include "adjoint/rollout_health.hpp"
#include "adjoint/step_vjp.hpp"
#include "world/part.hpp"

namespace diffphys::world {

class RigidPart final : public Part {
 public:
  explicit RigidPart(const World& world);

  const Model& model() const { return model_; }
  // The step θ of record `slot` (couplings add their terms to it).
  Params& step_params(int slot) { return record(slot).params; }
  const Params& step_params(int slot) const { return record(slot).params; }
  // The contacts of the last substep taken (none before the first step).
  std::span<const Contact> contacts() const { return last_workspace_->contacts(); }

  std::string_view kind() const override { return "rigid"; }
  int tangent_offset() const override { return 0; }
  int tangent_size() const override { return kStateTangentPerBody * model_.body_count(); }
  void begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) override;
  std::size_t log_bytes_per_step() const override;
  void reserve_records(int slots) override;
  void release_records() override;
  std::size_t record_bytes(int slot) const override;
  std::size_t state_bytes(const WorldState& state) const override;
  void configure(bool coupled, const RolloutOptions& options) override {
    coupled_ = coupled;
    keep_step_workspaces_ = options.keep_step_workspaces;
  }
  void reset_step_params(int slot) override;
  void step(const StepInputs& in, int slot, int status_step) override;
  double time(const WorldState& state) const override { return state.rigid.time; }
  std::span<double> step_vjp(const StepAdjoints& out, int step, int slot) override;
  void add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const override;
  void begin_backward(int steps, WorldGradients& result) override;
  void mask_state_adjoint(std::span<double> world_tangent) const override;
  void note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) override;
  void note_non_finite(int step, const char* stage, WorldGradients& result) override;
  void finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const override;
  void fill_status(int step, WorldStepStatus& status) const override;
  bool converged() const override { return forward_health_.converged(); }

 private:
  // One world step's record: its θ (when coupled: couplings write it), each substep's
  // solution (λ, v⁺: the backward pass replays the substep with it in place of its velocity
  // solve, as the rigid Rollout does; docs/gradients.md, "Step records") — or, where no replay
  // skips the solve (joint rows only, joint coordinates) or keep_step_workspaces asks, each
  // substep's whole Workspace, which the backward pass reverses as it is — and the states
  // between substeps.
  struct Record {
    Params params;
    std::vector<Workspace> workspaces;      // (substeps) when workspace_records_
    std::vector<double> solutions;          // each substep's λ then v⁺, in order
    std::vector<std::size_t> solution_end;  // (substeps) where each substep's ends in `solutions`
    std::vector<State> between;             // (substeps − 1)
  };
  // The step θ of a record: its own when coupled, else the world's.
  const Params& step_theta(const Record& r) const { return coupled_ ? r.params : params_; }
  Record& record(int slot) { return slot < 0 ? scratch_ : records_[static_cast<std::size_t>(slot)]; }
  const Record& record(int slot) const { return slot < 0 ? scratch_ : records_[static_cast<std::size_t>(slot)]; }

  Model model_;  // the world's; PGS warm start off in a rollout: recomputed steps repeat the forward bits
  bool scene_warm_start_ = false;
  int substeps_ = 1;
  std::size_t actuators_ = 0, control_size_ = 0;
  std::vector<double> default_controls_;  // (substeps × actuators) the scene's, held
  Params params_;                         // the world's rigid θ of this run
  bool coupled_ = true;                   // a coupling writes the step θ (configure)
  bool keep_step_workspaces_ = false;     // RolloutOptions::keep_step_workspaces
  // This run's kept records hold Workspaces, decided at its first kept step (as Rollout).
  bool workspace_records_ = false, records_decided_ = false;
  std::vector<Record> records_;
  Record scratch_;
  Workspace workspace_;  // every substep steps in it, but those whose record keeps a Workspace
  const Workspace* last_workspace_ = &workspace_;
  State replayed_;       // a replayed substep's end state (the recorded one, bit for bit)
  bool logs_kept_ = true;
  std::vector<StepStatus> statuses_;  // (steps × substeps) of the last run; (substeps), the latest, when logs are not kept
  adjoint::ForwardHealthLog forward_health_;  // the run's substeps, as the rigid Rollout counts them
  std::vector<double> running_, previous_, param_bar_;
  adjoint::StepVjpWorkspace vjp_;
  WorldGradients* result_ = nullptr;  // the backward pass under way
};

}  // namespace diffphys::world
