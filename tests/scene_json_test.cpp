// tests/scene_json_test.cpp — the JSON scene loader (src/model/scene_json.cpp), the example
// scenes, and the `diffphys` command line end to end (which also exercises the trajectory
// writer, src/model/trajectory.cpp).
//
// Loader tests parse strings with parse_scene(); each refusal must name the file, the JSON
// path and the offending value. The CLI tests run the built program (test_paths::cli_program()) on files
// under examples/scenes (test_paths::source_dir()) and read back what it wrote.
#include "test_paths.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"

namespace diffphys {
namespace {

// The message of the Error that parse_scene(text, "scene.json") throws ("" if none).
std::string load_error(const std::string& text) {
  try {
    parse_scene(text, "scene.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Expects parse_scene to refuse `text` with a message containing every piece of `expected`
// (always including the file name).
void expect_refused(const std::string& text, std::initializer_list<std::string> expected) {
  const std::string what = load_error(text);
  ASSERT_FALSE(what.empty()) << "accepted:\n" << text;
  EXPECT_NE(what.find("scene.json: "), std::string::npos) << what;
  for (const std::string& piece : expected)
    EXPECT_NE(what.find(piece), std::string::npos) << "missing '" << piece << "' in: " << what;
}

// A valid scene, with one field of the ball replaced by `ball_field` (e.g. "\"mass\": -1").
std::string ball_scene(const std::string& ball_field) {
  return R"({
  "dt": 0.001,
  "ground": true,
  "bodies": [
    {"name": "ball", "shapes": [{"type": "sphere", "radius": 0.1}], )" +
         ball_field + R"(}
  ]
})";
}

double slice_value(const Scene& scene, const char* name, std::size_t index = 0) {
  return scene.params.slice(scene.model, name)[index];
}

// Rotation matrix of a quaternion applied to the three unit axes, for comparisons.
void expect_same_rotation(const Quat& actual, const Mat3& expected) {
  const Mat3 rotation = actual.to_matrix();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(rotation(i, j), expected(i, j), 1e-12) << i << "," << j;
}

Mat3 rotation_about(int axis, double degrees) {
  const double angle = degrees * std::numbers::pi / 180.0;
  const double c = std::cos(angle), s = std::sin(angle);
  Mat3 r = Mat3::identity();
  const int a = (axis + 1) % 3, b = (axis + 2) % 3;
  r(a, a) = c;
  r(a, b) = -s;
  r(b, a) = s;
  r(b, b) = c;
  return r;
}

// ---------------------------------------------------------------------------------------
// A good scene maps onto the Model, Params, State and controls.

constexpr const char* kGoodScene = R"({
  "name": "test rig",
  "dt": 0.002,
  "gravity": [0, 0, -9.0],
  "solver": {"type": "pgs", "max_iterations": 50, "tolerance": 1e-8, "friction_directions": 8,
             "slip_aligned_friction": false, "contact_margin": 0.02, "contact_erp": 0.3, "penetration_slop": 0.001,
             "restitution_threshold": 0.05, "stabilization_iterations": 3,
             "stabilization_tolerance": 1e-9},
  "world": {"friction": 0.9, "restitution": 0.1},
  "ground": [{"normal": [0, 0, 1], "offset": 0}, {"normal": [1, 0, 0], "offset": -2}],
  "bodies": [
    {"name": "table", "type": "static", "position": [1, 0, 0.4], "friction": 0.7,
     "shapes": [{"type": "box", "half_extents": [0.5, 0.5, 0.05]}]},
    {"name": "ball", "position": [0, 0, 1], "mass": 2.0, "restitution": 0.8,
     "linear_velocity": [1, 0, 0],
     "shapes": [{"type": "sphere", "radius": 0.1, "collision_group": 2, "collision_mask": 5}]},
    {"name": "arm", "position": [0, 0, 2], "euler": [0, 0, 90], "mass": 1.5,
     "inertia": [0.01, 0.02, 0.025], "linear_damping": 0.1, "angular_damping": 0.2,
     "shapes": [{"name": "arm_capsule", "type": "capsule", "radius": 0.05, "length": 0.4}]}
  ],
  "joints": [
    {"name": "hinge", "type": "revolute", "parent": "world", "child": "arm",
     "anchor": [0, 0, 2], "axis": [0, 1, 0], "limits": [-1, 1.5], "damping": 0.25}
  ],
  "actuators": [
    {"name": "drive", "type": "servo", "joint": "hinge", "gain": 12, "max_torque": 3,
     "max_velocity": 4, "control": 0.5},
    {"name": "push", "type": "motor", "joint": "hinge", "max_torque": 2, "control": -1}
  ]
})";

TEST(SceneJson, GoodSceneMapsOntoTheModel) {
  const Scene scene = parse_scene(kGoodScene, "good.json");
  const Model& model = scene.model;

  EXPECT_EQ(model.name, "test rig");
  EXPECT_DOUBLE_EQ(model.dt, 0.002);
  EXPECT_DOUBLE_EQ(slice_value(scene, "gravity", 2), -9.0);

  EXPECT_EQ(model.solver.type, SolverType::ProjectedGaussSeidel);
  EXPECT_EQ(model.solver.max_iterations, 50);
  EXPECT_DOUBLE_EQ(model.solver.tolerance, 1e-8);
  EXPECT_EQ(model.solver.friction_directions, 8);
  EXPECT_FALSE(model.solver.slip_aligned_friction);
  EXPECT_DOUBLE_EQ(model.solver.contact_margin, 0.02);
  EXPECT_DOUBLE_EQ(model.solver.contact_erp, 0.3);
  EXPECT_DOUBLE_EQ(model.solver.penetration_slop, 0.001);
  EXPECT_DOUBLE_EQ(model.solver.restitution_threshold, 0.05);
  EXPECT_EQ(model.solver.stabilization_iterations, 3);
  EXPECT_DOUBLE_EQ(model.solver.stabilization_tolerance, 1e-9);

  ASSERT_EQ(model.body_count(), 4);  // world, table, ball, arm
  EXPECT_EQ(model.bodies[0].name, "world");
  EXPECT_EQ(model.bodies[1].name, "table");
  EXPECT_EQ(model.bodies[1].type, BodyType::Static);
  EXPECT_EQ(model.bodies[2].name, "ball");
  EXPECT_EQ(model.bodies[2].type, BodyType::Dynamic);
  EXPECT_EQ(model.body_index("arm"), 3);

  EXPECT_DOUBLE_EQ(slice_value(scene, "body/world/friction"), 0.9);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/world/restitution"), 0.1);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/table/friction"), 0.7);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/ball/mass"), 2.0);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/ball/restitution"), 0.8);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/arm/mass"), 1.5);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/arm/linear_damping"), 0.1);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/arm/angular_damping"), 0.2);
  EXPECT_EQ(model.layout.find("body/table/mass"), -1);  // static bodies have no mass slot

  // Shapes: two ground planes on the world, then one per body, in file order.
  ASSERT_EQ(model.shape_count(), 5);
  EXPECT_EQ(model.shapes[0].type, ShapeType::Plane);
  EXPECT_EQ(model.shapes[1].type, ShapeType::Plane);
  EXPECT_EQ(model.shapes[2].type, ShapeType::Box);
  EXPECT_EQ(model.shapes[3].type, ShapeType::Sphere);
  EXPECT_EQ(model.shapes[3].collision_group, 2u);
  EXPECT_EQ(model.shapes[3].collision_mask, 5u);
  EXPECT_EQ(model.shapes[4].name, "arm_capsule");
  EXPECT_DOUBLE_EQ(slice_value(scene, "shape/arm_capsule/half_length"), 0.2);  // length / 2
  EXPECT_DOUBLE_EQ(slice_value(scene, "shape/arm_capsule/radius"), 0.05);
  EXPECT_DOUBLE_EQ(slice_value(scene, "shape/table/0/half_extents", 2), 0.05);

  // Initial state: positions (sphere and capsule are centred, so origin = centre of mass),
  // velocities, orientation from Euler angles (yaw 90°: body x along world y).
  EXPECT_DOUBLE_EQ(scene.state.position[2].z, 1.0);
  EXPECT_DOUBLE_EQ(scene.state.linear_velocity[2].x, 1.0);
  expect_same_rotation(scene.state.orientation[3], rotation_about(2, 90));

  ASSERT_EQ(model.joint_count(), 1);
  EXPECT_EQ(model.joints[0].type, JointType::Revolute);
  EXPECT_EQ(model.joints[0].parent, 0);
  EXPECT_EQ(model.joints[0].child, 3);
  EXPECT_TRUE(model.joints[0].has_limits);
  EXPECT_DOUBLE_EQ(model.joints[0].lower_limit, -1.0);
  EXPECT_DOUBLE_EQ(model.joints[0].upper_limit, 1.5);
  EXPECT_DOUBLE_EQ(slice_value(scene, "joint/hinge/damping"), 0.25);

  ASSERT_EQ(model.actuator_count(), 2);
  EXPECT_EQ(model.actuators[0].type, ActuatorType::Servo);
  EXPECT_EQ(model.actuators[1].type, ActuatorType::Motor);
  EXPECT_EQ(model.actuators[0].joint, 0);
  EXPECT_DOUBLE_EQ(slice_value(scene, "actuator/drive/gain"), 12.0);
  EXPECT_DOUBLE_EQ(slice_value(scene, "actuator/drive/max_torque"), 3.0);
  EXPECT_DOUBLE_EQ(slice_value(scene, "actuator/drive/max_velocity"), 4.0);
  EXPECT_DOUBLE_EQ(slice_value(scene, "actuator/push/max_torque"), 2.0);
  ASSERT_EQ(scene.controls.size(), 2u);
  EXPECT_DOUBLE_EQ(scene.controls[0], 0.5);
  EXPECT_DOUBLE_EQ(scene.controls[1], -1.0);
}

