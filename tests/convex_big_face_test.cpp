// tests/convex_big_face_test.cpp — hulls with faces of more than ConvexMesh::kMaxFaceVertices
// vertices (diffphys/convex_mesh.hpp): a 64-segment cylinder, whose caps have 64 vertices,
// loads with whole faces and a 32-vertex clipping polygon per cap, and rests on a plane, on a
// large box and on a small box at the closed-form height with its contacts where they belong.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/convex_mesh.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

constexpr int kSegments = 64;
constexpr double kRadius = 0.1;
constexpr double kHalfHeight = 0.05;

// The cylinder of kSegments around z: two caps of kSegments vertices, centroid at the origin.
ConvexMesh cylinder_hull() {
  std::vector<Vec3> points;
  for (int k = 0; k < kSegments; ++k) {
    const double angle = 2.0 * M_PI * k / kSegments;
    for (const double z : {-kHalfHeight, kHalfHeight})
      points.push_back({kRadius * std::cos(angle), kRadius * std::sin(angle), z});
  }
  return convex_hull(points, "cylinder64");
}

TEST(ConvexBigFace, SixtyFourVertexCapsLoadWithAThirtyTwoVertexClippingPolygon) {
  const ConvexMesh mesh = cylinder_hull();
  ASSERT_EQ(mesh.face_count(), kSegments + 2);
  int caps = 0;
  for (const ConvexMesh::Face& face : mesh.faces) {
    if (face.count == 4) {
      EXPECT_EQ(face.clip_count, 4);
      continue;
    }
    ++caps;
    ASSERT_EQ(face.count, kSegments);
    ASSERT_EQ(face.clip_count, ConvexMesh::kMaxFaceVertices);
    // The clipping polygon: the cap's vertices, every other one, in the cap's order.
    for (int k = 0; k < face.clip_count; ++k) {
      const Vec3& v =
          mesh.vertices[static_cast<std::size_t>(mesh.clip_vertices[static_cast<std::size_t>(face.clip_first + k)])];
      EXPECT_NEAR(dot(face.normal, v), face.offset, 1e-12);
      const Vec3& w = mesh.vertices[static_cast<std::size_t>(
          mesh.clip_vertices[static_cast<std::size_t>(face.clip_first + (k + 1) % face.clip_count)])];
      EXPECT_NEAR(norm(w - v), 2 * kRadius * std::sin(M_PI / ConvexMesh::kMaxFaceVertices), 1e-9) << "a regular 32-gon";
      EXPECT_GT(dot(cross(v, w), face.normal), 0.0) << "counter-clockwise about the normal";
    }
  }
  EXPECT_EQ(caps, 2);
  // A dropped vertex lies r (1 − cos(π/32)) outside the 32-gon.
  EXPECT_NEAR(mesh.clip_deviation, kRadius * (1 - std::cos(M_PI / ConvexMesh::kMaxFaceVertices)), 1e-12);
  // The solid is the whole 64-gon prism: area (n/2) r² sin(2π/n) times the height.
  EXPECT_NEAR(mesh.volume, 0.5 * kSegments * kRadius * kRadius * std::sin(2 * M_PI / kSegments) * 2 * kHalfHeight,
              1e-15);
}

// The cylinder standing (axis z), dropped 5 mm onto `support`, settled for 1 s.
struct Settled {
  Scene scene;
  State state;
  std::vector<Contact> contacts;
};
Settled settle(const std::vector<BodySpec>& support, bool ground) {
  ModelBuilder builder;
  builder.dt = 0.002;
  if (ground) builder.add_ground_plane();
  double top = 0.0;
  for (const BodySpec& body : support) {
    builder.add_body(body);
    top = body.position.z + body.shapes[0].half_extents.z;
  }
  BodySpec cylinder;
  cylinder.name = "cylinder";
  cylinder.position = {0.0, 0.0, top + kHalfHeight + 0.005};
  cylinder.density = 800.0;
  ShapeSpec shape;
  shape.type = ShapeType::ConvexMesh;
  shape.mesh = std::make_shared<const ConvexMesh>(cylinder_hull());
  cylinder.shapes.push_back(shape);
  builder.add_body(cylinder);
  Settled settled{builder.build(), {}, {}};
  Simulator simulator(settled.scene.model, settled.scene.params, settled.scene.state);
  for (int i = 0; i < 500; ++i) EXPECT_TRUE(simulator.step(settled.scene.controls).converged) << "step " << i;
  settled.state = simulator.state();
  collision::CollisionWorkspace workspace;
  collision::detect_contacts(settled.scene.model, settled.scene.params, settled.state, workspace, settled.contacts);
  return settled;
}

