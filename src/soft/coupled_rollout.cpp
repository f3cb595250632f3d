// soft/coupled_rollout.cpp — CoupledRollout (coupled.hpp). One-way: the rigid rollout runs
// first, then the soft steps with each step's frame poses taken from the rigid states;
// backward runs the soft steps' implicit-function-theorem VJPs (as SoftRollout::backward,
// soft_rollout.cpp, but with a θ per step), maps the frame-pose adjoints to the rigid state
// tangents and feeds them to the rigid Rollout's backward as dL/dx_t. Two-way: the rigid steps
// of each soft step run in between (the attachments' reactions in their θ) and are reversed
// window by window with the rigid step VJPs. Each forward step is coupled::coupled_step
// (soft/coupled_step.cpp), the one WorldSimulator takes too; this file owns the tape and the
// reverse pass.
//
// Pose adjoint → rigid tangent (docs/gradients.md: q' = exp(δθ) ⊗ q, so R' = exp([δθ]×) R and
// ∂R/∂δθ_k = [e_k]× R): with R̄ = dL/dR, dL/dδθ = Σ_j R_{:,j} × R̄_{:,j}; dL/dp = p̄.
#include "diffphys/coupled.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "adjoint/step_vjp.hpp"
#include "soft/coupled_step.hpp"
#include "soft/soft_step_vjp.hpp"
#include "soft/step_system.hpp"
#include "math/finite.hpp"

namespace diffphys {

using soft::SoftModel;
using soft::SoftParams;
using soft::SoftState;

namespace {

// body_tangent (12: p, θ, v, ω) += the pose adjoint (p̄, R̄ row-major) mapped to (dL/dp, dL/dδθ).
void add_pose_adjoint(const double* pose, const double* pose_bar, double* body_tangent) {
  for (int r = 0; r < 3; ++r) body_tangent[r] += pose_bar[r];
  for (int j = 0; j < 3; ++j) {
    const double c[3] = {pose[3 + j], pose[6 + j], pose[9 + j]};
    const double g[3] = {pose_bar[3 + j], pose_bar[6 + j], pose_bar[9 + j]};
    body_tangent[3] += c[1] * g[2] - c[2] * g[1];
    body_tangent[4] += c[2] * g[0] - c[0] * g[2];
    body_tangent[5] += c[0] * g[1] - c[1] * g[0];
  }
}

}  // namespace

void validate_coupling(const Model& rigid, const SoftModel& soft, std::span<const int> frame_bodies, int substeps) {
  if (frame_bodies.size() != soft.frames.size())
    throw Error(message("coupled system: expected one rigid body per soft frame (", soft.frames.size(), "), got ",
                        frame_bodies.size()));
  for (std::size_t f = 0; f < frame_bodies.size(); ++f) {
    const int body = frame_bodies[f];
    if (body < 1 || body >= rigid.body_count())
      throw Error(message("coupled system: soft frame '", soft.frames[f], "' is bound to rigid body index ", body,
                          " (valid: 1 to ", rigid.body_count() - 1, "; the world is body 0)"));
  }
  if (substeps < 1) throw Error(message("coupled system: substeps must be ≥ 1, got ", substeps));
  const double expected = substeps * rigid.dt;
  if (std::abs(soft.dt - expected) > 1e-9 * soft.dt)
    throw Error(message("coupled system: the soft dt ", soft.dt, " s must equal substeps (", substeps, ") × the rigid dt ",
                        rigid.dt, " s = ", expected, " s"));
}

void validate_coupled_system(const CoupledSystem& system) {
  validate_coupling(system.rigid_model, system.soft_model, system.frame_bodies, system.substeps);
}

CoupledRollout::CoupledRollout(const Model& rigid_model, const Params& rigid_params, const SoftModel& soft_model,
                               const SoftParams& soft_params, std::vector<int> frame_bodies, int substeps,
                               CoupledOptions options)
    : soft_model_(soft_model),
      soft_params_(soft_params),
      frame_bodies_(std::move(frame_bodies)),
      substeps_(substeps),
      options_(options),
      rigid_(rigid_model, rigid_params, options.rigid),
      rigid_model_(rigid_model),
      rigid_params_(rigid_params),
      workspace_(soft_model_) {
  validate_coupling(rigid_model, soft_model_, frame_bodies_, substeps_);
  // As Rollout: recomputed steps must be bit-identical to the forward pass.
  rigid_model_.solver.warm_start = false;
}

CoupledRollout::CoupledRollout(const CoupledSystem& system)
    : CoupledRollout(system.rigid_model, system.rigid_params, system.soft_model, system.soft_params, system.frame_bodies,
                     system.substeps, CoupledOptions{RolloutOptions{}, system.two_way}) {}

const State& CoupledRollout::rigid_state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("coupled rollout: step ", step, " outside [0, ", steps_, "]"));
  return rigid_states_[static_cast<std::size_t>(step)];
}

