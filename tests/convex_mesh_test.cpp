// tests/convex_mesh_test.cpp — tests of model/convex_mesh.cpp (files, hulls, mass properties),
// of convex mesh shapes in ModelBuilder and scene files, and of
// collision/convex_mesh_contacts.cpp.
//
// Hulls: a cube given as OBJ, ASCII STL and binary STL with extra interior points reduces to
// 8 vertices, 6 quadrilateral faces and 12 edges. Mass properties against closed forms (an
// off-centre box, a tetrahedron). Contacts: a cube given as a mesh gives, at random poses,
// the contacts (points, normals, gaps) of the box primitive against a plane, a sphere, a
// capsule, a box and another mesh cube; an irregular hull's contacts lie on both surfaces
// and mirror under swapping. Physics: a mesh cube dropped on the ground rests at its half
// height. Bad files and degenerate meshes give errors naming the file and the reason.
#include "diffphys/convex_mesh.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collision/narrow_phase.hpp"
#include "diffphys/error.hpp"
#include "gradcheck_test_helpers.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

using collision::ContactPoint;
using collision::PosedShape;

// A fresh folder for this test's files.
std::filesystem::path test_folder(const std::string& name) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path() / ("diffphys_convex_mesh_test_" + name);
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
}

// The corners of the box [-h, h] (times `scale` per axis) and a few interior points.
std::vector<Vec3> cube_with_interior_points(double h) {
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i) points.push_back({(i & 1) ? h : -h, (i & 2) ? h : -h, (i & 4) ? h : -h});
  points.push_back({0, 0, 0});
  points.push_back({0.5 * h, -0.25 * h, 0.1 * h});
  points.push_back({-0.9 * h, 0.9 * h, -0.9 * h});
  points.push_back({0.99 * h, 0.0, 0.0});  // near a face, still inside
  return points;
}

// Triangles covering the points (a fan over consecutive triples): STL carries triangles
// only; the hull does not care which triangles.
std::vector<std::array<Vec3, 3>> as_triangles(const std::vector<Vec3>& points) {
  std::vector<std::array<Vec3, 3>> triangles;
  for (std::size_t i = 0; i < points.size(); i += 3)
    triangles.push_back({points[i], points[(i + 1) % points.size()], points[(i + 2) % points.size()]});
  return triangles;
}

std::string obj_text(const std::vector<Vec3>& points) {
  std::string text = "# a cube with interior points\no cube\n";
  for (const Vec3& p : points)
    text += "v " + std::to_string(p.x) + " " + std::to_string(p.y) + " " + std::to_string(p.z) + "\n";
  text += "f 1 2 4 3\nf 5 6 8 7\n";
  return text;
}

std::string ascii_stl_text(const std::vector<Vec3>& points) {
  std::string text = "solid cube\n";
  for (const auto& triangle : as_triangles(points)) {
    text += "  facet normal 0 0 1\n    outer loop\n";
    for (const Vec3& p : triangle)
      text += "      vertex " + std::to_string(p.x) + " " + std::to_string(p.y) + " " + std::to_string(p.z) + "\n";
    text += "    endloop\n  endfacet\n";
  }
  return text + "endsolid cube\n";
}

std::string binary_stl_bytes(const std::vector<Vec3>& points, std::uint32_t declared_count = 0) {
  const auto triangles = as_triangles(points);
  std::string bytes(80, ' ');
  std::memcpy(bytes.data(), "solid but binary", 16);  // a header that starts like ASCII
  const std::uint32_t count = declared_count ? declared_count : static_cast<std::uint32_t>(triangles.size());
  bytes.append(reinterpret_cast<const char*>(&count), 4);
  for (const auto& triangle : triangles) {
    float record[12] = {0, 0, 1};
    for (int v = 0; v < 3; ++v)
      for (int k = 0; k < 3; ++k) record[3 + 3 * v + k] = static_cast<float>(triangle[static_cast<std::size_t>(v)][k]);
    bytes.append(reinterpret_cast<const char*>(record), sizeof record);
    bytes.append(2, '\0');
  }
  return bytes;
}

void expect_cube_hull(const ConvexMesh& mesh, double h) {
  ASSERT_EQ(mesh.vertex_count(), 8);
  ASSERT_EQ(mesh.face_count(), 6);
  ASSERT_EQ(mesh.edge_count(), 12);
  for (const Vec3& v : mesh.vertices)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(std::abs(v[k]), h, 1e-6);
  int axis_hits[3][2] = {};
  for (const ConvexMesh::Face& face : mesh.faces) {
    EXPECT_EQ(face.count, 4);
    EXPECT_NEAR(face.offset, h, 1e-6);
    int axis = 0;
    for (int k = 1; k < 3; ++k)
      if (std::abs(face.normal[k]) > std::abs(face.normal[axis])) axis = k;
    EXPECT_NEAR(std::abs(face.normal[axis]), 1.0, 1e-12);
    ++axis_hits[axis][face.normal[axis] > 0 ? 1 : 0];
    // Counter-clockwise about the outward normal, every vertex on the plane.
    for (int k = 0; k < face.count; ++k) {
      const Vec3& p =
          mesh.vertices[static_cast<std::size_t>(mesh.face_vertices[static_cast<std::size_t>(face.first + k)])];
      const Vec3& q = mesh.vertices[static_cast<std::size_t>(
          mesh.face_vertices[static_cast<std::size_t>(face.first + (k + 1) % face.count)])];
      const Vec3& r = mesh.vertices[static_cast<std::size_t>(
          mesh.face_vertices[static_cast<std::size_t>(face.first + (k + 2) % face.count)])];
      EXPECT_GT(dot(cross(q - p, r - q), face.normal), 0.0);
      EXPECT_NEAR(dot(face.normal, p), face.offset, 1e-9);
    }
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(axis_hits[k][0], 1);
    EXPECT_EQ(axis_hits[k][1], 1);
  }
  // Each edge joins two faces that both contain it.
  for (const ConvexMesh::Edge& edge : mesh.edges) {
    EXPECT_NE(edge.face[0], edge.face[1]);
    EXPECT_NEAR(norm(mesh.vertices[static_cast<std::size_t>(edge.vertex[0])] -
                     mesh.vertices[static_cast<std::size_t>(edge.vertex[1])]),
                2 * h, 1e-6);
  }
  EXPECT_NEAR(mesh.volume, 8 * h * h * h, 1e-5);
}