TEST(SceneJson, DefaultsAreTheBuilders) {
  const Scene scene = parse_scene(R"({"bodies": [{"name": "ball",
      "shapes": [{"radius": 0.1}]}]})");
  const ModelBuilder defaults;
  const BodySpec body_defaults;
  EXPECT_EQ(scene.model.name, defaults.name);
  EXPECT_DOUBLE_EQ(scene.model.dt, defaults.dt);
  EXPECT_EQ(scene.model.solver.type, defaults.solver.type);
  EXPECT_EQ(scene.model.shapes[0].type, ShapeType::Sphere);  // the default shape type
  EXPECT_DOUBLE_EQ(slice_value(scene, "gravity", 2), defaults.gravity.z);
  EXPECT_DOUBLE_EQ(slice_value(scene, "body/ball/friction"), body_defaults.friction);
  // Mass from the default density: 1000 kg/m³ × (4/3)π(0.1 m)³.
  EXPECT_NEAR(slice_value(scene, "body/ball/mass"),
              body_defaults.density * 4.0 / 3.0 * std::numbers::pi * 1e-3, 1e-12);
}

TEST(SceneJson, EulerAnglesAreFixedAxesXYZ) {
  // "euler": [roll, pitch, yaw] in degrees means R = Rz(yaw) Ry(pitch) Rx(roll).
  const Scene scene = parse_scene(ball_scene(R"("euler": [30, 40, 50])"));
  expect_same_rotation(scene.state.orientation[1],
                       rotation_about(2, 50) * rotation_about(1, 40) * rotation_about(0, 30));
}

