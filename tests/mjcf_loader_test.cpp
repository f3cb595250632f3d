// tests/mjcf_loader_test.cpp — the MJCF loader (io/mjcf_loader.cpp): MuJoCo 2.2's own compiled
// models as the reference for masses, centres of mass and inertias (the samples Debian's
// libmujoco-samples ships and this folder's feature files), every supported element, the
// warnings for what is not supported, and clear errors for malformed files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "diffphys/error.hpp"
#include "robot_test_helpers.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace diffphys {
namespace {

using testing::any_warning_contains;
using testing::error_of;
using testing::kRobotData;
using testing::world_inertia;
const std::filesystem::path kSamples = "/usr/share/mujoco/model";

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
// MuJoCo 2.2 finds a body's principal moments to ~1e-13 but stores its principal axes
// (body_iquat) to only ~2e-8 rad: on bodies whose inertia is not axis-aligned, its own
// ximat·diag·ximatᵀ misses the exact tensor by ~1e-8 kg·m² (checked by hand for
// radian_frames.xml's body "tilted": our tensor equals the textbook sum of the box and
// capsule to 1e-15, MuJoCo's reconstruction is 5e-8 off). Masses, centres of mass and
// principal moments are compared to 1e-9 everywhere; the axes of such bodies to this.
constexpr double kMujocoAxesTolerance = 1e-7;

// Every moving MuJoCo body's mass, centre of mass (xipos), principal moments (body_inertia)
// and world inertia tensor (ximat · diag · ximatᵀ) against the diffphys body of the same
// name; bodies welded to the world are static in diffphys (no mass) and are checked to be.
void expect_mass_properties_match_mujoco(const std::filesystem::path& file, int expected_moving_bodies,
                                         double axes_tolerance = 1e-9) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  const Scene scene = load_mjcf(file);
  int compared = 0;
  for (int i = 1; i < m->nbody; ++i) {
    const char* mj_name = mj_id2name(m, mjOBJ_BODY, i);
    const std::string name = mj_name ? mj_name : "body" + std::to_string(i);
    SCOPED_TRACE(file.filename().string() + " body " + name);
    const int b = scene.model.body_index(name);
    const auto bi = static_cast<std::size_t>(b);
    if (m->body_weldid[i] == 0) {
      EXPECT_EQ(scene.model.bodies[bi].type, BodyType::Static);
      continue;
    }
    ASSERT_EQ(scene.model.bodies[bi].type, BodyType::Dynamic);
    EXPECT_NEAR(scene.params.at(scene.model.layout.body_mass[bi]), m->body_mass[i], 1e-9);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(scene.state.position[bi][k], d->xipos[3 * i + k], 1e-9);
    // Principal moments: MuJoCo orders them as its eigen-solver returns them; compare sorted.
    double mj_moments[3] = {m->body_inertia[3 * i], m->body_inertia[3 * i + 1], m->body_inertia[3 * i + 2]};
    std::sort(mj_moments, mj_moments + 3);
    const Vec3 moments = scene.params.vec3_at(scene.model.layout.body_inertia[bi]);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(moments[k], mj_moments[k], 1e-9);
    // The principal axes, through the world tensor (well defined when moments repeat).
    const Mat3 ours = world_inertia(scene, b);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) {
        double theirs = 0.0;
        for (int k = 0; k < 3; ++k)
          theirs += d->ximat[9 * i + 3 * r + k] * m->body_inertia[3 * i + k] * d->ximat[9 * i + 3 * c + k];
        EXPECT_NEAR(ours(r, c), theirs, axes_tolerance) << "inertia (" << r << ", " << c << ")";
      }
    }
    ++compared;
  }
  EXPECT_EQ(compared, expected_moving_bodies);
  mj_deleteData(d);
  mj_deleteModel(m);
}

TEST(MjcfLoader, HumanoidSampleMatchesMujocoMassProperties) {
  expect_mass_properties_match_mujoco(kSamples / "humanoid/humanoid.xml", 16);
}

TEST(MjcfLoader, TendonArmSampleMatchesMujocoMassProperties) {
  expect_mass_properties_match_mujoco(kSamples / "tendon_arm/arm26.xml", 2);
}

TEST(MjcfLoader, FeatureFileMatchesMujocoMassProperties) {
  expect_mass_properties_match_mujoco(kRobotData / "features.xml", 7, kMujocoAxesTolerance);
}

TEST(MjcfLoader, RadianFixedAxisFramesMatchMujocoMassProperties) {
  expect_mass_properties_match_mujoco(kRobotData / "radian_frames.xml", 2, kMujocoAxesTolerance);
}
#endif