// ---------------------------------------------------------------------------------------
// Files and hulls.

TEST(ConvexMeshFiles, CubeWithInteriorPointsFromObjAsciiStlAndBinaryStl) {
  const std::filesystem::path folder = test_folder("cube_files");
  const std::vector<Vec3> points = cube_with_interior_points(0.5);
  write_text(folder / "cube.obj", obj_text(points));
  write_text(folder / "cube.stl", ascii_stl_text(points));
  write_text(folder / "cube_binary.STL", binary_stl_bytes(points));
  for (const char* name : {"cube.obj", "cube.stl", "cube_binary.STL"}) {
    SCOPED_TRACE(name);
    const ConvexMesh mesh = load_convex_mesh(folder / name);
    expect_cube_hull(mesh, 0.5);
    EXPECT_EQ(mesh.source, (folder / name).string());
  }
  // A per-axis scale applies to the file's coordinates.
  const ConvexMesh scaled = load_convex_mesh(folder / "cube.obj", {2, 2, 2});
  expect_cube_hull(scaled, 1.0);
}

TEST(ConvexMeshFiles, BadFilesNameTheFileAndTheReason) {
  const std::filesystem::path folder = test_folder("bad_files");
  const auto expect_error = [](const std::filesystem::path& path, const std::string& expected) {
    try {
      load_convex_mesh(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& error) {
      const std::string text = error.what();
      EXPECT_NE(text.find(path.string()), std::string::npos) << text;
      EXPECT_NE(text.find(expected), std::string::npos) << text;
    }
  };
  expect_error(folder / "missing.obj", "no such file");
  write_text(folder / "cube.ply", "ply\n");
  expect_error(folder / "cube.ply", "unknown mesh format '.ply'");
  // All points on the plane z = 0: no volume.
  write_text(folder / "flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0.5 0.5 0\n");
  expect_error(folder / "flat.obj", "degenerate mesh");
  write_text(folder / "three.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
  expect_error(folder / "three.obj", "3 points");
  write_text(folder / "empty.obj", "# nothing\n");
  expect_error(folder / "empty.obj", "no vertices");
  write_text(folder / "bad_number.stl", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 zero\n");
  expect_error(folder / "bad_number.stl", ":5: not a finite number: 'zero'");
  write_text(folder / "bad_keyword.stl", "solid x\nfacet normal 0 0 1\nouter lop\nvertx 0 0 0\n");
  expect_error(folder / "bad_keyword.stl", ":4: unexpected 'vertx'");
  const std::string truncated = binary_stl_bytes(cube_with_interior_points(1.0));
  write_text(folder / "truncated.stl", truncated.substr(0, truncated.size() - 10));
  expect_error(folder / "truncated.stl", "binary STL declares 4 triangles");
  write_text(folder / "short.stl", "abc");
  expect_error(folder / "short.stl", "not an STL file");
  // Non-positive scale.
  write_text(folder / "cube.obj", obj_text(cube_with_interior_points(1.0)));
  try {
    load_convex_mesh(folder / "cube.obj", {1, 0, 1});
    ADD_FAILURE() << "no error for a zero scale";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("scale must be positive"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------
// Mass properties against closed forms.

TEST(ConvexMeshMassProperties, OffCentreBoxMatchesClosedForm) {
  // The box [0, 2] × [0, 1] × [0, 3]: volume 6, centroid (1, ½, 3/2), I = V/12 (b² + c², ...).
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i) points.push_back({(i & 1) ? 2.0 : 0.0, (i & 2) ? 1.0 : 0.0, (i & 4) ? 3.0 : 0.0});
  const ConvexMesh mesh = convex_hull(points, "box");
  EXPECT_NEAR(mesh.volume, 6.0, 1e-12);
  EXPECT_NEAR(mesh.centroid.x, 1.0, 1e-12);
  EXPECT_NEAR(mesh.centroid.y, 0.5, 1e-12);
  EXPECT_NEAR(mesh.centroid.z, 1.5, 1e-12);
  const double expected[3] = {6.0 / 12 * (1 + 9), 6.0 / 12 * (4 + 9), 6.0 / 12 * (4 + 1)};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(mesh.inertia(i, j), i == j ? expected[i] : 0.0, 1e-12);
}

TEST(ConvexMeshMassProperties, TetrahedronMatchesClosedForm) {
  // Vertices 0, a e_x, a e_y, a e_z: V = a³/6, centroid a/4 (1, 1, 1); about the centroid
  // I_xx = 3/80 · V · (a² + a²) · 2 = a⁵/80 and I_xy = a⁵/480 (Tonon 2004, a = b = c).
  const double a = 1.7;
  const std::vector<Vec3> points = {{0, 0, 0}, {a, 0, 0}, {0, a, 0}, {0, 0, a}, {0.2, 0.2, 0.2}};
  const ConvexMesh mesh = convex_hull(points, "tetrahedron");
  EXPECT_EQ(mesh.vertex_count(), 4);
  EXPECT_EQ(mesh.face_count(), 4);
  EXPECT_EQ(mesh.edge_count(), 6);
  const double a5 = std::pow(a, 5);
  EXPECT_NEAR(mesh.volume, a * a * a / 6, 1e-12);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(mesh.centroid[k], a / 4, 1e-12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(mesh.inertia(i, j), i == j ? a5 / 80 : a5 / 480, 1e-12);
}

TEST(ConvexMeshMassProperties, DensityBasedBodyMassLikeTheBoxPrimitive) {
  // A body with a mesh cube of scale 0.3 (hull [-1, 1]³) and one with a box of half extents
  // 0.3: same mass, inertia and centre of mass, from the density.
  std::vector<Vec3> points;
  for (int i = 0; i < 8; ++i) points.push_back({(i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0});
  const auto mesh = std::make_shared<const ConvexMesh>(convex_hull(points, "cube"));
  ModelBuilder builder;
  for (int kind = 0; kind < 2; ++kind) {
    BodySpec body;
    body.name = kind == 0 ? "mesh" : "box";
    body.density = 700.0;
    ShapeSpec shape;
    shape.position = {0.1, -0.2, 0.05};
    shape.orientation = Quat::from_axis_angle(normalized(Vec3{1, 2, 3}), 0.4);
    if (kind == 0) {
      shape.type = ShapeType::ConvexMesh;
      shape.mesh = mesh;
      shape.scale = 0.3;
    } else {
      shape.type = ShapeType::Box;
      shape.half_extents = {0.3, 0.3, 0.3};
    }
    body.shapes.push_back(shape);
    builder.add_body(body);
  }
  const Scene scene = builder.build();
  const Model& model = scene.model;
  EXPECT_EQ(model.meshes.size(), 1u);
  const double mass = 700.0 * 0.6 * 0.6 * 0.6;
  EXPECT_NEAR(scene.params.slice(model, "body/mesh/mass")[0], mass, 1e-9);
  EXPECT_NEAR(scene.params.slice(model, "body/box/mass")[0], mass, 1e-9);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(scene.params.slice(model, "body/mesh/inertia")[static_cast<std::size_t>(k)],
                scene.params.slice(model, "body/box/inertia")[static_cast<std::size_t>(k)], 1e-12);
  EXPECT_NEAR(scene.params.slice(model, "shape/mesh/0/scale")[0], 0.3, 0.0);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(scene.state.position[1][k], scene.state.position[2][k], 1e-12);
}

TEST(ConvexMeshMassProperties, HullCentroidOffTheFrameOriginMovesTheBodyOrigin) {
  // A tetrahedron whose centroid is (a/4)(1,1,1) in its frame: the body's centre of mass is
  // there, and the shape sits at minus that offset in the body frame.
  const double a = 0.4;
  const auto mesh = std::make_shared<const ConvexMesh>(
      convex_hull(std::vector<Vec3>{{0, 0, 0}, {a, 0, 0}, {0, a, 0}, {0, 0, a}}, "tetrahedron"));
  ModelBuilder builder;
  BodySpec body;
  body.name = "tetra";
  body.position = {1, 2, 3};
  ShapeSpec shape;
  shape.type = ShapeType::ConvexMesh;
  shape.mesh = mesh;
  shape.scale = 2.0;
  body.shapes.push_back(shape);
  builder.add_body(body);
  const Scene scene = builder.build();
  const double s = 2.0;
  EXPECT_NEAR(scene.params.slice(scene.model, "body/tetra/mass")[0], 1000.0 * s * s * s * a * a * a / 6, 1e-9);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(scene.state.position[1][k], body.position[k] + s * a / 4, 1e-12);
    EXPECT_NEAR(scene.model.shapes[0].local_position[k], -s * a / 4, 1e-12);
  }
}

// ---------------------------------------------------------------------------------------
// Contacts: a cube given as a mesh against the box primitive's results.

PosedShape posed(ShapeType type, const Vec3& position, const Quat& orientation, const Vec3& size,
                 const ConvexMesh* mesh = nullptr) {
  PosedShape shape;
  shape.type = type;
  shape.position = position;
  shape.orientation = orientation.normalized();
  shape.rotation = shape.orientation.to_matrix();
  shape.size = size;
  shape.mesh = mesh;
  return shape;
}

std::vector<ContactPoint> collide_all(const PosedShape& a, const PosedShape& b, double margin) {
  ContactPoint out[collision::kMaxPairContacts];
  const int count = collision::collide(a, b, margin, out, collision::pair_contact_limit(SolverSettings{}));
  return std::vector<ContactPoint>(out, out + count);
}

Quat random_rotation(std::mt19937_64& rng) {
  std::normal_distribution<double> gaussian;
  return Quat{gaussian(rng), gaussian(rng), gaussian(rng), gaussian(rng)}.normalized();
}
Vec3 random_vector(std::mt19937_64& rng, double low, double high) {
  std::uniform_real_distribution<double> uniform(low, high);
  return {uniform(rng), uniform(rng), uniform(rng)};
}

// Are the two contact sets the same points, normals and gaps (in any order)?
bool same_contacts(const std::vector<ContactPoint>& first, const std::vector<ContactPoint>& second, double tolerance,
                   std::string& why) {
  if (first.size() != second.size()) {
    why = "counts " + std::to_string(first.size()) + " and " + std::to_string(second.size());
    return false;
  }
  std::vector<bool> used(second.size(), false);
  for (const ContactPoint& contact : first) {
    bool found = false;
    for (std::size_t j = 0; j < second.size() && !found; ++j) {
      if (used[j]) continue;
      const ContactPoint& other = second[j];
      if (norm(contact.position - other.position) < tolerance && norm(contact.normal - other.normal) < tolerance &&
          std::abs(contact.gap - other.gap) < tolerance) {
        used[j] = true;
        found = true;
      }
    }
    if (!found) {
      why = "no match for the contact at (" + std::to_string(contact.position.x) + ", " +
            std::to_string(contact.position.y) + ", " + std::to_string(contact.position.z) + ") gap " +
            std::to_string(contact.gap);
      return false;
    }
  }
  return true;
}

class MeshCubeAgainstBox : public ::testing::TestWithParam<ShapeType> {};

// The cube [-1, 1]³ as a mesh at scale h equals the box of half extents (h, h, h): every pair
// at random poses near contact (penetrating or separated within the margin) gives the same
// contacts, whichever argument order.
TEST_P(MeshCubeAgainstBox, SameContactsAsTheBoxPrimitive) {
  const ShapeType other_type = GetParam();
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i) corners.push_back({(i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0});
  const ConvexMesh cube = convex_hull(corners, "cube");
  std::mt19937_64 rng(7 + static_cast<int>(other_type));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double margin = 0.05;
  int compared = 0, with_contacts = 0;
  for (int trial = 0; trial < 400; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const double h = 0.2 + 0.6 * uniform(rng);
    const Quat orientation = random_rotation(rng);
    const Vec3 center = random_vector(rng, -1, 1);
    const PosedShape as_mesh = posed(ShapeType::ConvexMesh, center, orientation, {h, 0, 0}, &cube);
    const PosedShape as_box = posed(ShapeType::Box, center, orientation, {h, h, h});
    PosedShape other;
    double reach = 0.0;
    const Quat other_orientation = random_rotation(rng);
    switch (other_type) {
      case ShapeType::Sphere: {
        const double radius = 0.1 + 0.4 * uniform(rng);
        other = posed(ShapeType::Sphere, {}, other_orientation, {radius, 0, 0});
        reach = radius;
        break;
      }
      case ShapeType::Capsule:
      case ShapeType::Cylinder: {  // a cylinder collides as a capsule (model.hpp)
        const double radius = 0.1 + 0.3 * uniform(rng), half_length = 0.1 + 0.5 * uniform(rng);
        other = posed(ShapeType::Capsule, {}, other_orientation, {radius, half_length, 0});
        reach = radius + half_length;
        break;
      }
      case ShapeType::Box: {
        const Vec3 half = random_vector(rng, 0.1, 0.7);
        other = posed(ShapeType::Box, {}, other_orientation, half);
        reach = norm(half);
        break;
      }
      case ShapeType::ConvexMesh: {
        const double scale = 0.1 + 0.6 * uniform(rng);
        other = posed(ShapeType::ConvexMesh, {}, other_orientation, {scale, 0, 0}, &cube);
        reach = std::sqrt(3.0) * scale;
        break;
      }
      case ShapeType::Plane:
        other = posed(ShapeType::Plane, {}, other_orientation, {});
        break;
      case ShapeType::Ellipsoid:  // not a parameter: a cube given as a mesh is compared with the box primitive
        break;
    }
    if (other_type == ShapeType::Plane) {
      // The cube's centre at (support depth + a gap in [−0.3, 0.05]) over the plane.
      const Vec3 normal = other.rotation.col(2);
      const double support = h * dot(Vec3{1, 1, 1}, cwise_abs(as_box.rotation.transpose_times(normal)));
      other.position = center - normal * (support + 0.35 * uniform(rng) - 0.3);
    } else {
      const Vec3 direction = random_rotation(rng).rotate({0, 0, 1});
      other.position = center + direction * ((std::sqrt(3.0) * h + reach) * (0.3 + 0.75 * uniform(rng)));
    }
    if (other_type == ShapeType::ConvexMesh) {
      // Compare with box–box on the box twin of the other mesh cube too.
      const PosedShape other_box =
          posed(ShapeType::Box, other.position, other.orientation, {other.size.x, other.size.x, other.size.x});
      for (int order = 0; order < 2; ++order) {
        const auto mesh_contacts =
            order == 0 ? collide_all(as_mesh, other, margin) : collide_all(other, as_mesh, margin);
        const auto box_contacts =
            order == 0 ? collide_all(as_box, other_box, margin) : collide_all(other_box, as_box, margin);
        std::string why;
        EXPECT_TRUE(same_contacts(mesh_contacts, box_contacts, 1e-9, why)) << why;
        with_contacts += !box_contacts.empty();
        ++compared;
      }
      continue;
    }
    for (int order = 0; order < 2; ++order) {
      const auto mesh_contacts = order == 0 ? collide_all(as_mesh, other, margin) : collide_all(other, as_mesh, margin);
      const auto box_contacts = order == 0 ? collide_all(as_box, other, margin) : collide_all(other, as_box, margin);
      std::string why;
      EXPECT_TRUE(same_contacts(mesh_contacts, box_contacts, 1e-9, why)) << why << " (order " << order << ")";
      with_contacts += !box_contacts.empty();
      ++compared;
    }
  }
  EXPECT_EQ(compared, 800);
  EXPECT_GT(with_contacts, 300);  // most poses are in contact, some are not
}

INSTANTIATE_TEST_SUITE_P(EveryShape, MeshCubeAgainstBox,
                         ::testing::Values(ShapeType::Plane, ShapeType::Sphere, ShapeType::Capsule, ShapeType::Box,
                                           ShapeType::ConvexMesh),
                         [](const auto& test_info) {
                           switch (test_info.param) {
                             case ShapeType::Plane:
                               return std::string("Plane");
                             case ShapeType::Sphere:
                               return std::string("Sphere");
                             case ShapeType::Capsule:
                               return std::string("Capsule");
                             case ShapeType::Cylinder:
                               return std::string("Cylinder");
                             case ShapeType::Box:
                               return std::string("Box");
                             case ShapeType::ConvexMesh:
                               return std::string("MeshCube");
                             case ShapeType::Ellipsoid:
                               return std::string("Ellipsoid");
                           }
                           return std::string("?");
                         });

// A resting face manifold: a mesh cube lying on a larger box face gets its four corners.
TEST(MeshCubeAgainstBox, RestingOnABoxFaceGivesTheFourCorners) {
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i) corners.push_back({(i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0});
  const ConvexMesh cube = convex_hull(corners, "cube");
  const PosedShape mesh = posed(ShapeType::ConvexMesh, {0.1, 0.2, 1.0 + 0.25 - 0.001},
                                Quat::from_axis_angle({0, 0, 1}, 0.3), {0.25, 0, 0}, &cube);
  const PosedShape table = posed(ShapeType::Box, {0, 0, 0.5}, Quat::identity(), {2, 2, 0.5});
  const std::vector<ContactPoint> contacts = collide_all(mesh, table, 0.01);
  ASSERT_EQ(contacts.size(), 4u);
  for (const ContactPoint& contact : contacts) {
    EXPECT_NEAR(contact.gap, -0.001, 1e-12);
    EXPECT_NEAR(contact.normal.z, 1.0, 1e-12);
    EXPECT_NEAR(contact.position.z, 1.0 - 0.0005, 1e-12);
    // A corner of the cube's bottom face.
    const Vec3 local = mesh.rotation.transpose_times(contact.position - mesh.position);
    EXPECT_NEAR(std::abs(local.x), 0.25, 1e-9);
    EXPECT_NEAR(std::abs(local.y), 0.25, 1e-9);
  }
}

// ---------------------------------------------------------------------------------------
// Contacts of an irregular hull: on both surfaces, mirrored under swapping, none when far.

// Signed distance to a convex polyhedron: exact inside and on the surface (the largest face
// plane distance), a lower bound outside; enough to check points on or inside the surface.
double face_plane_distance(const PosedShape& shape, const Vec3& point) {
  const Vec3 local = shape.rotation.transpose_times(point - shape.position) / shape.size.x;
  double largest = -INFINITY;
  for (const ConvexMesh::Face& face : shape.mesh->faces)
    largest = std::max(largest, dot(face.normal, local) - face.offset);
  return largest * shape.size.x;
}
double surface_distance(const PosedShape& shape, const Vec3& point) {
  const Vec3 local = shape.rotation.transpose_times(point - shape.position);
  switch (shape.type) {
    case ShapeType::Sphere:
      return norm(local) - shape.size.x;
    case ShapeType::Capsule:
    case ShapeType::Cylinder: {  // collides as a capsule
      const double z = std::clamp(local.z, -shape.size.y, shape.size.y);
      return norm(local - Vec3{0, 0, z}) - shape.size.x;
    }
    case ShapeType::Box: {
      const Vec3 q = cwise_abs(local) - shape.size;
      const Vec3 outside{std::max(q.x, 0.0), std::max(q.y, 0.0), std::max(q.z, 0.0)};
      return norm(outside) + std::min(std::max({q.x, q.y, q.z}), 0.0);
    }
    case ShapeType::Plane:
      return local.z;
    case ShapeType::ConvexMesh:
      return face_plane_distance(shape, point);
    case ShapeType::Ellipsoid:  // no closed form; no caller passes one
      break;
  }
  return 0.0;
}

ConvexMesh irregular_hull(std::mt19937_64& rng) {
  // 20 points on an ellipsoid with semi-axes (1, 0.7, 0.5).
  std::vector<Vec3> points;
  for (int i = 0; i < 20; ++i) {
    const Vec3 direction = random_rotation(rng).rotate({0, 0, 1});
    points.push_back({direction.x, 0.7 * direction.y, 0.5 * direction.z});
  }
  return convex_hull(points, "irregular");
}

TEST(ConvexMeshContacts, IrregularHullContactsLieOnBothSurfacesAndMirror) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const ConvexMesh hull = irregular_hull(rng);
  const double margin = 0.05;
  for (const ShapeType other_type :
       {ShapeType::Plane, ShapeType::Sphere, ShapeType::Capsule, ShapeType::Box, ShapeType::ConvexMesh}) {
    SCOPED_TRACE(static_cast<int>(other_type));
    int with_contacts = 0, fallbacks = 0;
    for (int trial = 0; trial < 200; ++trial) {
      SCOPED_TRACE("trial " + std::to_string(trial));
      const double scale = 0.3 + 0.5 * uniform(rng);
      // One draw per statement: the order of a call's arguments is unspecified (clang and gcc differ).
      const Vec3 center = random_vector(rng, -1, 1);
      const Quat rotation = random_rotation(rng);
      const PosedShape mesh = posed(ShapeType::ConvexMesh, center, rotation, {scale, 0, 0}, &hull);
      PosedShape other;
      switch (other_type) {
        case ShapeType::Sphere:
          other = posed(other_type, {}, Quat::identity(), {0.1 + 0.3 * uniform(rng), 0, 0});
          break;
        case ShapeType::Capsule:
        case ShapeType::Cylinder:
          other = posed(other_type, {}, random_rotation(rng), {0.1 + 0.2 * uniform(rng), 0.1 + 0.4 * uniform(rng), 0});
          break;
        case ShapeType::Box:
          other = posed(other_type, {}, random_rotation(rng), random_vector(rng, 0.1, 0.5));
          break;
        case ShapeType::ConvexMesh:
          other = posed(other_type, {}, random_rotation(rng), {0.2 + 0.4 * uniform(rng), 0, 0}, &hull);
          break;
        case ShapeType::Plane:
          other = posed(other_type, {}, random_rotation(rng), {});
          break;
        case ShapeType::Ellipsoid:  // not in this test's list
          break;
      }
      const Vec3 direction = random_rotation(rng).rotate({0, 0, 1});
      if (other_type == ShapeType::Plane) {
        other.position = mesh.position - other.rotation.col(2) * (scale * (0.2 + 0.9 * uniform(rng)));
      } else {
        other.position = mesh.position + direction * (1.6 * scale * (0.3 + 0.8 * uniform(rng)));
      }
      const auto contacts = collide_all(mesh, other, margin);
      const auto swapped = collide_all(other, mesh, margin);
      ASSERT_EQ(contacts.size(), swapped.size());
      with_contacts += !contacts.empty();
      for (const ContactPoint& contact : contacts) {
        EXPECT_NEAR(norm(contact.normal), 1.0, 1e-12);
        EXPECT_LT(contact.gap, margin);
        const Vec3 on_mesh = contact.position + contact.normal * (0.5 * contact.gap);
        const Vec3 on_other = contact.position - contact.normal * (0.5 * contact.gap);
        const double mesh_distance = surface_distance(mesh, on_mesh);
        const double other_distance = surface_distance(other, on_other);
        // A face manifold whose clipped points all lie beyond the margin falls back to the
        // incident hull's deepest vertex (as box–box does): that point is on its surface,
        // its projection on the reference plane may lie outside the reference face.
        const bool deepest_vertex_fallback = other_type != ShapeType::Sphere && other_type != ShapeType::Capsule &&
                                             contact.feature >= (1 << 29) && contact.feature < (1 << 30);
        if (deepest_vertex_fallback) {
          ++fallbacks;
          EXPECT_LE(std::min(mesh_distance, other_distance), 1e-9);
        } else {
          EXPECT_LE(mesh_distance, 1e-9) << "feature " << contact.feature;
          EXPECT_LE(other_distance, 1e-9) << "feature " << contact.feature;
        }
        bool mirrored = false;
        for (const ContactPoint& s : swapped)
          mirrored |= norm(s.position - contact.position) < 1e-9 && norm(s.normal + contact.normal) < 1e-9 &&
                      std::abs(s.gap - contact.gap) < 1e-9;
        EXPECT_TRUE(mirrored);
      }
      // Far apart: nothing.
      PosedShape far = other;
      far.position = other_type == ShapeType::Plane ? mesh.position - other.rotation.col(2) * (2.0 * scale + 1.0)
                                                    : mesh.position + direction * (2.0 * scale + 2.0);
      EXPECT_TRUE(collide_all(mesh, far, margin).empty());
    }
    EXPECT_GT(with_contacts, 40);
    EXPECT_LE(20 * fallbacks, with_contacts);  // rare: deep random penetrations only
  }
}

// ---------------------------------------------------------------------------------------
// Scene files and physics.

constexpr const char* kCubeSceneJson = R"({
  "dt": 0.002,
  "ground": true,
  "bodies": [
    {"name": "cube", "position": [0, 0, 0.35], "density": 500,
     "shapes": [{"type": "mesh", "file": "meshes/cube.obj", "scale": 0.2}]}
  ]
})";

TEST(ConvexMeshScene, MeshCubeDroppedOnTheGroundRestsAtItsHalfHeight) {
  const std::filesystem::path folder = test_folder("scene");
  std::filesystem::create_directories(folder / "meshes");
  write_text(folder / "meshes" / "cube.obj", obj_text(cube_with_interior_points(1.0)));
  write_text(folder / "cube.json", kCubeSceneJson);
  const Scene scene = load_scene(folder / "cube.json");
  EXPECT_EQ(scene.model.shapes[1].type, ShapeType::ConvexMesh);
  EXPECT_NEAR(scene.params.slice(scene.model, "body/cube/mass")[0], 500 * 0.4 * 0.4 * 0.4, 1e-9);
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int i = 0; i < 1500; ++i) {
    const StepStatus status = simulator.step(scene.controls);
    ASSERT_TRUE(status.converged) << "step " << i;
  }
  const State& state = simulator.state();
  // At rest on its face, sunk by at most the penetration slop.
  EXPECT_NEAR(state.position[1].z, 0.2, scene.model.solver.penetration_slop + 1e-6);
  EXPECT_LT(norm(state.linear_velocity[1]), 1e-6);
  EXPECT_LT(norm(state.angular_velocity[1]), 1e-6);
  EXPECT_NEAR(std::abs(state.orientation[1].w), 1.0, 1e-9);  // it fell flat and stayed so
}

TEST(ConvexMeshScene, BadMeshShapesNameTheFieldAndTheFile) {
  const std::filesystem::path folder = test_folder("bad_scene");
  const auto expect_error = [&](const std::string& shape_json, const std::vector<std::string>& expected) {
    write_text(folder / "scene.json", R"({"bodies": [{"name": "b", "shapes": [)" + shape_json + "]}]}");
    try {
      load_scene(folder / "scene.json");
      ADD_FAILURE() << "no error for " << shape_json;
    } catch (const Error& error) {
      for (const std::string& piece : expected)
        EXPECT_NE(std::string(error.what()).find(piece), std::string::npos) << error.what();
    }
  };
  expect_error(R"({"type": "mesh", "file": "nope.stl"})",
               {"scene.json", "bodies[0].shapes[0].file", (folder / "nope.stl").string(), "no such file"});
  expect_error(R"({"type": "mesh"})", {"bodies[0].shapes[0]", "missing required key \"file\""});
  expect_error(R"({"type": "mesh", "file": "x.obj", "radius": 1})", {"radius", "by a mesh"});
  expect_error(R"({"type": "box", "half_extents": [1, 1, 1], "file": "x.obj"})", {"file", "except by a mesh"});
  write_text(folder / "flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n");
  expect_error(R"({"type": "mesh", "file": "flat.obj"})", {"bodies[0].shapes[0].file", "flat.obj", "degenerate mesh"});
  write_text(folder / "cube.obj", obj_text(cube_with_interior_points(1.0)));
  expect_error(R"({"type": "mesh", "file": "cube.obj", "scale": -2})", {"scale must be positive", "-2"});
  expect_error(R"({"type": "mesh", "file": "cube.obj", "scale": [1, 2]})", {"scale", "3 numbers"});
  expect_error(R"({"type": "mesh", "file": "cube.obj", "scale": [1, -2, 1]})",
               {"bodies[0].shapes[0].scale", "each component must be positive", "[1,-2,1]"});
}

// A body whose only shape is the box of half extents `half` given as a mesh (scale 1), or the
// box primitive.
BodySpec box_or_mesh_body(const std::string& name, const Vec3& position, const Vec3& half, bool as_mesh) {
  BodySpec body;
  body.name = name;
  body.position = position;
  body.density = 400.0;
  ShapeSpec shape;
  if (as_mesh) {
    std::vector<Vec3> corners;
    for (int i = 0; i < 8; ++i)
      corners.push_back({(i & 1) ? half.x : -half.x, (i & 2) ? half.y : -half.y, (i & 4) ? half.z : -half.z});
    shape.type = ShapeType::ConvexMesh;
    shape.mesh = std::make_shared<const ConvexMesh>(convex_hull(corners, name));
  } else {
    shape.type = ShapeType::Box;
    shape.half_extents = half;
  }
  body.shapes.push_back(shape);
  return body;
}

TEST(ConvexMeshScene, TumblingMeshBoxFollowsTheBoxPrimitive) {
  // Dropped turned, it lands on an edge, tips over and slides: the same trajectory as the
  // box primitive (the contacts agree to rounding, see MeshCubeAgainstBox).
  State final_states[2];
  for (int as_mesh = 0; as_mesh < 2; ++as_mesh) {
    ModelBuilder builder;
    builder.dt = 2e-3;
    builder.add_ground_plane();
    BodySpec body = box_or_mesh_body("brick", {0, 0, 0.4}, {0.2, 0.1, 0.05}, as_mesh == 1);
    body.orientation = Quat::from_axis_angle(normalized(Vec3{1, 2, 0.5}), 0.7);
    body.linear_velocity = {0.5, 0, 0};
    body.angular_velocity = {0, 1, 2};
    builder.add_body(body);
    const Scene scene = builder.build();
    Simulator simulator(scene.model, scene.params, scene.state);
    int contact_steps = 0;
    for (int i = 0; i < 400; ++i) contact_steps += simulator.step(scene.controls).contact_count > 0;
    EXPECT_GT(contact_steps, 100);
    final_states[as_mesh] = simulator.state();
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(final_states[0].position[1][k], final_states[1].position[1][k], 1e-6);
    EXPECT_NEAR(final_states[0].linear_velocity[1][k], final_states[1].linear_velocity[1][k], 1e-6);
    EXPECT_NEAR(final_states[0].angular_velocity[1][k], final_states[1].angular_velocity[1][k], 1e-6);
  }
}

TEST(ConvexMeshScene, RolloutsAreBitIdenticalWhenRepeated) {
  std::mt19937_64 rng(5);
  std::vector<Vec3> points;
  for (int i = 0; i < 16; ++i) points.push_back(random_vector(rng, -0.1, 0.1));
  const auto hull = std::make_shared<const ConvexMesh>(convex_hull(points, "rock"));
  ModelBuilder builder;
  builder.add_ground_plane();
  for (int i = 0; i < 3; ++i) {
    BodySpec body;
    body.name = "rock" + std::to_string(i);
    body.position = {0.05 * i, 0.02 * i, 0.15 + 0.18 * i};
    body.orientation = random_rotation(rng);
    ShapeSpec shape;
    shape.type = ShapeType::ConvexMesh;
    shape.mesh = hull;
    body.shapes.push_back(shape);
    builder.add_body(body);
  }
  const Scene scene = builder.build();
  State finals[2];
  for (int run = 0; run < 2; ++run) {
    Simulator simulator(scene.model, scene.params, scene.state);
    for (int i = 0; i < 600; ++i) simulator.step(scene.controls);
    finals[run] = simulator.state();
  }
  for (int b = 1; b < scene.model.body_count(); ++b) {
    EXPECT_EQ(finals[0].position[static_cast<std::size_t>(b)], finals[1].position[static_cast<std::size_t>(b)]);
    EXPECT_EQ(finals[0].orientation[static_cast<std::size_t>(b)], finals[1].orientation[static_cast<std::size_t>(b)]);
  }
  EXPECT_LT(finals[0].position[3].z, 0.3);  // the rocks fell and piled up
}

// ---------------------------------------------------------------------------------------
// Whole-rollout gradients (diffphys/gradcheck.hpp) of mesh bodies on the ground, against
// central finite differences: every parameter (the mesh scale included), the initial state.

GradientCheckReport check(const Scene& scene, int steps, std::uint32_t seed, double param_epsilon) {
  GradientCheckOptions options;
  options.steps = steps;
  options.seed = seed;
  options.param_epsilon = param_epsilon;
  return testing::expect_gradients_match_central_differences(scene, options);
}

// Steps of the rollout with at least `least` contacts (the check is about contact, not flight).
int steps_in_contact(const Scene& scene, int steps, int least) {
  Simulator simulator(scene.model, scene.params, scene.state);
  int in_contact = 0;
  for (int i = 0; i < steps; ++i) in_contact += simulator.step(scene.controls).contact_count >= least;
  return in_contact;
}

bool has_entry(const GradientCheckReport& report, const std::string& prefix) {
  for (const GradientCheckEntry& entry : report.entries)
    if (entry.name.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(ConvexMeshGradient, MeshBoxRestingAndPushedMatchesCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.add_ground_plane();
  BodySpec body = box_or_mesh_body("brick", {0, 0, 0.1}, {0.2, 0.15, 0.1}, true);
  body.mass = 2.0;
  body.force = {6.0, 1.0, 0};  // past the friction threshold μ m g ≈ 4.9 N: it slides
  body.friction = 0.25;
  builder.world_friction = 0.25;
  builder.add_body(body);
  const Scene scene = builder.build();
  // As for the box primitive (gradient_test.cpp): four redundant corner contacts, parameter
  // steps of 1e-4 relative.
  EXPECT_EQ(steps_in_contact(scene, 100, 4), 100);
  const GradientCheckReport report = check(scene, 100, 5, 1e-4);
  EXPECT_GT(report.entries.size(), 10u);
  EXPECT_TRUE(has_entry(report, "shape/brick/0/scale"));
}

// A hull of `points` (scale 1.2, friction 0.3 with the ground) launched along the ground at
// (1.5, 0.3) m/s, spinning at 1 rad/s about z, with the given friction pyramid.
Scene sliding_spinning_hull(const std::string& name, const std::vector<Vec3>& points, bool slip_aligned_friction) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.solver.slip_aligned_friction = slip_aligned_friction;
  builder.add_ground_plane();
  builder.world_friction = 0.3;
  BodySpec body;
  body.name = name;
  body.position = {0, 0, 0.05};
  body.linear_velocity = {1.5, 0.3, 0};
  body.angular_velocity = {0, 0, 1.0};
  body.friction = 0.3;
  ShapeSpec shape;
  shape.type = ShapeType::ConvexMesh;
  shape.mesh = std::make_shared<const ConvexMesh>(convex_hull(points, name));
  shape.scale = 1.2;
  body.shapes.push_back(shape);
  builder.add_body(body);
  return builder.build();
}

// A hull on four base corners that slides *and spins* is statically indeterminate: the split
// of its weight among the corners is not unique. With the default slip-aligned pyramids
// (rigid/inequality_rows.hpp) each corner's friction follows its own slip, so the total
// friction depends on that split, and the hard problem's answer, and its gradient, are the
// solver's choice (measured: 1e-4 to 1e-2 relative against central differences on this
// hull). The two four-corner tests below keep the fixed pyramid, which puts every corner
// sliding within one sector at the same vertex; the three-corner test after them checks the
// slip-aligned axes where the problem is determinate. (The convex formulation is unique in
// both: docs/simulation.md.)
TEST(ConvexMeshGradient, HullSlidingAndSpinningMatchesCentralDifferences) {
  // A wedge-like hull launched along the ground: it slides on its base face.
  const std::vector<Vec3> points = {{-0.15, -0.1, -0.05}, {0.15, -0.1, -0.05}, {-0.15, 0.1, -0.05},
                                    {0.15, 0.1, -0.05},   {-0.1, 0.0, 0.08},   {0.12, 0.02, 0.06}};
  const Scene scene = sliding_spinning_hull("wedge", points, false);
  EXPECT_EQ(steps_in_contact(scene, 60, 3), 60);
  const GradientCheckReport report = check(scene, 60, 6, 1e-4);
  EXPECT_GT(report.entries.size(), 10u);
  EXPECT_TRUE(has_entry(report, "shape/wedge/0/scale"));
}

TEST(ConvexMeshGradient, HullSlidingOnAStaticBoxMatchesCentralDifferences) {
  // Mesh against box (the polyhedron pair), not a plane: an irregular hull with a flat base
  // slides across a static box's top face.
  const std::vector<Vec3> points = {{-0.1, -0.08, -0.04}, {0.1, -0.08, -0.04}, {-0.1, 0.08, -0.04},
                                    {0.1, 0.08, -0.04},   {0.0, 0.02, 0.07},   {-0.05, -0.04, 0.05}};
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.solver.slip_aligned_friction = false;  // four corners, spinning: see above
  BodySpec table;
  table.name = "table";
  table.type = BodyType::Static;
  table.position = {0, 0, -0.1};
  ShapeSpec top;
  top.type = ShapeType::Box;
  top.half_extents = {1.0, 1.0, 0.1};
  table.shapes.push_back(top);
  table.friction = 0.4;
  builder.add_body(table);
  BodySpec body;
  body.name = "puck";
  body.position = {0, 0, 0.04};
  body.linear_velocity = {1.0, -0.4, 0};
  body.angular_velocity = {0, 0, -2.0};
  body.friction = 0.4;
  ShapeSpec shape;
  shape.type = ShapeType::ConvexMesh;
  shape.mesh = std::make_shared<const ConvexMesh>(convex_hull(points, "puck"));
  body.shapes.push_back(shape);
  builder.add_body(body);
  Scene scene = builder.build();
  // Start exactly on the face: the body origin is the centroid, the base 0.04 below the
  // file's origin.
  const double base = scene.model.meshes[0].centroid.z + 0.04;
  scene.state.position[2].z = base;
  EXPECT_EQ(steps_in_contact(scene, 60, 3), 60);
  const GradientCheckReport report = check(scene, 60, 7, 1e-4);
  EXPECT_GT(report.entries.size(), 10u);
  EXPECT_TRUE(has_entry(report, "shape/puck/0/scale"));
}

TEST(ConvexMeshGradient, TripodSlidingAndSpinningWithSlipAlignedFrictionMatchesCentralDifferences) {
  // A tetrahedron on its triangular base: three contacts carry its weight in a unique split,
  // and while it slides and spins each corner's slip, and so its pyramid's axes, point a
  // different way and turn every step.
  const std::vector<Vec3> points = {{-0.15, -0.1, -0.05}, {0.15, -0.1, -0.05}, {0.0, 0.15, -0.05}, {0.0, 0.0, 0.08}};
  Scene scene = sliding_spinning_hull("tripod", points, true);
  ASSERT_TRUE(scene.model.solver.slip_aligned_friction);
  // Start on the base: the body origin is the centroid, the base 0.05·1.2 below the file's origin.
  scene.state.position[1].z = scene.model.meshes[0].centroid.z + 0.06;
  EXPECT_EQ(steps_in_contact(scene, 60, 3), 60);
  const GradientCheckReport report = check(scene, 60, 8, 1e-4);
  EXPECT_GT(report.entries.size(), 10u);
  EXPECT_TRUE(has_entry(report, "shape/tripod/0/scale"));
}

}  // namespace
}  // namespace diffphys
