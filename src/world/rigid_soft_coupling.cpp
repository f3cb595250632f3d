// world/rigid_soft_coupling.cpp — FramePoses and Reactions (rigid_soft_coupling.hpp), forward
// and reverse.
//
// Pose adjoint → rigid tangent (docs/gradients.md: q' = exp(δθ) ⊗ q, so R' = exp([δθ]×) R and
// ∂R/∂δθ_k = [e_k]× R): with R̄ = dL/dR, dL/dδθ = Σ_j R_{:,j} × R̄_{:,j}; dL/dp = p̄.
//
// Reactions on body b from attachment a (node x, point r, stiffness k; a = R r):
//   f = k (x − p − a),  τ = a × f   (−∂E/∂p and −∂E/∂δθ of E = k/2 |x − p − a|²),
// and from soft step t − 1's contact energy: −∂E/∂p and −∂E/∂δθ = −Σ_j R_{:,j} × (∂E/∂R)_{:,j}.
// Their reverse, with F̄, τ̄ the adjoints of the body's force and torque slices and g = F̄ + τ̄ × a:
//   x̄ += k g,  p̄ −= k g,  k̄ += g·(x − p − a),  ā = −k g + f × τ̄,  θ̄ += a × ā  (δa = δθ × a);
// for the contact, the cotangent of ∂E/∂θ is c_p = −F̄, c_{R_j} = −τ̄ × R_j, R itself gets
// R̄_j = −G_j × τ̄, then (∂g/∂(x_t, x_{t−1}, θ_{t−1}))ᵀ c by the energy terms.
#include "world/rigid_soft_coupling.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/coupled.hpp"
#include "diffphys/error.hpp"
#include "world/coupling_kind.hpp"
#include "world/part_report.hpp"
#include "soft/shape_distance.hpp"
#include "soft/step_system.hpp"

namespace diffphys::world {
namespace {

using soft::SoftModel;
using soft::SoftParams;
using soft::SoftState;

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

// ∂E_contact/∂θ of a soft step (θ = step_params, minimiser `after`, lagged `before`).
void contact_param_gradient(const SoftModel& model, const SoftParams& step_params, const SoftState& after,
                            const SoftState& before, soft::SoftWorkspace& workspace, std::vector<double>& gradient) {
  const soft::TermInputs in{model, step_params.values, after.positions, before.positions, model.dt, true};
  gradient.assign(step_params.values.size(), 0.0);
  for (const auto& term : workspace.impl().terms)
    if (term->kind() == soft::EnergyTerm::Kind::Contact) term->add_param_gradient(in, gradient);
}

Vec3 load_vec3(std::span<const double> values, int offset) {
  const auto i = static_cast<std::size_t>(offset);
  return {values[i], values[i + 1], values[i + 2]};
}

}  // namespace

void set_frame_poses(const SoftModel& model, SoftParams& params, std::span<const int> frame_bodies, const State& rigid,
                     bool previous) {
  for (std::size_t f = 0; f < frame_bodies.size(); ++f) {
    const auto b = static_cast<std::size_t>(frame_bodies[f]);
    const Vec3& p = rigid.position[b];
    const Quat& q = rigid.orientation[b];
    soft::set_frame_pose(model, params, static_cast<int>(f), {p.x, p.y, p.z}, {q.w, q.x, q.y, q.z}, previous);
  }
}

void check_initial_coupled_state(const SoftModel& soft_model, std::span<const int> frame_bodies, const SoftParams& soft_params,
                                 const State& rigid_initial, const SoftState& soft_initial) {
  SoftParams initial = soft_params;
  set_frame_poses(soft_model, initial, frame_bodies, rigid_initial, false);
  for (int i = 0; i < soft_model.node_count; ++i)
    for (const soft::Obstacle& shape : soft_model.obstacles) {
      if (shape.frame < 0) continue;
      const double* pose = initial.values.data() + soft_model.layout.frame_pose[static_cast<std::size_t>(shape.frame)];
      const double d = soft::shape_distance(shape, soft::to_frame(pose, soft::load3(soft_initial.positions.data() + 3 * i)),
                                            static_cast<soft::V3<double>*>(nullptr));
      if (!(d > 0.0))
        throw Error(message("coupled rollout: soft node ", i, " is at distance ", d, " m from obstacle '", shape.name,
                            "' (moving with rigid body ", frame_bodies[static_cast<std::size_t>(shape.frame)],
                            "): every node must start strictly outside every obstacle"));
    }
}

FramePoses::FramePoses(const World& world, RigidPart& rigid, SoftPart& soft, int soft_index)
    : rigid_(rigid), soft_(soft), frame_bodies_(world.coupling.frame_bodies), soft_index_(soft_index) {}

void FramePoses::begin(const WorldParams&, const WorldState& initial) {
  check_initial_coupled_state(soft_.model(), frame_bodies_, soft_.params(), initial.rigid, initial.soft);
}

void FramePoses::apply(const StepInputs& in, int slot) {
  const SoftModel& model = soft_.model();
  SoftParams& theta = soft_.step_params(slot);
  set_frame_poses(model, theta, frame_bodies_, in.before.rigid, true);
  set_frame_poses(model, theta, frame_bodies_, in.after.rigid, false);
  // The rest of θ was validated when the run began; only the poses are new. A rigid state
  // gone non-finite is named here, not passed on to the soft step.
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f)
    for (const int offset : {model.layout.frame_pose[f], model.layout.frame_previous_pose[f]})
      for (int k = 0; k < 12; ++k) {
        const double value = theta.values[static_cast<std::size_t>(offset + k)];
        if (!std::isfinite(value))
          throw Error(message("soft frame '", model.frames[f], "': its pose, set from rigid body ", frame_bodies_[f],
                              ", is not finite (", value, ")"));
      }
}

