// tools/experiment_command.cpp — `diffphys experiment`: looks the name up in the registry,
// runs it with progress on stdout (or none with --json), prints the figures as the last line.
#include "experiment_command.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <iostream>

#include "diffphys/error.hpp"
#include "replay_html.hpp"

namespace diffphys::cli {

namespace {

// Every trajectory file the experiment wrote under `out_dir` (trajectory*.json, newer than
// `since`) gets its replay page next to it (trajectory.json → trajectory.html).
void write_replays(const std::filesystem::path& out_dir, std::filesystem::file_time_type since, bool quiet) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(out_dir)) {
    const std::filesystem::path& path = entry.path();
    if (!entry.is_regular_file() || path.extension() != ".json" || !path.stem().string().starts_with("trajectory") ||
        entry.last_write_time() < since)
      continue;
    std::ifstream file(path, std::ios::binary);
    std::ostringstream trajectory;
    trajectory << file.rdbuf();
    std::filesystem::path page = path;
    page.replace_extension(".html");
    viewer::write_replay_html(trajectory.str(), path.string(), page);
    if (!quiet) std::cout << "replay: " << page.string() << std::endl;
  }
}

}  // namespace

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
    std::stringstream names(options.variants);
    for (std::string variant; std::getline(names, variant, ',');) {
      if (!experiments::has_variant(entry, variant))
        throw Error(message("experiment ", entry.name, ": unknown --variant '", variant, "'; ",
                            entry.variants.empty() ? std::string("it has none")
                                                   : "it has: " + std::string(entry.variants)));
      run_options.variants.push_back(variant);
    }
    run_options.progress = options.json_only ? nullptr : &std::cout;
    std::filesystem::create_directories(options.out_dir);
    if (!options.json_only) std::cout << "experiment " << entry.name << ": " << entry.summary << std::endl;
    const auto started = std::filesystem::file_time_type::clock::now();
    const experiments::ExperimentResult result = entry.run(run_options);
    if (viewer::replay_page_built())
      write_replays(options.out_dir, started, options.json_only);
    else if (!options.json_only)
      std::cout << "replay pages: none written (this diffphys was built without the web viewer, "
                   "-DDIFFPHYS_VIEWER=OFF)" << std::endl;
    std::cout << result.json << std::endl;
    return result.success ? 0 : 4;
  }
  throw Error(message("unknown experiment '", options.name, "'; known: ", experiment_names()));
}

}  // namespace diffphys::cli
