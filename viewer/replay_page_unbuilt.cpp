// viewer/replay_page_unbuilt.cpp — replay_page_template() for a build without the web viewer
// (-DDIFFPHYS_VIEWER=OFF, viewer/CMakeLists.txt): there is no page, so it refuses, saying so
// (viewer/replay_html.hpp). With the viewer, the generated build/viewer/replay_page.cpp
// defines it instead.
#include "replay_html.hpp"

namespace diffphys::viewer {

std::string_view replay_page_template() {
  require_replay_page();  // throws: replay_page_built() is false in this build
  return {};
}

}  // namespace diffphys::viewer
