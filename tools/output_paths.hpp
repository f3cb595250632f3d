// tools/output_paths.hpp — the simulate commands' check that their output files can be
// written, made before simulating rather than after.
#pragma once

#include <fstream>
#include <string>

#include "diffphys/error.hpp"
#include "replay_html.hpp"

namespace diffphys::cli {

// Throws Error "<path>: cannot open the trajectory file / replay page for writing" unless both
// paths (each may be empty: not wanted) can be opened for writing, and the viewer's Error if a
// replay page is wanted from a build without the viewer (-DDIFFPHYS_VIEWER=OFF).
inline void check_output_paths(const std::string& trajectory_path, const std::string& replay_path) {
  if (!replay_path.empty()) viewer::require_replay_page();
  if (!trajectory_path.empty() && !std::ofstream(trajectory_path, std::ios::app))
    throw Error(trajectory_path + ": cannot open the trajectory file for writing");
  if (!replay_path.empty() && !std::ofstream(replay_path, std::ios::app))
    throw Error(replay_path + ": cannot open the replay page for writing");
}

}  // namespace diffphys::cli
