// adjoint/articulated_vjp.cpp — see articulated_vjp.hpp.
#include "adjoint/articulated_vjp.hpp"

#include "rigid/forces.hpp"
#include "solve/dense_cholesky.hpp"

namespace diffphys::adjoint {
namespace {

using rigid::cross_force;
using rigid::cross_motion;
using rigid::Spatial;

Vec3 read3(std::span<const double> values, std::size_t offset) {
  return {values[offset], values[offset + 1], values[offset + 2]};
}
void add3(std::span<double> values, std::size_t offset, const Vec3& v) {
  values[offset] += v.x;
  values[offset + 1] += v.y;
  values[offset + 2] += v.z;
}
void add_param(std::span<double> params, int offset, double value) { params[static_cast<std::size_t>(offset)] += value; }
void add_param3(std::span<double> params, int offset, const Vec3& value) {
  add3(params, static_cast<std::size_t>(offset), value);
}

// The velocity of motion m at point p: m.linear + m.angular × p.
Vec3 point_velocity(const Spatial& motion, const Vec3& point) { return motion.linear + cross(motion.angular, point); }

// θ̄ −= ∂Φ_k/∂θ for link k's body and joint, Φ_k = Y·(I A + V ×* I V + D V − f_ext) + y d q̇
// (stage 3 of the header): with P·(I Q) = P_ω·I_c Q_ω + m P(c)·Q(c) (P(c) the velocity of P at
// the centre of mass c), ∂/∂m and ∂/∂I_i (principal moments, I_c = R diag(I) Rᵀ) of the pairs
// (A, Y) and (Y × V, V), and the damping D = d_lin m (point mass at c) + d_ang I_c.
void add_parameter_adjoints(const Model& model, const Params& params, const rigid::ArticulatedLink& link,
                            const Spatial& Y, const Spatial& A, const Spatial& seed_cross_velocity, double seed,
                            double q_rate, std::span<double> param_adjoint) {
  const ParamLayout& layout = model.layout;
  const auto b = static_cast<std::size_t>(link.body);
  const Spatial& V = link.velocity;
  const Vec3 seed_at_com = point_velocity(Y, link.com);
  const Vec3 acceleration_at_com = point_velocity(A, link.com);
  const Vec3 velocity_at_com = point_velocity(V, link.com);
  const Vec3 cross_at_com = point_velocity(seed_cross_velocity, link.com);
  const double linear_damping = params.at(layout.body_linear_damping[b]);
  const double angular_damping = params.at(layout.body_angular_damping[b]);
  const double mass = params.at(layout.body_mass[b]);
  add_param(param_adjoint, layout.body_mass[b],
            -(dot(acceleration_at_com, seed_at_com) + dot(cross_at_com, velocity_at_com) +
              linear_damping * dot(seed_at_com, velocity_at_com)));
  const Mat3& axes = link.principal_rotation;
  const Vec3 seed_angular = axes.transpose_times(Y.angular), acceleration_angular = axes.transpose_times(A.angular);
  const Vec3 cross_angular = axes.transpose_times(seed_cross_velocity.angular);
  const Vec3 velocity_angular = axes.transpose_times(V.angular);
  const Vec3 moments = params.vec3_at(layout.body_inertia[b]);
  Vec3 moments_bar;
  double angular_damping_bar = 0.0;
  for (int i = 0; i < 3; ++i) {
    moments_bar[i] = -(acceleration_angular[i] * seed_angular[i] + cross_angular[i] * velocity_angular[i] +
                       angular_damping * seed_angular[i] * velocity_angular[i]);
    angular_damping_bar -= moments[i] * seed_angular[i] * velocity_angular[i];
  }
  add_param3(param_adjoint, layout.body_inertia[b], moments_bar);
  add_param(param_adjoint, layout.body_linear_damping[b], -mass * dot(seed_at_com, velocity_at_com));
  add_param(param_adjoint, layout.body_angular_damping[b], angular_damping_bar);
  add_param3(param_adjoint, layout.body_force[b], seed_at_com);
  add_param3(param_adjoint, layout.body_torque[b], Y.angular);
  add_param(param_adjoint, layout.joint_damping[static_cast<std::size_t>(link.joint)], -seed * q_rate);
}

// The servos (rigid/articulated.hpp, ArticulatedServo), by the implicit function theorem on
// the step with their active set fixed: unknowns q̈ and the torques τ_f of the servos inside
// their box, equations M q̈ + C − τ_m − S_c τ_c − S_f τ_f = 0 and q̇_f + h q̈_f − ω*_f = 0. With
// z = M⁻¹ q̈̄ (vjp.seed on entry) the adjoint system gives μ = B_ff⁻¹ z_f, B = h (M⁻¹)_ss, and
// λ = z − h M⁻¹ S_f μ (λ_f = 0), which replaces vjp.seed: the dynamics' terms are then those of
// λ as for motors alone; a clamped servo adds λ_k σ to dL/d(max_torque); a free one −μ to
// dL/dq̇_k and μ to dL/dω*, which reaches its target, gain, q (or max_velocity when ω* is
// clamped).
void add_servo_adjoints(const Model& model, const Params& params, std::span<const double> controls,
                        const rigid::ArticulatedRecord& record, double h, ArticulatedVjpWorkspace& vjp,
                        std::span<double> control_adjoint, std::span<double> param_adjoint) {
  const std::size_t s = record.servos.size(), n = static_cast<std::size_t>(record.size());
  if (s == 0) return;
  const ParamLayout& layout = model.layout;
  const bool parameters = !param_adjoint.empty();
  // Solve B_ff μ = z_f.
  vjp.servo_multiplier.clear();
  for (const rigid::ArticulatedServo& servo : record.servos)
    if (servo.torque_bound == 0) vjp.servo_multiplier.push_back(vjp.seed[static_cast<std::size_t>(servo.link)]);
  vjp.servo_matrix.resize(s * s);
  const std::size_t m = rigid::free_servo_block(record, h, vjp.servo_matrix);
  if (solve::cholesky_factorize(vjp.servo_matrix.data(), m, s))
    solve::cholesky_solve(vjp.servo_matrix.data(), m, s, vjp.servo_multiplier.data());
  std::size_t row = 0;
  for (std::size_t i = 0; i < s; ++i) {
    const rigid::ArticulatedServo& servo = record.servos[i];
    if (servo.torque_bound != 0) continue;
    const double mu = vjp.servo_multiplier[row++];
    for (std::size_t k = 0; k < n; ++k) vjp.seed[k] -= h * record.servo_columns[i * n + k] * mu;
    const auto link = static_cast<std::size_t>(servo.link);
    vjp.velocity_adjoint[link] -= mu;
    const auto a = static_cast<std::size_t>(servo.actuator);
    if (servo.rate_bound == 0) {
      const double gain = params.at(layout.actuator_gain[a]);
      control_adjoint[a] += gain * mu;
      vjp.position_adjoint[link] -= gain * mu;
      if (parameters) add_param(param_adjoint, layout.actuator_gain[a], (controls[a] - servo.position) * mu);
    } else if (parameters) {
      add_param(param_adjoint, layout.actuator_max_velocity[a], servo.rate_bound * mu);
    }
  }
  // Clamped servos, with the final λ: τ_c = σ T.
  for (const rigid::ArticulatedServo& servo : record.servos)
    if (servo.torque_bound != 0 && parameters)
      add_param(param_adjoint, layout.actuator_max_torque[static_cast<std::size_t>(servo.actuator)],
                servo.torque_bound * vjp.seed[static_cast<std::size_t>(servo.link)]);
}

}  // namespace

void articulated_step_vjp(const Model& model, const Params& params, const State& state_in,
                          std::span<const double> controls, const rigid::ArticulatedRecord& record,
                          std::span<const double> next_state_adjoint, std::span<double> state_adjoint,
                          std::span<double> control_adjoint, std::span<double> param_adjoint,
                          ArticulatedVjpWorkspace& vjp) {
  const ParamLayout& layout = model.layout;
  const bool parameters = !param_adjoint.empty();  // empty: dL/dθ not wanted (RolloutOptions)
  const auto n = static_cast<std::size_t>(record.size());
  const double h = model.dt;
  vjp.position_adjoint.assign(n, 0.0);
  vjp.velocity_adjoint.assign(n, 0.0);
  vjp.seed.resize(n);
  vjp.pose_sum.assign(n, Spatial{});
  vjp.velocity_sum.assign(n, Spatial{});
  vjp.rotation_sum.assign(n, Vec3{});
  vjp.acceleration.resize(n);
  vjp.seed_motion.resize(n);
  vjp.force_adjoint.assign(n, Spatial{});
  vjp.acceleration_adjoint.assign(n, Spatial{});
  vjp.velocity_adjoint_sum.assign(n, Spatial{});
  vjp.external_sum.assign(n, Vec3{});

  // 1. Forward kinematics at the end of the step. Body k's pose adjoint (p̄, θ̄) as the wrench
  // P = (θ̄ + c × p̄, p̄) and its velocity adjoint (v̄, ω̄) as W = (ω̄ + c × v̄, v̄): then
  // ∂/∂q̇'_j = S_j·ΣW and ∂/∂q'_j = S_j·ΣP − (S_j × V_j)·ΣW − a_j·Σ(v̄ × v + ω̄ × ω) over j's subtree.
  for (std::size_t k = n; k-- > 0;) {
    const rigid::ArticulatedLink& link = record.links[k];
    const std::size_t o = 12 * static_cast<std::size_t>(link.body);
    const Vec3 position_bar = read3(next_state_adjoint, o), rotation_bar = read3(next_state_adjoint, o + 3);
    const Vec3 linear_bar = read3(next_state_adjoint, o + 6), angular_bar = read3(next_state_adjoint, o + 9);
    vjp.pose_sum[k] += Spatial{rotation_bar + cross(link.end_com, position_bar), position_bar};
    vjp.velocity_sum[k] += Spatial{angular_bar + cross(link.end_com, linear_bar), linear_bar};
    const Vec3 end_linear_velocity = point_velocity(link.end_velocity, link.end_com);
    vjp.rotation_sum[k] += cross(linear_bar, end_linear_velocity) + cross(angular_bar, link.end_velocity.angular);
    const Spatial& subspace = link.end_motion_subspace;
    vjp.velocity_adjoint[k] = dot(subspace, vjp.velocity_sum[k]);
    vjp.position_adjoint[k] = dot(subspace, vjp.pose_sum[k]) -
                              dot(cross_motion(subspace, link.end_velocity), vjp.velocity_sum[k]) -
                              (link.revolute ? dot(subspace.angular, vjp.rotation_sum[k]) : 0.0);
    if (link.parent >= 0) {
      const auto p = static_cast<std::size_t>(link.parent);
      vjp.pose_sum[p] += vjp.pose_sum[k];
      vjp.velocity_sum[p] += vjp.velocity_sum[k];
      vjp.rotation_sum[p] += vjp.rotation_sum[k];
    }
  }

  // 2. q' = q + h q̇', q̇' = q̇ + h q̈: the adjoint of q̇' is g = q̇̄' + h q̄'; y = h M⁻¹ g.
  for (std::size_t k = 0; k < n; ++k) {
    vjp.velocity_adjoint[k] += h * vjp.position_adjoint[k];
    vjp.seed[k] = h * vjp.velocity_adjoint[k];
  }
  rigid::solve_mass_matrix(record, vjp.seed);
  add_servo_adjoints(model, params, controls, record, h, vjp, control_adjoint, param_adjoint);
  for (std::size_t a = 0; a < controls.size(); ++a) {
    if (model.actuators[a].type != ActuatorType::Motor) continue;
    const double y = vjp.seed[static_cast<std::size_t>(rigid::actuator_link(record, model, a))];
    const int clip = rigid::motor_clip_side(controls[a], params.at(layout.actuator_max_torque[a]));
    if (clip == 0)
      control_adjoint[a] += y;
    else if (parameters)
      add_param(param_adjoint, layout.actuator_max_torque[a], clip * y);
  }

  // 3. Φ = yᵀ ID(q, q̇, q̈; θ) = Σ_k Y_k·f_k + Σ_k y_k d_k q̇_k with Y_k = Y_parent + S_k y_k,
  // f_k = I A + V ×* I V + D V − f_ext; (q̄, q̇̄, θ̄) −= ∂Φ.
  for (std::size_t k = 0; k < n; ++k) {
    const rigid::ArticulatedLink& link = record.links[k];
    const double q_acceleration = record.acceleration[k];
    const Spatial joint_acceleration = link.motion_subspace * q_acceleration;
    const Spatial joint_seed = link.motion_subspace * vjp.seed[k];
    if (link.parent >= 0) {
      const auto p = static_cast<std::size_t>(link.parent);
      // A = A_bias + Σ_path S q̈ (q̈ enters linearly); the parent's A already holds its path.
      vjp.acceleration[k] = link.bias_acceleration - record.links[p].bias_acceleration + vjp.acceleration[p] + joint_acceleration;
      vjp.seed_motion[k] = vjp.seed_motion[p] + joint_seed;
    } else {
      vjp.acceleration[k] = link.bias_acceleration + joint_acceleration;
      vjp.seed_motion[k] = joint_seed;
    }
  }
  for (std::size_t k = n; k-- > 0;) {
    const rigid::ArticulatedLink& link = record.links[k];
    const Spatial& Y = vjp.seed_motion[k];
    const Spatial& V = link.velocity;
    const Spatial& A = vjp.acceleration[k];
    const Spatial& momentum = link.momentum;
    const Spatial seed_cross_velocity = cross_motion(Y, V);
    // Ȳ_k = F_k (the subtree's force), Ā_k = Σ I Y, V̄_k, and the external forces' free vectors.
    vjp.force_adjoint[k] += link.inertia.apply(A) + cross_force(V, momentum);
    vjp.acceleration_adjoint[k] += link.inertia.apply(Y);
    vjp.velocity_adjoint_sum[k] += link.inertia.apply(seed_cross_velocity) - cross_force(Y, momentum);
    if (link.loaded) {
      const rigid::LinkLoads& loads = record.loads[k];
      const Spatial external{loads.external_torque + cross(link.com, loads.external_force), loads.external_force};
      vjp.force_adjoint[k] += loads.damping.apply(V) - external;
      vjp.velocity_adjoint_sum[k] += loads.damping.apply(Y);
      vjp.external_sum[k] -=
          cross(loads.external_force, point_velocity(Y, link.com)) + cross(loads.external_torque, Y.angular);
    }

    const Spatial& S = link.motion_subspace;
    const double q_rate = record.velocity[k];
    const Spatial parent_velocity = link.parent >= 0 ? record.links[static_cast<std::size_t>(link.parent)].velocity : Spatial{};
    const double joint_damping = params.at(layout.joint_damping[static_cast<std::size_t>(link.joint)]);
    // −∂Φ/∂q_k by the invariance identity of the header (stage 3).
    const double minus_dPhi_dq = dot(cross_motion(S, Y), vjp.force_adjoint[k]) + dot(cross_motion(S, V), vjp.velocity_adjoint_sum[k]) +
                           dot(cross_motion(S, A), vjp.acceleration_adjoint[k]) +
                           (link.revolute ? dot(S.angular, vjp.external_sum[k]) : 0.0);
    vjp.position_adjoint[k] += minus_dPhi_dq;
    vjp.velocity_adjoint[k] -= dot(S, vjp.velocity_adjoint_sum[k]) +
                               dot(cross_motion(parent_velocity, S), vjp.acceleration_adjoint[k]) +
                               vjp.seed[k] * joint_damping;

    if (parameters) add_parameter_adjoints(model, params, link, Y, A, seed_cross_velocity, vjp.seed[k], q_rate, param_adjoint);
    if (link.parent >= 0) {
      const auto p = static_cast<std::size_t>(link.parent);
      vjp.force_adjoint[p] += vjp.force_adjoint[k];
      vjp.acceleration_adjoint[p] += vjp.acceleration_adjoint[k];
      vjp.velocity_adjoint_sum[p] += vjp.velocity_adjoint_sum[k] + cross_force(S * q_rate, vjp.acceleration_adjoint[k]);
      vjp.external_sum[p] += vjp.external_sum[k];
    } else if (parameters) {
      // The base's acceleration is −g (gravity as an upward acceleration of the world).
      add_param3(param_adjoint, layout.gravity, vjp.acceleration_adjoint[k].linear);
    }
  }

  // 4. The coordinates read from x_t (articulated.cpp's read_coordinate, reversed).
  for (std::size_t k = 0; k < n; ++k) {
    const rigid::ArticulatedLink& link = record.links[k];
    const Joint& joint = model.joints[static_cast<std::size_t>(link.joint)];
    const auto p = static_cast<std::size_t>(joint.parent), c = static_cast<std::size_t>(joint.child);
    const std::size_t op = 12 * p, oc = 12 * c;
    const double q_bar = vjp.position_adjoint[k], rate_bar = vjp.velocity_adjoint[k];
    const Vec3 axis = state_in.orientation[p].rotate(joint.axis_parent);
    const Vec3& omega_p = state_in.angular_velocity[p];
    const Vec3& omega_c = state_in.angular_velocity[c];
    if (link.revolute) {
      // q: δq = a·(δθ_c − δθ_p) on the joint manifold; q̇ = a·(ω_c − ω_p), a turning with the parent.
      add3(state_adjoint, oc + 3, axis * q_bar);
      add3(state_adjoint, op + 3, axis * -q_bar + cross(axis, omega_c - omega_p) * rate_bar);
      add3(state_adjoint, oc + 9, axis * rate_bar);
      add3(state_adjoint, op + 9, axis * -rate_bar);
      continue;
    }
    // Prismatic: q = a·sep, q̇ = a·(v_c − v_p) + ω_c·(r_c × a) + ω_p·(a × sep − r_p × a).
    const Vec3 r_p = state_in.orientation[p].rotate(joint.anchor_parent);
    const Vec3 r_c = state_in.orientation[c].rotate(joint.anchor_child);
    const Vec3 separation = state_in.position[c] + r_c - state_in.position[p] - r_p;
    const Vec3 relative_velocity = state_in.linear_velocity[c] - state_in.linear_velocity[p];
    const Vec3 turning = cross(omega_p, axis);  // n = ω_p × a, the rate of the axis
    add3(state_adjoint, oc, axis * q_bar + turning * rate_bar);
    add3(state_adjoint, op, axis * -q_bar - turning * rate_bar);
    add3(state_adjoint, oc + 3,
         cross(r_c, axis) * q_bar + (cross(r_c, cross(axis, omega_c)) + cross(r_c, turning)) * rate_bar);
    add3(state_adjoint, op + 3,
         (cross(axis, separation) - cross(r_p, axis)) * q_bar +
             (cross(axis, relative_velocity) + cross(axis, cross(omega_c, r_c)) + cross(axis, cross(separation, omega_p)) -
              cross(r_p, turning) - cross(r_p, cross(axis, omega_p)) - cross(axis, cross(omega_p, r_p))) *
                 rate_bar);
    add3(state_adjoint, oc + 6, axis * rate_bar);
    add3(state_adjoint, op + 6, axis * -rate_bar);
    add3(state_adjoint, oc + 9, cross(r_c, axis) * rate_bar);
    add3(state_adjoint, op + 9, (cross(axis, separation) - cross(r_p, axis)) * rate_bar);
  }
}

}  // namespace diffphys::adjoint
