// tests/detect_contacts_test.cpp — the collision stage skips shapes that can never touch
// anything (collision group or mask 0; every possible partner ruled out by the pair filters)
// without changing the contacts it reports.
#include <gtest/gtest.h>

#include <vector>

#include "collision/detect_contacts.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::hinge_chain;
using testing::sphere_body;

std::vector<Contact> contacts_of(const Scene& scene, collision::CollisionWorkspace& workspace) {
  std::vector<Contact> contacts;
  collision::detect_contacts(scene.model, scene.params, scene.state, workspace, contacts);
  return contacts;
}

TEST(DetectContacts, SkipsShapesWhoseCollisionMaskIsZero) {
  ModelBuilder builder = hinge_chain(4, 0.3, 0.5, 0.6);
  builder.add_ground_plane({0, 0, 1}, -0.5);  // the chain reaches below it
  Scene touching = builder.build();
  collision::CollisionWorkspace workspace;
  EXPECT_FALSE(contacts_of(touching, workspace).empty());
  EXPECT_FALSE(workspace.boxes.empty());

  ModelBuilder masked = hinge_chain(4, 0.3, 0.5, 0.6);
  masked.add_ground_plane({0, 0, 1}, -0.5);
  const Scene switched_off = [&] {
    Scene scene = masked.build();
    for (Shape& shape : scene.model.shapes)
      if (shape.type != ShapeType::Plane) shape.collision_mask = 0;
    return scene;
  }();
  EXPECT_TRUE(contacts_of(switched_off, workspace).empty());
  EXPECT_TRUE(workspace.boxes.empty());         // nothing posed, boxed or swept
  EXPECT_TRUE(workspace.plane_shapes.empty());  // the plane has no partner left either
}

TEST(DetectContacts, SkipsShapesWhosePartnersAreAllExcludedByJoints) {
  // Two links hinged to each other, nothing else: the only pair is excluded by the joint.
  ModelBuilder builder = hinge_chain(2, 0.3, 0.5, 0.6);
  const Scene scene = builder.build();
  collision::CollisionWorkspace workspace;
  EXPECT_TRUE(contacts_of(scene, workspace).empty());
  EXPECT_TRUE(workspace.boxes.empty());
  // A free sphere dropped on the chain gives every link a partner again.
  builder.add_body(sphere_body("ball", {0.0, 0.0, 0.05}, 0.1, 1.0));
  const Scene with_ball = builder.build();
  contacts_of(with_ball, workspace);
  EXPECT_EQ(workspace.boxes.size(), 3u);
}

TEST(DetectContacts, ReportsTheSameContactsWhenSomeShapesAreSwitchedOff) {
  // Boxes resting on the ground, and a far-away group of boxes with mask 0 in between them
  // in shape order: the reported contacts are those of the active shapes, in the same order.
  ModelBuilder reference_builder;
  reference_builder.add_ground_plane();
  for (int i = 0; i < 3; ++i)
    reference_builder.add_body(box_body("box" + std::to_string(i), {0.5 * i, 0, 0.099}, {0.1, 0.1, 0.1}, 1.0));
  ModelBuilder mixed_builder;
  mixed_builder.add_ground_plane();
  for (int i = 0; i < 3; ++i) {
    mixed_builder.add_body(box_body("box" + std::to_string(i), {0.5 * i, 0, 0.099}, {0.1, 0.1, 0.1}, 1.0));
    BodySpec ghost = box_body("ghost" + std::to_string(i), {0.5 * i, 0, 0.05}, {0.1, 0.1, 0.1}, 1.0);
    ghost.shapes[0].collision_mask = 0;  // overlaps the box and the ground, collides with nothing
    mixed_builder.add_body(ghost);
  }
  collision::CollisionWorkspace reference_workspace, mixed_workspace;
  const std::vector<Contact> reference = contacts_of(reference_builder.build(), reference_workspace);
  const Scene mixed_scene = mixed_builder.build();
  const std::vector<Contact> mixed = contacts_of(mixed_scene, mixed_workspace);
  ASSERT_EQ(mixed.size(), reference.size());
  ASSERT_EQ(reference.size(), 12u);  // four corners per box
  for (std::size_t k = 0; k < reference.size(); ++k) {
    EXPECT_EQ(mixed_scene.model.bodies[static_cast<std::size_t>(mixed[k].body_a)].name,
              "box" + std::to_string(reference[k].body_a - 1));
    EXPECT_EQ(mixed[k].feature, reference[k].feature);
    EXPECT_EQ(mixed[k].position, reference[k].position);
    EXPECT_EQ(mixed[k].normal, reference[k].normal);
    EXPECT_EQ(mixed[k].gap, reference[k].gap);
  }
  EXPECT_EQ(mixed_workspace.boxes.size(), 3u);  // the ghosts are not boxed
}

}  // namespace
}  // namespace diffphys
