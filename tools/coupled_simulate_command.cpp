// tools/coupled_simulate_command.cpp — `diffphys simulate` for coupled scenes: the rigid world
// stepped by the rigid simulator, the soft bodies by Newton seeing the rigid poses
// (CoupledRollout, one-way or two-way coupling); prints a summary and optionally writes the trajectory
// (JSON: soft node positions and rigid body poses per soft step; once, the rigid model block,
// the soft mesh topology and obstacles) and its replay page (--view, docs/viewer.md).
#include "coupled_simulate_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>

#include "diffphys/coupled.hpp"
#include "diffphys/error.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/trajectory.hpp"
#include "number_text.hpp"
#include "output_paths.hpp"
#include "replay_html.hpp"
#include "soft_view_json.hpp"

namespace diffphys::cli {

namespace {
// The rigid trajectory files' "model" block (bodies with their shapes, joints, gravity:
// docs/scene-format.md, "Trajectory files"), so the viewer draws the rigid bodies' shapes.
nlohmann::json rigid_model_block(const CoupledSystem& system) {
  TrajectoryRecorder recorder(system.rigid_model, system.rigid_params);
  recorder.record(system.rigid_state, {}, StepStatus{});
  std::ostringstream text;
  recorder.write(text);
  return nlohmann::json::parse(text.str()).at("model");
}
}  // namespace

bool is_coupled_scene(const std::string& path) { return is_coupled_scene_file(path); }

int run_coupled_simulate(const CoupledSimulateOptions& options) {
  const CoupledSystem system = load_coupled_scene(options.scene_path);
  if (options.steps > 1000000) throw Error(message("--steps: at most 1000000 soft steps for a coupled scene, got ", options.steps));
  // Fail before simulating, not after, if an output cannot be written.
  cli::check_output_paths(options.trajectory_path, options.replay_path);
  const bool recording = !options.trajectory_path.empty() || !options.replay_path.empty();
  const Model& rigid = system.rigid_model;
  const soft::SoftModel& soft_model = system.soft_model;
  const int steps = static_cast<int>(options.steps);
  std::vector<double> rigid_controls;
  for (long long k = 0; k < static_cast<long long>(steps) * system.substeps; ++k)
    rigid_controls.insert(rigid_controls.end(), system.rigid_controls.begin(), system.rigid_controls.end());

  const auto start = std::chrono::steady_clock::now();
  CoupledRollout rollout(system);
  rollout.run(system.rigid_state, rigid_controls, system.soft_state, {}, steps);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  long long soft_failures = 0, rigid_failures = 0;
  int max_iterations = 0;
  double max_residual = 0.0;
  std::vector<std::pair<int, soft::SoftStepStatus>> listed;
  for (int t = 0; t < steps; ++t) {
    const soft::SoftStepStatus& status = rollout.soft_statuses()[static_cast<std::size_t>(t)];
    max_iterations = std::max(max_iterations, status.iterations);
    max_residual = std::max(max_residual, status.residual);
    if (!status.converged && ++soft_failures <= 10) listed.push_back({t + 1, status});
  }
  for (const StepStatus& status : rollout.rigid_statuses()) rigid_failures += status.converged ? 0 : 1;
  // An unhealthy rigid state is not a result (docs/robustness.md, "State health"): nothing
  // is written, as for `simulate` of a rigid scene.
  const std::span<const StepStatus> rigid_statuses = rollout.rigid_statuses();
  for (std::size_t k = 0; k < rigid_statuses.size(); ++k)
    if (rigid_statuses[k].health != StateHealth::Ok)
      throw Error(message("rigid substep ", k + 1, " (soft step ", k / static_cast<std::size_t>(system.substeps) + 1,
                          "): ", health_message(rigid, rigid_statuses[k]), "; stopped, nothing written"));

  if (recording) {
    nlohmann::json frames = nlohmann::json::array();
    for (int t = 0; t <= steps; ++t) {
      if (t % options.record_every != 0 && t != steps) continue;
      const State rigid_state = rollout.rigid_state(t);
      nlohmann::json bodies = nlohmann::json::array();
      for (int b = 1; b < rigid.body_count(); ++b) {
        const auto i = static_cast<std::size_t>(b);
        const Vec3& p = rigid_state.position[i];
        const Quat& q = rigid_state.orientation[i];
        bodies.push_back({{"name", rigid.bodies[i].name}, {"position", {p.x, p.y, p.z}}, {"orientation", {q.w, q.x, q.y, q.z}}});
      }
      nlohmann::json frame{{"step", t}, {"time", rollout.soft_state(t).time}, {"positions", rollout.soft_state(t).positions},
                           {"bodies", bodies}};
      if (t > 0) {
        const soft::SoftStepStatus& status = rollout.soft_statuses()[static_cast<std::size_t>(t - 1)];
        frame["converged"] = status.converged;
        frame["iterations"] = status.iterations;
        frame["residual"] = status.residual;
      }
      frames.push_back(frame);
    }
    const nlohmann::json document{{"format", "diffphys-coupled-trajectory"}, {"rigid_model", rigid.name},
                                  {"soft_model", soft_model.name}, {"dt", soft_model.dt}, {"substeps", system.substeps},
                                  {"node_count", soft_model.node_count}, {"model", rigid_model_block(system)},
                                  {"topology", viewer::soft_topology_json(soft_model)},
                                  {"obstacles", viewer::soft_obstacles_json(soft_model)}, {"frames", frames}};
    const std::string text = document.dump();
    if (!options.trajectory_path.empty()) cli::write_output_file(options.trajectory_path, text + "\n", "trajectory file");
    if (!options.replay_path.empty()) cli::write_replay_page(options.replay_path, text, options.scene_path);
  }
  if (!options.quiet) {
    std::cout << "scene       " << options.scene_path << ": coupled (" << (system.two_way ? "two-way" : "one-way") << "), rigid \"" << rigid.name << "\" "
              << rigid.body_count() - 1 << " bodies, soft \"" << soft_model.name << "\" " << soft_model.node_count << " nodes, "
              << soft_model.frame_attachment_nodes.size() << " nodes attached to rigid bodies, " << soft_model.obstacles.size()
              << " obstacles\n";
    std::cout << "simulated   " << steps << " soft steps of " << number_or_zero(soft_model.dt) << " s ("
              << system.substeps << " rigid steps each) = " << number_or_zero(rollout.soft_state(steps).time)
              << " s in " << number_or_zero(wall, 3) << " s wall time\n";
    std::cout << "solver      newton: "
              << (soft_failures == 0 ? std::string("converged at every step")
                                     : "did not converge at " + std::to_string(soft_failures) + " steps")
              << "; max residual " << number_or_zero(max_residual, 3) << " N, max " << max_iterations
              << " iterations; rigid: "
              << (rigid_failures == 0 ? std::string("converged at every step")
                                      : "did not converge at " + std::to_string(rigid_failures) + " steps")
              << "\n";
    const soft::SoftState& last = rollout.soft_state(steps);
    double lowest = 1e300;
    for (int i = 0; i < soft_model.node_count; ++i) lowest = std::min(lowest, last.positions[static_cast<std::size_t>(3 * i + 2)]);
    std::cout << "final state lowest soft node z " << number_or_zero(lowest) << " m\n";
    const State rigid_state = rollout.rigid_state(steps);
    for (int b = 1; b < rigid.body_count(); ++b) {
      const Vec3& p = rigid_state.position[static_cast<std::size_t>(b)];
      std::cout << "            body " << rigid.bodies[static_cast<std::size_t>(b)].name << " at ("
                << number_or_zero(p.x) << ", " << number_or_zero(p.y) << ", " << number_or_zero(p.z) << ") m\n";
    }
    if (!options.trajectory_path.empty()) std::cout << "trajectory  " << options.trajectory_path << "\n";
    if (!options.replay_path.empty())
      std::cout << "replay      " << options.replay_path << " (open it in a web browser; works offline)\n";
  }
  if (soft_failures > 0 || rigid_failures > 0) {
    std::cerr << "diffphys: " << soft_failures << " soft steps and " << rigid_failures << " rigid steps did not converge\n";
    for (const auto& [step, status] : listed)
      std::cerr << "  soft step " << step << ": " << status.iterations << " iterations, residual "
                << number_or_zero(status.residual, 3) << " N: " << status.message << "\n";
    return 2;
  }
  return 0;
}

}  // namespace diffphys::cli
