// tests/urdf_packages_test.cpp — what a ROS description needs from the URDF loader beyond the
// format itself: package:// mesh paths resolved through the package search path (the
// UrdfOptions option, ROS_PACKAGE_PATH, the file's ancestors; io/package_path.hpp), file://
// URIs, the warning for a package that is nowhere, the command line's --package-path, and
// self-collision between a robot's links off by default (Gazebo's <self_collide>).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collision/detect_contacts.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/simulator.hpp"
#include "robot_test_helpers.hpp"
#include "test_paths.hpp"

namespace diffphys {
namespace {

namespace fs = std::filesystem;
using testing::any_warning_contains;

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A box of half extents (x, y, z) as an OBJ file: its hull has 8 vertices.
std::string box_obj(double x, double y, double z) {
  std::string text;
  for (int i = 0; i < 8; ++i)
    text += "v " + std::to_string(i & 1 ? x : -x) + " " + std::to_string(i & 2 ? y : -y) + " " +
            std::to_string(i & 4 ? z : -z) + "\n";
  return text;
}
// A tetrahedron: 4 vertices, so a test can tell which of two packages a mesh came from.
const char* const kTetrahedronObj = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\n";

// One floating link whose collision is the mesh `filename`.
std::string mesh_robot(const std::string& filename) {
  return "<robot name=\"r\">\n<link name=\"body\">\n"
         "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>"
         "</inertial>\n<collision><geometry><mesh filename=\"" +
         filename + "\"/></geometry></collision>\n</link>\n</robot>\n";
}

// The vertex count of the scene's one mesh, or -1 when it has none.
int mesh_vertices(const Scene& scene) {
  return scene.model.meshes.size() == 1 ? scene.model.meshes[0].vertex_count() : -1;
}

// A fresh directory tree per test, and ROS_PACKAGE_PATH unset (restored afterwards).
class UrdfPackages : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* saved = std::getenv("ROS_PACKAGE_PATH");
    if (saved != nullptr) saved_ = saved;
    unsetenv("ROS_PACKAGE_PATH");
    root_ = fs::temp_directory_path() / ("diffphys_urdf_packages_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    if (saved_) {
      setenv("ROS_PACKAGE_PATH", saved_->c_str(), 1);
    } else {
      unsetenv("ROS_PACKAGE_PATH");
    }
    fs::remove_all(root_);
  }
  fs::path root_;
  std::optional<std::string> saved_;
};

TEST_F(UrdfPackages, TheOptionFindsAPackageNestedInAWorkspaceInSortedOrder) {
  // ws/src/group_b/arm_meshes and ws/src/group_a/arm_meshes both hold package.xml: the
  // sorted search takes group_a's (the tetrahedron). A deeper copy and one without
  // package.xml are not packages or come later.
  write_file(root_ / "ws/src/group_b/arm_meshes/package.xml", "<package/>");
  write_file(root_ / "ws/src/group_b/arm_meshes/meshes/link.obj", box_obj(0.1, 0.1, 0.1));
  write_file(root_ / "ws/src/group_a/arm_meshes/package.xml", "<package/>");
  write_file(root_ / "ws/src/group_a/arm_meshes/meshes/link.obj", kTetrahedronObj);
  write_file(root_ / "ws/src/aaa/not_a_package/arm_meshes/meshes/link.obj", box_obj(0.1, 0.1, 0.1));
  write_file(root_ / "robot/robot.urdf", mesh_robot("package://arm_meshes/meshes/link.obj"));

  const Scene without = load_urdf(root_ / "robot/robot.urdf");
  EXPECT_EQ(mesh_vertices(without), -1);
  EXPECT_TRUE(any_warning_contains(without, "package 'arm_meshes' not found"));

  UrdfOptions options;
  options.package_path = {root_ / "elsewhere", root_ / "ws"};  // a missing directory is passed over
  const Scene with = load_urdf(root_ / "robot/robot.urdf", options);
  EXPECT_EQ(mesh_vertices(with), 4) << (with.warnings.empty() ? "" : with.warnings[0]);
  EXPECT_TRUE(with.warnings.empty());

  // A search directory that is the package, or that holds it directly, needs no package.xml.
  options.package_path = {root_ / "ws/src/aaa/not_a_package/arm_meshes"};
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "robot/robot.urdf", options)), 8);
  options.package_path = {root_ / "ws/src/aaa/not_a_package"};
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "robot/robot.urdf", options)), 8);
}

