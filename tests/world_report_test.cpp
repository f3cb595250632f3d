// tests/world_report_test.cpp — the reports of any world (diffphys/world_report.hpp) and its
// trajectory file (viewer/world_trajectory.hpp): describe_world's headings and each part's
// section; WorldRunReport's summary lines per part, its listing of non-converged steps and its
// refusal of an unhealthy rigid state; the trajectory format chosen by the parts, with the
// frames the viewer reads.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/world_report.hpp"
#include "diffphys/world_simulator.hpp"
#include "world_trajectory.hpp"

namespace diffphys {
namespace {

std::string report_scene(const std::string& relative) { return std::string(test_paths::source_dir()) + "/examples/" + relative; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(WorldReport, DescribesEachPartUnderItsHeading) {
  const World rigid = load_world(report_scene("scenes/pendulum.json"));
  std::ostringstream rigid_text;
  describe_world(rigid_text, rigid, rigid.default_params());
  EXPECT_TRUE(contains(rigid_text.str(), "scene " + rigid.source + ": \"pendulum\", dt 0.001 s")) << rigid_text.str();
  EXPECT_FALSE(contains(rigid_text.str(), "coupled scene")) << rigid_text.str();

  const World soft = load_world(report_scene("soft/tet_drop.json"));
  std::ostringstream soft_text;
  describe_world(soft_text, soft, soft.default_params());
  EXPECT_TRUE(contains(soft_text.str(), "soft scene " + soft.source + ": \"tet_drop\", dt 0.01 s")) << soft_text.str();

  const World both = load_world(report_scene("soft/cloth_on_pendulum.json"));
  std::ostringstream both_text;
  describe_world(both_text, both, both.default_params());
  const std::string text = both_text.str();
  EXPECT_TRUE(contains(text, "coupled scene " + both.source + ": rigid + soft, two-way coupling")) << text;
  // The sections in order: rigid part, soft part, the coupling.
  const auto rigid_at = text.find("rigid part: \"pendulum\""), soft_at = text.find("soft part: \"flag\""),
             coupling_at = text.find("coupling: two-way");
  ASSERT_NE(rigid_at, std::string::npos) << text;
  ASSERT_NE(soft_at, std::string::npos) << text;
  ASSERT_NE(coupling_at, std::string::npos) << text;
  EXPECT_LT(rigid_at, soft_at);
  EXPECT_LT(soft_at, coupling_at);
}

TEST(WorldReport, SummaryHasEveryPartsLines) {
  const World world = load_world(report_scene("soft/cloth_on_pendulum.json"));
  const WorldParams params = world.default_params();
  WorldSimulator simulator(world, params, world.initial_state());
  WorldRunReport report(world, params);
  for (long long step = 1; step <= 3; ++step) report.observe(step, simulator.state(), simulator.step());
  std::ostringstream out;
  report.print_summary(out, simulator.state(), 3, 0.5);
  const std::string text = out.str();
  EXPECT_TRUE(contains(text, "1 body (1 dynamic), 1 joint, 0 actuators; soft, 49 nodes")) << text;
  EXPECT_TRUE(contains(text, "coupled (two-way), 7 nodes attached to rigid bodies")) << text;
  EXPECT_TRUE(contains(text, "simulated   3 steps of 0.01 s (4 rigid steps each) = 0.03 s in 0.5 s wall time (6 steps/s)")) << text;
  EXPECT_TRUE(contains(text, "contacts    0 of 12 steps had contacts")) << text;  // the rigid substeps
  EXPECT_TRUE(contains(text, "solver      newton: converged at every step")) << text;
  EXPECT_TRUE(contains(text, "  pendulum: position (")) << text;
  EXPECT_TRUE(contains(text, "energies    kinetic")) << text;
  std::ostringstream err;
  EXPECT_FALSE(report.print_failures(err));
  EXPECT_TRUE(err.str().empty());
}

TEST(WorldReport, ListsNonConvergedStepsAndRefusesAnUnhealthyState) {
  const World world = load_world(report_scene("soft/cloth_on_pendulum.json"));
  const WorldParams params = world.default_params();
  WorldRunReport report(world, params);
  const WorldState state = world.initial_state();
  std::vector<StepStatus> rigid(4);
  rigid[2].converged = false;
  rigid[2].iterations = 7;
  soft::SoftStepStatus soft;
  soft.converged = false;
  soft.iterations = 50;
  soft.message = "line search failed";
  report.observe(5, state, WorldStepStatus{rigid, &soft});
  std::ostringstream err;
  EXPECT_TRUE(report.print_failures(err));
  EXPECT_TRUE(contains(err.str(), "the solver did not converge at 1 step")) << err.str();
  EXPECT_TRUE(contains(err.str(), "step 5 (rigid substep 3)")) << err.str();
  EXPECT_TRUE(contains(err.str(), "the Newton solver did not converge at 1 steps")) << err.str();
  EXPECT_TRUE(contains(err.str(), "step 5: 50 iterations")) << err.str();
  EXPECT_TRUE(contains(err.str(), "line search failed")) << err.str();

  rigid[1].health = StateHealth::TooFast;
  rigid[1].health_body = 1;
  rigid[1].health_value = 2000.0;
  try {
    report.observe(6, state, WorldStepStatus{rigid, &soft});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "step 6 (rigid substep 2 of 4)")) << error.what();
    EXPECT_TRUE(contains(error.what(), "nothing written")) << error.what();
  }
}

// The trajectory's format follows the parts; frame 0 is the initial state.
TEST(WorldReport, TrajectoryFormatFollowsTheParts) {
  const struct {
    const char* scene;
    const char* format;
  } cases[] = {{"scenes/pendulum.json", "diffphys-trajectory"},
               {"soft/tet_drop.json", "diffphys-soft-trajectory"},
               {"soft/cloth_on_pendulum.json", "diffphys-world-trajectory"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.scene);
    const World world = load_world(report_scene(c.scene));
    const WorldParams params = world.default_params();
    WorldSimulator simulator(world, params, world.initial_state());
    viewer::WorldTrajectoryRecorder recorder(world, params);
    recorder.record(0, simulator, nullptr);
    for (long long step = 1; step <= 2; ++step) {
      const WorldStepStatus status = simulator.step();
      recorder.record(step, simulator, &status);
    }
    EXPECT_EQ(recorder.frame_count(), 3);
    const std::string text = recorder.file_text();
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    const nlohmann::json document = nlohmann::json::parse(text);
    EXPECT_EQ(document.at("format"), c.format);
    // A world of several parts holds each part's own document, one frame per world step.
    const bool several = world.has_rigid() && world.has_soft();
    const auto part = [&](const char* kind) -> const nlohmann::json& { return several ? document.at("parts").at(kind) : document; };
    if (world.has_soft()) {
      const nlohmann::json& soft = part("soft");
      EXPECT_EQ(soft.at("format"), "diffphys-soft-trajectory");
      ASSERT_EQ(soft.at("frames").size(), 3u);
      EXPECT_EQ(soft.at("frames")[2].at("positions").size(), static_cast<std::size_t>(world.soft->model.dof_count()));
      EXPECT_EQ(soft.at("frames")[2].at("positions")[0].get<double>(), simulator.state().soft.positions[0]);
      EXPECT_TRUE(soft.contains("topology"));
    }
    if (world.has_rigid()) {
      const nlohmann::json& rigid = part("rigid");
      EXPECT_EQ(rigid.at("format"), "diffphys-trajectory");
      ASSERT_EQ(rigid.at("frames").size(), 3u);
      EXPECT_TRUE(rigid.at("model").contains("bodies"));
      const State& now = simulator.state().rigid;
      const std::size_t last_body = now.position.size() - 1;
      EXPECT_EQ(rigid.at("frames")[2].at("bodies").back().at("position")[2].get<double>(), now.position[last_body].z);
    }
    if (several) {
      EXPECT_EQ(document.at("version"), 1);
      EXPECT_EQ(document.at("dt").get<double>(), world.dt());
    }
  }
}

}  // namespace
}  // namespace diffphys