TEST(SceneJson, QuaternionOrientationIsNormalised) {
  // [1, 0, 0, 1] is 90° about z once normalised.
  const Scene scene = parse_scene(ball_scene(R"("orientation": [1, 0, 0, 1])"));
  expect_same_rotation(scene.state.orientation[1], rotation_about(2, 90));
}

TEST(SceneJson, GroundForms) {
  const auto plane_count = [](const std::string& ground) {
    const Scene scene = parse_scene(R"({"ground": )" + ground + "}");
    return scene.model.shape_count();
  };
  EXPECT_EQ(plane_count("true"), 1);
  EXPECT_EQ(plane_count("false"), 0);
  EXPECT_EQ(plane_count(R"({"normal": [0, 0, 1], "offset": 0.5})"), 1);
  EXPECT_EQ(plane_count(R"([{"offset": 0}, {"normal": [0, 1, 0]}, {}])"), 3);
}

// ---------------------------------------------------------------------------------------
// Format errors, found by the loader: path and value in every message.

TEST(SceneJsonErrors, SyntaxErrorGivesLineAndColumn) {
  expect_refused("{\n  \"dt\": 0.001,\n  \"bodies\": [ }\n}", {"line 3", "column", "JSON"});
  expect_refused("", {"line 1", "end of input"});
}

