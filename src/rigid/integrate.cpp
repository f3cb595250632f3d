// rigid/integrate.cpp — see integrate.hpp.
#include "rigid/integrate.hpp"

#include <algorithm>
#include <cmath>

#include "rigid/joints.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::rigid {
namespace {

// q / |q| with one division (Quat::normalized divides each component): the joint projection
// renormalises every body's orientation on each of its iterations.
Quat unit(const Quat& q) {
  const double inverse_norm = 1.0 / std::sqrt(q.squared_norm());
  return {q.w * inverse_norm, q.x * inverse_norm, q.y * inverse_norm, q.z * inverse_norm};
}

}  // namespace

void integrate(const Model& model, const State& state_in, std::span<const double> velocity, State& state_out) {
  const double h = model.dt;
  state_out.time = state_in.time + h;
  for (std::size_t b = 0; b < state_in.position.size(); ++b) {
    const Vec3 linear = solve::read_vec3(velocity, static_cast<int>(6 * b));
    const Vec3 angular = solve::read_vec3(velocity, static_cast<int>(6 * b + 3));
    if (model.bodies[b].type != BodyType::Dynamic) {
      state_out.position[b] = state_in.position[b];
      state_out.orientation[b] = state_in.orientation[b];
      state_out.linear_velocity[b] = state_in.linear_velocity[b];
      state_out.angular_velocity[b] = state_in.angular_velocity[b];
      continue;
    }
    state_out.linear_velocity[b] = linear;
    state_out.angular_velocity[b] = angular;
    state_out.position[b] = state_in.position[b] + linear * h;
    state_out.orientation[b] = (Quat::from_rotation_vector(angular * h) * state_in.orientation[b]).normalized();
  }
}

void integrate(const Model& model, const State& state_in, std::span<const double> velocity,
               std::span<const double> free_velocity, const ImpactRecord& impacts, State& state_out) {
  integrate(model, state_in, velocity, state_out);
  if (!impacts.any) return;
  const double h = model.dt;
  for (std::size_t b = 0; b < state_in.position.size(); ++b) {
    if (impacts.body_contact[b] < 0) continue;
    // Free motion until the impact at τ, the solved velocity after it.
    const double before = impacts.body_time[b], after = h - before;
    const int o = static_cast<int>(6 * b);
    state_out.position[b] = state_in.position[b] + solve::read_vec3(free_velocity, o) * before +
                            solve::read_vec3(velocity, o) * after;
    const Quat free_rotation = Quat::from_rotation_vector(solve::read_vec3(free_velocity, o + 3) * before);
    const Quat solved_rotation = Quat::from_rotation_vector(solve::read_vec3(velocity, o + 3) * after);
    state_out.orientation[b] = (solved_rotation * (free_rotation * state_in.orientation[b])).normalized();
  }
}

double stabilize_joints(const Model& model, std::span<const solve::ConstraintRow> joint_rows,
                        const solve::MassBlocks& mass, const solve::MlcpWorkspace* factorized, State& state,
                        StabilizationBuffers& buffers) {
  if (joint_rows.empty()) return 0.0;
  const std::size_t rows = joint_rows.size();
  buffers.errors.resize(rows);
  buffers.displacement.resize(6 * state.position.size());
  buffers.bodies.rotation.resize(state.orientation.size());
  // The factorisation of J_t M⁻¹ J_tᵀ: the velocity solve's if it is the same matrix.
  const solve::MlcpWorkspace& factors = factorized != nullptr ? *factorized : buffers.solver;
  bool ready = factorized != nullptr;
  double error = 0.0;
  for (int iteration = 0;; ++iteration) {
    for (std::size_t b = 0; b < state.orientation.size(); ++b) buffers.bodies.rotation[b] = state.orientation[b].to_matrix();
    error = joint_position_errors(model, state, buffers.bodies, buffers.errors);
    if (error <= model.solver.stabilization_tolerance || iteration >= model.solver.stabilization_iterations) break;
    if (!ready) {
      solve::compute_responses(joint_rows, mass, buffers.solver);
      if (!(ready = solve::envelope_factorize(joint_rows, mass, buffers.solver))) break;
    }
    for (double& e : buffers.errors) e = -e;
    solve::envelope_solve(factors, buffers.errors);  // now the correction impulses
    // Δq = M⁻¹J_tᵀ Δλ. A joint's rows are consecutive and share their two bodies: their
    // terms are summed in registers and each body's displacement is written once per joint
    // (rather than read, added and stored again for every row, a chain of store-to-load
    // dependencies).
    std::fill(buffers.displacement.begin(), buffers.displacement.end(), 0.0);
    for (std::size_t i = 0; i < rows;) {
      const int body_a = joint_rows[i].body_a, body_b = joint_rows[i].body_b;
      Vec3 linear_a, angular_a, linear_b, angular_b;
      for (; i < rows && joint_rows[i].body_a == body_a && joint_rows[i].body_b == body_b; ++i) {
        const solve::RowResponse& response = factors.responses[i];
        const double impulse = buffers.errors[i];
        linear_a += response.linear_a * impulse;
        angular_a += response.angular_a * impulse;
        linear_b += response.linear_b * impulse;
        angular_b += response.angular_b * impulse;
      }
      solve::add_vec3(buffers.displacement, 6 * body_a, linear_a);
      solve::add_vec3(buffers.displacement, 6 * body_a + 3, angular_a);
      solve::add_vec3(buffers.displacement, 6 * body_b, linear_b);
      solve::add_vec3(buffers.displacement, 6 * body_b + 3, angular_b);
    }
    const double inverse_dt = 1.0 / model.dt;  // multiplications, not six divisions per body
    for (std::size_t b = 0; b < state.position.size(); ++b) {
      if (model.bodies[b].type != BodyType::Dynamic) continue;
      const Vec3 translation = solve::read_vec3(buffers.displacement, static_cast<int>(6 * b));
      const Vec3 rotation = solve::read_vec3(buffers.displacement, static_cast<int>(6 * b + 3));
      state.position[b] += translation;
      state.orientation[b] = unit(Quat::from_rotation_vector(rotation) * state.orientation[b]);
      state.linear_velocity[b] += translation * inverse_dt;
      state.angular_velocity[b] += rotation * inverse_dt;
    }
  }
  return error;
}

}  // namespace diffphys::rigid
