// tests/solver_robustness_test.cpp — velocity problems on which the interior point's
// path-following stalls and pivoting fails, and which the step must still solve (the projected
// Gauss–Seidel fallback of solve/interior_point.cpp). The case: the quadruped of the §3.3
// experiment standing on its four feet, its shoulder servos asking to lean (saturated at 4 N·m)
// while the knees rest on their stops, so that a knee's servo and its stop can carry the same
// impulse. Before the fallback, step 0 returned a residual of 36 m/s and velocities off by up
// to 0.8 rad/s, with `converged` false and nothing else to stop a rollout.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "diffphys/simulator.hpp"
#include "experiments/quadruped_model.hpp"

namespace diffphys {
namespace {

using experiments::build_quadruped;
using experiments::QuadrupedModel;

// Shoulder targets of 0.1 rad on all four legs, elbows at 0.
std::vector<double> leaning_targets() {
  std::vector<double> targets(QuadrupedModel::kServos, 0.0);
  for (int leg = 0; leg < QuadrupedModel::kLegs; ++leg) targets[static_cast<std::size_t>(2 * leg)] = 0.1;
  return targets;
}

// The interior point's step agrees with projected Gauss–Seidel run to the same tolerance: the
// same velocity problem solved by a method that cannot stall, only crawl.
TEST(SolverRobustness, LeaningQuadrupedStepConvergesToTheSolutionPgsFinds) {
  const QuadrupedModel robot = build_quadruped();
  const std::vector<double> targets = leaning_targets();
  Model reference_model = robot.scene.model;
  reference_model.solver.type = SolverType::ProjectedGaussSeidel;
  reference_model.solver.max_iterations = 100000;

  State interior, reference;
  Workspace workspace, reference_workspace;
  const StepStatus status = step(robot.scene.model, robot.scene.params, robot.scene.state, targets, interior, workspace);
  const StepStatus reference_status =
      step(reference_model, robot.scene.params, robot.scene.state, targets, reference, reference_workspace);
  ASSERT_TRUE(reference_status.converged) << reference_status.residual;
  EXPECT_TRUE(status.converged) << "residual " << status.residual << " after " << status.iterations << " iterations";
  EXPECT_LE(status.residual, robot.scene.model.solver.tolerance);
  for (int b = 1; b < robot.scene.model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    EXPECT_LT(norm(interior.linear_velocity[i] - reference.linear_velocity[i]), 1e-7) << "body " << b;
    EXPECT_LT(norm(interior.angular_velocity[i] - reference.angular_velocity[i]), 1e-6) << "body " << b;
  }
}

// Over 1 s of leaning the residual of every step stays small (the fallback may crawl short of
// the 1e-10 m/s tolerance on some steps, and then says so, but never returns a wrong answer of
// the size the stalled interior point did).
TEST(SolverRobustness, LeaningQuadrupedResidualStaysSmallOverOneSecond) {
  const QuadrupedModel robot = build_quadruped();
  const std::vector<double> targets = leaning_targets();
  State state = robot.scene.state, next;
  Workspace workspace;
  double largest = 0.0;
  const int steps = static_cast<int>(1.0 / robot.scene.model.dt);
  for (int t = 0; t < steps; ++t) {
    const StepStatus status = step(robot.scene.model, robot.scene.params, state, targets, next, workspace);
    largest = std::max(largest, status.residual);
    std::swap(state, next);
  }
  EXPECT_LT(largest, 1e-4);  // m/s; 36 before the fallback
}

}  // namespace
}  // namespace diffphys
