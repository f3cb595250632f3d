// fluid/fluid_part.hpp — the fluid as a part of the world (world/part.hpp): a world step is
// one fluid step (fluid/fluid_step.cpp) with the world's fluid θ and the per-cell forces of
// the world's controls ("fluid/force"); its reverse is the step's exact adjoint
// (fluid/fluid_step_vjp.cpp) from the step's record (u*, its input, the advected scalars).
#pragma once

#include <vector>

#include "world/part.hpp"

namespace diffphys::world {

class FluidPart final : public Part {
 public:
  explicit FluidPart(const World& world);
  FluidPart(const FluidPart&) = delete;
  FluidPart& operator=(const FluidPart&) = delete;

  std::string_view kind() const override { return "fluid"; }
  int tangent_offset() const override { return tangent_offset_; }
  int tangent_size() const override;
  void begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) override;
  std::size_t log_bytes_per_step() const override;
  void reserve_records(int slots) override;
  void release_records() override;
  std::size_t record_bytes(int slot) const override;
  std::size_t state_bytes(const WorldState& state) const override;
  void reset_step_params(int slot) override { (void)slot; }
  void step(const StepInputs& in, int slot, int status_step) override;
  double time(const WorldState& state) const override { return state.fluid.time; }
  std::span<double> step_vjp(const StepAdjoints& out, int step, int slot) override;
  void add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const override;
  void begin_backward(int steps, WorldGradients& result) override;
  void mask_state_adjoint(std::span<double> world_tangent) const override;
  void note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) override;
  void note_non_finite(int step, const char* stage, WorldGradients& result) override;
  void finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const override;
  void fill_status(int step, WorldStepStatus& status) const override;
  bool converged() const override { return true; }  // a step that fails its tolerance ends the run with an Error

 private:
  std::span<double> record(int slot);
  std::span<const double> forces(std::span<const double> controls) const;

  fluid::FluidModel model_;
  fluid::FluidWorkspace workspace_;  // built for model_
  int tangent_offset_ = 0, param_offset_ = 0, control_offset_ = 0;
  fluid::FluidParams params_;                // the world's fluid θ of this run (no coupling changes it)
  std::vector<std::vector<double>> records_;  // each kept step's record (fluid/fluid_step.hpp)
  std::vector<double> scratch_record_;
  bool logs_kept_ = true;
  std::vector<fluid::FluidStepStatus> statuses_;  // (steps) of the last run; (1), the latest, when logs are not kept
  std::vector<int> wall_faces_;                   // face indices on the walls: not state, never differentiated
  WorldGradients* result_ = nullptr;              // the backward pass under way
};

}  // namespace diffphys::world