std::span<const StepStatus> CoupledRollout::rigid_statuses() const {
  return options_.two_way ? std::span<const StepStatus>(rigid_step_statuses_) : rigid_.statuses();
}

CoupledRollout::~CoupledRollout() = default;

const SoftState& CoupledRollout::soft_state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("coupled rollout: step ", step, " outside [0, ", steps_, "]"));
  return soft_states_[static_cast<std::size_t>(step)];
}

void CoupledRollout::run(const State& rigid_initial, std::span<const double> rigid_controls,
                         const SoftState& soft_initial, std::span<const double> soft_controls, int steps) {
  if (steps < 0) throw Error(message("coupled rollout: steps must be ≥ 0, got ", steps));
  const auto dofs = static_cast<std::size_t>(soft_model_.dof_count());
  if (!soft_controls.empty() && soft_controls.size() != static_cast<std::size_t>(steps) * dofs)
    throw Error(message("coupled rollout: expected ", static_cast<std::size_t>(steps) * dofs,
                        " soft control values (steps × 3 per node) or none, got ", soft_controls.size()));
  soft::validate_soft_params(soft_model_, soft_params_);
  steps_ = steps;
  soft_controls_.assign(soft_controls.begin(), soft_controls.end());
  rigid_states_.clear();
  // coupled_step reads rigid_states_[t] while the two-way window appends t + 1: no reallocation.
  rigid_states_.reserve(static_cast<std::size_t>(steps) + 1);
  if (!options_.two_way) {
    rigid_.run(rigid_initial, rigid_controls, steps * substeps_);
    for (int t = 0; t <= steps; ++t) rigid_states_.push_back(rigid_.state(t * substeps_));
  } else {
    validate_state(rigid_model_, rigid_initial);
    const auto actuators = static_cast<std::size_t>(rigid_model_.actuator_count());
    const auto rigid_steps = static_cast<std::size_t>(steps) * static_cast<std::size_t>(substeps_);
    if (!rigid_controls.empty() && rigid_controls.size() != rigid_steps * actuators)
      throw Error(message("coupled rollout: ", rigid_controls.size(), " rigid controls given, expected rigid steps × actuators = ",
                          rigid_steps, " × ", actuators));
    rigid_controls_.assign(rigid_steps * actuators, 0.0);
    std::copy(rigid_controls.begin(), rigid_controls.end(), rigid_controls_.begin());
    rigid_all_states_.assign(1, rigid_initial);
    rigid_records_.resize(rigid_steps);
    rigid_step_statuses_.clear();
    window_params_.assign(static_cast<std::size_t>(steps), rigid_params_);
    rigid_states_.push_back(rigid_initial);
  }

  SoftState start = soft_initial;
  soft::prepare_soft_state(soft_model_, start);
  step_params_.assign(static_cast<std::size_t>(steps), soft_params_);
  const coupled::CoupledStepModel model{rigid_model_, soft_model_, frame_bodies_, substeps_, options_.two_way};
  coupled::check_initial_coupled_state(model, soft_params_, rigid_states_[0], start);
  soft_states_.assign(1, start);
  soft_statuses_.clear();
  // The rigid window of soft step t: one-way, already run above; two-way, its substeps now,
  // every state and step record kept for the backward pass.
  struct Window final : coupled::RigidWindow {
    CoupledRollout& rollout;
    int step = 0;
    explicit Window(CoupledRollout& owner) : rollout(owner) {}
    const State& run(const Params& params) override {
      if (!rollout.options_.two_way) return rollout.rigid_states_[static_cast<std::size_t>(step) + 1];
      const auto actuators = static_cast<std::size_t>(rollout.rigid_model_.actuator_count());
      for (int k = step * rollout.substeps_; k < (step + 1) * rollout.substeps_; ++k) {
        State next = rollout.rigid_all_states_.back();
        const std::span<const double> controls =
            std::span<const double>(rollout.rigid_controls_).subspan(static_cast<std::size_t>(k) * actuators, actuators);
        rollout.rigid_step_statuses_.push_back(diffphys::step(rollout.rigid_model_, params, rollout.rigid_all_states_.back(),
                                                              controls, next, rollout.rigid_records_[static_cast<std::size_t>(k)]));
        rollout.rigid_all_states_.push_back(std::move(next));
      }
      rollout.rigid_states_.push_back(rollout.rigid_all_states_.back());
      return rollout.rigid_states_.back();
    }
  } window(*this);
  coupled::CoupledStepScratch scratch;
  for (int t = 0; t < steps; ++t) {
    const auto i = static_cast<std::size_t>(t);
    window.step = t;
    const std::span<const double> forces =
        soft_controls_.empty() ? std::span<const double>() : std::span<const double>(soft_controls_).subspan(i * dofs, dofs);
    const coupled::CoupledStepInputs in{rigid_params_, soft_params_, rigid_states_[i], soft_states_[i], forces,
                                        t >= 1 ? &step_params_[i - 1] : nullptr, t >= 1 ? &soft_states_[i - 1] : nullptr};
    SoftState next;
    Params unused;
    soft_statuses_.push_back(coupled::coupled_step(model, in, window, options_.two_way ? window_params_[i] : unused,
                                                   step_params_[i], next, workspace_, scratch));
    soft_states_.push_back(std::move(next));
  }
}

