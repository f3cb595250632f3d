// tests/convert_cli_test.cpp — `diffphys convert` as a user runs it (tools/convert_command.cpp):
// a robot file written as a JSON scene that loads back to the same scene bit for bit, the
// robot-file and formulation options, and clear refusals (exit 1, nothing written) for what
// the writer does not hold: soft bodies, fluids, cameras, a missing input.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_test_helpers.hpp"
#include "diffphys/scene.hpp"
#include "robot_test_helpers.hpp"
#include "scene_writer_test_support.hpp"

namespace diffphys {
namespace {

namespace fs = std::filesystem;
using testing::fresh_test_folder;
using testing::kRobotData;
using testing::run_cli;

const fs::path kSource(test_paths::source_dir());

TEST(ConvertCli, WritesAnMjcfRobotAsAJsonSceneThatLoadsToTheSameScene) {
  const fs::path folder = fresh_test_folder("convert_mjcf");
  const fs::path input = kRobotData / "features.xml", output = folder / "features.json";
  const auto [code, text] = run_cli("convert " + input.string() + " -o " + output.string(), "convert_mjcf");
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(text.find("wrote       " + output.string() + " ("), std::string::npos) << text;
  const Scene original = load_scene(input);
  testing::expect_same_scene(original, load_scene(output));
  // The loader's warnings reach stderr as with every subcommand.
  ASSERT_FALSE(original.warnings.empty());  // features.xml has sites, sensors, ...
  EXPECT_NE(text.find("diffphys: warning: "), std::string::npos) << text;
}

TEST(ConvertCli, TakesTheRobotFileAndFormulationOptions) {
  const fs::path folder = fresh_test_folder("convert_urdf");
  const fs::path input = kRobotData / "ros_ws/src/go1_description/urdf/go1.urdf", output = folder / "go1.json";
  const auto [code, text] =
      run_cli("convert " + input.string() + " --package-path " + (kRobotData / "ros_ws/src").string() +
                  " --formulation convex -q -o " + output.string(),
              "convert_urdf");
  ASSERT_EQ(code, 0) << text;
  EXPECT_EQ(text.find("wrote"), std::string::npos) << text;  // -q
  UrdfOptions options;
  options.package_path = {kRobotData / "ros_ws/src"};
  Scene expected = load_scene(input, options);
  set_formulation(expected, Formulation::Convex);
  const Scene written = load_scene(output);
  EXPECT_EQ(written.model.solver.formulation, Formulation::Convex);
  testing::expect_same_scene(expected, written);
}

TEST(ConvertCli, RefusesSoftBodiesFluidsAndCamerasAndWritesNothing) {
  const fs::path folder = fresh_test_folder("convert_refusals");
  const fs::path output = folder / "out.json";
  auto [code, text] = run_cli(
      "convert " + (kSource / "examples/soft/mass_spring.json").string() + " -o " + output.string(), "convert_soft");
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("diffphys: error: "), std::string::npos) << text;
  EXPECT_NE(text.find("mass_spring.json: holds a soft world; convert writes rigid scenes only"), std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(output));
  std::tie(code, text) = run_cli(
      "convert " + (kSource / "examples/fluid/cavity.json").string() + " -o " + output.string(), "convert_fluid");
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("cavity.json: holds a fluid world; convert writes rigid scenes only"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(output));
  std::tie(code, text) =
      run_cli("convert " + (kSource / "examples/scenes/pendulum_cart.json").string() + " -o " + output.string(),
              "convert_cameras");
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("pendulum_cart.json: camera '"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(output));
  std::tie(code, text) =
      run_cli("convert " + (folder / "absent.xml").string() + " -o " + output.string(), "convert_absent");
  EXPECT_EQ(code, 1) << text;
  EXPECT_NE(text.find("absent.xml"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(output));
}

}  // namespace
}  // namespace diffphys
