// tests/planar_loaders_test.cpp — planar joints from files: the MJCF merge of two
// perpendicular slides and a hinge normal to both (io/mjcf_bodies.cpp; in any order, with
// actuators on each, refusals of inconsistent sets), the hopper of tests/data/robots (its
// root one planar joint, in its plane over 1,000 steps, its accelerations equal to MuJoCo's),
// URDF `planar` (io/urdf_loader.cpp) and the scene format's "planar" (model/scene_json.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "robot_test_helpers.hpp"

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace diffphys::planar_loaders_test {
namespace {

using testing::any_warning_contains;
using testing::error_of;
using testing::kRobotData;

void expect_vec_near(const Vec3& actual, const Vec3& expected, double tolerance, const std::string& what) {
  EXPECT_LT(norm(actual - expected), tolerance)
      << what << ": (" << actual.x << ", " << actual.y << ", " << actual.z << ") expected (" << expected.x << ", "
      << expected.y << ", " << expected.z << ")";
}

// One body on the world with the given joints (MJCF text, one per line after line 3) and
// actuators; the body is a capsule along x with its centre at (0, 0, 1).
std::string one_body_mjcf(const std::string& joints, const std::string& actuators = "") {
  return "<mujoco>\n<worldbody>\n<body name=\"b\" pos=\"0 0 1\">\n" + joints +
         "<geom type=\"capsule\" fromto=\"-0.2 0 0 0.2 0 0\" size=\"0.05\"/>\n</body>\n</worldbody>\n<actuator>" +
         actuators + "</actuator>\n</mujoco>\n";
}

const char* const kSlideX = "<joint name=\"x\" type=\"slide\" axis=\"1 0 0\"/>\n";
const char* const kSlideZ = "<joint name=\"z\" type=\"slide\" axis=\"0 0 1\"/>\n";
const char* const kHingeY = "<joint name=\"a\" type=\"hinge\" axis=\"0 1 0\" pos=\"0.1 0 0\"/>\n";
const char* const kMotors =
    "<motor name=\"mx\" joint=\"x\"/><motor name=\"mz\" joint=\"z\"/><motor name=\"ma\" joint=\"a\"/>";

// The MJCF joints in each order become one planar joint: its dofs are the slides in file
// order and the hinge, with the MJCF joints' own directions and senses; the anchor is the
// hinge's point; each MJCF actuator drives its own dof. A slide after the hinge is warned
// about (MuJoCo turns it with the hinge).
TEST(PlanarLoaders, MjcfSlidesAndHingeMergeIntoOnePlanarJointInAnyOrder) {
  const std::vector<std::vector<const char*>> orders = {{kSlideX, kSlideZ, kHingeY},
                                                        {kSlideZ, kSlideX, kHingeY},
                                                        {kHingeY, kSlideX, kSlideZ},
                                                        {kSlideX, kHingeY, kSlideZ}};
  for (const auto& order : orders) {
    std::string joints, names;
    for (const char* joint : order) joints += joint;
    const Scene scene = parse_mjcf(one_body_mjcf(joints, kMotors), "planar.xml");
    ASSERT_EQ(scene.model.joint_count(), 1);
    const Joint& joint = scene.model.joints[0];
    SCOPED_TRACE(joint.name);
    EXPECT_EQ(joint.type, JointType::Planar);
    const bool x_first = order[0] == kSlideX || (order[0] == kHingeY && order[1] == kSlideX);
    const Vec3 x{1, 0, 0}, z{0, 0, 1};
    expect_vec_near(joint.axis_parent, {0, 1, 0}, 1e-15, "normal");
    expect_vec_near(joint.axis2_parent, x_first ? x : z, 1e-15, "dof 0 direction");
    expect_vec_near(joint.axis3_parent, x_first ? z : x, 1e-15, "dof 1 direction");
    expect_vec_near(scene.state.position[1] + joint.anchor_child, {0.1, 0, 1}, 1e-15, "anchor (the hinge's point)");
    ASSERT_EQ(scene.model.actuator_count(), 3);
    EXPECT_EQ(scene.model.actuators[0].dof, x_first ? 0 : 1);  // mx
    EXPECT_EQ(scene.model.actuators[1].dof, x_first ? 1 : 0);  // mz
    EXPECT_EQ(scene.model.actuators[2].dof, 2);                // ma
    const bool slide_after_hinge = order[2] != kHingeY;
    EXPECT_EQ(any_warning_contains(scene, "comes after hinge 'a'"), slide_after_hinge);
    // Moving the body along x by 0.3 and turning it by 0.2 about y through the hinge point
    // reads back as those coordinates on the right dofs.
    State moved = scene.state;
    const Quat turn = Quat::from_axis_angle({0, 1, 0}, 0.2);
    const Vec3 hinge{0.4, 0, 1};
    moved.position[1] = hinge + turn.rotate(scene.state.position[1] + Vec3{0.3, 0, 0} - hinge);
    moved.orientation[1] = turn * scene.state.orientation[1];
    EXPECT_NEAR(joint_position(scene.model, moved, 0, x_first ? 0 : 1), 0.3, 1e-14);
    EXPECT_NEAR(joint_position(scene.model, moved, 0, x_first ? 1 : 0), 0.0, 1e-14);
    EXPECT_NEAR(joint_position(scene.model, moved, 0, 2), 0.2, 1e-14);
  }
}

// The sense of each MJCF joint is kept: a slide along −z reads −Δz; ranges and differing
// dampings are reported, not silently dropped.
TEST(PlanarLoaders, MjcfPlanarKeepsSensesAndReportsRangesAndDampings) {
  const Scene scene =
      parse_mjcf(one_body_mjcf("<joint name=\"x\" type=\"slide\" axis=\"1 0 0\" damping=\"2\"/>\n"
                               "<joint name=\"z\" type=\"slide\" axis=\"0 0 -1\" limited=\"true\" range=\"-1 1\"/>\n"
                               "<joint name=\"a\" type=\"hinge\" axis=\"0 -1 0\"/>\n"),
                 "senses.xml");
  ASSERT_EQ(scene.model.joints[0].type, JointType::Planar);
  State moved = scene.state;
  moved.position[1].z += 0.25;
  EXPECT_NEAR(joint_position(scene.model, moved, 0, 1), -0.25, 1e-15);
  EXPECT_TRUE(any_warning_contains(scene, "senses.xml:4: <joint 'x'>: damping 2 differs from hinge 'a' (0)"));
  EXPECT_TRUE(any_warning_contains(scene, "senses.xml:5: <joint 'z'>: range of 'z' is not applied"));
  EXPECT_FALSE(scene.model.joints[0].has_limits);
}

// Slides and a hinge that are not a plane are refused naming the file, line, body, the two
// joints that are not perpendicular and their axes' dot product; other sets stay refused as
// a combination no diffphys joint represents.
TEST(PlanarLoaders, MjcfInconsistentSlidesAndHingesAreRefused) {
  const std::string not_perpendicular = error_of([] {
    parse_mjcf(one_body_mjcf(std::string(kSlideX) + "<joint name=\"z\" type=\"slide\" axis=\"1 0 1\"/>\n" + kHingeY),
               "slanted.xml");
  });
  EXPECT_NE(not_perpendicular.find("slanted.xml:3: <body 'b'>: joints x (slide), z (slide), a (hinge) cannot be one "
                                   "diffphys planar joint: slide 'x' and slide 'z' are not perpendicular, their axes' "
                                   "dot product is 0.7071067811865475"),
            std::string::npos)
      << not_perpendicular;
  const std::string tilted_hinge = error_of([] {
    parse_mjcf(one_body_mjcf(std::string(kSlideX) + kSlideZ + "<joint name=\"a\" type=\"hinge\" axis=\"0 1 0.1\"/>\n"),
               "tilted.xml");
  });
  EXPECT_NE(tilted_hinge.find("tilted.xml:3: <body 'b'>: joints x (slide), z (slide), a (hinge) cannot be one diffphys "
                              "planar joint: hinge 'a' and slide 'z' are not perpendicular, their axes' dot product is "
                              "0.09950371902099893"),
            std::string::npos)
      << tilted_hinge;
  const std::string three_slides = error_of([] {
    parse_mjcf(one_body_mjcf(std::string(kSlideX) + kSlideZ + "<joint name=\"y\" type=\"slide\" axis=\"0 1 0\"/>\n"),
               "slides.xml");
  });
  EXPECT_NE(three_slides.find("slides.xml:3: <body 'b'>: this combination"), std::string::npos) << three_slides;
}

// The hopper (tests/data/robots/hopper.xml, gym's dimensions): the root's three joints are one
// planar joint about the hip point, three hinges below it, three motors.
TEST(PlanarLoaders, HopperLoadsWithItsRootAsOnePlanarJoint) {
  const Scene scene = load_mjcf(kRobotData / "hopper.xml");
  const Model& model = scene.model;
  ASSERT_EQ(model.joint_count(), 4);
  const Joint& root = model.joints[0];
  EXPECT_EQ(root.name, "rootx+rootz+rooty");
  EXPECT_EQ(root.type, JointType::Planar);
  EXPECT_EQ(root.parent, 0);
  EXPECT_TRUE(root.collide_connected);  // MuJoCo lets a body touch its world parent
  expect_vec_near(scene.state.position[1] + scene.state.orientation[1].rotate(root.anchor_child), {0, 0, 1.25}, 1e-12,
                  "root anchor");
  for (int j = 1; j < 4; ++j) EXPECT_EQ(model.joints[static_cast<std::size_t>(j)].type, JointType::Revolute);
  ASSERT_EQ(model.actuator_count(), 3);
  for (const Actuator& actuator : model.actuators) EXPECT_NE(actuator.joint, 0);
  for (const std::string& warning : scene.warnings) EXPECT_EQ(warning.find("root"), std::string::npos) << warning;
}

// Driven by its three motors for 1,000 steps (2 s: it kicks, tips and falls onto the
// floor), the hopper stays in its plane: every body's y and its tilt out of the xz plane at
// rounding level, in both formulations; the torso ends lower than it started.
TEST(PlanarLoaders, HopperDrivenForAThousandStepsStaysInItsPlane) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(formulation == Formulation::Convex ? "convex" : "complementarity");
    Scene scene = load_mjcf(kRobotData / "hopper.xml");
    set_formulation(scene, formulation);
    const std::vector<double> controls{-60.0, 40.0, 20.0};  // N·m on thigh, leg, foot
    double worst_y = 0.0, worst_tilt = 0.0;
    int unconverged = 0;
    State final_state;
    testing::run(
        scene, 1000,
        [&](const State& state, const StepStatus& status) {
          unconverged += !status.converged;
          for (int b = 1; b < scene.model.body_count(); ++b) {
            const auto i = static_cast<std::size_t>(b);
            worst_y = std::max(worst_y, std::abs(state.position[i].y));
            // Turned about y alone since the start: x and z quaternion components 0.
            const Quat turned = state.orientation[i] * scene.state.orientation[i].conjugate();
            worst_tilt = std::max({worst_tilt, std::abs(turned.x), std::abs(turned.z)});
          }
          final_state = state;
        },
        controls);
    EXPECT_EQ(unconverged, 0);
    EXPECT_LT(worst_y, 1e-12);
    EXPECT_LT(worst_tilt, 1e-12);
    EXPECT_LT(final_state.position[1].z, scene.state.position[1].z - 0.3);     // the torso went down
    EXPECT_GT(final_state.position[1].z, 0.0);                                 // and not through the floor
    EXPECT_GT(std::abs(joint_position(scene.model, final_state, 0, 2)), 0.3);  // and tipped
  }
}

