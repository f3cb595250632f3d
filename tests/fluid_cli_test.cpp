// tests/fluid_cli_test.cpp — fluid scenes through the command line's one path
// (tools/diffphys_main.cpp): `info` describes the grid and the world's slices, `simulate`
// reports the solves and writes a "diffphys-fluid-trajectory", `gradcheck` agrees, and the
// rigid bodies' solver flags are refused naming the flag, the value and the file.
#include "cli_test_helpers.hpp"
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace diffphys {
namespace {

using diffphys::testing::run_cli;

const std::string kFluidExamples = std::string(test_paths::source_dir()) + "/examples/fluid/";

TEST(FluidCli, InfoDescribesTheGridAndTheSlices) {
  const auto [code, text] = run_cli("info " + kFluidExamples + "smoke_plume.json", "fluid_cli_info");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("fluid scene " + kFluidExamples + "smoke_plume.json (\"smoke plume\")"), std::string::npos) << text;
  EXPECT_NE(text.find("grid        32 x 48 cells of 0.03125 m"), std::string::npos) << text;
  EXPECT_NE(text.find("smoke: buoyancy 4 m/s² per unit"), std::string::npos) << text;
  EXPECT_NE(text.find("fluid/scalar/smoke (1536)"), std::string::npos) << text;
}

TEST(FluidCli, SimulateWritesAFluidTrajectory) {
  const std::string path = ::testing::TempDir() + "fluid_cli_cavity.json";
  const auto [code, text] = run_cli("simulate " + kFluidExamples + "cavity.json -n 5 --every 2 -o " + path, "fluid_cli_simulate");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("simulated   5 steps of 0.03125 s"), std::string::npos) << text;
  EXPECT_NE(text.find("pressure PCG: max 8 iterations"), std::string::npos) << text;
  EXPECT_NE(text.find("(4 frames, every 2 steps)"), std::string::npos) << text;
  std::ifstream file(path);
  const nlohmann::json document = nlohmann::json::parse(file);
  EXPECT_EQ(document.at("format"), "diffphys-fluid-trajectory");
  EXPECT_EQ(document.at("grid").at("nx"), 32);
  const nlohmann::json& frames = document.at("frames");
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[3].at("step"), 5);
  EXPECT_EQ(frames[3].at("velocity_u").size(), 33u * 32u);
  EXPECT_EQ(frames[3].at("velocity_v").size(), 32u * 33u);
  EXPECT_EQ(frames[3].at("scalars").at("dye").size(), 32u * 32u);
  EXPECT_GT(frames[3].at("pressure_iterations").get<int>(), 0);
}

TEST(FluidCli, GradcheckAgreesOnBothExamples) {
  for (const char* scene : {"smoke_plume.json", "cavity.json"}) {
    const auto [code, text] = run_cli("gradcheck " + kFluidExamples + scene + " -n 3", "fluid_cli_gradcheck");
    EXPECT_EQ(code, 0) << text;
    EXPECT_NE(text.find("26 gradients compared"), std::string::npos) << text;
    EXPECT_NE(text.find("all agree"), std::string::npos) << text;
  }
}

// The towed cylinder: info lists the obstacle and its θ slices, gradcheck compares its seven θ
// entries (center, semi-axes, angle, velocity) with the rest and they agree.
TEST(FluidCli, TowedCylinderShowsItsObstacleAndItsGradientsAgree) {
  const std::string scene = kFluidExamples + "towed_cylinder.json";
  const auto [info_code, info] = run_cli("info " + scene, "fluid_cli_obstacle_info");
  EXPECT_EQ(info_code, 0) << info;
  EXPECT_NE(info.find("obstacles   1 (Brinkman penalization, permeability 0.0001 s, ramp half-width 1 cells)"),
            std::string::npos)
      << info;
  EXPECT_NE(info.find("cylinder: ellipse at (0.8, 0.75) m, semi-axes 0.15 x 0.15 m, angle 0 rad, velocity (0.5, 0) m/s"),
            std::string::npos)
      << info;
  const auto [code, text] = run_cli("gradcheck " + scene + " -n 3", "fluid_cli_obstacle_gradcheck");
  EXPECT_EQ(code, 0) << text;
  for (const char* item : {"fluid/obstacle/cylinder/center[0]", "fluid/obstacle/cylinder/semi_axes[1]",
                           "fluid/obstacle/cylinder/angle[0]", "fluid/obstacle/cylinder/velocity[0]"})
    EXPECT_NE(text.find(item), std::string::npos) << item << "\n" << text;
  EXPECT_NE(text.find("all agree"), std::string::npos) << text;
}

// The fluid's gradient norms join the health report (they were missing: the report read an
// empty norm vector and crashed).
TEST(FluidCli, GradcheckHealthReportsTheFluidsGradient) {
  const auto [code, text] = run_cli("gradcheck " + kFluidExamples + "cavity.json -n 3 --health", "fluid_cli_health");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("(fluid): 3 steps of 0.03125 s"), std::string::npos) << text;
  EXPECT_NE(text.find("gradient health over 3 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("forward steps: every one converged"), std::string::npos) << text;
}

TEST(FluidCli, RigidSolverFlagsAreRefused) {
  const auto [code, text] = run_cli("simulate " + kFluidExamples + "cavity.json -n 1 --solver pgs", "fluid_cli_flags");
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("--solver pgs: applies to rigid bodies"), std::string::npos) << text;
  EXPECT_NE(text.find("cavity.json holds a fluid only"), std::string::npos) << text;
}

}  // namespace
}  // namespace diffphys
