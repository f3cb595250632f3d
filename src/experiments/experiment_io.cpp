// experiments/experiment_io.cpp — folders, CSV tables and trajectory recording for the
// experiments (experiments/experiment_io.hpp).
#include "experiments/experiment_io.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/trajectory.hpp"

namespace diffphys::experiments {

std::filesystem::path experiment_folder(const ExperimentOptions& options, std::string_view name) {
  const std::filesystem::path folder = std::filesystem::path(options.out_dir) / std::string(name);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) throw Error(message("cannot create the folder '", folder.string(), "': ", error.message()));
  return folder;
}

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream file(path, std::ios::binary);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!file) throw Error(message("cannot write '", path.string(), "'"));
}

CsvTable::CsvTable(std::initializer_list<std::string_view> columns) : column_count_(columns.size()) {
  for (const std::string_view column : columns) {
    if (!text_.empty()) text_ += ',';
    text_ += column;
  }
  text_ += '\n';
}

void CsvTable::add_row(std::initializer_list<double> values) {
  add_row(std::span<const double>(values.begin(), values.size()));
}

void CsvTable::add_row(std::span<const double> values) {
  if (values.size() != column_count_)
    throw Error(message("CSV row of ", values.size(), " values for ", column_count_, " columns"));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text_ += ',';
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, values[i]);
    text_.append(buffer, result.ptr);
  }
  text_ += '\n';
}

void CsvTable::write(const std::filesystem::path& path) const {
  write_text_file(path, text_);
}

namespace {

// The one recording loop: segment after segment of steps, controls from `controls_at`
// (which may leave them at zero).
void record_segments(const Model& model, std::span<const ParamsSegment> segments, const State& initial,
                     const std::function<void(int, const State&, std::span<double>)>& controls_at,
                     const std::filesystem::path& path) {
  if (segments.empty()) return;
  // With the first segment's parameters the file carries the model block (shapes, masses)
  // and energies, so `diffphys view` and the experiment command draw it (docs/viewer.md).
  TrajectoryRecorder recorder(model, *segments.front().params);
  Workspace workspace;
  State current = initial, next;
  std::vector<double> controls(static_cast<std::size_t>(model.actuator_count()), 0.0);
  recorder.record(current, {}, StepStatus{});
  int t = 0;
  for (const ParamsSegment& segment : segments)
    for (int k = 0; k < segment.steps; ++k, ++t) {
      if (controls_at) controls_at(t, current, controls);
      const StepStatus status = step(model, *segment.params, current, controls, next, workspace);
      std::swap(current, next);
      recorder.record(current, workspace.contacts(), status);
    }
  recorder.write(path);
}

}  // namespace

void record_trajectory(const Model& model, std::span<const ParamsSegment> segments, const State& initial,
                       const std::filesystem::path& path) {
  record_segments(model, segments, initial, {}, path);
}

void record_trajectory(const Model& model, const Params& params, const State& initial,
                       std::span<const double> controls, int steps, const std::filesystem::path& path) {
  const auto width = static_cast<std::size_t>(model.actuator_count());
  if (controls.size() != static_cast<std::size_t>(steps) * width)
    throw Error(message("record_trajectory: ", controls.size(), " controls for ", steps, " steps of ", width,
                        " actuators"));
  const ParamsSegment segment{&params, steps};
  record_segments(model, std::span(&segment, 1), initial,
                  [&](int t, const State&, std::span<double> out) {
                    const auto row = controls.subspan(static_cast<std::size_t>(t) * width, width);
                    std::copy(row.begin(), row.end(), out.begin());
                  },
                  path);
}

void record_trajectory(const Model& model, const Params& params, const State& initial, Controller& controller,
                       int steps, const std::filesystem::path& path) {
  const ParamsSegment segment{&params, steps};
  record_segments(model, std::span(&segment, 1), initial,
                  [&](int t, const State& state, std::span<double> controls) { controller.act(t, state, controls); },
                  path);
}

}  // namespace diffphys::experiments
