# cmake/sanitize.cmake — the sanitizer and fuzzing build options (docs/fuzzing-and-sanitizers.md).
#
# DIFFPHYS_SANITIZE: every target compiled and linked with AddressSanitizer and
# UndefinedBehaviorSanitizer, undefined behaviour fatal (-fno-sanitize-recover, so that it fails
# the test that reached it rather than printing a line nobody reads), and libstdc++'s own checks
# (_GLIBCXX_ASSERTIONS: operator[] out of range, front() of an empty vector, ...).
# DIFFPHYS_FUZZ: the libFuzzer harnesses of fuzz/; implies DIFFPHYS_SANITIZE, and adds
# libFuzzer's coverage instrumentation to every target, so that one build tree (make sanitize's)
# serves both the sanitized test suite and the fuzzers instead of compiling the library twice.
# Both need clang (Debian 12: clang-16; `scripts/install-deps --sanitize`); `make sanitize` and
# `make fuzz` configure build-sanitize with them.
option(DIFFPHYS_SANITIZE "Compile and link everything with ASan + UBSan (clang; make sanitize)" OFF)
option(DIFFPHYS_FUZZ "Build the libFuzzer harnesses of fuzz/ (clang; implies DIFFPHYS_SANITIZE; make fuzz)" OFF)

if(DIFFPHYS_SANITIZE OR DIFFPHYS_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "DIFFPHYS_SANITIZE / DIFFPHYS_FUZZ need clang (configure with CXX=clang++-16; "
      "scripts/install-deps --sanitize installs it), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set(DIFFPHYS_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  if(DIFFPHYS_FUZZ)
    # Coverage counters for libFuzzer everywhere; only the harnesses link libFuzzer's main.
    list(APPEND DIFFPHYS_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
  endif()
  add_compile_options(${DIFFPHYS_SANITIZER_FLAGS})
  add_link_options(${DIFFPHYS_SANITIZER_FLAGS})
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
endif()