TEST_F(UrdfPackages, RosPackagePathIsSearchedAfterTheOption) {
  write_file(root_ / "env/tools_pkg/meshes/part.obj", box_obj(0.1, 0.2, 0.3));
  write_file(root_ / "option/tools_pkg/meshes/part.obj", kTetrahedronObj);
  write_file(root_ / "robot/robot.urdf", mesh_robot("package://tools_pkg/meshes/part.obj"));
  setenv("ROS_PACKAGE_PATH", (root_ / "missing").string().append(":").append((root_ / "env").string()).c_str(), 1);
  const Scene from_environment = load_urdf(root_ / "robot/robot.urdf");
  EXPECT_EQ(mesh_vertices(from_environment), 8);
  EXPECT_TRUE(from_environment.warnings.empty());
  UrdfOptions options;
  options.package_path = {root_ / "option"};
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "robot/robot.urdf", options)), 4);
}

TEST_F(UrdfPackages, TheFilesAncestorsAreTheLastResort) {
  // The URDF inside its own package (my_robot/urdf/robot.urdf), and a package beside it.
  write_file(root_ / "src/my_robot/meshes/base.obj", box_obj(0.1, 0.1, 0.1));
  write_file(root_ / "src/my_robot_meshes/arm.obj", kTetrahedronObj);
  write_file(root_ / "src/my_robot/urdf/robot.urdf", mesh_robot("package://my_robot/meshes/base.obj"));
  write_file(root_ / "src/my_robot/urdf/beside.urdf", mesh_robot("package://my_robot_meshes/arm.obj"));
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "src/my_robot/urdf/robot.urdf")), 8);
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "src/my_robot/urdf/beside.urdf")), 4);
  // The option still comes first.
  write_file(root_ / "first/my_robot/meshes/base.obj", kTetrahedronObj);
  UrdfOptions options;
  options.package_path = {root_ / "first"};
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "src/my_robot/urdf/robot.urdf", options)), 4);
}

TEST_F(UrdfPackages, AMissingPackageIsNamedWithEveryPlaceSearchedAndHowToAddOne) {
  const std::string robot =
      "<robot name=\"r\">\n<link name=\"body\">\n"
      "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>"
      "</inertial>\n"
      "<collision><geometry><mesh filename=\"package://ghost_description/meshes/a.stl\"/></geometry></collision>\n"
      "<collision><geometry><mesh filename=\"package://ghost_description/meshes/b.stl\"/></geometry></collision>\n"
      "</link>\n</robot>\n";
  write_file(root_ / "robots/r.urdf", robot);
  setenv("ROS_PACKAGE_PATH", (root_ / "ros").string().c_str(), 1);
  UrdfOptions options;
  options.package_path = {root_ / "mine"};
  const Scene scene = load_urdf(root_ / "robots/r.urdf", options);
  ASSERT_EQ(scene.warnings.size(), 1u);  // one message for the package, listing both lines
  const std::string& warning = scene.warnings[0];
  EXPECT_NE(warning.find("r.urdf:4: collision meshes of package 'ghost_description' ignored (package "
                         "'ghost_description' not found; searched: "),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find((root_ / "mine").string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("ROS_PACKAGE_PATH: " + (root_ / "ros").string()), std::string::npos) << warning;
  EXPECT_NE(warning.find((root_ / "robots").string() + ", " + root_.string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("Add the directory that holds 'ghost_description' with --package-path DIR"), std::string::npos)
      << warning;
  EXPECT_NE(warning.find("lines 4, 5"), std::string::npos) << warning;
  unsetenv("ROS_PACKAGE_PATH");
  EXPECT_TRUE(any_warning_contains(load_urdf(root_ / "robots/r.urdf"), "ROS_PACKAGE_PATH: unset"));
}

TEST_F(UrdfPackages, FileUrisAndOtherSchemes) {
  write_file(root_ / "my meshes/box.obj", box_obj(0.1, 0.1, 0.1));
  write_file(root_ / "robot/local/tet.obj", kTetrahedronObj);
  const std::string absolute = "file://" + (root_ / "my%20meshes/box.obj").string();
  write_file(root_ / "robot/absolute.urdf", mesh_robot(absolute));
  write_file(root_ / "robot/relative.urdf", mesh_robot("file://local/tet.obj"));
  write_file(root_ / "robot/model.urdf", mesh_robot("model://cup/meshes/cup.stl"));
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "robot/absolute.urdf")), 8);
  EXPECT_EQ(mesh_vertices(load_urdf(root_ / "robot/relative.urdf")), 4);
  const Scene model = load_urdf(root_ / "robot/model.urdf");
  EXPECT_EQ(mesh_vertices(model), -1);
  EXPECT_TRUE(any_warning_contains(model, "the URI scheme 'model' is not supported"));
}

