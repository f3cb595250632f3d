// tests/chain_mass_landscape_test.cpp — the chain-mass loss is continuous in the mass across
// 4.80–4.90 kg (experiments/chain_problem.hpp, Continuous contacts), where contacts found at
// whole steps made it jump (at 4.8515 kg with the paper's contacts, 4.868 and 4.892 kg with
// these contacts and the fixed margin alone).
//
// The test: on a grid of 1 g, no step of the loss between neighbours exceeds four times the
// median step (the slope varies by less than that here; a jump of a whole step's contact
// timing is hundreds of times larger), and across the largest step, ten times finer, the
// largest sub-step is at most 0.3 of it: a continuous loss's steps shrink with the grid, a
// jump's do not. The same test with speculative contacts off must find a jump, so that it can.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "experiments/chain_problem.hpp"

namespace diffphys::experiments {
namespace {

struct JumpTest {
  double largest_step = 0.0, median_step = 0.0, at_mass = 0.0;
  double largest_sub_step = 0.0;  // ten times finer, across the largest step
  bool continuous() const { return largest_step <= 4.0 * median_step && largest_sub_step <= 0.3 * largest_step; }
};

JumpTest jump_test(double speculative_factor) {
  std::vector<double> masses;
  for (int k = 0; k <= 100; ++k) masses.push_back(4.80 + 0.001 * k);
  const std::vector<double> losses = chain_mass_losses(masses, speculative_factor);
  JumpTest result;
  std::vector<double> steps;
  for (std::size_t k = 0; k + 1 < losses.size(); ++k) {
    const double step = std::abs(losses[k + 1] - losses[k]);
    steps.push_back(step);
    if (step > result.largest_step) {
      result.largest_step = step;
      result.at_mass = masses[k];
    }
  }
  std::sort(steps.begin(), steps.end());
  result.median_step = steps[steps.size() / 2];
  std::vector<double> fine;
  for (int k = 0; k <= 10; ++k) fine.push_back(result.at_mass + 0.0001 * k);
  const std::vector<double> fine_losses = chain_mass_losses(fine, speculative_factor);
  for (std::size_t k = 0; k + 1 < fine_losses.size(); ++k)
    result.largest_sub_step = std::max(result.largest_sub_step, std::abs(fine_losses[k + 1] - fine_losses[k]));
  return result;
}

TEST(ChainMassLandscape, TheLossIsContinuousAcrossTheFormerJump) {
  const JumpTest with = jump_test(2.0);
  EXPECT_TRUE(with.continuous()) << "largest step " << with.largest_step << " at " << with.at_mass
                                 << " kg, median step " << with.median_step << ", largest of its ten sub-steps "
                                 << with.largest_sub_step;
  // The control: the fixed margin alone finds the ball's contacts at whole steps.
  const JumpTest without = jump_test(0.0);
  EXPECT_FALSE(without.continuous()) << "largest step " << without.largest_step << " at " << without.at_mass
                                     << " kg, median step " << without.median_step;
  EXPECT_GT(without.largest_step, 10.0 * with.largest_step);
}

}  // namespace
}  // namespace diffphys::experiments
