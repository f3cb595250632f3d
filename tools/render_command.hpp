// tools/render_command.hpp — `diffphys render`: PNG pictures of a trajectory's frames, drawn
// without a browser or a GPU by the software renderer (viewer/render_trajectory.hpp,
// docs/viewer.md "Pictures without a browser"); or, with --camera, of a scene simulated for
// --steps, seen by one of its cameras (the differentiable camera's forward pass, docs/camera.md).
#pragma once

#include <string>

namespace diffphys::cli {

// The largest --width and --height: a 4096 × 4096 picture needs about 120 MB while drawn.
constexpr int kMaxRenderSize = 4096;

struct RenderOptions {
  std::string trajectory_path;
  std::string out_dir;
  int width = 640;  // pixels, in [1, kMaxRenderSize] (CLI11 checks)
  int height = 480;
  long long every = 1;      // every N-th recorded frame of the range (>= 1, CLI11 checks)
  std::string frames;       // "A:B": recorded frames A to B − 1 (either may be left out); empty: all
  std::string camera_from;  // "X,Y,Z" (m, world); empty: the viewer's opening view
  std::string camera_at;    // "X,Y,Z"; empty: the centre of the scene's bounds
  bool quiet = false;
  // With a camera: `trajectory_path` is a scene file, simulated for `steps` world steps from its
  // initial state with its default controls, and drawn through the scene's camera of that name
  // (diffphys/camera.hpp, docs/camera.md) at its own size, one picture per --every-th state.
  std::string camera;
  long long steps = 0;
  bool size_given = false;  // --width or --height on the command line (refused with --camera)
};

// Reads and checks the trajectory and every option before writing anything (so a refused
// input leaves no output), then writes OUT_DIR/frame_00000.png, frame_00001.png, … (creating
// OUT_DIR) and prints how many and where, with an ffmpeg line for a video. Returns the exit
// code (0); throws diffphys::Error naming the file, the option or item, and the value.
int run_render(const RenderOptions& options);

}  // namespace diffphys::cli
