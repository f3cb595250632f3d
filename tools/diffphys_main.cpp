// tools/diffphys_main.cpp — the `diffphys` command-line program.
//
// One function per subcommand (run_simulate, run_info, run_version), each taking its parsed
// options; every scene file — rigid, soft or both, JSON, URDF or MJCF — goes through the same
// path: load_world, then WorldSimulator and WorldRunReport (simulate), describe_world (info),
// check_world_gradients (gradcheck). No subcommand knows which parts a world holds.
// main() only declares the command line (CLI11) and maps outcomes to exit codes:
//   0  success
//   1  bad input (unreadable or malformed scene, bad option): "diffphys: error: <message>"
//   2  `simulate` finished but the solver did not converge at some step (listed on stderr)
//   3  `gradcheck`: a gradient disagrees with finite differences
//   4  `experiment` ran but fell short of its target
// New subcommands (gradcheck, experiment, view, render, convert) add an options struct, a run_ function and
// a block in main(). Nothing here does physics: it calls the library's public API only.
#include "output_paths.hpp"
#include "convert_command.hpp"
#include "experiment_command.hpp"
#include "gradcheck_command.hpp"
#include "render_command.hpp"
#include "scene_options.hpp"
#include "view_command.hpp"
#include <charconv>
#include <chrono>
#include <cmath>
#include <exception>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "diffphys/error.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_report.hpp"
#include "diffphys/world_simulator.hpp"
#include "model/nearest_name.hpp"
#include "world/part_report.hpp"
#include "camera_film.hpp"
#include "world_trajectory.hpp"

#ifndef DIFFPHYS_VERSION
#define DIFFPHYS_VERSION "0.1.0"
#endif

namespace {

using namespace diffphys;

constexpr int kExitSuccess = 0;
constexpr int kExitError = 1;
constexpr int kExitNotConverged = 2;

using report::plural;

// A CLI11 check that an option is an integer >= lowest (and <= highest, when given: the
// option's type may hold no more), with a plain message.
CLI::Validator integer_at_least(long long lowest, long long highest = std::numeric_limits<long long>::max()) {
  const bool bounded = highest < std::numeric_limits<long long>::max();
  const std::string range =
      bounded ? "in [" + std::to_string(lowest) + ", " + std::to_string(highest) + "]" : ">= " + std::to_string(lowest);
  return CLI::Validator(
      [lowest, highest, range](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error != std::errc() || stop != end || value < lowest || value > highest)
          return "expected an integer " + range + ", got " + text;
        return "";
      },
      lowest == 0 ? "NONNEGATIVE" : "INT>=" + std::to_string(lowest));
}

// A CLI11 check that an option is a finite number above `lowest` (or at least it, when
// `inclusive`): NaN, infinity and out-of-range values are refused, not run with.
CLI::Validator finite_number_above(double lowest, bool inclusive) {
  const std::string bound = (inclusive ? ">= " : "> ") + significant(lowest);
  return CLI::Validator(
      [lowest, inclusive, bound](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool in_range = inclusive ? value >= lowest : value > lowest;
        if (text.empty() || *end != '\0' || !std::isfinite(value) || !in_range)
          return "expected a finite number " + bound + ", got " + text;
        return "";
      },
      (inclusive ? "NUMBER>=" : "NUMBER>") + significant(lowest));
}

// CLI11 answers a mistyped subcommand with only "A subcommand is required": the first word
// that is not an option must be a subcommand (the program itself takes no other words), so
// name it, suggest the nearest and list them all. Empty when the word is known or absent.
std::string unknown_subcommand_message(CLI::App& app, int argc, char** argv) {
  std::string word;
  for (int i = 1; i < argc && word.empty(); ++i)
    if (argv[i][0] != '-') word = argv[i];
  if (word.empty()) return "";
  std::string names, nearest;
  std::size_t nearest_distance = word.size();
  for (const CLI::App* subcommand : app.get_subcommands({})) {
    const std::string& name = subcommand->get_name();
    if (name == word) return "";
    names += (names.empty() ? "" : ", ") + name;
    const std::size_t distance = name.starts_with(word) ? 0 : edit_distance(word, name);
    if (distance < nearest_distance) {
      nearest = name;
      nearest_distance = distance;
    }
  }
  const bool close = !nearest.empty() && nearest_distance <= std::max<std::size_t>(2, word.size() / 3);
  return "unknown subcommand '" + word + "'" + (close ? " (did you mean '" + nearest + "'?)" : "") +
         "; the subcommands are: " + names;
}

