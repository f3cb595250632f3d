// tools/gradcheck_table.cpp — see gradcheck_table.hpp.
#include "gradcheck_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace diffphys::cli {

int print_gradcheck_table(std::span<const GradientCheckEntry> entries, const GradcheckOptions& options) {
  std::printf("%-48s %16s %16s %10s %10s %10s\n", "gradient of", "analytic", "numeric", "FD error", "FD step",
              "rel. error");
  int failures = 0;
  double worst = 0.0;
  for (const GradientCheckEntry& entry : entries) {
    const bool failed = !(entry.relative_error <= options.tolerance);
    failures += failed;
    worst = std::max(worst, std::isnan(entry.relative_error) ? INFINITY : entry.relative_error);
    if (options.only_failures && !failed) continue;
    std::printf("%-48s %16.9g %16.9g %10.2g %10.2g %10.3g%s\n", entry.name.c_str(), entry.analytic, entry.numeric,
                entry.uncertainty, entry.step, entry.relative_error, failed ? "  FAIL" : "");
  }
  const bool passed = failures == 0;
  std::printf("%zu gradients compared, worst relative error %.3g (tolerance %g): %s\n", entries.size(), worst,
              options.tolerance, passed ? "all agree" : "DISAGREEMENT");
  if (!passed) std::cerr << "diffphys: " << failures << " gradient(s) disagree with central differences\n";
  return passed ? 0 : 3;
}

}  // namespace diffphys::cli