TEST_F(UrdfPackages, TheCommandLineTakesPackagePaths) {
  write_file(root_ / "a/pkg_one/one.obj", box_obj(0.1, 0.1, 0.1));
  write_file(root_ / "b/pkg_two/two.obj", kTetrahedronObj);
  const std::string robot =
      "<robot name=\"r\">\n<link name=\"body\">\n"
      "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>"
      "</inertial>\n"
      "<collision><geometry><mesh filename=\"package://pkg_one/one.obj\"/></geometry></collision>\n"
      "<collision><geometry><mesh filename=\"package://pkg_two/two.obj\"/></geometry></collision>\n"
      "</link>\n</robot>\n";
  write_file(root_ / "robot/r.urdf", robot);
  const std::string program = test_paths::cli_program();
  const fs::path out = root_ / "out.txt";
  const auto run = [&](const std::string& arguments) {
    const std::string command = program + " " + arguments + " > " + out.string() + " 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream file(out);
    std::ostringstream text;
    text << file.rdbuf();
    return std::pair{status, text.str()};
  };
  const std::string urdf = (root_ / "robot/r.urdf").string();
  const auto [info_status, info] =
      run("info " + urdf + " --package-path " + (root_ / "a").string() + " --package-path " + (root_ / "b").string());
  EXPECT_EQ(info_status, 0) << info;
  EXPECT_EQ(info.find("warning"), std::string::npos) << info;
  EXPECT_NE(info.find("one.obj"), std::string::npos) << info;
  EXPECT_NE(info.find("two.obj"), std::string::npos) << info;
  const auto [bare_status, bare] = run("info " + urdf + " --package-path " + (root_ / "a").string());
  EXPECT_EQ(bare_status, 0) << bare;
  EXPECT_NE(bare.find("package 'pkg_two' not found"), std::string::npos) << bare;
  const auto [simulate_status, simulate] = run("simulate " + urdf + " --steps 5 --package-path " +
                                               (root_ / "a").string() + " --package-path " + (root_ / "b").string());
  EXPECT_EQ(simulate_status, 0) << simulate;
  EXPECT_EQ(simulate.find("warning"), std::string::npos) << simulate;
}

// ---------------------------------------------------------------------------------------
// A real robot description: Unitree Go1 from its published dimensions (the file says which),
// meshes by package://, a floating trunk above a floor.