// ---------------------------------------------------------------------------------------
// diffphys simulate

struct SimulateOptions {
  std::string scene_path;
  long long steps = 0;          // world steps (a scene with soft bodies: soft steps)
  std::string trajectory_path;  // empty: do not record
  long long record_every = 1;
  bool quiet = false;
  std::string replay_path;  // empty: no replay page (--view)
  bool cameras = false;     // film the scene's cameras into the recording (--cameras)
  diffphys::cli::SceneOptions scene;  // --solver, --formulation, --package-path, --self-collision
};

// Every recorded frame stays in memory until the run ends, then the file is written whole
// (no partial output): about 1.4 kB per frame plus each part's share (estimate_recording,
// diffphys/world_report.hpp). A recording that would need more than kMaxRecordingBytes is
// refused before the first step, not ended by the operating system after minutes.
constexpr double kMaxRecordingBytes = 4e9;
void refuse_recording_beyond_memory(const World& world, long long steps, long long every, bool cameras) {
  // The first state, every `every`-th step and the last one.
  const auto frames_at = [steps](long long k) { return steps / k + 2; };
  const RecordingEstimate estimate = estimate_recording(world);
  const double bytes_per_frame = 1400.0 + estimate.bytes_per_frame + (cameras ? viewer::camera_film_bytes_per_frame(world) : 0.0);
  const double bytes = static_cast<double>(frames_at(every)) * bytes_per_frame;
  if (bytes <= kMaxRecordingBytes) return;
  std::string remedy = "simulate fewer --steps";
  const double most_frames = std::floor(kMaxRecordingBytes / bytes_per_frame);
  if (most_frames >= 3) {
    auto least_every = static_cast<long long>(std::ceil(static_cast<double>(steps) / (most_frames - 2)));
    while (static_cast<double>(frames_at(least_every)) * bytes_per_frame > kMaxRecordingBytes) ++least_every;
    remedy = message("record fewer frames with --every ", least_every, " or more, or ", remedy);
  }
  throw Error(message("simulate: recording ", frames_at(every), " frames (--steps ", steps, ", --every ", every, ") of ", estimate.size,
                      " would hold about ", significant(bytes / 1e9, 3), " GB in memory (limit ",
                      significant(kMaxRecordingBytes / 1e9), " GB); ", remedy));
}

