// collision/box_features.hpp — one contact point of a box pair (box–box or box–plane)
// evaluated again from its feature id alone, for the backward pass.
//
// The narrow phase (narrow_phase.cpp: box_box, box_plane) reaches each point through
// discrete decisions: the separating-axis test over 15 axes, the reference and incident
// faces, Sutherland–Hodgman clipping, the manifold reduction. The feature id it records
// names the result of all of them (narrow_phase.cpp documents the numbering), so the point
// is a smooth function of the two poses and sizes that can be evaluated directly: an
// incident vertex, an incident edge crossing a side plane of the reference face, a
// reference corner's line crossing the incident face, two edges' closest points, or a
// vertex's closest point on the other box. On Dual<18> this gives the derivatives the
// whole dual narrow phase would give at a fraction of its cost (the separating-axis test
// on dual numbers was half of a box tower's backward pass).
//
// Same conventions as collide (narrow_phase.hpp): either argument order, the normal pointing
// from b towards a. Returns false for a pair or feature it does not cover (pairs without a
// box, box–mesh, the clipping points of parallel side planes that only rounding makes, and
// edge–edge points clamped to an edge's end); the caller then runs the whole narrow phase. Defined for T = double and T = Dual<18>.
#pragma once

#include "collision/narrow_phase.hpp"

namespace diffphys::collision {

template <typename T>
bool box_contact_from_feature(const PosedShapeT<T>& a, const PosedShapeT<T>& b, int feature, ContactPointT<T>& point);

}  // namespace diffphys::collision
