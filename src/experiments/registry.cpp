// experiments/registry.cpp — the list of `diffphys experiment` names. One line per
// experiment; each is declared in its own header under src/experiments/.
#include <array>

#include "experiments/arm_reach.hpp"
#include "experiments/ball_throw.hpp"
#include "experiments/breakout.hpp"
#include "experiments/cartpole_data_efficiency.hpp"
#include "experiments/cartpole_ilqr.hpp"
#include "experiments/chain_mass.hpp"
#include "experiments/drag_shape.hpp"
#include "experiments/experiments.hpp"
#include "experiments/flow_inverse.hpp"
#include "experiments/quadruped.hpp"
#include "experiments/smoke_control.hpp"
#include "experiments/soft_experiments_commands.hpp"

namespace diffphys::experiments {

std::span<const ExperimentEntry> registry() {
  static const std::array entries = {
      ExperimentEntry{"ball-throw", "Degrave et al. 2019 §2.1.1: initial velocity of a rolling ball by BPTT",
                      run_ball_throw},
      ExperimentEntry{"chain-mass", "de Avila Belbute-Peres et al. 2018 §4.1: infer a chain's mass from its motion",
                      run_chain_mass},
      ExperimentEntry{"chain-mass-scaling",
                      "de Avila Belbute-Peres et al. 2018 Fig. 1 right: analytic vs finite-difference updates",
                      run_chain_mass_scaling},
      ExperimentEntry{"cartpole-ilqr",
                      "de Avila Belbute-Peres et al. 2018 §4.3: learn a cart-pole model, balance the true one with iLQR MPC",
                      run_cartpole_ilqr},
      ExperimentEntry{"cartpole-data-efficiency",
                      "de Avila Belbute-Peres et al. 2018 Fig. 5: learned physics vs an MLP model against the amount of data",
                      run_cartpole_data_efficiency,
                      "long-mlp: the MLP trained five times longer (40,000 Adam updates; 7,500 with --quick)"},
      ExperimentEntry{"soft-stiffness",
                      "Rojas 2020 (issue 5): infer a hanging beam's Young's modulus from its trajectory, from 10x off",
                      run_soft_stiffness},
      ExperimentEntry{"mass-spring-adam",
                      "Rojas 2020: the mass-spring relaxation by Adam next to the Newton integrator, same scene",
                      run_mass_spring_adam},
      ExperimentEntry{"arm-reach", "Degrave et al. 2019 §3.2.1: an MLP drives a 4-DoF servo arm to a fixed point",
                      run_arm_reach},
      ExperimentEntry{"arm-reach-random",
                      "Degrave et al. 2019 §3.2.2: an MLP drives the arm to random targets, a batch of robots per update",
                      run_arm_reach_random,
                      "shac: a state-feedback policy trained by SHAC (Xu et al. 2022) in windows of 32 steps with a "
                      "TD(lambda) critic (issue #17 item 2)"},
      ExperimentEntry{"quadruped",
                      "Degrave et al. 2019 §3.3: an MLP on a 1.5 Hz clock learns a gait for their public code's quadruped",
                      run_quadruped,
                      "solid-spheres: spheres with a solid sphere's inertia 0.4 m r² (the code's: 0.4 m), "
                      "stiff-servos: servos that reach their target rate unless it takes more than 4 N·m"},
      ExperimentEntry{"quadruped-invented",
                      "Degrave et al. 2019 §3.3 on the quadruped we invented before the public code was read",
                      run_quadruped_invented},
      ExperimentEntry{"smoke-control",
                      "issue 21 (DiffTaichi/PhiFlow smoke): per-step force fields steer a buoyant smoke blob to a target",
                      run_smoke_control},
      ExperimentEntry{"flow-inverse",
                      "issue 21: recover an initial velocity field from a dye observed at three times, by L-BFGS",
                      run_flow_inverse},
      ExperimentEntry{"drag-shape",
                      "issue 21: the aspect ratio of a towed elliptic body of fixed area that meets the least drag",
                      run_drag_shape},
      ExperimentEntry{"breakout",
                      "de Avila Belbute-Peres et al. 2018 §4.3: learn a Breakout-like game's paddle speed, play with iLQR",
                      run_breakout,
                      "camera: every player sees the game through the engine's camera (160 x 200 pixels) and finds "
                      "the ball and the paddle by colour"},
  };
  return entries;
}

bool has_variant(const ExperimentEntry& entry, std::string_view variant) {
  std::string_view rest = entry.variants;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    const std::string_view item = rest.substr(0, comma);
    if (item.substr(0, item.find(':')) == variant) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 2);
  }
  return false;
}

}  // namespace diffphys::experiments
