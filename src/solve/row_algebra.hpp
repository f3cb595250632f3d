// solve/row_algebra.hpp — the few products with constraint rows every solver needs:
// J_i v, the columns M⁻¹J_iᵀ, the entries of the Delassus matrix A = J M⁻¹ Jᵀ.
// Velocities are stored 6 per body: linear (3) then angular (3), world frame.
#pragma once

#include <span>

#include "solve/mlcp.hpp"

namespace diffphys::solve {

inline Vec3 read_vec3(std::span<const double> values, int offset) {
  const auto i = static_cast<std::size_t>(offset);
  return {values[i], values[i + 1], values[i + 2]};
}
inline void add_vec3(std::span<double> values, int offset, const Vec3& v) {
  const auto i = static_cast<std::size_t>(offset);
  values[i] += v.x;
  values[i + 1] += v.y;
  values[i + 2] += v.z;
}

// J_i v.
inline double row_times_velocity(const ConstraintRow& row, std::span<const double> velocity) {
  const int a = 6 * row.body_a, b = 6 * row.body_b;
  return dot(row.linear_a, read_vec3(velocity, a)) + dot(row.angular_a, read_vec3(velocity, a + 3)) +
         dot(row.linear_b, read_vec3(velocity, b)) + dot(row.angular_b, read_vec3(velocity, b + 3));
}

inline RowResponse row_response(const ConstraintRow& row, const MassBlocks& mass) {
  const auto a = static_cast<std::size_t>(row.body_a), b = static_cast<std::size_t>(row.body_b);
  return {row.linear_a * mass.inverse_mass[a], mass.inverse_inertia[a] * row.angular_a,
          row.linear_b * mass.inverse_mass[b], mass.inverse_inertia[b] * row.angular_b};
}

// v += M⁻¹ J_iᵀ · impulse.
inline void apply_response(const ConstraintRow& row, const RowResponse& response, double impulse,
                           std::span<double> velocity) {
  const int a = 6 * row.body_a, b = 6 * row.body_b;
  add_vec3(velocity, a, response.linear_a * impulse);
  add_vec3(velocity, a + 3, response.angular_a * impulse);
  add_vec3(velocity, b, response.linear_b * impulse);
  add_vec3(velocity, b + 3, response.angular_b * impulse);
}

// y += J_iᵀ s (a generalised force, 6 per body).
inline void add_row_transpose(const ConstraintRow& row, double s, std::span<double> y) {
  add_vec3(y, 6 * row.body_a, row.linear_a * s);
  add_vec3(y, 6 * row.body_a + 3, row.angular_a * s);
  add_vec3(y, 6 * row.body_b, row.linear_b * s);
  add_vec3(y, 6 * row.body_b + 3, row.angular_b * s);
}

// x ← M⁻¹ y (6 per body); x and y may be the same span.
inline void apply_inverse_mass(const MassBlocks& mass, std::span<const double> y, std::span<double> x) {
  for (std::size_t b = 0; b < mass.inverse_mass.size(); ++b) {
    const int o = static_cast<int>(6 * b);
    const Vec3 linear = read_vec3(y, o) * mass.inverse_mass[b];
    const Vec3 angular = mass.inverse_inertia[b] * read_vec3(y, o + 3);
    for (int k = 0; k < 3; ++k) {
      x[static_cast<std::size_t>(o + k)] = linear[k];
      x[static_cast<std::size_t>(o + 3 + k)] = angular[k];
    }
  }
}

// A_ij = J_i M⁻¹ J_jᵀ: the bodies the two rows share.
inline double delassus_entry(const ConstraintRow& row_i, const ConstraintRow& row_j, const RowResponse& response_j) {
  double sum = 0.0;
  if (row_i.body_a == row_j.body_a)
    sum += dot(row_i.linear_a, response_j.linear_a) + dot(row_i.angular_a, response_j.angular_a);
  if (row_i.body_a == row_j.body_b)
    sum += dot(row_i.linear_a, response_j.linear_b) + dot(row_i.angular_a, response_j.angular_b);
  if (row_i.body_b == row_j.body_a)
    sum += dot(row_i.linear_b, response_j.linear_a) + dot(row_i.angular_b, response_j.angular_a);
  if (row_i.body_b == row_j.body_b)
    sum += dot(row_i.linear_b, response_j.linear_b) + dot(row_i.angular_b, response_j.angular_b);
  return sum;
}


}  // namespace diffphys::solve
