// tools/soft_simulate_command.hpp — `diffphys simulate` on a soft scene file (docs/soft-bodies.md).
#pragma once

#include <string>

namespace diffphys::cli {

struct SoftSimulateOptions {
  std::string scene_path;
  long long steps = 0;
  std::string trajectory_path;  // empty: do not record
  long long record_every = 1;
  bool quiet = false;
  std::string replay_path;  // empty: no replay page (--view)
};

// Whether `path` is a soft scene (a JSON object with a top-level "soft" key).
bool is_soft_scene(const std::string& path);

// Exit codes as `diffphys simulate`: 0 success, 2 a step did not converge (listed on stderr);
// bad input throws diffphys::Error.
int run_soft_simulate(const SoftSimulateOptions& options);

}  // namespace diffphys::cli
