// tests/box_features_test.cpp — collision::box_contact_from_feature, the backward pass's
// evaluation of one box contact from its feature id alone. On random pairs of boxes (one
// pushed into the other along a random direction, or resting face on face turned about the
// normal, penetrating or apart within the margin) and boxes over a tilted plane, in both
// formulations' manifold sizes, for every point the narrow phase reports:
//   - the feature's formula gives the point's position, normal and gap (to rounding), for
//     box–plane in either argument order;
//   - its Jacobian (contact_geometry_jacobian) equals the whole dual narrow phase's
//     (contact_geometry_jacobian_dual);
// and every kind of feature id is met. The closed form of a capsule's end on a plane
// (adjoint/contact_tangents.cpp) is compared with the dual narrow phase likewise.
// (tests/contact_geometry_test.cpp checks the same Jacobians against central differences.)
#include "collision/box_features.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "adjoint/contact_geometry.hpp"
#include "collision/detect_contacts.hpp"
#include "diffphys/model_builder.hpp"

namespace diffphys::collision {
namespace {

using Rng = std::mt19937_64;
double uniform(Rng& rng, double low, double high) { return std::uniform_real_distribution<double>(low, high)(rng); }
Vec3 random_vector(Rng& rng, double low, double high) {
  const double x = uniform(rng, low, high), y = uniform(rng, low, high), z = uniform(rng, low, high);
  return {x, y, z};
}
Quat random_rotation(Rng& rng) {
  const double w = uniform(rng, -1, 1), x = uniform(rng, -1, 1), y = uniform(rng, -1, 1), z = uniform(rng, -1, 1);
  return Quat{w, x, y, z}.normalized();
}
Vec3 random_direction(Rng& rng) { return random_rotation(rng).rotate({0, 0, 1}); }

// The kinds of box feature ids (box_features.cpp's numbering).
std::string feature_kind(bool with_plane, int feature) {
  if (with_plane) return "box-plane vertex";
  if (feature < 2880) {
    const int point = feature % 40;
    return point < 4 ? "incident vertex" : (point < 20 ? "incident edge on a side plane" : "reference corner");
  }
  if (feature < 3024) return "edge-edge";
  if (feature < 3120) return "deepest incident vertex";
  return "vertex and the other box";
}

// Two free boxes (each shape off its body's origin) and, with_plane, a tilted ground plane.
Scene two_boxes(Rng& rng, Formulation formulation, bool with_plane) {
  ModelBuilder builder;
  builder.solver.formulation = formulation;
  if (with_plane) builder.add_ground_plane(normalized(Vec3{0.1, -0.2, 1.0}), 0.05);
  for (const char* name : {"a", "b"}) {
    ShapeSpec box;
    box.type = ShapeType::Box;
    box.half_extents = random_vector(rng, 0.05, 0.3);
    box.position = random_vector(rng, -0.1, 0.1);
    box.orientation = random_rotation(rng);
    BodySpec body;
    body.name = name;
    body.position = {0, 0, with_plane ? 5.0 : 0.0};  // placed by the caller
    body.shapes.push_back(box);
    builder.add_body(body);
  }
  return builder.build();
}

// Contacts of the scene at its state.
std::vector<Contact> contacts_of(const Scene& scene) {
  CollisionWorkspace workspace;
  std::vector<Contact> contacts;
  detect_contacts(scene.model, scene.params, scene.state, workspace, contacts);
  return contacts;
}

// Moves body b along `direction` (from a) to the farthest distance at which the boxes still
// touch (bisection on the contact count), then back by `depth` (negative: apart).
void place_b_against_a(Scene& scene, const Vec3& direction, double depth) {
  const auto touching_at = [&](double distance) {
    scene.state.position[1] = scene.state.position[0] + direction * distance;
    return !contacts_of(scene).empty();
  };
  double inside = 0.0, outside = 2.0;
  for (int i = 0; i < 60; ++i) {
    const double middle = 0.5 * (inside + outside);
    (touching_at(middle) ? inside : outside) = middle;
  }
  touching_at(inside - depth);
}

struct Coverage {
  std::map<std::string, int> kinds;
  int points = 0;
};

// contact_geometry_jacobian (closed forms, feature formulas) against the whole dual narrow
// phase (contact_geometry_jacobian_dual).
void expect_jacobian_equals_dual_narrow_phase(const Scene& scene, const Contact& contact) {
  const Model& model = scene.model;
  const adjoint::ContactGeometryJacobian direct =
      adjoint::contact_geometry_jacobian(model, scene.params, scene.state, contact);
  const adjoint::ContactGeometryJacobian whole =
      adjoint::contact_geometry_jacobian_dual(model, scene.params, scene.state, contact);
  ASSERT_TRUE(direct.found);
  ASSERT_TRUE(whole.found);
  // Both are exact derivatives of the same function, computed in different orders: they
  // agree to rounding of O(1) entries (m/m, m/rad, 1/rad).
  for (int j = 0; j < adjoint::kContactGeometryInputs; ++j) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(direct.position[k][j], whole.position[k][j], 1e-10 * std::max(1.0, std::abs(whole.position[k][j])))
          << "position " << k << ", input " << j;
      EXPECT_NEAR(direct.normal[k][j], whole.normal[k][j], 1e-10 * std::max(1.0, std::abs(whole.normal[k][j])))
          << "normal " << k << ", input " << j;
    }
    EXPECT_NEAR(direct.gap[j], whole.gap[j], 1e-10 * std::max(1.0, std::abs(whole.gap[j]))) << "gap, input " << j;
  }
}

