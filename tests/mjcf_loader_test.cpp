// tests/mjcf_loader_test.cpp — the MJCF loader (io/mjcf_loader.cpp): MuJoCo 2.2's own compiled
// models as the reference for masses, centres of mass and inertias (the samples Debian's
// libmujoco-samples ships and this folder's feature files), every supported element, the
// warnings for what is not supported, and clear errors for malformed files.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "robot_test_helpers.hpp"

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
// How many of libmujoco-samples' 18 models load today (docs/robot-formats.md lists them).
constexpr int kSamplesExpectedToLoad = 15;

// Writes `text` to `path` (creating its folder) for tests that need files on disk.
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  out << text;
}

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
                                         double axes_tolerance = 1e-9, double mass_tolerance = 1e-9) {
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
    EXPECT_NEAR(scene.params.at(scene.model.layout.body_mass[bi]), m->body_mass[i], mass_tolerance);
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

// A copy of a sample's folder whose model says <compiler exactmeshinertia="true">: MuJoCo 2.2's
// default mesh formula is exact for convex meshes only, diffphys's always (io/mesh_mass.hpp),
// so a non-convex mesh (the mug) is compared with MuJoCo's exact computation.
std::filesystem::path with_exact_mesh_inertia(const std::filesystem::path& file) {
  const std::filesystem::path folder =
      std::filesystem::path(::testing::TempDir()) / ("mjcf_exact_" + file.parent_path().filename().string());
  std::filesystem::remove_all(folder);
  std::filesystem::copy(file.parent_path(), folder, std::filesystem::copy_options::recursive);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  const std::size_t root = xml.find("<mujoco");
  const std::size_t end = xml.find('>', root);
  xml.insert(end + 1, "<compiler exactmeshinertia=\"true\"/>");
  std::ofstream(folder / file.filename()) << xml;
  return folder / file.filename();
}

// Every model Debian's libmujoco-samples ships, found at run time: each either loads, with
// the same bodies, degrees of freedom, actuators (loaded or named in a warning) and moving
// mass as MuJoCo 2.2's own compiled model, and simulates 100 steps to a finite state; or is
// refused with a message naming the file, the line and the element. The table it prints is
// the one in docs/robot-formats.md.
TEST(MjcfLoader, EverySampleLoadsLikeMujocoOrIsRefusedByElement) {
  if (!std::filesystem::is_directory(kSamples)) GTEST_SKIP() << kSamples << " is absent (libmujoco-samples)";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kSamples))
    if (entry.is_regular_file() && entry.path().extension() == ".xml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  const std::regex names_element(R"(\.xml:[0-9]+: <[a-z]+)");
  const std::regex actuator_skipped(
      R"(: <(motor|position|velocity|intvelocity|damper|cylinder|muscle|adhesion|general)[ >].*skipped)");
  int loaded = 0;
  std::ostringstream table;
  table << "| model | diffphys | bodies | dof | actuators (skipped) | moving mass, kg |\n";
  for (const std::filesystem::path& file : files) {
    const std::string name = std::filesystem::relative(file, kSamples).string();
    SCOPED_TRACE(name);
    std::optional<Scene> scene;
    std::string refusal;
    try {
      scene = load_mjcf(file);
    } catch (const Error& e) {
      refusal = e.what();
    }
    // A non-convex mesh's mass is compared with MuJoCo's exact mesh inertia (see above).
    const bool exact_mesh = scene && any_warning_contains(*scene, "is not convex");
    const std::filesystem::path reference = exact_mesh ? with_exact_mesh_inertia(file) : file;
    char error[1000] = "";
    mjModel* m = mj_loadXML(reference.c_str(), nullptr, error, sizeof error);
    ASSERT_NE(m, nullptr) << error;  // MuJoCo loads every sample
    double mujoco_mass = 0.0;
    for (int i = 1; i < m->nbody; ++i)
      if (m->body_weldid[i] != 0) mujoco_mass += m->body_mass[i];
    if (!scene) {
      EXPECT_TRUE(std::regex_search(refusal, names_element)) << "refusal names no element: " << refusal;
      table << "| " << name << " | refused: " << refusal.substr(refusal.find(".xml:") + 1) << " | " << m->nbody - 1
            << " | " << m->nv << " | " << m->nu << " | " << mujoco_mass << " |\n";
      mj_deleteModel(m);
      continue;
    }
    ++loaded;
    const Model& model = scene->model;
    // Bodies: every MuJoCo body by its name (unnamed: body<id>); diffphys adds only the world's
    // static geoms' holder, world_static.
    int found = 0;
    std::string missing;
    for (int i = 1; i < m->nbody; ++i) {
      const char* mj_name = mj_id2name(m, mjOBJ_BODY, i);
      const std::string body = mj_name ? mj_name : "body" + std::to_string(i);
      const bool present = std::any_of(model.bodies.begin(), model.bodies.end(),
                                       [&](const Body& candidate) { return candidate.name == body; });
      found += present;
      if (!present) missing += " " + body;
    }
    EXPECT_EQ(found, m->nbody - 1) << "missing bodies:" << missing;
    int extra = 0;
    for (const Body& body : model.bodies) extra += body.name == "world_static";
    EXPECT_EQ(static_cast<int>(model.bodies.size()) - extra, m->nbody);
    // Degrees of freedom: six per moving body less what the joints remove (diffphys merges
    // hinges into universal and ball joints, so joints are not counted one for one).
    int dof = 0;
    double mass = 0.0;
    for (std::size_t b = 0; b < model.bodies.size(); ++b) {
      if (model.bodies[b].type != BodyType::Dynamic) continue;
      dof += 6;
      mass += scene->params.at(model.layout.body_mass[b]);
    }
    for (const Joint& joint : model.joints) dof -= joint_constraint_count(joint.type);
    // A composite particle (a body with three slides) is a free body, frictionless so that
    // it never turns (io/mjcf_composite.cpp): 3 more coordinates, which stay at rest.
    int particles = 0;
    for (int i = 1; i < m->nbody; ++i) {
      int slides = 0;
      for (int j = m->body_jntadr[i]; j < m->body_jntadr[i] + m->body_jntnum[i]; ++j)
        slides += m->jnt_type[j] == mjJNT_SLIDE;
      particles += m->body_jntnum[i] == 3 && slides == 3;
    }
    const int comparable_dof = dof - 3 * particles;
    EXPECT_EQ(comparable_dof, m->nv);
    // MuJoCo keeps mesh vertices in single precision: a mesh's volume agrees to ~2e-8 relative.
    EXPECT_NEAR(mass, mujoco_mass, (exact_mesh ? 1e-7 : 1e-9) * std::max(1.0, mujoco_mass));
    // Actuators: each MuJoCo actuator is loaded or named in a warning saying it is skipped.
    int skipped = 0;
    for (const std::string& warning : scene->warnings) skipped += std::regex_search(warning, actuator_skipped);
    EXPECT_EQ(model.actuator_count() + skipped, m->nu);
    table << "| " << name << " | loads" << (exact_mesh ? " (mass vs MuJoCo's exactmeshinertia)" : "") << " | " << found
          << " / " << m->nbody - 1 << " | " << comparable_dof << " / " << m->nv << " | " << model.actuator_count()
          << " (" << skipped << ") / " << m->nu << " | " << mass << " / " << mujoco_mass << " |\n";
    mj_deleteModel(m);
  }
  std::cout << table.str() << loaded << " of " << files.size() << " load\n";
  EXPECT_GE(loaded, kSamplesExpectedToLoad);
}

