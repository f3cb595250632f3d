// tests/trajectory_test.cpp — the trajectory writer (src/model/trajectory.cpp): the "model"
// block the viewer draws from (bodies, shapes with sizes and local poses, joints, gravity),
// the per-frame energies against closed forms, the loss curve, and that a recorder built
// without Params still writes the version-1 layout unchanged.
#include "diffphys/trajectory.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

// Every shape type, a static body, a compound body, a joint, gravity off the z axis.
constexpr const char* kScene = R"({
  "name": "model block",
  "gravity": [0.5, 0, -9.0],
  "ground": {"normal": [0, 0, 1], "offset": -0.25},
  "bodies": [
    {"name": "ramp", "type": "static", "position": [2, 0, 0.5], "euler": [0, 20, 0],
     "shapes": [{"type": "box", "half_extents": [1.0, 0.5, 0.05]}]},
    {"name": "dumbbell", "position": [0, 0, 1.5], "density": 1000,
     "shapes": [
       {"name": "bar", "type": "capsule", "euler": [0, 90, 0], "radius": 0.02, "half_length": 0.15},
       {"name": "left", "type": "sphere", "position": [-0.2, 0, 0], "radius": 0.05},
       {"name": "right", "type": "box", "position": [0.2, 0, 0], "half_extents": [0.04, 0.05, 0.06]}
     ]},
    {"name": "bob", "position": [0, 1, 1], "mass": 0.5, "shapes": [{"type": "sphere", "radius": 0.05}]}
  ],
  "joints": [
    {"name": "hinge", "type": "revolute", "parent": "world", "child": "bob", "anchor": [0, 1, 1.5],
     "axis": [1, 0, 0]}
  ]
})";

nlohmann::json written(const TrajectoryRecorder& recorder) {
  std::ostringstream text;
  recorder.write(text);
  return nlohmann::json::parse(text.str());
}

void expect_vec3(const nlohmann::json& actual, const Vec3& expected, const std::string& what) {
  ASSERT_TRUE(actual.is_array() && actual.size() == 3) << what << ": " << actual;
  EXPECT_EQ(actual[0].get<double>(), expected.x) << what;
  EXPECT_EQ(actual[1].get<double>(), expected.y) << what;
  EXPECT_EQ(actual[2].get<double>(), expected.z) << what;
}

void expect_quat(const nlohmann::json& actual, const Quat& expected, const std::string& what) {
  ASSERT_TRUE(actual.is_array() && actual.size() == 4) << what << ": " << actual;
  EXPECT_EQ(actual[0].get<double>(), expected.w) << what;
  EXPECT_EQ(actual[1].get<double>(), expected.x) << what;
  EXPECT_EQ(actual[2].get<double>(), expected.y) << what;
  EXPECT_EQ(actual[3].get<double>(), expected.z) << what;
}

