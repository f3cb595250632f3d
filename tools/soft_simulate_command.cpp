// tools/soft_simulate_command.cpp — `diffphys simulate` for soft scenes: load, step with
// Newton, print a summary, optionally write the trajectory (JSON: node positions per frame,
// the mesh topology and obstacles once) and its replay page (--view, docs/viewer.md).
#include "soft_simulate_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_scene.hpp"
#include "number_text.hpp"
#include "output_paths.hpp"
#include "replay_html.hpp"
#include "soft_view_json.hpp"

namespace diffphys::cli {

bool is_soft_scene(const std::string& path) { return soft::is_soft_scene_file(path); }

int run_soft_simulate(const SoftSimulateOptions& options) {
  using namespace diffphys::soft;
  const SoftBuild built = build_soft_scene(load_soft_scene(options.scene_path), options.scene_path);
  const SoftModel& model = built.model;
  // Fail before simulating, not after, if an output cannot be written.
  cli::check_output_paths(options.trajectory_path, options.replay_path);
  const bool recording = !options.trajectory_path.empty() || !options.replay_path.empty();
  nlohmann::json frames = nlohmann::json::array();
  const auto record = [&](long long step, const SoftState& state, const SoftStepStatus& status) {
    const SoftEnergies energy = soft_energies(model, built.params, state);
    frames.push_back({{"step", step}, {"time", state.time}, {"positions", state.positions},
                      {"converged", status.converged}, {"iterations", status.iterations}, {"residual", status.residual},
                      {"energy", {{"kinetic", energy.kinetic}, {"gravity", energy.gravity}, {"elastic", energy.elastic},
                                  {"contact", energy.contact}}}});
  };
  SoftWorkspace workspace(model);
  SoftState state = built.state, next;
  if (recording) record(0, state, SoftStepStatus{});
  long long non_converged = 0;
  int max_iterations = 0;
  double max_residual = 0.0;
  std::vector<std::pair<long long, SoftStepStatus>> failures;
  const auto start = std::chrono::steady_clock::now();
  for (long long step = 1; step <= options.steps; ++step) {
    const SoftStepStatus status = soft_step(model, built.params, state, {}, next, workspace);
    std::swap(state, next);
    max_iterations = std::max(max_iterations, status.iterations);
    max_residual = std::max(max_residual, status.residual);
    if (!status.converged && ++non_converged <= 10) failures.push_back({step, status});
    if (recording && (step % options.record_every == 0 || step == options.steps)) record(step, state, status);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (recording) {
    const nlohmann::json document{{"format", "diffphys-soft-trajectory"}, {"model", model.name}, {"dt", model.dt},
                                  {"node_count", model.node_count}, {"topology", viewer::soft_topology_json(model)},
                                  {"obstacles", viewer::soft_obstacles_json(model)}, {"frames", frames}};
    const std::string text = document.dump();
    if (!options.trajectory_path.empty()) cli::write_output_file(options.trajectory_path, text + "\n", "trajectory file");
    if (!options.replay_path.empty()) cli::write_replay_page(options.replay_path, text, options.scene_path);
  }
  if (!options.quiet) {
    std::cout << "scene       " << options.scene_path << " (\"" << model.name << "\"): soft, " << model.node_count << " nodes, "
              << model.tets.size() << " tets, " << model.triangles.size() << " triangles, " << model.springs.size()
              << " springs, " << model.obstacles.size() << " obstacles\n";
    std::cout << "simulated   " << options.steps << " steps of " << number_or_zero(model.dt)
              << " s = " << number_or_zero(state.time) << " s in " << number_or_zero(wall, 3) << " s wall time\n";
    std::cout << "solver      newton: "
              << (non_converged == 0 ? std::string("converged at every step")
                                     : "did not converge at " + std::to_string(non_converged) + " steps")
              << "; max residual " << number_or_zero(max_residual, 3) << " N, max " << max_iterations
              << " iterations\n";
    std::vector<double> masses(static_cast<std::size_t>(model.node_count));
    lumped_masses(model, built.params, masses);
    double total = 0.0, lowest = 1e300;
    double centre[3] = {0, 0, 0}, velocity[3] = {0, 0, 0};
    for (int i = 0; i < model.node_count; ++i) {
      const double m = masses[static_cast<std::size_t>(i)];
      total += m;
      for (int r = 0; r < 3; ++r) {
        centre[r] += m * state.positions[static_cast<std::size_t>(3 * i + r)];
        velocity[r] += m * state.velocities[static_cast<std::size_t>(3 * i + r)];
      }
      lowest = std::min(lowest, state.positions[static_cast<std::size_t>(3 * i + 2)]);
    }
    if (total > 0)
      for (int r = 0; r < 3; ++r) {
        centre[r] /= total;
        velocity[r] /= total;
      }
    const SoftEnergies energies = soft_energies(model, built.params, state);
    std::cout << "final state mass " << number_or_zero(total) << " kg, centre of mass (" << number_or_zero(centre[0])
              << ", " << number_or_zero(centre[1]) << ", " << number_or_zero(centre[2]) << ") m, velocity ("
              << number_or_zero(velocity[0]) << ", " << number_or_zero(velocity[1]) << ", "
              << number_or_zero(velocity[2]) << ") m/s, lowest node z " << number_or_zero(lowest) << " m\n";
    std::cout << "energies    kinetic " << number_or_zero(energies.kinetic) << " J, gravity "
              << number_or_zero(energies.gravity) << " J, elastic " << number_or_zero(energies.elastic)
              << " J, contact " << number_or_zero(energies.contact) << " J\n";
    if (!options.trajectory_path.empty())
      std::cout << "trajectory  " << options.trajectory_path << " (" << frames.size() << " frames)\n";
    if (!options.replay_path.empty())
      std::cout << "replay      " << options.replay_path << " (open it in a web browser; works offline)\n";
  }
  if (non_converged > 0) {
    std::cerr << "diffphys: the Newton solver did not converge at " << non_converged << " steps (tolerance "
              << number_or_zero(model.newton.tolerance, 3) << " m/s, max " << model.newton.max_iterations
              << " iterations):\n";
    for (const auto& [step, status] : failures)
      std::cerr << "  step " << step << ": " << status.iterations << " iterations, residual "
                << number_or_zero(status.residual, 3) << " N: " << status.message << "\n";
    return 2;
  }
  return 0;
}

}  // namespace diffphys::cli