// Every sample that loads simulates 100 steps (its own time step) to a finite state. Minutes
// on a 2-core machine (22_humanoids has 352 bodies): labelled `long` (tests/CMakeLists.txt).
TEST(MjcfLoader, EveryLoadableSampleSimulates100FiniteSteps) {
  if (!std::filesystem::is_directory(kSamples)) GTEST_SKIP() << kSamples << " is absent (libmujoco-samples)";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kSamples))
    if (entry.is_regular_file() && entry.path().extension() == ".xml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  int loaded = 0, simulated = 0;
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    std::optional<Scene> scene;
    try {
      scene = load_mjcf(file);
    } catch (const Error&) {
      continue;  // refusals are checked above
    }
    ++loaded;
    Simulator simulator(scene->model, scene->params, scene->state);
    const auto started = std::chrono::steady_clock::now();
    for (int step = 0; step < 100; ++step) simulator.step(scene->controls);
    bool finite = true;
    for (int b = 0; b < simulator.state().body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      for (int k = 0; k < 3; ++k)
        finite = finite && std::isfinite(simulator.state().position[i][k]) &&
                 std::isfinite(simulator.state().linear_velocity[i][k]) &&
                 std::isfinite(simulator.state().angular_velocity[i][k]);
    }
    EXPECT_TRUE(finite);
    simulated += finite;
    std::cout << std::filesystem::relative(file, kSamples).string() << ": 100 steps in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() << " s, "
              << (finite ? "finite" : "NOT finite") << "\n";
  }
  std::cout << simulated << " of " << loaded << " loaded samples simulate 100 finite steps\n";
  EXPECT_EQ(simulated, loaded);
}
// An L-shaped prism (non-convex, closed) as an OBJ file, and the same without its top.
std::string l_prism_obj(bool closed) {
  const double profile[6][2] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 3}, {0, 3}};
  std::ostringstream obj;
  for (int z = 0; z < 2; ++z)
    for (const auto& p : profile) obj << "v " << p[0] << " " << p[1] << " " << z << "\n";
  for (int k = 2; k < 6; ++k) obj << "f 1 " << k + 1 << " " << k << "\n";  // bottom, facing -z
  if (closed)
    for (int k = 2; k < 6; ++k) obj << "f 7 " << k + 6 << " " << k + 7 << "\n";  // top, facing +z
  for (int i = 0; i < 6; ++i) {
    const int j = (i + 1) % 6;
    obj << "f " << i + 1 << " " << j + 1 << " " << j + 7 << "\nf " << i + 1 << " " << j + 7 << " " << i + 7 << "\n";
  }
  return obj.str();
}