TEST(TrajectoryModelBlock, HoldsEveryBodyShapeAndJointOfTheModel) {
  const Scene scene = parse_scene(kScene, "scene.json");
  const Model& model = scene.model;
  TrajectoryRecorder recorder(model, scene.params);
  recorder.record(scene.state, {}, StepStatus{});
  const nlohmann::json trajectory = written(recorder);

  ASSERT_TRUE(trajectory.contains("model"));
  const nlohmann::json& block = trajectory["model"];
  expect_vec3(block["gravity"], {0.5, 0, -9.0}, "gravity");
  // Every body, the world first; the recorded bodies follow in the order of "bodies".
  ASSERT_EQ(block["bodies"].size(), static_cast<std::size_t>(model.body_count()));
  EXPECT_EQ(block["bodies"][0]["name"], "world");
  for (std::size_t b = 1; b < block["bodies"].size(); ++b)
    EXPECT_EQ(block["bodies"][b]["name"], trajectory["bodies"][b - 1]);

  const nlohmann::json& world = block["bodies"][0];
  EXPECT_EQ(world["type"], "static");
  EXPECT_FALSE(world.contains("mass"));
  ASSERT_EQ(world["shapes"].size(), 1u);
  EXPECT_EQ(world["shapes"][0]["type"], "plane");
  // The plane n·x = -0.25 is the plane shape's frame: origin on the plane, z along n.
  const Shape& ground = model.shapes[static_cast<std::size_t>(model.bodies[0].first_shape)];
  expect_vec3(world["shapes"][0]["position"], ground.local_position, "ground position");
  EXPECT_NEAR(world["shapes"][0]["position"][2].get<double>(), -0.25, 1e-15);

  const nlohmann::json& ramp = block["bodies"][1];
  EXPECT_EQ(ramp["type"], "static");
  EXPECT_EQ(ramp["shapes"][0]["type"], "box");
  expect_vec3(ramp["shapes"][0]["half_extents"], {1.0, 0.5, 0.05}, "ramp half extents");

  // The dumbbell: sizes are the parameters' values, poses the model's (relative to the
  // centre of mass, which the builder moved off the body origin only along x... here the
  // two ends differ, so it moved).
  const int dumbbell = model.body_index("dumbbell");
  const nlohmann::json& dumbbell_json = block["bodies"][static_cast<std::size_t>(dumbbell)];
  EXPECT_EQ(dumbbell_json["type"], "dynamic");
  const auto d = static_cast<std::size_t>(dumbbell);
  EXPECT_EQ(dumbbell_json["mass"].get<double>(), scene.params.at(model.layout.body_mass[d]));
  expect_vec3(dumbbell_json["inertia"], scene.params.vec3_at(model.layout.body_inertia[d]), "inertia");
  expect_quat(dumbbell_json["principal_frame"], model.bodies[d].principal_frame, "principal frame");
  ASSERT_EQ(dumbbell_json["shapes"].size(), 3u);
  const std::vector<std::string> names = {"bar", "left", "right"};
  const std::vector<std::string> types = {"capsule", "sphere", "box"};
  for (std::size_t k = 0; k < 3; ++k) {
    const nlohmann::json& shape = dumbbell_json["shapes"][k];
    const Shape& spec = model.shapes[static_cast<std::size_t>(model.bodies[d].first_shape) + k];
    EXPECT_EQ(shape["name"], names[k]);
    EXPECT_EQ(shape["type"], types[k]);
    expect_vec3(shape["position"], spec.local_position, names[k] + " position");
    expect_quat(shape["orientation"], spec.local_orientation, names[k] + " orientation");
  }
  EXPECT_EQ(dumbbell_json["shapes"][0]["radius"].get<double>(), 0.02);
  EXPECT_EQ(dumbbell_json["shapes"][0]["half_length"].get<double>(), 0.15);
  EXPECT_FALSE(dumbbell_json["shapes"][0].contains("half_extents"));
  EXPECT_EQ(dumbbell_json["shapes"][1]["radius"].get<double>(), 0.05);
  expect_vec3(dumbbell_json["shapes"][2]["half_extents"], {0.04, 0.05, 0.06}, "right half extents");
  // The capsule lies along x: its frame's z axis is the world's x at this orientation.
  const Quat bar = model.shapes[static_cast<std::size_t>(model.bodies[d].first_shape)].local_orientation;
  const Vec3 bar_axis = bar.rotate({0, 0, 1});
  EXPECT_NEAR(std::abs(bar_axis.x), 1.0, 1e-12);
  // The shapes sit symmetrically about the bar's middle, which is off the centre of mass
  // (the box end is heavier than the sphere end): positions are relative to the centre of mass.
  const double middle = 0.5 * (dumbbell_json["shapes"][1]["position"][0].get<double>() +
                               dumbbell_json["shapes"][2]["position"][0].get<double>());
  EXPECT_NEAR(middle, dumbbell_json["shapes"][0]["position"][0].get<double>(), 1e-12);
  EXPECT_GT(std::abs(middle), 1e-3);

  ASSERT_EQ(block["joints"].size(), 1u);
  const nlohmann::json& hinge = block["joints"][0];
  EXPECT_EQ(hinge["name"], "hinge");
  EXPECT_EQ(hinge["type"], "revolute");
  EXPECT_EQ(hinge["parent"], "world");
  EXPECT_EQ(hinge["child"], "bob");
  expect_vec3(hinge["anchor_parent"], {0, 1, 1.5}, "anchor in the world");
  // In the child's frame (centre of mass at (0, 1, 1), unrotated): 0.5 m above it.
  expect_vec3(hinge["anchor_child"], model.joints[0].anchor_child, "anchor in the child");
  EXPECT_NEAR(hinge["anchor_child"][2].get<double>(), 0.5, 1e-15);
}

// A box of mass m and half extents (a, b, c) has principal moments m(b² + c²)/3, ... about its
// faces' normals. Turned 90° about z, its x axis is the world's y; spinning at w about the
// world's y with velocity v, its kinetic energy is ½ m |v|² + ½ m(b² + c²)/3 w², and at
// height h under gravity g its potential energy is m g h.
TEST(TrajectoryEnergy, MatchesTheClosedFormsOfASpinningBox) {
  const double mass = 3.0, b = 0.2, c = 0.1, h = 2.0, w = 4.0, g = 9.81;
  const Scene scene = parse_scene(R"({"bodies": [{"name": "box", "position": [0.7, -0.4, 2.0],
      "euler": [0, 0, 90], "mass": 3.0, "linear_velocity": [1, -2, 0.5],
      "angular_velocity": [0, 4.0, 0],
      "shapes": [{"type": "box", "half_extents": [0.3, 0.2, 0.1]}]}]})",
                                  "box.json");
  TrajectoryRecorder recorder(scene.model, scene.params);
  recorder.record(scene.state, {}, StepStatus{});
  const nlohmann::json energy = written(recorder)["frames"][0]["energy"];
  const double rotational = 0.5 * mass * (b * b + c * c) / 3.0 * w * w;
  const double translational = 0.5 * mass * (1.0 + 4.0 + 0.25);
  EXPECT_NEAR(energy["kinetic"].get<double>(), translational + rotational, 1e-12);
  EXPECT_NEAR(energy["potential"].get<double>(), mass * g * h, 1e-12);
}