TEST(MjcfLoader, FeatureFileMapsEveryElement) {
  const Scene scene = load_mjcf(kRobotData / "features.xml");
  const Model& model = scene.model;
  EXPECT_EQ(model.name, "features");
  EXPECT_DOUBLE_EQ(model.dt, 0.004);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "gravity")[2], -9.5);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "body/world/friction")[0], 1.2);  // the largest world geom friction
  // The floor became a ground plane; the ramp a shape of the static world_static body.
  EXPECT_EQ(model.shapes[0].type, ShapeType::Plane);
  EXPECT_EQ(model.bodies[static_cast<std::size_t>(model.body_index("world_static"))].type, BodyType::Static);
  EXPECT_EQ(model.bodies[static_cast<std::size_t>(model.body_index("pillar"))].type, BodyType::Static);
  // Defaults and classes: density 800 (main), 3000 (heavy via childclass), mass 2.5 (heavier).
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "body/base/friction")[0], 0.8);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "shape/arm_cylinder/radius")[0], 0.04);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "shape/arm_cylinder/half_length")[0], 0.1);
  EXPECT_EQ(model
                .shapes[static_cast<std::size_t>(std::find_if(model.shapes.begin(), model.shapes.end(),
                                                              [](const Shape& s) { return s.name == "arm_cylinder"; }) -
                                                 model.shapes.begin())]
                .type,
            ShapeType::Cylinder);
  // Joints: hinge → revolute with limits in radians; slide → prismatic, limits shifted by ref;
  // two perpendicular hinges → universal; ball; free (no joint); welds → fixed.
  const Joint& hinge = model.joints[static_cast<std::size_t>(model.joint_index("hinge"))];
  EXPECT_EQ(hinge.type, JointType::Revolute);
  EXPECT_NEAR(hinge.lower_limit, -60 * M_PI / 180, 1e-15);
  EXPECT_NEAR(hinge.upper_limit, 45 * M_PI / 180, 1e-15);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "joint/hinge/damping")[0], 0.3);
  const Joint& slide = model.joints[static_cast<std::size_t>(model.joint_index("slide"))];
  EXPECT_EQ(slide.type, JointType::Prismatic);
  EXPECT_NEAR(slide.lower_limit, -0.15, 1e-15);
  EXPECT_NEAR(slide.upper_limit, 0.15, 1e-15);
  EXPECT_EQ(model.joints[static_cast<std::size_t>(model.joint_index("wrist_a+wrist_b"))].type, JointType::Universal);
  const Joint& ball = model.joints[static_cast<std::size_t>(model.joint_index("pod_ball"))];
  EXPECT_EQ(ball.type, JointType::Ball);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "joint/pod_ball/damping")[0], 0.0);  // class loose
  EXPECT_EQ(model.joints[static_cast<std::size_t>(model.joint_index("hand_weld"))].type, JointType::Fixed);
  EXPECT_THROW(model.joint_index("puck_free"), Error);
  // A joint to a world-welded parent may collide with it (MuJoCo filters only moving parents).
  EXPECT_TRUE(model.joints[static_cast<std::size_t>(model.joint_index("hinge"))].collide_connected);
  EXPECT_TRUE(model.joints[static_cast<std::size_t>(model.joint_index("lamp_hinge"))].collide_connected);
  EXPECT_FALSE(model.joints[static_cast<std::size_t>(model.joint_index("slide"))].collide_connected);
  // Exclusions: <contact><exclude> and MuJoCo's parent filter through the weld (base–hand:
  // hand is welded to wrist, whose parent weld is arm, not base: not excluded; arm–hand: excluded).
  const auto excluded = [&](const char* a, const char* b) {
    const int i = model.body_index(a), j = model.body_index(b);
    return std::binary_search(model.collision_exclusions.begin(), model.collision_exclusions.end(),
                              std::pair{std::min(i, j), std::max(i, j)});
  };
  EXPECT_TRUE(excluded("puck", "lamp"));
  EXPECT_TRUE(excluded("arm", "hand"));
  EXPECT_TRUE(excluded("wrist", "hand"));
  EXPECT_FALSE(excluded("base", "hand"));
  EXPECT_FALSE(excluded("puck", "base"));
  // Actuators: motor control = gear × ctrl, bounded by gear × ctrlrange and forcerange.
  ASSERT_EQ(model.actuator_count(), 4);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "actuator/hinge_motor/max_torque")[0], 50.0);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "actuator/wrist_motor/max_torque")[0], 5.0);
  EXPECT_EQ(model.actuators[1].dof, 1);  // wrist_b is the universal joint's second coordinate
  // Position servo with joint damping d: gain kp / d; bounds from the control range.
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "actuator/slide_servo/gain")[0], 60.0 / 0.3);
  EXPECT_NEAR(scene.params.slice(model, "actuator/slide_servo/max_torque")[0], 60.0 * 0.3, 1e-12);
  EXPECT_NEAR(scene.params.slice(model, "actuator/slide_servo/max_velocity")[0], 200.0 * 0.3, 1e-12);
  // Without damping: √(kp / I) with I the lamp's moment about its hinge (a capsule along x,
  // turning about z through its centre): MuJoCo's capsule moment.
  {
    const double r = 0.02, height = 0.2, density = 800;
    const double mass = density * (M_PI * r * r * height + 4.0 / 3.0 * M_PI * r * r * r);
    const double sphere_share = 4 * r / (4 * r + 3 * height);
    const double transverse = mass * ((1 - sphere_share) * (3 * r * r + height * height) / 12 +
                                      sphere_share * 2 * r * r / 5 + sphere_share * height * (3 * r + 2 * height) / 8);
    EXPECT_NEAR(scene.params.slice(model, "actuator/lamp_servo/gain")[0], std::sqrt(2.0 / transverse), 1e-9);
  }
  // What is not supported is named, with its line.
  EXPECT_TRUE(any_warning_contains(scene, "features.xml:27: <site> ignored"));
  EXPECT_TRUE(any_warning_contains(scene, "<sensor>: unsupported element ignored"));
  EXPECT_TRUE(any_warning_contains(scene, "<jointpos>: unsupported element ignored"));
  EXPECT_TRUE(any_warning_contains(scene, "<geom 'puck_cylinder'>: cylinder collides as the capsule"));
}

