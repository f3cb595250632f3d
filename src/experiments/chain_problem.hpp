// experiments/chain_problem.hpp — the hanging chain hit by a ball of de Avila Belbute-Peres
// et al. 2018, §4.1 (the scene of the public lcp-physics code, experiments/inference.py,
// carried into 3D and SI units), and its differentiable loss: the MSE of every body's
// planar pose against an observed trajectory, with dL/d(each link's mass) by BPTT. Used by
// `diffphys experiment chain-mass` and `chain-mass-scaling` (experiments/chain_mass.cpp)
// and by the landscape test (tests/chain_mass_landscape_test.cpp).
//
// The scene: box links 0.2 × 0.2 × 0.6 m hang in the x–z plane from a hinge on the world
// (axes along y), link i centred 0.5·i m below the first, neighbours joined at the middle of
// their 0.1 m overlap and not colliding with each other. A ball (r = 0.2 m, 1 kg) at the
// height of the last link, 2.5 m to the side, is pushed towards the chain by 15 N for the
// first 0.1 s. Friction 0.9, dt = 1/30 s, 10 s observed. Gravity acts on the links only
// (1 m/s²; the ball floats): the engine's gravity is global, so it is zero and each link
// carries the equivalent external force −m g ẑ (its `force` parameter), which follows the
// link's mass, as does its inertia (uniform density).
#pragma once

#include <array>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys::experiments {

inline constexpr int kChainObservedSteps = 300;  // 10 s at dt = 1/30 s
inline constexpr double kChainTrueMass = 7.0;    // kg, the chain-mass experiment's total
inline constexpr int kChainMassLinks = 10;       // links of the chain-mass experiment

// How the chain's contacts are modelled.
enum class ChainContacts {
  // The paper's: the complementarity formulation, Newton restitution 0.5 (links) and 1.0
  // (ball; a pair takes the larger). A bounce on a link (a body with joints) acts over its
  // whole step, so the loss jumps where a change of mass moves an impact across a step.
  Paper,
  // The convex formulation with impacts that do not bounce (restitution 0) and soft contact
  // rows (time constant 0.1 s, three steps; critically damped): every row's target is then
  // one continuous function of the state (no floor, no velocity target that switches on),
  // and with speculative contacts no row appears with its force already on, so the loss is
  // continuous in the mass (docs/EXPERIMENTS.md, chain-mass).
  Continuous,
};

// The scene file of a chain of `links` links of `link_mass` kg each. speculative_factor is
// the solver's (model.hpp; 0 turns speculative contacts off).
std::string chain_scene_json(int links, double link_mass, ChainContacts contacts, double speculative_factor = 2.0);

// The chain, its two parameter sets (pushed for 3 steps, then coasting) and the MSE of the
// observations — every body's x and z in centimetres (the pixels of lcp-physics, so that the
// paper's learning rate and clip apply unchanged) and its angle about y in radians, over
// the 300 steps — for given link masses.
class ChainProblem {
 public:
  ChainProblem(int links, ChainContacts contacts, double speculative_factor = 2.0);

  int links() const { return links_; }
  const Scene& scene() const { return scene_; }

  // Forward only: the observations of steps 1 .. 300 (300 × 3·(links + 1)).
  std::vector<double> simulate(std::span<const double> masses);
  double mse(std::span<const double> simulated, std::span<const double> observed) const;
  // MSE against `observed` and its gradient with respect to every link's mass (BPTT).
  double loss_and_gradient(std::span<const double> masses, std::span<const double> observed,
                           std::span<double> dL_dmass);
  // The trajectory with these masses, for the viewer.
  void record(std::span<const double> masses, const std::filesystem::path& path);

 private:
  void set_masses(std::span<const double> masses);

  int links_;
  Scene scene_;
  Params push_params_, coast_params_;  // referenced by the rollouts
  Rollout push_, coast_;
  int observation_size_;
  std::vector<std::array<double, 3>> unit_inertia_;  // (links) principal moments per kg
  Workspace workspace_;
};

// The chain-mass experiment's loss (Continuous contacts, 10 links, observed at 7 kg) at each
// total mass, forward only.
std::vector<double> chain_mass_losses(std::span<const double> total_masses, double speculative_factor = 2.0);

}  // namespace diffphys::experiments