// A ball dropped from rest, no contact: ½ m v² + m g z stays m g z0 to the integrator's
// error, and the kinetic energy is ½ m v² of the recorded velocity at every frame.
TEST(TrajectoryEnergy, FollowsAFallingBall) {
  const Scene scene = parse_scene(R"({"dt": 0.001, "bodies": [{"name": "ball",
      "position": [0, 0, 3.0], "mass": 2.0, "shapes": [{"type": "sphere", "radius": 0.1}]}]})");
  Simulator simulator(scene.model, scene.params, scene.state);
  TrajectoryRecorder recorder(simulator.model(), simulator.params());
  recorder.record(simulator.state(), {}, StepStatus{});
  for (int step = 0; step < 500; ++step) {
    const StepStatus status = simulator.step();
    recorder.record(simulator.state(), simulator.contacts(), status);
  }
  const nlohmann::json frames = written(recorder)["frames"];
  ASSERT_EQ(frames.size(), 501u);
  const double initial = 2.0 * 9.81 * 3.0;
  for (const nlohmann::json& frame : frames) {
    const double vz = frame["bodies"][0]["linear_velocity"][2].get<double>();
    const double z = frame["bodies"][0]["position"][2].get<double>();
    EXPECT_NEAR(frame["energy"]["kinetic"].get<double>(), 0.5 * 2.0 * vz * vz, 1e-12);
    EXPECT_NEAR(frame["energy"]["potential"].get<double>(), 2.0 * 9.81 * z, 1e-12);
    // Semi-implicit Euler loses ½ m g² dt t per unit time: below 0.05 J at t = 0.5 s.
    const double total = frame["energy"]["kinetic"].get<double>() + frame["energy"]["potential"].get<double>();
    EXPECT_NEAR(total, initial, 0.05);
  }
}

TEST(TrajectoryLoss, IsWrittenWhenGivenAndRefusedWhenNotFinite) {
  const Scene scene = parse_scene(kScene, "scene.json");
  TrajectoryRecorder recorder(scene.model, scene.params);
  recorder.record(scene.state, {}, StepStatus{});
  EXPECT_FALSE(written(recorder).contains("loss"));
  const std::vector<double> loss = {3.5, 1.25, 0.5, 0.125};
  recorder.set_loss_curve(loss);
  EXPECT_EQ(written(recorder)["loss"].get<std::vector<double>>(), loss);

  const std::vector<double> bad = {1.0, std::numeric_limits<double>::quiet_NaN()};
  try {
    recorder.set_loss_curve(bad);
    FAIL() << "a NaN loss was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("loss[1]"), std::string::npos) << error.what();
  }
}

TEST(TrajectoryModelBlock, RefusesParamsOfAnotherModel) {
  const Scene scene = parse_scene(kScene, "scene.json");
  Params wrong = scene.params;
  wrong.values.pop_back();
  try {
    TrajectoryRecorder recorder(scene.model, wrong);
    FAIL() << "a parameter vector of the wrong size was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("parameter vector"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(std::to_string(scene.model.param_count())), std::string::npos)
        << error.what();
  }
}

// Without the Params: the layout of version 1 as before (no model block, no energies), so
// readers of older files and of files written this way see the same keys.
TEST(TrajectoryModelBlock, AbsentWithoutParams) {
  const Scene scene = parse_scene(kScene, "scene.json");
  TrajectoryRecorder recorder(scene.model);
  recorder.record(scene.state, {}, StepStatus{});
  const nlohmann::json trajectory = written(recorder);
  EXPECT_EQ(trajectory["format"], "diffphys-trajectory");
  EXPECT_EQ(trajectory["version"], 1);
  EXPECT_FALSE(trajectory.contains("model"));
  EXPECT_FALSE(trajectory["frames"][0].contains("energy"));
  std::vector<std::string> keys;
  for (const auto& item : trajectory.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"bodies", "dt", "format", "frames", "name", "version"}));
}

}  // namespace
}  // namespace diffphys
