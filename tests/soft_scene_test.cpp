// tests/soft_scene_test.cpp — soft scene files: the examples load and build, errors name the
// JSON path, and `diffphys simulate` runs a soft scene end to end.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_scene.hpp"

namespace diffphys::soft {
namespace {

const std::string kExamples = std::string(test_paths::source_dir()) + "/examples/soft/";

std::string error_of(const std::string& text) {
  try {
    build_soft(parse_soft_scene(text, "scene.json"));
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(SoftScene, ExamplesLoadAndBuild) {
  for (const char* name : {"hanging_beam.json", "cloth_on_sphere.json", "mass_spring.json", "tet_drop.json"}) {
    EXPECT_TRUE(is_soft_scene_file(kExamples + name)) << name;
    const SoftBuild built = build_soft(load_soft_scene(kExamples + name));
    EXPECT_GT(built.model.node_count, 0) << name;
  }
  EXPECT_FALSE(is_soft_scene_file(std::string(test_paths::source_dir()) + "/examples/scenes/bouncing_ball.json"));
  const SoftBuild drop = build_soft(load_soft_scene(kExamples + "tet_drop.json"));
  EXPECT_EQ(drop.model.tets.size(), 6u);
  EXPECT_EQ(drop.state.velocities[0], 0.5);
  EXPECT_EQ(drop.state.positions[2], 0.3);
  const SoftBuild beam = build_soft(load_soft_scene(kExamples + "hanging_beam.json"));
  int pinned = 0;
  for (const char p : beam.model.pinned) pinned += p;
  EXPECT_EQ(pinned, 9);  // the 3 × 3 nodes of the x = 0 face
}

TEST(SoftScene, ErrorsNameThePathAndValue) {
  EXPECT_NE(error_of(R"({"soft": {"dt": 0.01, "gravty": [0, 0, 0]}})").find("soft: unknown key \"gravty\""), std::string::npos);
  EXPECT_NE(error_of(R"({"soft": {"tet_materials": [{"name": "a", "model": "rubbery"}]}})").find("soft.tet_materials[0].model: unknown elastic model 'rubbery'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"soft": {"tet_materials": [{"name": "a"}], "tet_boxes": [{"material": "b", "size": [1, 1, 1], "cells": [1, 1, 1]}]}})")
                .find("soft.tet_boxes[0].material: unknown tet material 'b' (defined: a)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"soft": {"nodes": [[0, 0, 0], [1, 0]]}})").find("soft.nodes[1]: expected an array of 3 numbers, got [1,0]"), std::string::npos);
  EXPECT_NE(error_of(R"({"soft": {"dt": 1, "dt": 2}})").find("duplicate key \"dt\""), std::string::npos);
  EXPECT_NE(error_of(R"({"soft": {"nodes": [[0, 0, 0]], "springs": [{"nodes": [0, 3]}]}})").find("spring 0: unknown node index 3"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"soft": {"tet_materials": [{"name": "a"}], "tet_meshes": [{"file": "missing.tet", "material": "a"}]}})")
                .find("missing.tet: cannot open"),
            std::string::npos);
  EXPECT_NE(error_of("{\"soft\": {\n  \"dt\": }}").find("scene.json: line 2, column 9: JSON syntax error"), std::string::npos);
}

TEST(SoftScene, SimulateCommandRunsASoftScene) {
  const std::string out = ::testing::TempDir() + "soft_trajectory.json";
  const std::string command = std::string(test_paths::cli_program()) + " simulate " + kExamples + "tet_drop.json -n 20 --every 10 -o " + out +
                              " > " + ::testing::TempDir() + "soft_simulate.txt";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream summary(::testing::TempDir() + "soft_simulate.txt");
  std::stringstream text;
  text << summary.rdbuf();
  EXPECT_NE(text.str().find("converged at every step"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("6 tets"), std::string::npos) << text.str();
  std::ifstream trajectory(out);
  std::stringstream json;
  json << trajectory.rdbuf();
  EXPECT_NE(json.str().find("\"diffphys-soft-trajectory\""), std::string::npos);
  EXPECT_NE(json.str().find("\"step\":20"), std::string::npos);
}

}  // namespace
}  // namespace diffphys::soft