// URDF `planar`: the child moves in the plane normal to <axis> (the spec's meaning), here a
// vertical plane turned 0.3 rad about z. Dof 0 runs along the joint frame's x, dof 1 along
// axis × x (here −z), so a free fall reads +½ g t (t + h) on dof 1 and the body stays in
// its plane; a <limit> with bounds is reported as not applied.
TEST(PlanarLoaders, UrdfPlanarJointLoadsAndFallsInItsPlane) {
  const Scene scene = parse_urdf(
      "<robot name=\"r\">\n<link name=\"base\"/>\n<link name=\"slider\"><inertial><mass value=\"2\"/>"
      "<inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.2\" iyz=\"0\" izz=\"0.3\"/></inertial></link>\n"
      "<joint name=\"plane\" type=\"planar\"><parent link=\"base\"/><child link=\"slider\"/>\n"
      "<origin xyz=\"0 0 1\" rpy=\"0 0 0.3\"/><axis xyz=\"0 1 0\"/>\n"
      "<limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"1\"/></joint>\n</robot>",
      "planar.urdf");
  ASSERT_EQ(scene.model.joint_count(), 1);
  const Joint& joint = scene.model.joints[0];
  EXPECT_EQ(joint.type, JointType::Planar);
  const Quat frame = Quat::from_axis_angle({0, 0, 1}, 0.3);
  expect_vec_near(joint.axis_parent, frame.rotate({0, 1, 0}), 1e-15, "normal");
  expect_vec_near(joint.axis2_parent, frame.rotate({1, 0, 0}), 1e-15, "dof 0 direction");
  expect_vec_near(joint.axis3_parent, {0, 0, -1}, 1e-15, "dof 1 direction");
  EXPECT_TRUE(
      any_warning_contains(scene, "planar.urdf:6: <limit>: lower and upper limits of a planar joint are not applied"));
  const int steps = 500;
  const double h = scene.model.dt, t = steps * h;
  State final_state;
  double worst_offset = 0.0;
  testing::run(scene, steps, [&](const State& state, const StepStatus&) {
    worst_offset =
        std::max(worst_offset, std::abs(dot(state.position[1] - scene.state.position[1], joint.axis_parent)));
    final_state = state;
  });
  EXPECT_NEAR(joint_position(scene.model, final_state, 0, 1), 0.5 * 9.81 * t * (t + h), 1e-9);
  EXPECT_NEAR(joint_position(scene.model, final_state, 0, 0), 0.0, 1e-12);
  EXPECT_LT(worst_offset, 1e-12);
  // Without <axis> the normal is URDF's default x, and the plane's directions y and z.
  const Scene by_default = parse_urdf(
      "<robot name=\"r\">\n<link name=\"base\"/>\n<link name=\"slider\"><inertial><mass value=\"2\"/>"
      "<inertia ixx=\"0.1\" ixy=\"0\" ixz=\"0\" iyy=\"0.2\" iyz=\"0\" izz=\"0.3\"/></inertial></link>\n"
      "<joint name=\"plane\" type=\"planar\"><parent link=\"base\"/><child link=\"slider\"/></joint>\n</robot>",
      "default.urdf");
  expect_vec_near(by_default.model.joints[0].axis_parent, {1, 0, 0}, 1e-15, "default normal");
  expect_vec_near(by_default.model.joints[0].axis2_parent, {0, 1, 0}, 1e-15, "default dof 0 direction");
  expect_vec_near(by_default.model.joints[0].axis3_parent, {0, 0, 1}, 1e-15, "default dof 1 direction");
}

