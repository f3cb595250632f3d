// collision/detect_contacts.hpp — the collision stage of a step: pose every shape, find
// candidate pairs (broad phase; planes tested against every shape), filter them (same body,
// static–static, collision groups, bodies joined by a joint) and run the narrow phase.
// The discrete outcome — which pairs touch, with which features — is the contact set the
// backward pass holds fixed (DESIGN.md §1).
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "collision/broad_phase.hpp"
#include "collision/narrow_phase.hpp"
#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys::collision {

struct CollisionWorkspace {
  BroadPhase broad_phase;
  std::vector<PosedShape> posed;          // (nshape)
  std::vector<Aabb> boxes;                // (non-plane shapes)
  std::vector<int> box_shape;             // (non-plane shapes) shape index of each box
  std::vector<int> plane_shapes;
  std::vector<std::pair<int, int>> pairs;
  std::vector<std::pair<int, int>> excluded_body_pairs;  // sorted (min, max)
  // (nshape) bound on the speed of any point of each posed shape, |v| + |ω|·(its distance
  // from the centre of mass), m/s; filled only when speculative contacts are on.
  std::vector<double> shape_speed;
};

// Replaces `contacts` with this state's contacts, in a deterministic order.
//
// A pair's points are those with gap below solver.contact_margin, and, when the pair moves
// fast, speculative points: gap below speculative_factor · h · (s_n⁺ + μ‖v_t‖), the point's
// relative approach speed s_n⁺ and sliding speed ‖v_t‖ at the start of the step (μ the
// pair's friction). The narrow phase then runs again with the reach that bounds every such
// threshold (from each shape's speed bound), and its points are kept if they are below the
// margin or their own threshold; if none is speculative the margin's points stand, so a pair
// that moves slowly gets exactly the contacts of the fixed margin.
//
// Shapes that can never touch anything are neither posed nor boxed nor swept (a chain whose
// links have collision mask 0 then costs nothing here): a shape whose collision group or
// mask is 0, and a shape every possible partner of which is ruled out by the pair filters
// (same body, both bodies non-dynamic, group/mask, bodies joined by a joint). The partner
// search looks at a bounded number of candidates per shape (kPartnerScanLimit in the .cpp)
// and keeps the shape when the bound is reached, so it stays linear in the shape count and
// never drops a shape that could collide. The contacts are those of the unfiltered pass, in
// the same order; workspace.posed holds current poses for the shapes kept only.
void detect_contacts(const Model& model, const Params& params, const State& state, CollisionWorkspace& workspace,
                     std::vector<Contact>& contacts);

// The body pairs whose shapes never touch: joined by a joint without collide_connected, or
// listed in model.collision_exclusions; sorted (min, max), for may_collide.
void excluded_body_pairs(const Model& model, std::vector<std::pair<int, int>>& pairs);
// The pair filter: may shapes i and j ever touch? Not on the same body, not both on
// non-dynamic bodies, each one's group in the other's mask, the bodies not excluded.
bool may_collide(const Model& model, std::span<const std::pair<int, int>> excluded, int shape_i, int shape_j);

// The Contact between shapes a and b for one narrow-phase point found within `margin`.
inline Contact contact_from_point(const Model& model, int shape_a, int shape_b, const ContactPoint& point,
                                  double margin) {
  Contact contact;
  contact.margin = margin;
  contact.shape_a = shape_a;
  contact.shape_b = shape_b;
  contact.body_a = model.shapes[static_cast<std::size_t>(shape_a)].body;
  contact.body_b = model.shapes[static_cast<std::size_t>(shape_b)].body;
  contact.position = point.position;
  contact.normal = point.normal;
  contact.gap = point.gap;
  contact.feature = point.feature;
  return contact;
}

// The shape placed in the world at `state` (sizes from params).
PosedShape pose_shape(const Model& model, const Params& params, const State& state, int shape);

}  // namespace diffphys::collision
