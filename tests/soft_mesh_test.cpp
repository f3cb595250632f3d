// tests/soft_mesh_test.cpp — mesh generators and the tet-mesh text format: round trips,
// volumes, and clear errors for bad meshes (inverted, degenerate, unknown node indices).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_mesh.hpp"

namespace diffphys::soft {
namespace {

void expect_error(const std::function<void()>& action, const std::vector<std::string>& fragments) {
  try {
    action();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& error) {
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << "'" << error.what() << "' lacks '" << fragment << "'";
  }
}

TEST(SoftMesh, TetBoxIsConformingWithPositiveVolumesSummingToTheBox) {
  SoftSpec spec;
  spec.tet_materials = {{"m"}};
  add_tet_box(spec, {0.1, 0.2, 0.3}, {0.4, 0.2, 0.3}, {4, 2, 3}, 0);
  EXPECT_EQ(spec.nodes.size(), 5u * 3u * 4u);
  EXPECT_EQ(spec.tets.size(), 6u * 4u * 2u * 3u);
  const SoftBuild built = build_soft(spec);  // throws on any inverted or degenerate tet
  double volume = 0.0;
  for (const TetElement& tet : built.model.tets) volume += tet.rest_volume;
  EXPECT_NEAR(volume, 0.4 * 0.2 * 0.3, 1e-12);
  std::vector<double> masses(static_cast<std::size_t>(built.model.node_count));
  lumped_masses(built.model, built.params, masses);
  double total = 0.0;
  for (const double m : masses) total += m;
  EXPECT_NEAR(total, 1000.0 * 0.4 * 0.2 * 0.3, 1e-9);
}

TEST(SoftMesh, ClothRectangleHasHingesOnInteriorEdgesAndIsFlatAtRest) {
  SoftSpec spec;
  spec.cloth_materials = {{"c"}};
  add_cloth_rectangle(spec, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, 3, 2, 0);
  const SoftBuild built = build_soft(spec);
  EXPECT_EQ(built.model.triangles.size(), 12u);
  // Interior edges: 3·2 (diagonals) + 2·2 (vertical interior) + 3·1 (horizontal interior) = 13.
  EXPECT_EQ(built.model.hinges.size(), 13u);
  for (const Hinge& hinge : built.model.hinges) EXPECT_NEAR(hinge.rest_angle, 0.0, 1e-12);
  const SoftEnergies energies = soft_energies(built.model, built.params, built.state);
  EXPECT_NEAR(energies.elastic, 0.0, 1e-15);
}

TEST(SoftMesh, TextFormatRoundTrip) {
  SoftSpec spec;
  add_tet_box(spec, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 0);
  TetMesh mesh{spec.nodes, {}};
  for (const TetSpec& tet : spec.tets) mesh.tets.push_back(tet.nodes);
  const TetMesh parsed = parse_tet_mesh("# a cube\n\n" + format_tet_mesh(mesh) + "  # trailing comment\n");
  ASSERT_EQ(parsed.nodes.size(), mesh.nodes.size());
  ASSERT_EQ(parsed.tets.size(), mesh.tets.size());
  for (std::size_t i = 0; i < mesh.nodes.size(); ++i) EXPECT_EQ(parsed.nodes[i], mesh.nodes[i]);
  for (std::size_t t = 0; t < mesh.tets.size(); ++t) EXPECT_EQ(parsed.tets[t], mesh.tets[t]);
}

TEST(SoftMesh, BadMeshesGiveClearErrors) {
  const std::string nodes = "nodes 4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n";
  expect_error([&] { parse_tet_mesh(nodes + "tets 1\n0 2 1 3\n", "m.tet"); }, {"m.tet:7", "tet 0", "inverted"});
  expect_error([&] { parse_tet_mesh("nodes 4\n0 0 0\n1 0 0\n2 0 0\n0 0 1\ntets 1\n0 1 2 3\n", "m.tet"); },
               {"m.tet:7", "degenerate"});
  expect_error([&] { parse_tet_mesh(nodes + "tets 1\n0 1 2 4\n", "m.tet"); }, {"m.tet:7", "unknown node index 4", "4 nodes"});
  expect_error([&] { parse_tet_mesh(nodes + "tets 1\n0 1 2 -1\n", "m.tet"); }, {"unknown node index -1"});
  expect_error([&] { parse_tet_mesh("nodes 2\n0 0 0\n1 zero 0\n", "m.tet"); }, {"m.tet:3", "expected a number, got 'zero'"});
  expect_error([&] { parse_tet_mesh(nodes + "tets 2\n0 1 2 3\n", "m.tet"); }, {"expected 2 tets"});
  expect_error([&] { parse_tet_mesh("vertices 1\n", "m.tet"); }, {"m.tet:1", "expected 'nodes <count>'"});
  expect_error([&] { load_tet_mesh("/nonexistent/mesh.tet"); }, {"/nonexistent/mesh.tet", "cannot open"});

  // The same checks when a spec is built by hand.
  SoftSpec spec;
  spec.nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  spec.tet_materials = {{"m"}};
  spec.tets = {{{0, 2, 1, 3}, 0}};
  expect_error([&] { build_soft(spec); }, {"tet 0", "inverted", "signed volume"});
  spec.tets = {{{0, 1, 2, 7}, 0}};
  expect_error([&] { build_soft(spec); }, {"tet 0", "unknown node index 7"});
  spec.tets = {{{0, 1, 2, 3}, 2}};
  expect_error([&] { build_soft(spec); }, {"tet 0", "unknown tet material index 2"});
  spec.tets = {};
  spec.springs = {{0, 9}};
  spec.node_masses = {1, 1, 1, 1};
  expect_error([&] { build_soft(spec); }, {"spring 0", "unknown node index 9"});
}

TEST(SoftMesh, BadParametersAndStatesGiveClearErrors) {
  SoftSpec spec;
  spec.tet_materials = {{"rubber", ElasticModel::NeoHookean, 1e5, 0.5, 1000.0}};
  add_tet_box(spec, {0, 0, 1}, {1, 1, 1}, {1, 1, 1}, 0);
  expect_error([&] { build_soft(spec); }, {"tet_material/rubber/poisson_ratio", "(−1, 0.5)", "0.5"});
  spec.tet_materials[0].poisson_ratio = 0.3;
  spec.obstacles = {{"ground", ObstacleType::Plane, {0, 0, 1.5}, {0, 0, 1}, 0.0, 0.0}};
  expect_error([&] { build_soft(spec); }, {"obstacle 'ground'", "strictly outside"});
  spec.obstacles.clear();
  spec.tet_materials[0].density = 0.0;
  expect_error([&] { build_soft(spec); }, {"node 0", "positive mass"});
}

// "cells" near INT_MAX overflowed `cells + 1`; large valid ones allocated for seconds and
// ended in std::bad_alloc. Both are refused before anything is added, naming the counts.
TEST(SoftMesh, GeneratorsRefuseMeshesBeyondTheSizeBound) {
  constexpr int huge = std::numeric_limits<int>::max();
  SoftSpec spec;
  spec.tet_materials = {{"m"}};
  expect_error([&] { add_tet_box(spec, {0, 0, 0}, {1, 1, 1}, {huge, 1, 1}, 0); },
               {"tet box: cells [2147483647, 1, 1]", "8589934592 nodes", "at most 1000000 nodes"});
  expect_error([&] { add_tet_box(spec, {0, 0, 0}, {1, 1, 1}, {huge, huge, huge}, 0); }, {"at most 1000000"});
  expect_error([&] { add_tet_box(spec, {0, 0, 0}, {1, 1, 1}, {1000, 1000, 1000}, 0); }, {"6000000000 elements"});
  expect_error([&] { add_cloth_rectangle(spec, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, huge, huge, 0); },
               {"cloth rectangle: cells [2147483647, 2147483647]", "at most 1000000"});
  EXPECT_TRUE(spec.nodes.empty() && spec.tets.empty() && spec.triangles.empty());
  // The bound counts what the spec already holds.
  add_tet_box(spec, {0, 0, 0}, {1, 1, 1}, {50, 50, 50}, 0);  // 132651 nodes, 750000 tets
  expect_error([&] { add_cloth_rectangle(spec, {0, 0, 2}, {1, 0, 0}, {0, 1, 0}, 400, 400, 0); },
               {"320000 elements", "1070000 with those before it"});
}

}  // namespace
}  // namespace diffphys::soft