// The scene format's "planar": axis (normal), axis2 and axis3 (in-plane directions, axis3
// of either sense); axis2 defaults to x in the plane (y when the normal is near x); limits
// and axis3 elsewhere are refused with the item's path.
TEST(PlanarLoaders, SceneJsonPlanarJoint) {
  const auto scene_with = [](const std::string& joint) {
    return parse_scene(R"({"bodies": [{"name": "box", "position": [0, 0, 1], "mass": 1,
                          "shapes": [{"type": "box", "half_extents": [0.1, 0.1, 0.1]}]}],
                          "joints": [)" +
                           joint + "]}",
                       "planar.json");
  };
  const Scene given = scene_with(R"({"name": "plane", "type": "planar", "child": "box", "anchor": [0, 0, 1],
                                     "axis": [0, 1, 0], "axis2": [0, 0, 1], "axis3": [1, 0, 0]})");
  const Joint& joint = given.model.joints[0];
  EXPECT_EQ(joint.type, JointType::Planar);
  expect_vec_near(joint.axis2_parent, {0, 0, 1}, 1e-15, "axis2");
  expect_vec_near(joint.axis3_parent, {1, 0, 0}, 1e-15, "axis3");
  const Scene defaulted = scene_with(R"({"name": "plane", "type": "planar", "child": "box", "axis": [0, 1, 0]})");
  expect_vec_near(defaulted.model.joints[0].axis2_parent, {1, 0, 0}, 1e-15, "default axis2");
  expect_vec_near(defaulted.model.joints[0].axis3_parent, {0, 0, -1}, 1e-15, "default axis3 (axis × axis2)");
  const Scene near_x = scene_with(R"({"name": "plane", "type": "planar", "child": "box", "axis": [1, 0.1, 0]})");
  EXPECT_NEAR(dot(near_x.model.joints[0].axis2_parent, near_x.model.joints[0].axis_parent), 0.0, 1e-15);
  EXPECT_GT(near_x.model.joints[0].axis2_parent.y, 0.9);
  const std::string limits = error_of([&] {
    scene_with(R"({"name": "plane", "type": "planar", "child": "box", "axis": [0, 1, 0], "limits": [-1, 1]})");
  });
  EXPECT_NE(limits.find("joints[0].limits: not used by a fixed, ball or planar joint"), std::string::npos) << limits;
  const std::string axis3 = error_of([&] {
    scene_with(R"({"name": "hinge", "type": "revolute", "child": "box", "axis": [0, 1, 0], "axis3": [1, 0, 0]})");
  });
  EXPECT_NE(axis3.find("joints[0].axis3: not used except by a planar joint"), std::string::npos) << axis3;
  const std::string tilted = error_of([&] {
    scene_with(R"({"name": "plane", "type": "planar", "child": "box", "axis": [0, 1, 0], "axis2": [1, 1, 0]})");
  });
  EXPECT_NE(tilted.find("joint 'plane': axis2 of a planar joint must lie in its plane"), std::string::npos) << tilted;
}

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
// The hopper in the air (no floor, no limits) with a motor on every MJCF joint, the root's
// slides and hinge included, released at rest: diffphys's first step from rest is the
// constrained acceleration at q0 times h, so the six coordinates' rates after a step of
// h = 1e-7 s over h are MuJoCo's qacc at q0 (mj_forward), up to the O(h) of reading the rates
// at the end of the step: 1e-6 relative to the largest. A wrong dof order, sense, hinge point
// or actuator mapping changes them at O(1).
TEST(PlanarLoaders, HopperAccelerationsFromRestEqualMujocos) {
  std::ifstream in(kRobotData / "hopper.xml");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const auto replace = [&](const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("<geom name=\"floor\" type=\"plane\" size=\"20 20 0.125\"/>", "");
  replace("<joint damping=\"1\" limited=\"true\"/>", "<joint damping=\"1\" limited=\"false\"/>");
  replace("<option timestep=\"0.002\"/>", "<option timestep=\"1e-7\"/>");
  replace("<motor name=\"thigh\" joint=\"thigh_joint\"/>",
          "<motor name=\"x\" joint=\"rootx\"/><motor name=\"z\" joint=\"rootz\"/><motor name=\"y\" joint=\"rooty\"/>"
          "<motor name=\"thigh\" joint=\"thigh_joint\"/>");
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "hopper_in_the_air.xml";
  {
    std::ofstream out(file);
    out << text;
  }
  // Torques (N, N, N·m, then the hinges'), within the motors' ±200.
  const std::vector<double> torques{30.0, 80.0, -4.0, 15.0, -10.0, 6.0};
  const Scene scene = load_mjcf(file);
  ASSERT_EQ(scene.model.actuator_count(), 6);
  std::vector<double> controls(6);
  for (int a = 0; a < 6; ++a) controls[static_cast<std::size_t>(a)] = torques[static_cast<std::size_t>(a)];
  State next = scene.state;
  Workspace workspace;
  ASSERT_TRUE(step(scene.model, scene.params, scene.state, controls, next, workspace).converged);

  char error[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  for (int a = 0; a < 6; ++a) d->ctrl[a] = torques[static_cast<std::size_t>(a)] / m->actuator_gear[6 * a];
  mj_forward(m, d);
  // MuJoCo's qpos order: rootx, rootz, rooty, thigh, leg, foot.
  const int joints[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {2, 0}, {3, 0}};
  double largest = 0.0;
  for (int k = 0; k < 6; ++k) largest = std::max(largest, std::abs(d->qacc[k]));
  ASSERT_GT(largest, 1.0);
  for (int k = 0; k < 6; ++k) {
    const double acceleration = joint_velocity(scene.model, next, joints[k][0], joints[k][1]) / scene.model.dt;
    EXPECT_NEAR(acceleration, d->qacc[k], 1e-6 * largest) << "MuJoCo dof " << k;
  }
  mj_deleteData(d);
  mj_deleteModel(m);
}
#endif

}  // namespace
}  // namespace diffphys::planar_loaders_test
