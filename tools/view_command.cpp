// tools/view_command.cpp — `diffphys view TRAJ.json -o replay.html`: reads a trajectory
// file and writes the replay page around it (viewer/replay_html.hpp, docs/viewer.md).
#include "view_command.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "diffphys/error.hpp"
#include "output_paths.hpp"
#include "replay_html.hpp"

namespace diffphys::cli {

int run_view(const ViewOptions& options) {
  viewer::require_replay_page();  // a build without the viewer says so first
  std::ifstream file(options.trajectory_path, std::ios::binary);
  if (!file) throw Error(message(options.trajectory_path, ": cannot open the trajectory file"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(message(options.trajectory_path, ": cannot read the trajectory file"));
  write_replay_page(options.html_path, text.str(), options.trajectory_path);
  if (!options.quiet)
    std::cout << "replay      " << options.html_path << " (open it in a web browser; works offline)\n";
  return 0;
}

}  // namespace diffphys::cli
