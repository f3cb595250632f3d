// tests/world_gradcheck_test.cpp — check_world_gradients (diffphys/world_gradcheck.hpp): on a
// rigid world it is check_gradients(Scene), entry for entry; on a soft world every θ component,
// the sampled initial states and forces agree; on a two-way coupled world both parts' θ, x₀ and
// controls agree and the frame poses (set by the rollout) are not compared; a zero tolerance
// fails; wrong control sizes are refused.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/world_gradcheck.hpp"

namespace diffphys {
namespace {

std::string gradcheck_scene(const std::string& relative) {
  return std::string(test_paths::source_dir()) + "/examples/" + relative;
}

bool has_entry(const WorldGradientCheckReport& report, const std::string& prefix) {
  return std::any_of(report.check.entries.begin(), report.check.entries.end(),
                     [&](const GradientCheckEntry& entry) { return entry.name.rfind(prefix, 0) == 0; });
}

TEST(WorldGradcheck, RigidWorldIsTheRigidCheck) {
  const World world = load_world(gradcheck_scene("scenes/pendulum.json"));
  GradientCheckOptions options;
  options.steps = 10;
  const WorldGradientCheckReport report = check_world_gradients(world, {}, options);
  const GradientCheckReport expected = check_gradients(*world.rigid, {}, options);
  ASSERT_EQ(report.check.entries.size(), expected.entries.size());
  for (std::size_t i = 0; i < expected.entries.size(); ++i) {
    EXPECT_EQ(report.check.entries[i].name, expected.entries[i].name);
    EXPECT_EQ(report.check.entries[i].analytic, expected.entries[i].analytic);
    EXPECT_EQ(report.check.entries[i].numeric, expected.entries[i].numeric);
  }
  EXPECT_EQ(report.check.passed, expected.passed);
  EXPECT_NE(report.description.find("10 steps of 0.001 s (complementarity formulation)"), std::string::npos)
      << report.description;
  EXPECT_EQ(default_gradcheck_steps(world), 100);
}

TEST(WorldGradcheck, SoftWorldEveryParameterAgrees) {
  const World world = load_world(gradcheck_scene("soft/mass_spring.json"));
  EXPECT_EQ(default_gradcheck_steps(world), 10);
  GradientCheckOptions options;
  options.steps = 10;
  options.tolerance = 1e-4;
  options.state_epsilon = 1e-7;
  options.param_epsilon = 1e-7;
  const WorldGradientCheckReport report = check_world_gradients(world, {}, options);
  for (const GradientCheckEntry& entry : report.check.entries)
    EXPECT_LE(entry.relative_error, options.tolerance) << entry.name << ": " << entry.analytic << " vs " << entry.numeric;
  EXPECT_TRUE(report.check.passed);
  // Every θ component (one mass per node), 8 nodes' x₀ and v₀, 8 forces: as the CLI's table.
  EXPECT_EQ(report.check.entries.size(), 42u);
  for (const char* name : {"gravity[2]", "node_mass[1]", "spring_stiffness[2]", "x0/node 2[z]", "v0/node 0[x]", "force/node"})
    EXPECT_TRUE(has_entry(report, name)) << name;
  EXPECT_NE(report.description.find("10 steps of"), std::string::npos) << report.description;

  options.tolerance = 0.0;
  EXPECT_FALSE(check_world_gradients(world, {}, options).check.passed);
}

TEST(WorldGradcheck, CoupledWorldBothPartsAgree) {
  const World world = load_world(gradcheck_scene("soft/cloth_on_pendulum.json"));
  GradientCheckOptions options;
  options.steps = 1;
  options.tolerance = 1e-4;
  options.state_epsilon = 1e-7;
  options.param_epsilon = 1e-7;
  const WorldGradientCheckReport report = check_world_gradients(world, {}, options);
  for (const GradientCheckEntry& entry : report.check.entries)
    EXPECT_LE(entry.relative_error, options.tolerance) << entry.name << ": " << entry.analytic << " vs " << entry.numeric;
  EXPECT_TRUE(report.check.passed);
  for (const char* name : {"rigid/body/pendulum/mass[0]", "soft/cloth_material/silk/stretch_modulus[0]", "rigid x0/pendulum/rotation[1]",
                           "soft x0/node", "soft v0/node", "soft force/node"})
    EXPECT_TRUE(has_entry(report, name)) << name;
  EXPECT_FALSE(has_entry(report, "soft/frame/")) << "frame poses are set by the rollout, not compared";
  EXPECT_NE(report.description.find("coupled (two-way), 1 soft step of 0.01 s (4 rigid steps each)"), std::string::npos)
      << report.description;
}

TEST(WorldGradcheck, RefusesControlsOfTheWrongSize) {
  const World world = load_world(gradcheck_scene("soft/mass_spring.json"));
  GradientCheckOptions options;
  options.steps = 2;
  const std::vector<double> controls(5, 0.0);
  try {
    check_world_gradients(world, controls, options);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("got 5"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace diffphys
