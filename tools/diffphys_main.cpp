// tools/diffphys_main.cpp — the `diffphys` command-line program.
//
// One function per subcommand (run_simulate, run_info, run_version), each taking its parsed
// options; main() only declares the command line (CLI11) and maps outcomes to exit codes:
//   0  success
//   1  bad input (unreadable or malformed scene, bad option): "diffphys: error: <message>"
//   2  `simulate` finished but the solver did not converge at some step (listed on stderr)
//   3  `gradcheck`: a gradient disagrees with finite differences
//   4  `experiment` ran but fell short of its target
// New subcommands (gradcheck, experiment, view) add an options struct, a run_ function and
// a block in main(). Nothing here does physics: it calls the library's public API only.
#include "output_paths.hpp"
#include "experiment_command.hpp"
#include "gradcheck_command.hpp"
#include "view_command.hpp"
#include "soft_simulate_command.hpp"
#include "soft_info_command.hpp"
#include "coupled_simulate_command.hpp"
#include "coupled_info_command.hpp"
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "diffphys/error.hpp"
#include "diffphys/model.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/trajectory.hpp"
#include "model/nearest_name.hpp"
#include "replay_html.hpp"

#ifndef DIFFPHYS_VERSION
#define DIFFPHYS_VERSION "0.1.0"
#endif

namespace {

using namespace diffphys;

constexpr int kExitSuccess = 0;
constexpr int kExitError = 1;
constexpr int kExitNotConverged = 2;

// ---------------------------------------------------------------------------------------
// Formatting helpers for the human-readable reports.

std::string format_number(double value, int significant_digits = 6) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significant_digits, value);
  return buffer;
}

// Components below 1e-12 in magnitude (round-off of quantities that are zero) print as 0.
std::string format_vec3(const Vec3& v) {
  const auto component = [](double value) {
    return format_number(std::abs(value) < 1e-12 ? 0.0 : value);
  };
  return "(" + component(v.x) + ", " + component(v.y) + ", " + component(v.z) + ")";
}

std::string format_values(std::span<const double> values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += format_number(values[i], 10);
  }
  return text + "]";
}

std::string plural(long long count, const char* singular, const char* plural_form) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural_form);
}

const char* solver_type_name(SolverType type) {
  return type == SolverType::InteriorPoint ? "interior_point" : "pgs";
}

// The step's solver as a user set it: joint coordinates need none (rigid/articulated.hpp).
const char* solver_name(const SolverSettings& solver) {
  if (solver.coordinates == Coordinates::Reduced) return "none (reduced coordinates: joints exact, no contacts)";
  return solver.formulation == Formulation::Convex ? "newton (convex formulation)" : solver_type_name(solver.type);
}

const char* body_type_name(BodyType type) {
  return type == BodyType::Dynamic ? "dynamic" : "static";
}



const char* actuator_type_name(ActuatorType type) {
  return type == ActuatorType::Motor ? "motor" : "servo";
}

// The parameter slot at layout index `item` of a per-item offset table, or nullopt when the
// slot does not apply (offset -1) or the table is shorter than expected.
std::optional<std::span<const double>> param_slot(const Params& params,
                                                  const std::vector<int>& offsets, std::size_t item,
                                                  int size) {
  if (item >= offsets.size() || offsets[item] < 0) return std::nullopt;
  const auto offset = static_cast<std::size_t>(offsets[item]);
  if (offset + static_cast<std::size_t>(size) > params.values.size()) return std::nullopt;
  return std::span<const double>(params.values).subspan(offset, static_cast<std::size_t>(size));
}

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
  const std::string bound = (inclusive ? ">= " : "> ") + format_number(lowest);
  return CLI::Validator(
      [lowest, inclusive, bound](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool in_range = inclusive ? value >= lowest : value > lowest;
        if (text.empty() || *end != '\0' || !std::isfinite(value) || !in_range)
          return "expected a finite number " + bound + ", got " + text;
        return "";
      },
      (inclusive ? "NUMBER>=" : "NUMBER>") + format_number(lowest));
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
  long long steps = 0;
  std::string trajectory_path;  // empty: do not record
  long long record_every = 1;
  std::string solver_override;  // empty: the scene's solver
  std::string formulation;      // empty: the scene's formulation
  bool quiet = false;
  std::string replay_path;  // empty: no replay page (--view)
  diffphys::cli::RobotFileOptions robot;  // --package-path, --self-collision (URDF files)
};

