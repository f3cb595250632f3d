// tools/output_paths.hpp — how the commands write their output files: checked before any
// work (so a bad path fails at once), then written whole or not at all (a temporary file in
// the same folder, renamed over the target once complete), so that a run that fails leaves
// neither an empty or partial file nor a fresh-looking old one overwritten halfway.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "diffphys/error.hpp"
#include "replay_html.hpp"

namespace diffphys::cli {

// "<path>.tmp<pid>": in the target's folder, so the rename cannot cross file systems.
inline std::filesystem::path temporary_path(const std::string& path) {
  return std::filesystem::path(path + ".tmp" + std::to_string(::getpid()));
}

// Throws Error "<path>: cannot open the <what> for writing" unless a file can be written at
// `path` (empty: not wanted). Creates nothing: it tries the temporary file and removes it.
inline void check_writable(const std::string& path, std::string_view what) {
  if (path.empty()) return;
  std::error_code status;
  if (std::filesystem::is_directory(path, status))
    throw Error(message(path, ": cannot open the ", what, " for writing: it is a directory"));
  const std::filesystem::path probe = temporary_path(path);
  if (!std::ofstream(probe)) throw Error(message(path, ": cannot open the ", what, " for writing"));
  std::filesystem::remove(probe, status);
}

// check_writable for both outputs of the simulate commands, and the viewer's Error if a replay
// page is wanted from a build without the viewer (-DDIFFPHYS_VIEWER=OFF).
inline void check_output_paths(const std::string& trajectory_path, const std::string& replay_path) {
  if (!replay_path.empty()) viewer::require_replay_page();
  check_writable(trajectory_path, "trajectory file");
  check_writable(replay_path, "replay page");
}

// Writes `text` to `path` through the temporary file, renamed over `path` only when complete.
inline void write_output_file(const std::string& path, std::string_view text, std::string_view what) {
  const std::filesystem::path temporary = temporary_path(path);
  std::error_code ignored;
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw Error(message(path, ": cannot open the ", what, " for writing"));
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.flush();
    if (!file) {
      file.close();
      std::filesystem::remove(temporary, ignored);
      throw Error(message(path, ": could not write the whole ", what));
    }
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed) {
    std::filesystem::remove(temporary, ignored);
    throw Error(message(path, ": cannot replace the ", what, ": ", renamed.message()));
  }
}

// The replay page of `trajectory_json` (from `source_name`), written as above.
inline void write_replay_page(const std::string& path, std::string_view trajectory_json, std::string_view source_name) {
  write_output_file(path, viewer::replay_html(trajectory_json, source_name), "replay page");
}

}  // namespace diffphys::cli