TEST_F(UrdfPackages, Go1LoadsEveryMeshAndFallsOntoTheFloorToASensibleRest) {
  const fs::path urdf = testing::kRobotData / "ros_ws/src/go1_description/urdf/go1.urdf";
  // ROS_PACKAGE_PATH is unset: the package is the URDF's ancestor go1_description.
  const Scene scene = load_urdf(urdf);
  const Model& model = scene.model;
  int meshes = 0, big_faces = 0;
  for (const Shape& shape : model.shapes) meshes += shape.type == ShapeType::ConvexMesh ? 1 : 0;
  for (const ConvexMesh& mesh : model.meshes)
    for (const ConvexMesh::Face& face : mesh.faces) big_faces += face.count > ConvexMesh::kMaxFaceVertices ? 1 : 0;
  EXPECT_EQ(meshes, 1 + 4 * 3);  // trunk; hip, thigh, calf of each leg
  EXPECT_EQ(big_faces, 4 * 2);   // the hips' 48-vertex caps
  for (const std::string& warning : scene.warnings) {
    EXPECT_EQ(warning.find("mesh"), std::string::npos) << warning;
    EXPECT_EQ(warning.find("package"), std::string::npos) << warning;
  }
  // 17 bodies and the published masses: trunk 4.8 kg, per leg 0.510299 + 0.898919 +
  // 0.158015 + 0.06 kg.
  EXPECT_EQ(model.body_count(), 1 + 1 + 1 + 4 * 4);
  double mass = 0.0;
  for (int b = 0; b < model.body_count(); ++b)
    if (model.layout.body_mass[static_cast<std::size_t>(b)] >= 0)
      mass += scene.params.at(model.layout.body_mass[static_cast<std::size_t>(b)]);
  EXPECT_NEAR(mass, 4.8 + 4 * (0.510299 + 0.898919 + 0.158015 + 0.06), 1e-9);
  // Its feet 2 cm above the floor; unactuated (URDF declares no motors), it lands, its legs
  // fold and it comes to rest on its belly. After 1.5 s: finite, at rest, upright, nothing
  // through the floor.
  Simulator simulator(model, scene.params, scene.state);
  for (int step = 0; step < 1500; ++step) simulator.step(scene.controls);
  const State& state = simulator.state();
  const auto trunk = static_cast<std::size_t>(model.body_index("trunk"));
  for (int b = 1; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    if (model.bodies[i].type == BodyType::Static) continue;  // the floor
    ASSERT_TRUE(is_finite(state.position[i]) && is_finite(state.linear_velocity[i]) &&
                is_finite(state.angular_velocity[i]))
        << model.bodies[i].name;
    EXPECT_GT(state.position[i].z, 0.0) << model.bodies[i].name << " below the floor";
    EXPECT_LT(norm(state.linear_velocity[i]), 0.05) << model.bodies[i].name;
  }
  EXPECT_NEAR(state.position[trunk].z, 0.057, 0.003);  // on its belly: the trunk's half height
  EXPECT_LT(std::hypot(state.position[trunk].x, state.position[trunk].y), 0.1);
  EXPECT_GT(state.orientation[trunk].rotate({0, 0, 1}).z, 0.9);  // upright
  const auto foot = static_cast<std::size_t>(model.body_index("FL_foot"));
  EXPECT_NEAR(state.position[foot].z, 0.02, 0.005);  // a foot on the floor
}

// ---------------------------------------------------------------------------------------
// Self-collision.

// A folding arm on a free base that stands on a floor: the lower link hangs back into the
// base (its box overlaps the base's), a free ball touches the lower link, and the base rests
// on the floor. The floor is welded to `world` and the ball floats from it: both are other
// robots than the arm. `extra` goes inside <robot>.
std::string folding_arm(const std::string& extra = "") {
  const std::string inertial =
      "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>"
      "</inertial>";
  return "<robot name=\"folding\">\n<link name=\"world\"/>\n"
         "<link name=\"floor\"><collision><origin xyz=\"0 0 -0.05\"/><geometry><box size=\"4 4 0.1\"/></geometry>"
         "</collision></link>\n"
         "<joint name=\"floor_weld\" type=\"fixed\"><parent link=\"world\"/><child link=\"floor\"/></joint>\n"
         "<link name=\"base\">" +
         inertial +
         "<collision><geometry><box size=\"0.2 0.2 0.2\"/></geometry></collision></link>\n"
         "<joint name=\"free\" type=\"floating\"><parent link=\"world\"/><child link=\"base\"/>"
         "<origin xyz=\"0 0 0.1\"/></joint>\n"
         "<link name=\"upper\">" +
         inertial +
         "<collision><origin xyz=\"0 0 0.15\"/><geometry><box size=\"0.05 0.05 0.3\"/></geometry></collision>"
         "</link>\n"
         "<joint name=\"shoulder\" type=\"continuous\"><parent link=\"base\"/><child link=\"upper\"/>"
         "<origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/></joint>\n"
         "<link name=\"lower\">" +
         inertial +
         "<collision><origin xyz=\"0.1 0 -0.15\"/><geometry><box size=\"0.05 0.05 0.3\"/></geometry></collision>"
         "</link>\n"
         "<joint name=\"elbow\" type=\"continuous\"><parent link=\"upper\"/><child link=\"lower\"/>"
         "<origin xyz=\"0 0 0.3\"/><axis xyz=\"0 1 0\"/></joint>\n"
         "<link name=\"ball\">" +
         inertial +
         "<collision><geometry><sphere radius=\"0.05\"/></geometry></collision></link>\n"
         "<joint name=\"loose\" type=\"floating\"><parent link=\"world\"/><child link=\"ball\"/>"
         "<origin xyz=\"0.17 0 0.3\"/></joint>\n" +
         extra + "</robot>\n";
}

