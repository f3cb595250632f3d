// tests/replay_html_test.cpp — the replay page (viewer/replay_html.cpp) and the commands
// that write it (`diffphys view`, `diffphys simulate --view`, tools/view_command.cpp): the
// trajectory is embedded intact and cannot break out of its <script> element, malformed
// trajectories are refused naming the file and key, and the page carries no network
// reference. (The page itself is tested in a browser: viewer/test/viewer.test.mjs.)
#include "test_paths.hpp"
#include "replay_html.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "diffphys/error.hpp"

namespace diffphys {
namespace {

// Tests of the page itself are skipped in a build without the viewer (-DDIFFPHYS_VIEWER=OFF),
// where ViewCommand.WithoutTheViewerTheCommandsSaySo runs instead.
#define DIFFPHYS_SKIP_WITHOUT_VIEWER()                                                   \
  if (!viewer::replay_page_built()) GTEST_SKIP() << "built without the web viewer (-DDIFFPHYS_VIEWER=OFF)"

constexpr std::string_view kOpenData = "<script id=\"diffphys-trajectory\" type=\"application/json\">";

// The text of the page's trajectory element.
std::string embedded_data(const std::string& html) {
  const std::size_t start = html.find(kOpenData);
  if (start == std::string::npos) return "";
  const std::size_t begin = start + kOpenData.size();
  const std::size_t end = html.find("</script>", begin);
  return end == std::string::npos ? "" : html.substr(begin, end - begin);
}

std::string minimal_trajectory(const std::string& name) {
  nlohmann::json trajectory = {{"format", "diffphys-trajectory"},
                               {"version", 1},
                               {"name", name},
                               {"dt", 0.001},
                               {"bodies", {"ball"}},
                               {"frames",
                                {{{"time", 0.0},
                                  {"bodies", {{{"position", {0, 0, 1}}, {"orientation", {1, 0, 0, 0}}}}},
                                  {"contacts", nlohmann::json::array()}}}}};
  return trajectory.dump();
}

std::string trajectory_refusal(const std::string& text) {
  try {
    viewer::check_trajectory(text, "traj.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void expect_trajectory_refused(const std::string& text, std::initializer_list<std::string> pieces) {
  const std::string what = trajectory_refusal(text);
  ASSERT_FALSE(what.empty()) << "accepted: " << text;
  EXPECT_EQ(what.rfind("traj.json: ", 0), 0u) << what;
  for (const std::string& piece : pieces)
    EXPECT_NE(what.find(piece), std::string::npos) << "missing '" << piece << "' in: " << what;
}

TEST(ReplayHtml, EmbedsTheTrajectoryWhereNoTextCanEndTheScriptElement) {
  DIFFPHYS_SKIP_WITHOUT_VIEWER();
  const std::string name = "ball </script><script>alert(1)</script> <!-- x";
  const std::string trajectory = minimal_trajectory(name);
  const std::string html = viewer::replay_html(trajectory, "traj.json");
  const std::string data = embedded_data(html);
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(data.find('<'), std::string::npos) << data;
  // Read back as JSON it is the same document, name included.
  EXPECT_EQ(nlohmann::json::parse(data), nlohmann::json::parse(trajectory));
  EXPECT_EQ(nlohmann::json::parse(data)["name"], name);
  EXPECT_EQ(html.find("@@DIFFPHYS_TRAJECTORY@@"), std::string::npos);
}

TEST(ReplayHtml, IsOnePageWithThreeJsInsideAndNothingToFetch) {
  DIFFPHYS_SKIP_WITHOUT_VIEWER();
  const std::string html = viewer::replay_html(minimal_trajectory("ball"), "traj.json");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // three.js is bundled in, with its licence notice.
  EXPECT_NE(html.find("Three.js Authors"), std::string::npos) << "three.js's licence notice is missing";
  EXPECT_NE(html.find("SPDX-License-Identifier: MIT"), std::string::npos);
  EXPECT_NE(html.find("WebGLRenderer"), std::string::npos);
  // No script or style is loaded from elsewhere.
  for (const char* reference : {"<script src", "<link ", "@import", "import(\"http", "import('http"})
    EXPECT_EQ(html.find(reference), std::string::npos) << reference;
  // Exactly two script elements: the data and the bundled viewer.
  std::size_t scripts = 0;
  for (std::size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);
}

TEST(ReplayHtml, RefusesWhatIsNotATrajectory) {
  expect_trajectory_refused("{\"format\": ", {"traj.json: line 1, column 12: JSON syntax error", "unexpected end of input"});
  expect_trajectory_refused("[1, 2]", {"expected a trajectory"});
  expect_trajectory_refused(R"({"name": "scene", "bodies": []})", {"\"format\" is missing", "diffphys simulate --out"});
  expect_trajectory_refused(R"({"format": "diffphys-scene", "bodies": [], "frames": []})",
                            {"\"format\" is \"diffphys-scene\""});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": [], "frames": []})",
                            {"\"frames\" must be a non-empty array"});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "frames": [{"time": 0, "bodies": []}]})",
                            {"\"bodies\" must be an array"});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": ["ball"],
                     "frames": [{"time": 0, "bodies": []}]})",
                            {"frames[0].bodies must have 1 entries"});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": ["ball"],
                     "frames": [{"time": 0, "bodies": [{"position": [0, 0], "orientation": [1, 0, 0, 0]}]}]})",
                            {"frames[0].bodies[0] needs \"position\""});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": ["ball"],
                     "frames": [{"time": 1, "bodies": [{"position": [0, 0, 0], "orientation": [1, 0, 0, 0]}]},
                                {"time": 0.5, "bodies": [{"position": [0, 0, 0], "orientation": [1, 0, 0, 0]}]}]})",
                            {"frames[1].time 0.5 is before"});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": [], "frames": [{"bodies": []}]})",
                            {"frames[0].time must be a number"});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": [], "frames": [{"time": 0, "bodies": []}],
                     "model": []})",
                            {"\"model\" must be an object"});
  expect_trajectory_refused(R"({"format": "diffphys-trajectory", "bodies": [], "frames": [{"time": 0, "bodies": []}],
                     "loss": 3})",
                            {"\"loss\" must be an array"});
  EXPECT_EQ(trajectory_refusal(minimal_trajectory("ball")), "");
}

