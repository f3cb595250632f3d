// bench/fluid_bench.cpp — owns the fluid benchmarks (`diffphys_fluid_bench`; docs/fluids.md,
// docs/BENCHMARKS.md "Fluids"): the cost of one step per grid size and per cell, the pressure
// solve's PCG iterations against grid size, and a rollout's forward + backward against its
// forward.
//
//   BM_FluidStep/<N>            one fluid_step of an N² lid-driven cavity (Re 1000, lid 1 m/s,
//                               CFL 0.5) carrying a buoyant smoke scalar, MacCormack advection,
//                               backward-Euler viscosity, pressure tolerance 1e-10; the flow is
//                               first developed for 20 steps (untimed). Counter: PCG iterations
//                               per step (time per cell = time / cells).
//   BM_FluidRollout/<N>/<phase> 20 steps of the same flow: run (forward, states and u* stored)
//                               and run_backward (+ FluidRollout::backward of a loss on the
//                               final smoke and velocity). backward/forward = run_backward / run.
//   BM_FluidLongRollout/<T>/<MiB>  T = 1,000 steps of the 64² flow, run + backward, with a memory
//                               budget of 256 MiB (the default: everything fits) or 16 MiB (a
//                               state every ⌈√T⌉ steps, segments re-run). Counters: the
//                               checkpoint interval, the MiB the run kept; one iteration.
// Times are CPU times.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "diffphys/fluid.hpp"
#include "diffphys/fluid_rollout.hpp"

namespace {

using namespace diffphys::fluid;

struct DevelopedFlow {
  FluidBuild built;
  FluidState state;
};

DevelopedFlow developed_cavity(int cells) {
  FluidSpec spec;
  spec.nx = spec.ny = cells;
  spec.spacing = 1.0 / cells;
  spec.dt = 0.5 / cells;
  spec.viscosity = 1e-3;
  spec.scalar_count = 1;
  spec.buoyancy = {1.0};
  spec.walls[static_cast<int>(Side::Top)].tangential_velocity = 1.0;
  DevelopedFlow flow{build_fluid(spec), {}};
  const FluidModel& model = flow.built.model;
  flow.state = flow.built.state;
  for (int j = 0; j < cells; ++j)
    for (int i = 0; i < cells; ++i) {
      const double x = (i + 0.5) / cells - 0.5, y = (j + 0.5) / cells - 0.25;
      flow.state.scalars[j * cells + i] = std::exp(-(x * x + y * y) / 0.01);
    }
  FluidWorkspace workspace(model);
  FluidState next = flow.state;
  for (int t = 0; t < 20; ++t) {
    fluid_step(model, flow.built.params, flow.state, {}, next, workspace);
    std::swap(flow.state, next);
  }
  return flow;
}

void BM_FluidStep(benchmark::State& state) {
  const int cells = static_cast<int>(state.range(0));
  const DevelopedFlow flow = developed_cavity(cells);
  const FluidModel& model = flow.built.model;
  FluidWorkspace workspace(model);
  FluidState next = flow.state;
  long iterations = 0, steps = 0;
  for (auto _ : state) {
    const FluidStepStatus status = fluid_step(model, flow.built.params, flow.state, {}, next, workspace);
    iterations += status.pressure_iterations;
    ++steps;
    benchmark::DoNotOptimize(next.velocities.data());
  }
  state.counters["cells"] = static_cast<double>(model.cell_count());
  state.counters["pcg_iterations"] = static_cast<double>(iterations) / static_cast<double>(steps);
}

void BM_FluidRollout(benchmark::State& state) {
  const int cells = static_cast<int>(state.range(0));
  const bool backward = state.range(1) == 1;
  constexpr int kSteps = 20;
  const DevelopedFlow flow = developed_cavity(cells);
  const FluidModel& model = flow.built.model;
  FluidRollout rollout(model, flow.built.params);
  for (auto _ : state) {
    rollout.run(flow.state, {}, kSteps);
    if (backward) {
      const FluidGradients gradients =
          rollout.backward([&](int t, const FluidState& s, std::span<double> dL_du, std::span<double> dL_ds) {
            if (t != kSteps) return;
            for (std::size_t k = 0; k < s.scalars.size(); ++k) dL_ds[k] += 2.0 * s.scalars[k];
            for (std::size_t k = 0; k < s.velocities.size(); ++k) dL_du[k] += s.velocities[k];
          });
      benchmark::DoNotOptimize(gradients.params.data());
    }
  }
  state.counters["cells"] = static_cast<double>(model.cell_count());
  state.counters["stored_MiB"] = static_cast<double>(rollout.stored_bytes()) / (1 << 20);
  state.SetLabel(backward ? "run_backward" : "run");
}

void BM_FluidLongRollout(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  const DevelopedFlow flow = developed_cavity(64);
  FluidRolloutOptions options;
  options.memory_budget = static_cast<std::size_t>(state.range(1)) << 20;
  FluidRollout rollout(flow.built.model, flow.built.params, options);
  for (auto _ : state) {
    rollout.run(flow.state, {}, steps);
    const FluidGradients gradients =
        rollout.backward([&](int t, const FluidState& s, std::span<double>, std::span<double> dL_ds) {
          if (t != steps) return;
          for (std::size_t k = 0; k < s.scalars.size(); ++k) dL_ds[k] += 2.0 * s.scalars[k];
        });
    benchmark::DoNotOptimize(gradients.params.data());
  }
  state.counters["checkpoint_interval"] = rollout.checkpoint_interval();
  state.counters["stored_MiB"] = static_cast<double>(rollout.stored_bytes()) / (1 << 20);
}

void register_benchmarks() {
  benchmark::RegisterBenchmark("BM_FluidStep", BM_FluidStep)
      ->Arg(32)
      ->Arg(64)
      ->Arg(128)
      ->Arg(256)
      ->Arg(512)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FluidRollout", BM_FluidRollout)
      ->Args({64, 0})
      ->Args({64, 1})
      ->Args({256, 0})
      ->Args({256, 1})
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FluidLongRollout", BM_FluidLongRollout)
      ->Args({1000, 256})
      ->Args({1000, 16})
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
