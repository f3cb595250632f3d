// tests/fluid_scene_test.cpp — the "fluid" section of a scene file (src/fluid/fluid_scene_json.cpp):
// the two examples load into the world they describe (grid, walls, θ, the scalars' initial
// shapes), and bad values are refused naming the file, the item and the value.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/world.hpp"
#include "test_paths.hpp"

namespace diffphys {
namespace {

const std::string kFluidExamples = std::string(test_paths::source_dir()) + "/examples/fluid/";

TEST(FluidScene, SmokePlumeLoadsItsGridWallsBuoyancyAndBlob) {
  const World world = load_world(kFluidExamples + "smoke_plume.json");
  ASSERT_TRUE(world.has_fluid());
  EXPECT_EQ(world.kind(), "fluid");
  const fluid::FluidModel& model = world.fluid->model;
  EXPECT_EQ(model.nx, 32);
  EXPECT_EQ(model.ny, 48);
  EXPECT_EQ(model.spacing, 0.03125);
  EXPECT_EQ(world.dt(), 0.02);
  EXPECT_EQ(model.advection, fluid::AdvectionScheme::MacCormack);
  EXPECT_EQ(model.walls[static_cast<int>(fluid::Side::Left)].type, fluid::WallType::FreeSlip);
  EXPECT_EQ(model.walls[static_cast<int>(fluid::Side::Bottom)].type, fluid::WallType::NoSlip);
  const WorldParams params = world.default_params();
  EXPECT_EQ(params.slice(world, "fluid/buoyancy")[0], 4.0);
  EXPECT_EQ(params.slice(world, "fluid/viscosity")[0], 1e-4);
  // The blob: value (1 − d²/r²)² around (0.5, 0.3), r = 0.15 — largest at the cells nearest the
  // centre, (15, 9) and (16, 9) with centres (0.5 ∓ Δx/2, 0.296875); 0 beyond the radius.
  const std::vector<double>& smoke = world.fluid->state.scalars;
  const auto at = [&](int i, int j) { return smoke[static_cast<std::size_t>(j * model.nx + i)]; };
  const double dx = 15.5 * 0.03125 - 0.5, dy = 9.5 * 0.03125 - 0.3;
  const double q = (dx * dx + dy * dy) / (0.15 * 0.15);
  EXPECT_DOUBLE_EQ(at(15, 9), (1 - q) * (1 - q));
  EXPECT_DOUBLE_EQ(*std::max_element(smoke.begin(), smoke.end()), (1 - q) * (1 - q));
  EXPECT_EQ(at(15, 20), 0.0);
  EXPECT_EQ(at(0, 9), 0.0);
  EXPECT_NO_THROW(WorldLayout::find(world.layout().state, "fluid/scalar/smoke", "state"));
}

TEST(FluidScene, CavityHasItsLidAndDyeRectangle) {
  const World world = load_world(kFluidExamples + "cavity.json");
  const fluid::FluidModel& model = world.fluid->model;
  EXPECT_EQ(model.walls[static_cast<int>(fluid::Side::Top)].tangential_velocity, 1.0);
  EXPECT_EQ(model.walls[static_cast<int>(fluid::Side::Top)].type, fluid::WallType::NoSlip);
  EXPECT_EQ(world.default_params().slice(world, "fluid/viscosity")[0], 0.01);
  // Dye 1 in the cells whose centres lie at y ≥ 0.75 (rows 24..31), 0 below.
  const std::vector<double>& dye = world.fluid->state.scalars;
  for (int j = 0; j < model.ny; ++j)
    EXPECT_EQ(dye[static_cast<std::size_t>(j * model.nx + 5)], j >= 24 ? 1.0 : 0.0) << "row " << j;
}

std::string refusal(const std::string& fluid_section, const std::string& beside = "") {
  try {
    parse_world("{" + beside + "\"fluid\": " + fluid_section + "}", "bad.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(accepted)";
}

TEST(FluidScene, BadValuesAreRefusedNamingTheFileTheItemAndTheValue) {
  const std::string grid = R"("resolution": [8, 6], "spacing": 0.1, "dt": 0.01)";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {R"({"resolution": [8, 6], "spacing": 0, "dt": 0.01})", {"bad.json: fluid.spacing: must be positive, got 0"}},
      {R"({"resolution": [8, 6], "spacing": -0.5, "dt": 0.01})", {"fluid.spacing", "-0.5"}},
      {R"({"resolution": [0, 6], "spacing": 0.1, "dt": 0.01})", {"bad.json: fluid.resolution[0]", "0"}},
      {R"({"resolution": [8], "spacing": 0.1, "dt": 0.01})", {"fluid.resolution: expected [nx, ny]"}},
      {R"({"resolution": [8, 6], "spacing": 0.1, "dt": 0})", {"fluid.dt: must be positive, got 0"}},
      {"{" + grid + R"(, "viscosity": -0.01})", {"bad.json: fluid.viscosity: must be non-negative, got -0.01"}},
      {"{" + grid + R"(, "viscocity": 0.01})", {"bad.json: fluid: unknown key \"viscocity\"", "viscosity"}},
      {"{" + grid + R"(, "advection": "upwind"})", {"fluid.advection: unknown advection scheme \"upwind\""}},
      {"{" + grid + R"(, "walls": {"top": {"type": "free_slip", "velocity": 1}}})", {"fluid.walls.top.velocity", "free-slip"}},
      {"{" + grid + R"(, "walls": {"roof": {}}})", {"fluid.walls: unknown key \"roof\""}},
      {"{" + grid + R"(, "scalars": [{"name": "a"}, {"name": "a"}]})", {"fluid.scalars[1].name: scalar \"a\" is given twice"}},
      {"{" + grid + R"(, "scalars": [{"name": "a", "initial": [{"type": "blob", "center": [5, 0.3], "radius": 0.1}]}]})",
       {"fluid.scalars[0].initial[0].center", "outside the domain"}},
      {"{" + grid + R"(, "scalars": [{"name": "a", "initial": [{"type": "blob", "center": [0.5, 0.3], "radius": 0}]}]})",
       {"fluid.scalars[0].initial[0].radius: must be positive, got 0"}},
      {"{" + grid + R"(, "scalars": [{"name": "a", "initial": [{"type": "star"}]}]})", {"initial[0].type: unknown shape \"star\""}},
      {"{" + grid + R"(, "max_cfl": 50})", {"bad.json: fluid: ", "max_cfl must be in (0, 20], got 50"}},
      {"{" + grid + R"(, "obstacles": [{"name": "c", "center": [0.4, 0.3], "semi_axes": [0.1, 0]}]})",
       {"bad.json: fluid.obstacles[0].semi_axes[1]: must be positive, got 0"}},
      {"{" + grid + R"(, "obstacles": [{"name": "c", "center": [0.4, 0.3]}]})",
       {"bad.json: fluid.obstacles[0]", "semi_axes"}},
      {"{" + grid + R"(, "obstacles": [{"name": "c", "center": [0.4, 0.3], "semi_axes": [0.1, 0.1], "speed": 1}]})",
       {"bad.json: fluid.obstacles[0]: unknown key \"speed\""}},
      {"{" + grid + R"(, "obstacles": [{"name": "c", "center": [1.4, 0.3], "semi_axes": [0.1, 0.1]}]})",
       {"bad.json: fluid: ", "obstacle 'c': center (1.4, 0.3) lies outside the domain [0, 0.8] x [0, 0.6"}},
      {"{" + grid + R"(, "obstacles": [{"name": "c", "center": [0.4, 0.3], "semi_axes": [0.1, 0.1]},
                                       {"name": "c", "center": [0.2, 0.3], "semi_axes": [0.1, 0.1]}]})",
       {"bad.json: fluid.obstacles[1].name: obstacle \"c\" is given twice"}},
      {"{" + grid + R"(, "obstacle_permeability": 0})", {"bad.json: fluid.obstacle_permeability: must be positive, got 0"}},
  };
  for (const auto& [section, expected] : cases) {
    const std::string text = refusal(section);
    for (const std::string& piece : expected) EXPECT_NE(text.find(piece), std::string::npos) << section << "\n -> " << text;
  }
  const std::string beside = refusal("{" + grid + "}", R"("soft": {}, )");
  EXPECT_NE(beside.find("bad.json: fluid: a \"fluid\" section cannot share a scene with"), std::string::npos) << beside;
}

}  // namespace
}  // namespace diffphys
