// tests/collision_exclusion_test.cpp — Model::collision_exclusions (ModelBuilder::
// exclude_collision): an excluded body pair never produces contacts, other pairs still do,
// and an exclusion naming an unknown body is refused.
#include <gtest/gtest.h>

#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/error.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::sphere_body;

// Three overlapping balls in a row: a–b and b–c touch.
ModelBuilder three_balls() {
  ModelBuilder builder;
  builder.add_body(sphere_body("a", {0, 0, 1}, 0.1, 1.0));
  builder.add_body(sphere_body("b", {0.15, 0, 1}, 0.1, 1.0));
  builder.add_body(sphere_body("c", {0.3, 0, 1}, 0.1, 1.0));
  return builder;
}

std::vector<std::pair<int, int>> touching_bodies(const Scene& scene) {
  collision::CollisionWorkspace workspace;
  std::vector<Contact> contacts;
  collision::detect_contacts(scene.model, scene.params, scene.state, workspace, contacts);
  std::vector<std::pair<int, int>> pairs;
  for (const Contact& contact : contacts)
    pairs.emplace_back(std::min(contact.body_a, contact.body_b), std::max(contact.body_a, contact.body_b));
  return pairs;
}

TEST(CollisionExclusion, AnExcludedPairNeverTouchesOthersStillDo) {
  const Scene free = three_balls().build();
  const std::vector<std::pair<int, int>> all = touching_bodies(free);
  EXPECT_EQ(all, (std::vector<std::pair<int, int>>{{1, 2}, {2, 3}}));

  ModelBuilder builder = three_balls();
  builder.exclude_collision("c", "b");  // either order
  builder.exclude_collision("b", "c");  // duplicates are merged
  const Scene excluded = builder.build();
  EXPECT_EQ(excluded.model.collision_exclusions, (std::vector<std::pair<int, int>>{{2, 3}}));
  EXPECT_EQ(touching_bodies(excluded), (std::vector<std::pair<int, int>>{{1, 2}}));
}

TEST(CollisionExclusion, UnknownOrSelfExclusionIsRefused) {
  ModelBuilder unknown = three_balls();
  unknown.exclude_collision("a", "ghost");
  EXPECT_THROW(
      {
        try {
          unknown.build();
        } catch (const Error& error) {
          EXPECT_STREQ(error.what(), "collision exclusion 'a'-'ghost': unknown body 'ghost'");
          throw;
        }
      },
      Error);
  ModelBuilder self = three_balls();
  self.exclude_collision("a", "a");
  EXPECT_THROW(self.build(), Error);
}

}  // namespace
}  // namespace diffphys