TEST(MjcfLoader, SamplesNameWhatIsUnsupported) {
  const Scene arm = load_mjcf(kSamples / "tendon_arm/arm26.xml");
  EXPECT_TRUE(any_warning_contains(arm, "arm26.xml:70: <tendon>: unsupported element ignored"));
  EXPECT_TRUE(any_warning_contains(arm, "<muscle 'SF'>: actuator type <muscle> is not supported"));
  EXPECT_TRUE(any_warning_contains(arm, "<site> ignored"));
  EXPECT_EQ(arm.model.actuator_count(), 0);
  // Unnamed bodies take MuJoCo's body id: body1, body2.
  EXPECT_EQ(arm.model.body_index("body2"), 2);
  const Scene humanoid = load_mjcf(kSamples / "humanoid/humanoid.xml");
  EXPECT_TRUE(any_warning_contains(humanoid, "<joint> attribute stiffness ignored (diffphys joints have no springs)"));
  EXPECT_TRUE(any_warning_contains(humanoid, "<motor 'right_hip_x'>: skipped"));
  EXPECT_EQ(humanoid.model.actuator_count(), 15);
  EXPECT_GE(humanoid.params.slice(humanoid.model, "body/right_thigh/mass")[0], 4.0);
}

TEST(MjcfLoader, HumanoidSimulatesAndFalls) {
  Scene scene = load_scene(kSamples / "humanoid/humanoid.xml");
  Simulator simulator(scene.model, scene.params, scene.state);
  const int head = scene.model.body_index("head");
  const double start = simulator.state().position[static_cast<std::size_t>(head)].z;
  for (int step = 0; step < 100; ++step) {
    const StepStatus status = simulator.step(scene.controls);
    ASSERT_TRUE(status.converged) << "step " << step;
  }
  const double end = simulator.state().position[static_cast<std::size_t>(head)].z;
  EXPECT_LT(end, start - 0.1);  // it falls under gravity...
  EXPECT_GT(end, 0.0);          // ...onto the floor, not through it
}

TEST(MjcfLoader, UnreadableMeshGeomsAreSkippedWithTheReason) {
  const char* with_inertial =
      "<mujoco><asset><mesh file=\"part.stl\"/></asset><worldbody>\n<body name=\"b\"><joint/>"
      "<inertial mass=\"1\" diaginertia=\"1 1 1\"/>\n<geom type=\"mesh\" mesh=\"part\"/></body></worldbody></mujoco>";
  const Scene scene = parse_mjcf(with_inertial, "mesh.xml");
  EXPECT_TRUE(any_warning_contains(scene, "mesh.xml:3: <geom>: mesh geom skipped ("));
  EXPECT_TRUE(any_warning_contains(scene, "part.stl"));
  EXPECT_EQ(scene.model.bodies[1].shape_count, 0);
  const char* from_geoms =
      "<mujoco><asset><mesh file=\"part.stl\"/></asset><worldbody>\n<body name=\"b\"><joint/>"
      "\n<geom type=\"mesh\" mesh=\"part\"/></body></worldbody></mujoco>";
  EXPECT_NE(error_of([&] {
              parse_mjcf(from_geoms, "mesh.xml");
            }).find("mesh.xml:3: <geom>: mass from a mesh geom is not supported yet"),
            std::string::npos);
}

