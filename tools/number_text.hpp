// tools/number_text.hpp — numbers as the soft and coupled commands print them ("%.*g").
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace diffphys::cli {

// `value` with `digits` significant digits.
inline std::string number(double value, int digits = 6) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  return buffer;
}

// The same, with round-off below 1e-12 in magnitude printed as 0 (positions and velocities
// that are zero up to round-off, which "-1.2e-17" would hide).
inline std::string number_or_zero(double value, int digits = 6) {
  return number(std::abs(value) < 1e-12 ? 0.0 : value, digits);
}

}  // namespace diffphys::cli