struct NonConvergedStep {
  long long step = 0;
  double time = 0.0;
  StepStatus status;
};

// What a robot-file loader ignored or approximated, on stderr before anything else.
void print_load_warnings(const Scene& scene) {
  for (const std::string& warning : scene.warnings) std::cerr << "diffphys: warning: " << warning << "\n";
}

// Every recorded frame stays in memory until the run ends, then the file is written whole
// (no partial output). Measured peak (bouncing_ball 100,000 frames: 212 MB; chain10 20,000
// frames: 166 MB): about 1.4 kB per frame plus 0.7 kB per body and frame. A recording that
// would need more than kMaxRecordingBytes is refused before the first step, not ended by the
// operating system after minutes.
constexpr double kMaxRecordingBytes = 4e9;
void refuse_recording_beyond_memory(const Model& model, long long steps, long long every) {
  // The first state, every `every`-th step and the last one.
  const auto frames_at = [steps](long long k) { return steps / k + 2; };
  const int bodies = model.body_count() - 1;
  const double bytes_per_frame = 1400.0 + 700.0 * bodies;
  const double bytes = static_cast<double>(frames_at(every)) * bytes_per_frame;
  if (bytes <= kMaxRecordingBytes) return;
  std::string remedy = "simulate fewer --steps";
  const double most_frames = std::floor(kMaxRecordingBytes / bytes_per_frame);
  if (most_frames >= 3) {
    auto least_every = static_cast<long long>(std::ceil(static_cast<double>(steps) / (most_frames - 2)));
    while (static_cast<double>(frames_at(least_every)) * bytes_per_frame > kMaxRecordingBytes) ++least_every;
    remedy = message("record fewer frames with --every ", least_every, " or more, or ", remedy);
  }
  throw Error(message("simulate: recording ", frames_at(every), " frames (--steps ", steps, ", --every ", every, ") of ",
                      plural(bodies, "body", "bodies"), " would hold about ", format_number(bytes / 1e9, 3),
                      " GB in memory (limit ", format_number(kMaxRecordingBytes / 1e9), " GB); ", remedy));
}