// Two-way, going back over soft step t's rigid window: x̄ at rigid step (t+1)·S is `running` +
// `arrived` (the soft side's and the loss's dL/dx there); reverse the window's rigid steps
// (step VJPs with the window's θ), then the reactions' VJP: with F̄, τ̄ the adjoints of the
// window's body force and torque, g = F̄ + τ̄ × a, f = k (x − p − a):
//   x̄ += k g,  p̄ −= k g,  k̄ += g·(x − p − a),  ā = −k g + f × τ̄,  θ̄ += a × ā  (δa = δθ × a).
void CoupledRollout::reverse_two_way_window(int step, std::span<const double> arrived, std::vector<double>& running,
                                            Gradients& rigid_gradients, std::vector<double>& soft_position_adjoint,
                                            std::vector<double>& soft_param_adjoint, adjoint::StepVjpWorkspace& vjp,
                                            std::vector<double>& window_bar, std::vector<double>& previous,
                                            std::span<double> previous_pose_adjoint, std::vector<double>& pending_previous) const {
  for (std::size_t k = 0; k < running.size(); ++k) running[k] += arrived[k];
  const Params& params = window_params_[static_cast<std::size_t>(step)];
  window_bar.assign(params.values.size(), 0.0);
  previous.assign(running.size(), 0.0);
  const auto actuators = static_cast<std::size_t>(rigid_model_.actuator_count());
  for (int k = (step + 1) * substeps_ - 1; k >= step * substeps_; --k) {
    const auto i = static_cast<std::size_t>(k);
    std::fill(previous.begin(), previous.end(), 0.0);
    adjoint::step_vjp(rigid_model_, params, rigid_all_states_[i], std::span<const double>(rigid_controls_).subspan(i * actuators, actuators),
                      rigid_records_[i], rigid_all_states_[i + 1], running, previous,
                      std::span<double>(rigid_gradients.controls).subspan(i * actuators, actuators), window_bar, vjp);
    std::swap(running, previous);
    // As Rollout: x̄ decayed per rigid step back and clipped in norm (RolloutOptions).
    const RolloutOptions& rigid = options_.rigid;
    if (rigid.gradient_decay != 1.0)
      for (double& v : running) v *= rigid.gradient_decay;
    if (rigid.gradient_clip > 0) {
      double squared = 0.0;
      for (const double v : running) squared += v * v;
      if (std::sqrt(squared) > rigid.gradient_clip) {
        const double scale = rigid.gradient_clip / std::sqrt(squared);
        for (double& v : running) v *= scale;
        ++rigid_gradients.health.clipped_steps;
      }
    }
  }
  for (std::size_t p = 0; p < window_bar.size(); ++p) rigid_gradients.params[p] += window_bar[p];
  const soft::SoftState& soft = soft_states_[static_cast<std::size_t>(step)];
  const State& start = rigid_all_states_[static_cast<std::size_t>(step * substeps_)];
  const ParamLayout& layout = rigid_model_.layout;
  for (std::size_t a = 0; a < soft_model_.frame_attachment_nodes.size(); ++a) {
    const auto body = static_cast<std::size_t>(frame_bodies_[static_cast<std::size_t>(soft_model_.frame_attachment_frames[a])]);
    if (layout.body_force[body] < 0) continue;
    const auto stiffness_index = static_cast<std::size_t>(soft_model_.layout.frame_attachment_stiffness) + a;
    const double k = soft_params_.values[stiffness_index];
    const soft::Vector3& r = soft_model_.frame_attachment_points[a];
    const Vec3 arm = start.orientation[body].rotate(Vec3{r[0], r[1], r[2]});
    const auto node = static_cast<std::size_t>(soft_model_.frame_attachment_nodes[a]);
    const Vec3 x{soft.positions[3 * node], soft.positions[3 * node + 1], soft.positions[3 * node + 2]};
    const Vec3 stretch = x - start.position[body] - arm;
    const Vec3 force = stretch * k;
    const Vec3 force_bar{window_bar[static_cast<std::size_t>(layout.body_force[body])],
                                window_bar[static_cast<std::size_t>(layout.body_force[body]) + 1],
                         window_bar[static_cast<std::size_t>(layout.body_force[body]) + 2]};
    const Vec3 torque_bar{window_bar[static_cast<std::size_t>(layout.body_torque[body])],
                          window_bar[static_cast<std::size_t>(layout.body_torque[body]) + 1],
                          window_bar[static_cast<std::size_t>(layout.body_torque[body]) + 2]};
    const Vec3 g = force_bar + cross(torque_bar, arm);
    soft_position_adjoint[3 * node] += k * g.x;
    soft_position_adjoint[3 * node + 1] += k * g.y;
    soft_position_adjoint[3 * node + 2] += k * g.z;
    soft_param_adjoint[stiffness_index] += dot(g, stretch);
    const Vec3 arm_bar = g * -k + cross(force, torque_bar);
    const Vec3 turn_bar = cross(arm, arm_bar);
    const std::size_t base = kStateTangentPerBody * body;
    running[base] -= k * g.x;
    running[base + 1] -= k * g.y;
    running[base + 2] -= k * g.z;
    running[base + 3] += turn_bar.x;
    running[base + 4] += turn_bar.y;
    running[base + 5] += turn_bar.z;
  }
  if (step < 1 || !coupled::has_moving_contact(soft_model_)) return;
  // Contact reaction: force = −g_p, torque = −Σ_j R_j × G_j (g = ∂E/∂θ of soft step t − 1, G its
  // rotation part). With F̄, τ̄: the cotangent of g is c_p = −F̄, c_{R_j} = −τ̄ × R_j, and R
  // itself gets R̄_j = −G_j × τ̄; then (∂g/∂(x_t, x_{t−1}, θ_{t−1}))ᵀ c by the terms.
  const soft::SoftParams& theta = step_params_[static_cast<std::size_t>(step) - 1];
  const soft::SoftParamLayout& soft_layout = soft_model_.layout;
  coupled::contact_param_gradient(soft_model_, step_params_[static_cast<std::size_t>(step) - 1], soft_states_[static_cast<std::size_t>(step)],
                                  soft_states_[static_cast<std::size_t>(step) - 1], workspace_, contact_gradient_);
  std::vector<double>& cotangent = contact_cotangent_;
  cotangent.assign(theta.values.size(), 0.0);
  std::vector<double>& explicit_rotation_bar = contact_rotation_bar_;
  explicit_rotation_bar.assign(12 * frame_bodies_.size(), 0.0);
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
    const auto body = static_cast<std::size_t>(frame_bodies_[f]);
    if (layout.body_force[body] < 0) continue;
    const auto offset = static_cast<std::size_t>(soft_layout.frame_pose[f]);
    const double* pose = theta.values.data() + offset;
    const double* g = contact_gradient_.data() + offset;
    const auto fo = static_cast<std::size_t>(layout.body_force[body]), to = static_cast<std::size_t>(layout.body_torque[body]);
    const Vec3 force_bar{window_bar[fo], window_bar[fo + 1], window_bar[fo + 2]};
    const Vec3 torque_bar{window_bar[to], window_bar[to + 1], window_bar[to + 2]};
    cotangent[offset] = -force_bar.x;
    cotangent[offset + 1] = -force_bar.y;
    cotangent[offset + 2] = -force_bar.z;
    for (int j = 0; j < 3; ++j) {
      const Vec3 column{pose[3 + j], pose[6 + j], pose[9 + j]};
      const Vec3 g_column{g[3 + j], g[6 + j], g[9 + j]};
      const Vec3 c = cross(torque_bar, column) * -1.0;
      const Vec3 r_bar = cross(g_column, torque_bar) * -1.0;
      const double cs[3] = {c.x, c.y, c.z}, rs[3] = {r_bar.x, r_bar.y, r_bar.z};
      for (int i = 0; i < 3; ++i) {
        cotangent[offset + static_cast<std::size_t>(3 + 3 * i + j)] = cs[i];
        explicit_rotation_bar[12 * f + static_cast<std::size_t>(3 + 3 * i + j)] = rs[i];
      }
    }
  }
  std::vector<double>& theta_bar = contact_theta_bar_;
  theta_bar.assign(theta.values.size(), 0.0);
  std::fill(pending_previous.begin(), pending_previous.end(), 0.0);
  const soft::SoftState& after = soft_states_[static_cast<std::size_t>(step)];
  const soft::SoftState& before = soft_states_[static_cast<std::size_t>(step) - 1];
  const soft::TermInputs in{soft_model_, theta.values, after.positions, before.positions, soft_model_.dt, true};
  for (const auto& term : workspace_.impl().terms)
    if (term->kind() == soft::EnergyTerm::Kind::Contact)
      term->add_param_gradient_vjp(in, cotangent, soft_position_adjoint, theta_bar, pending_previous);
  // Frame poses → rigid tangents (P_t at rigid step t·S: `running`; P_{t−1}: `previous_pose_adjoint`).
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
    const auto body = static_cast<std::size_t>(frame_bodies_[f]);
    const auto offset = static_cast<std::size_t>(soft_layout.frame_pose[f]);
    const auto previous_offset = static_cast<std::size_t>(soft_layout.frame_previous_pose[f]);
    for (int k = 0; k < 12; ++k) theta_bar[offset + static_cast<std::size_t>(k)] += explicit_rotation_bar[12 * f + static_cast<std::size_t>(k)];
    add_pose_adjoint(theta.values.data() + offset, theta_bar.data() + offset, running.data() + kStateTangentPerBody * body);
    add_pose_adjoint(theta.values.data() + previous_offset, theta_bar.data() + previous_offset,
                     previous_pose_adjoint.data() + kStateTangentPerBody * body);
    std::fill(theta_bar.begin() + static_cast<std::ptrdiff_t>(offset), theta_bar.begin() + static_cast<std::ptrdiff_t>(offset + 12), 0.0);
    std::fill(theta_bar.begin() + static_cast<std::ptrdiff_t>(previous_offset),
              theta_bar.begin() + static_cast<std::ptrdiff_t>(previous_offset + 12), 0.0);
  }
  for (std::size_t p = 0; p < theta_bar.size(); ++p) soft_param_adjoint[p] += theta_bar[p];
}

