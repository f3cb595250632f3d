// solve/lemke.hpp — Lemke's complementary pivoting for a dense standard LCP
//   w = M z + q,  w ≥ 0,  z ≥ 0,  wᵀz = 0.
//
// The interior point's fallback: friction makes the step's LCP non-monotone, and on rare
// configurations (fast sliding contacts between articulated links) the path-following
// iteration stalls. Lemke's method terminates for the copositive-plus matrices of the
// polyhedral friction LCP (Stewart & Trinkle 1996; Cottle, Pang & Stone, The Linear
// Complementarity Problem, §4.4). Dense tableau, O(n²) per pivot; buffers are reused.
#pragma once

#include <span>
#include <vector>

namespace diffphys::solve {

struct LemkeWorkspace {
  std::vector<double> tableau;  // n × (2n + 2): [w | z | z0 | rhs]
  std::vector<int> basis;       // (n) variable basic in each row
};

// Writes z and returns true if a solution was found within max_pivots pivots.
bool solve_lemke(std::span<const double> matrix, std::span<const double> q, int n, int max_pivots,
                 LemkeWorkspace& workspace, std::span<double> z);

}  // namespace diffphys::solve
