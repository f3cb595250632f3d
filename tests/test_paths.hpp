// Where the tests find the source tree (examples/, tests/data/) and the built command-line
// program. The paths live in one generated file (tests/CMakeLists.txt, test_paths.cpp), not in
// every test file's compile definitions, so that a compiler cache can serve the test files from
// any checkout or build directory.
#pragma once

namespace test_paths {

// The repository's root, absolute.
const char* source_dir();
// The diffphys command-line program of this build, absolute.
const char* cli_program();

}  // namespace test_paths
