// collision/ellipsoid_contacts.hpp — the narrow phase's pairs with an ellipsoid: against a
// plane, a sphere, a capsule (and a cylinder, which collides as one), a box, a convex mesh
// and another ellipsoid. Internal to the collision stage; collide() (narrow_phase.cpp)
// dispatches here with the ellipsoid first, and the conventions are those of
// collision/narrow_phase.hpp (the normal points from b, the other shape, towards a).
// Defined for T = double and T = Dual<18>.
#pragma once

#include "collision/contact_kernels.hpp"
#include "collision/narrow_phase.hpp"

namespace diffphys::collision::detail {

// One contact point at most: an ellipsoid is strictly convex, so it touches any convex shape
// at one point.
template <typename T>
void ellipsoid_contact(const PosedShapeT<T>& ellipsoid, const PosedShapeT<T>& other, double margin,
                       ContactWriter<T>& contacts);

// Half extents along the world axes of a posed ellipsoid's bounding box:
// sqrt(Σ_k (R_ik a_k)²) on axis i.
Vec3 ellipsoid_extent(const PosedShape& ellipsoid);

}  // namespace diffphys::collision::detail
