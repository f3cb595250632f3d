// adjoint/friction_basis_vjp.hpp — the backward pass of rigid/friction_basis.hpp: from the
// adjoints of a friction pyramid's (t₁, t₂) to those of the contact normal and of the free
// motion's relative velocity at the contact.
//
// Sliding, the friction impulse μλ_n·d lies on the pyramid's vertex against the slip, so it
// turns with the slip: t₁ = s/|s|, s = (I − n nᵀ) v_rel, is differentiated in full.
// Sticking, v⁺ does not depend on how the pyramid is turned in its plane (the tangential
// velocity is held at 0 in every direction, adjoint/lcp_vjp.hpp), so that turn's adjoint is 0
// exactly; computed, it would be the solve's round-off divided by |s|, large at small slips.
// The slip's direction ŝ is then held as a constant vector, and t₁ = (I − n nᵀ)ŝ/|…| only tilts
// with the normal: at ŝ ⊥ n, δt₁ = −n (δn·t₁) and δt₂ = −n (δn·t₂), no turn in the plane.
// The fixed basis (slips below kAlignmentSlip) depends on the normal only, as before.
#pragma once

#include "diffphys/math.hpp"

namespace diffphys::adjoint {

struct FrictionBasisAdjoint {
  Vec3 normal;             // n̄
  Vec3 relative_velocity;  // v̄_rel (0 unless the slip's direction is followed)
};

// normal, relative_velocity: the forward's inputs of rigid::friction_basis; the adjoints of
// its outputs t₁, t₂. sliding: the contact's friction group slides (its Bound row holds,
// γ > 0), and the slip's direction is differentiated; otherwise it is held (above).
FrictionBasisAdjoint friction_basis_vjp(const Vec3& normal, const Vec3& relative_velocity, const Vec3& tangent1_adjoint,
                                        const Vec3& tangent2_adjoint, bool sliding);

}  // namespace diffphys::adjoint
