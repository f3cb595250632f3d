// collision/narrow_phase.hpp — contact points between two posed primitive shapes.
//
// Pure geometry: no Model, no Params. The caller (collision/detect_contacts.cpp) poses each
// shape in the world and passes its sizes. Every function here is deterministic, allocates
// nothing, and reports at most kMaxPairContacts points per pair (fewer if asked).
//
// The narrow phase is a template on the scalar T so that the backward pass can run it on
// dual numbers (adjoint/contact_geometry.hpp) and read off exact derivatives of a contact's
// position, normal and gap. Every discrete decision (which pair case, which feature, which
// points survive clipping and reduction) is taken on the values, so a dual evaluation takes
// the branches the double one takes and differentiates the geometry of that fixed contact
// set. PosedShape, ContactPoint (T = double) are what the forward simulation uses; collide
// is instantiated in narrow_phase.cpp for double and Dual<18> only.
#pragma once

#include "diffphys/math.hpp"
#include "diffphys/model.hpp"

namespace diffphys::collision {

// Room for the points of one pair: a face–face manifold of two boxes has up to 8 vertices.
inline constexpr int kMaxPairContacts = 8;

// How many of a manifold's points a pair keeps (contact_kernels.hpp keep_spanning_points).
// The complementarity formulation keeps 4: every further point of a flat manifold is a
// redundant row that makes its LCP more degenerate and its solve dearer. The convex one keeps
// every point up to kMaxPairContacts: redundant rows leave its solution unique, and keeping
// all of a box–box octagon keeps the contact set a continuous function of the poses, where
// a choice of 4 of the 8 jumps (examples/scenes/box_stack.json's gradcheck).
inline int pair_contact_limit(const SolverSettings& solver) {
  return solver.formulation == Formulation::Convex ? kMaxPairContacts : 4;
}

// A shape placed in the world. size: sphere (radius, 0, 0); box (half extents);
// capsule (radius, half_length, 0) with the segment along the frame's z axis;
// plane: unused (the plane passes through `position` with normal = rotation's z column);
// convex mesh (scale, 0, 0), the hull being *mesh (owned by the Model) in the shape frame.
template <typename T>
struct PosedShapeT {
  ShapeType type = ShapeType::Sphere;
  Vec3T<T> position;     // world, m
  QuatT<T> orientation;  // shape frame → world
  Mat3T<T> rotation;     // the same rotation as a matrix (kept in sync by the caller)
  Vec3T<T> size;
  const ConvexMesh* mesh = nullptr;  // convex mesh shapes only
};
using PosedShape = PosedShapeT<double>;

// One point of contact. Conventions shared by every pair function:
// - normal: unit, world, pointing from shape b towards shape a (a is pushed along +normal);
// - gap: signed distance between the surfaces along the normal (negative = penetration);
// - position: the point midway between the two closest surface points;
// - feature: a small integer that stays the same while the same features touch (e.g. box
//   vertex index, face index × 16 + clipped-vertex index), so contacts can be matched
//   from step to step.
template <typename T>
struct ContactPointT {
  Vec3T<T> position;
  Vec3T<T> normal;
  T gap = T(0.0);
  int feature = 0;
};
using ContactPoint = ContactPointT<double>;

// Writes the contacts of shapes a and b whose gap is below `margin` into out[0..n) and
// returns n (0..max_points ≤ kMaxPairContacts; pair_contact_limit gives the model's).
// Handles every pair of {sphere, box, capsule, plane, convex mesh} in either order except
// plane–plane (returns 0). Defined for T = double and T = Dual<18>.
template <typename T>
int collide(const PosedShapeT<T>& a, const PosedShapeT<T>& b, double margin, ContactPointT<T> out[kMaxPairContacts],
            int max_points);

// A world-space axis-aligned box (bounding_box, collision/broad_phase.hpp; convex meshes').
struct Aabb {
  Vec3 lower, upper;
};

}  // namespace diffphys::collision
