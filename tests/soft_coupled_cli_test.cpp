// tests/soft_coupled_cli_test.cpp — `diffphys info` and `diffphys gradcheck` on coupled rigid +
// soft scene files (examples/soft/cloth_on_pendulum.json), run as a user runs them (the built
// CLI): the three parts info prints, gradcheck agreeing with central differences, its exit
// code 3 on disagreement and clear errors for bad coupled scenes.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include "cli_test_helpers.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

const std::string kPendulumScene = std::string(test_paths::source_dir()) + "/examples/soft/cloth_on_pendulum.json";

using diffphys::testing::run_cli;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(SoftCoupledCli, InfoPrintsTheRigidPartTheSoftPartAndTheCoupling) {
  const auto [code, text] = run_cli("info " + kPendulumScene, "coupled_info");
  ASSERT_EQ(code, 0) << text;
  // The scene file: a pendulum (hinge at 1.2 m; rod and bob), a 6 × 6-cell cloth (49 nodes)
  // whose top row (nodes 0–6: u runs fastest; x = 0.4, z = 1.165) is tied to the bob with k = 500 N/m, two-way,
  // soft dt 0.01 s = 4 × rigid dt 0.0025 s, the rod and bob as colliders with μ = 0.3.
  EXPECT_TRUE(contains(text, "coupled scene " + kPendulumScene + ": rigid + soft, two-way coupling")) << text;
  // Rigid part, from the rigid printer.
  EXPECT_TRUE(contains(text, "rigid part: \"pendulum\", dt 0.0025 s")) << text;
  EXPECT_TRUE(contains(text, "[1] pendulum  dynamic")) << text;
  EXPECT_TRUE(contains(text, "[0] hinge  revolute  world -> pendulum")) << text;
  EXPECT_TRUE(contains(text, "[1] bob  box on pendulum  half extents [0.05, 0.15, 0.03] m")) << text;
  EXPECT_TRUE(contains(text, "body/pendulum/mass")) << text;
  // Soft part, from the soft printer: 49 nodes, the static obstacles and the moving colliders.
  EXPECT_TRUE(contains(text, "soft part: \"flag\", dt 0.01 s")) << text;
  EXPECT_TRUE(contains(text, "nodes: 49 (0 pinned), 147 DOFs")) << text;
  EXPECT_TRUE(contains(text, "7 nodes attached to frames")) << text;
  EXPECT_TRUE(contains(text, "plane through (0, 0, 0) normal (0, 0, 1)")) << text;
  EXPECT_TRUE(contains(text, "post  capsule at (0, 0, 0.6) radius 0.03 m, half length 0.25 m")) << text;
  EXPECT_TRUE(contains(text, "cloth_material/silk/stretch_modulus")) << text;
  // The coupling.
  EXPECT_TRUE(contains(text, "coupling: two-way")) << text;
  EXPECT_TRUE(contains(text, "substeps 4: soft dt 0.01 s = 4 rigid steps of 0.0025 s")) << text;
  EXPECT_TRUE(contains(text, "follows rigid body pendulum")) << text;
  EXPECT_TRUE(contains(text, "pendulum: 7 nodes (0, 1, 2, 3, 4, 5, 6), stiffness 500 N/m")) << text;
  EXPECT_TRUE(contains(text, "pendulum/rod  capsule on pendulum  friction 0.3")) << text;
  EXPECT_TRUE(contains(text, "pendulum/bob  box on pendulum  friction 0.3")) << text;
}

TEST(SoftCoupledCli, GradcheckOfTheExampleAgrees) {
  // One soft step (4 rigid steps) keeps it to ~3 s of CPU; ctest runs two
  // (coupled_gradcheck_cloth_on_pendulum, tests/CMakeLists.txt).
  const auto [code, text] = run_cli("gradcheck " + kPendulumScene + " --steps 1", "coupled_gradcheck");
  EXPECT_EQ(code, 0) << text;
  EXPECT_TRUE(contains(text, "coupled (two-way), 1 soft step of 0.01 s (4 rigid steps each)")) << text;
  // Rigid θ, rigid x₀ (orientation included), soft θ, soft x₀, v₀ and forces are all compared.
  for (const char* row : {"rigid/gravity[2]", "rigid/body/pendulum/mass[0]", "rigid x0/pendulum/rotation[1]",
                          "rigid x0/pendulum/angular_velocity[1]", "soft/frame_attachment_stiffness[", "soft/contact_stiffness[0]",
                          "soft/cloth_material/silk/areal_density[0]", "soft/node_mass[", "soft x0/node ", "soft v0/node ",
                          "soft force/node "})
    EXPECT_TRUE(contains(text, row)) << row << "\n" << text;
  EXPECT_FALSE(contains(text, "soft/frame/")) << "frame poses are set by the rollout, not compared\n" << text;
  EXPECT_TRUE(contains(text, "all agree")) << text;
}

TEST(SoftCoupledCli, GradcheckExitsThreeOnDisagreement) {
  // No finite difference matches to the last bit: a tolerance of 0 must report disagreement.
  const auto [code, text] = run_cli("gradcheck " + kPendulumScene + " --steps 1 --tolerance 0 --failures-only", "coupled_gradcheck_fail");
  EXPECT_EQ(code, 3) << text;
  EXPECT_TRUE(contains(text, "DISAGREEMENT")) << text;
  EXPECT_TRUE(contains(text, "FAIL")) << text;
}

TEST(SoftCoupledCli, BadCoupledSceneIsAClearError) {
  const std::string path = ::testing::TempDir() + "bad_coupled_scene.json";
  std::ifstream example(kPendulumScene);
  std::stringstream text;
  text << example.rdbuf();
  std::string scene = text.str();
  const std::string body = "\"body\": \"pendulum\", \"region\"";
  ASSERT_NE(scene.find(body), std::string::npos);
  scene.replace(scene.find(body), body.size(), "\"body\": \"pendulumm\", \"region\"");
  std::ofstream(path) << scene;
  for (const char* command : {"info ", "gradcheck "}) {
    const auto [code, output] = run_cli(command + path, "coupled_bad");
    EXPECT_EQ(code, 1) << output;
    EXPECT_TRUE(contains(output, "diffphys: error:")) << output;
    EXPECT_TRUE(contains(output, "coupling.attachments[0].body: unknown rigid body 'pendulumm'")) << output;
  }
}

}  // namespace