int run_simulate(const SimulateOptions& options) {
  const World world = diffphys::cli::load_scene_world(options.scene_path, options.scene);
  // Fail before simulating, not after, if an output cannot be written.
  cli::check_output_paths(options.trajectory_path, options.replay_path);
  const bool recording = !options.trajectory_path.empty() || !options.replay_path.empty();
  if (options.cameras && !recording)
    throw Error("--cameras: films the scene's cameras into the recording; give --out or --view as well");
  if (recording) refuse_recording_beyond_memory(world, options.steps, options.record_every, options.cameras);
  const WorldParams params = world.default_params();
  WorldSimulator simulator(world, params, world.initial_state());
  WorldRunReport report(world, params);
  std::optional<viewer::WorldTrajectoryRecorder> recorder;
  std::optional<viewer::CameraFilm> film;  // what the scene's cameras see, with --cameras
  if (recording) {
    recorder.emplace(world, params);
    recorder->record(0, simulator, nullptr);
  }
  if (options.cameras) {
    film.emplace(world, params);
    film->record(simulator);
  }
  const auto wall_start = std::chrono::steady_clock::now();
  for (long long step = 1; step <= options.steps; ++step) {
    const WorldStepStatus status = simulator.step();
    report.observe(step, simulator.state(), status);
    if (recorder && (step % options.record_every == 0 || step == options.steps)) {
      recorder->record(step, simulator, &status);
      if (film) film->record(simulator);
    }
  }
  const double wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  if (recorder) {
    const std::string document = film ? film->add_to(recorder->document()) : recorder->document();
    if (!options.trajectory_path.empty())
      cli::write_output_file(options.trajectory_path, film ? document + "\n" : recorder->file_text(), "trajectory file");
    if (!options.replay_path.empty()) cli::write_replay_page(options.replay_path, document, options.scene_path);
  }
  if (!options.quiet) {
    report.print_summary(std::cout, simulator.state(), options.steps, wall_seconds);
    if (recorder && !options.trajectory_path.empty())
      std::cout << "trajectory  " << options.trajectory_path << " (" << plural(recorder->frame_count(), "frame", "frames")
                << ", every " << plural(options.record_every, "step", "steps") << ")\n";
    if (recorder && !options.replay_path.empty())
      std::cout << "replay      " << options.replay_path << " (" << plural(recorder->frame_count(), "frame", "frames")
                << ", every " << plural(options.record_every, "step", "steps")
                << "; open it in a web browser, works offline)\n";
  }
  return report.print_failures(std::cerr) ? kExitNotConverged : kExitSuccess;
}

// ---------------------------------------------------------------------------------------
// diffphys info

struct InfoOptions {
  std::string scene_path;
  diffphys::cli::SceneOptions scene;  // --package-path, --self-collision (URDF files)
};

int run_info(const InfoOptions& options) {
  const World world = diffphys::cli::load_scene_world(options.scene_path, options.scene);
  describe_world(std::cout, world, world.default_params());
  return kExitSuccess;
}

// ---------------------------------------------------------------------------------------
// diffphys version

int run_version() {
  std::cout << "diffphys " << DIFFPHYS_VERSION << "\n";
  return kExitSuccess;
}

