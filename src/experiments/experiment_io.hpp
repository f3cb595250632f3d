// experiments/experiment_io.hpp — what every experiment writes under --out: its folder, CSV
// curves, the scene it simulated and the recorded trajectory of its final result (the
// `diffphys simulate` trajectory format, docs/scene-format.md), plus a wall-clock stopwatch.
#pragma once

#include <chrono>
#include <ctime>
#include <filesystem>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/state.hpp"
#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// <out_dir>/<name>, created if missing.
std::filesystem::path experiment_folder(const ExperimentOptions& options, std::string_view name);

// Writes `text` to `path`; throws Error naming the path if it cannot.
void write_text_file(const std::filesystem::path& path, std::string_view text);

// A CSV file built row by row: a header line, then numbers printed exactly (shortest form).
class CsvTable {
 public:
  explicit CsvTable(std::initializer_list<std::string_view> columns);
  void add_row(std::initializer_list<double> values);
  void add_row(std::span<const double> values);
  void write(const std::filesystem::path& path) const;

 private:
  std::size_t column_count_;
  std::string text_;
};

// Part of a recorded run: `steps` steps with these parameter values (e.g. a push force that
// acts for the first few steps only).
struct ParamsSegment {
  const Params* params;
  int steps;
};

// Simulates the segments one after the other from `initial` (actuators at zero control) and
// writes every step (state, contacts, solver status) as a trajectory file.
void record_trajectory(const Model& model, std::span<const ParamsSegment> segments, const State& initial,
                       const std::filesystem::path& path);

// Simulates `steps` steps from `initial` with the given controls (steps × actuators,
// row-major) and writes them as a trajectory file.
void record_trajectory(const Model& model, const Params& params, const State& initial,
                       std::span<const double> controls, int steps, const std::filesystem::path& path);

// Simulates `steps` steps from `initial` with the controls of `controller` (a trained
// policy, closed loop) and writes them as a trajectory file.
void record_trajectory(const Model& model, const Params& params, const State& initial, Controller& controller,
                       int steps, const std::filesystem::path& path);

// Wall time and this process's CPU time since construction. The machine the figures are
// recorded on is shared, so both are reported: wall time is what the papers quote, CPU time
// is what the run cost.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()), cpu_start_(std::clock()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  double cpu_seconds() const { return static_cast<double>(std::clock() - cpu_start_) / CLOCKS_PER_SEC; }

 private:
  std::chrono::steady_clock::time_point start_;
  std::clock_t cpu_start_;
};

}  // namespace diffphys::experiments
