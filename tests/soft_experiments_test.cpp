// tests/soft_experiments_test.cpp — the soft-body experiments at a small size: the stiffness
// inference recovers Young's modulus from 10× off, and Adam tracks the Newton integrator.
#include <gtest/gtest.h>

#include "diffphys/soft_experiments.hpp"

namespace diffphys::soft {
namespace {

TEST(SoftExperiments, StiffnessInferenceConvergesWithinOnePercentFromTenTimesOff) {
  SoftStiffnessOptions options;
  options.cells_x = 4;
  options.steps = 25;
  const SoftStiffnessResult result = run_soft_stiffness_experiment(options);
  EXPECT_NEAR(result.initial_youngs, 10 * options.true_youngs, 1e-9);
  EXPECT_TRUE(result.converged);
  EXPECT_LT(result.relative_error, 0.01) << "estimated " << result.estimated_youngs;
  EXPECT_GE(result.iterations, 2);
}

TEST(SoftExperiments, AdamTracksNewtonOnTheMassSpringGrid) {
  MassSpringAdamOptions options;
  options.grid = 4;
  options.steps = 10;
  const MassSpringAdamResult result = run_mass_spring_adam_experiment(options);
  EXPECT_EQ(result.newton_failures, 0);
  EXPECT_EQ(result.adam_failures, 0);
  EXPECT_GT(result.adam_iterations, 10 * result.newton_iterations);
  EXPECT_LT(result.max_position_difference, 1e-4);
}

}  // namespace
}  // namespace diffphys::soft