// --package-path and --self-collision, for a subcommand that loads robot files.
void add_robot_file_options(CLI::App* command, diffphys::cli::SceneOptions& options) {
  // Collected one value at a time (each): binding the vector makes GCC 12 at -O1 report a
  // -Wnull-dereference inside CLI11's string splitting.
  command->add_option("--package-path",
                      "URDF: a directory searched for package://NAME mesh paths (repeatable; searched in the "
                      "order given, before ROS_PACKAGE_PATH and the file's own directory and ancestors; "
                      "docs/robot-formats.md). Ignored for other scene files")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each([&options](const std::string& directory) { options.package_path.push_back(directory); });
  command->add_flag("--self-collision", options.self_collision,
                    "URDF: let links of one robot that no joint joins collide with each other (off unless the "
                    "file asks with <self_collide>). Ignored for other scene files");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "diffphys — a differentiable physics engine (rigid bodies, robots, soft bodies): simulate, "
      "inspect and check the gradients of scene files (formats: docs/scene-format.md, "
      "docs/soft-bodies.md), view trajectories, run the papers' experiments.",
      "diffphys"};
  // --help prints every subcommand with all its options.
  app.set_help_flag();
  app.set_help_all_flag("-h,--help", "Print this help (every subcommand and option) and exit");
  app.set_version_flag("--version", "diffphys " DIFFPHYS_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success; 1 error (message on stderr as 'diffphys: error: ...'); "
      "2 the solver did not converge at some step (simulate); 3 a gradient disagrees with finite "
      "differences (gradcheck); 4 an experiment ran but fell short of its target.");

  SimulateOptions simulate_options;
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "Load any scene (rigid, soft or both), step it N times holding the scene's default controls, print a "
      "summary and optionally write the trajectory (JSON; frame 0 is the initial state). No history is kept: "
      "10^6 steps run in constant memory unless recorded.");
  simulate->add_option("scene", simulate_options.scene_path,
                       "Scene file: JSON (rigid, soft or both), URDF (.urdf) or MJCF (.xml, .mjcf)")->required();
  simulate->add_option("-n,--steps", simulate_options.steps,
                       "Number of world steps to simulate (with soft bodies: soft steps, each the scene's rigid substeps)")
      ->required()
      ->check(integer_at_least(0));
  simulate->add_option("-o,--out", simulate_options.trajectory_path,
                       "Write the trajectory to this JSON file (layout: docs/scene-format.md)");
  simulate
      ->add_option("--every", simulate_options.record_every,
                   "Record every K-th step in the trajectory (the last step is always "
                   "recorded)")
      ->default_val(1)
      ->check(integer_at_least(1));
  simulate
      ->add_option("--solver", simulate_options.scene.solver,
                   "Override the rigid bodies' velocity solver (rigid scenes and the rigid part of rigid + soft "
                   "scenes; an error for a soft-only scene)")
      ->check(CLI::IsMember({"interior_point", "pgs"}));
  simulate
      ->add_option("--formulation", simulate_options.scene.formulation,
                   "Override the rigid bodies' contact formulation: complementarity (hard LCP) or convex (compliant "
                   "rows, elliptic cone, Newton; docs/simulation.md); an error for a soft-only scene")
      ->check(CLI::IsMember({"complementarity", "convex"}));
  simulate->add_flag("-q,--quiet", simulate_options.quiet,
                     "Print nothing on success (non-convergence and errors still go to stderr)");
  simulate->add_option("--view", simulate_options.replay_path,
                       "Write a replay page (one self-contained HTML file: 3D view, playback, "
                       "plots; docs/viewer.md) of the recorded frames");
  simulate->add_flag("--cameras", simulate_options.cameras,
                     "Film the scene's cameras (its \"cameras\" list, docs/camera.md) at every recorded frame into "
                     "the trajectory, where the replay page shows them beside its 3D view (docs/viewer.md)");
  add_robot_file_options(simulate, simulate_options.scene);

  diffphys::cli::ViewOptions view_options;
  CLI::App* view = app.add_subcommand(
      "view",
      "Write a trajectory file (from 'simulate --out'; rigid, soft or coupled) as a replay page: "
      "one self-contained HTML file that shows the bodies in 3D with playback, contacts and plots, offline "
      "(docs/viewer.md).");
  view->add_option("trajectory", view_options.trajectory_path, "Trajectory file (JSON)")
      ->required();
  view->add_option("-o,--out", view_options.html_path, "The replay page to write (HTML)")
      ->required();
  view->add_flag("-q,--quiet", view_options.quiet, "Print nothing on success");

  diffphys::cli::RenderOptions render_options;
  CLI::App* render = app.add_subcommand(
      "render",
      "Draw a trajectory file's frames (from 'simulate --out'; rigid, soft or coupled) as PNG pictures, without a "
      "browser or a GPU: OUT/frame_00000.png, frame_00001.png, ... (docs/viewer.md, \"Pictures without a browser\"). "
      "With --camera NAME: a scene simulated for --steps world steps, seen by its camera NAME (docs/camera.md).");
  render
      ->add_option("trajectory", render_options.trajectory_path, "Trajectory file (JSON); with --camera, a scene file")
      ->required();
  render->add_option("-o,--out", render_options.out_dir, "Folder for the pictures (created if missing)")->required();
  const std::string size_range = "in [1, " + std::to_string(diffphys::cli::kMaxRenderSize) + "]";
  render->add_option("--width", render_options.width, "Picture width, pixels " + size_range)
      ->default_val(640)
      ->check(integer_at_least(1, diffphys::cli::kMaxRenderSize));
  render->add_option("--height", render_options.height, "Picture height, pixels " + size_range)
      ->default_val(480)
      ->check(integer_at_least(1, diffphys::cli::kMaxRenderSize));
  render->add_option("--every", render_options.every, "Draw every N-th recorded frame")
      ->default_val(1)
      ->check(integer_at_least(1));
  render->add_option("--frames", render_options.frames,
                     "A:B — draw recorded frames A to B-1 only (0-based; either may be left out: 10: or :50)");
  render->add_option("--camera-from", render_options.camera_from,
                     "X,Y,Z — the camera's position (m, world frame; default: the replay page's opening view, framing "
                     "every frame)");
  render->add_option("--camera-at", render_options.camera_at,
                     "X,Y,Z — the point the camera looks at (default: the centre of the box around every frame)");
  render->add_option("--camera", render_options.camera,
                     "NAME — draw a scene (the positional file) through its camera NAME (its \"cameras\" list), "
                     "simulated for --steps world steps; pictures at the camera's own size (docs/camera.md)");
  render->add_option("--steps", render_options.steps, "With --camera: world steps to simulate (states 0 to N drawn)")
      ->default_val(0)
      ->check(integer_at_least(0));
  render->add_flag("-q,--quiet", render_options.quiet, "Print nothing on success");

  InfoOptions info_options;
  CLI::App* info = app.add_subcommand(
      "info",
      "Print a scene's parts — rigid bodies (mass, inertia), shapes, joints, actuators; soft nodes, elements, "
      "materials, obstacles; the coupling between them — and the named slices of its parameter vector θ with "
      "their values.");
  info->add_option("scene", info_options.scene_path, "Scene file: JSON (rigid, soft or coupled), URDF (.urdf) or MJCF (.xml, .mjcf)")->required();
  add_robot_file_options(info, info_options.scene);

  diffphys::cli::GradcheckOptions gradcheck_options;
  CLI::App* gradcheck = app.add_subcommand(
      "gradcheck",
      "Compare every analytic gradient of a rollout of the scene (parameters, initial state, "
      "controls) with central finite differences; print the table and exit 3 on disagreement.");
  gradcheck->add_option("scene", gradcheck_options.scene_path, "Scene file: JSON (rigid, soft or both), URDF (.urdf) or MJCF (.xml, .mjcf)")->required();
  gradcheck->add_option("-n,--steps", gradcheck_options.steps, "Number of time steps of the rollout (soft and coupled scenes: default 10 soft steps)")
      ->default_val(100)
      ->check(integer_at_least(1));
  gradcheck->add_option("--tolerance", gradcheck_options.tolerance,
                        "Largest accepted |analytic − numeric| / max(|analytic|, |numeric|, floor / tolerance), "
                        "floor = 4·(finite-difference error) + 1e-9·(largest gradient component); "
                        "docs/gradients.md")
      ->default_val(1e-4)
      ->check(finite_number_above(0.0, true));
  gradcheck->add_option("--state-epsilon", gradcheck_options.state_epsilon,
                        "First step of the fourth-order central differences for the initial state and controls "
                        "(a gradient that disagrees at it is retried at h·2^k, k = −3…10, keeping the most stable; "
                        "small, because a contact rollout's loss is rough at larger steps: docs/gradients.md)")
      ->default_val(1e-7)
      ->check(finite_number_above(0.0, false));
  gradcheck->add_option("--param-epsilon", gradcheck_options.param_epsilon,
                        "First step for parameters, relative to their size (at least 1e-7; this value itself at 0; "
                        "searched like --state-epsilon)")
      ->default_val(1e-7)
      ->check(finite_number_above(0.0, false));
  gradcheck->add_flag("--failures-only", gradcheck_options.only_failures, "Print only the disagreeing rows");
  gradcheck->add_flag("--health", gradcheck_options.health,
                      "Instead of the finite-difference table, the gradient's health over the rollout: how the "
                      "final state's sensitivity to earlier states grows or vanishes, where an explosion starts and "
                      "which backward stage drives it, the first NaN (any scene; exit 3 if not finite)");
  gradcheck->add_option("--health-csv", gradcheck_options.health_csv, "With --health: also write it per step to this CSV file");
  gradcheck
      ->add_option("--formulation", gradcheck_options.scene.formulation,
                   "Override the rigid bodies' contact formulation: complementarity or convex (an error for a "
                   "soft-only scene)")
      ->check(CLI::IsMember({"complementarity", "convex"}));
  add_robot_file_options(gradcheck, gradcheck_options.scene);

  diffphys::cli::ExperimentCommandOptions experiment_options;
  CLI::App* experiment = app.add_subcommand(
      "experiment",
      "Run one of the papers' experiments end to end (docs/EXPERIMENTS.md): progress lines, then one "
      "JSON line with the figures; exit 4 if it fell short of its target.");
  experiment->add_option("name", experiment_options.name, "One of: " + diffphys::cli::experiment_names())
      ->required();
  experiment->add_flag("--quick", experiment_options.quick,
                       "The short test variant (under a minute; the invented quadruped's takes minutes)");
  experiment->add_flag("--full", experiment_options.full, "The paper's full-size variant where the default is scaled down");
  experiment->add_flag("--json", experiment_options.json_only, "Print only the final JSON line");
  experiment->add_option("--out", experiment_options.out_dir, "Directory for plots and trajectories")
      ->default_val("out");
  experiment->add_option("--variant", experiment_options.variants,
                         "Named changes to the experiment's model or recipe, comma-separated (the quadruped's: "
                         "solid-spheres, stiff-servos; arm-reach-random's: shac)");
  experiment->add_option("--seed", experiment_options.seed, "Random seed")
      ->default_val(1)
      ->check(integer_at_least(0, std::numeric_limits<unsigned>::max()));

  diffphys::cli::ConvertOptions convert_options;
  CLI::App* convert = app.add_subcommand(
      "convert",
      "Write a rigid scene — JSON, URDF (.urdf) or MJCF (.xml, .mjcf) — as a JSON scene file that loads back to "
      "the same model, parameters and initial state, bit for bit (docs/scene-format.md, \"Writing scenes\"). "
      "Soft bodies, fluids and cameras are refused.");
  convert->add_option("scene", convert_options.scene_path, "Scene file: JSON, URDF (.urdf) or MJCF (.xml, .mjcf)")
      ->required();
  convert->add_option("-o,--out", convert_options.out_path, "The JSON scene file to write")->required();
  convert
      ->add_option("--formulation", convert_options.scene.formulation,
                   "Override the scene's contact formulation before writing: complementarity or convex")
      ->check(CLI::IsMember({"complementarity", "convex"}));
  convert->add_option("--solver", convert_options.scene.solver, "Override the scene's solver before writing: interior_point or pgs")
      ->check(CLI::IsMember({"interior_point", "pgs"}));
  convert->add_flag("-q,--quiet", convert_options.quiet, "Print nothing on success");
  add_robot_file_options(convert, convert_options.scene);

  CLI::App* version = app.add_subcommand("version", "Print the version of diffphys.");

  if (const std::string unknown = unknown_subcommand_message(app, argc, argv); !unknown.empty()) {
    std::cerr << "diffphys: error: " << unknown << "\n"
              << "Run 'diffphys --help' for the subcommands and their options.\n";
    return kExitError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(error);
    std::cerr << "diffphys: error: " << error.what() << "\n"
              << "Run 'diffphys --help' for the subcommands and their options.\n";
    return kExitError;
  }

  try {
    if (simulate->parsed()) return run_simulate(simulate_options);
    if (info->parsed()) return run_info(info_options);
    if (gradcheck->parsed()) {
      gradcheck_options.steps_given = gradcheck->count("--steps") > 0;
      return diffphys::cli::run_gradcheck(gradcheck_options);
    }
    if (experiment->parsed()) return diffphys::cli::run_experiment(experiment_options);
    if (view->parsed()) return diffphys::cli::run_view(view_options);
    if (render->parsed()) {
      render_options.size_given = render->count("--width") + render->count("--height") > 0;
      return diffphys::cli::run_render(render_options);
    }
    if (convert->parsed()) return diffphys::cli::run_convert(convert_options);
    if (version->parsed()) return run_version();
  } catch (const std::exception& error) {
    std::cerr << "diffphys: error: " << error.what() << "\n";
    return kExitError;
  }
  return kExitError;
}
