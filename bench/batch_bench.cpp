// bench/batch_bench.cpp — owns the many-worlds benchmark (`diffphys_batch_bench`): B = 8
// copies of the Degrave arm (bench_models.hpp), each a 250-step rollout with its own servo
// targets, run (and, for diffphys, differentiated) in one call on 1 and 2 threads, and
// MuJoCo stepping the same 8 worlds (its arm, one mjData per world) on 1 and 2 threads. The
// figure is each engine's speed-up of 2 threads over 1 (wall time; docs/BENCHMARKS.md, "Many
// worlds at once").
//
//   BM_WorldBatch/<threads>/<backward>   WorldBatch::run (+ backward with a loss on every state)
//   BM_MujocoBatch/<threads>             mj_step × 250 in each of 8 mjData, worlds split over threads
#include <benchmark/benchmark.h>

#include <cmath>
#include <thread>
#include <vector>

#include "diffphys/world_batch.hpp"
#include "diffphys_scenes.hpp"

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
#include <memory>

#include "mujoco_scenes.hpp"
#endif

namespace {

using namespace diffphys;

constexpr int kWorlds = 8;
constexpr int kSteps = 250;

void world_batch(benchmark::State& state) {
  const World world("arm", "<bench>", bench::build_arm_scene(), std::nullopt);
  WorldBatchOptions options;
  options.threads = static_cast<int>(state.range(0));
  const bool backward = state.range(1) != 0;
  WorldBatch batch(world, kWorlds, options);
  const WorldLayout& layout = world.layout();
  const std::vector<double> x0 = pack_state(world, world.initial_state());
  std::vector<double> states, controls;
  for (int b = 0; b < kWorlds; ++b) {
    states.insert(states.end(), x0.begin(), x0.end());
    for (int t = 0; t < kSteps; ++t)
      for (int a = 0; a < layout.control_count; ++a) controls.push_back(0.4 * std::sin(0.01 * t + a + 0.7 * b));
  }
  std::vector<double> state_gradients(static_cast<std::size_t>(kWorlds) * (kSteps + 1) * static_cast<std::size_t>(layout.tangent_size), 1e-3);
  std::vector<double> dx0(static_cast<std::size_t>(kWorlds * layout.tangent_size));
  std::vector<double> du(controls.size());
  std::vector<double> dtheta(static_cast<std::size_t>(kWorlds * layout.param_count));
  for (auto _ : state) {
    batch.run(states, controls, {}, kSteps);
    if (backward) batch.backward(state_gradients, dx0, du, dtheta);
    benchmark::DoNotOptimize(dx0.data());
  }
  state.counters["worlds"] = kWorlds;
  state.counters["steps"] = kSteps;
}
BENCHMARK(world_batch)->Name("BM_WorldBatch")->ArgsProduct({{1, 2}, {0, 1}})->UseRealTime()->Unit(benchmark::kMillisecond);

#ifdef DIFFPHYS_BENCH_HAVE_MUJOCO
void mujoco_batch(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const std::string text = bench::arm_mjcf();
  std::vector<std::unique_ptr<bench::MujocoWorld>> worlds;
  for (int b = 0; b < kWorlds; ++b) worlds.push_back(std::make_unique<bench::MujocoWorld>(text));
  const auto run_world = [&](int b) {
    mjModel* model = worlds[static_cast<std::size_t>(b)]->model();
    mjData* data = worlds[static_cast<std::size_t>(b)]->data();
    mj_resetData(model, data);
    for (int t = 0; t < kSteps; ++t) {
      for (int a = 0; a < model->nu; ++a) data->ctrl[a] = 0.4 * std::sin(0.01 * t + a + 0.7 * b);
      mj_step(model, data);
    }
  };
  for (auto _ : state) {
    std::vector<std::thread> helpers;
    for (int k = 1; k < threads; ++k)
      helpers.emplace_back([&, k] {
        for (int b = k; b < kWorlds; b += threads) run_world(b);
      });
    for (int b = 0; b < kWorlds; b += threads) run_world(b);
    for (std::thread& helper : helpers) helper.join();
  }
  state.counters["worlds"] = kWorlds;
  state.counters["steps"] = kSteps;
}
BENCHMARK(mujoco_batch)->Name("BM_MujocoBatch")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
#endif

}  // namespace

BENCHMARK_MAIN();
