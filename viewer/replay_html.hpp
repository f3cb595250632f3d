// viewer/replay_html.hpp — the replay page: one self-contained HTML file showing a recorded
// trajectory in 3D (three.js bundled in, no network needed), written by `diffphys view`
// and `diffphys simulate --view` (docs/viewer.md).
//
// The page template is built from viewer/src by viewer/build.mjs at build time and compiled
// into the program (replay_page_template(), a generated source), so a `diffphys` binary
// writes replays wherever it is installed, without reading any file of the source tree.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace diffphys::viewer {

// The page with the placeholder @@DIFFPHYS_TRAJECTORY@@ where the trajectory goes
// (generated: build/viewer/replay_page.cpp). In a build without the viewer
// (-DDIFFPHYS_VIEWER=OFF) it throws, as require_replay_page() does.
std::string_view replay_page_template();

// Whether this build carries the replay page: false when configured with -DDIFFPHYS_VIEWER=OFF
// (no Node.js needed then).
bool replay_page_built();

// Throws diffphys::Error "this diffphys was built without the web viewer ..." (saying how to
// build it) unless replay_page_built(). The commands call it before doing any work.
void require_replay_page();

// Checks that `trajectory_json` is a diffphys trajectory the viewer can show: a rigid part's
// document ("diffphys-trajectory": a "bodies" array of names and a non-empty "frames" array
// whose frames have one position and orientation per body), a soft part's
// ("diffphys-soft-trajectory": "node_count", a "topology" block, node "positions" per frame),
// or a world's ("diffphys-world-trajectory": each part's document under "parts", every one
// with the same number of frames); throws diffphys::Error naming `source_name` and the
// offending key otherwise.
void check_trajectory(std::string_view trajectory_json, std::string_view source_name);

// The replay page for a trajectory (the text `diffphys simulate --out` writes). The JSON is
// embedded in a <script type="application/json"> element with every '<' written as \u003c,
// so no text in it (a body named "</script>") can end the element early. Checks it first
// (check_trajectory).
std::string replay_html(std::string_view trajectory_json, std::string_view source_name);

// replay_html() written to `path`; throws diffphys::Error if the file cannot be written.
void write_replay_html(std::string_view trajectory_json, std::string_view source_name,
                       const std::filesystem::path& path);

}  // namespace diffphys::viewer