BodySpec static_box(double half_width) {
  BodySpec box;
  box.name = "table";
  box.type = BodyType::Static;
  box.position = {0.0, 0.0, 0.3};
  ShapeSpec shape;
  shape.type = ShapeType::Box;
  shape.half_extents = {half_width, half_width, 0.05};
  box.shapes.push_back(shape);
  return box;
}

// At rest upright on a support whose top is at `top`: the centre of mass kHalfHeight above
// it, to within the penetration slop.
void expect_upright_at_rest(const Settled& settled, double top) {
  const int cylinder = settled.scene.model.body_index("cylinder");
  const auto c = static_cast<std::size_t>(cylinder);
  EXPECT_NEAR(settled.state.position[c].z, top + kHalfHeight, settled.scene.model.solver.penetration_slop);
  EXPECT_NEAR(settled.state.position[c].x, 0.0, 1e-9);
  EXPECT_NEAR(settled.state.position[c].y, 0.0, 1e-9);
  EXPECT_NEAR(std::abs(settled.state.orientation[c].w), 1.0, 1e-9);
  EXPECT_LT(norm(settled.state.linear_velocity[c]), 1e-6);
  EXPECT_LT(norm(settled.state.angular_velocity[c]), 1e-6);
}

TEST(ConvexBigFace, RestsOnAPlaneOnFourRimPointsOfItsCap) {
  const Settled settled = settle({}, true);
  expect_upright_at_rest(settled, 0.0);
  ASSERT_EQ(settled.contacts.size(), 4u);
  for (const Contact& contact : settled.contacts) {
    EXPECT_NEAR(std::hypot(contact.position.x, contact.position.y), kRadius, 1e-9);
    EXPECT_NEAR(contact.position.z, 0.0, settled.scene.model.solver.penetration_slop);
  }
}

TEST(ConvexBigFace, RestsOnALargeBoxOnRimPointsOfItsClippingPolygon) {
  // The box face is larger: it is the reference face, the cap's 32-gon the incident polygon.
  const Settled settled = settle({static_box(0.5)}, false);
  expect_upright_at_rest(settled, 0.35);
  ASSERT_EQ(settled.contacts.size(), 4u);
  double spread = 0.0;
  for (const Contact& contact : settled.contacts) {
    EXPECT_NEAR(std::hypot(contact.position.x, contact.position.y), kRadius, 1e-6);
    EXPECT_NEAR(contact.position.z, 0.35, settled.scene.model.solver.penetration_slop);
    spread = std::max(spread, std::hypot(contact.position.x, contact.position.y));
  }
  // The four points span the cap: their mean is its centre.
  Vec3 mean;
  for (const Contact& contact : settled.contacts) mean += contact.position / 4.0;
  EXPECT_LT(std::hypot(mean.x, mean.y), 0.3 * kRadius);
}

TEST(ConvexBigFace, RestsOnASmallBoxOnTheBoxCorners) {
  // The cap is larger: it is the reference face; its 32-gon's side planes clip the box top,
  // whose corners (0.085 from the axis) lie inside, so the contacts are the corners.
  const double half = 0.06;
  const Settled settled = settle({static_box(half)}, false);
  expect_upright_at_rest(settled, 0.35);
  ASSERT_EQ(settled.contacts.size(), 4u);
  for (const Contact& contact : settled.contacts) {
    EXPECT_NEAR(std::abs(contact.position.x), half, 1e-9);
    EXPECT_NEAR(std::abs(contact.position.y), half, 1e-9);
    EXPECT_NEAR(contact.position.z, 0.35, settled.scene.model.solver.penetration_slop);
  }
}

}  // namespace
}  // namespace diffphys
