// experiments/cartpole_ilqr.hpp — `diffphys experiment cartpole-ilqr` (de Avila Belbute-Peres
// et al. 2018, §4.3): learn a diffphys cart–pole (two articulated boxes) from random-action
// trajectories of a "true" cart–pole given by the classic equations of motion (Barto, Sutton
// & Anderson 1983, with continuous force), then balance the true system with iLQR MPC
// (horizon 5) on the learned model. The true system is exposed here for its own tests.
#pragma once

#include <array>

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// The classic cart–pole (Barto et al. 1983, as in OpenAI Gym's CartPole without friction):
// a pole of half-length l (uniform rod, inertia m l²/3 about its centre) hinged on a cart
// pushed by a horizontal force F. State s = (x, ẋ, θ, θ̇), θ from upright, positive when the
// pole's tip leans towards +x.
struct TrueCartPole {
  double gravity = 9.8;      // m/s²
  double cart_mass = 1.0;    // kg
  double pole_mass = 0.1;    // kg
  double half_length = 0.5;  // m
  double time_step = 0.02;   // s, one control step (Gym's τ)
  int substeps = 10;         // classic RK4 steps per control step (its own small integrator)

  using StateVector = std::array<double, 4>;
  // ṡ for force F (Barto et al. 1983 with the friction terms dropped, as in Gym).
  StateVector derivative(const StateVector& s, double force) const;
  // s after one control step with F held (RK4 with `substeps` steps).
  StateVector step(const StateVector& s, double force) const;
  // Mechanical energy (J): conserved when F = 0 — the integrator's check.
  double energy(const StateVector& s) const;
};

ExperimentResult run_cartpole_ilqr(const ExperimentOptions& options);

}  // namespace diffphys::experiments
