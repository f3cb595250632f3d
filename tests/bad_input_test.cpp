// tests/bad_input_test.cpp — hostile and malformed input through the `diffphys` program: every
// one must be refused with exit code 1 and a message naming the file, the item and the value,
// never a crash, a hang or a partial output file (issue #19).
//
// The corpus tests/data/bad_input/ holds one input per case with NAME.expected beside it: a
// first line "args: <subcommand line>" and then the pieces the message must contain, one a
// line. In the command line, {input} is the input's path and {out} an empty folder of the
// case's own, where the case's output files go (-o {out}/t.json): after the refusal it must
// still be empty, no partial output and no temporary left behind. A case about a command-line
// option keeps a valid input and puts the bad option in its line. Files the inputs refer to
// (meshes, tet meshes, included XML) are in meshes/ and are no cases themselves. Inputs too
// large to keep in the repository (75,000 nesting levels) are written by the tests below. The
// program runs as a child process, with a time limit, so a crash or a hang fails the case
// instead of ending the test run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cli_test_helpers.hpp"
#include "replay_html.hpp"
#include "test_paths.hpp"

// A namespace of its own: in a unity build this file shares a translation unit with others
// that have helpers of the same names.
namespace diffphys::bad_input {
namespace {

using testing::fresh_test_folder;
using testing::run_cli;

std::filesystem::path corpus_folder() { return std::filesystem::path(test_paths::source_dir()) / "tests/data/bad_input"; }

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// `open` opening brackets, then as many closing ones: a value nested `open` levels deep.
std::string nested(std::size_t open) { return std::string(open, '[') + std::string(open, ']'); }

TEST(HostileInput, EveryCorpusFileIsRefusedWithItsMessage) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus_folder())) {
    const std::filesystem::path expected_file = entry.path();
    if (expected_file.extension() != ".expected") continue;
    const std::filesystem::path input = expected_file.parent_path() / expected_file.stem();
    SCOPED_TRACE(input.filename().string());
    std::istringstream lines(read_text(expected_file));
    std::string args;
    std::getline(lines, args);
    ASSERT_TRUE(args.starts_with("args: ")) << expected_file << " must start with 'args: '";
    if (args.starts_with("args: view ") && !viewer::replay_page_built()) continue;  // -DDIFFPHYS_VIEWER=OFF
    const std::filesystem::path out = fresh_test_folder("bad_input_out");
    const std::string command = replace_all(replace_all(args.substr(6), "{input}", input.string()), "{out}", out.string());
    const auto [code, output] = run_cli(command, "bad_input_" + input.filename().string(), 120);
    EXPECT_EQ(code, 1) << (code == 124 ? "timed out (a hang?): " : "") << output;
    EXPECT_NE(output.find("diffphys: error: "), std::string::npos) << output;
    EXPECT_TRUE(std::filesystem::is_empty(out)) << "a refused run left a file in " << out;
    for (std::string piece; std::getline(lines, piece);) {
      if (!piece.empty()) {
        EXPECT_NE(output.find(piece), std::string::npos) << "missing '" << piece << "' in:\n" << output;
      }
    }
    ++cases;
  }
  EXPECT_GE(cases, 60);
}

// ~75,000 levels overflowed the stack (signal 11) when a message printed the value
// recursively; every JSON reader now refuses past 64 levels, at the bracket that opens the 65th.
TEST(HostileInput, DeeplyNestedJsonIsRefusedByEveryReader) {
  const std::filesystem::path folder = fresh_test_folder("deep_json");
  const std::string deep = nested(75000);
  const std::vector<std::pair<std::string, std::string>> files{
      {"array.json", deep},
      {"rigid.json", "{\"bodies\": " + deep + "}"},
      {"soft.json", "{\"soft\": {\"nodes\": " + deep + "}}"},
      {"coupled.json", "{\"rigid\": {}, \"soft\": {}, \"coupling\": " + deep + "}"},
      {"string_brackets.json", "{\"name\": \"" + std::string(100, '[') + "\", \"bodies\": " + deep + "}"},
  };
  for (const auto& [name, text] : files) {
    SCOPED_TRACE(name);
    write_text(folder / name, text);
    const auto [code, output] = run_cli("info " + (folder / name).string(), "deep_json_" + name);
    EXPECT_EQ(code, 1) << output.substr(0, 2000);
    EXPECT_NE(output.find(name + ": line 1, column "), std::string::npos) << output.substr(0, 2000);
    EXPECT_NE(output.find("JSON nested deeper than 64 levels"), std::string::npos) << output.substr(0, 2000);
    EXPECT_LT(output.size(), 1000u) << "the message must not quote the value whole";
  }
  // `gradcheck` and `simulate` read scenes through the same loaders.
  const auto [code, output] = run_cli("simulate " + (folder / "rigid.json").string() + " -n 1", "deep_json_simulate");
  EXPECT_EQ(code, 1) << output.substr(0, 2000);
  EXPECT_NE(output.find("nested deeper than 64 levels"), std::string::npos) << output.substr(0, 2000);
}

