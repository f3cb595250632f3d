// tests/gradcheck_test_helpers.hpp — one expectation shared by the gradient tests: every
// analytic gradient of a rollout matches central differences (diffphys/gradcheck.hpp).
#pragma once

#include <gtest/gtest.h>

#include <span>

#include "diffphys/gradcheck.hpp"

namespace diffphys::testing {

// Runs check_gradients and fails the test for every entry beyond options.tolerance (naming
// it, with both values, the numeric one's estimated error and its step) and if the report
// did not pass; returns the report for more checks.
inline GradientCheckReport expect_gradients_match_central_differences(const Scene& scene,
                                                                      const GradientCheckOptions& options,
                                                                      std::span<const double> controls = {}) {
  const GradientCheckReport report = check_gradients(scene, controls, options);
  for (const GradientCheckEntry& entry : report.entries)
    EXPECT_LE(entry.relative_error, options.tolerance)
        << entry.name << ": analytic " << entry.analytic << ", numeric " << entry.numeric << " ± "
        << entry.uncertainty << " (step " << entry.step << ")";
  EXPECT_TRUE(report.passed) << "worst relative error " << report.worst_relative_error;
  return report;
}

}  // namespace diffphys::testing
