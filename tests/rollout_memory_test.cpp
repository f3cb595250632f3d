// tests/rollout_memory_test.cpp — long horizons fit in memory: a 100,000-step rollout of the
// 10-link chain is differentiated under 200 MB of peak resident memory (the gradients issue's
// requirement), by checkpointing; the checkpoint spacing follows the memory budget and leaves
// room for one segment's step records; per-step logs that would not fit in the budget are
// summarised without changing the gradient.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "adjoint/checkpoint_spacing.hpp"

#include "diffphys/rollout.hpp"
#include "test_scenes.hpp"

// Under AddressSanitizer (make sanitize) resident memory also holds its shadow memory and the
// quarantine of freed blocks (measured: 468 MB for this test), so the bound is not checked.
#if defined(__SANITIZE_ADDRESS__)
#define DIFFPHYS_UNDER_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DIFFPHYS_UNDER_ADDRESS_SANITIZER 1
#endif
#endif

namespace diffphys {
namespace {

double peak_resident_megabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports kilobytes
}

TEST(RolloutMemory, CheckpointSpacingFollowsTheBudget) {
  const Scene scene = testing::hinge_chain(10, 0.1, 0.1, 0.8).build();
  RolloutOptions roomy;
  Rollout all(scene.model, scene.params, roomy);
  all.run(scene.state, {}, 1000);
  EXPECT_EQ(all.checkpoint_interval(), 1);
  RolloutOptions tight;
  tight.memory_budget = 64 * 1024;  // 64 KB: ~50 states of this chain
  Rollout sparse(scene.model, scene.params, tight);
  sparse.run(scene.state, {}, 1000);
  EXPECT_GE(sparse.checkpoint_interval(), 32);  // ⌈√1000⌉ = 32, or more to fit
  EXPECT_LE(sparse.stored_state_bytes(), tight.memory_budget);
}

// The spacing for segment records minimises (⌈T/k⌉ + 1)·S + k·(R + S) (checkpoints, then one
// segment's records and states): against every k by brute force, and 0 exactly when even the
// best k does not fit.
TEST(RolloutMemory, SegmentRecordSpacingTakesTheLeastMemory) {
  for (const int steps : {2, 10, 1000, 100000, 1000000})
    for (const std::size_t state : {std::size_t{300}, std::size_t{1250}})
      for (const std::size_t record : {std::size_t{2000}, std::size_t{30000}, std::size_t{900000}}) {
        const auto memory = [&](int k) {
          return (std::ceil(static_cast<double>(steps) / k) + 1) * static_cast<double>(state) +
                 k * static_cast<double>(record + state);
        };
        double least = std::numeric_limits<double>::infinity();
        for (int k = 1; k <= steps; ++k) least = std::min(least, memory(k));
        for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{256} << 20}) {
          SCOPED_TRACE(::testing::Message() << "T " << steps << " S " << state << " R " << record << " B " << budget);
          const int k = adjoint::checkpoint_spacing_with_records(steps, state, record, budget);
          if (least > static_cast<double>(budget)) {
            EXPECT_EQ(k, 0);
          } else {
            ASSERT_GT(k, 0);
            EXPECT_LE(memory(k), static_cast<double>(budget));
            // √ rounded to an integer: within a percent of the least (the ceiling makes it ragged).
            EXPECT_LE(memory(k), least * 1.01);
          }
        }
      }
}