void FramePoses::apply_vjp(const StepAdjoints& out, int slot, std::span<double> target_param_bar) {
  const soft::SoftParamLayout& layout = soft_.model().layout;
  const SoftParams& theta = soft_.step_params(slot);
  // The pose is the body's at the step's end (x̄_{t+1}), the previous pose at its start (x̄_t).
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
    const auto body = static_cast<std::size_t>(frame_bodies_[f]);
    for (const bool previous : {false, true}) {
      const auto offset = static_cast<std::size_t>(previous ? layout.frame_previous_pose[f] : layout.frame_pose[f]);
      const std::span<double> rigid_bar = previous ? out.before_bar : out.after_bar;
      add_pose_adjoint(theta.values.data() + offset, target_param_bar.data() + offset,
                       rigid_bar.data() + kStateTangentPerBody * body);
      std::fill_n(target_param_bar.begin() + static_cast<std::ptrdiff_t>(offset), 12, 0.0);
    }
  }
}

Reactions::Reactions(const World& world, RigidPart& rigid, SoftPart& soft, int rigid_index)
    : rigid_(rigid),
      soft_(soft),
      frame_bodies_(world.coupling.frame_bodies),
      rigid_index_(rigid_index),
      moving_contact_(std::any_of(world.soft->model.obstacles.begin(), world.soft->model.obstacles.end(),
                                  [](const soft::Obstacle& o) { return o.frame >= 0; })) {}

void Reactions::begin(const WorldParams&, const WorldState&) {}

void Reactions::rebuild_previous_step(const WorldState& before, const WorldState& previous) {
  const SoftModel& model = soft_.model();
  previous_step_params_.values.assign(soft_.params().values.begin(), soft_.params().values.end());
  set_frame_poses(model, previous_step_params_, frame_bodies_, previous.rigid, true);
  set_frame_poses(model, previous_step_params_, frame_bodies_, before.rigid, false);
  contact_param_gradient(model, previous_step_params_, before.soft, previous.soft, soft_.workspace(), contact_gradient_);
}