int run_simulate(const SimulateOptions& options) {
  // Coupled rigid + soft scenes ("rigid" and "soft" objects, docs/soft-bodies.md): -n soft steps.
  if (diffphys::cli::is_coupled_scene(options.scene_path)) {
    return diffphys::cli::run_coupled_simulate({options.scene_path, options.steps, options.trajectory_path,
                                                options.record_every, options.quiet, options.replay_path});
  }
  // Soft scenes (a top-level "soft" object, docs/soft-bodies.md) have their own stepper.
  if (diffphys::cli::is_soft_scene(options.scene_path)) {
    return diffphys::cli::run_soft_simulate({options.scene_path, options.steps, options.trajectory_path,
                                             options.record_every, options.quiet, options.replay_path});
  }
  Scene scene = load_scene(options.scene_path, options.robot.urdf());
  print_load_warnings(scene);
  if (options.solver_override == "interior_point") {
    scene.model.solver.type = SolverType::InteriorPoint;
  } else if (options.solver_override == "pgs") {
    scene.model.solver.type = SolverType::ProjectedGaussSeidel;
  }
  if (options.formulation == "convex") set_formulation(scene, Formulation::Convex);
  if (options.formulation == "complementarity") set_formulation(scene, Formulation::Complementarity);
  // Fail before simulating, not after, if an output cannot be written.
  cli::check_output_paths(options.trajectory_path, options.replay_path);
  const bool recording = !options.trajectory_path.empty() || !options.replay_path.empty();
  if (recording) refuse_recording_beyond_memory(scene.model, options.steps, options.record_every);
  const std::vector<double> controls = scene.controls;
  Simulator simulator(std::move(scene.model), std::move(scene.params), std::move(scene.state));
  const Model& model = simulator.model();

  std::optional<TrajectoryRecorder> recorder;
  if (recording) {
    recorder.emplace(model, simulator.params());
    recorder->record(simulator.state(), {}, StepStatus{});
  }

  long long contact_steps = 0;
  int max_contacts = 0;
  double max_residual = 0.0;
  int max_iterations = 0;
  double max_joint_error = 0.0;
  long long non_converged_count = 0;
  std::vector<NonConvergedStep> first_non_converged;
  constexpr std::size_t kListedNonConverged = 10;

  const auto wall_start = std::chrono::steady_clock::now();
  for (long long step = 1; step <= options.steps; ++step) {
    const StepStatus status = simulator.step(controls);
    // An unhealthy state is not a result (docs/robustness.md, "State health"): stop here, and
    // since outputs are written only after the loop, leave no trajectory or replay page.
    if (status.health != StateHealth::Ok)
      throw Error(message("step ", step, " (t = ", format_number(simulator.state().time),
                          " s): ", health_message(model, status), "; stopped, nothing written"));
    if (status.contact_count > 0) ++contact_steps;
    max_contacts = std::max(max_contacts, status.contact_count);
    max_residual = std::max(max_residual, status.residual);
    max_iterations = std::max(max_iterations, status.iterations);
    max_joint_error = std::max(max_joint_error, status.joint_error);
    if (!status.converged) {
      ++non_converged_count;
      if (first_non_converged.size() < kListedNonConverged)
        first_non_converged.push_back({step, simulator.state().time, status});
    }
    if (recorder && (step % options.record_every == 0 || step == options.steps))
      recorder->record(simulator.state(), simulator.contacts(), status);
  }
  const double wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  if (recorder) {
    std::ostringstream stream;
    recorder->write(stream);
    const std::string trajectory = stream.str();
    if (!options.trajectory_path.empty()) cli::write_output_file(options.trajectory_path, trajectory, "trajectory file");
    if (!options.replay_path.empty()) cli::write_replay_page(options.replay_path, trajectory, options.scene_path);
  }

  if (!options.quiet) {
    const int dynamic_bodies = static_cast<int>(
        std::count_if(model.bodies.begin(), model.bodies.end(),
                      [](const Body& body) { return body.type == BodyType::Dynamic; }));
    std::cout << "scene       " << options.scene_path << " (\"" << model.name
              << "\"): " << plural(model.body_count() - 1, "body", "bodies") << " ("
              << dynamic_bodies << " dynamic), " << plural(model.joint_count(), "joint", "joints")
              << ", " << plural(model.actuator_count(), "actuator", "actuators") << "\n";
    std::cout << "simulated   " << plural(options.steps, "step", "steps") << " of "
              << format_number(model.dt) << " s = " << format_number(simulator.state().time)
              << " s in " << format_number(wall_seconds, 3) << " s wall time";
    if (wall_seconds > 0 && options.steps > 0)
      std::cout << " (" << format_number(static_cast<double>(options.steps) / wall_seconds, 3)
                << " steps/s)";
    std::cout << "\n";
    std::cout << "contacts    " << contact_steps << " of " << plural(options.steps, "step", "steps")
              << " had contacts (at most " << max_contacts << " at once)\n";
    std::cout << "solver      " << solver_name(model.solver) << ": "
              << (non_converged_count == 0
                      ? std::string("converged at every step")
                      : "did not converge at " + plural(non_converged_count, "step", "steps"))
              << "; max residual " << format_number(max_residual, 3) << ", max "
              << plural(max_iterations, "iteration", "iterations") << ", max joint error "
              << format_number(max_joint_error, 3) << "\n";
    std::cout << "final state (centre of mass position, m; linear velocity, m/s)\n";
    const State& final_state = simulator.state();
    for (int body = 1; body < model.body_count(); ++body) {
      const auto i = static_cast<std::size_t>(body);
      if (model.bodies[i].type != BodyType::Dynamic) continue;
      std::cout << "  " << model.bodies[i].name << ": position "
                << format_vec3(final_state.position[i]) << ", velocity "
                << format_vec3(final_state.linear_velocity[i]) << "\n";
    }
    if (recorder && !options.trajectory_path.empty()) {
      std::cout << "trajectory  " << options.trajectory_path << " ("
                << plural(recorder->frame_count(), "frame", "frames") << ", every "
                << plural(options.record_every, "step", "steps") << ")\n";
    }
    if (recorder && !options.replay_path.empty()) {
      std::cout << "replay      " << options.replay_path << " ("
                << plural(recorder->frame_count(), "frame", "frames") << ", every "
                << plural(options.record_every, "step", "steps")
                << "; open it in a web browser, works offline)\n";
    }
  }

  if (non_converged_count > 0) {
    std::cerr << "diffphys: the solver did not converge at "
              << plural(non_converged_count, "step", "steps") << " (tolerance "
              << format_number(model.solver.tolerance, 3) << ", max "
              << plural(model.solver.max_iterations, "iteration", "iterations") << "):\n";
    for (const NonConvergedStep& entry : first_non_converged) {
      std::cerr << "  step " << entry.step << " (t = " << format_number(entry.time)
                << " s): " << plural(entry.status.iterations, "iteration", "iterations")
                << ", residual " << format_number(entry.status.residual, 3) << ", "
                << plural(entry.status.contact_count, "contact", "contacts") << "\n";
    }
    if (non_converged_count > static_cast<long long>(first_non_converged.size()))
      std::cerr << "  ... and "
                << non_converged_count - static_cast<long long>(first_non_converged.size())
                << " more\n";
    return kExitNotConverged;
  }
  return kExitSuccess;
}

