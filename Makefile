# The two commands that matter (README): `make demo` and `make test`. Both install what is
# missing (scripts/install-deps), configure and build, then run.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test test-long bench format clean sanitize sanitize-deps fuzz check

all: build

deps:
	@scripts/install-deps

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@scripts/demo

test: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DDIFFPHYS_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE long

# The checks that take minutes (ctest label `long`, tests/CMakeLists.txt): run before landing.
test-long: test
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L long

# ASan + UBSan (+ libstdc++ assertions) over the test suite, and the libFuzzer harnesses of the
# readers, in their own build tree compiled by clang-16 (docs/fuzzing-and-sanitizers.md).
# One tree serves both (cmake/sanitize.cmake). Left out of the sanitized suite: `long` (as in
# `make test`), `browser` (Chromium with software WebGL, over 5 minutes; its C++ side, the
# replay page writer, is the replay_html tests', which run) and `package` (a consumer compiled
# by g++ against the installed library cannot link an ASan-built libdiffphys.a). The Python
# module is not built there: loading an ASan-built extension into /usr/bin/python3 needs the
# ASan runtime LD_PRELOADed, and PyTorch's and NumPy's own allocations then flood the report.
SANITIZE_DIR ?= build-sanitize
SANITIZE_CXX ?= clang++-16
# The sanitizers' runtime does not find Debian's llvm-symbolizer (package llvm) by itself and
# then prints bare addresses: named here, reports give function, file and line.
SANITIZE_SYMBOLIZER ?= $(shell command -v llvm-symbolizer-16 || command -v llvm-symbolizer)
SANITIZE_ENV = ASAN_SYMBOLIZER_PATH=$(SANITIZE_SYMBOLIZER) \
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan.supp:print_suppressions=0
FUZZ_SECONDS ?= 60
FUZZ_READERS ?= scene soft coupled world urdf mjcf obj stl tet

$(SANITIZE_DIR)/CMakeCache.txt:
	CXX=$(SANITIZE_CXX) cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -gline-tables-only" -DDIFFPHYS_SANITIZE=ON -DDIFFPHYS_FUZZ=ON \
	  -DDIFFPHYS_BUILD_BENCH=OFF -DDIFFPHYS_BUILD_PYTHON=OFF $(CMAKE_FLAGS)

sanitize-deps:
	@scripts/install-deps --sanitize

sanitize: sanitize-deps $(SANITIZE_DIR)/CMakeCache.txt
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -LE 'long|browser|package'

# Each reader's harness for FUZZ_SECONDS, from its seeds (scripts/fuzz-readers); a finding
# stops that reader and fails the target, leaving the input in $(SANITIZE_DIR)/fuzz/findings/.
fuzz: sanitize-deps $(SANITIZE_DIR)/CMakeCache.txt
	cmake --build $(SANITIZE_DIR) -j $(JOBS) --target fuzzers
	$(SANITIZE_ENV) scripts/fuzz-readers $(SANITIZE_DIR) $(FUZZ_SECONDS) $(FUZZ_READERS)

# Before landing: the test suite, the sanitized suite, and a minute of fuzzing per reader.
check: test
	$(MAKE) sanitize
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

bench: build
	@scripts/bench

format:
	clang-format -i $$(git ls-files '*.hpp' '*.cpp')

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR)