// Several <actuator>, <worldbody>, <contact>, <asset> and <default> sections: MuJoCo reads
// them all into one model; a later one must not replace an earlier one.
const char* const kRepeatedSections = R"(<mujoco model="repeated">
<default><geom density="500"/></default>
<default><default class="light"><geom density="100"/></default></default>
<asset><texture name="t1" builtin="checker" type="2d" width="8" height="8"/></asset>
<worldbody><body name="a"><joint name="ja"/><geom size="0.1"/></body></worldbody>
<asset><material name="m1"/></asset>
<worldbody><body name="b" pos="1 0 0"><joint name="jb"/><geom class="light" size="0.2"/></body></worldbody>
<actuator><motor name="first" joint="ja"/></actuator>
<contact><exclude body1="a" body2="b"/></contact>
<actuator><motor joint="jb"/></actuator>
<contact><exclude body1="b" body2="a"/></contact>
</mujoco>
)";

TEST(MjcfLoader, RepeatedSectionsAreAllRead) {
  const Scene scene = parse_mjcf(kRepeatedSections, "repeated.xml");
  const Model& model = scene.model;
  ASSERT_EQ(model.actuator_count(), 2);
  EXPECT_EQ(model.actuators[0].name, "first");
  EXPECT_EQ(model.actuators[1].name, "actuator1");  // MuJoCo's id across both sections
  EXPECT_NEAR(scene.params.slice(model, "body/a/mass")[0], 500 * 4.0 / 3.0 * M_PI * 0.001, 1e-9);
  EXPECT_NEAR(scene.params.slice(model, "body/b/mass")[0], 100 * 4.0 / 3.0 * M_PI * 0.008, 1e-9);
  const int a = model.body_index("a"), b = model.body_index("b");
  EXPECT_TRUE(std::binary_search(model.collision_exclusions.begin(), model.collision_exclusions.end(),
                                 std::pair{std::min(a, b), std::max(a, b)}));
}

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
TEST(MjcfLoader, RepeatedSectionsCountAsInMujoco) {
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "mjcf_repeated_sections.xml";
  {
    std::ofstream out(file);
    out << kRepeatedSections;
  }
  char error[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  const Scene scene = load_mjcf(file);
  EXPECT_EQ(scene.model.actuator_count(), m->nu);
  EXPECT_EQ(static_cast<int>(scene.model.bodies.size()), m->nbody);
  for (const char* name : {"a", "b"})
    EXPECT_NEAR(scene.params.slice(scene.model, std::string("body/") + name + "/mass")[0],
                m->body_mass[mj_name2id(m, mjOBJ_BODY, name)], 1e-9);
  mj_deleteModel(m);
}
#endif

// Writes `text` to `path` (creating its folder) for tests that need files on disk.
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << text;
}

