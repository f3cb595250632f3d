// rigid/friction_basis.hpp — the tangent basis (t₁, t₂) of a contact's friction pyramid.
//
// The K friction directions d_k = cos θ_k t₁ + sin θ_k t₂ (θ_k = 2πk/K) bound the friction
// impulse to a regular K-gon inscribed in Coulomb's circle of radius μλ_n (Stewart & Trinkle
// 1996): towards a vertex it reaches μλ_n, midway between two vertices only cos(π/K)·μλ_n
// (1/√2 for K = 4). In a basis fixed by the normal alone, friction therefore depends on the
// heading of the slip: a box sliding along a diagonal of the basis met 29 % less friction.
//
// So t₁ is the direction of the contact's tangential slip under the free motion,
//   s = (I − n nᵀ)(v_a + ω_a × o_a − v_b − ω_b × o_b)   (v_free, o = contact point − centre),
// the slip friction must stop (sticking) or oppose (sliding): the pyramid has a vertex exactly
// against it, where the polygon and the circle agree. For a contact whose tangential Delassus
// block is isotropic (a sphere; a box translating on a face) the step's answer is then that of
// the circular cone exactly — stick if the impulse that stops s is within μλ_n, otherwise
// μλ_n against s — whatever the heading. t₂ = n × t₁ keeps (t₁, t₂, n) right-handed.
//
// Below kAlignmentSlip the slip has no meaningful direction (a body at rest carries round-off
// velocities), and the basis falls back to orthonormal_basis(n), fixed by the normal. Any
// slip that small is stopped by friction unless λ_n ≈ 0 (no friction either way), and a
// sticking contact's v⁺ does not depend on how the pyramid is turned, so the switch leaves the
// step continuous. Templated on the scalar so that the backward pass differentiates the same
// expressions on dual numbers (adjoint/friction_basis_vjp.hpp).
#pragma once

#include <span>

#include "diffphys/math.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::rigid {

// m/s: slips below this fall back to the fixed basis (see above).
inline constexpr double kAlignmentSlip = 1e-9;

// Writes the pyramid's (t₁, t₂) for a contact with this normal (unit, from b to a) and this
// relative velocity of the free motion at the contact point; returns true if t₁ follows the
// slip, false if the basis is the fixed one.
template <typename T>
bool friction_basis(const Vec3T<T>& normal, const Vec3T<T>& relative_velocity, Vec3T<T>& tangent1,
                    Vec3T<T>& tangent2) {
  const Vec3T<T> slip = relative_velocity - normal * dot(normal, relative_velocity);
  const T slip_speed = norm(slip);
  if (!(slip_speed > T(kAlignmentSlip))) {
    orthonormal_basis(normal, tangent1, tangent2);
    return false;
  }
  tangent1 = slip / slip_speed;
  tangent2 = cross(normal, tangent1);
  return true;
}

// v_a + ω_a × o_a − v_b − ω_b × o_b at the contact point, from a velocity vector of 6 per body
// (linear, angular; m/s, rad/s) such as v_free; offsets o = contact point − body centre (m).
inline Vec3 contact_relative_velocity(std::span<const double> velocity, int body_a, int body_b, const Vec3& offset_a,
                                      const Vec3& offset_b) {
  return solve::read_vec3(velocity, 6 * body_a) + cross(solve::read_vec3(velocity, 6 * body_a + 3), offset_a) -
         solve::read_vec3(velocity, 6 * body_b) - cross(solve::read_vec3(velocity, 6 * body_b + 3), offset_b);
}

}  // namespace diffphys::rigid
