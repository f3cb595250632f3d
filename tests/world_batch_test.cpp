// tests/world_batch_test.cpp — many worlds at once (diffphys/world_batch.hpp): every world's
// states and gradients are the bits of a lone WorldRollout with its inputs, for 1, 2 and 3
// threads, on a rigid scene with contacts and a soft scene; bad sizes and a failing world are
// refused by name; the thread pool runs every index once per loop over many reuses and
// rethrows the lowest failing index.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>

#include "batch/thread_pool.hpp"
#include "diffphys/error.hpp"
#include "diffphys/world_batch.hpp"

namespace diffphys {
namespace {

std::string batch_example(const std::string& relative) { return std::string(test_paths::source_dir()) + "/examples/" + relative; }

struct BatchInputs {
  std::vector<double> states, controls, params, state_gradients;
};

// B worlds with varied initial states (a velocity kick), parameters (gravity scaled) and
// controls, and a loss on every state.
WorldBatchOptions threads(int count) {
  WorldBatchOptions options;
  options.threads = count;
  return options;
}

BatchInputs varied_inputs(const World& world, int worlds, int steps) {
  const WorldLayout& layout = world.layout();
  BatchInputs in;
  const std::vector<double> x0 = pack_state(world, world.initial_state());
  const std::vector<double> theta = world.default_params().values;
  const NamedSlice& gravity = WorldLayout::find(layout.params, world.has_rigid() ? "gravity" : "soft/gravity", "parameter");
  for (int b = 0; b < worlds; ++b) {
    std::vector<double> x = x0;
    // A velocity kick: ω_z of every rigid body but the world, v_z of every soft node.
    const auto soft = static_cast<std::size_t>(layout.soft_state_offset);
    for (std::size_t i = 25; i < soft; i += 13) x[i] += 0.05 * (b + 1);
    if (world.has_soft())
      for (std::size_t i = soft + static_cast<std::size_t>(world.soft->model.dof_count()) + 2; i < x.size(); i += 3) x[i] += 0.05 * (b + 1);
    in.states.insert(in.states.end(), x.begin(), x.end());
    std::vector<double> p = theta;
    for (int k = 0; k < 3; ++k) p[static_cast<std::size_t>(gravity.offset + k)] *= 1.0 + 0.1 * b;
    in.params.insert(in.params.end(), p.begin(), p.end());
    for (int t = 0; t < steps; ++t)
      for (int c = 0; c < layout.control_count; ++c) in.controls.push_back(0.01 * std::sin(0.3 * t + c + b));
    for (int t = 0; t <= steps; ++t)
      for (int k = 0; k < layout.tangent_size; ++k) in.state_gradients.push_back(std::cos(0.7 * k + 0.1 * t + b));
  }
  return in;
}

void expect_batch_matches_lone_rollouts(const World& world, int worlds, int steps) {
  const WorldLayout& layout = world.layout();
  const BatchInputs in = varied_inputs(world, worlds, steps);
  const auto tangent = static_cast<std::size_t>(layout.tangent_size);
  const auto state_size = static_cast<std::size_t>(layout.state_size);
  const auto per_controls = static_cast<std::size_t>(steps * layout.control_count);
  const auto params = static_cast<std::size_t>(layout.param_count);
  // Lone rollouts.
  std::vector<double> states, dx0, du, dtheta;
  for (int b = 0; b < worlds; ++b) {
    const auto i = static_cast<std::size_t>(b);
    WorldParams p{std::vector<double>(in.params.begin() + static_cast<std::ptrdiff_t>(i * params),
                                      in.params.begin() + static_cast<std::ptrdiff_t>((i + 1) * params))};
    WorldRollout rollout(world, p);
    rollout.run(unpack_state(world, std::span<const double>(in.states).subspan(i * state_size, state_size)),
                std::span<const double>(in.controls).subspan(i * per_controls, per_controls), steps);
    for (int t = 0; t <= steps; ++t) {
      const std::vector<double> x = pack_state(world, rollout.state(t));
      states.insert(states.end(), x.begin(), x.end());
    }
    const WorldGradients g = rollout.backward([&](int t, const WorldState&, WorldStateGradient& gradient) {
      for (std::size_t k = 0; k < tangent; ++k)
        gradient.all[k] += in.state_gradients[(i * static_cast<std::size_t>(steps + 1) + static_cast<std::size_t>(t)) * tangent + k];
    });
    dx0.insert(dx0.end(), g.initial_state.begin(), g.initial_state.end());
    du.insert(du.end(), g.controls.begin(), g.controls.end());
    dtheta.insert(dtheta.end(), g.params.begin(), g.params.end());
  }
  for (const int thread_count : {1, 2, 3}) {
    WorldBatch batch(world, worlds, threads(thread_count));
    // Twice: the second run reuses every world's rollout.
    for (int repeat = 0; repeat < 2; ++repeat) {
      batch.run(in.states, in.controls, in.params, steps);
      EXPECT_EQ(batch.states(), states) << thread_count << " threads";
      std::vector<double> got_dx0(dx0.size()), got_du(du.size()), got_dtheta(dtheta.size());
      batch.backward(in.state_gradients, got_dx0, got_du, got_dtheta);
      EXPECT_EQ(got_dx0, dx0) << thread_count << " threads";
      EXPECT_EQ(got_du, du) << thread_count << " threads";
      EXPECT_EQ(got_dtheta, dtheta) << thread_count << " threads";
    }
  }
  // The worlds differ (else the comparison above would not show rows landing in the wrong world).
  EXPECT_NE(std::vector<double>(dx0.begin(), dx0.begin() + static_cast<std::ptrdiff_t>(tangent)),
            std::vector<double>(dx0.begin() + static_cast<std::ptrdiff_t>(tangent), dx0.begin() + static_cast<std::ptrdiff_t>(2 * tangent)));
}

TEST(WorldBatch, RigidWorldsWithContactAreLoneRollouts) {
  expect_batch_matches_lone_rollouts(load_world(batch_example("scenes/newtons_cradle.json")), 5, 40);
}

TEST(WorldBatch, ServoWorldsAreLoneRollouts) {
  expect_batch_matches_lone_rollouts(load_world(batch_example("scenes/servo_arm.json")), 4, 30);
}

TEST(WorldBatch, SoftWorldsAreLoneRollouts) {
  expect_batch_matches_lone_rollouts(load_world(batch_example("soft/mass_spring.json")), 3, 10);
}

// Soft bodies with a larger mesh, whose Hessian factorisation has supernodes (CHOLMOD calls
// BLAS there): with two soft steps on two threads, Debian's openblas-serial gave wrong factors
// — states off by 1e-11 (Newton hid it), gradients by up to 40 % — until the calls into
// CHOLMOD were serialised (soft/sparse_cholesky.cpp). The mass-spring above has no supernodes.
TEST(WorldBatch, SoftWorldsWithSupernodesAreLoneRollouts) {
  expect_batch_matches_lone_rollouts(load_world(batch_example("soft/hanging_beam.json")), 3, 4);
}

// A world of both parts, stepped by the world's schedule in each of the batch's rollouts.
TEST(WorldBatch, CoupledWorldsAreLoneRollouts) {
  expect_batch_matches_lone_rollouts(load_world(batch_example("soft/cloth_on_pendulum.json")), 3, 4);
}

TEST(WorldBatch, RefusesBadSizesAndNamesTheFailingWorld) {
  const World world = load_world(batch_example("scenes/pendulum.json"));
  WorldBatch batch(world, 3, threads(2));
  const std::vector<double> x0 = pack_state(world, world.initial_state());
  std::vector<double> states;
  for (int b = 0; b < 3; ++b) states.insert(states.end(), x0.begin(), x0.end());
  EXPECT_THROW(batch.run(std::span<const double>(states).first(x0.size()), {}, {}, 5), Error);
  std::vector<double> params;
  for (int b = 0; b < 3; ++b) {
    const std::vector<double> p = world.default_params().values;
    params.insert(params.end(), p.begin(), p.end());
  }
  params[static_cast<std::size_t>(2 * world.layout().param_count + WorldLayout::find(world.layout().params, "gravity", "parameter").offset)] =
      std::nan("");
  try {
    batch.run(states, {}, params, 5);
    FAIL() << "a NaN parameter in world 2 was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("world 2: world rollout: parameter 'gravity'[0] must be finite"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(WorldBatch(world, 0), Error);
  EXPECT_THROW(WorldBatch(world, 2, threads(0)), Error);
}

TEST(ThreadPool, RunsEveryIndexOnceAcrossManyLoopsAndRethrowsTheLowestFailure) {
  batch::ThreadPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  for (int loop = 0; loop < 500; ++loop) {
    const int count = 1 + loop % 17;
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
    pool.parallel_for(count, [&](int i) { seen[static_cast<std::size_t>(i)].fetch_add(1); });
    for (const std::atomic<int>& s : seen) ASSERT_EQ(s.load(), 1) << "loop " << loop;
  }
  std::atomic<int> ran = 0;
  try {
    pool.parallel_for(20, [&](int i) {
      ran.fetch_add(1);
      if (i == 7 || i == 13) throw Error(message("index ", i));
    });
    FAIL() << "no exception";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "index 7");
  }
  EXPECT_EQ(ran.load(), 20);
}

}  // namespace
}  // namespace diffphys