// ---------------------------------------------------------------------------------------
// diffphys info

struct InfoOptions {
  std::string scene_path;
  diffphys::cli::RobotFileOptions robot;  // --package-path, --self-collision (URDF files)
};

// The rigid scene's description, under `heading` ("scene PATH"; "rigid part" of a coupled scene).
void print_rigid_info(const std::string& heading, const Scene& scene) {
  const Model& model = scene.model;
  const Params& params = scene.params;
  const ParamLayout& layout = model.layout;
  const SolverSettings& solver = model.solver;

  std::cout << heading << ": \"" << model.name << "\", dt "
            << format_number(model.dt) << " s\n";
  std::cout << "coordinates " << (solver.coordinates == Coordinates::Reduced ? "reduced" : "maximal")
            << "; formulation " << (solver.formulation == Formulation::Convex ? "convex" : "complementarity")
            << "; solver " << solver_name(solver) << ": max_iterations " << solver.max_iterations << ", tolerance "
            << format_number(solver.tolerance) << ", friction_directions " << solver.friction_directions << " ("
            << (solver.slip_aligned_friction ? "slip-aligned" : "fixed") << "), contact_margin "
            << format_number(solver.contact_margin) << " m, speculative_factor "
            << format_number(solver.speculative_factor) << ", contact_erp " << format_number(solver.contact_erp)
            << ", penetration_slop " << format_number(solver.penetration_slop) << " m, restitution_threshold "
            << format_number(solver.restitution_threshold) << " m/s, stabilization " << solver.stabilization_iterations
            << " iterations to " << format_number(solver.stabilization_tolerance) << ", time_of_impact "
            << (solver.time_of_impact ? "on" : "off") << "\n";

  std::cout << "\nbodies (" << model.body_count() << ", body 0 is the world):\n";
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const Body& body = model.bodies[i];
    std::cout << "  [" << i << "] " << body.name << "  " << body_type_name(body.type);
    if (const auto mass = param_slot(params, layout.body_mass, i, 1))
      std::cout << "  mass " << format_number((*mass)[0]) << " kg";
    if (const auto inertia = param_slot(params, layout.body_inertia, i, 3))
      std::cout << "  inertia " << format_values(*inertia) << " kg·m²";
    if (i < scene.state.position.size())
      std::cout << "  at " << format_vec3(scene.state.position[i]);
    std::cout << "  " << plural(body.shape_count, "shape", "shapes") << "\n";
  }

  std::cout << "\nshapes (" << model.shape_count() << "):\n";
  for (std::size_t i = 0; i < model.shapes.size(); ++i) {
    const Shape& shape = model.shapes[i];
    const auto body = static_cast<std::size_t>(shape.body);
    std::cout << "  [" << i << "] " << shape.name << "  " << type_name(shape.type) << " on "
              << (body < model.bodies.size() ? model.bodies[body].name : "?");
    const int size_count = shape_size_count(shape.type);
    if (size_count > 0) {
      if (const auto size = param_slot(params, layout.shape_size, i, size_count)) {
        if (shape.type == ShapeType::ConvexMesh) {
          const ConvexMesh& mesh = model.meshes[static_cast<std::size_t>(shape.mesh)];
          std::cout << "  scale " << format_values(*size) << " of " << mesh.source << " ("
                    << mesh.vertex_count() << " hull vertices, " << mesh.face_count() << " faces)";
        } else {
          const char* meaning = shape.type == ShapeType::Sphere ? "radius"
                                : shape.type == ShapeType::Box  ? "half extents"
                                                                : "radius, half length";
          std::cout << "  " << meaning << " " << format_values(*size) << " m";
        }
      }
    }
    std::cout << "  at " << format_vec3(shape.local_position) << " in the body frame\n";
  }

  std::cout << "\njoints (" << model.joint_count() << "):\n";
  for (std::size_t i = 0; i < model.joints.size(); ++i) {
    const Joint& joint = model.joints[i];
    const auto name_of = [&](int body) {
      const auto index = static_cast<std::size_t>(body);
      return index < model.bodies.size() ? model.bodies[index].name : std::string("?");
    };
    std::cout << "  [" << i << "] " << joint.name << "  " << type_name(joint.type) << "  "
              << name_of(joint.parent) << " -> " << name_of(joint.child);
    if (joint.has_limits)
      std::cout << "  limits [" << format_number(joint.lower_limit) << ", "
                << format_number(joint.upper_limit) << "]";
    if (const auto damping = param_slot(params, layout.joint_damping, i, 1))
      std::cout << "  damping " << format_number((*damping)[0]);
    if (joint.collide_connected) std::cout << "  collide_connected";
    std::cout << "\n";
  }

  std::cout << "\nactuators (" << model.actuator_count() << "):\n";
  for (std::size_t i = 0; i < model.actuators.size(); ++i) {
    const Actuator& actuator = model.actuators[i];
    const auto joint = static_cast<std::size_t>(actuator.joint);
    std::cout << "  [" << i << "] " << actuator.name << "  " << actuator_type_name(actuator.type)
              << " on " << (joint < model.joints.size() ? model.joints[joint].name : "?") << " dof "
              << actuator.dof;
    if (const auto gain = param_slot(params, layout.actuator_gain, i, 1))
      std::cout << "  gain " << format_number((*gain)[0]) << " 1/s";
    if (const auto max_torque = param_slot(params, layout.actuator_max_torque, i, 1))
      std::cout << "  max_torque " << format_number((*max_torque)[0]);
    if (const auto max_velocity = param_slot(params, layout.actuator_max_velocity, i, 1))
      std::cout << "  max_velocity " << format_number((*max_velocity)[0]);
    if (i < scene.controls.size()) std::cout << "  control " << format_number(scene.controls[i]);
    std::cout << "\n";
  }

  std::cout << "\nparameters θ (" << model.param_count() << " values in " << layout.slices.size()
            << " slices):\n";
  std::size_t name_width = 0;
  for (const ParamLayout::Slice& slice : layout.slices)
    name_width = std::max(name_width, slice.name.size());
  for (const ParamLayout::Slice& slice : layout.slices) {
    std::string padded = slice.name;
    padded.resize(name_width, ' ');
    std::cout << "  " << padded << "  @" << slice.offset << "  ";
    if (slice.offset >= 0 && slice.size >= 0 &&
        static_cast<std::size_t>(slice.offset + slice.size) <= params.values.size()) {
      std::cout << format_values(std::span<const double>(params.values)
                                     .subspan(static_cast<std::size_t>(slice.offset),
                                              static_cast<std::size_t>(slice.size)));
    }
    std::cout << "\n";
  }
}