// The body-name pairs in contact in the initial state, sorted.
std::vector<std::pair<std::string, std::string>> touching(const Scene& scene) {
  collision::CollisionWorkspace workspace;
  std::vector<Contact> contacts;
  collision::detect_contacts(scene.model, scene.params, scene.state, workspace, contacts);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Contact& contact : contacts) {
    std::string a = scene.model.bodies[static_cast<std::size_t>(contact.body_a)].name;
    std::string b = scene.model.bodies[static_cast<std::size_t>(contact.body_b)].name;
    if (b < a) std::swap(a, b);
    pairs.emplace_back(a, b);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(UrdfSelfCollision, OffByDefaultTheGroundAndOtherRobotsStillCollide) {
  const Scene scene = parse_urdf(folding_arm(), "folding.urdf");
  EXPECT_EQ(touching(scene), (Pairs{{"ball", "lower"}, {"base", "floor"}}));
  // lower–base is the one exclusion the loader adds (upper is joined to both by a joint).
  EXPECT_EQ(scene.model.collision_exclusions.size(), 1u);
}

TEST(UrdfSelfCollision, TheFileOrTheOptionTurnsItOn) {
  const Pairs all{{"ball", "lower"}, {"base", "floor"}, {"base", "lower"}};
  // Gazebo's robot-wide switch, a link's own (either link of a pair suffices), the option.
  EXPECT_EQ(touching(parse_urdf(folding_arm("<gazebo><self_collide>true</self_collide></gazebo>\n"), "a.urdf")), all);
  EXPECT_EQ(touching(parse_urdf(
                folding_arm("<gazebo reference=\"lower\"><self_collide>1</self_collide><mu1>0.5</mu1></gazebo>\n"),
                "b.urdf")),
            all);
  UrdfOptions options;
  options.self_collision = true;
  EXPECT_EQ(touching(parse_urdf(folding_arm(), "c.urdf", {}, options)), all);
  // Another link's switch does not cover this pair; a link's false overrides the robot's true.
  EXPECT_EQ(touching(parse_urdf(folding_arm("<gazebo reference=\"upper\"><self_collide>true</self_collide></gazebo>\n"),
                                "d.urdf")),
            (Pairs{{"ball", "lower"}, {"base", "floor"}}));
  const Scene overridden = parse_urdf(folding_arm("<gazebo><self_collide>true</self_collide></gazebo>\n"
                                                  "<gazebo reference=\"lower\"><self_collide>false</self_collide>"
                                                  "</gazebo>\n<gazebo reference=\"base\"><self_collide>false"
                                                  "</self_collide></gazebo>\n"),
                                      "e.urdf");
  EXPECT_EQ(touching(overridden), (Pairs{{"ball", "lower"}, {"base", "floor"}}));
  // The other Gazebo settings are reported, not read.
  EXPECT_TRUE(any_warning_contains(
      parse_urdf(folding_arm("<gazebo reference=\"lower\"><self_collide>1</self_collide><mu1>0.5</mu1></gazebo>\n"),
                 "b.urdf"),
      "<gazebo> <mu1> ignored"));
}

TEST(UrdfSelfCollision, MalformedSwitchesAreRefusedWithTheLine) {
  EXPECT_NE(testing::error_of([] {
              parse_urdf(folding_arm("<gazebo>\n<self_collide>yes</self_collide></gazebo>\n"), "bad.urdf");
            }).find("bad.urdf:14: <self_collide>: expected true or false, got 'yes'"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              parse_urdf(folding_arm("<gazebo reference=\"elbow\">\n<self_collide>true</self_collide></gazebo>\n"),
                         "joint.urdf");
            }).find("joint.urdf:14: <self_collide>: <gazebo reference=\"elbow\">: <self_collide> applies to links"),
            std::string::npos);
}

}  // namespace
}  // namespace diffphys
