// tests/broad_phase_test.cpp — tests of collision/broad_phase.cpp: BroadPhase::find_pairs
// against the brute-force O(n²) overlap test on random boxes (several sizes, spreads and
// seeds), over repeated calls as the boxes move (coherent motion, teleports, a change of
// sweep axis, a change of count), and on edge cases (no boxes, touching boxes, duplicates).
#include "collision/broad_phase.hpp"

#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

namespace diffphys::collision {
namespace {

using PairList = std::vector<std::pair<int, int>>;

// Every overlapping pair (i < j), closed intervals, in lexicographic order.
PairList brute_force_pairs(const std::vector<Aabb>& boxes) {
  PairList pairs;
  for (int i = 0; i < static_cast<int>(boxes.size()); ++i) {
    for (int j = i + 1; j < static_cast<int>(boxes.size()); ++j) {
      bool overlap = true;
      for (int k = 0; k < 3; ++k)
        overlap = overlap && boxes[i].lower[k] <= boxes[j].upper[k] &&
                  boxes[j].lower[k] <= boxes[i].upper[k];
      if (overlap) pairs.emplace_back(i, j);
    }
  }
  return pairs;
}

// Random boxes with centres uniform in [0, spread], half sizes in [0.05, max_half].
std::vector<Aabb> random_boxes(int count, const Vec3& spread, double max_half,
                               std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<Aabb> boxes(count);
  for (Aabb& box : boxes) {
    const Vec3 center{spread.x * uniform(rng), spread.y * uniform(rng), spread.z * uniform(rng)};
    const Vec3 half{0.05 + (max_half - 0.05) * uniform(rng),
                    0.05 + (max_half - 0.05) * uniform(rng),
                    0.05 + (max_half - 0.05) * uniform(rng)};
    box = {center - half, center + half};
  }
  return boxes;
}

void move_boxes(std::vector<Aabb>& boxes, double step, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-step, step);
  for (Aabb& box : boxes) {
    const Vec3 shift{uniform(rng), uniform(rng), uniform(rng)};
    box.lower += shift;
    box.upper += shift;
  }
}

TEST(BroadPhase, MatchesBruteForceOnRandomBoxes) {
  struct Scene {
    int count;
    Vec3 spread;
    double max_half;
  };
  const Scene scenes[] = {
      {300, {10, 10, 10}, 0.6},  // sparse cube
      {500, {30, 4, 4}, 0.8},    // long along x
      {400, {3, 3, 25}, 0.5},    // long along z
      {200, {2, 2, 2}, 0.7},     // dense: most boxes overlap many others
  };
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    for (const Scene& scene : scenes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(scene.count) + " boxes");
      std::mt19937_64 rng(seed);
      const std::vector<Aabb> boxes = random_boxes(scene.count, scene.spread, scene.max_half, rng);
      BroadPhase broad_phase;
      PairList pairs;
      broad_phase.find_pairs(boxes, pairs);
      const PairList expected = brute_force_pairs(boxes);
      EXPECT_FALSE(expected.empty());
      EXPECT_EQ(pairs, expected);
    }
  }
}

TEST(BroadPhase, RepeatedCallsFollowMovingBoxes) {
  std::mt19937_64 rng(42);
  std::vector<Aabb> boxes = random_boxes(400, {12, 12, 12}, 0.6, rng);
  BroadPhase broad_phase;
  PairList pairs;
  for (int step = 0; step < 40; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    // Coherent motion, with an occasional large shuffle (insertion sort's worst case).
    move_boxes(boxes, step % 10 == 9 ? 6.0 : 0.05, rng);
    broad_phase.find_pairs(boxes, pairs);
    EXPECT_EQ(pairs, brute_force_pairs(boxes));
  }
}

TEST(BroadPhase, SweepAxisChangesBetweenCalls) {
  std::mt19937_64 rng(5);
  BroadPhase broad_phase;
  PairList pairs;
  // Same count, spread first along x, then z, then y: the sweep axis changes each call.
  for (const Vec3 spread : {Vec3{40, 3, 3}, Vec3{3, 3, 40}, Vec3{3, 40, 3}, Vec3{40, 3, 3}}) {
    const std::vector<Aabb> boxes = random_boxes(300, spread, 0.7, rng);
    broad_phase.find_pairs(boxes, pairs);
    EXPECT_EQ(pairs, brute_force_pairs(boxes));
  }
}

TEST(BroadPhase, CountMayChangeBetweenCalls) {
  std::mt19937_64 rng(11);
  BroadPhase broad_phase;
  PairList pairs;
  for (int count : {300, 120, 0, 1, 2, 300, 301}) {
    SCOPED_TRACE(std::to_string(count) + " boxes");
    const std::vector<Aabb> boxes = random_boxes(count, {6, 6, 6}, 0.6, rng);
    broad_phase.find_pairs(boxes, pairs);
    EXPECT_EQ(pairs, brute_force_pairs(boxes));
  }
}

TEST(BroadPhase, TouchingAndIdenticalBoxesOverlap) {
  const std::vector<Aabb> boxes = {
      {{0, 0, 0}, {1, 1, 1}},           {{1, 0, 0}, {2, 1, 1}},  // shares the face x = 1 with box 0
      {{2.5, 0, 0}, {3, 1, 1}},                                  // apart from box 1 along x
      {{0, 0, 0}, {1, 1, 1}},                                    // identical to box 0
      {{0.2, 1.5, 0.2}, {0.8, 2, 0.8}},                          // above box 0 along y, apart
      {{2, 1, 1}, {2.2, 1.2, 1.2}},                              // touches box 1 at a single corner
  };
  BroadPhase broad_phase;
  PairList pairs{{7, 7}};  // stale contents are replaced
  broad_phase.find_pairs(boxes, pairs);
  const PairList expected = {{0, 1}, {0, 3}, {1, 3}, {1, 5}};
  EXPECT_EQ(pairs, expected);
  EXPECT_EQ(pairs, brute_force_pairs(boxes));
}

TEST(BroadPhase, OutputDoesNotDependOnThePreviousCall) {
  std::mt19937_64 rng(3);
  const std::vector<Aabb> first = random_boxes(250, {8, 8, 8}, 0.6, rng);
  const std::vector<Aabb> second = random_boxes(250, {8, 8, 8}, 0.6, rng);
  BroadPhase warm, cold;
  PairList warm_pairs, cold_pairs;
  warm.find_pairs(first, warm_pairs);
  warm.find_pairs(second, warm_pairs);
  cold.find_pairs(second, cold_pairs);
  EXPECT_EQ(warm_pairs, cold_pairs);
}

TEST(BroadPhase, KeepsThePairBufferWhenItIsLargeEnough) {
  std::mt19937_64 rng(8);
  std::vector<Aabb> boxes = random_boxes(300, {10, 10, 10}, 0.6, rng);
  BroadPhase broad_phase;
  PairList pairs;
  pairs.reserve(4096);
  const auto* const buffer = pairs.data();
  for (int step = 0; step < 10; ++step) {
    move_boxes(boxes, 0.05, rng);
    broad_phase.find_pairs(boxes, pairs);
    ASSERT_LT(pairs.size(), 4096u);
    EXPECT_EQ(pairs.data(), buffer);
  }
}

}  // namespace
}  // namespace diffphys::collision