TEST(SceneJsonErrors, NanLiteralIsASyntaxError) {
  expect_refused("{\"dt\": NaN}", {"line 1", "NaN"});
}

TEST(SceneJsonErrors, NumberOverflowIsRefused) {
  expect_refused("{\n\"dt\": 1e400}", {"1e400", "line 2"});
}

TEST(SceneJsonErrors, WrongTypeNamesPathAndValue) {
  expect_refused(ball_scene(R"("mass": "heavy")"),
                 {"bodies[0].mass: expected a number, got \"heavy\""});
  expect_refused(R"({"dt": [0.001]})", {"dt: expected a number, got [0.001]"});
  expect_refused(R"({"name": 3})", {"name: expected a string, got 3"});
  expect_refused(R"({"bodies": {"name": "ball"}})", {"bodies: expected an array"});
  expect_refused(R"({"bodies": [3]})", {"bodies[0]: expected an object, got a number 3"});
  expect_refused(R"({"solver": {"max_iterations": 2.5}})",
                 {"solver.max_iterations: expected an integer, got 2.5"});
  expect_refused(R"({"joints": [{"name": "j", "child": "c", "collide_connected": "yes"}]})",
                 {"joints[0].collide_connected: expected true or false, got \"yes\""});
  expect_refused(R"({"solver": {"time_of_impact": 1}})", {"solver.time_of_impact: expected true or false, got 1"});
}

TEST(SceneJson, TimeOfImpactIsOnByDefaultAndCanBeTurnedOff) {
  EXPECT_TRUE(parse_scene(R"({"name": "a"})", "a.json").model.solver.time_of_impact);
  EXPECT_FALSE(parse_scene(R"({"solver": {"time_of_impact": false}})", "b.json").model.solver.time_of_impact);
}

TEST(SceneJsonErrors, ArrayOfWrongLengthNamesPathAndValue) {
  expect_refused(ball_scene(R"("position": [1, 2])"),
                 {"bodies[0].position: expected an array of 3 numbers, got [1,2]"});
  expect_refused(ball_scene(R"("orientation": [1, 0, 0])"),
                 {"bodies[0].orientation: expected an array of 4 numbers"});
  expect_refused(ball_scene(R"("position": [1, "two", 3])"),
                 {"bodies[0].position[1]: expected a number, got \"two\""});
}

TEST(SceneJsonErrors, NanOrInfinityAsStringsAreRefused) {
  expect_refused(ball_scene(R"("mass": "NaN")"), {"bodies[0].mass", "\"NaN\"", "finite"});
  expect_refused(ball_scene(R"("force": [0, 0, "-Infinity"])"),
                 {"bodies[0].force[2]", "\"-Infinity\"", "finite"});
}

TEST(SceneJsonErrors, UnknownKeyIsRefusedWithASuggestion) {
  expect_refused(ball_scene(R"("restitusion": 0.5)"),
                 {"bodies[0]: unknown key \"restitusion\"", "did you mean \"restitution\""});
  expect_refused(R"({"gravty": [0, 0, -9.81]})", {"unknown key \"gravty\"", "\"gravity\""});
  expect_refused(R"({"bodies": [{"name": "b", "shapes": [{"radius": 0.1, "colour": "red"}]}]})",
                 {"bodies[0].shapes[0]: unknown key \"colour\"", "allowed here"});
  expect_refused(R"({"solver": {"iterations": 5}})", {"solver: unknown key \"iterations\""});
}

TEST(SceneJsonErrors, DuplicateKeyIsRefused) {
  expect_refused(ball_scene(R"("mass": 1, "mass": 2)"), {"bodies[0]: duplicate key \"mass\""});
}

