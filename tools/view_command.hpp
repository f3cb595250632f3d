// tools/view_command.hpp — `diffphys view`: turns a trajectory file into a replay page.
#pragma once

#include <string>

namespace diffphys::cli {

struct ViewOptions {
  std::string trajectory_path;
  std::string html_path;
  bool quiet = false;
};

// Reads the trajectory (written by `diffphys simulate --out`), writes the self-contained
// replay page (docs/viewer.md); returns the exit code (0). Throws diffphys::Error on an
// unreadable or malformed trajectory.
int run_view(const ViewOptions& options);

}  // namespace diffphys::cli