void Reactions::apply(const StepInputs& in, int slot) {
  const SoftModel& soft_model = soft_.model();
  const ParamLayout& layout = rigid_.model().layout;
  Params& params = rigid_.step_params(slot);
  const State& start = in.before.rigid;
  const SoftState& soft = in.before.soft;
  for (std::size_t a = 0; a < soft_model.frame_attachment_nodes.size(); ++a) {
    const auto body = static_cast<std::size_t>(frame_bodies_[static_cast<std::size_t>(soft_model.frame_attachment_frames[a])]);
    if (layout.body_force[body] < 0) continue;  // a static body does not move
    const double k = soft_.params().values[static_cast<std::size_t>(soft_model.layout.frame_attachment_stiffness) + a];
    const soft::Vector3& r = soft_model.frame_attachment_points[a];
    const Vec3 arm = start.orientation[body].rotate(Vec3{r[0], r[1], r[2]});
    const auto node = static_cast<std::size_t>(soft_model.frame_attachment_nodes[a]);
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
  if (in.previous == nullptr || !moving_contact_) return;
  rebuild_previous_step(in.before, *in.previous);
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
    const auto body = static_cast<std::size_t>(frame_bodies_[f]);
    if (layout.body_force[body] < 0) continue;
    const auto offset = static_cast<std::size_t>(soft_model.layout.frame_pose[f]);
    const double* pose = previous_step_params_.values.data() + offset;
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

void Reactions::apply_vjp(const StepAdjoints& out, int, std::span<double> target_param_bar) {
  const SoftModel& soft_model = soft_.model();
  const ParamLayout& layout = rigid_.model().layout;
  const auto dofs = static_cast<std::size_t>(soft_model.dof_count());
  const auto soft_x = static_cast<std::size_t>(soft_.state_offset());
  const auto soft_theta = static_cast<std::size_t>(soft_.param_offset());
  const std::span<double> soft_position_bar = out.before_bar.subspan(soft_x, dofs);
  const State& start = out.before.rigid;
  const SoftState& soft = out.before.soft;
  const std::span<const double> window_bar = target_param_bar;
  for (std::size_t a = 0; a < soft_model.frame_attachment_nodes.size(); ++a) {
    const auto body = static_cast<std::size_t>(frame_bodies_[static_cast<std::size_t>(soft_model.frame_attachment_frames[a])]);
    if (layout.body_force[body] < 0) continue;
    const auto stiffness_index = static_cast<std::size_t>(soft_model.layout.frame_attachment_stiffness) + a;
    const double k = soft_.params().values[stiffness_index];
    const soft::Vector3& r = soft_model.frame_attachment_points[a];
    const Vec3 arm = start.orientation[body].rotate(Vec3{r[0], r[1], r[2]});
    const auto node = static_cast<std::size_t>(soft_model.frame_attachment_nodes[a]);
    const Vec3 x{soft.positions[3 * node], soft.positions[3 * node + 1], soft.positions[3 * node + 2]};
    const Vec3 stretch = x - start.position[body] - arm;
    const Vec3 force = stretch * k;
    const Vec3 g = load_vec3(window_bar, layout.body_force[body]) + cross(load_vec3(window_bar, layout.body_torque[body]), arm);
    soft_position_bar[3 * node] += k * g.x;
    soft_position_bar[3 * node + 1] += k * g.y;
    soft_position_bar[3 * node + 2] += k * g.z;
    out.params_bar[soft_theta + stiffness_index] += dot(g, stretch);
    const Vec3 arm_bar = g * -k + cross(force, load_vec3(window_bar, layout.body_torque[body]));
    const Vec3 turn_bar = cross(arm, arm_bar);
    const std::size_t base = kStateTangentPerBody * body;
    out.before_bar[base] -= k * g.x;
    out.before_bar[base + 1] -= k * g.y;
    out.before_bar[base + 2] -= k * g.z;
    out.before_bar[base + 3] += turn_bar.x;
    out.before_bar[base + 4] += turn_bar.y;
    out.before_bar[base + 5] += turn_bar.z;
  }
  if (out.previous == nullptr || !moving_contact_) return;
  const WorldState& previous = *out.previous;
  rebuild_previous_step(out.before, previous);
  const SoftParams& theta = previous_step_params_;
  const soft::SoftParamLayout& soft_layout = soft_model.layout;
  cotangent_.assign(theta.values.size(), 0.0);
  rotation_bar_.assign(12 * frame_bodies_.size(), 0.0);
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
    const auto body = static_cast<std::size_t>(frame_bodies_[f]);
    if (layout.body_force[body] < 0) continue;
    const auto offset = static_cast<std::size_t>(soft_layout.frame_pose[f]);
    const double* pose = theta.values.data() + offset;
    const double* g = contact_gradient_.data() + offset;
    const Vec3 force_bar = load_vec3(window_bar, layout.body_force[body]);
    const Vec3 torque_bar = load_vec3(window_bar, layout.body_torque[body]);
    cotangent_[offset] = -force_bar.x;
    cotangent_[offset + 1] = -force_bar.y;
    cotangent_[offset + 2] = -force_bar.z;
    for (int j = 0; j < 3; ++j) {
      const Vec3 column{pose[3 + j], pose[6 + j], pose[9 + j]};
      const Vec3 g_column{g[3 + j], g[6 + j], g[9 + j]};
      const Vec3 c = cross(torque_bar, column) * -1.0;
      const Vec3 r_bar = cross(g_column, torque_bar) * -1.0;
      const double cs[3] = {c.x, c.y, c.z}, rs[3] = {r_bar.x, r_bar.y, r_bar.z};
      for (int i = 0; i < 3; ++i) {
        cotangent_[offset + static_cast<std::size_t>(3 + 3 * i + j)] = cs[i];
        rotation_bar_[12 * f + static_cast<std::size_t>(3 + 3 * i + j)] = rs[i];
      }
    }
  }
  theta_bar_.assign(theta.values.size(), 0.0);
  const std::span<double> previous_position_bar =
      out.previous_bar.empty() ? std::span<double>() : out.previous_bar.subspan(soft_x, dofs);
  const soft::TermInputs in{soft_model, theta.values, soft.positions, previous.soft.positions, soft_model.dt, true};
  for (const auto& term : soft_.workspace().impl().terms)
    if (term->kind() == soft::EnergyTerm::Kind::Contact)
      term->add_param_gradient_vjp(in, cotangent_, soft_position_bar, theta_bar_, previous_position_bar);
  // Soft step t − 1's frame poses: the pose from the rigid state at t (x̄_t), the previous
  // pose from the one at t − 1 (x̄_{t−1}).
  for (std::size_t f = 0; f < frame_bodies_.size(); ++f) {
    const auto body = static_cast<std::size_t>(frame_bodies_[f]);
    const auto offset = static_cast<std::size_t>(soft_layout.frame_pose[f]);
    const auto previous_offset = static_cast<std::size_t>(soft_layout.frame_previous_pose[f]);
    for (int k = 0; k < 12; ++k) theta_bar_[offset + static_cast<std::size_t>(k)] += rotation_bar_[12 * f + static_cast<std::size_t>(k)];
    add_pose_adjoint(theta.values.data() + offset, theta_bar_.data() + offset, out.before_bar.data() + kStateTangentPerBody * body);
    add_pose_adjoint(theta.values.data() + previous_offset, theta_bar_.data() + previous_offset,
                     out.previous_bar.data() + kStateTangentPerBody * body);
    std::fill_n(theta_bar_.begin() + static_cast<std::ptrdiff_t>(offset), 12, 0.0);
    std::fill_n(theta_bar_.begin() + static_cast<std::ptrdiff_t>(previous_offset), 12, 0.0);
  }
  for (std::size_t p = 0; p < theta_bar_.size(); ++p) out.params_bar[soft_theta + p] += theta_bar_[p];
}

// The rigid ↔ soft coupling as the world's registry sees it (world/coupling_kind.hpp): held by
// a world of both parts; the frames' bodies and substeps checked; two-way, the reactions into
// the rigid step, then the frame poses into the soft step.
namespace {

bool holds_rigid_and_soft(const World& world) { return world.has_rigid() && world.has_soft(); }

void check_rigid_soft(const World& world) {
  validate_coupling(world.rigid->model, world.soft->model, world.coupling.frame_bodies, world.coupling.substeps);
}

void make_rigid_soft(const World& world, std::span<const std::unique_ptr<Part>> parts,
                     std::vector<std::unique_ptr<Coupling>>& couplings) {
  RigidPart* rigid = nullptr;
  SoftPart* soft = nullptr;
  int rigid_index = -1, soft_index = -1;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (auto* r = dynamic_cast<RigidPart*>(parts[i].get())) {
      rigid = r;
      rigid_index = static_cast<int>(i);
    }
    if (auto* p = dynamic_cast<SoftPart*>(parts[i].get())) {
      soft = p;
      soft_index = static_cast<int>(i);
    }
  }
  if (rigid == nullptr || soft == nullptr) throw Error("rigid-soft coupling: the world lacks its rigid or its soft part");
  if (world.coupling.two_way) couplings.push_back(std::make_unique<Reactions>(world, *rigid, *soft, rigid_index));
  couplings.push_back(std::make_unique<FramePoses>(world, *rigid, *soft, soft_index));
}

}  // namespace

const CouplingKind& rigid_soft_coupling_kind() {
  static const CouplingKind kind{
      .name = "rigid-soft",
      .held_by = holds_rigid_and_soft,
      .check = check_rigid_soft,
      .make = make_rigid_soft,
      .make_report = report::make_coupling_report,
  };
  return kind;
}

}  // namespace diffphys::world