// coordinate="global": every position and orientation in the world frame (MuJoCo 2.2).
TEST(MjcfLoader, GlobalCoordinatesMatchMujoco) {
  const std::filesystem::path file = std::filesystem::path(::testing::TempDir()) / "mjcf_global.xml";
  write_file(file, R"(<mujoco model="global">
<compiler coordinate="global" angle="radian"/>
<worldbody>
<body name="upper" pos="0 0 1" euler="0 0 0.5">
  <joint name="shoulder" pos="0 0 1" axis="0 1 0" limited="true" range="-1 1"/>
  <geom type="capsule" fromto="0 0 1 0.4 0.1 0.8" size="0.05"/>
  <body name="lower" pos="0.4 0.1 0.8" quat="0.9 0.1 0.3 0.2">
    <joint name="elbow" pos="0.4 0.1 0.8" axis="0.2 1 0.1"/>
    <geom type="box" pos="0.6 0.1 0.7" euler="0.3 0.2 0.1" size="0.1 0.05 0.04"/>
    <geom type="sphere" pos="0.8 0.2 0.6" size="0.06"/>
    <body name="hand" pos="0.9 0.2 0.6" axisangle="1 0 0 0.7">
      <joint name="wrist" type="slide" pos="0.9 0.2 0.6" axis="1 1 0"/>
      <inertial pos="1 0.25 0.55" euler="0.1 0.5 0.2" mass="0.3" diaginertia="0.004 0.003 0.001"/>
    </body>
  </body>
</body>
</worldbody>
</mujoco>
)");
#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
  expect_mass_properties_match_mujoco(file, 3, kMujocoAxesTolerance);
  // Joints: anchors and axes in the world where MuJoCo puts them at qpos0.
  char error[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  const Scene scene = load_mjcf(file);
  for (const char* name : {"shoulder", "elbow", "wrist"}) {
    SCOPED_TRACE(name);
    const Joint& joint = scene.model.joints[static_cast<std::size_t>(scene.model.joint_index(name))];
    const auto child = static_cast<std::size_t>(joint.child);
    const Quat orientation = scene.state.orientation[child];
    const Vec3 anchor = scene.state.position[child] + orientation.rotate(joint.anchor_child);
    const Vec3 axis = orientation.rotate(joint.axis_child);
    const int j = mj_name2id(m, mjOBJ_JOINT, name);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(anchor[k], d->xanchor[3 * j + k], 1e-12);
      EXPECT_NEAR(axis[k], d->xaxis[3 * j + k], 1e-12);
    }
  }
  mj_deleteData(d);
  mj_deleteModel(m);
#endif
  EXPECT_NE(error_of([] {
              parse_mjcf("<mujoco>\n<compiler coordinate=\"world\"/></mujoco>", "c.xml");
            }).find("c.xml:2: <compiler>: coordinate must be local or global, got 'world'"),
            std::string::npos);
}

