// tests/world_cli_test.cpp — one command-line path for every scene (tools/diffphys_main.cpp):
// the rigid-part flags apply to the rigid part of a rigid + soft scene and are refused with the
// flag, the value and the file on a soft-only scene; simulate records any scene the same way.
#include "cli_test_helpers.hpp"
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace diffphys {
namespace {

using diffphys::testing::run_cli;

const std::string kWorldExamples = std::string(test_paths::source_dir()) + "/examples/soft/";

TEST(WorldCli, RigidFlagsOnASoftSceneAreAClearError) {
  for (const std::string& command : {"simulate " + kWorldExamples + "tet_drop.json -n 2 --solver pgs",
                                    "gradcheck " + kWorldExamples + "tet_drop.json -n 1 --formulation convex"}) {
    const auto [code, text] = run_cli(command, "world_cli_soft_flags");
    EXPECT_EQ(code, 1) << text;
    EXPECT_NE(text.find("diffphys: error: --"), std::string::npos) << text;
    EXPECT_NE(text.find("applies to rigid bodies"), std::string::npos) << text;
    EXPECT_NE(text.find("tet_drop.json holds soft bodies only"), std::string::npos) << text;
  }
}

TEST(WorldCli, RigidFlagsApplyToTheRigidPartOfACoupledScene) {
  const auto [code, text] =
      run_cli("simulate " + kWorldExamples + "cloth_on_pendulum.json -n 2 --formulation convex --solver pgs", "world_cli_coupled_flags");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("solver      newton (convex formulation)"), std::string::npos) << text;
  EXPECT_NE(text.find("solver      newton: converged at every step"), std::string::npos) << text;
}

TEST(WorldCli, SimulateRecordsACoupledSceneLikeAnyOther) {
  const std::string path = ::testing::TempDir() + "world_cli_coupled.json";
  const auto [code, text] =
      run_cli("simulate " + kWorldExamples + "cloth_on_pendulum.json -n 3 --every 2 -o " + path, "world_cli_coupled_record");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("(3 frames, every 2 steps)"), std::string::npos) << text;
  std::ifstream file(path);
  const nlohmann::json document = nlohmann::json::parse(file);
  EXPECT_EQ(document.at("format"), "diffphys-world-trajectory");
  const nlohmann::json& soft = document.at("parts").at("soft");
  ASSERT_EQ(soft.at("frames").size(), 3u);
  EXPECT_EQ(soft.at("frames")[1].at("step"), 2);
  EXPECT_EQ(soft.at("frames")[2].at("step"), 3);
  EXPECT_EQ(document.at("parts").at("rigid").at("frames").size(), 3u);
}

}  // namespace
}  // namespace diffphys
