// tests/urdf_loader_test.cpp — the URDF loader (io/urdf_loader.cpp): a double pendulum that
// must step exactly like the same pendulum written as a JSON scene, every supported element
// (inertial frames and full tensors, box/sphere/cylinder/mesh collisions, every joint type),
// the warnings for what is ignored, and clear errors with file and line for malformed files.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "diffphys/error.hpp"
#include "robot_test_helpers.hpp"
#include "gradcheck_test_helpers.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

using testing::any_warning_contains;
using testing::error_of;
using testing::kRobotData;
using testing::world_inertia;

// A link with an inertial on a wedge; `body` replaces the link's inside.
std::string one_link(const std::string& body) {
  return "<robot name=\"r\">\n<link name=\"base\"/>\n<link name=\"arm\">\n" + body +
         "\n</link>\n<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/><child link=\"arm\"/></joint>\n"
         "</robot>";
}

TEST(UrdfLoader, DoublePendulumStepsLikeTheJsonScene) {
  const Scene from_urdf = load_scene(kRobotData / "double_pendulum.urdf");
  const Scene from_json = load_scene(kRobotData / "double_pendulum.json");
  ASSERT_TRUE(from_urdf.warnings.size() == 1 && any_warning_contains(from_urdf, "effort and velocity"))
      << (from_urdf.warnings.empty() ? "" : from_urdf.warnings[0]);
  // The same parameter layout, names included, and the same values.
  ASSERT_EQ(from_urdf.model.layout.slices.size(), from_json.model.layout.slices.size());
  for (std::size_t k = 0; k < from_json.model.layout.slices.size(); ++k)
    EXPECT_EQ(from_urdf.model.layout.slices[k].name, from_json.model.layout.slices[k].name);
  EXPECT_EQ(from_urdf.params.values, from_json.params.values);
  Simulator urdf(from_urdf.model, from_urdf.params, from_urdf.state);
  Simulator json(from_json.model, from_json.params, from_json.state);
  // Bit for bit: the loader hands the builder the same numbers the JSON scene does.
  for (int step = 1; step <= 500; ++step) {
    urdf.step(from_urdf.controls);
    json.step(from_json.controls);
    for (int b = 0; b < from_json.model.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      ASSERT_EQ(urdf.state().position[i], json.state().position[i]) << "step " << step << " body " << b;
      ASSERT_EQ(urdf.state().orientation[i], json.state().orientation[i]) << "step " << step << " body " << b;
      ASSERT_EQ(urdf.state().linear_velocity[i], json.state().linear_velocity[i]) << "step " << step << " body " << b;
      ASSERT_EQ(urdf.state().angular_velocity[i], json.state().angular_velocity[i]) << "step " << step << " body " << b;
    }
  }
  // And the pendulum did swing: the lower bob fell by more than half a metre.
  EXPECT_LT(urdf.state().position[static_cast<std::size_t>(from_urdf.model.body_index("lower"))].z, 1.5);
}

