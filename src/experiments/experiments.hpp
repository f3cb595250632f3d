// experiments/experiments.hpp — the papers' experiments run by `diffphys experiment NAME`:
// what an experiment is given, what it returns, and the registry of all of them.
//
// Each experiment lives in its own file under src/experiments/ and is one line in the
// registry (registry.cpp). It prints its progress to `progress` (per-iteration lines), writes
// its plots/trajectories under `out_dir`, and returns its figures as one JSON object that
// the command prints as the final line.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace diffphys::experiments {

struct ExperimentOptions {
  bool quick = false;           // the test variant: short (the quadruped's: minutes), asserting real progress
  bool full = false;            // the paper's full-size variant where a scaled-down one is default
  // Named changes to the experiment's model or recipe, from its entry's `variants` (empty: none).
  std::vector<std::string> variants;
  std::string out_dir = "out";  // plots, trajectories, loss curves
  unsigned seed = 1;
  std::ostream* progress = nullptr;  // per-iteration lines; nullptr: silent
};

struct ExperimentResult {
  std::string json;      // one JSON object on one line: the experiment's figures
  bool success = false;  // reached the experiment's stated target
};

using ExperimentFunction = ExperimentResult (*)(const ExperimentOptions&);

struct ExperimentEntry {
  std::string_view name;     // `diffphys experiment <name>`
  std::string_view summary;  // one line for --help: the paper and section it reproduces
  ExperimentFunction run;
  // The names --variant accepts, comma-separated, each with what it changes after a colon
  // (docs/EXPERIMENTS.md); empty: none.
  std::string_view variants = {};
};

// Whether `variant` is one of entry.variants' names.
bool has_variant(const ExperimentEntry& entry, std::string_view variant);

// Every experiment, in the order `--help` lists them.
std::span<const ExperimentEntry> registry();

}  // namespace diffphys::experiments
