// experiments/registry.cpp — the list of `diffphys experiment` names. One line per
// experiment; each is declared in its own header under src/experiments/.
#include "experiments/experiments.hpp"

#include <array>

#include "experiments/cartpole_ilqr.hpp"

namespace diffphys::experiments {

std::span<const ExperimentEntry> registry() {
  static const std::array entries = {
      ExperimentEntry{"cartpole-ilqr",
                      "de Avila Belbute-Peres et al. 2018 §4.3: learn a cart-pole model, balance the true one with iLQR MPC",
                      run_cartpole_ilqr},
  };
  return entries;
}

}  // namespace diffphys::experiments
