// collision/broad_phase.cpp — owns the shapes' world bounds (bounding_box, bounding_radius)
// and BroadPhase::find_pairs: the candidate pairs of overlapping world bounding boxes that the
// narrow phase then examines.
//
// Sweep and prune (Baraff 1992, "Dynamic simulation of non-penetrating rigid bodies";
// Cohen et al. 1995, I-COLLIDE) along one axis chosen per call: the axis along which the
// box centres are most spread, so that the sweep's intervals overlap least. The order of
// the previous call is re-sorted by insertion sort, near-linear when the boxes moved little;
// the sweep then tests the two other axes. Intervals are closed: touching boxes overlap.
#include "collision/broad_phase.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>

#include "collision/convex_mesh_contacts.hpp"
#include "collision/ellipsoid_contacts.hpp"

namespace diffphys::collision {
namespace {

// The axis along which the box centres have the largest variance (ties: the lower axis).
int widest_spread_axis(std::span<const Aabb> boxes) {
  Vec3 mean;
  for (const Aabb& box : boxes) mean += (box.lower + box.upper) * 0.5;
  mean = mean / static_cast<double>(boxes.size());
  Vec3 variance;
  for (const Aabb& box : boxes) {
    const Vec3 deviation = (box.lower + box.upper) * 0.5 - mean;
    variance +=
        Vec3{deviation.x * deviation.x, deviation.y * deviation.y, deviation.z * deviation.z};
  }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (variance[k] > variance[axis]) axis = k;
  return axis;
}

bool overlap_along(const Aabb& first, const Aabb& second, int axis) {
  return first.lower[axis] <= second.upper[axis] && second.lower[axis] <= first.upper[axis];
}

}  // namespace

void BroadPhase::find_pairs(std::span<const Aabb> boxes, std::vector<std::pair<int, int>>& pairs) {
  pairs.clear();
  const int count = static_cast<int>(boxes.size());
  if (static_cast<int>(order_.size()) != count) {
    order_.resize(boxes.size());
    std::iota(order_.begin(), order_.end(), 0);
    if (pairs.capacity() < boxes.size()) pairs.reserve(boxes.size());
  }
  if (count < 2) return;

  const int axis = widest_spread_axis(boxes);
  // Sort key: the lower bound along the sweep axis, then the index, so the order is a total
  // order whatever the previous one was. A NaN bound sorts last (and overlaps nothing).
  const auto sort_key = [&](int box) {
    const double lower = boxes[box].lower[axis];
    return std::isnan(lower) ? std::numeric_limits<double>::infinity() : lower;
  };
  const auto precedes = [&](int first, int second) {
    const double key_first = sort_key(first);
    const double key_second = sort_key(second);
    return key_first < key_second || (key_first == key_second && first < second);
  };

  // Insertion sort of the previous order. If the boxes were shuffled (a new sweep axis, a
  // teleport) and the shifts exceed a few per box, finish with an O(n log n) sort instead.
  const std::size_t shift_budget = 8 * boxes.size() + 64;
  std::size_t shifts = 0;
  for (int k = 1; k < count; ++k) {
    const int box = order_[k];
    int slot = k;
    while (slot > 0 && precedes(box, order_[slot - 1])) {
      order_[slot] = order_[slot - 1];
      --slot;
    }
    order_[slot] = box;
    shifts += static_cast<std::size_t>(k - slot);
    if (shifts > shift_budget) {
      std::sort(order_.begin(), order_.end(), precedes);
      break;
    }
  }

  // Sweep: every box whose lower bound lies within [lower, upper] of the current one along
  // the axis is a candidate; the two other axes decide.
  const int other_axis_1 = (axis + 1) % 3;
  const int other_axis_2 = (axis + 2) % 3;
  for (int k = 0; k < count; ++k) {
    const int first = order_[k];
    const Aabb& first_box = boxes[first];
    for (int m = k + 1; m < count; ++m) {
      const int second = order_[m];
      const Aabb& second_box = boxes[second];
      if (second_box.lower[axis] > first_box.upper[axis]) break;
      if (overlap_along(first_box, second_box, axis) &&
          overlap_along(first_box, second_box, other_axis_1) &&
          overlap_along(first_box, second_box, other_axis_2))
        pairs.emplace_back(std::min(first, second), std::max(first, second));
    }
  }
  std::sort(pairs.begin(), pairs.end());
}

Aabb bounding_box(const PosedShape& shape, double margin) {
  Vec3 extent;
  switch (shape.type) {
    case ShapeType::Sphere:
      extent = {shape.size.x, shape.size.x, shape.size.x};
      break;
    case ShapeType::Box:
      for (int i = 0; i < 3; ++i)
        extent[i] = std::abs(shape.rotation(i, 0)) * shape.size.x +
                    std::abs(shape.rotation(i, 1)) * shape.size.y +
                    std::abs(shape.rotation(i, 2)) * shape.size.z;
      break;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      extent = cwise_abs(shape.rotation.col(2)) * shape.size.y +
               Vec3{shape.size.x, shape.size.x, shape.size.x};
      break;
    case ShapeType::Plane: {
      constexpr double kHuge = 1e30;
      return {{-kHuge, -kHuge, -kHuge}, {kHuge, kHuge, kHuge}};
    }
    case ShapeType::ConvexMesh:
      return convex_mesh_bounding_box(shape, margin);
    case ShapeType::Ellipsoid:
      extent = ellipsoid_extent(shape);
      break;
  }
  extent += Vec3{margin, margin, margin};
  return {shape.position - extent, shape.position + extent};
}

double bounding_radius(const PosedShape& shape) {
  switch (shape.type) {
    case ShapeType::Sphere:
      return shape.size.x;
    case ShapeType::Box:
      return norm(shape.size);
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      return shape.size.x + shape.size.y;
    case ShapeType::Plane:
      return 0.0;
    case ShapeType::Ellipsoid:
      return std::max({shape.size.x, shape.size.y, shape.size.z});
    case ShapeType::ConvexMesh: {
      const Aabb box = convex_mesh_bounding_box(shape, 0.0);
      return norm((box.lower + box.upper) * 0.5 - shape.position) + norm((box.upper - box.lower) * 0.5);
    }
  }
  return 0.0;
}

}  // namespace diffphys::collision