// A bouncing ball (contacts open and close) differentiated twice: with room for every log, and
// with a budget that holds its states but not its per-step logs. The gradient is the same to
// the bit; the logs are summarised (contact changes counted, the largest |dL/dx_t|, the
// convergence), and statuses come back by recomputation.
TEST(RolloutMemory, PerStepLogsBeyondTheBudgetAreSummarisedAndRecomputed) {
  ModelBuilder builder;
  builder.dt = 2e-3;
  builder.add_ground_plane({0, 0, 1}, 0.0);
  BodySpec ball = testing::sphere_body("ball", {0, 0, 0.3}, 0.1, 1.0);
  ball.restitution = 0.6;
  ball.linear_velocity = {0.4, 0.0, 0.0};
  builder.add_body(ball);
  const Scene scene = builder.build();
  const int steps = 1500;
  const auto loss = [&](int t, const State&, std::span<double> out) {
    if (t % 100 == 0) {
      out[kStateTangentPerBody + 0] += 1.0;
      out[kStateTangentPerBody + 2] += 0.5;
      out[kStateTangentPerBody + 8] += 0.25;
    }
  };
  Rollout roomy(scene.model, scene.params);
  roomy.run(scene.state, {}, steps);
  const Gradients expected = roomy.backward(loss);
  ASSERT_TRUE(roomy.statuses_kept());
  ASSERT_GE(expected.health.contact_changes.size(), 4u);  // several bounces

  RolloutOptions tight;
  tight.memory_budget = 4 * steps * kRolloutLogBytesPerStep - 1;  // the logs just miss a quarter
  Rollout lean(scene.model, scene.params, tight);
  lean.run(scene.state, {}, steps);
  EXPECT_FALSE(lean.statuses_kept());
  const Gradients got = lean.backward(loss);
  EXPECT_EQ(got.initial_state, expected.initial_state);
  EXPECT_EQ(got.params, expected.params);
  EXPECT_FALSE(got.health.per_step_kept);
  EXPECT_TRUE(got.health.state_gradient_norm.empty());
  EXPECT_TRUE(got.health.stage_gain.empty());
  EXPECT_TRUE(got.health.contact_changes.empty());
  EXPECT_EQ(got.health.contact_change_count, static_cast<int>(expected.health.contact_changes.size()));
  EXPECT_EQ(got.health.largest_state_gradient_norm,
            *std::max_element(expected.health.state_gradient_norm.begin(), expected.health.state_gradient_norm.end()));
  EXPECT_EQ(got.health.largest_state_gradient_norm, expected.health.largest_state_gradient_norm);
  EXPECT_EQ(lean.converged(), roomy.converged());
  EXPECT_TRUE(lean.converged());
  for (const int t : {0, 1, 377, 1499}) {
    const StepStatus a = lean.status(t), b = roomy.statuses()[static_cast<std::size_t>(t)];
    EXPECT_EQ(a.iterations, b.iterations) << t;
    EXPECT_EQ(a.residual, b.residual) << t;
    EXPECT_EQ(a.contact_count, b.contact_count) << t;
    EXPECT_EQ(roomy.status(t).residual, b.residual) << t;
  }
  EXPECT_NE(testing::error_of([&] { (void)lean.statuses(); }).find("status(t)"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { (void)lean.status(steps); }).find("out of range"), std::string::npos);
}

TEST(RolloutMemory, HundredThousandStepChainDifferentiatesUnderTwoHundredMegabytes) {
  ModelBuilder builder = testing::hinge_chain(10, 0.1, 0.1, 0.8);
  builder.dt = 1e-3;
  const Scene scene = builder.build();
  const int steps = 100000;
  RolloutOptions options;
  options.memory_budget = std::size_t{64} << 20;  // the user's budget for stored states
  Rollout rollout(scene.model, scene.params, options);
  rollout.run(scene.state, {}, steps);
  const Gradients gradients = rollout.backward([&](int t, const State&, std::span<double> out) {
    if (t == steps) out[kStateTangentPerBody * 10 + 2] += 1.0;  // height of the last link at the end
  });
  EXPECT_EQ(gradients.health.first_non_finite_step, -1);
  EXPECT_GT(std::abs(gradients.param(scene.model, "gravity")[2]), 0.0);
#ifndef DIFFPHYS_UNDER_ADDRESS_SANITIZER
  EXPECT_LT(peak_resident_megabytes(), 200.0);
#else
  RecordProperty("peak_resident_megabytes_under_address_sanitizer", std::to_string(peak_resident_megabytes()));
#endif
}

}  // namespace
}  // namespace diffphys
