// tests/planar_gradient_test.cpp — gradients of rollouts through planar joints
// (JointType::Planar; adjoint/joints_vjp.cpp) against central differences
// (diffphys/gradcheck.hpp): the initial state in the tangent layout, controls of motors and
// servos on each of the three dofs, and every parameter, in both formulations; flexible
// planar rows; the MJCF hopper landing on its foot.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <utility>

#include "diffphys/robot_loaders.hpp"
#include "diffphys/simulator.hpp"
#include "gradcheck_test_helpers.hpp"
#include "robot_test_helpers.hpp"
#include "test_scenes.hpp"

namespace diffphys::planar_gradient_test {
namespace {

using testing::box_body;

struct PlanarCase {
  Scene scene;
  std::vector<double> controls;  // steps × nactuator
  int steps = 100;
};

int expect_planar_gradients_match(const PlanarCase& c, std::uint32_t seed, double param_epsilon) {
  GradientCheckOptions options;
  options.steps = c.steps;
  options.tolerance = 1e-5;
  options.seed = seed;
  options.param_epsilon = param_epsilon;
  return static_cast<int>(
      testing::expect_gradients_match_central_differences(c.scene, options, c.controls).entries.size());
}

const char* name_of(Formulation formulation) {
  return formulation == Formulation::Convex ? "convex" : "complementarity";
}

// A hopper-like pair without contact: a torso on a planar joint in a tilted plane through a
// *moving* parent (a free box falling beside it, so the parent's side of every row and
// coordinate is differentiated), and a leg hinged to the torso about the plane's normal.
// Motors on the torso's translations, a servo on its angle, joint damping, a leg motor.
PlanarCase floating_parent_case(Formulation formulation, double joint_time_constant = 0.0) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.solver.formulation = formulation;
  if (joint_time_constant > 0) builder.compliance[static_cast<int>(RowClass::Joint)] = {joint_time_constant, 0.5};
  const Vec3 normal = normalized(Vec3{0.2, 1.0, -0.3});
  const Vec3 first = normalized(cross(normal, Vec3{0, 0, 1}));
  BodySpec base = box_body("base", {0.6, 0, 1.2}, {0.2, 0.2, 0.2}, 3.0);
  base.angular_velocity = {0.3, -0.2, 0.4};
  BodySpec torso = box_body("torso", {0.1, 0.05, 1.4}, {0.05, 0.05, 0.2}, 1.5);
  torso.orientation = Quat::from_axis_angle(normalized(Vec3{1, 2, 3}), 0.4);
  torso.linear_velocity = first * 0.4;
  BodySpec leg = box_body("leg", {0.1, 0.05, 1.0}, {0.03, 0.03, 0.2}, 0.6);
  for (BodySpec* body : {&base, &torso, &leg}) {
    body->shapes[0].collision_mask = 0;  // contact-free: the joints alone
    builder.add_body(*body);
  }
  JointSpec plane = testing::joint_spec("plane", JointType::Planar, "base", "torso", {0.1, 0.05, 1.3}, normal, 0.2);
  plane.axis2 = first;
  plane.axis3 = -cross(normal, first);  // the other sense, as MJCF's rootx, rootz, rooty have it
  builder.add_joint(plane);
  builder.add_joint(testing::joint_spec("knee", JointType::Revolute, "torso", "leg", {0.1, 0.05, 1.2}, normal, 0.05));
  for (int dof = 0; dof < 2; ++dof) {
    ActuatorSpec motor = testing::motor_spec("push" + std::to_string(dof), "plane");
    motor.dof = dof;
    builder.add_actuator(motor);
  }
  ActuatorSpec servo = testing::servo_spec("turn", "plane", 0.0, 4.0, 20.0, 5.0);
  servo.dof = 2;
  builder.add_actuator(servo);
  builder.add_actuator(testing::motor_spec("knee_motor", "knee"));
  PlanarCase c{builder.build(), {}, 100};
  for (int t = 0; t < c.steps; ++t) {
    c.controls.push_back(1.5 * std::sin(0.07 * t));
    c.controls.push_back(-0.8 + 0.01 * t);
    c.controls.push_back(0.4 * std::cos(0.05 * t));
    c.controls.push_back(0.2 * std::sin(0.1 * t));
  }
  return c;
}

TEST(PlanarGradient, FloatingParentWithMotorsAndAServoOnEveryDofMatchesCentralDifferences) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(name_of(formulation));
    // The leg's smallest moment (~4e-4 kg·m²) has a small gradient: parameter steps of 1e-4
    // relative keep the differences above the solver-residual noise (as the servo arm's).
    EXPECT_GT(expect_planar_gradients_match(floating_parent_case(formulation), 21, 1e-4), 40);
  }
}

// The same with flexible joints (convex, time constant 0.02 s ≥ h: springs on φ, not
// projected; rigid/compliance.hpp): gravity loads the tilted plane's normal row, and the
// joint compliance's gradient is compared too.
TEST(PlanarGradient, FlexiblePlanarJointMatchesCentralDifferences) {
  const PlanarCase c = floating_parent_case(Formulation::Convex, 0.02);
  GradientCheckOptions options;
  options.steps = c.steps;
  options.seed = 23;
  options.param_epsilon = 1e-4;
  const GradientCheckReport report = testing::expect_gradients_match_central_differences(c.scene, options, c.controls);
  testing::expect_parameter_checked_and_matters(report, "compliance/joint/time_constant", 1e-3);
}

