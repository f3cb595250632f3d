// tests/mjcf_composite_test.cpp — MJCF <composite> (io/mjcf_composite.cpp): MuJoCo's rope sample
// built body for body as MuJoCo 2.2 compiles it — every body's centre of mass and mass, every
// geom's pose and size, every hinge's anchor and axis against mj_forward at the reference
// pose — a rope that falls onto the ground with its joints held, the particle sample's 1000
// bodies where MuJoCo puts them, particles that never turn, and the other composite types
// refused with their element and line.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "robot_test_helpers.hpp"
#include "test_scenes.hpp"
#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace diffphys {
namespace {
namespace composite_test {  // unity builds: helper names unique to this file

const std::filesystem::path kCompositeSamples = "/usr/share/mujoco/model/composite";

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
Vec3 world_point(const State& state, int body, const Vec3& local) {
  const auto b = static_cast<std::size_t>(body);
  return state.position[b] + state.orientation[b].rotate(local);
}

Vec3 mj_vec(const mjtNum* v) {
  return {v[0], v[1], v[2]};
}

void expect_like_mujoco(const std::filesystem::path& file) {
  SCOPED_TRACE(file.string());
  const Scene scene = load_mjcf(file);
  const Model& model = scene.model;
  char error[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  int chain_bodies = 0;
  for (int i = 1; i < m->nbody; ++i) {
    if (m->body_mocapid[i] >= 0) continue;  // scene.xml's mocap capsule (static here)
    const char* name = mj_id2name(m, mjOBJ_BODY, i);
    ASSERT_NE(name, nullptr);
    const int b = model.body_index(name);
    ASSERT_GE(b, 0) << name;
    SCOPED_TRACE(name);
    ++chain_bodies;
    // The centre of mass (diffphys's body origin) and the mass.
    EXPECT_NEAR(norm(scene.state.position[static_cast<std::size_t>(b)] - mj_vec(d->xipos + 3 * i)), 0.0, 1e-12);
    EXPECT_NEAR(scene.params.at(model.layout.body_mass[static_cast<std::size_t>(b)]), m->body_mass[i], 1e-15);
    // Its one geom: a capsule of MuJoCo's size, centred where MuJoCo's is, along its z axis.
    ASSERT_EQ(model.bodies[static_cast<std::size_t>(b)].shape_count, 1);
    ASSERT_EQ(m->body_geomnum[i], 1);
    const int g = m->body_geomadr[i];
    const int s = model.bodies[static_cast<std::size_t>(b)].first_shape;
    const Shape& shape = model.shapes[static_cast<std::size_t>(s)];
    EXPECT_EQ(shape.name, mj_id2name(m, mjOBJ_GEOM, g));
    EXPECT_EQ(shape.type, ShapeType::Capsule);
    const int size = model.layout.shape_size[static_cast<std::size_t>(s)];
    EXPECT_EQ(scene.params.at(size), m->geom_size[3 * g]);
    EXPECT_EQ(scene.params.at(size + 1), m->geom_size[3 * g + 1]);
    EXPECT_NEAR(norm(world_point(scene.state, b, shape.local_position) - mj_vec(d->geom_xpos + 3 * g)), 0.0, 1e-12);
    const Vec3 axis =
        (scene.state.orientation[static_cast<std::size_t>(b)] * shape.local_orientation).rotate({0, 0, 1});
    const Vec3 mj_axis{d->geom_xmat[9 * g + 2], d->geom_xmat[9 * g + 5], d->geom_xmat[9 * g + 8]};
    EXPECT_NEAR(norm(axis - mj_axis), 0.0, 1e-12);
    // Its two hinges, one universal joint J0_i+J1_i: anchor and axes.
    if (m->body_jntnum[i] == 2) {
      const int j = m->body_jntadr[i];
      const std::string joint_name =
          std::string(mj_id2name(m, mjOBJ_JOINT, j)) + "+" + mj_id2name(m, mjOBJ_JOINT, j + 1);
      const Joint* joint = nullptr;
      for (const Joint& candidate : model.joints)
        if (candidate.name == joint_name) joint = &candidate;
      ASSERT_NE(joint, nullptr) << joint_name;
      EXPECT_EQ(joint->type, JointType::Universal);
      EXPECT_EQ(joint->child, b);
      EXPECT_NEAR(norm(world_point(scene.state, b, joint->anchor_child) - mj_vec(d->xanchor + 3 * j)), 0.0, 1e-12);
      const Vec3 first = scene.state.orientation[static_cast<std::size_t>(joint->parent)].rotate(joint->axis_parent);
      const Vec3 second = scene.state.orientation[static_cast<std::size_t>(b)].rotate(joint->axis2_child);
      EXPECT_NEAR(norm(first - mj_vec(d->xaxis + 3 * j)), 0.0, 1e-12);
      EXPECT_NEAR(norm(second - mj_vec(d->xaxis + 3 * (j + 1))), 0.0, 1e-12);
    }
  }
  EXPECT_GT(chain_bodies, 19);
  mj_deleteData(d);
  mj_deleteModel(m);
}
#endif

TEST(MjcfComposite, RopeIsMujocosBodiesGeomsAndHinges) {
#ifndef DIFFPHYS_TESTS_HAVE_MUJOCO
  GTEST_SKIP() << "MuJoCo (libmujoco-dev) is absent";
#else
  if (!std::filesystem::is_directory(kCompositeSamples)) GTEST_SKIP() << kCompositeSamples << " is absent";
  expect_like_mujoco(kCompositeSamples / "rope.xml");
#endif
}

TEST(MjcfComposite, ParticlesAreMujocosBodiesAndNeverTurn) {
#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
  if (std::filesystem::is_directory(kCompositeSamples)) {
    // particle.xml: 1000 bodies where MuJoCo puts them, with its masses and sphere radii.
    const std::filesystem::path file = kCompositeSamples / "particle.xml";
    const Scene scene = load_mjcf(file);
    char error[1000] = "";
    mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
    ASSERT_NE(m, nullptr) << error;
    mjData* d = mj_makeData(m);
    mj_forward(m, d);
    int particles = 0;
    for (int i = 1; i < m->nbody; ++i) {
      if (m->body_mocapid[i] >= 0) continue;               // scene.xml's mocap capsule
      const char* mj_name = mj_id2name(m, mjOBJ_BODY, i);  // particles are unnamed: body<id>
      const std::string name = mj_name ? mj_name : "body" + std::to_string(i);
      const int b = scene.model.body_index(name);
      ASSERT_GE(b, 0) << name;
      const auto bi = static_cast<std::size_t>(b);
      EXPECT_NEAR(norm(scene.state.position[bi] - mj_vec(d->xipos + 3 * i)), 0.0, 1e-12);
      EXPECT_NEAR(scene.params.at(scene.model.layout.body_mass[bi]), m->body_mass[i], 1e-15);
      EXPECT_EQ(scene.params.at(scene.model.layout.body_friction[bi]), 0.0);
      const int s = scene.model.bodies[bi].first_shape;
      EXPECT_EQ(scene.params.at(scene.model.layout.shape_size[static_cast<std::size_t>(s)]),
                m->geom_size[3 * m->body_geomadr[i]]);
      ++particles;
    }
    EXPECT_EQ(particles, 1000);
    mj_deleteData(d);
    mj_deleteModel(m);
  }
#endif
  // Eight particles dropped into a corner of walls with friction: they land, collide with the
  // walls and one another, and none turns (every contact on them is frictionless and passes
  // through the centre), as MuJoCo's slide joints keep them.
  const Scene scene = parse_mjcf(
      "<mujoco><worldbody><geom type=\"plane\" size=\"1 1 1\" friction=\"1\"/>"
      "<geom type=\"plane\" size=\"1 1 1\" zaxis=\"1 0 0.2\" pos=\"-0.2 0 0\" friction=\"1\"/>"
      "<composite type=\"particle\" count=\"2 2 2\" spacing=\"0.06\" offset=\"-0.12 0.01 0.2\">"
      "<geom size=\".025\"/></composite></worldbody></mujoco>",
      "drop.xml");
  ASSERT_EQ(scene.model.body_count(), 9);
  Simulator simulator(scene.model, scene.params, scene.state);
  double fastest_turn = 0.0, lowest = 1.0;
  for (int step = 0; step < 400; ++step) {
    simulator.step(scene.controls);
    for (int b = 1; b < 9; ++b) {
      fastest_turn = std::max(fastest_turn, norm(simulator.state().angular_velocity[static_cast<std::size_t>(b)]));
      lowest = std::min(lowest, simulator.state().position[static_cast<std::size_t>(b)].z);
    }
  }
  EXPECT_LT(lowest, 0.03);        // they reached the ground
  EXPECT_LT(fastest_turn, 1e-9);  // rad/s: round-off in r × n, r ∥ n
}

TEST(MjcfComposite, RopeFallsOntoTheGroundAndStaysJoined) {
  // A 12-element rope held in its middle element (B5), dropped tilted onto the ground: its
  // universal joints hold (the projection's joint error stays at round-off) and it comes to
  // rest lying on the ground, its capsules' axes one radius up. Undamped: with the damping
  // below, diffphys's explicit joint damping is unstable on links this light, which the
  // loader says.
  const auto rope = [](const std::string& damping) {
    return parse_mjcf(
        "<mujoco><option timestep=\"0.002\"/><worldbody><geom type=\"plane\" size=\"1 1 1\"/>"
        "<body name=\"B5\" pos=\"0 0 0.2\" euler=\"60 0 0\"><freejoint/>"
        "<composite type=\"rope\" count=\"12 1 1\" spacing=\"0.05\">\n<joint kind=\"main\" damping=\"" +
            damping + "\"/><geom type=\"capsule\" size=\".01 .02\"/></composite></body></worldbody></mujoco>",
        "rope12.xml");
  };
  EXPECT_TRUE(testing::any_warning_contains(rope("0.01"),
                                            "rope12.xml:2: <joint>: damping 0.01 of hinge 'J0_6' is "
                                            "applied explicitly by diffphys, which is unstable here"));
  const Scene scene = rope("0");
  EXPECT_FALSE(testing::any_warning_contains(scene, "applied explicitly"));
  const Model& model = scene.model;
  ASSERT_EQ(model.body_count(), 13);  // the world and 12 elements
  int universal = 0;
  for (const Joint& joint : model.joints) universal += joint.type == JointType::Universal;
  EXPECT_EQ(universal, 11);
  Simulator simulator(model, scene.params, scene.state);
  double worst_joint_error = 0.0;
  for (int step = 0; step < 1000; ++step)
    worst_joint_error = std::max(worst_joint_error, simulator.step(scene.controls).joint_error);
  EXPECT_LT(worst_joint_error, 1e-9);
  for (int b = 1; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    EXPECT_NEAR(simulator.state().position[i].z, 0.01, 1e-3) << model.bodies[i].name;
    EXPECT_LT(norm(simulator.state().linear_velocity[i]), 1e-2) << model.bodies[i].name;
  }
}

TEST(MjcfComposite, OtherTypesAreRefusedWithElementAndLine) {
  for (const char* type : {"grid", "cloth", "box", "loop"}) {
    SCOPED_TRACE(type);
    const std::string xml = std::string("<mujoco><worldbody><body name=\"B0\"><freejoint/>\n<composite type=\"") +
                            type +
                            "\" count=\"3 3 1\" spacing=\"0.1\"><geom size=\"0.01\"/></composite></body></worldbody>"
                            "</mujoco>";
    EXPECT_NE(testing::error_of([&] {
                parse_mjcf(xml, "c.xml");
              }).find(std::string("c.xml:2: <composite>: <composite type=\"") + type + "\"> is not supported"),
              std::string::npos);
  }
  // Particles that could turn (not spheres, or with friction), or inside a moving body.
  const auto particles = [](const std::string& body_open, const std::string& geom) {
    return "<mujoco><worldbody>" + body_open + "\n<composite type=\"particle\" count=\"2 2 2\" spacing=\"0.1\">" +
           geom + "</composite>" + (body_open.empty() ? "" : "</body>") + "</worldbody></mujoco>";
  };
  EXPECT_NE(testing::error_of([&] {
              parse_mjcf(particles("", "<geom type=\"box\" size=\".01 .01 .01\"/>"), "p.xml");
            }).find("its geom must be a sphere"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              parse_mjcf(particles("", "<geom size=\".01\" condim=\"3\"/>"), "p.xml");
            }).find("condim 3"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] {
              parse_mjcf(particles("<body><freejoint/><geom size=\".1\"/>", "<geom size=\".01\"/>"), "p.xml");
            }).find("p.xml:2: <composite>: particles inside a moving body"),
            std::string::npos);
  // A rope whose enclosing body is not named B<k>: MuJoCo's rule.
  EXPECT_NE(testing::error_of([] {
              parse_mjcf(
                  "<mujoco><worldbody><body name=\"rope\"><freejoint/>\n<composite type=\"rope\" count=\"5 1 1\" "
                  "spacing=\"0.04\"><geom type=\"capsule\" size=\".01 .015\"/></composite></body></worldbody>"
                  "</mujoco>",
                  "r.xml");
            }).find("r.xml:2: <composite>: the body holding a rope must be named B<k>"),
            std::string::npos);
}

}  // namespace composite_test
}  // namespace
}  // namespace diffphys