TEST(UrdfLoader, FeatureFileMapsEveryElement) {
  const Scene scene = load_urdf(kRobotData / "features.urdf");
  const Model& model = scene.model;
  EXPECT_EQ(model.name, "features");
  // "world" root → the world body; tool_frame (frame only) → no body.
  EXPECT_EQ(model.body_count(), 1 + 5);
  EXPECT_THROW(model.body_index("tool_frame"), Error);
  // The inertial's origin (xyz, rpy) and full tensor: the body frame is the principal frame,
  // whose world tensor equals R_link R_rpy I R_rpyᵀ R_linkᵀ.
  const int arm = model.body_index("arm");
  {
    const Quat link = Quat::from_axis_angle({0, 0, 1}, M_PI / 2);  // shoulder origin rpy
    const Quat qx = Quat::from_axis_angle({1, 0, 0}, 0.3), qy = Quat::from_axis_angle({0, 1, 0}, -0.2),
               qz = Quat::from_axis_angle({0, 0, 1}, 0.5);
    const Mat3 rotation = (link * qz * qy * qx).to_matrix();
    Mat3 tensor;
    tensor(0, 0) = 0.05, tensor(1, 1) = 0.04, tensor(2, 2) = 0.03;
    tensor(0, 1) = tensor(1, 0) = 0.004;
    tensor(0, 2) = tensor(2, 0) = -0.003;
    tensor(1, 2) = tensor(2, 1) = 0.002;
    const Mat3 expected = rotation * tensor * rotation.transposed();
    const Mat3 ours = world_inertia(scene, arm);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(ours(r, c), expected(r, c), 1e-15);
    const Vec3 link_origin{0, 0, 0.6};  // world → anchor (0.5) → base → shoulder (0.1)
    const Vec3 com = link_origin + link.rotate({0.1, 0.02, 0.3});
    EXPECT_NEAR(norm(scene.state.position[static_cast<std::size_t>(arm)] - com), 0.0, 1e-15);
    EXPECT_DOUBLE_EQ(scene.params.slice(model, "body/arm/mass")[0], 2.0);
  }
  // Collision shapes: box (size is the full size), cylinder, sphere; the mesh is skipped.
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "shape/base/plate/half_extents")[2], 0.05);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "shape/arm/0/radius")[0], 0.05);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "shape/arm/0/half_length")[0], 0.3);
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "shape/arm/1/radius")[0], 0.07);
  EXPECT_TRUE(any_warning_contains(scene, "<cylinder>: cylinder collides as the capsule"));
  EXPECT_TRUE(any_warning_contains(scene, "<mesh>: collision mesh"));
  EXPECT_EQ(model.bodies[static_cast<std::size_t>(model.body_index("slider"))].shape_count, 0);
  // Shapes keep their place in the link frame: the sphere sits 0.6 above the shoulder.
  {
    const Shape& sphere =
        model.shapes[static_cast<std::size_t>(model.bodies[static_cast<std::size_t>(arm)].first_shape + 1)];
    const auto a = static_cast<std::size_t>(arm);
    const Vec3 world = scene.state.position[a] + scene.state.orientation[a].rotate(sphere.local_position);
    EXPECT_NEAR(norm(world - Vec3{0, 0, 1.2}), 0.0, 1e-15);
  }
  // Joints.
  // base is welded to the world by the fixed joint 'anchor': a static body, no joint.
  EXPECT_EQ(model.bodies[static_cast<std::size_t>(model.body_index("base"))].type, BodyType::Static);
  EXPECT_THROW(model.joint_index("anchor"), Error);
  EXPECT_TRUE(any_warning_contains(scene, "features.urdf:7: <inertial>: not used: the link never moves"));
  const Joint& shoulder = model.joints[static_cast<std::size_t>(model.joint_index("shoulder"))];
  EXPECT_EQ(shoulder.type, JointType::Revolute);
  EXPECT_EQ(shoulder.parent, model.body_index("base"));
  EXPECT_TRUE(shoulder.has_limits);
  EXPECT_EQ(shoulder.lower_limit, -1.0);
  EXPECT_EQ(shoulder.upper_limit, 1.5);
  EXPECT_NEAR(norm(shoulder.axis_parent - Vec3{0, 1, 0}), 0.0, 1e-15);  // x turned by the origin's yaw
  EXPECT_DOUBLE_EQ(scene.params.slice(model, "joint/shoulder/damping")[0], 0.7);
  const Joint& slide = model.joints[static_cast<std::size_t>(model.joint_index("slide"))];
  EXPECT_EQ(slide.type, JointType::Prismatic);
  EXPECT_EQ(slide.lower_limit, -0.1);
  const Joint& wrist = model.joints[static_cast<std::size_t>(model.joint_index("wrist"))];
  EXPECT_EQ(wrist.type, JointType::Revolute);
  EXPECT_FALSE(wrist.has_limits);
  EXPECT_THROW(model.joint_index("loose"), Error);  // floating: the ball is free
  // What is ignored is named with its line.
  EXPECT_TRUE(any_warning_contains(scene, "features.urdf:67: <dynamics> joint friction 0.1 ignored (diffphys joints have viscous damping only); line 67"));
  EXPECT_TRUE(any_warning_contains(scene, "<mimic>: <mimic> not supported"));
  EXPECT_TRUE(any_warning_contains(scene, "<gazebo>: unsupported element: ignored"));
  EXPECT_TRUE(any_warning_contains(scene, "<visual> ignored (drawing only"));
  EXPECT_TRUE(any_warning_contains(scene, "<link 'tool_frame'>: frame-only link"));
}

