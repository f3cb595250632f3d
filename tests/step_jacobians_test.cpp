// tests/step_jacobians_test.cpp — the step Jacobians of diffphys/jacobians.hpp: every entry of
// A = ∂x'/∂x, B = ∂x'/∂u and P = ∂x'/∂θ against central finite differences on the manifold
// (a servo arm with universal and hinge joints, a sphere sliding on the ground), a closed form
// (a motor-driven cart: B = [h²/m, h/m]), and the ⊖ / ⊕ pair being inverse to each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/jacobians.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;
using testing::sphere_body;

Scene servo_arm() {
  ModelBuilder builder;
  builder.dt = 1e-2;
  BodySpec upper = box_body("upper", {0, 0, -0.25}, {0.04, 0.04, 0.25}, 2.0);
  BodySpec lower = box_body("lower", {0, 0, -0.75}, {0.04, 0.04, 0.25}, 1.0);
  upper.angular_velocity = {0.3, -0.2, 0.1};
  builder.add_body(upper);
  builder.add_body(lower);
  JointSpec shoulder;
  shoulder.name = "shoulder";
  shoulder.type = JointType::Universal;
  shoulder.child = "upper";
  shoulder.axis = {1, 0, 0};
  shoulder.axis2 = {0, 1, 0};
  builder.add_joint(shoulder);
  JointSpec elbow;
  elbow.name = "elbow";
  elbow.parent = "upper";
  elbow.child = "lower";
  elbow.anchor = {0, 0, -0.5};
  elbow.axis = {0, 1, 0};
  elbow.damping = 0.05;
  builder.add_joint(elbow);
  ActuatorSpec servo;
  servo.name = "s0";
  servo.type = ActuatorType::Servo;
  servo.joint = "shoulder";
  servo.gain = 5.0;
  servo.max_torque = 50.0;
  servo.max_velocity = 10.0;
  builder.add_actuator(servo);
  ActuatorSpec motor;
  motor.name = "elbow_motor";
  motor.joint = "elbow";
  motor.max_torque = 5.0;  // a bound that does not bind (0 would mean unbounded: not differentiable)
  builder.add_actuator(motor);
  Scene scene = builder.build();
  // Move off the build pose so no Jacobian entry is zero by symmetry.
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int i = 0; i < 20; ++i) simulator.step(std::vector<double>{0.4, 0.7});
  scene.state = simulator.state();
  scene.controls = {0.35, -0.6};
  return scene;
}

Scene sliding_sphere() {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.add_ground_plane();
  BodySpec ball = sphere_body("ball", {0, 0, 0.2}, 0.2, 1.5);
  ball.linear_velocity = {1.0, 0.4, 0.0};
  ball.angular_velocity = {0.5, -1.0, 0.3};
  ball.friction = 0.4;
  builder.add_body(ball);
  return builder.build();
}

// Every column of [A B P] against (f(x ⊕ εe) ⊖ f(x ⊖ εe)) / 2ε (central differences), column
// by column: max |analytic − numeric| ≤ tolerance · max(1, max |numeric|).
void expect_jacobians_match_central_differences(const Scene& scene, double tolerance) {
  const Model& model = scene.model;
  const int n = state_tangent_size(model), m = model.actuator_count(), np = model.param_count();
  std::vector<double> A(static_cast<std::size_t>(n * n)), B(static_cast<std::size_t>(n * m)),
      P(static_cast<std::size_t>(n * np));
  StepJacobians jacobians(model);
  State next;
  jacobians.compute(scene.params, scene.state, scene.controls, next, A, B, P);

  Workspace workspace;
  auto step_to = [&](const Params& params, const State& state, const std::vector<double>& controls) {
    State out = state;
    step(jacobians.model(), params, state, controls, out, workspace);
    return out;
  };
  std::vector<double> plus(static_cast<std::size_t>(n)), minus(static_cast<std::size_t>(n));
  // The name of a column: its slice for P (the Params layout), else its index.
  auto column_name = [&](const char* what, int column) {
    std::string name = std::string(what) + " column " + std::to_string(column);
    if (std::string(what) == "P")
      for (const auto& slice : model.layout.slices)
        if (column >= slice.offset && column < slice.offset + slice.size) name += " (" + slice.name + ")";
    return name;
  };
  // Errors relative to the column's size, absolute below 1 (as `diffphys gradcheck` does).
  auto compare_column = [&](const std::vector<double>& analytic, int columns, int column, const State& state_plus,
                            const State& state_minus, double epsilon, const char* what) {
    state_difference(model, state_plus, next, plus);
    state_difference(model, state_minus, next, minus);
    double column_norm = 0.0, error_norm = 0.0;
    for (int i = 0; i < n; ++i) {
      const double numeric = (plus[i] - minus[i]) / (2 * epsilon);
      const double value = analytic[static_cast<std::size_t>(i * columns + column)];
      column_norm = std::max(column_norm, std::abs(numeric));
      error_norm = std::max(error_norm, std::abs(numeric - value));
    }
    EXPECT_LE(error_norm, tolerance * std::max(1.0, column_norm)) << column_name(what, column);
  };

  const double state_epsilon = 1e-6;
  std::vector<double> tangent(static_cast<std::size_t>(n), 0.0);
  State state_plus, state_minus;
  for (int j = 0; j < n; ++j) {
    if (model.bodies[static_cast<std::size_t>(j / 12)].type == BodyType::Static) continue;
    tangent[static_cast<std::size_t>(j)] = state_epsilon;
    state_retract(model, scene.state, tangent, state_plus);
    tangent[static_cast<std::size_t>(j)] = -state_epsilon;
    state_retract(model, scene.state, tangent, state_minus);
    tangent[static_cast<std::size_t>(j)] = 0.0;
    compare_column(A, n, j, step_to(scene.params, state_plus, scene.controls),
                   step_to(scene.params, state_minus, scene.controls), state_epsilon, "A");
  }
  for (int a = 0; a < m; ++a) {
    std::vector<double> up = scene.controls, down = scene.controls;
    up[static_cast<std::size_t>(a)] += state_epsilon;
    down[static_cast<std::size_t>(a)] -= state_epsilon;
    compare_column(B, m, a, step_to(scene.params, scene.state, up), step_to(scene.params, scene.state, down),
                   state_epsilon, "B");
  }
  for (int p = 0; p < np; ++p) {
    const double value = scene.params.values[static_cast<std::size_t>(p)];
    const double epsilon = value > 0 ? std::max(1e-6 * value, 1e-7) : 1e-6;
    Params up = scene.params, down = scene.params;
    up.values[static_cast<std::size_t>(p)] += epsilon;
    down.values[static_cast<std::size_t>(p)] -= epsilon;
    if (value > 0 && value - epsilon <= 0) continue;
    compare_column(P, np, p, step_to(up, scene.state, scene.controls), step_to(down, scene.state, scene.controls),
                   epsilon, "P");
  }
}

