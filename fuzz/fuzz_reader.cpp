// fuzz/fuzz_reader.cpp — the libFuzzer harness of one reader, compiled once per reader
// (fuzz/CMakeLists.txt; DIFFPHYS_FUZZ_READER names it: fuzz_scene, fuzz_urdf, ...).
//
// A refusal (diffphys::Error) is the expected answer to bad bytes; every other exception
// escapes LLVMFuzzerTestOneInput, and libFuzzer reports it as a crash (-handle_abrt), as it does
// ASan and UBSan reports, timeouts and running out of the -rss_limit_mb.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "reader_entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const diffphys::fuzz::Reader* const reader = diffphys::fuzz::find_reader(DIFFPHYS_FUZZ_READER);
  diffphys::fuzz::run_reader(*reader, std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
