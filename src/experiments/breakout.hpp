// experiments/breakout.hpp — `diffphys experiment breakout` (de Avila Belbute-Peres et al.
// 2018, §4.3, Fig. 6): a Breakout-like game built in the engine (breakout_game.hpp); the
// agent learns its model's paddle speed from random-action play by gradient descent through
// the engine (breakout_learning.hpp), then plays with iLQR MPC on the learned model
// (breakout_control.hpp), scored against a random and a hand-written policy and against the
// same MPC on the model before learning. docs/EXPERIMENTS.md ("breakout").
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

ExperimentResult run_breakout(const ExperimentOptions& options);

}  // namespace diffphys::experiments