// The commands, end to end with the built program.
class ViewCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        std::filesystem::temp_directory_path() / ("diffphys_view_test_" + std::to_string(::getpid()) + "_" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  int run(const std::string& arguments) {
    const std::filesystem::path out = directory_ / "stdout.txt";
    const std::filesystem::path err = directory_ / "stderr.txt";
    const std::string command =
        std::string("\"") + test_paths::cli_program() + "\" " + arguments + " >\"" + out.string() + "\" 2>\"" + err.string() + "\"";
    const int status = std::system(command.c_str());
    stdout_ = read(out);
    stderr_ = read(err);
    if (status == -1 || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  // A path in double quotes, for the shell.
  static std::string quoted(const std::filesystem::path& file) {
    std::string text(1, '"');
    text += file.string();
    text += '"';
    return text;
  }
  std::string path(const char* name) const { return quoted(directory_ / name); }
  static std::string example(const char* name) {
    return quoted(std::filesystem::path(test_paths::source_dir()) / "examples" / "scenes" / name);
  }

  std::filesystem::path directory_;
  std::string stdout_, stderr_;
};

// `simulate --view` and `view` of `simulate --out` give the same page, and the trajectory in
// it is the file's, model block and energies included.
TEST_F(ViewCommand, SimulateViewAndViewWriteTheSamePage) {
  DIFFPHYS_SKIP_WITHOUT_VIEWER();
  ASSERT_EQ(run("simulate " + example("pendulum.json") + " --steps 200 --every 20 --out " + path("pendulum.json") +
                " --view " + path("direct.html")),
            0)
      << stderr_;
  EXPECT_NE(stdout_.find("replay"), std::string::npos) << stdout_;
  ASSERT_EQ(run("view " + path("pendulum.json") + " -o " + path("viewed.html")), 0) << stderr_;
  const std::string direct = read(directory_ / "direct.html");
  const std::string viewed = read(directory_ / "viewed.html");
  ASSERT_FALSE(direct.empty());
  EXPECT_EQ(direct, viewed);
  const nlohmann::json file = nlohmann::json::parse(read(directory_ / "pendulum.json"));
  const nlohmann::json page = nlohmann::json::parse(embedded_data(direct));
  EXPECT_EQ(page, file);
  ASSERT_TRUE(page.contains("model"));
  EXPECT_EQ(page["model"]["joints"][0]["name"], "hinge");
  EXPECT_EQ(page["frames"].size(), 11u);
  EXPECT_TRUE(page["frames"][10].contains("energy"));
}

TEST_F(ViewCommand, HelpListsTheCommands) {
  ASSERT_EQ(run("--help"), 0);
  for (const char* expected : {"view", "--view", "replay page"})
    EXPECT_NE(stdout_.find(expected), std::string::npos) << expected << " in\n" << stdout_;
}

TEST_F(ViewCommand, RefusesBadInputWithExitCodeOne) {
  DIFFPHYS_SKIP_WITHOUT_VIEWER();
  EXPECT_EQ(run("view " + path("missing.json") + " -o " + path("out.html")), 1);
  EXPECT_NE(stderr_.find("diffphys: error: "), std::string::npos) << stderr_;
  EXPECT_NE(stderr_.find("missing.json: cannot open"), std::string::npos) << stderr_;

  // A scene file is not a trajectory.
  EXPECT_EQ(run("view " + example("bouncing_ball.json") + " -o " + path("out.html")), 1);
  EXPECT_NE(stderr_.find("bouncing_ball.json: \"format\" is missing"), std::string::npos) << stderr_;
  EXPECT_FALSE(std::filesystem::exists(directory_ / "out.html"));

  EXPECT_EQ(run("view " + path("missing.json")), 1);  // -o is required
  EXPECT_NE(stderr_.find("--out"), std::string::npos) << stderr_;

  // An unwritable page fails before simulating.
  EXPECT_EQ(run("simulate " + example("bouncing_ball.json") + " --steps 5 --view " + path("no/such/dir/out.html")), 1);
  EXPECT_NE(stderr_.find("cannot open the replay page"), std::string::npos) << stderr_;
}

// A build without the viewer refuses `view` and `simulate --view` up front, saying why, and
// writes no page.
TEST_F(ViewCommand, WithoutTheViewerTheCommandsSaySo) {
  if (viewer::replay_page_built()) GTEST_SKIP() << "the viewer is built";
  ASSERT_EQ(run("simulate " + example("pendulum.json") + " --steps 20 --out " + path("pendulum.json")), 0) << stderr_;
  EXPECT_EQ(run("view " + path("pendulum.json") + " -o " + path("viewed.html")), 1);
  EXPECT_NE(stderr_.find("built without the web viewer"), std::string::npos) << stderr_;
  EXPECT_NE(stderr_.find("-DDIFFPHYS_VIEWER=ON"), std::string::npos) << stderr_;
  EXPECT_EQ(run("simulate " + example("pendulum.json") + " --steps 20 --view " + path("direct.html")), 1);
  EXPECT_NE(stderr_.find("built without the web viewer"), std::string::npos) << stderr_;
  EXPECT_FALSE(std::filesystem::exists(directory_ / "viewed.html"));
  EXPECT_FALSE(std::filesystem::exists(directory_ / "direct.html"));
  EXPECT_THROW(viewer::replay_html(minimal_trajectory("ball"), "traj.json"), Error);
}

}  // namespace
}  // namespace diffphys

namespace diffphys {
namespace {

// An experiment's recorded trajectories get their replay page next to them, with the
// model block (the shapes to draw).
TEST_F(ViewCommand, ExperimentsWriteAReplayNextToEachTrajectory) {
  DIFFPHYS_SKIP_WITHOUT_VIEWER();
  ASSERT_EQ(run("experiment chain-mass --quick --json --out " + quoted(directory_)), 0) << stderr_;
  int pages = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory_)) {
    if (entry.path().extension() != ".json" || !entry.path().stem().string().starts_with("trajectory")) continue;
    std::filesystem::path page = entry.path();
    page.replace_extension(".html");
    ASSERT_TRUE(std::filesystem::exists(page)) << page;
    const nlohmann::json embedded = nlohmann::json::parse(embedded_data(read(page)));
    EXPECT_TRUE(embedded.contains("model")) << page;
    ++pages;
  }
  EXPECT_GE(pages, 1);
}

}  // namespace
}  // namespace diffphys
