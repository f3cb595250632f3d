// tests/cli_test_helpers.hpp — running the `diffphys` command line from the tests: a command
// with its exit code and output, a fresh output folder per test process (test runs of other
// checkouts on the same machine must not share it), and an experiment's --quick variant run
// end to end, its final JSON line parsed.
#pragma once

#include "test_paths.hpp"
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace diffphys::testing {

// Runs `diffphys ARGUMENTS`; returns its exit code and what it printed (stdout and stderr),
// kept in <gtest temp dir>/<name>.txt. With `timeout_seconds` > 0 the program is stopped
// after that long (coreutils `timeout`: exit code 124), so a hang fails one check instead of
// the whole test run.
inline std::pair<int, std::string> run_cli(const std::string& arguments, const std::string& name,
                                           int timeout_seconds = 0) {
  const std::string out = ::testing::TempDir() + name + ".txt";
  const std::string limit = timeout_seconds > 0 ? "timeout -k 5 " + std::to_string(timeout_seconds) + " " : "";
  const std::string command = limit + std::string(test_paths::cli_program()) + " " + arguments + " > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream file(out);
  std::stringstream text;
  text << file.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

// <temp>/diffphys_<name>_<pid>, emptied.
inline std::filesystem::path fresh_test_folder(std::string_view name) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("diffphys_" + std::string(name) + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return folder;
}

// Runs `diffphys experiment NAME --quick --json --out FOLDER`, expects exit status 0 (the
// experiment reached its stated target) and returns the last line of its output, parsed.
inline nlohmann::json run_quick_experiment_command(const std::string& name, const std::filesystem::path& folder,
                                                  const std::string& extra_options = "") {
  const auto output = folder / "stdout.txt";
  const std::string command = std::string(test_paths::cli_program()) + " experiment " + name + " --quick --json --out " +
                              folder.string() + extra_options + " > " + output.string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << "see " << output;
  std::ifstream stream(output);
  std::string line, last;
  while (std::getline(stream, line))
    if (!line.empty()) last = line;
  return nlohmann::json::parse(last);
}

}  // namespace diffphys::testing