// The check of the file comment on every contact of the scene.
void check_every_contact(const Scene& scene, Coverage& coverage) {
  const Model& model = scene.model;
  for (const Contact& contact : contacts_of(scene)) {
    const bool with_plane = model.shapes[static_cast<std::size_t>(contact.shape_a)].type == ShapeType::Plane ||
                            model.shapes[static_cast<std::size_t>(contact.shape_b)].type == ShapeType::Plane;
    SCOPED_TRACE("feature " + std::to_string(contact.feature) + (with_plane ? " (box-plane)" : ""));
    const PosedShape a = pose_shape(model, scene.params, scene.state, contact.shape_a);
    const PosedShape b = pose_shape(model, scene.params, scene.state, contact.shape_b);
    // Box–plane pairs in either order; box–box ids name the boxes in the pair's order.
    for (const bool swapped : {false, true}) {
      if (swapped && !with_plane) continue;
      ContactPoint point;
      const bool covered = swapped ? box_contact_from_feature(b, a, contact.feature, point)
                                   : box_contact_from_feature(a, b, contact.feature, point);
      if (!covered) {
        // Only the clipping points of parallel side planes, which rounding alone makes, and
        // edge–edge points clamped to an edge's end.
        EXPECT_TRUE((contact.feature < 2880 && contact.feature % 40 >= 24) ||
                    (contact.feature >= 2880 && contact.feature < 3024));
        ++coverage.kinds["not covered"];
        continue;
      }
      const double sign = swapped ? -1.0 : 1.0;
      const double scale = 1.0;  // boxes and offsets of order 0.1–1 m
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(point.position[k], contact.position[k], 1e-12 * scale) << "position " << k;
        EXPECT_NEAR(point.normal[k], sign * contact.normal[k], 1e-12) << "normal " << k;
      }
      EXPECT_NEAR(point.gap, contact.gap, 1e-12 * scale);
    }
    expect_jacobian_equals_dual_narrow_phase(scene, contact);
    ++coverage.kinds[feature_kind(with_plane, contact.feature)];
    ++coverage.points;
  }
}

