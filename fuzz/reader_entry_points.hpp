// fuzz/reader_entry_points.hpp — one entry point per input reader, for the libFuzzer harnesses
// (fuzz/fuzz_reader.cpp) and for the regression test over fuzz/regressions/
// (fuzz/reader_regressions_test.cpp), so that what "reading an input" means is written once.
//
// Each entry point feeds the bytes to a reader the way the `diffphys` program does when it
// loads that kind of file (parse, then build the model), through the reader's in-memory entry
// point, or through a temporary file for the mesh readers, which read files only. A refusal
// is diffphys::Error, the one exception the library throws for bad input (diffphys/error.hpp);
// anything else — another exception, a crash, a sanitizer report — is a finding.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace diffphys::fuzz {

struct Reader {
  std::string_view name;       // "scene", "soft", ...: the harness and the folders are named after it
  std::string_view extension;  // of the files it reads (".json"), for seeds and regression files
  void (*read)(std::string_view bytes);
};

// Every reader: scene (rigid scene JSON), soft (soft scene JSON), coupled (rigid + soft scene
// JSON), world (any JSON scene through load_world's reader), urdf, mjcf, obj, stl (convex mesh files), tet (tet-mesh text).
std::span<const Reader> readers();
// nullptr when there is none of that name.
const Reader* find_reader(std::string_view name);

// The name the in-memory readers give the input in their messages (and that a refusal must
// name, like a file name).
inline constexpr std::string_view kSourceName = "fuzz-input";

struct Outcome {
  bool loaded = false;  // read and built; otherwise refused with diffphys::Error
  std::string message;  // the refusal's message
};
// Reads `bytes` with `reader`; diffphys::Error becomes a refusal, every other exception
// propagates (a finding).
Outcome run_reader(const Reader& reader, std::string_view bytes);

}  // namespace diffphys::fuzz
