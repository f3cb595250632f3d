// experiments/registry.cpp — the list of `diffphys experiment` names. One line per
// experiment; each is declared in its own header under src/experiments/.
#include "experiments/experiments.hpp"

#include <array>

namespace diffphys::experiments {

std::span<const ExperimentEntry> registry() {
  static const std::array<ExperimentEntry, 0> entries = {};
  return entries;
}

}  // namespace diffphys::experiments