TEST(MjcfLoader, IncludeSplicesTheFileInPlaceWithItsOwnLines) {
  const std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / "mjcf_include";
  std::filesystem::remove_all(folder);
  write_file(folder / "main.xml",
             "<mujoco model=\"main\">\n<include file=\"parts/robot.xml\"/>\n"
             "<worldbody>\n<include file=\"parts/ball.xml\"/>\n</worldbody>\n</mujoco>\n");
  // Paths inside an included file are relative to that file.
  write_file(folder / "parts/robot.xml",
             "<mujoco>\n<worldbody>\n<body name=\"arm\"><joint name=\"hinge\"/><geom size=\"0.1\"/>\n"
             "<site name=\"tip\"/></body>\n</worldbody>\n<include file=\"motors.xml\"/>\n</mujoco>\n");
  write_file(folder / "parts/motors.xml",
             "<mujoco>\n<actuator>\n<motor name=\"drive\" joint=\"hinge\"/>\n</actuator>\n</mujoco>\n");
  write_file(folder / "parts/ball.xml",
             "<mujoco>\n<body name=\"ball\" pos=\"1 0 0\"><freejoint/><geom size=\"0.2\"/></body>\n</mujoco>\n");
  const Scene scene = load_mjcf(folder / "main.xml");
  EXPECT_EQ(scene.model.name, "main");
  EXPECT_EQ(scene.model.body_index("arm"), 1);  // MuJoCo's order: the include's place
  EXPECT_EQ(scene.model.body_index("ball"), 2);
  ASSERT_EQ(scene.model.actuator_count(), 1);
  EXPECT_EQ(scene.model.actuators[0].name, "drive");
  EXPECT_TRUE(any_warning_contains(scene, (folder / "parts/robot.xml").string() + ":4: <site> ignored"));

  // Errors inside an included file name that file and line.
  write_file(folder / "parts/motors.xml",
             "<mujoco>\n<actuator>\n<motor name=\"drive\" joint=\"elbow\"/>\n</actuator>\n</mujoco>\n");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); })
                .find((folder / "parts/motors.xml").string() + ":3: <motor 'drive'>: unknown joint 'elbow'"),
            std::string::npos);
  write_file(folder / "parts/motors.xml", "<mujoco>\n<actuator>\n<motor</actuator>\n</mujoco>\n");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); }).find((folder / "parts/motors.xml").string() + ":3: XML error"),
            std::string::npos);
  write_file(folder / "parts/motors.xml", "<robot/>\n");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); })
                .find("motors.xml:1: <robot>: an included file's root element must be <mujoco> (included from " +
                      (folder / "parts/robot.xml").string() + ":6: <include>)"),
            std::string::npos);
  // A cycle, and a missing file, are named at the <include>.
  write_file(folder / "parts/motors.xml", "<mujoco>\n<include file=\"robot.xml\"/>\n</mujoco>\n");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); })
                .find("motors.xml:2: <include>: include cycle: main.xml -> robot.xml -> motors.xml -> robot.xml"),
            std::string::npos);
  std::filesystem::remove(folder / "parts/motors.xml");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); })
                .find((folder / "parts/robot.xml").string() + ":6: <include>: included file '" +
                      (folder / "parts/motors.xml").string() + "': no such file"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_mjcf("<mujoco>\n<include/></mujoco>", "bare.xml"); })
                .find("bare.xml:2: <include>: missing required attribute 'file'"),
            std::string::npos);
}

TEST(MjcfLoader, MalformedFilesGiveFileLineAndElement) {
  EXPECT_EQ(error_of([] {
              parse_mjcf("<mujoco>\n<worldbody>\n<body>\n</worldbody>", "bad.xml");
            }).find("bad.xml:3: XML error"),
            0u);  // tinyxml2 reports the element left open
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco>\n<worldbody>\n<body>\n<joint type=\"screw\"/>\n<geom size=\"1\"/></body>"
                  "</worldbody></mujoco>",
                  "joint.xml");
            }).find("joint.xml:4: <joint>: unknown joint type 'screw'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody>\n<body name=\"b\"><joint/>\n<inertial mass=\"-2\" diaginertia=\"1 1 1\"/>"
                  "</body></worldbody></mujoco>",
                  "mass.xml");
            }).find("mass.xml:3: <inertial>: mass must be non-negative, got -2"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody>\n<body name=\"b\"><joint/>\n<geom size=\"1\" mass=\"0\"/>"
                  "</body></worldbody></mujoco>",
                  "massless.xml");
            }).find("massless.xml:2: <body 'b'>: a moving body needs a positive mass, got 0"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody>\n<body><joint range=\"0 1\"/><geom size=\"1\"/></body></worldbody></mujoco>",
                  "limits.xml");
            }).find("limits.xml:2: <joint>: range given but not limited"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf("<mujoco><worldbody>\n<body><geom class=\"nope\" size=\"1\"/></body></worldbody></mujoco>",
                         "class.xml");
            }).find("class.xml:2: <geom>: unknown default class 'nope'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody>\n<body><joint/><joint type=\"slide\"/><geom size=\"1\"/></body>"
                  "</worldbody></mujoco>",
                  "combo.xml");
            }).find("combo.xml:2: <body>: this combination of joints cannot be represented"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_mjcf("<robot/>", "root.xml"); }).find("root.xml:1: <robot>: not an MJCF file"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody>\n<body><joint/><geom type=\"ellipsoid\" size=\"1 1 1\"/></body>"
                  "</worldbody></mujoco>",
                  "shape.xml");
            }).find("shape.xml:2: <geom>: geom type 'ellipsoid' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody><body><joint/><geom size=\"0.1\"/></body></worldbody>\n"
                  "<actuator><motor joint=\"missing\"/></actuator></mujoco>",
                  "motor.xml");
            }).find("motor.xml:2: <motor>: unknown joint 'missing'"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_mjcf(kRobotData / "no_such_file.xml"); }).find("no_such_file.xml: no such file"),
            std::string::npos);
}

}  // namespace
}  // namespace diffphys
