// tests/convex_test_support.hpp — what the convex formulation's tests share: a second,
// independent solver of the same convex problem (solve/convex.hpp), to check that Newton's
// answer is the problem's one solution.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "solve/convex.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::testing {

// The regularised dual, min ½γᵀ(A + R)γ + γᵀ(J v_free − v̂) over γ ∈ C, by projected
// Gauss–Seidel (a second, independent method: block coordinate descent on the dual, no
// Hessian): a one-row group's block is minimised exactly, a cone's by projected-gradient
// iterations on its 3×3 block. Returns v = v_free + M⁻¹Jᵀγ.
inline std::vector<double> solve_dual_by_gauss_seidel(std::span<const solve::ConstraintRow> rows,
                                                      const solve::MassBlocks& mass,
                                                      std::span<const double> free_velocity, int sweeps) {
  solve::ConvexWorkspace problem;
  solve::prepare_convex_problem(rows, mass, problem);
  std::vector<double> gamma(rows.size(), 0.0), velocity(free_velocity.begin(), free_velocity.end());
  const auto apply = [&](int r, double delta) {
    solve::apply_response(rows[static_cast<std::size_t>(r)], problem.responses[static_cast<std::size_t>(r)], delta,
                          velocity);
    gamma[static_cast<std::size_t>(r)] += delta;
  };
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    double largest_change = 0.0;
    for (const solve::ConvexGroup& group : problem.groups) {
      const int n = group.size;
      double block[3][3], inverse_step = 0.0;
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
          const auto i = static_cast<std::size_t>(group.row + r), j = static_cast<std::size_t>(group.row + c);
          block[r][c] =
              solve::delassus_entry(rows[i], rows[j], problem.responses[j]) + (r == c ? problem.compliance[i] : 0.0);
        }
        inverse_step += block[r][r];  // trace ≥ the largest eigenvalue
      }
      for (int inner = 0; inner < (n == 1 ? 1 : 50); ++inner) {
        double inner_change = 0.0;
        double y[3];
        for (int r = 0; r < n; ++r) {  // one step of 1/L (the exact minimiser for one row)
          const auto i = static_cast<std::size_t>(group.row + r);
          const double gradient =
              solve::row_times_velocity(rows[i], velocity) + problem.compliance[i] * gamma[i] - rows[i].rhs;
          y[r] = gamma[i] - gradient / (n == 1 ? block[0][0] : inverse_step);
        }
        const solve::GroupProjection projection = solve::project_group(group, y);
        for (int r = 0; r < n; ++r) {
          const double delta = projection.gamma[r] - gamma[static_cast<std::size_t>(group.row + r)];
          largest_change = std::max(largest_change, std::abs(delta));
          inner_change = std::max(inner_change, std::abs(delta));
          apply(group.row + r, delta);
        }
        if (inner_change < 1e-15) break;  // settled: more steps would repeat this one
      }
    }
    if (largest_change < 1e-15) break;
  }
  return velocity;
}

}  // namespace diffphys::testing
