// collision/broad_phase.hpp — the shapes' world bounds and the candidate pairs of overlapping
// bounding boxes.
//
// Sweep and prune along the axis of largest spread: sort the boxes' lower bounds (insertion
// sort on the previous order, near-linear for coherent motion), sweep, and test the other
// two axes. Cost grows about linearly with the number of boxes in sparse scenes. Buffers are
// kept between calls: after the first call with a given count, nothing is allocated.
// Output pairs (i < j) are sorted, so results do not depend on the previous call's order.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "collision/narrow_phase.hpp"

namespace diffphys::collision {

// World-space axis-aligned bounding box of a posed shape grown by `margin` (Aabb:
// collision/narrow_phase.hpp). Planes are infinite: callers handle them apart from the broad phase.
Aabb bounding_box(const PosedShape& shape, double margin);

// The radius of a ball about shape.position that holds the whole shape, m (0 for a plane,
// whose points have no bound). Convex meshes: from their bounding box, so not the tightest.
double bounding_radius(const PosedShape& shape);

class BroadPhase {
 public:
  // Finds every pair (i, j), i < j, whose boxes overlap; replaces the contents of `pairs`.
  void find_pairs(std::span<const Aabb> boxes, std::vector<std::pair<int, int>>& pairs);

 private:
  std::vector<int> order_;  // box indices sorted by lower bound along the sweep axis
};

}  // namespace diffphys::collision
