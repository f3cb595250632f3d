// world/rigid_part.cpp — RigidPart (rigid_part.hpp): the rigid bodies' world step (the
// coupling's substeps with one step θ) and its reverse, substep by substep: each replayed from
// its recorded solution, then reversed through adjoint::step_vjp, for the world's schedule.
#include "world/rigid_part.hpp"

#include <algorithm>

#include "adjoint/rollout_health.hpp"
#include "math/finite.hpp"
#include "rigid/articulated.hpp"
#include "rigid/step_solution.hpp"
#include "rigid/step_workspace.hpp"

namespace diffphys::world {
namespace {

std::size_t rigid_state_bytes(const State& state) {
  return state.position.size() * (sizeof(Vec3) * 3 + sizeof(Quat)) + sizeof(State);
}

}  // namespace

RigidPart::RigidPart(const World& world)
    : model_(world.rigid->model),
      substeps_(world.rigid_steps_per_step()),
      actuators_(static_cast<std::size_t>(world.rigid->model.actuator_count())),
      control_size_(static_cast<std::size_t>(world.layout().soft_control_offset)) {
  // As Rollout: a step recomputed in the backward pass must repeat the forward one's bits
  // (begin() restores the scene's warm start for a simulation, which recomputes nothing).
  scene_warm_start_ = model_.solver.warm_start;
  model_.solver.warm_start = false;
  const std::vector<double> defaults = world.default_controls();
  default_controls_.assign(defaults.begin(), defaults.begin() + static_cast<std::ptrdiff_t>(control_size_));
}

void RigidPart::begin(const WorldParams& params, WorldState& initial, int steps, bool keep_logs) {
  params_.values.assign(params.values.begin(), params.values.begin() + model_.param_count());
  validate_params(model_, params_);
  if (model_.solver.coordinates == Coordinates::Reduced) rigid::validate_reduced_coordinates(model_);
  validate_state(model_, initial.rigid);
  logs_kept_ = keep_logs;
  records_decided_ = workspace_records_ = false;
  model_.solver.warm_start = steps == 0 && scene_warm_start_;  // 0 steps: a simulation (Schedule::begin)
  const auto count = static_cast<std::size_t>((keep_logs ? std::max(steps, 1) : 1) * substeps_);
  statuses_.assign(count, StepStatus{});
  forward_health_.start(static_cast<std::size_t>(steps * substeps_), keep_logs);
}

// A substep's status, and in the backward pass its stage gains and the step's |x̄_t|; a
// contact change (4 bytes) is counted with the status.
std::size_t RigidPart::log_bytes_per_step() const {
  const std::size_t per_substep = sizeof(StepStatus) + 4 + (model_.solver.coordinates == Coordinates::Reduced ? 0 : 24);
  return static_cast<std::size_t>(substeps_) * per_substep + sizeof(double);
}

void RigidPart::reserve_records(int slots) {
  if (records_.size() < static_cast<std::size_t>(slots)) {
    records_.resize(static_cast<std::size_t>(slots));
    last_workspace_ = &workspace_;  // the records moved
  }
}

void RigidPart::release_records() {
  std::vector<Record>().swap(records_);
  last_workspace_ = &workspace_;
}

std::size_t RigidPart::record_bytes(int slot) const {
  const Record& r = record(slot);
  std::size_t bytes = sizeof(Record) + (r.params.values.capacity() + r.solutions.capacity()) * sizeof(double) +
                      r.solution_end.capacity() * sizeof(std::size_t);
  for (const State& state : r.between) bytes += rigid_state_bytes(state);
  for (const Workspace& workspace : r.workspaces) bytes += workspace_bytes(workspace.impl());
  // The scratch record (a step not kept) stands for what a kept one would hold.
  if (slot < 0 && workspace_records_) bytes += static_cast<std::size_t>(substeps_) * workspace_bytes(workspace_.impl());
  return bytes;
}

std::size_t RigidPart::state_bytes(const WorldState& state) const { return rigid_state_bytes(state.rigid); }

void RigidPart::reset_step_params(int slot) {
  if (!coupled_) return;  // the step θ is the world's (step_theta)
  Params& params = record(slot).params;
  params.values.assign(params_.values.begin(), params_.values.end());
}

void RigidPart::step(const StepInputs& in, int slot, int status_step) {
  Record& r = record(slot);
  const auto substeps = static_cast<std::size_t>(substeps_);
  if (r.solution_end.size() != substeps) r.solution_end.resize(substeps);
  if (r.between.size() != substeps - 1) r.between.resize(substeps - 1);
  r.solutions.clear();  // keeps its capacity: later runs do not allocate
  const std::span<const double> controls =
      in.controls.empty() ? std::span<const double>(default_controls_) : in.controls.first(control_size_);
  const State* current = &in.before.rigid;
  const bool kept = slot >= 0;
  for (std::size_t k = 0; k < substeps; ++k) {
    State& next = k + 1 == substeps ? in.after.rigid : r.between[k];
    if (next.position.size() != current->position.size()) next = *current;
    if (kept && workspace_records_ && r.workspaces.size() != substeps) r.workspaces.resize(substeps);
    Workspace* workspace = kept && workspace_records_ ? &r.workspaces[k] : &workspace_;
    const StepStatus status =
        diffphys::step(model_, step_theta(r), *current, controls.subspan(k * actuators_, actuators_), next, *workspace);
    if (!records_decided_) {
      // The run's first step decides, as Rollout does: a problem of joint rows only (its solve
      // also factorises the joint projection) and joint coordinates are never replayed, so
      // their records are Workspaces — a kept step's the one just written.
      records_decided_ = true;
      workspace_records_ = keep_step_workspaces_ || workspace->impl().joint_factorization_valid ||
                           model_.solver.coordinates == Coordinates::Reduced;
      if (workspace_records_ && kept) {
        r.workspaces.resize(substeps);
        std::swap(r.workspaces[k], workspace_);
        workspace = &r.workspaces[k];
      }
    }
    last_workspace_ = workspace;
    r.solution_end[k] = kept && workspace_records_ ? r.solutions.size() : rigid::append_solution(workspace->impl(), r.solutions);
    if (status_step >= 0 || status_step == kStatusOnly) {
      const int step_index = logs_kept_ && status_step >= 0 ? status_step : 0;
      statuses_[static_cast<std::size_t>(step_index) * substeps + k] = status;
    }
    if (status_step >= 0)
      forward_health_.note(status_step * substeps_ + static_cast<int>(k), status,
                           adjoint::contact_signature(workspace->contacts()));
    current = &next;
  }
}

std::span<double> RigidPart::step_vjp(const StepAdjoints& out, int step, int slot) {
  Record& r = record(slot);
  const bool from_workspaces = slot >= 0 && workspace_records_ && r.workspaces.size() == static_cast<std::size_t>(substeps_);
  const auto width = static_cast<std::size_t>(tangent_size());
  const auto substeps = static_cast<std::size_t>(substeps_);
  running_.assign(out.after_bar.begin(), out.after_bar.begin() + static_cast<std::ptrdiff_t>(width));
  previous_.resize(width);
  const Params& theta = step_theta(r);
  // Uncoupled, θ̄ goes straight into the world's (its first slice): configure.
  if (coupled_) param_bar_.assign(static_cast<std::size_t>(model_.param_count()), 0.0);
  const std::span<double> theta_bar =
      coupled_ ? std::span<double>(param_bar_) : out.params_bar.first(static_cast<std::size_t>(model_.param_count()));
  for (std::size_t k = substeps; k-- > 0;) {
    const State& start = k == 0 ? out.before.rigid : r.between[k - 1];
    const State& end = k + 1 == substeps ? out.after.rigid : r.between[k];
    const std::span<const double> controls = out.controls.subspan(k * actuators_, actuators_);
    // The substep's kept Workspace, or substep k again with its recorded solution in place of
    // the solve (joint-only problems and joint coordinates solve again: their steps take no
    // replay), for its record.
    Workspace& workspace = from_workspaces ? r.workspaces[k] : workspace_;
    if (!from_workspaces) {
      const std::size_t first = k == 0 ? 0 : r.solution_end[k - 1];
      const std::span<const double> stored(r.solutions.data() + first, r.solution_end[k] - first);
      rigid::set_replay(workspace_.impl(), stored, static_cast<std::size_t>(6 * model_.body_count()));
      if (replayed_.position.size() != start.position.size()) replayed_ = start;
      diffphys::step(model_, theta, start, controls, replayed_, workspace_);
    }
    std::fill(previous_.begin(), previous_.end(), 0.0);
    adjoint::step_vjp(model_, theta, start, controls, workspace, end, running_, previous_,
                      out.controls_bar.subspan(k * actuators_, actuators_), theta_bar, vjp_);
    if (!all_finite(previous_) && result_ != nullptr)
      note_non_finite(step, vjp_.non_finite_stage.empty() ? "step" : vjp_.non_finite_stage.c_str(), *result_);
    if (result_ != nullptr && logs_kept_ && model_.solver.coordinates != Coordinates::Reduced)  // per rigid step
      result_->rigid_health.stage_gain[static_cast<std::size_t>(step) * substeps + k] =
          adjoint::backward_stage_gain(running_, vjp_.velocity_adjoint, vjp_.free_velocity_adjoint, previous_);
    if (vjp_.lcp.used_sparse && result_ != nullptr)
      result_->rigid_health.lcp_adjoint_residual = std::max(result_->rigid_health.lcp_adjoint_residual, vjp_.lcp.relative_residual);
    std::swap(running_, previous_);
  }
  for (std::size_t i = 0; i < width; ++i) out.before_bar[i] += running_[i];
  return coupled_ ? std::span<double>(param_bar_) : std::span<double>();
}

void RigidPart::add_param_adjoint(std::span<const double> step_param_bar, std::span<double> params_bar) const {
  for (std::size_t p = 0; p < step_param_bar.size(); ++p) params_bar[p] += step_param_bar[p];
}

void RigidPart::begin_backward(int steps, WorldGradients& result) {
  result_ = &result;
  result.rigid_health = GradientHealth{};
  result.rigid_health.per_step_kept = logs_kept_;
  if (!logs_kept_) return;
  result.rigid_health.state_gradient_norm.assign(static_cast<std::size_t>(steps) + 1, 0.0);
  if (model_.solver.coordinates != Coordinates::Reduced)
    result.rigid_health.stage_gain.assign(static_cast<std::size_t>(steps) * static_cast<std::size_t>(substeps_),
                                          {0.0, 0.0, 0.0});
}

void RigidPart::mask_state_adjoint(std::span<double> world_tangent) const {
  for (std::size_t b = 0; b < model_.bodies.size(); ++b)
    if (model_.bodies[b].type == BodyType::Static)
      std::fill_n(world_tangent.begin() + static_cast<std::ptrdiff_t>(kStateTangentPerBody * b), kStateTangentPerBody, 0.0);
}

void RigidPart::note_state_adjoint(int step, double norm, bool clipped, WorldGradients& result) {
  if (logs_kept_) result.rigid_health.state_gradient_norm[static_cast<std::size_t>(step)] = norm;
  result.rigid_health.largest_state_gradient_norm = std::max(result.rigid_health.largest_state_gradient_norm, norm);
  if (clipped) ++result.rigid_health.clipped_steps;
}

void RigidPart::note_non_finite(int step, const char* stage, WorldGradients& result) {
  GradientHealth& health = result.rigid_health;
  if (health.first_non_finite_step < 0) {
    health.first_non_finite_step = step;
    health.first_non_finite_stage = stage;
  }
}

void RigidPart::finish_backward(std::span<double> initial_adjoint, WorldGradients& result) const {
  (void)initial_adjoint;
  forward_health_.write(model_, result.rigid_health);
  adjoint::note_not_differentiable(model_, params_, result.not_differentiable);
  result.solver_converged = result.solver_converged && result.rigid_health.solver_converged;
}

void RigidPart::fill_status(int step, WorldStepStatus& status) const {
  status.rigid = std::span<const StepStatus>(statuses_).subspan(static_cast<std::size_t>((logs_kept_ ? step : 0) * substeps_),
                                                               static_cast<std::size_t>(substeps_));
}

}  // namespace diffphys::world
