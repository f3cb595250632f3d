// bench/soft_bench.cpp — owns the soft-body benchmarks (`diffphys_soft_bench`): the cost of
// one Newton step of implicit Euler against the number of tetrahedra, and the cost of the
// implicit-function-theorem backward pass against the forward pass.
//
//   BM_SoftNewtonStep/<cx>/<cy>/<cz>  one soft_step (from rest) of a clamped Neo-Hookean
//                                 beam sagging under gravity, cx × cy × cz cubes of 6 tets:
//                                 960, 9,600 and (only with DIFFPHYS_BENCH_SLOW=1) 99,840
//                                 tets (the "tets" counter).
//   BM_SoftRollout/<phase>/<records>  a 20-step rollout of the ~1k-tet beam: run (forward,
//                                 with the states stored) and run_backward (+ SoftRollout::
//                                 backward for dL/dθ, dL/dx_0, dL/dv_0, dL/df_t), with each
//                                 step's Cholesky factor kept by the forward pass (records 1,
//                                 the default) or not (0: backward refactorises at each x*).
//                                 backward/forward = run_backward / run − 1.
// Times are CPU times; docs/BENCHMARKS.md ("Soft bodies") records a run.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "diffphys/soft.hpp"
#include "diffphys/soft_mesh.hpp"
#include "diffphys/soft_rollout.hpp"

namespace {

using namespace diffphys::soft;

SoftBuild make_beam(int cells_x, int cells_y, int cells_z) {
  SoftSpec spec;
  spec.dt = 0.01;
  spec.tet_materials = {{"rubber", ElasticModel::NeoHookean, 1e6, 0.3, 1000.0}};
  add_tet_box(spec, {0, 0, 0}, {1.0, 0.2, 0.1}, {cells_x, cells_y, cells_z}, 0);
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    if (spec.nodes[i][0] == 0.0) spec.pinned.push_back(static_cast<int>(i));
  return build_soft(spec);
}

void BM_SoftNewtonStep(benchmark::State& state) {
  const SoftBuild beam = make_beam(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                                   static_cast<int>(state.range(2)));
  SoftWorkspace workspace(beam.model);
  SoftState current = beam.state, next;
  int iterations = 0;
  for (auto _ : state) {
    const SoftStepStatus status = soft_step(beam.model, beam.params, current, {}, next, workspace);
    iterations += status.iterations;
    benchmark::DoNotOptimize(next.positions.data());
  }
  state.counters["tets"] = static_cast<double>(beam.model.tets.size());
  state.counters["newton_iterations"] = benchmark::Counter(iterations, benchmark::Counter::kAvgIterations);
}

void BM_SoftRollout(benchmark::State& state) {
  const bool backward = state.range(0) == 1;
  const bool records = state.range(1) == 1;
  const SoftBuild beam = make_beam(20, 4, 2);
  constexpr int kSteps = 20;
  SoftRolloutOptions options;
  options.keep_step_records = records;
  SoftRollout rollout(beam.model, beam.params, options);
  for (auto _ : state) {
    rollout.run(beam.state, {}, kSteps);
    if (backward) {
      const SoftGradients gradients = rollout.backward([](int t, const SoftState& s, std::span<double> dx, std::span<double>) {
        if (t == kSteps)
          for (std::size_t k = 0; k < s.positions.size(); ++k) dx[k] += 2.0 * s.positions[k];
      });
      benchmark::DoNotOptimize(gradients.params.data());
    }
  }
  state.counters["tets"] = static_cast<double>(beam.model.tets.size());
  state.SetLabel(std::string(backward ? "run_backward" : "run") + (records ? ", factors kept" : ", refactorised"));
}

void register_benchmarks() {
  benchmark::RegisterBenchmark("BM_SoftNewtonStep", BM_SoftNewtonStep)
      ->Args({20, 4, 2})  // 960 tets
      ->Args({40, 8, 5})  // 9,600 tets
      ->Unit(benchmark::kMillisecond);
  if (std::getenv("DIFFPHYS_BENCH_SLOW") != nullptr)  // 99,840 tets: ~2 minutes of CPU per step
    benchmark::RegisterBenchmark("BM_SoftNewtonStep", BM_SoftNewtonStep)
        ->Args({80, 16, 13})
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_SoftRollout", BM_SoftRollout)
      ->Args({0, 1})
      ->Args({1, 1})
      ->Args({0, 0})
      ->Args({1, 0})
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