TEST(StepJacobians, ServoArmMatchesCentralDifferences) {
  expect_jacobians_match_central_differences(servo_arm(), 1e-5);
}

TEST(StepJacobians, SlidingSphereOnTheGroundMatchesCentralDifferences) {
  Scene scene = sliding_sphere();
  expect_jacobians_match_central_differences(scene, 1e-5);
}

TEST(StepJacobians, StaticBodiesAreFixedSceneryWithZeroRowsAndColumns) {
  // The ground plane (the world's pose) touches the sphere: its columns are zero anyway.
  const Scene scene = sliding_sphere();
  const int n = state_tangent_size(scene.model);
  std::vector<double> A(static_cast<std::size_t>(n * n)), B;
  step_jacobians(scene.model, scene.params, scene.state, {}, A, B);
  double dynamic = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double value = A[static_cast<std::size_t>(i * n + j)];
      if (i < 12 || j < 12) EXPECT_EQ(value, 0.0) << i << ", " << j;
      else dynamic += std::abs(value);
    }
  EXPECT_GT(dynamic, 0.0);
}

TEST(StepJacobians, MotorDrivenCartHasTheSemiImplicitEulerClosedForm) {
  // A body on a prismatic joint along x, a force motor, no gravity: v' = v + h u/m, p' = p + h v'.
  const double mass = 2.5, h = 0.02;
  const Scene scene = testing::motor_cart(mass, h, 0.3);
  const int n = state_tangent_size(scene.model);
  std::vector<double> A(static_cast<std::size_t>(n * n)), B(static_cast<std::size_t>(n));
  step_jacobians(scene.model, scene.params, scene.state, std::vector<double>{1.0}, A, B);
  EXPECT_NEAR(B[12 + 0], h * h / mass, 1e-12);
  EXPECT_NEAR(B[12 + 6], h / mass, 1e-12);
  EXPECT_NEAR(A[(12 + 0) * n + 12 + 0], 1.0, 1e-12);
  EXPECT_NEAR(A[(12 + 0) * n + 12 + 6], h, 1e-12);
  EXPECT_NEAR(A[(12 + 6) * n + 12 + 6], 1.0, 1e-12);
  // The world's rows are zero.
  for (int j = 0; j < n; ++j) EXPECT_EQ(A[static_cast<std::size_t>(j)], 0.0);
}

TEST(StepJacobians, DifferenceUndoesRetract) {
  const Scene scene = servo_arm();
  const int n = state_tangent_size(scene.model);
  std::vector<double> tangent(static_cast<std::size_t>(n)), recovered(static_cast<std::size_t>(n));
  for (int i = 12; i < n; ++i) tangent[static_cast<std::size_t>(i)] = 0.1 * std::sin(1.7 * i);
  State moved;
  state_retract(scene.model, scene.state, tangent, moved);
  state_difference(scene.model, moved, scene.state, recovered);
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(recovered[static_cast<std::size_t>(i)], tangent[static_cast<std::size_t>(i)], 1e-14);
}

TEST(StepJacobians, PerturbedMovesOneTangentComponentOnly) {
  const Scene scene = servo_arm();
  const int n = state_tangent_size(scene.model);
  std::vector<double> recovered(static_cast<std::size_t>(n));
  for (int i = 12; i < n; ++i) {
    const State moved = state_perturbed(scene.state, i / 12, i % 12, 1e-3);
    state_difference(scene.model, moved, scene.state, recovered);
    for (int j = 0; j < n; ++j)
      EXPECT_NEAR(recovered[static_cast<std::size_t>(j)], j == i ? 1e-3 : 0.0, 1e-15) << i << ", " << j;
  }
  EXPECT_THROW(state_perturbed(scene.state, 1, 12, 1e-3), Error);
}

TEST(StepJacobians, RefusesMisSizedOutputs) {
  const Scene scene = servo_arm();
  std::vector<double> A(3), B(3);
  EXPECT_THROW(step_jacobians(scene.model, scene.params, scene.state, scene.controls, A, B), Error);
  const int n = state_tangent_size(scene.model);
  std::vector<double> A_ok(static_cast<std::size_t>(n * n)), B_ok(static_cast<std::size_t>(n * 2));
  EXPECT_THROW(step_jacobians(scene.model, scene.params, scene.state, std::vector<double>{1.0}, A_ok, B_ok), Error);
}

}  // namespace
}  // namespace diffphys
