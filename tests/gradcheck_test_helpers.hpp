// tests/gradcheck_test_helpers.hpp — one expectation shared by the gradient tests: every
// analytic gradient of a rollout matches central differences (diffphys/gradcheck.hpp).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string_view>

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

// Fails the test unless the report has entries named `prefix`… and at least one of them has a
// numeric gradient above `smallest` (the parameter matters, so agreeing on it is a check).
inline void expect_parameter_checked_and_matters(const GradientCheckReport& report, std::string_view prefix,
                                                 double smallest) {
  bool checked = false;
  for (const GradientCheckEntry& entry : report.entries)
    if (entry.name.starts_with(prefix)) {
      checked = true;
      EXPECT_GT(std::abs(entry.numeric), smallest) << entry.name << " must matter here";
    }
  EXPECT_TRUE(checked) << "no gradient entry named " << prefix;
}

}  // namespace diffphys::testing
