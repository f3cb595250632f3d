// tests/soft_view_test.cpp — what soft and coupled trajectory files carry for the replay page
// (viewer/soft_view_json.cpp): the tet mesh's surface is its closed, outward boundary (checked
// by the divergence theorem against the tets' volume), cloth triangles and springs are written
// as given, `diffphys simulate` writes the "topology" and "obstacles" blocks (and for coupled
// scenes the rigid "model" block), and `simulate --view` / `view` accept soft and coupled
// scenes and files.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include "cli_test_helpers.hpp"
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>

#include "diffphys/error.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_scene.hpp"
#include "replay_html.hpp"
#include "soft_view_json.hpp"

namespace diffphys {
namespace {

const std::string kSoftExamples = std::string(test_paths::source_dir()) + "/examples/soft/";

soft::SoftModel soft_model(const std::string& file) { return soft::build_soft(soft::load_soft_scene(kSoftExamples + file)).model; }

using diffphys::testing::run_cli;

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// For a closed surface oriented outward, Σ over its triangles of x0 · (x1 × x2) / 6 is the
// enclosed volume (divergence theorem), which must equal the tets' total rest volume; every
// edge is used once in each direction.
void expect_closed_outward_surface(const soft::SoftModel& model) {
  const auto surface = viewer::soft_surface_triangles(model);
  ASSERT_FALSE(surface.empty());
  const auto x = [&](int node, int r) { return model.rest_positions[static_cast<std::size_t>(3 * node + r)]; };
  double enclosed = 0.0;
  std::map<std::pair<int, int>, int> directed_edges;
  for (const auto& t : surface) {
    const double a[3] = {x(t[0], 0), x(t[0], 1), x(t[0], 2)};
    const double b[3] = {x(t[1], 0), x(t[1], 1), x(t[1], 2)};
    const double c[3] = {x(t[2], 0), x(t[2], 1), x(t[2], 2)};
    enclosed += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
    for (int k = 0; k < 3; ++k) ++directed_edges[{t[static_cast<std::size_t>(k)], t[static_cast<std::size_t>((k + 1) % 3)]}];
  }
  double volume = 0.0;
  for (const soft::TetElement& tet : model.tets) volume += tet.rest_volume;
  EXPECT_NEAR(enclosed, volume, 1e-12 * std::max(1.0, volume));
  for (const auto& [edge, uses] : directed_edges) {
    EXPECT_EQ(uses, 1) << "edge " << edge.first << "-" << edge.second;
    const auto reverse = directed_edges.find({edge.second, edge.first});
    EXPECT_TRUE(reverse != directed_edges.end() && reverse->second == 1) << "edge " << edge.first << "-" << edge.second << " is open";
  }
}

TEST(SoftView, TetMeshSurfaceIsItsClosedOutwardBoundary) {
  const soft::SoftModel cube = soft_model("tet_drop.json");
  ASSERT_EQ(cube.tets.size(), 6u);
  // A cube of 6 tets: each of its 6 faces is 2 triangles; the 6 inner faces shared by two tets are left out.
  EXPECT_EQ(viewer::soft_surface_triangles(cube).size(), 12u);
  expect_closed_outward_surface(cube);
  const soft::SoftModel beam = soft_model("hanging_beam.json");
  ASSERT_GT(beam.tets.size(), 6u);
  expect_closed_outward_surface(beam);
}

TEST(SoftView, ClothTrianglesAndSpringsAreWrittenAsGiven) {
  const soft::SoftModel cloth = soft_model("cloth_on_sphere.json");
  const nlohmann::json topology = viewer::soft_topology_json(cloth);
  ASSERT_EQ(topology["surface_triangles"].size(), cloth.triangles.size());
  EXPECT_EQ(cloth.triangles.size(), 2u * 12u * 12u);
  for (std::size_t i = 0; i < cloth.triangles.size(); ++i)
    EXPECT_EQ(topology["surface_triangles"][i].get<std::vector<int>>(),
              std::vector<int>(cloth.triangles[i].nodes.begin(), cloth.triangles[i].nodes.end()));
  EXPECT_TRUE(topology["edges"].empty());

  const soft::SoftModel springs = soft_model("mass_spring.json");
  const nlohmann::json spring_topology = viewer::soft_topology_json(springs);
  EXPECT_TRUE(spring_topology["surface_triangles"].empty());
  EXPECT_EQ(spring_topology["edges"], nlohmann::json::parse("[[0, 1], [1, 2], [2, 0]]"));
}

TEST(SoftView, ObstaclesAreWrittenWithTheirGeometry) {
  const nlohmann::json obstacles = viewer::soft_obstacles_json(soft_model("cloth_over_box_and_capsule.json"));
  std::map<std::string, nlohmann::json> by_type;
  for (const nlohmann::json& obstacle : obstacles) by_type[obstacle["type"]] = obstacle;
  ASSERT_TRUE(by_type.count("box") && by_type.count("capsule") && by_type.count("plane")) << obstacles.dump();
  EXPECT_TRUE(by_type["plane"]["frame"].is_null());
  EXPECT_EQ(by_type["box"]["rotation"].size(), 9u);
  EXPECT_EQ(by_type["capsule"]["rotation"].size(), 9u);
  EXPECT_GT(by_type["capsule"]["radius"].get<double>(), 0.0);
  EXPECT_GT(by_type["capsule"]["half_length"].get<double>(), 0.0);
  // Outer half extents, as in the scene file.
  const nlohmann::json scene = nlohmann::json::parse(read_text(kSoftExamples + "cloth_over_box_and_capsule.json"));
  for (const nlohmann::json& item : scene["soft"]["obstacles"]) {
    if (item["type"] != "box") continue;
    for (std::size_t r = 0; r < 3; ++r) {
      EXPECT_NEAR(by_type["box"]["half_extents"][r].get<double>(), item["half_extents"][r].get<double>(), 1e-15);
    }
  }
}

TEST(SoftView, SoftTrajectoryFileHasTheTopologyBlock) {
  const std::string path = ::testing::TempDir() + "soft_view_tet_drop.json";
  const auto [code, text] = run_cli("simulate " + kSoftExamples + "tet_drop.json -n 4 --every 2 --quiet -o " + path, "soft_view_sim");
  ASSERT_EQ(code, 0) << text;
  const nlohmann::json trajectory = nlohmann::json::parse(read_text(path));
  EXPECT_EQ(trajectory["format"], "diffphys-soft-trajectory");
  ASSERT_TRUE(trajectory.contains("topology")) << trajectory.dump().substr(0, 300);
  EXPECT_EQ(trajectory["topology"], viewer::soft_topology_json(soft_model("tet_drop.json")));
  EXPECT_EQ(trajectory["topology"]["surface_triangles"].size(), 12u);
  ASSERT_EQ(trajectory["obstacles"].size(), 1u);
  EXPECT_EQ(trajectory["obstacles"][0]["type"], "plane");
  EXPECT_EQ(trajectory["frames"].size(), 3u);  // steps 0, 2, 4
  EXPECT_NO_THROW(viewer::check_trajectory(read_text(path), path));
}

TEST(SoftView, CoupledTrajectoryFileHasTheRigidModelAndTheTopology) {
  const std::string path = ::testing::TempDir() + "soft_view_coupled.json";
  const auto [code, text] = run_cli("simulate " + kSoftExamples + "cloth_on_pendulum.json -n 2 --quiet -o " + path, "soft_view_coupled");
  ASSERT_EQ(code, 0) << text;
  const nlohmann::json world = nlohmann::json::parse(read_text(path));
  EXPECT_EQ(world["format"], "diffphys-world-trajectory");
  const nlohmann::json& rigid = world["parts"]["rigid"];
  const nlohmann::json& soft = world["parts"]["soft"];
  EXPECT_EQ(soft["topology"]["surface_triangles"].size(), 2u * 6u * 6u);
  // The rigid part's model block names the world and the pendulum with its two shapes.
  bool pendulum = false;
  for (const nlohmann::json& body : rigid["model"]["bodies"])
    if (body["name"] == "pendulum") pendulum = body["shapes"].size() == 2;
  EXPECT_TRUE(pendulum) << rigid["model"].dump().substr(0, 400);
  // Static obstacles (the post, the ground) and the colliders moving with the pendulum.
  int moving = 0, fixed = 0;
  for (const nlohmann::json& obstacle : soft["obstacles"]) (obstacle["frame"].is_null() ? fixed : moving) += 1;
  EXPECT_EQ(fixed, 2);
  EXPECT_EQ(moving, 2);
  EXPECT_NO_THROW(viewer::check_trajectory(read_text(path), path));
  const std::string page = ::testing::TempDir() + "soft_view_coupled.html";
  if (!viewer::replay_page_built()) return;  // built without the viewer: no page to write
  const auto [view_code, view_text] = run_cli("view " + path + " -o " + page + " --quiet", "soft_view_coupled_view");
  EXPECT_EQ(view_code, 0) << view_text;
  EXPECT_NE(read_text(page).find("diffphys-world-trajectory"), std::string::npos);
}

TEST(SoftView, SimulateViewWritesAPageForSoftScenes) {
  if (!viewer::replay_page_built()) GTEST_SKIP() << "built without the web viewer (-DDIFFPHYS_VIEWER=OFF)";
  const std::string page = ::testing::TempDir() + "soft_view_mass_spring.html";
  std::remove(page.c_str());
  const auto [code, text] = run_cli("simulate " + kSoftExamples + "mass_spring.json -n 3 --view " + page, "soft_view_page");
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(text.find("replay      " + page), std::string::npos) << text;
  const std::string html = read_text(page);
  EXPECT_NE(html.find("diffphys-soft-trajectory"), std::string::npos);
  EXPECT_NE(html.find("\"topology\""), std::string::npos);
}

std::string refusal(const nlohmann::json& trajectory) {
  try {
    viewer::check_trajectory(trajectory.dump(), "soft.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(SoftView, MalformedSoftTrajectoriesAreRefusedNamingTheKey) {
  const nlohmann::json good = {{"format", "diffphys-soft-trajectory"},
                               {"node_count", 2},
                               {"topology", {{"surface_triangles", nlohmann::json::array()}, {"edges", {{0, 1}}}}},
                               {"frames", {{{"time", 0.0}, {"positions", {0, 0, 0, 1, 0, 0}}}}}};
  EXPECT_EQ(refusal(good), "");
  nlohmann::json no_topology = good;
  no_topology.erase("topology");
  EXPECT_NE(refusal(no_topology).find("soft.json: \"topology\" is missing"), std::string::npos) << refusal(no_topology);
  nlohmann::json bad_edge = good;
  bad_edge["topology"]["edges"] = {{0, 2}};
  EXPECT_NE(refusal(bad_edge).find("topology.edges[0] must be 2 node indices in [0, 2), got [0,2]"), std::string::npos)
      << refusal(bad_edge);
  nlohmann::json short_frame = good;
  short_frame["frames"][0]["positions"] = {0, 0, 0};
  EXPECT_NE(refusal(short_frame).find("frames[0].positions must be 6 numbers"), std::string::npos) << refusal(short_frame);
  // A world of several parts: each part's document under "parts", checked as a file of its
  // own and named by its path; every part with the same number of frames.
  const nlohmann::json rigid = {{"format", "diffphys-trajectory"},
                                {"bodies", {"b"}},
                                {"frames", {{{"time", 0.0}, {"bodies", {{{"position", {0, 0, 1}}, {"orientation", {1, 0, 0, 0}}}}}}}}};
  nlohmann::json world = {{"format", "diffphys-world-trajectory"}, {"version", 1}, {"parts", {{"rigid", rigid}, {"soft", good}}}};
  EXPECT_EQ(refusal(world), "");
  nlohmann::json unknown = world;
  unknown["parts"]["fluid"] = good;
  EXPECT_NE(refusal(unknown).find("soft.json: parts.fluid: unknown kind of part"), std::string::npos) << refusal(unknown);
  nlohmann::json broken = world;
  broken["parts"]["soft"]["frames"][0]["positions"] = {0, 0, 0};
  EXPECT_NE(refusal(broken).find("soft.json: parts.soft: frames[0].positions must be 6 numbers"), std::string::npos)
      << refusal(broken);
  nlohmann::json uneven = world;
  uneven["parts"]["soft"]["frames"].push_back({{"time", 0.1}, {"positions", {0, 0, 0, 1, 0, 0}}});
  EXPECT_NE(refusal(uneven).find("parts.soft: 2 frames, but the parts before it have 1"), std::string::npos) << refusal(uneven);
  nlohmann::json old_coupled = good;
  old_coupled["format"] = "diffphys-coupled-trajectory";
  EXPECT_NE(refusal(old_coupled).find("expected \"diffphys-trajectory\", \"diffphys-soft-trajectory\" or \"diffphys-world-trajectory\""),
            std::string::npos)
      << refusal(old_coupled);
}

}  // namespace
}  // namespace diffphys
