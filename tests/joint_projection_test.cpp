// tests/joint_projection_test.cpp — which joints a step projects back onto their manifold
// (rigid::projects_joints, rigid/compliance.hpp): the mixed LCP's and the convex formulation's
// stiff joints are projected; flexible ones (time constant ≥ the step) are springs, whose
// static deflection is the closed form g/ω², which a robot standing on them keeps without
// drifting, and whose gradients (state, masses, the joint compliance) match central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/simulator.hpp"
#include "experiments/quadruped_public_model.hpp"
#include "gradcheck_test_helpers.hpp"

namespace diffphys {
namespace {

constexpr double kGravity = 9.81;

// A 2 kg box hanging from the world by a fixed joint at its centre, in the convex formulation
// with the given joint compliance.
Scene box_on_fixed_joint(double time_constant, double damping_ratio) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.gravity = {0, 0, -kGravity};
  builder.solver.formulation = Formulation::Convex;
  builder.compliance[static_cast<int>(RowClass::Joint)] = {time_constant, damping_ratio};
  BodySpec box;
  box.name = "box";
  box.mass = 2.0;
  box.inertia = Vec3{0.01, 0.02, 0.03};
  ShapeSpec shape;
  shape.type = ShapeType::Box;
  shape.half_extents = {0.1, 0.1, 0.1};
  shape.collision_mask = 0;
  box.shapes.push_back(shape);
  builder.add_body(box);
  JointSpec joint;
  joint.name = "weld";
  joint.type = JointType::Fixed;
  joint.child = "box";
  builder.add_joint(joint);
  return builder.build();
}

// The spring of a flexible joint carries the box at its static deflection g/ω², ω = 1/(ζτ):
// at rest R λ = v̂ with λ = m g h, v̂ = −C/(h + 2ζ²τ) and R = A/(h²ω² + 2hζω), A = 1/m
// (rigid/compliance.hpp), so C = −g/ω² for any step. Projecting would hold C at 0.
TEST(FlexibleJoints, HangingBoxSagsByTheSpringsStaticDeflection) {
  const double time_constant = 0.05, damping_ratio = 1.0;  // ω = 20 rad/s: 24.5 mm
  const Scene scene = box_on_fixed_joint(time_constant, damping_ratio);
  Simulator simulator(scene.model, scene.params, scene.state);
  StepStatus status;
  for (int t = 0; t < 3000; ++t) status = simulator.step();
  const double omega = 1.0 / (damping_ratio * time_constant);
  const int box = scene.model.body_index("box");
  EXPECT_NEAR(simulator.state().position[static_cast<std::size_t>(box)].z, -kGravity / (omega * omega), 1e-9);
  EXPECT_NEAR(simulator.state().linear_velocity[static_cast<std::size_t>(box)].z, 0.0, 1e-9);
  // The reported joint error is the deflection: measured, not projected away.
  EXPECT_NEAR(status.joint_error, kGravity / (omega * omega), 1e-9);
}

TEST(FlexibleJoints, StiffJointsAreProjected) {
  const Scene scene = box_on_fixed_joint(1e-5, 1.0);  // ModelBuilder's default joint compliance
  Simulator simulator(scene.model, scene.params, scene.state);
  StepStatus status;
  for (int t = 0; t < 500; ++t) status = simulator.step();
  const int box = scene.model.body_index("box");
  EXPECT_LT(std::abs(simulator.state().position[static_cast<std::size_t>(box)].z), 1e-9);
  EXPECT_LT(status.joint_error, 1e-9);
}

// The public code's quadruped (17 bodies on flexible hinges and welds, stiff servos) held in a
// bent posture stands still. When the projection undid its joints' deflection every step, it
// added the correction over h to the velocities and drove the robot along at 0.149 m/s.
TEST(FlexibleJoints, RobotInAFixedPostureStandsStill) {
  experiments::PublicQuadrupedDesign design;
  design.repository_servo_compliance = false;
  const experiments::QuadrupedModel robot = experiments::build_public_quadruped(design);
  const Scene& scene = robot.scene;
  const int steps = 600;  // 3 s
  std::vector<double> targets(static_cast<std::size_t>(steps) * 8);
  for (std::size_t k = 0; k < targets.size(); ++k) targets[k] = k % 8 < 4 ? 0.1 : -0.2;  // hips, knees
  Rollout rollout(scene.model, scene.params);
  rollout.run(scene.state, targets, steps);
  const auto torso = static_cast<std::size_t>(robot.torso);
  const State& last = rollout.final_state();
  EXPECT_LT(std::abs(last.position[torso].x - scene.state.position[torso].x), 2e-3);
  EXPECT_LT(std::abs(last.linear_velocity[torso].x), 1e-3);  // settling; the defect: 0.149
  EXPECT_GT(last.position[torso].z, 0.34);  // up on its legs, sagging by its joints' springs
}

// A two-link pendulum on a flexible hinge and a flexible weld (the rotation lock's exact
// derivative), swinging 100 steps: every gradient, the joint compliance's included.
TEST(FlexibleJoints, GradientsMatchCentralDifferences) {
  ModelBuilder builder;
  builder.dt = 5e-3;
  builder.gravity = {0, 0, -kGravity};
  builder.solver.formulation = Formulation::Convex;
  builder.compliance[static_cast<int>(RowClass::Joint)] = {0.02, 0.5};
  for (int link = 0; link < 2; ++link) {
    BodySpec body;
    body.name = "link" + std::to_string(link);
    body.position = {0.2 + 0.4 * link, 0.0, 1.0};
    body.angular_velocity = {0.3, 1.5 - link, 0.2};
    body.mass = 1.0 + link;
    body.inertia = Vec3{0.01, 0.03, 0.03};
    ShapeSpec shape;
    shape.type = ShapeType::Box;
    shape.half_extents = {0.2, 0.03, 0.03};
    shape.collision_mask = 0;
    body.shapes.push_back(shape);
    builder.add_body(body);
  }
  JointSpec hinge;
  hinge.name = "hinge";
  hinge.child = "link0";
  hinge.anchor = {0, 0, 1};
  hinge.axis = {0, 1, 0};
  builder.add_joint(hinge);
  JointSpec weld;
  weld.name = "weld";
  weld.type = JointType::Fixed;
  weld.parent = "link0";
  weld.child = "link1";
  weld.anchor = {0.4, 0, 1};
  builder.add_joint(weld);
  const Scene scene = builder.build();
  GradientCheckOptions options;
  options.steps = 100;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(scene, options);
  testing::expect_parameter_checked_and_matters(report, "compliance/joint/time_constant", 1e-3);
}

}  // namespace
}  // namespace diffphys
