// tests/articulated_mujoco_test.cpp — reduced coordinates against MuJoCo 2.2 (libmujoco-dev),
// a second implementation of the same equations: a 3D chain of three hinges (each about a
// different axis, links with off-axis centres of mass), motors, no contact, loaded from one
// MJCF text by both engines. MuJoCo's Euler integrator takes the same semi-implicit step in
// joint coordinates, so the trajectories agree to round-off, not to O(h) (measured: 7e-14 rad
// over 500 steps in which the joints turn by up to 1.7 rad). Built only where the test
// executable links MuJoCo (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "diffphys/robot_loaders.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys {
namespace {

constexpr const char* kChain = R"(<mujoco model="chain3d">
  <option timestep="0.001" integrator="Euler" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="ja" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" contype="0" conaffinity="0"/>
      <body name="b" pos="0.3 0 0">
        <joint name="jb" type="hinge" axis="0 1 0"/>
        <geom type="box" pos="0.1 0.02 -0.05" size="0.1 0.03 0.02" euler="10 20 30" contype="0" conaffinity="0"/>
        <body name="c" pos="0.2 0 -0.1">
          <joint name="jc" type="hinge" axis="1 0 0.5"/>
          <geom type="capsule" fromto="0 0 0 0 0.1 -0.25" size="0.02" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="ma" joint="ja" gear="1"/>
    <motor name="mc" joint="jc" gear="1"/>
  </actuator>
</mujoco>)";

TEST(ArticulatedMujoco, ThreeHingeChainFollowsMujocoStepForStep) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("diffphys_chain3d_" + std::to_string(::getpid()) + ".xml");
  std::ofstream(file) << kChain;
  char error[1000] = "";
  mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  std::filesystem::remove(file);
  ASSERT_NE(m, nullptr) << error;
  mjData* d = mj_makeData(m);
  Scene scene = parse_mjcf(kChain, "chain3d.xml");
  scene.model.solver.coordinates = Coordinates::Reduced;
  ASSERT_EQ(scene.model.joint_count(), 3);
  // Both start at the load pose (MuJoCo's qpos0, diffphys' build pose: every angle 0), at
  // rest, the arm horizontal: gravity and two motors swing it through 3D motion.
  const double torque[2] = {0.2, -0.05};
  d->ctrl[0] = torque[0];
  d->ctrl[1] = torque[1];
  State state = scene.state;
  const std::vector<double> controls{torque[0], torque[1]};
  State next = state;
  Workspace workspace;
  double largest = 0.0, travelled = 0.0;
  for (int t = 0; t < 500; ++t) {
    step(scene.model, scene.params, state, controls, next, workspace);
    std::swap(state, next);
    mj_step(m, d);
    for (int j = 0; j < 3; ++j)
      largest = std::max(largest, std::abs(joint_position(scene.model, state, j, 0) - d->qpos[j]));
  }
  for (int j = 0; j < 3; ++j) travelled = std::max(travelled, std::abs(d->qpos[j]));
  EXPECT_GT(travelled, 0.3);  // the chain did move
  EXPECT_LT(largest, 1e-9) << "largest joint-angle difference over 0.5 s: " << largest << " rad";
  mj_deleteData(d);
  mj_deleteModel(m);
}

}  // namespace
}  // namespace diffphys
#endif  // DIFFPHYS_TESTS_HAVE_MUJOCO
