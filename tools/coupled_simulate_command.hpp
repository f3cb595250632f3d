// tools/coupled_simulate_command.hpp — `diffphys simulate` on a coupled rigid + soft scene
// file (docs/soft-bodies.md#coupled-scene-files).
#pragma once

#include <string>

namespace diffphys::cli {

struct CoupledSimulateOptions {
  std::string scene_path;
  long long steps = 0;  // soft steps (each is `substeps` rigid steps)
  std::string trajectory_path;  // empty: do not record
  long long record_every = 1;
  bool quiet = false;
  std::string replay_path;  // empty: no replay page (--view)
};

// Whether `path` is a coupled scene (a JSON object with top-level "rigid" and "soft" keys).
bool is_coupled_scene(const std::string& path);

// Exit codes as `diffphys simulate`: 0 success, 2 a soft or rigid step did not converge
// (listed on stderr); bad input throws diffphys::Error.
int run_coupled_simulate(const CoupledSimulateOptions& options);

}  // namespace diffphys::cli
