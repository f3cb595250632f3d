// viewer/camera_film.hpp — what a world's cameras see, filmed beside its trajectory:
// `diffphys simulate --cameras` renders every camera of the scene (WorldCamera,
// diffphys/world_camera.hpp) at each recorded frame and adds the frames, as PNG data URIs, under
// "cameras" of the trajectory document, where the replay page shows them beside its 3D view
// (docs/viewer.md, docs/scene-format.md "Trajectory files").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/world.hpp"
#include "diffphys/world_camera.hpp"
#include "diffphys/world_simulator.hpp"

namespace diffphys::viewer {

class CameraFilm {
 public:
  // Every camera of `world`, with its scene look; `world` must outlive the film, θ is copied.
  // Throws Error when the world has no cameras or no rigid part for them to draw.
  CameraFilm(const World& world, const WorldParams& params);

  // One frame of every camera: the simulator's current state.
  void record(const WorldSimulator& simulator);
  int frame_count() const;
  // `document` (a trajectory's JSON object) with "cameras": [{"name", "width", "height",
  // "frames": ["data:image/png;base64,…", …]}, …], one frame per recorded frame.
  std::string add_to(std::string_view document) const;

 private:
  struct Reel {
    std::unique_ptr<WorldCamera> camera;
    std::vector<std::string> frames;  // PNG data URIs
  };
  WorldParams params_;
  std::vector<Reel> reels_;
  CameraImage image_;
};

// Bytes a film holds per recorded frame, at most (every camera's PNG, base64): for the memory
// estimate of a recording.
double camera_film_bytes_per_frame(const World& world);

}  // namespace diffphys::viewer
