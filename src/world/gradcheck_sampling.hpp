// world/gradcheck_sampling.hpp — small helpers shared by the world's gradient checks
// (world_gradcheck.cpp, and each part's own check such as fluid/fluid_gradcheck.cpp): which
// entries of a long vector to compare, and the entries' printed names.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace diffphys::world {

// `count` indices spread evenly over [0, size) (all of them when size ≤ count).
inline std::vector<int> spread_indices(int size, int count) {
  std::vector<int> picked;
  if (size <= count) {
    for (int i = 0; i < size; ++i) picked.push_back(i);
  } else {
    for (int s = 0; s < count; ++s) picked.push_back(static_cast<int>(static_cast<long long>(s) * (size - 1) / (count - 1)));
  }
  return picked;
}

// printf into a std::string (entry names; at most 511 characters).
inline std::string format_name(const char* pattern, auto... values) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, pattern, values...);
  return buffer;
}

}  // namespace diffphys::world
