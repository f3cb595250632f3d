// collision/convex_mesh_contacts.hpp — the narrow phase's pairs with a convex mesh: against a
// plane, a sphere, a capsule, a box and another mesh. Internal to the collision stage;
// collide() (collision/narrow_phase.cpp) dispatches here, in its canonical argument order
// (sphere < capsule < box < convex mesh < plane), and conventions are those of
// collision/narrow_phase.hpp: the normal points from b towards a. Defined for T = double and
// T = Dual<18>.
#pragma once

#include "collision/contact_kernels.hpp"
#include "collision/narrow_phase.hpp"

namespace diffphys::collision::detail {

template <typename T>
void convex_mesh_plane(const PosedShapeT<T>& mesh, const PosedShapeT<T>& plane, double margin,
                       ContactWriter<T>& contacts);
template <typename T>
void sphere_convex_mesh(const PosedShapeT<T>& sphere, const PosedShapeT<T>& mesh, double margin,
                        ContactWriter<T>& contacts);
template <typename T>
void capsule_convex_mesh(const PosedShapeT<T>& capsule, const PosedShapeT<T>& mesh, double margin,
                         ContactWriter<T>& contacts);
// a and b are each a box or a convex mesh.
template <typename T>
void polyhedron_polyhedron(const PosedShapeT<T>& a, const PosedShapeT<T>& b, double margin, ContactWriter<T>& contacts);

// World-space bounding box of a posed convex mesh, grown by `margin`.
Aabb convex_mesh_bounding_box(const PosedShape& mesh, double margin);

}  // namespace diffphys::collision::detail