TEST(MjcfLoader, MeshGeomMassIsTheSolidsAsInMujoco) {
  const std::filesystem::path folder = std::filesystem::path(::testing::TempDir()) / "mjcf_mesh_mass";
  std::filesystem::remove_all(folder);
  write_file(folder / "l.obj", l_prism_obj(true));
  write_file(folder / "open.obj", l_prism_obj(false));
  const std::string model =
      "<mujoco><compiler exactmeshinertia=\"true\"/><asset><mesh file=\"l.obj\" scale=\"0.1 0.2 0.3\"/>"
      "<mesh name=\"open\" file=\"open.obj\"/></asset><worldbody>\n"
      "<body name=\"l\" pos=\"0 0 1\"><freejoint/><geom type=\"mesh\" mesh=\"l\" pos=\"0.1 0.2 0.3\" "
      "euler=\"10 20 30\" density=\"800\"/><geom size=\"0.05\" pos=\"0.3 0 0\"/></body>\n"
      "</worldbody></mujoco>\n";
  write_file(folder / "l.xml", model);
  // The solid, not its hull: area 4 × depth 1, scaled by 0.006, at 800 kg/m³.
  const Scene scene = load_mjcf(folder / "l.xml");
  EXPECT_NEAR(scene.params.slice(scene.model, "body/l/mass")[0], 800 * 4 * 0.006 + 1000 * 4.0 / 3.0 * M_PI * 1.25e-4,
              1e-12);
  EXPECT_FALSE(any_warning_contains(scene, "is not convex"));  // exactmeshinertia said so
#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
  // MuJoCo (exactmeshinertia) computes the same solid from single-precision vertices
  // (coordinates × 0.1, 0.2, 0.3 are not floats): it agrees to ~1e-7 relative, not 1e-9. The
  // analytic mass above checks diffphys's own computation exactly.
  char error[1000] = "";
  mjModel* m = mj_loadXML((folder / "l.xml").c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  const int b = scene.model.body_index("l");
  const auto bi = static_cast<std::size_t>(b);
  EXPECT_NEAR(scene.params.slice(scene.model, "body/l/mass")[0], m->body_mass[1], 1e-6 * m->body_mass[1]);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(scene.state.position[bi][k], d->xipos[3 + k], 1e-7);
  const Mat3 ours = world_inertia(scene, b);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double theirs = 0.0;
      for (int k = 0; k < 3; ++k) theirs += d->ximat[9 + 3 * r + k] * m->body_inertia[3 + k] * d->ximat[9 + 3 * c + k];
      EXPECT_NEAR(ours(r, c), theirs, 1e-6 * m->body_inertia[3]) << "inertia (" << r << ", " << c << ")";
    }
  mj_deleteData(d);
  mj_deleteModel(m);
#endif
  // An open surface bounds no volume: refused, naming the geom and the file.
  std::string open_model = model;
  open_model.replace(open_model.find("mesh=\"l\""), 8, "mesh=\"open\"");
  write_file(folder / "open.xml", open_model);
  EXPECT_NE(error_of([&] { load_mjcf(folder / "open.xml"); })
                .find("open.xml:2: <geom>: the body's mass comes from this mesh geom, but " +
                      (folder / "open.obj").string() + ": the mesh is not a closed, consistently oriented surface"),
            std::string::npos);
}

