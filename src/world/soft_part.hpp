// world/soft_part.hpp — the soft bodies as a part of the world (world/part.hpp): a world step
// is one implicit soft step (soft/newton_solver.cpp) with a step θ, the scene's θ with what
// couplings set (the frames' poses from their rigid bodies); its reverse is the implicit
// function theorem at the minimiser (soft/soft_step_vjp.cpp), with the factor of ∇²Φ there
// that the step's record kept (refactorised only when the record was not kept).
#pragma once

#include <vector>

#include "soft/soft_step_vjp.hpp"
#include "world/part.hpp"

namespace diffphys::world {

class SoftPart final : public Part {
 public:
  explicit SoftPart(const World& world);
  SoftPart(const SoftPart&) = delete;
  SoftPart& operator=(const SoftPart&) = delete;

  const soft::SoftModel& model() const { return model_; }
  // The world's soft θ of this run, and the step θ of record `slot` (couplings set the frame poses).
  const soft::SoftParams& params() const { return params_; }
  soft::SoftParams& step_params(int slot) { return record(slot).params; }
  const soft::SoftParams& step_params(int slot) const { return record(slot).params; }
  soft::SoftWorkspace& workspace() { return workspace_; }
  int state_offset() const { return tangent_offset_; }  // x̄ of the nodes' positions, then velocities
  int param_offset() const { return param_offset_; }

  std::string_view kind() const override { return "soft"; }
  int tangent_offset() const override { return tangent_offset_; }
  int tangent_size() const override { return 2 * model_.dof_count(); }
  void begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) override;
  std::size_t log_bytes_per_step() const override;
  void reserve_records(int slots) override;
  void release_records() override;
  std::size_t record_bytes(int slot) const override;
  std::size_t state_bytes(const WorldState& state) const override;
  void configure(bool coupled, const RolloutOptions& /*options*/) override { coupled_ = coupled; }
  void reset_step_params(int slot) override;
  void step(const StepInputs& in, int slot, int status_step) override;
  double time(const WorldState& state) const override { return state.soft.time; }
  std::span<double> step_vjp(const StepAdjoints& out, int step, int slot) override;
  void add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const override;
  void begin_backward(int steps, WorldGradients& result) override;
  void note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) override;
  void note_non_finite(int step, const char* stage, WorldGradients& result) override;
  void finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const override;
  void fill_status(int step, WorldStepStatus& status) const override;
  bool converged() const override { return converged_; }

 private:
  // A kept step's record: its θ (when coupled: couplings write it) and ∇²Φ's factor at its
  // minimiser, which the backward pass loads instead of refactorising (as SoftRollout keeps
  // its steps' factors; soft/soft_rollout.cpp). The scratch record keeps no factor.
  struct Record {
    soft::SoftParams params;
    std::vector<double> factor;
    bool definite = true;
  };
  // The step θ of `slot`: its record's when coupled, else the world's.
  const soft::SoftParams& step_theta(int slot) const { return coupled_ ? record(slot).params : params_; }
  Record& record(int slot) { return slot < 0 ? scratch_ : records_[static_cast<std::size_t>(slot)]; }
  const Record& record(int slot) const { return slot < 0 ? scratch_ : records_[static_cast<std::size_t>(slot)]; }
  std::span<const double> forces(std::span<const double> controls) const;

  soft::SoftModel model_;
  soft::SoftWorkspace workspace_;  // refers to model_
  int tangent_offset_ = 0, param_offset_ = 0, control_offset_ = 0;
  soft::SoftParams params_;                  // the world's soft θ of this run
  bool coupled_ = true;                      // a coupling writes the step θ (configure)
  std::vector<Record> records_;
  Record scratch_;
  bool logs_kept_ = true, converged_ = true;
  std::vector<soft::SoftStepStatus> statuses_;  // (steps) of the last run; (1), the latest, when logs are not kept
  std::vector<int> non_converged_steps_;        // of the last run, when logs are kept
  std::vector<double> start_positions_;         // where Newton starts (3 nnode)
  std::vector<double> adjoint_x_, adjoint_v_, param_bar_;
  soft::SoftStepVjpScratch vjp_;
  WorldGradients* result_ = nullptr;  // the backward pass under way
};

}  // namespace diffphys::world