TEST(SceneJsonErrors, UnknownEnumStrings) {
  expect_refused(R"({"bodies": [{"name": "b", "shapes": [{"type": "cube"}]}]})",
                 {"bodies[0].shapes[0].type: unknown shape type \"cube\"", "sphere, box"});
  expect_refused(R"({"bodies": [{"name": "b", "type": "mocap"}]})",
                 {"bodies[0].type: unknown body type \"mocap\"", "dynamic, static, kinematic"});
  expect_refused(R"({"joints": [{"name": "j", "type": "hinge", "child": "ball"}]})",
                 {"joints[0].type: unknown joint type \"hinge\"", "revolute"});
  expect_refused(R"({"actuators": [{"name": "a", "type": "muscle", "joint": "j"}]})",
                 {"actuators[0].type: unknown actuator type \"muscle\""});
  expect_refused(R"({"solver": {"type": "newton"}})",
                 {"solver.type: unknown solver type \"newton\"", "interior_point, pgs"});
}

TEST(SceneJsonErrors, MissingRequiredKeys) {
  expect_refused(R"({"bodies": [{"mass": 1}]})", {"bodies[0]: missing required key \"name\""});
  expect_refused(R"({"joints": [{"name": "j"}]})", {"joints[0]: missing required key \"child\""});
  expect_refused(R"({"actuators": [{"name": "a"}]})",
                 {"actuators[0]: missing required key \"joint\""});
}

TEST(SceneJsonErrors, FieldsTheTypeWouldIgnoreAreRefused) {
  expect_refused(
      R"({"bodies": [{"name": "b", "shapes": [{"radius": 0.1, "half_extents": [1, 1, 1]}]}]})",
      {"bodies[0].shapes[0].half_extents: not used by a sphere"});
  expect_refused(R"({"bodies": [{"name": "b", "type": "static", "mass": 3}]})",
                 {"bodies[0].mass: not used by a static body", "3"});
  expect_refused(R"({"joints": [{"name": "j", "type": "ball", "child": "b", "axis": [1, 0, 0]}]})",
                 {"joints[0].axis: not used by a ball joint"});
  expect_refused(R"({"actuators": [{"name": "a", "joint": "j", "gain": 3}]})",
                 {"actuators[0].gain: not used by a motor"});
  expect_refused(ball_scene(R"("orientation": [1, 0, 0, 0], "euler": [0, 0, 0])"),
                 {"bodies[0]: give either \"orientation\" or \"euler\""});
}

// ---------------------------------------------------------------------------------------
// Physical errors, found by ModelBuilder::build(): re-thrown with the file name and path.

TEST(SceneJsonErrors, UnknownBodyInAJoint) {
  expect_refused(R"({"bodies": [{"name": "ball", "shapes": [{"radius": 0.1}]}],
                    "joints": [{"name": "hinge", "child": "bal"}]})",
                 {"joints[0]", "hinge", "'bal'"});
}

TEST(SceneJsonErrors, NegativeMass) {
  expect_refused(ball_scene(R"("mass": -1)"), {"bodies[0]", "ball", "mass", "-1"});
}

TEST(SceneJsonErrors, NonPositiveTimeStep) {
  expect_refused(R"({"dt": 0})", {"dt", "got 0"});
  expect_refused(R"({"dt": -0.001})", {"dt", "-0.001"});
}

TEST(SceneJsonErrors, DuplicateBodyName) {
  expect_refused(R"({"bodies": [{"name": "ball", "shapes": [{"radius": 0.1}]},
                               {"name": "ball", "shapes": [{"radius": 0.2}]}]})",
                 {"bodies[1]", "'ball'", "duplicate"});
}

TEST(SceneJsonErrors, ZeroGroundNormal) {
  expect_refused(R"({"ground": {"normal": [0, 0, 0]}})", {"ground", "normal"});
}

TEST(SceneJsonErrors, MissingFileNamesTheFile) {
  try {
    load_scene("/nonexistent/dir/missing_scene.json");
    FAIL() << "loaded a missing file";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("missing_scene.json"), std::string::npos)
        << error.what();
  }
}

