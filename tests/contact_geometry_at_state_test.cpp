// tests/contact_geometry_at_state_test.cpp — adjoint::ContactGeometryAtState, the backward
// pass's evaluator that runs the dual narrow phase once per shape pair: for every contact of
// a scene with box–box and box–plane manifolds, sphere contacts (closed forms) and a capsule,
// it returns bit for bit what contact_geometry_jacobian returns, in the step's order and in
// an order that leaves and revisits each pair.
#include "adjoint/contact_geometry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/model_builder.hpp"

namespace diffphys::adjoint {
namespace {

bool same_bits(const ContactGeometryJacobian& x, const ContactGeometryJacobian& y) {
  return x.found == y.found && std::memcmp(x.position, y.position, sizeof x.position) == 0 &&
         std::memcmp(x.normal, y.normal, sizeof x.normal) == 0 && std::memcmp(x.gap, y.gap, sizeof x.gap) == 0;
}

Scene mixed_pile(Formulation formulation) {
  ModelBuilder builder;
  builder.solver.formulation = formulation;
  builder.add_ground_plane();
  const auto add = [&](const char* name, ShapeSpec shape, Vec3 position, Quat orientation) {
    BodySpec body;
    body.name = name;
    body.position = position;
    body.orientation = orientation;
    body.shapes.push_back(shape);
    builder.add_body(body);
  };
  ShapeSpec box;
  box.type = ShapeType::Box;
  box.half_extents = {0.1, 0.1, 0.1};
  ShapeSpec sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = 0.08;
  ShapeSpec capsule;
  capsule.type = ShapeType::Capsule;
  capsule.radius = 0.05;
  capsule.half_length = 0.1;
  const Quat turned = Quat::from_axis_angle({0, 0, 1}, 0.3);
  add("bottom", box, {0, 0, 0.099}, Quat{});
  add("middle", box, {0.02, 0.01, 0.297}, turned);           // face on face: a clipped octagon
  add("top", box, {0.0, 0.0, 0.4955}, Quat::from_axis_angle({1, 1, 0}, 0.02));  // tilted: a corner
  add("ball", sphere, {0.5, 0, 0.079}, Quat{});
  add("ball_on_box", sphere, {0.0, 0.0, 0.674}, Quat{});
  add("capsule", capsule, {-0.5, 0, 0.049}, Quat::from_axis_angle({0, 1, 0}, 1.5707963267948966));
  return builder.build();
}

TEST(ContactGeometryAtState, EveryContactMatchesTheOnePairAtATimeJacobian) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    const Scene scene = mixed_pile(formulation);
    collision::CollisionWorkspace workspace;
    std::vector<Contact> contacts;
    collision::detect_contacts(scene.model, scene.params, scene.state, workspace, contacts);
    int box_box = 0;
    for (const Contact& contact : contacts)
      box_box += scene.model.shapes[static_cast<std::size_t>(contact.shape_a)].type == ShapeType::Box &&
                 scene.model.shapes[static_cast<std::size_t>(contact.shape_b)].type == ShapeType::Box;
    ASSERT_GE(box_box, 5) << "a face manifold of 4 or more points and a tilted box's corner";
    ASSERT_GE(contacts.size(), static_cast<std::size_t>(box_box + 4 + 3)) << "box–plane, spheres, capsule too";

    // The step's order, then an order that alternates between pairs (every call a new pair).
    std::vector<const Contact*> order;
    for (const Contact& contact : contacts) order.push_back(&contact);
    std::vector<const Contact*> alternating;  // first, last, second, second to last, ...
    for (std::size_t i = 0, j = order.size(); i < j; ++i) {
      alternating.push_back(order[i]);
      if (i < --j) alternating.push_back(order[j]);
    }
    ASSERT_EQ(alternating.size(), order.size());
    for (const std::vector<const Contact*>* visit : {&order, &alternating}) {
      ContactGeometryAtState at_state(scene.model, scene.params, scene.state);
      for (const Contact* contact : *visit) {
        const ContactGeometryJacobian expected =
            contact_geometry_jacobian(scene.model, scene.params, scene.state, *contact);
        ASSERT_TRUE(expected.found);
        EXPECT_TRUE(same_bits(at_state.jacobian(*contact), expected))
            << "shapes " << contact->shape_a << ", " << contact->shape_b << " feature " << contact->feature;
      }
    }
    // A feature the pair does not produce: not found, as contact_geometry_jacobian says.
    Contact missing = contacts.front();
    missing.feature = -12345;
    ContactGeometryAtState at_state(scene.model, scene.params, scene.state);
    EXPECT_FALSE(at_state.jacobian(missing).found);
    EXPECT_FALSE(contact_geometry_jacobian(scene.model, scene.params, scene.state, missing).found);
  }
}

}  // namespace
}  // namespace diffphys::adjoint
