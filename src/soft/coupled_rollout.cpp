// soft/coupled_rollout.cpp — CoupledRollout (coupled.hpp). One-way: the rigid rollout runs
// first, then the soft steps with each step's frame poses taken from the rigid states;
// backward runs the soft steps' implicit-function-theorem VJPs (as SoftRollout::backward,
// soft_rollout.cpp, but with a θ per step), maps the frame-pose adjoints to the rigid state
// tangents and feeds them to the rigid Rollout's backward as dL/dx_t. Two-way: the rigid steps
// of each soft step run in between (the attachments' reactions in their θ) and are reversed
// window by window with the rigid step VJPs.
//
// Pose adjoint → rigid tangent (docs/gradients.md: q' = exp(δθ) ⊗ q, so R' = exp([δθ]×) R and
// ∂R/∂δθ_k = [e_k]× R): with R̄ = dL/dR, dL/dδθ = Σ_j R_{:,j} × R̄_{:,j}; dL/dp = p̄.
#include "diffphys/coupled.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "soft/shape_distance.hpp"
#include "adjoint/step_vjp.hpp"
#include "soft/soft_step_vjp.hpp"
#include "soft/step_system.hpp"
#include "math/finite.hpp"

namespace diffphys {

using soft::SoftModel;
using soft::SoftParams;
using soft::SoftState;

namespace {

void set_poses(const SoftModel& model, SoftParams& params, std::span<const int> frame_bodies, const State& rigid,
               bool previous) {
  for (std::size_t f = 0; f < frame_bodies.size(); ++f) {
    const auto b = static_cast<std::size_t>(frame_bodies[f]);
    const Vec3& p = rigid.position[b];
    const Quat& q = rigid.orientation[b];
    soft::set_frame_pose(model, params, static_cast<int>(f), {p.x, p.y, p.z}, {q.w, q.x, q.y, q.z}, previous);
  }
}

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

namespace {
void check_coupling(const Model& rigid, const SoftModel& soft, std::span<const int> frame_bodies, int substeps) {
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
}  // namespace

void validate_coupled_system(const CoupledSystem& system) {
  check_coupling(system.rigid_model, system.soft_model, system.frame_bodies, system.substeps);
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
  check_coupling(rigid_model, soft_model_, frame_bodies_, substeps_);
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

// Two-way: the reactions of the attachment springs at (x_t, the rigid state at t·S) and of
// soft step t − 1's contact at its minimiser x_t act on their bodies through the external
// force and torque parameters during the window's rigid steps. On body b from attachment a
// (node x, point r, stiffness k; a = R r):
//   f = k (x − p − a),  τ = a × f   (−∂E/∂p and −∂E/∂δθ of E = k/2 |x − p − a|²).
void CoupledRollout::run_two_way_rigid_window(int step, std::span<const double> rigid_controls) {
  const soft::SoftState& soft = soft_states_[static_cast<std::size_t>(step)];
  const State& start = rigid_all_states_[static_cast<std::size_t>(step * substeps_)];
  Params& params = window_params_[static_cast<std::size_t>(step)];
  params = rigid_params_;
  const ParamLayout& layout = rigid_model_.layout;
  for (std::size_t a = 0; a < soft_model_.frame_attachment_nodes.size(); ++a) {
    const auto body = static_cast<std::size_t>(frame_bodies_[static_cast<std::size_t>(soft_model_.frame_attachment_frames[a])]);
    if (layout.body_force[body] < 0) continue;  // a static body does not move
    const double k = soft_params_.values[static_cast<std::size_t>(soft_model_.layout.frame_attachment_stiffness) + a];
    const soft::Vector3& r = soft_model_.frame_attachment_points[a];
    const Vec3 arm = start.orientation[body].rotate(Vec3{r[0], r[1], r[2]});
    const auto node = static_cast<std::size_t>(soft_model_.frame_attachment_nodes[a]);
    const Vec3 x{soft.positions[3 * node], soft.positions[3 * node + 1], soft.positions[3 * node + 2]};
    const Vec3 force = (x - start.position[body] - arm) * k;
    const Vec3 torque = cross(arm, force);
    const auto f = static_cast<std::size_t>(layout.body_force[body]), tau = static_cast<std::size_t>(layout.body_torque[body]);
    params.values[f] += force.x;
    params.values[f + 1] += force.y;
    params.values[f + 2] += force.z;
    params.values[tau] += torque.x;
    params.values[tau + 1] += torque.y;
    params.values[tau + 2] += torque.z;
  }
  // Contact: the reaction of soft step t − 1's contact energy at its minimiser x_t on each
  // moving shape's body, −∂E/∂p and −∂E/∂δθ = −Σ_j R_{:,j} × (∂E/∂R)_{:,j}.
  if (step >= 1 && has_moving_contact()) {
    contact_reaction_gradient(step, contact_gradient_);
    for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
      const auto body = static_cast<std::size_t>(frame_bodies_[f]);
      if (layout.body_force[body] < 0) continue;
      const auto offset = static_cast<std::size_t>(soft_model_.layout.frame_pose[f]);
      const double* pose = step_params_[static_cast<std::size_t>(step) - 1].values.data() + offset;
      const double* g = contact_gradient_.data() + offset;
      Vec3 torque;
      for (int j = 0; j < 3; ++j)
        torque = torque - cross(Vec3{pose[3 + j], pose[6 + j], pose[9 + j]}, Vec3{g[3 + j], g[6 + j], g[9 + j]});
      const auto fo = static_cast<std::size_t>(layout.body_force[body]), to = static_cast<std::size_t>(layout.body_torque[body]);
      for (std::size_t r = 0; r < 3; ++r) params.values[fo + r] -= g[r];
      params.values[to] += torque.x;
      params.values[to + 1] += torque.y;
      params.values[to + 2] += torque.z;
    }
  }
  const auto actuators = static_cast<std::size_t>(rigid_model_.actuator_count());
  for (int k = step * substeps_; k < (step + 1) * substeps_; ++k) {
    State next = rigid_all_states_.back();
    const std::span<const double> controls = rigid_controls.subspan(static_cast<std::size_t>(k) * actuators, actuators);
    rigid_step_statuses_.push_back(
        diffphys::step(rigid_model_, params, rigid_all_states_.back(), controls, next, rigid_records_[static_cast<std::size_t>(k)]));
    rigid_all_states_.push_back(std::move(next));
  }
  rigid_states_.push_back(rigid_all_states_.back());
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
  // Feasibility of the initial state against the moving shapes at their initial poses.
  {
    SoftParams initial = soft_params_;
    set_poses(soft_model_, initial, frame_bodies_, rigid_states_[0], false);
    for (int i = 0; i < soft_model_.node_count; ++i)
      for (const soft::Obstacle& shape : soft_model_.obstacles) {
        if (shape.frame < 0) continue;
        const double* pose = initial.values.data() + soft_model_.layout.frame_pose[static_cast<std::size_t>(shape.frame)];
        const double d = soft::shape_distance(shape, soft::to_frame(pose, soft::load3(start.positions.data() + 3 * i)),
                                              static_cast<soft::V3<double>*>(nullptr));
        if (!(d > 0.0))
          throw Error(message("coupled rollout: soft node ", i, " is at distance ", d, " m from obstacle '", shape.name,
                              "' (moving with rigid body ", frame_bodies_[static_cast<std::size_t>(shape.frame)],
                              "): every node must start strictly outside every obstacle"));
      }
  }
  soft_states_.assign(1, start);
  soft_statuses_.clear();
  std::vector<double> start_positions(dofs);
  const double band = soft_model_.contact.barrier_distance;
  for (int t = 0; t < steps; ++t) {
    if (options_.two_way) run_two_way_rigid_window(t, rigid_controls_);
    SoftParams& theta = step_params_[static_cast<std::size_t>(t)];
    set_poses(soft_model_, theta, frame_bodies_, rigid_states_[static_cast<std::size_t>(t)], true);
    set_poses(soft_model_, theta, frame_bodies_, rigid_states_[static_cast<std::size_t>(t) + 1], false);
    soft::validate_soft_params(soft_model_, theta);
    const SoftState& before = soft_states_.back();
    // Newton starts at x_t, except that nodes in contact with (or swallowed by) a moving
    // shape start where the shape carries them: x_t would be infeasible once the shape moved.
    std::copy(before.positions.begin(), before.positions.end(), start_positions.begin());
    for (int i = 0; i < soft_model_.node_count; ++i) {
      if (soft_model_.pinned[static_cast<std::size_t>(i)]) continue;
      const soft::V3<double> x = soft::load3(before.positions.data() + 3 * i);
      for (const soft::Obstacle& shape : soft_model_.obstacles) {
        if (shape.frame < 0) continue;
        const auto frame = static_cast<std::size_t>(shape.frame);
        const double* pose = theta.values.data() + soft_model_.layout.frame_pose[frame];
        const double* previous = theta.values.data() + soft_model_.layout.frame_previous_pose[frame];
        if (soft::shape_distance(shape, soft::to_frame(pose, x), static_cast<soft::V3<double>*>(nullptr)) >= band) continue;
        const soft::V3<double> carried = soft::from_frame(pose, soft::to_frame(previous, x));
        bool feasible = true;
        for (const soft::Obstacle& other : soft_model_.obstacles)
          if (other.frame < 0 && !(soft::shape_distance(other, carried, static_cast<soft::V3<double>*>(nullptr)) > 0.0))
            feasible = false;
        if (!feasible) continue;
        start_positions[static_cast<std::size_t>(3 * i)] = carried.x;
        start_positions[static_cast<std::size_t>(3 * i + 1)] = carried.y;
        start_positions[static_cast<std::size_t>(3 * i + 2)] = carried.z;
      }
    }
    soft::SoftStepOptions options;
    options.start_positions = start_positions;
    SoftState next;
    const std::span<const double> forces =
        soft_controls_.empty() ? std::span<const double>() : std::span<const double>(soft_controls_).subspan(static_cast<std::size_t>(t) * dofs, dofs);
    soft_statuses_.push_back(soft::soft_step(soft_model_, theta, before, forces, next, workspace_, options));
    soft_states_.push_back(std::move(next));
  }
}

bool CoupledRollout::has_moving_contact() const {
  return std::any_of(soft_model_.obstacles.begin(), soft_model_.obstacles.end(), [](const soft::Obstacle& o) { return o.frame >= 0; });
}

// ∂E_contact/∂θ of soft step t − 1 at its minimiser x_t (x_{t−1} lagged, θ_{t−1}).
void CoupledRollout::contact_reaction_gradient(int step, std::vector<double>& gradient) const {
  const auto t = static_cast<std::size_t>(step);
  const soft::TermInputs in{soft_model_, step_params_[t - 1].values, soft_states_[t].positions, soft_states_[t - 1].positions,
                            soft_model_.dt, true};
  gradient.assign(soft_params_.values.size(), 0.0);
  for (const auto& term : workspace_.impl().terms)
    if (term->kind() == soft::EnergyTerm::Kind::Contact) term->add_param_gradient(in, gradient);
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
  if (step < 1 || !has_moving_contact()) return;
  // Contact reaction: force = −g_p, torque = −Σ_j R_j × G_j (g = ∂E/∂θ of soft step t − 1, G its
  // rotation part). With F̄, τ̄: the cotangent of g is c_p = −F̄, c_{R_j} = −τ̄ × R_j, and R
  // itself gets R̄_j = −G_j × τ̄; then (∂g/∂(x_t, x_{t−1}, θ_{t−1}))ᵀ c by the terms.
  const soft::SoftParams& theta = step_params_[static_cast<std::size_t>(step) - 1];
  const soft::SoftParamLayout& soft_layout = soft_model_.layout;
  contact_reaction_gradient(step, contact_gradient_);
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
    if (!system.factorise(0.0)) {
      ++soft_result.indefinite_steps;
      soft_health.indefinite_steps.push_back(t);
      double scale = 0.0;
      for (const int slot : system.diagonal_slots) scale = std::max(scale, std::abs(system.hessian.valuePtr()[slot]));
      system.factorise(1e-10 * std::max(1.0, scale));
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