CoupledGradients CoupledRollout::backward(const CoupledLossGradient& loss_gradient) const {
  const auto dofs = static_cast<std::size_t>(soft_model_.dof_count());
  const auto nparam = soft_params_.values.size();
  const auto rigid_width = static_cast<std::size_t>(kStateTangentPerBody * rigid_model_.body_count());
  const soft::SoftParamLayout& layout = soft_model_.layout;
  CoupledGradients result;
  soft::SoftGradients& soft_result = result.soft;
  soft_result.params.assign(nparam, 0.0);
  soft_result.controls.assign(static_cast<std::size_t>(steps_) * dofs, 0.0);
  for (const soft::SoftStepStatus& status : soft_statuses_)
    soft_result.solver_converged = soft_result.solver_converged && status.converged;

  std::vector<double> rigid_adjoint(static_cast<std::size_t>(steps_ + 1) * rigid_width, 0.0);
  const auto rigid_at = [&](int t) {
    return std::span<double>(rigid_adjoint).subspan(static_cast<std::size_t>(t) * rigid_width, rigid_width);
  };
  // Two-way: the rigid adjoint at the current rigid step, carried through the windows.
  std::vector<double> running(rigid_width, 0.0), running_previous(rigid_width, 0.0), window_bar, pending_previous(dofs, 0.0);
  adjoint::StepVjpWorkspace vjp;
  if (options_.two_way) {
    result.rigid.params.assign(rigid_params_.values.size(), 0.0);
    result.rigid.controls.assign(rigid_controls_.size(), 0.0);
  }
  std::vector<double> adjoint_x(dofs, 0.0), adjoint_v(dofs, 0.0);
  std::vector<double> step_bar(nparam), loss_x(dofs), loss_v(dofs);
  soft::SoftStepVjpScratch scratch;
  soft::SoftWorkspace::Impl& system = workspace_.impl();
  // The soft adjoints (x̄_t, v̄_t): decayed per soft step back, the loss's dL/dx_t added, then
  // clipped and recorded (as SoftRollout; the rigid side's by the rigid rollout's options).
  soft::SoftGradientHealth& soft_health = soft_result.health;
  soft_health.state_gradient_norm.assign(static_cast<std::size_t>(steps_) + 1, 0.0);
  for (int t = 0; t < steps_; ++t)
    if (!soft_statuses_[static_cast<std::size_t>(t)].converged) soft_health.non_converged_steps.push_back(t);
  soft_health.solver_converged = soft_result.solver_converged;
  const auto note_non_finite = [&](int t, const char* stage) {
    if (soft_health.first_non_finite_step < 0) {
      soft_health.first_non_finite_step = t;
      soft_health.first_non_finite_stage = stage;
    }
  };
  const double soft_decay = options_.rigid.gradient_decay;
  const auto add_loss = [&](int t, const State& rigid, const SoftState& soft) {
    if (loss_gradient) {
      std::fill(loss_x.begin(), loss_x.end(), 0.0);
      std::fill(loss_v.begin(), loss_v.end(), 0.0);
      loss_gradient(t, rigid, soft, rigid_at(t), loss_x, loss_v);
      if (!all_finite(loss_x) || !all_finite(loss_v)) note_non_finite(t, "loss gradient");
      for (std::size_t k = 0; k < dofs; ++k) {
        adjoint_x[k] += loss_x[k];
        adjoint_v[k] += loss_v[k];
      }
    }
    soft::finish_soft_state_adjoint(t, adjoint_x, adjoint_v, options_.rigid.gradient_clip, soft_health);
  };
  add_loss(steps_, rigid_states_[static_cast<std::size_t>(steps_)], soft_states_[static_cast<std::size_t>(steps_)]);
  for (int t = steps_ - 1; t >= 0; --t) {
    const SoftParams& theta = step_params_[static_cast<std::size_t>(t)];
    const SoftState& before = soft_states_[static_cast<std::size_t>(t)];
    const SoftState& after = soft_states_[static_cast<std::size_t>(t) + 1];
    const std::span<const double> forces =
        soft_controls_.empty() ? std::span<const double>() : std::span<const double>(soft_controls_).subspan(static_cast<std::size_t>(t) * dofs, dofs);
    system.set_problem(theta, before.positions, before.velocities, forces, true);
    system.derivatives(after.positions, true);
    if (!system.factorise_for_adjoint()) {
      ++soft_result.indefinite_steps;
      soft_health.indefinite_steps.push_back(t);
    }
    ++soft_health.refactorised_steps;
    std::fill(step_bar.begin(), step_bar.end(), 0.0);
    if (const char* stage = soft::soft_step_vjp(system, soft_model_, theta, after, adjoint_x, adjoint_v,
                                                std::span<double>(soft_result.controls).subspan(static_cast<std::size_t>(t) * dofs, dofs),
                                                step_bar, scratch))
      note_non_finite(t, stage);
    // Frame poses → the rigid states at the step's end (pose) and start (previous pose).
    for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
      const auto body = static_cast<std::size_t>(frame_bodies_[f]);
      for (const bool previous : {false, true}) {
        const auto offset = static_cast<std::size_t>(previous ? layout.frame_previous_pose[f] : layout.frame_pose[f]);
        add_pose_adjoint(theta.values.data() + offset, step_bar.data() + offset,
                         rigid_at(previous ? t : t + 1).data() + kStateTangentPerBody * body);
        std::fill(step_bar.begin() + static_cast<std::ptrdiff_t>(offset), step_bar.begin() + static_cast<std::ptrdiff_t>(offset + 12), 0.0);
      }
    }
    for (std::size_t p = 0; p < nparam; ++p) soft_result.params[p] += step_bar[p];
    // Two-way: x_t was also the lagged input of the contact reaction on window t + 1.
    for (std::size_t k = 0; k < dofs; ++k) adjoint_x[k] += pending_previous[k];
    std::fill(pending_previous.begin(), pending_previous.end(), 0.0);
    if (options_.two_way)
      reverse_two_way_window(t, rigid_at(t + 1), running, result.rigid, adjoint_x, soft_result.params, vjp, window_bar, running_previous,
                             t >= 1 ? rigid_at(t - 1) : rigid_at(t), pending_previous);
    if (soft_decay != 1.0)
      for (std::size_t k = 0; k < dofs; ++k) {
        adjoint_x[k] *= soft_decay;
        adjoint_v[k] *= soft_decay;
      }
    add_loss(t, rigid_states_[static_cast<std::size_t>(t)], before);
  }
  for (std::size_t k = 0; k < dofs; ++k)
    if (system.is_pinned_dof(k)) {
      adjoint_x[k] = 0.0;
      adjoint_v[k] = 0.0;
    }
  soft_result.initial_positions = adjoint_x;
  soft_result.initial_velocities = adjoint_v;
  if (options_.two_way) {
    result.rigid.initial_state = running;
    for (std::size_t k = 0; k < rigid_width; ++k) result.rigid.initial_state[k] += rigid_at(0)[k];
    result.rigid.health.solver_converged =
        std::all_of(rigid_step_statuses_.begin(), rigid_step_statuses_.end(), [](const StepStatus& s) { return s.converged; });
    return result;
  }
  result.rigid = rigid_.backward([&](int k, const State&, std::span<double> gradient) {
    if (k % substeps_ != 0) return;
    const std::span<const double> add = rigid_at(k / substeps_);
    for (std::size_t i = 0; i < add.size(); ++i) gradient[i] += add[i];
  });
  return result;
}

}  // namespace diffphys