TEST(BoxFeatures, EveryPointOfRandomBoxPairsFromItsFeature) {
  Rng rng(2026);
  Coverage coverage;
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    for (int trial = 0; trial < 60; ++trial) {
      SCOPED_TRACE("trial " + std::to_string(trial));
      Scene scene = two_boxes(rng, formulation, false);
      scene.state.orientation[0] = random_rotation(rng);
      scene.state.orientation[1] = random_rotation(rng);
      // Penetrating by up to 2 cm, or apart by up to the 1 cm margin.
      const double depth = trial % 3 == 2 ? -uniform(rng, 0.0, 0.009) : uniform(rng, 0.0005, 0.02);
      place_b_against_a(scene, random_direction(rng), depth);
      check_every_contact(scene, coverage);
    }
    for (int trial = 0; trial < 30; ++trial) {
      // Face on face (b's −z on a's +z) turned about the normal and slightly tilted: clipped
      // polygons, their edge crossings and the reference face's corners.
      SCOPED_TRACE("face trial " + std::to_string(trial));
      Scene scene = two_boxes(rng, formulation, false);
      const Quat a_shape = scene.model.shapes[0].local_orientation;
      const Quat b_shape = scene.model.shapes[1].local_orientation;
      const Vec3 tilt = random_vector(rng, -0.01, 0.01);  // one draw per statement: operand order is unspecified
      const Quat turn = Quat::from_rotation_vector(tilt + Vec3{0, 0, uniform(rng, 0, 6.3)});
      scene.state.orientation[0] = a_shape.conjugate();
      scene.state.orientation[1] = turn * b_shape.conjugate();
      const double depth = trial % 3 == 2 ? -uniform(rng, 0.0, 0.009) : uniform(rng, 0.0005, 0.02);
      place_b_against_a(scene, normalized(Vec3{uniform(rng, -0.3, 0.3), uniform(rng, -0.3, 0.3), 1.0}), depth);
      check_every_contact(scene, coverage);
    }
    // Apart within the margin, where an edge axis separates most but the edges' closest points
    // fall off them: the boxes' closest pair (a vertex and the other box). Rare among random
    // poses: drawn until three such points were checked.
    for (int trial = 0; trial < 5000 && coverage.kinds["vertex and the other box"] < 3; ++trial) {
      SCOPED_TRACE("apart trial " + std::to_string(trial));
      Scene scene = two_boxes(rng, formulation, false);
      scene.state.orientation[0] = random_rotation(rng);
      scene.state.orientation[1] = random_rotation(rng);
      place_b_against_a(scene, random_direction(rng), -uniform(rng, 0.0, 0.009));
      check_every_contact(scene, coverage);
    }
    for (int trial = 0; trial < 20; ++trial) {
      SCOPED_TRACE("plane trial " + std::to_string(trial));
      Scene scene = two_boxes(rng, formulation, true);
      scene.state.orientation[0] = random_rotation(rng);
      scene.state.position[0] = {0, 0, uniform(rng, 0.1, 0.35)};
      check_every_contact(scene, coverage);
    }
  }
  for (const auto& [kind, count] : coverage.kinds) std::printf("  %-32s %d points\n", kind.c_str(), count);
  for (const char* kind : {"box-plane vertex", "incident vertex", "incident edge on a side plane", "reference corner",
                           "edge-edge", "vertex and the other box"})
    EXPECT_GT(coverage.kinds[kind], 0) << kind;
}

}  // namespace
}  // namespace diffphys::collision

namespace diffphys::collision {
namespace {

TEST(BoxFeatures, CapsuleEndsOnAPlaneInClosedForm) {
  Rng rng(77);
  int points = 0;
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    ModelBuilder builder;
    builder.solver.formulation = trial % 2 == 0 ? Formulation::Convex : Formulation::Complementarity;
    const Vec3 normal = normalized(Vec3{0.1, -0.2, 1.0});
    builder.add_ground_plane(normal, 0.05);
    ShapeSpec capsule;
    capsule.type = trial % 4 == 3 ? ShapeType::Cylinder : ShapeType::Capsule;  // a cylinder collides as a capsule
    capsule.radius = uniform(rng, 0.03, 0.2);
    capsule.half_length = uniform(rng, 0.05, 0.4);
    capsule.position = random_vector(rng, -0.1, 0.1);
    capsule.orientation = random_rotation(rng);
    BodySpec body;
    body.name = "capsule";
    body.shapes.push_back(capsule);
    builder.add_body(body);
    Scene scene = builder.build();
    // Lying along the plane, nearly flat (both ends touch) or tilted (one end), its lower end
    // within ±1 cm.
    const Vec3 along = normalized(cross(normal, Vec3{1, 0, 0}));  // in the plane
    const Vec3 turn_axis = normalized(cross(Vec3{0, 0, 1}, along));
    const Quat lying = Quat::from_axis_angle(turn_axis, std::acos(along.z));  // shape z → along
    const Vec3 tilt = random_vector(rng, -1, 1) * (trial % 3 == 0 ? 1.0 : 0.005);
    scene.state.orientation[1] =
        Quat::from_rotation_vector(tilt) * lying * scene.model.shapes[1].local_orientation.conjugate();
    scene.state.position[1] = {0, 0, 0};
    const PosedShape posed = pose_shape(scene.model, scene.params, scene.state, 1);
    const Vec3 axis = posed.rotation.col(2);
    const double lowest = std::min(dot(normal, posed.position + axis * posed.size.y),
                                   dot(normal, posed.position - axis * posed.size.y)) - 0.05 - posed.size.x;
    scene.state.position[1] = normal * (uniform(rng, -0.01, 0.009) - lowest);
    for (const Contact& contact : contacts_of(scene)) {
      SCOPED_TRACE("end " + std::to_string(contact.feature));
      expect_jacobian_equals_dual_narrow_phase(scene, contact);
      ++points;
    }
  }
  EXPECT_GT(points, 50) << "both ends of the lying capsules";
}

}  // namespace
}  // namespace diffphys::collision
