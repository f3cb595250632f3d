// tools/gradcheck_table.hpp — the table every `diffphys gradcheck` prints (rigid, soft and
// coupled scenes): one row per gradient, the summary line and the exit code.
#pragma once

#include <span>

#include "diffphys/gradcheck.hpp"
#include "gradcheck_command.hpp"

namespace diffphys::cli {

// Prints the column header, the rows (analytic, numeric, the finite differences' estimated
// error and step, the relative error of diffphys/gradcheck.hpp's rule; only the failing ones
// with --failures-only) and the summary line; a disagreement is also counted on stderr. Returns 0 when every entry is within
// options.tolerance, 3 otherwise (a NaN is a disagreement).
int print_gradcheck_table(std::span<const GradientCheckEntry> entries, const GradcheckOptions& options);

}  // namespace diffphys::cli
