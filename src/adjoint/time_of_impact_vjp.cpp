// adjoint/time_of_impact_vjp.cpp — see time_of_impact_vjp.hpp.
#include "adjoint/time_of_impact_vjp.hpp"

#include "adjoint/step_vjp.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::adjoint {

using solve::add_vec3;
using solve::read_vec3;

void time_of_impact_integrate_vjp(const Model& model, std::span<const double> velocity,
                                  std::span<const double> free_velocity, const rigid::ImpactRecord& impacts,
                                  std::span<const double> pose_adjoint, std::span<double> state_adjoint,
                                  std::span<double> velocity_adjoint, std::span<double> free_velocity_adjoint,
                                  std::span<double> contact_time_adjoint) {
  if (!impacts.any) return;
  const double h = model.dt;
  for (std::size_t b = 0; b < impacts.body_contact.size(); ++b) {
    const int contact = impacts.body_contact[b];
    if (contact < 0) continue;
    const double before = impacts.body_time[b], after = h - before;
    const int o = static_cast<int>(6 * b);
    const auto t = static_cast<int>(kBodyTangent * b);
    const Vec3 position_adjoint = read_vec3(pose_adjoint, o), rotation_adjoint = read_vec3(pose_adjoint, o + 3);
    const Vec3 linear = read_vec3(velocity, o), angular = read_vec3(velocity, o + 3);
    const Vec3 free_linear = read_vec3(free_velocity, o), free_angular = read_vec3(free_velocity, o + 3);
    double time_adjoint = dot(position_adjoint, free_linear - linear);
    add_vec3(state_adjoint, t, position_adjoint);
    add_vec3(free_velocity_adjoint, o, position_adjoint * before);
    add_vec3(velocity_adjoint, o, position_adjoint * after);
    // q̃ = exp(φ_A) exp(φ_B) q.
    const Vec3 solved_rotation = angular * after, free_rotation = free_angular * before;
    const Mat3 rotation_a = Quat::from_rotation_vector(solved_rotation).to_matrix();
    const Mat3 rotation_b = Quat::from_rotation_vector(free_rotation).to_matrix();
    const Vec3 through_a = rotation_a.transpose_times(rotation_adjoint);  // R_Aᵀ θ̃̄
    add_vec3(state_adjoint, t + 3, rotation_b.transpose_times(through_a));
    const Vec3 solved_adjoint = left_jacobian(solved_rotation).transpose_times(rotation_adjoint);  // φ̄_A
    const Vec3 free_adjoint = left_jacobian(free_rotation).transpose_times(through_a);             // φ̄_B
    add_vec3(velocity_adjoint, o + 3, solved_adjoint * after);
    add_vec3(free_velocity_adjoint, o + 3, free_adjoint * before);
    time_adjoint += dot(free_angular, free_adjoint) - dot(angular, solved_adjoint);
    contact_time_adjoint[static_cast<std::size_t>(contact)] += time_adjoint;
  }
}

ImpactTargetAdjoint impact_target_vjp(double gap, double start_speed, double free_speed, double restitution, double dt,
                                      double target_adjoint, double time_adjoint) {
  const rigid::ImpactTarget target = rigid::impact_target(gap, start_speed, free_speed, restitution, dt);
  ImpactTargetAdjoint out;
  out.gap = target_adjoint * target.d_gap + time_adjoint * target.time_d_gap;
  out.start_speed = target_adjoint * target.d_start_speed;
  out.free_speed = target_adjoint * target.d_free_speed + time_adjoint * target.time_d_free_speed;
  out.restitution = target_adjoint * target.d_restitution;
  return out;
}

}  // namespace diffphys::adjoint
