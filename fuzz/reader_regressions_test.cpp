// fuzz/reader_regressions_test.cpp — every reader over its regression inputs
// (fuzz/regressions/<reader>/: inputs the fuzzers or sanitizers once crashed on) and its seed
// corpus (fuzz/corpus/<reader>/): each must load, or be refused with diffphys::Error whose
// message names the input. A crash or a sanitizer report ends this test's process, which fails
// the ctest of that reader. Runs in every build with tests, no fuzzer needed (ctest runs it
// from the source tree: the folders are relative).
#include <gtest/gtest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "reader_entry_points.hpp"

namespace diffphys::fuzz {
namespace {

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// The files of fuzz/<kind>/<reader>/, sorted (messages in a stable order); none if absent.
std::vector<std::filesystem::path> inputs(const char* kind, std::string_view reader) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path folder = std::filesystem::path("fuzz") / kind / std::filesystem::path(reader);
  if (!std::filesystem::is_directory(folder)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ReaderRegressions : public ::testing::TestWithParam<Reader> {};

TEST_P(ReaderRegressions, EveryInputLoadsOrIsRefusedByName) {
  const Reader& reader = GetParam();
  ASSERT_TRUE(std::filesystem::is_directory("fuzz")) << "run from the source tree (ctest does)";
  for (const char* kind : {"regressions", "corpus"}) {
    for (const std::filesystem::path& input : inputs(kind, reader.name)) {
      SCOPED_TRACE(input.string());
      try {
        const Outcome outcome = run_reader(reader, read_bytes(input));
        if (!outcome.loaded) {
          // The in-memory readers name kSourceName; the mesh readers their temporary file.
          EXPECT_NE(outcome.message.find(kSourceName), std::string::npos) << outcome.message;
        }
      } catch (const std::exception& error) {
        ADD_FAILURE() << "not a diffphys::Error: " << error.what();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fuzz, ReaderRegressions, ::testing::ValuesIn(readers().begin(), readers().end()),
                         [](const ::testing::TestParamInfo<Reader>& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace diffphys::fuzz