TEST(HostileInput, NestingUpToTheBoundIsNotRefusedForItsDepth) {
  const std::filesystem::path folder = fresh_test_folder("nesting_bound");
  // 64 levels: the scene is wrong (bodies[0] is no object) but not for its depth.
  write_text(folder / "deep64.json", "{\"bodies\": " + nested(63) + "}");
  const auto [code, output] = run_cli("info " + (folder / "deep64.json").string(), "nesting_bound");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(output.find("nested deeper"), std::string::npos) << output;
  EXPECT_NE(output.find("deep64.json: bodies[0]"), std::string::npos) << output;
  EXPECT_LT(output.size(), 400u) << output;
}

TEST(HostileInput, DeeplyNestedTrajectoryIsRefusedByView) {
  if (!viewer::replay_page_built()) GTEST_SKIP() << "built without the web viewer (-DDIFFPHYS_VIEWER=OFF)";
  const std::filesystem::path folder = fresh_test_folder("deep_trajectory");
  for (const std::string& text : {nested(75000), "{\"format\": " + nested(75000) + "}"}) {
    write_text(folder / "trajectory.json", text);
    const auto [code, output] =
        run_cli("view " + (folder / "trajectory.json").string() + " -o " + (folder / "page.html").string(), "deep_view");
    EXPECT_EQ(code, 1) << output.substr(0, 2000);
    EXPECT_NE(output.find("trajectory.json: line 1, column "), std::string::npos) << output.substr(0, 2000);
    EXPECT_NE(output.find("nested deeper than 64 levels"), std::string::npos) << output.substr(0, 2000);
    EXPECT_FALSE(std::filesystem::exists(folder / "page.html"));
  }
}

// ---------------------------------------------------------------------------------------
// Command-line options and output files.

std::string example(const char* name) { return std::string(test_paths::source_dir()) + "/examples/scenes/" + name; }

TEST(HostileInput, GradcheckRefusesNonFiniteOrNonPositiveSteps) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--tolerance nan", "--tolerance"},      {"--tolerance -1", "--tolerance"},
      {"--tolerance inf", "--tolerance"},      {"--state-epsilon 0", "--state-epsilon"},
      {"--state-epsilon nan", "--state-epsilon"}, {"--param-epsilon -1e-5", "--param-epsilon"},
  };
  for (const auto& [option, name] : cases) {
    SCOPED_TRACE(option);
    const auto [code, output] = run_cli("gradcheck " + example("bouncing_ball.json") + " -n 2 " + option, "gradcheck_option");
    EXPECT_EQ(code, 1) << output;
    EXPECT_NE(output.find(name), std::string::npos) << output;
    EXPECT_NE(output.find("expected a finite number"), std::string::npos) << output;
    EXPECT_NE(output.find("got " + option.substr(option.find(' ') + 1)), std::string::npos) << output;
  }
}

TEST(HostileInput, MistypedSubcommandIsNamedWithASuggestion) {
  const auto [code, output] = run_cli("simulat " + example("bouncing_ball.json") + " -n 5", "mistyped_subcommand");
  EXPECT_EQ(code, 1) << output;
  EXPECT_NE(output.find("unknown subcommand 'simulat' (did you mean 'simulate'?)"), std::string::npos) << output;
  EXPECT_NE(output.find("simulate, view, render, info, gradcheck, experiment, convert, version"), std::string::npos) << output;
  const auto [far_code, far_output] = run_cli("xyzzy", "unknown_subcommand");
  EXPECT_EQ(far_code, 1) << far_output;
  EXPECT_NE(far_output.find("unknown subcommand 'xyzzy'; the subcommands are: simulate"), std::string::npos) << far_output;
}

// A run that fails writes no output file (it used to leave an empty one behind), and a
// completed one replaces the file whole, leaving no temporary beside it.
TEST(HostileInput, SimulateWritesItsOutputWholeOrNotAtAll) {
  const std::filesystem::path folder = fresh_test_folder("simulate_output");
  const std::string out = (folder / "ball.json").string();
  auto [code, output] =
      run_cli("simulate " + example("bouncing_ball.json") + " -n 5 -o " + out + " --view " + (folder / "no/such/page.html").string(),
              "simulate_output_bad_view");
  EXPECT_EQ(code, 1) << output;
  EXPECT_FALSE(std::filesystem::exists(out)) << "a failed run left " << out;

  write_text(folder / "ball.json", "an older file");
  std::tie(code, output) = run_cli("simulate " + example("bouncing_ball.json") + " -n 5 -q -o " + out, "simulate_output_good");
  EXPECT_EQ(code, 0) << output;
  EXPECT_TRUE(read_text(out).starts_with("{\"format\":\"diffphys-trajectory\"")) << read_text(out).substr(0, 100);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++files;
  EXPECT_EQ(files, 1) << "a temporary file was left in " << folder;

  // A scene that fails to load leaves the earlier file as it was.
  write_text(folder / "broken.json", "{\"bodies\": [}");
  std::tie(code, output) = run_cli("simulate " + (folder / "broken.json").string() + " -n 5 -o " + out, "simulate_output_broken");
  EXPECT_EQ(code, 1) << output;
  EXPECT_TRUE(read_text(out).starts_with("{\"format\":\"diffphys-trajectory\""));
}

}  // namespace
}  // namespace diffphys::bad_input
