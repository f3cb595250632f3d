// math/finite.hpp — whether a vector of numbers is finite: the check behind "a state that goes
// non-finite is an error" in the rigid and soft rollouts and the optimisers.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>

namespace diffphys {

// A finite sum of squares has finite terms (one vectorisable pass); an infinite one may come
// from large finite entries, so then look entry by entry.
inline bool all_finite(std::span<const double> values) {
  double squared = 0.0;
  for (const double v : values) squared += v * v;
  return std::isfinite(squared) ||
         std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace diffphys