TEST(UrdfLoader, MalformedFilesGiveFileLineAndElement) {
  EXPECT_EQ(error_of([] {
              parse_urdf("<robot>\n<link name=\"a\">\n</robot>", "broken.urdf");
            }).find("broken.urdf:2: XML error"),
            0u);
  EXPECT_NE(error_of([] {
              parse_urdf(one_link("<collision><geometry><sphere radius=\"1\"/></geometry></collision>"),
                         "missing.urdf");
            }).find("missing.urdf:3: <link 'arm'>: missing <inertial>"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_urdf(one_link("<inertial>\n<mass value=\"-1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" "
                                  "iyz=\"0\" izz=\"1\"/></inertial>"),
                         "negative.urdf");
            }).find("negative.urdf:5: <mass>: mass must be positive, got -1"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_urdf(
                  "<robot name=\"r\"><link name=\"a\"/><link name=\"b\"><inertial><mass value=\"1\"/>"
                  "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n"
                  "<joint name=\"j\" type=\"helical\"><parent link=\"a\"/><child link=\"b\"/></joint></robot>",
                  "type.urdf");
            }).find("type.urdf:2: <joint 'j'>: unknown joint type 'helical'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_urdf(one_link("<inertial><mass value=\"1\"/>\n<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" "
                                  "iyz=\"0\" izz=\"-1\"/></inertial>"),
                         "inertia.urdf");
            }).find("inertia.urdf:5: <inertia>: inertia must be positive definite"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_urdf(one_link("<inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" "
                                  "iyz=\"0\" izz=\"3\"/></inertial>"),
                         "triangle.urdf");
            }).find("triangle.urdf:3: body 'arm': inertia is not physical"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_urdf(one_link("<inertial><mass value=\"heavy\"/></inertial>"), "number.urdf");
            }).find("number.urdf:4: <mass>: attribute value=\"heavy\": expected numbers"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_urdf("<mujoco/>", "root.urdf"); }).find("root.urdf:1: <mujoco>: not a URDF file"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_urdf("<robot><link name=\"a\"/><link name=\"b\"/></robot>", "roots.urdf");
            }).find("expected exactly one root link"),
            std::string::npos);
}

TEST(UrdfLoader, GradientsReadTheFileNamesAndMatchFiniteDifferences) {
  const Scene scene = load_urdf(kRobotData / "double_pendulum.urdf");
  GradientCheckOptions options;
  options.steps = 50;
  // Small parameters (damping 0.05) need a relative step above the joint projection's
  // residual noise (~1e-10), as in gradient_test.cpp's chain.
  options.param_epsilon = 1e-4;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  bool mass_checked = false, damping_checked = false;
  for (const GradientCheckEntry& entry : report.entries) {
    mass_checked = mass_checked || entry.name == "body/lower/mass[0]";
    damping_checked = damping_checked || entry.name == "joint/shoulder/damping[0]";
  }
  EXPECT_TRUE(mass_checked);
  EXPECT_TRUE(damping_checked);
}

TEST(UrdfLoader, CommandLineSimulatesRobotFiles) {
  for (const char* file : {"double_pendulum.urdf", "features.xml"}) {
    const std::string command =
        std::string(test_paths::cli_program()) + " simulate " + (kRobotData / file).string() + " --steps 20 --quiet 2>/dev/null";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
  }
}

}  // namespace
}  // namespace diffphys

namespace diffphys {
namespace {

// URDF and MJCF mesh collisions become convex mesh shapes (the hull of the file, scaled);
// the cube falls and comes to rest on its face at half its 0.2 m side.
TEST(RobotMeshes, MeshCollisionsBecomeConvexMeshShapesThatRestOnTheirFaces) {
  for (const char* file : {"mesh_box.urdf", "mesh_box.xml"}) {
    SCOPED_TRACE(file);
    Scene scene = load_scene(kRobotData / file);
    int mesh_shapes = 0;
    for (const Shape& shape : scene.model.shapes) mesh_shapes += shape.type == ShapeType::ConvexMesh;
    ASSERT_EQ(mesh_shapes, 1);
    ASSERT_EQ(scene.model.meshes.size(), 1u);
    EXPECT_EQ(scene.model.meshes[0].vertex_count(), 8);
    const int cube = scene.model.body_index("cube");
    ASSERT_GE(cube, 0);
    State current = scene.state, next = scene.state;
    Workspace workspace;
    for (int t = 0; t < 1500; ++t) {
      step(scene.model, scene.params, current, scene.controls, next, workspace);
      std::swap(current, next);
    }
    EXPECT_NEAR(current.position[static_cast<std::size_t>(cube)].z, 0.1, 2e-3);
    EXPECT_LT(norm(current.linear_velocity[static_cast<std::size_t>(cube)]), 1e-3);
  }
}

}  // namespace
}  // namespace diffphys
