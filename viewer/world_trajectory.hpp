// viewer/world_trajectory.hpp — the trajectory file of a simulated world, as the replay page
// reads it (docs/scene-format.md, "Trajectory files"; docs/soft-bodies.md): the format follows
// what the world holds — "diffphys-trajectory" (rigid bodies: TrajectoryRecorder's frames with
// contacts and energies), "diffphys-soft-trajectory" (node positions, Newton's status and the
// energies per frame; topology and obstacles once), "diffphys-coupled-trajectory" (node
// positions and body poses per frame; the rigid model block, topology and obstacles once).
// A part that joins the world adds its frame fields here, where the viewer's formats live.
#pragma once

#include <memory>
#include <string>

#include "diffphys/world.hpp"
#include "diffphys/world_simulator.hpp"

namespace diffphys::viewer {

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
  struct Frames;
  std::unique_ptr<Frames> frames_;
};

}  // namespace diffphys::viewer
