// tests/soft_cli_test.cpp — `diffphys info` and `diffphys gradcheck` on soft scene files, run
// as a user runs them (the built CLI): what they print and their exit codes.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include "cli_test_helpers.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

const std::string kExamples = std::string(test_paths::source_dir()) + "/examples/soft/";

using diffphys::testing::run_cli;

TEST(SoftCli, InfoPrintsTheSoftSceneAndItsParameters) {
  const auto [code, text] = run_cli("info " + kExamples + "tet_drop.json", "soft_info");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("nodes: 8 (0 pinned), 24 DOFs, free mass 4 kg"), std::string::npos) << text;
  EXPECT_NE(text.find("6 tets"), std::string::npos) << text;
  EXPECT_NE(text.find("[0] ground  plane through (0, 0, 0) normal (0, 0, 1)"), std::string::npos) << text;
  EXPECT_NE(text.find("tet_material/jelly/youngs_modulus  @11  [50000]"), std::string::npos) << text;
  EXPECT_NE(text.find("obstacle/ground/friction           @16  [0.5]"), std::string::npos) << text;
}

TEST(SoftCli, GradcheckComparesEveryParameterAndAgrees) {
  const auto [code, text] = run_cli("gradcheck " + kExamples + "mass_spring.json --steps 10", "soft_gradcheck");
  EXPECT_EQ(code, 0) << text;
  for (const char* row : {"gravity[2]", "node_mass[1]", "spring_stiffness[2]", "spring_rest_length[0]", "spring_damping[1]",
                          "contact_stiffness[0]", "x0/node 2[z]", "v0/node 0[x]", "force/node"})
    EXPECT_NE(text.find(row), std::string::npos) << row << "\n" << text;
  EXPECT_NE(text.find("42 gradients compared"), std::string::npos) << text;
  EXPECT_NE(text.find("all agree"), std::string::npos) << text;
}

TEST(SoftCli, GradcheckExitsThreeOnDisagreement) {
  // No finite difference matches to the last bit: a tolerance of 0 must report disagreement.
  const auto [code, text] = run_cli("gradcheck " + kExamples + "mass_spring.json --steps 3 --tolerance 0", "soft_gradcheck_fail");
  EXPECT_EQ(code, 3) << text;
  EXPECT_NE(text.find("DISAGREEMENT"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL"), std::string::npos) << text;
}

TEST(SoftCli, BadSoftSceneIsAClearError) {
  const std::string path = ::testing::TempDir() + "bad_soft_scene.json";
  std::ofstream(path) << R"({"soft": {"dt": -1}})";
  for (const char* command : {"info ", "gradcheck "}) {
    const auto [code, text] = run_cli(command + path, "soft_bad");
    EXPECT_EQ(code, 1) << text;
    EXPECT_NE(text.find("diffphys: error:"), std::string::npos) << text;
  }
}

}  // namespace