TEST(MjcfLoader, MugSampleMeshMassMatchesMujoco) {
  const std::filesystem::path mug = kSamples / "mug/mug.xml";
  if (!std::filesystem::exists(mug)) GTEST_SKIP() << mug << " is absent (libmujoco-samples)";
  // As the sample says it (MuJoCo 2.2's default): loads, with a warning that the mesh is not
  // convex and its mass is the exact solid's.
  const Scene scene = load_mjcf(mug);
  EXPECT_TRUE(any_warning_contains(scene, "mug.xml:32: <geom>: mesh 'mug' is not convex"));
  // MuJoCo 2.2 keeps mesh vertices in single precision: the mug's 24,544-triangle volume
  // agrees to 2e-8 relative (6e-9 kg of 0.263), its centre and inertia to 1e-9.
  expect_mass_properties_match_mujoco(with_exact_mesh_inertia(mug), 2, kMujocoAxesTolerance, 1e-8);
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

// Every kind of MJCF element or attribute diffphys does not build is reported, one warning
// naming the element (or attribute) and its line — never dropped silently (issue #24). The
// file holds one of each; the lines below are the file's.
TEST(MjcfLoader, EveryIgnoredElementKindIsReportedWithItsLine) {
  const Scene scene = load_mjcf(kRobotData / "mjcf_ignored_elements.xml");
  const std::string file = "mjcf_ignored_elements.xml:";
  for (const auto& [line, what] : std::vector<std::pair<int, std::string>>{
           {6, "<size> ignored"},
           {7, "<visual> ignored"},
           {8, "<statistic> ignored"},
           {9, "<material> ignored"},
           {9, "<texture> ignored"},
           {10, "<custom>: unsupported element ignored"},
           {10, "<numeric 'n'>: unsupported element ignored"},
           {12, "<light> ignored"},
           {13, "<camera> ignored"},
           {16, "<joint> attribute armature ignored"},
           {16, "<joint> attribute frictionloss ignored"},
           {16, "<joint> attribute springref ignored"},
           {16, "<joint> attribute stiffness ignored"},
           {17, "<geom> attribute condim ignored"},
           {17, "<geom> attribute margin ignored"},
           {17, "<geom> attribute priority ignored"},
           {17, "<geom> attribute solimp ignored"},
           {17, "<geom> attribute solref ignored"},
           {18, "<site> ignored"},
           {25, "<fixed 'tf'>: unsupported element ignored"},
           {25, "<tendon>: unsupported element ignored"},
           {27, "<joint>: unsupported element ignored: diffphys builds <connect>, <weld> and <tendon> equalities only"},
           {28, "<joint>: unsupported element ignored: diffphys builds <connect>, <weld> and <tendon> equalities only"},
           {32, "<general 'g1'>: actuator type <general> is not supported"},
           {33, "<velocity 'v1'>: actuator type <velocity> is not supported"},
           {34, "<motor 'mt'>: only joint transmissions are supported"},
           {36, "<sensor>: unsupported element ignored"},
           {36, "<jointpos 'p'>: unsupported element ignored"},
           {37, "<keyframe>: unsupported element ignored"},
           {37, "<key 'k'>: unsupported element ignored"}})
    EXPECT_TRUE(any_warning_contains(scene, file + std::to_string(line) + ": " + what)) << "line " << line << ": " << what;
  // What it does build: both hinges, the one motor on a joint; the skipped actuators are not.
  EXPECT_EQ(scene.model.joint_count(), 2);
  ASSERT_EQ(scene.model.actuator_count(), 1);
  EXPECT_EQ(scene.model.actuators[0].name, "m1");
  EXPECT_TRUE(scene.model.equalities.empty());
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
            }).find("mesh.xml:3: <geom>: the body's mass comes from this mesh geom, but "),
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
  EXPECT_NE(error_of([&] {
              load_mjcf(folder / "main.xml");
            }).find((folder / "parts/motors.xml").string() + ":3: <motor 'drive'>: unknown joint 'elbow'"),
            std::string::npos);
  write_file(folder / "parts/motors.xml", "<mujoco>\n<actuator>\n<motor</actuator>\n</mujoco>\n");
  EXPECT_NE(
      error_of([&] { load_mjcf(folder / "main.xml"); }).find((folder / "parts/motors.xml").string() + ":3: XML error"),
      std::string::npos);
  write_file(folder / "parts/motors.xml", "<robot/>\n");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); })
                .find("motors.xml:1: <robot>: an included file's root element must be <mujoco> (included from " +
                      (folder / "parts/robot.xml").string() + ":6: <include>)"),
            std::string::npos);
  // A cycle, and a missing file, are named at the <include>.
  write_file(folder / "parts/motors.xml", "<mujoco>\n<include file=\"robot.xml\"/>\n</mujoco>\n");
  EXPECT_NE(error_of([&] {
              load_mjcf(folder / "main.xml");
            }).find("motors.xml:2: <include>: include cycle: main.xml -> robot.xml -> motors.xml -> robot.xml"),
            std::string::npos);
  std::filesystem::remove(folder / "parts/motors.xml");
  EXPECT_NE(error_of([&] { load_mjcf(folder / "main.xml"); })
                .find((folder / "parts/robot.xml").string() + ":6: <include>: included file '" +
                      (folder / "parts/motors.xml").string() + "': no such file"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_mjcf("<mujoco>\n<include/></mujoco>", "bare.xml");
            }).find("bare.xml:2: <include>: missing required attribute 'file'"),
            std::string::npos);
}

