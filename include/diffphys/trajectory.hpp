// diffphys/trajectory.hpp — recording a simulated trajectory and writing it as JSON.
//
// Per recorded step: time, every body's position, orientation (w, x, y, z), linear and
// angular velocity, the contacts (bodies, point, normal, gap, impulses) and the solver
// status. The layout is documented in docs/scene-format.md ("Trajectory files").
#pragma once

#include <filesystem>
#include <memory>
#include <span>

#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

class TrajectoryRecorder {
 public:
  explicit TrajectoryRecorder(const Model& model);
  ~TrajectoryRecorder();

  void record(const State& state, std::span<const Contact> contacts, const StepStatus& status);
  int frame_count() const;
  // Writes {"name": ..., "dt": ..., "bodies": [names], "frames": [...]}; throws Error if the
  // file cannot be written.
  void write(const std::filesystem::path& path) const;

 private:
  struct Frames;
  const Model& model_;
  std::unique_ptr<Frames> frames_;
};

}  // namespace diffphys
