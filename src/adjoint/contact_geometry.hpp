// adjoint/contact_geometry.hpp — exact derivatives of one contact's geometry (position,
// normal, gap) with respect to the two body poses and the two shape sizes, for the
// backward pass.
//
// The contact's geometry is differentiated at the state that produced the contact, its
// feature held: in closed form on doubles for a sphere against a sphere, plane or box
// (contact_geometry.cpp), a box's face contact and a capsule's end on a plane
// (contact_tangents.hpp); on Dual<18> from the feature id alone for a box–box edge pair or
// closest pair (collision/box_features.hpp); otherwise by re-running the narrow phase
// (collision/narrow_phase.hpp) on dual numbers, its discrete decisions taken on the values.
// The contact set is so held fixed and the derivatives are those of the smooth geometry of
// that feature pair.
//
// Inputs, in this order (the 18 columns of every Jacobian row):
//   [0, 3)   δp_a: translation of shape a's body, world, m
//   [3, 6)   δθ_a: rotation of shape a's body, world-frame rotation vector, rad
//   [6, 9)   δp_b, [9, 12) δθ_b: the same for shape b's body
//   [12, 15) sizes of shape a as in PosedShape::size (sphere: radius; box: half extents;
//            capsule: radius, half length; convex mesh: scale; entries a shape does not
//            have stay 0)
//   [15, 18) sizes of shape b
// Tangent convention: p' = p + δp, q' = exp(δθ) ⊗ q — δθ is a world-frame rotation applied
// to the body, and shapes follow their body rigidly (shape pose = body pose ∘ local pose).
// Sizes are the Params entries at model.layout.shape_size.
#pragma once

#include "collision/narrow_phase.hpp"
#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "math/dual.hpp"

namespace diffphys::adjoint {

inline constexpr int kContactGeometryInputs = 18;
// First column of each input block.
inline constexpr int kBodyATranslationInput = 0;
inline constexpr int kBodyARotationInput = 3;
inline constexpr int kBodyBTranslationInput = 6;
inline constexpr int kBodyBRotationInput = 9;
inline constexpr int kShapeASizeInput = 12;
inline constexpr int kShapeBSizeInput = 15;

struct ContactGeometryJacobian {
  double position[3][kContactGeometryInputs] = {};  // ∂ position_i / ∂ input_j, world
  double normal[3][kContactGeometryInputs] = {};    // ∂ normal_i / ∂ input_j, world
  double gap[kContactGeometryInputs] = {};          // ∂ gap / ∂ input_j
  bool found = false;
};

// One shape of a contact posed as the forward pass posed it, with the columns of its inputs
// (shape a's or shape b's of contact_geometry.hpp).
struct ContactShapeFrame {
  ShapeType type = ShapeType::Sphere;
  Vec3 center;     // the shape's origin (a box's centre; a point of a plane)
  Vec3 axis[3];    // its frame's axes, world
  Vec3 half;       // a box's half extents
  Vec3 body_origin;
  int pose_first = 0;  // δp at [pose_first, +3), δθ at [pose_first + 3, +3)
  int size_first = 0;  // δh at [size_first, +3)
};
ContactShapeFrame contact_shape_frame(const Model& model, const Params& params, const State& state, int shape_index,
                                      bool is_shape_a);

// Evaluates `contact` (its shape_a, shape_b and feature) at `state` (see above) and returns
// the derivatives of that contact's position, normal and gap.
// found = false (and all derivatives 0) when the pair no longer produces that feature —
// which does not happen at the state that produced the contact, except at an exact tie
// that one rounding of the dual arithmetic can flip.
ContactGeometryJacobian contact_geometry_jacobian(const Model& model, const Params& params,
                                                  const State& state, const Contact& contact);

// The same, always through the whole dual narrow phase, which the shortcuts above replace;
// tests compare them.
ContactGeometryJacobian contact_geometry_jacobian_dual(const Model& model, const Params& params,
                                                       const State& state, const Contact& contact);

// The Jacobians of the contacts found at one state, for the backward pass of a step. The
// points of one shape pair (a manifold, adjacent in the step's contact list) share the
// pair's posing on dual numbers and, for pairs that need it, one dual run of the narrow
// phase, where contact_geometry_jacobian repeats both per point. Same results as
// contact_geometry_jacobian.
// Holds references to its arguments; allocates nothing.
class ContactGeometryAtState {
 public:
  ContactGeometryAtState(const Model& model, const Params& params, const State& state)
      : model_(model), params_(params), state_(state) {}
  // Valid until the next call.
  const ContactGeometryJacobian& jacobian(const Contact& contact);

 private:
  const Model& model_;
  const Params& params_;
  const State& state_;
  int frames_shape_a_ = -1, frames_shape_b_ = -1;  // the pair posed on doubles (box closed forms)
  ContactShapeFrame frame_a_, frame_b_;
  int shape_a_ = -1, shape_b_ = -1;  // the pair posed on dual numbers and run below
  collision::PosedShapeT<Dual<kContactGeometryInputs>> posed_a_, posed_b_;
  int count_ = -1;  // points of the pair's dual narrow phase; −1 until it is run
  int features_[collision::kMaxPairContacts] = {};
  ContactGeometryJacobian pair_[collision::kMaxPairContacts];
  ContactGeometryJacobian single_;  // a closed form, or a feature the kept run lacks
};

}  // namespace diffphys::adjoint
