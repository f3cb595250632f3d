// viewer/render_trajectory.hpp — pictures of a recorded trajectory without a browser: what
// `diffphys render` draws (docs/viewer.md, "Pictures without a browser"). A TrajectoryScene
// reads a trajectory file's text (any of the three kinds the replay page shows: rigid bodies,
// a soft body, a world of both; checked first by viewer::check_trajectory, so the same file
// is refused by `view` and `render` with the same message) into meshes and per-frame poses,
// and draws any recorded frame with the software rasteriser (viewer/raster.hpp): the model
// block's shapes in the web viewer's colours, soft surfaces (springs and nodes when there is
// no surface), the soft scene's obstacles, and the ground planes as a checkered patch. It does
// not draw contacts, forces, joint markers, plots or text.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "raster.hpp"

namespace diffphys::viewer {

class TrajectoryScene {
 public:
  // Throws diffphys::Error naming `source_name` and the offending item (and its value) if the
  // text is not a trajectory the viewer can show, or its model block or obstacles give a
  // shape that cannot be drawn (a negative radius, a mesh face indexing no vertex, …).
  TrajectoryScene(std::string_view trajectory_json, std::string_view source_name);
  ~TrajectoryScene();
  TrajectoryScene(TrajectoryScene&&) noexcept;
  TrajectoryScene& operator=(TrajectoryScene&&) noexcept;

  int frame_count() const;
  double frame_time(int frame) const;  // s
  // What could not be drawn, or is drawn other than the file says, one sentence each (e.g. a
  // trajectory without a model block: its bodies as small spheres).
  const std::vector<std::string>& notes() const;

  // The box around everything that moves, over all frames (bodies' centres ± their shapes'
  // reach, soft nodes), as the web viewer frames it; min and max corners.
  std::pair<Vec3, Vec3> bounds() const;
  // The web viewer's opening view: from the direction (1.6, −2.4, 1.1) towards the centre of
  // bounds(), far enough that the sphere around the box fits the narrower field of view of
  // a width/height picture.
  Camera default_camera(double aspect) const;

  // Frame `frame` (in [0, frame_count())) drawn from `camera`, width × height pixels, each
  // pixel the mean of supersampling² samples.
  Image render(int frame, const Camera& camera, int width, int height, int supersampling = 2) const;

 private:
  struct Content;
  std::unique_ptr<Content> content_;
};

}  // namespace diffphys::viewer