TEST(MjcfLoader, MocapBodiesAreKinematicAndCarryTheirJointedChildren) {
  // A mocap body is kinematic (driven by the state), without a warning; a hinge hung from it
  // has it as the joint's parent; its <inertial> is reported as unused.
  const Scene scene = parse_mjcf(
      "<mujoco><worldbody>\n<body name=\"target\" mocap=\"true\" pos=\"0 0 1\"><geom size=\"0.1\"/>\n"
      "<body name=\"bob\" pos=\"0 0 -0.5\"><joint name=\"swing\" type=\"hinge\" axis=\"0 1 0\" pos=\"0 0 0.5\"/>"
      "<geom size=\"0.05\"/></body></body>\n"
      "<body name=\"hand\" mocap=\"true\">\n<inertial mass=\"1\" pos=\"0 0 0\" diaginertia=\"1 1 1\"/></body>"
      "</worldbody></mujoco>",
      "mocap.xml");
  const Model& model = scene.model;
  EXPECT_EQ(model.bodies[static_cast<std::size_t>(model.body_index("target"))].type, BodyType::Kinematic);
  EXPECT_EQ(model.bodies[static_cast<std::size_t>(model.body_index("bob"))].type, BodyType::Dynamic);
  EXPECT_LT(model.layout.body_mass[static_cast<std::size_t>(model.body_index("target"))], 0);  // no mass slot
  ASSERT_EQ(model.joint_count(), 1);
  EXPECT_EQ(model.joints[0].parent, model.body_index("target"));
  EXPECT_FALSE(any_warning_contains(scene, "<body 'target'>"));
  EXPECT_TRUE(any_warning_contains(scene, "mocap.xml:5: <inertial>: ignored: a mocap body is kinematic"));
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody><body mocap=\"true\">\n<joint/><geom size=\"0.1\"/></body>"
                  "</worldbody></mujoco>",
                  "mocap.xml");
            }).find("mocap.xml:2: <joint>: a mocap body cannot have joints"),
            std::string::npos);
}

TEST(MjcfLoader, CompositeIsRefusedWithElementAndLine) {
  EXPECT_NE(error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody><body><freejoint/>\n<composite type=\"grid\" count=\"5 1 1\">"
                  "<geom size=\"0.01\"/></composite></body></worldbody></mujoco>",
                  "grid.xml");
            }).find("grid.xml:2: <composite>: <composite type=\"grid\"> is not supported"),
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
                  "<mujoco><worldbody>\n<body><joint/><geom type=\"hfield\" size=\"1 1 1\"/></body>"
                  "</worldbody></mujoco>",
                  "shape.xml");
            }).find("shape.xml:2: <geom>: geom type 'hfield' is not supported"),
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
