// tools/experiment_command.cpp — `diffphys experiment`: looks the name up in the registry,
// runs it with progress on stdout (or none with --json), prints the figures as the last line.
#include "experiment_command.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>

#include "diffphys/error.hpp"

namespace diffphys::cli {

std::string experiment_names() {
  std::string names;
  for (const auto& entry : experiments::registry()) {
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names.empty() ? "(none yet)" : names;
}

int run_experiment(const ExperimentCommandOptions& options) {
  for (const auto& entry : experiments::registry()) {
    if (entry.name != options.name) continue;
    experiments::ExperimentOptions run_options;
    run_options.quick = options.quick;
    run_options.full = options.full;
    run_options.out_dir = options.out_dir;
    run_options.seed = options.seed;
    run_options.progress = options.json_only ? nullptr : &std::cout;
    std::filesystem::create_directories(options.out_dir);
    if (!options.json_only) std::cout << "experiment " << entry.name << ": " << entry.summary << std::endl;
    const experiments::ExperimentResult result = entry.run(run_options);
    std::cout << result.json << std::endl;
    return result.success ? 0 : 4;
  }
  throw Error(message("unknown experiment '", options.name, "'; known: ", experiment_names()));
}

}  // namespace diffphys::cli
