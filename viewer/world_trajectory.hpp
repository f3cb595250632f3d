// viewer/world_trajectory.hpp — the trajectory file of a simulated world, as the replay page
// reads it (docs/scene-format.md, "Trajectory files"). Each part of the world writes its own
// document: the rigid bodies "diffphys-trajectory" (TrajectoryRecorder's frames with contacts
// and energies), the soft bodies "diffphys-soft-trajectory" (node positions, Newton's status
// and the energies per frame; topology and obstacles once). A world of one part writes that
// part's document; a world of several writes {"format": "diffphys-world-trajectory",
// "version": 1, "name", "dt", "parts": {"rigid": …, "soft": …}}, each part's document
// recorded once per world step. A kind of part that joins the world adds its writer and its
// line in kTrajectoryWriters (world_trajectory.cpp, by the kind's registered name) and its
// reader to the replay page's table
// (viewer/src/trajectory.js).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diffphys/world.hpp"
#include "diffphys/world_simulator.hpp"

namespace diffphys::viewer {

// One part's trajectory document, recorded frame by frame.
class PartTrajectory {
 public:
  virtual ~PartTrajectory() = default;
  virtual std::string kind() const = 0;  // the key under "parts"
  // Frame `step`: the simulator's state (status null for the initial state).
  virtual void record(long long step, const WorldSimulator& simulator, const WorldStepStatus* status) = 0;
  virtual int frame_count() const = 0;
  virtual std::string document() const = 0;  // a JSON object
};

class WorldTrajectoryRecorder {
 public:
  // `world` must outlive the recorder; the parameters are copied.
  WorldTrajectoryRecorder(const World& world, const WorldParams& params);
  ~WorldTrajectoryRecorder();
  WorldTrajectoryRecorder(const WorldTrajectoryRecorder&) = delete;
  WorldTrajectoryRecorder& operator=(const WorldTrajectoryRecorder&) = delete;

  // Frame 0: the simulator's initial state (status null).
  void record(long long step, const WorldSimulator& simulator, const WorldStepStatus* status);
  int frame_count() const;
  // The whole document (what the replay page embeds) and the file's text (the same, ending in a newline).
  std::string document() const;
  std::string file_text() const;

 private:
  const World& world_;
  std::vector<std::unique_ptr<PartTrajectory>> parts_;
};

}  // namespace diffphys::viewer