// A body on a planar joint to the world in the vertical xz plane falls onto the ground, then
// slides and turns on it under motors on all three dofs: joint rows, contact rows and the
// coordinates' actuators together. Convex: a box with friction. Complementarity: a sphere on
// a frictionless ground, since there any friction row duplicates joint rows (its
// out-of-plane direction is the joint's normal row plus a tilt row) and the LCP's impulses
// are not unique (docs/gradients.md, "Degenerate solutions").
PlanarCase grounded_case(Formulation formulation) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.solver.formulation = formulation;
  builder.add_ground_plane();
  const bool convex = formulation == Formulation::Convex;
  builder.world_friction = convex ? 0.4 : 0.0;
  BodySpec box =
      convex ? box_body("box", {0, 0, 0.3}, {0.2, 0.1, 0.08}, 2.0) : testing::sphere_body("box", {0, 0, 0.3}, 0.1, 2.0);
  box.orientation = Quat::from_axis_angle({0, 1, 0}, 0.15);
  box.linear_velocity = {0.5, 0, 0};
  box.friction = builder.world_friction;
  builder.add_body(box);
  JointSpec plane = testing::joint_spec("plane", JointType::Planar, "world", "box", {0, 0, 0.3}, {0, 1, 0}, 0.1);
  plane.axis2 = {1, 0, 0};
  plane.axis3 = Vec3{0, 0, 1};
  plane.collide_connected = true;  // the ground is the world's, the joint's parent
  builder.add_joint(plane);
  for (int dof = 0; dof < 3; ++dof) {
    ActuatorSpec motor = testing::motor_spec("motor" + std::to_string(dof), "plane");
    motor.dof = dof;
    builder.add_actuator(motor);
  }
  PlanarCase c{builder.build(), {}, 100};
  int contact_steps = 0;
  testing::run(c.scene, c.steps,
               [&](const State&, const StepStatus& status) { contact_steps += status.contact_count > 0; });
  EXPECT_GT(contact_steps, 50);  // it does land and slide
  for (int t = 0; t < c.steps; ++t) {
    c.controls.push_back(3.0 + std::sin(0.05 * t));
    c.controls.push_back(-1.0);
    c.controls.push_back(0.3 * std::cos(0.08 * t));
  }
  return c;
}

TEST(PlanarGradient, LandingAndSlidingDrivenOnEveryDofMatchesCentralDifferences) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    SCOPED_TRACE(name_of(formulation));
    EXPECT_GT(expect_planar_gradients_match(grounded_case(formulation), 22, 1e-4), 20);
  }
}

// The hopper of tests/data/robots (its root one planar joint from MJCF's slides and hinge)
// drops 4 cm onto its foot and its motors swing its thigh, leg and foot for 100 steps: every
// gradient, in the convex formulation. Its joint ranges are taken out: gym's pose puts the
// thigh and leg exactly on their bounds (0), where a limit row with no force is a kink that
// central differences straddle (so does the hopper with its root welded). The hopper moves
// in its plane, so the planar joint's rows carry no impulse and their VJPs meet no weight
// here; the tests above check them.
TEST(PlanarGradient, HopperLandingOnItsFootMatchesCentralDifferences) {
  std::ifstream in(testing::kRobotData / "hopper.xml");
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  const std::string limited = "<joint damping=\"1\" limited=\"true\"/>";
  ASSERT_NE(xml.find(limited), std::string::npos);
  xml.replace(xml.find(limited), limited.size(), "<joint damping=\"1\" limited=\"false\"/>");
  PlanarCase c{parse_mjcf(xml, "hopper_without_ranges.xml"), {}, 100};
  set_formulation(c.scene, Formulation::Convex);
  ASSERT_EQ(c.scene.model.joints[0].type, JointType::Planar);
  for (int t = 0; t < c.steps; ++t) {
    c.controls.push_back(30.0 * std::sin(0.1 * t));
    c.controls.push_back(-20.0 * std::sin(0.07 * t));
    c.controls.push_back(10.0 * std::cos(0.05 * t));
  }
  int contact_steps = 0;
  State final_state = c.scene.state, next = c.scene.state;
  Workspace workspace;
  for (int t = 0; t < c.steps; ++t) {
    const std::span<const double> controls(c.controls.data() + 3 * t, 3);
    contact_steps += step(c.scene.model, c.scene.params, final_state, controls, next, workspace).contact_count > 0;
    std::swap(final_state, next);
  }
  EXPECT_GT(contact_steps, 40);                                                 // it lands
  EXPECT_GT(std::abs(joint_position(c.scene.model, final_state, 0, 2)), 1e-2);  // and the torso turns
  EXPECT_GT(expect_planar_gradients_match(c, 24, 1e-4), 100);
}

}  // namespace
}  // namespace diffphys::planar_gradient_test
