// soft/coupled_step.cpp — one step of rigid + soft bodies (coupled_step.hpp): the two-way
// reactions on the rigid bodies, the rigid window through the caller, then the soft step
// seeing the bodies' poses. CoupledRollout::run and WorldSimulator::step both call
// coupled_step, so that a rollout and a simulation of the same scene are the same bits.
#include "soft/coupled_step.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "soft/shape_distance.hpp"
#include "soft/step_system.hpp"

namespace diffphys::coupled {

using soft::SoftModel;
using soft::SoftParams;
using soft::SoftState;

namespace {

// Two-way: the reactions of the attachment springs at (x_t, the rigid state at t·S) and of
// soft step t − 1's contact at its minimiser x_t act on their bodies through the external
// force and torque parameters during the window's rigid steps. On body b from attachment a
// (node x, point r, stiffness k; a = R r):
//   f = k (x − p − a),  τ = a × f   (−∂E/∂p and −∂E/∂δθ of E = k/2 |x − p − a|²).
// Contact: −∂E/∂p and −∂E/∂δθ = −Σ_j R_{:,j} × (∂E/∂R)_{:,j} of soft step t − 1's contact energy.
void add_reactions(const CoupledStepModel& model, const CoupledStepInputs& in, Params& params,
                   soft::SoftWorkspace& workspace, CoupledStepScratch& scratch) {
  const SoftModel& soft_model = model.soft;
  const ParamLayout& layout = model.rigid.layout;
  const State& start = in.rigid_start;
  const SoftState& soft = in.soft_before;
  for (std::size_t a = 0; a < soft_model.frame_attachment_nodes.size(); ++a) {
    const auto body =
        static_cast<std::size_t>(model.frame_bodies[static_cast<std::size_t>(soft_model.frame_attachment_frames[a])]);
    if (layout.body_force[body] < 0) continue;  // a static body does not move
    const double k = in.soft_params.values[static_cast<std::size_t>(soft_model.layout.frame_attachment_stiffness) + a];
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
  if (in.previous_step_params == nullptr || in.soft_previous == nullptr || !has_moving_contact(soft_model)) return;
  contact_param_gradient(soft_model, *in.previous_step_params, soft, *in.soft_previous, workspace, scratch.contact_gradient);
  for (std::size_t f = 0; f < model.frame_bodies.size(); ++f) {
    const auto body = static_cast<std::size_t>(model.frame_bodies[f]);
    if (layout.body_force[body] < 0) continue;
    const auto offset = static_cast<std::size_t>(soft_model.layout.frame_pose[f]);
    const double* pose = in.previous_step_params->values.data() + offset;
    const double* g = scratch.contact_gradient.data() + offset;
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

// Throws Error naming the frame and its body unless the poses set from the rigid bodies are
// finite (a rigid state gone non-finite); allocates nothing otherwise.
void check_frame_poses(const CoupledStepModel& model, const SoftParams& params) {
  const soft::SoftParamLayout& layout = model.soft.layout;
  for (std::size_t f = 0; f < model.frame_bodies.size(); ++f)
    for (const int offset : {layout.frame_pose[f], layout.frame_previous_pose[f]})
      for (int k = 0; k < 12; ++k) {
        const double value = params.values[static_cast<std::size_t>(offset + k)];
        if (!std::isfinite(value))
          throw Error(message("soft frame '", model.soft.frames[f], "': its pose, set from rigid body ", model.frame_bodies[f],
                              ", is not finite (", value, ")"));
      }
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

bool has_moving_contact(const SoftModel& model) {
  return std::any_of(model.obstacles.begin(), model.obstacles.end(), [](const soft::Obstacle& o) { return o.frame >= 0; });
}

void contact_param_gradient(const SoftModel& model, const SoftParams& step_params, const SoftState& after,
                            const SoftState& before, soft::SoftWorkspace& workspace, std::vector<double>& gradient) {
  const soft::TermInputs in{model, step_params.values, after.positions, before.positions, model.dt, true};
  gradient.assign(step_params.values.size(), 0.0);
  for (const auto& term : workspace.impl().terms)
    if (term->kind() == soft::EnergyTerm::Kind::Contact) term->add_param_gradient(in, gradient);
}

void check_initial_coupled_state(const CoupledStepModel& model, const SoftParams& soft_params, const State& rigid_initial,
                                 const SoftState& soft_initial) {
  const SoftModel& soft_model = model.soft;
  SoftParams initial = soft_params;
  set_frame_poses(soft_model, initial, model.frame_bodies, rigid_initial, false);
  for (int i = 0; i < soft_model.node_count; ++i)
    for (const soft::Obstacle& shape : soft_model.obstacles) {
      if (shape.frame < 0) continue;
      const double* pose = initial.values.data() + soft_model.layout.frame_pose[static_cast<std::size_t>(shape.frame)];
      const double d = soft::shape_distance(shape, soft::to_frame(pose, soft::load3(soft_initial.positions.data() + 3 * i)),
                                            static_cast<soft::V3<double>*>(nullptr));
      if (!(d > 0.0))
        throw Error(message("coupled rollout: soft node ", i, " is at distance ", d, " m from obstacle '", shape.name,
                            "' (moving with rigid body ", model.frame_bodies[static_cast<std::size_t>(shape.frame)],
                            "): every node must start strictly outside every obstacle"));
    }
}

soft::SoftStepStatus coupled_step(const CoupledStepModel& model, const CoupledStepInputs& in, RigidWindow& rigid,
                                  Params& window_params, SoftParams& step_params, SoftState& soft_after,
                                  soft::SoftWorkspace& workspace, CoupledStepScratch& scratch) {
  const SoftModel& soft_model = model.soft;
  const State* rigid_end = nullptr;
  if (model.two_way) {
    window_params.values = in.rigid_params.values;
    add_reactions(model, in, window_params, workspace, scratch);
    rigid_end = &rigid.run(window_params);
  } else {
    rigid_end = &rigid.run(in.rigid_params);
  }
  step_params.values = in.soft_params.values;
  set_frame_poses(soft_model, step_params, model.frame_bodies, in.rigid_start, true);
  set_frame_poses(soft_model, step_params, model.frame_bodies, *rigid_end, false);
  // The rest of θ was validated once by the caller; only the poses are new. (A full
  // validate_soft_params here would build a message string per parameter at every step.)
  check_frame_poses(model, step_params);
  // Newton starts at x_t, except that nodes in contact with (or swallowed by) a moving
  // shape start where the shape carries them: x_t would be infeasible once the shape moved.
  const SoftState& before = in.soft_before;
  scratch.start_positions.assign(before.positions.begin(), before.positions.end());
  const double band = soft_model.contact.barrier_distance;
  for (int i = 0; i < soft_model.node_count; ++i) {
    if (soft_model.pinned[static_cast<std::size_t>(i)]) continue;
    const soft::V3<double> x = soft::load3(before.positions.data() + 3 * i);
    for (const soft::Obstacle& shape : soft_model.obstacles) {
      if (shape.frame < 0) continue;
      const auto frame = static_cast<std::size_t>(shape.frame);
      const double* pose = step_params.values.data() + soft_model.layout.frame_pose[frame];
      const double* previous = step_params.values.data() + soft_model.layout.frame_previous_pose[frame];
      if (soft::shape_distance(shape, soft::to_frame(pose, x), static_cast<soft::V3<double>*>(nullptr)) >= band) continue;
      const soft::V3<double> carried = soft::from_frame(pose, soft::to_frame(previous, x));
      bool feasible = true;
      for (const soft::Obstacle& other : soft_model.obstacles)
        if (other.frame < 0 && !(soft::shape_distance(other, carried, static_cast<soft::V3<double>*>(nullptr)) > 0.0))
          feasible = false;
      if (!feasible) continue;
      scratch.start_positions[static_cast<std::size_t>(3 * i)] = carried.x;
      scratch.start_positions[static_cast<std::size_t>(3 * i + 1)] = carried.y;
      scratch.start_positions[static_cast<std::size_t>(3 * i + 2)] = carried.z;
    }
  }
  soft::SoftStepOptions options;
  options.start_positions = scratch.start_positions;
  return soft::soft_step(soft_model, step_params, before, in.soft_forces, soft_after, workspace, options);
}

}  // namespace diffphys::coupled