// ---------------------------------------------------------------------------------------
// Every example scene loads.

TEST(SceneJsonExamples, EveryExampleSceneLoads) {
  const std::filesystem::path directory =
      std::filesystem::path(test_paths::source_dir()) / "examples" / "scenes";
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    EXPECT_NO_THROW({
      const Scene scene = load_scene(entry.path());
      EXPECT_GE(scene.model.body_count(), 2);
    });
    ++loaded;
  }
  EXPECT_GE(loaded, 7);
}

TEST(SceneJsonExamples, ChainHasTenRevoluteLinks) {
  const Scene scene = load_scene(std::filesystem::path(test_paths::source_dir()) / "examples" /
                                 "scenes" / "chain10.json");
  EXPECT_EQ(scene.model.body_count(), 11);
  ASSERT_EQ(scene.model.joint_count(), 10);
  for (const Joint& joint : scene.model.joints) EXPECT_EQ(joint.type, JointType::Revolute);
}

// ---------------------------------------------------------------------------------------
// The command line, end to end.

class CommandLine : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("diffphys_cli_test_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  // Runs `diffphys <arguments>`; returns the exit code, keeps stdout and stderr.
  int run(const std::string& arguments) {
    const std::filesystem::path out = directory_ / "stdout.txt";
    const std::filesystem::path err = directory_ / "stderr.txt";
    const std::string command = std::string("\"") + test_paths::cli_program() + "\" " + arguments + " >\"" +
                                out.string() + "\" 2>\"" + err.string() + "\"";
    const int status = std::system(command.c_str());
    stdout_ = read(out);
    stderr_ = read(err);
    if (status == -1 || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  static std::string example(const char* name) {
    return "\"" +
           (std::filesystem::path(test_paths::source_dir()) / "examples" / "scenes" / name).string() +
           "\"";
  }

  std::filesystem::path directory_;
  std::string stdout_, stderr_;
};

TEST_F(CommandLine, SimulateBouncingBallWritesATrajectory) {
  const std::filesystem::path trajectory_path = directory_ / "trajectory.json";
  // 0.8 s: the ball falls 0.9 m (contact near t = 0.43 s, lasting a few steps), bounces and
  // rises again. Every step is recorded so that the contact steps are in the file.
  const int exit_code = run("simulate " + example("bouncing_ball.json") + " --steps 800 --out \"" +
                            trajectory_path.string() + "\"");
  ASSERT_EQ(exit_code, 0) << stdout_ << stderr_;
  EXPECT_NE(stdout_.find("ball"), std::string::npos) << stdout_;

  const nlohmann::json trajectory = nlohmann::json::parse(read(trajectory_path));
  EXPECT_EQ(trajectory["name"], "bouncing ball");
  EXPECT_DOUBLE_EQ(trajectory["dt"].get<double>(), 0.001);
  ASSERT_EQ(trajectory["bodies"], nlohmann::json::array({"ball"}));
  const nlohmann::json& frames = trajectory["frames"];
  ASSERT_EQ(frames.size(), 801u);  // the initial state, then every step
  EXPECT_DOUBLE_EQ(frames[0]["time"].get<double>(), 0.0);
  EXPECT_TRUE(frames[0]["contacts"].empty());
  EXPECT_NEAR(frames[800]["time"].get<double>(), 0.8, 1e-9);

  std::vector<double> heights;
  int contact_frames = 0;
  for (const nlohmann::json& frame : frames) {
    ASSERT_EQ(frame["bodies"].size(), 1u);
    heights.push_back(frame["bodies"][0]["position"][2].get<double>());
    ASSERT_EQ(frame["bodies"][0]["orientation"].size(), 4u);
    EXPECT_TRUE(frame["solver"]["converged"].get<bool>());
    if (!frame["contacts"].empty()) ++contact_frames;
    for (const nlohmann::json& contact : frame["contacts"]) {
      EXPECT_TRUE(contact["body_a"] == "ball" || contact["body_b"] == "ball") << contact;
      EXPECT_TRUE(contact["body_a"] == "world" || contact["body_b"] == "world") << contact;
      EXPECT_EQ(contact["normal"].size(), 3u);
      EXPECT_GE(contact["normal_impulse"].get<double>(), 0.0);
    }
  }
  EXPECT_GT(contact_frames, 0);
  const auto lowest = std::min_element(heights.begin(), heights.end());
  EXPECT_NEAR(heights.front(), 1.0, 1e-12);
  EXPECT_LT(*lowest, 0.15);                    // fell to the ground (radius 0.1)...
  EXPECT_GT(*lowest, 0.05);                    // ...without falling through it
  EXPECT_GT(heights.back(), *lowest + 0.2);    // and bounced back up
  EXPECT_GT(heights.front(), heights.back());  // but not as high as it started (e = 0.8)
}

TEST_F(CommandLine, EveryKthStepAndTheLastAreRecorded) {
  const std::filesystem::path trajectory_path = directory_ / "trajectory.json";
  ASSERT_EQ(run("simulate " + example("bouncing_ball.json") + " --steps 100 --every 30 --quiet" +
                " --out \"" + trajectory_path.string() + "\""),
            0)
      << stderr_;
  EXPECT_TRUE(stdout_.empty()) << stdout_;  // --quiet
  const nlohmann::json trajectory = nlohmann::json::parse(read(trajectory_path));
  std::vector<double> times;
  for (const nlohmann::json& frame : trajectory["frames"]) times.push_back(frame["time"]);
  ASSERT_EQ(times.size(), 5u);  // steps 0, 30, 60, 90 and the last, 100
  EXPECT_NEAR(times[1], 0.030, 1e-9);
  EXPECT_NEAR(times[3], 0.090, 1e-9);
  EXPECT_NEAR(times[4], 0.100, 1e-9);
}

TEST_F(CommandLine, MalformedSceneExitsWithOneAndAMessage) {
  const std::filesystem::path scene_path = directory_ / "broken.json";
  std::ofstream(scene_path) << "{\n  \"bodies\": [\n    {\"name\": \"ball\",}\n  ]\n}\n";
  const int exit_code = run("simulate \"" + scene_path.string() + "\" --steps 10");
  EXPECT_EQ(exit_code, 1);
  EXPECT_NE(stderr_.find("diffphys: error: "), std::string::npos) << stderr_;
  EXPECT_NE(stderr_.find("broken.json"), std::string::npos) << stderr_;
  EXPECT_NE(stderr_.find("line 3"), std::string::npos) << stderr_;
}

TEST_F(CommandLine, MissingFileAndBadOptionsExitWithOne) {
  EXPECT_EQ(run("simulate \"" + (directory_ / "nope.json").string() + "\" --steps 10"), 1);
  EXPECT_NE(stderr_.find("diffphys: error: "), std::string::npos) << stderr_;
  EXPECT_EQ(run("simulate " + example("bouncing_ball.json")), 1);  // --steps is required
  EXPECT_NE(stderr_.find("diffphys: error: "), std::string::npos) << stderr_;
  EXPECT_EQ(run("frobnicate"), 1);
}

TEST_F(CommandLine, InfoListsTheParameterSlices) {
  ASSERT_EQ(run("info " + example("servo_arm.json")), 0) << stderr_;
  for (const char* expected : {"upper_arm", "shoulder", "universal", "shoulder_pitch", "servo",
                               "body/upper_arm/mass", "actuator/elbow_pitch/gain", "gravity"}) {
    EXPECT_NE(stdout_.find(expected), std::string::npos) << expected << " in\n" << stdout_;
  }
}

TEST_F(CommandLine, VersionAndHelp) {
  ASSERT_EQ(run("version"), 0);
  EXPECT_EQ(stdout_.rfind("diffphys ", 0), 0u) << stdout_;
  ASSERT_EQ(run("--help"), 0);
  for (const char* expected :
       {"simulate", "info", "version", "--steps", "--every", "--solver", "--out", "--quiet"}) {
    EXPECT_NE(stdout_.find(expected), std::string::npos) << expected << " in\n" << stdout_;
  }
}

}  // namespace
}  // namespace diffphys
