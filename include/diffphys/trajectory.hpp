// diffphys/trajectory.hpp — recording a simulated trajectory and writing it as JSON.
//
// Per recorded step: time, every body's position, orientation (w, x, y, z), linear and
// angular velocity, the contacts (bodies, point, normal, gap, impulses) and the solver
// status. Given the Params too, the file also carries a "model" block (every body with its
// shapes, sizes and local poses, the joints, gravity) and each frame's kinetic and
// potential energy, which is what the web viewer (docs/viewer.md) draws and plots; an
// optimisation may add its loss curve. The layout is documented in docs/scene-format.md
// ("Trajectory files").
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

class TrajectoryRecorder {
 public:
  // Without Params the file has no "model" block and no energies (the viewer then draws
  // each body as a marker). The model must outlive the recorder.
  explicit TrajectoryRecorder(const Model& model);
  // Keeps a copy of `params` (shape sizes, masses, gravity) for the model block and the
  // energies; throws Error if it does not match the model's layout.
  TrajectoryRecorder(const Model& model, const Params& params);
  ~TrajectoryRecorder();

  void record(const State& state, std::span<const Contact> contacts, const StepStatus& status);
  int frame_count() const;

  // A loss per iteration of an optimisation, written as the top-level "loss" array (the
  // viewer plots it). Throws Error on a non-finite value, naming its index.
  void set_loss_curve(std::span<const double> loss_per_iteration);

  // Writes {"format": ..., "name": ..., "dt": ..., "bodies": [names], "model": {...},
  // "loss": [...], "frames": [...]}; throws Error if the file cannot be written.
  void write(const std::filesystem::path& path) const;
  void write(std::ostream& out) const;

 private:
  struct Frames;
  const Model& model_;
  std::optional<Params> params_;  // empty: no model block, no energies
  std::vector<double> loss_curve_;
  std::unique_ptr<Frames> frames_;
};

}  // namespace diffphys