int run_info(const InfoOptions& options) {
  // Coupled scenes (top-level "rigid" and "soft") first: they have a "soft" key too.
  if (diffphys::cli::is_coupled_scene(options.scene_path))
    return diffphys::cli::run_coupled_info(options.scene_path, print_rigid_info);
  if (diffphys::cli::is_soft_scene(options.scene_path)) return diffphys::cli::run_soft_info(options.scene_path);
  const Scene scene = load_scene(options.scene_path, options.robot.urdf());
  print_load_warnings(scene);
  print_rigid_info("scene " + options.scene_path, scene);
  return kExitSuccess;
}

// ---------------------------------------------------------------------------------------
// diffphys version

int run_version() {
  std::cout << "diffphys " << DIFFPHYS_VERSION << "\n";
  return kExitSuccess;
}

// --package-path and --self-collision, for a subcommand that loads robot files.
void add_robot_file_options(CLI::App* command, diffphys::cli::RobotFileOptions& options) {
  command->add_option("--package-path", options.package_path,
                      "URDF: a directory searched for package://NAME mesh paths (repeatable; searched in the "
                      "order given, before ROS_PACKAGE_PATH and the file's own directory and ancestors; "
                      "docs/robot-formats.md)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_flag("--self-collision", options.self_collision,
                    "URDF: let links of one robot that no joint joins collide with each other (off unless the "
                    "file asks with <self_collide>)");
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
      "Load a scene, step it N times holding the scene's default controls, print a summary "
      "and optionally write the trajectory (JSON; frame 0 is the initial state).");
  simulate->add_option("scene", simulate_options.scene_path,
                       "Scene file: JSON, URDF (.urdf) or MJCF (.xml, .mjcf)")->required();
  simulate->add_option("-n,--steps", simulate_options.steps, "Number of time steps to simulate")
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
      ->add_option("--solver", simulate_options.solver_override,
                   "Override the scene's velocity solver")
      ->check(CLI::IsMember({"interior_point", "pgs"}));
  simulate
      ->add_option("--formulation", simulate_options.formulation,
                   "Override the scene's contact formulation: complementarity (hard LCP) or convex (compliant "
                   "rows, elliptic cone, Newton; docs/simulation.md)")
      ->check(CLI::IsMember({"complementarity", "convex"}));
  simulate->add_flag("-q,--quiet", simulate_options.quiet,
                     "Print nothing on success (non-convergence and errors still go to stderr)");
  simulate->add_option("--view", simulate_options.replay_path,
                       "Write a replay page (one self-contained HTML file: 3D view, playback, "
                       "plots; docs/viewer.md) of the recorded frames");
  add_robot_file_options(simulate, simulate_options.robot);

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

  InfoOptions info_options;
  CLI::App* info = app.add_subcommand(
      "info",
      "Print a scene's bodies (mass, inertia), shapes, joints, actuators and the named slices "
      "of its parameter vector θ with their values.");
  info->add_option("scene", info_options.scene_path, "Scene file: JSON (rigid, soft or coupled), URDF (.urdf) or MJCF (.xml, .mjcf)")->required();
  add_robot_file_options(info, info_options.robot);

  diffphys::cli::GradcheckOptions gradcheck_options;
  CLI::App* gradcheck = app.add_subcommand(
      "gradcheck",
      "Compare every analytic gradient of a rollout of the scene (parameters, initial state, "
      "controls) with central finite differences; print the table and exit 3 on disagreement.");
  gradcheck->add_option("scene", gradcheck_options.scene_path, "Scene file: JSON, URDF (.urdf) or MJCF (.xml, .mjcf)")->required();
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
  gradcheck
      ->add_option("--formulation", gradcheck_options.formulation,
                   "Override the scene's contact formulation (rigid scenes): complementarity or convex")
      ->check(CLI::IsMember({"complementarity", "convex"}));
  add_robot_file_options(gradcheck, gradcheck_options.robot);

  diffphys::cli::ExperimentCommandOptions experiment_options;
  CLI::App* experiment = app.add_subcommand(
      "experiment",
      "Run one of the papers' experiments end to end (docs/EXPERIMENTS.md): progress lines, then one "
      "JSON line with the figures; exit 4 if it fell short of its target.");
  experiment->add_option("name", experiment_options.name, "One of: " + diffphys::cli::experiment_names())
      ->required();
  experiment->add_flag("--quick", experiment_options.quick,
                       "The short test variant (under a minute; the quadruped's takes minutes)");
  experiment->add_flag("--full", experiment_options.full, "The paper's full-size variant where the default is scaled down");
  experiment->add_flag("--json", experiment_options.json_only, "Print only the final JSON line");
  experiment->add_option("--out", experiment_options.out_dir, "Directory for plots and trajectories")
      ->default_val("out");
  experiment->add_option("--seed", experiment_options.seed, "Random seed")
      ->default_val(1)
      ->check(integer_at_least(0, std::numeric_limits<unsigned>::max()));

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
    if (version->parsed()) return run_version();
  } catch (const std::exception& error) {
    std::cerr << "diffphys: error: " << error.what() << "\n";
    return kExitError;
  }
  return kExitError;
}
