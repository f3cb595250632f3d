// tools/render_command.cpp — `diffphys render TRAJ.json --out DIR`: checks the options, reads
// the trajectory through viewer::TrajectoryScene (which checks it as `diffphys view` does),
// picks the frames and writes one PNG per frame (tools/render_command.hpp).
#include "render_command.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "camera_texture.hpp"
#include "diffphys/camera.hpp"
#include "diffphys/error.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_camera.hpp"
#include "diffphys/world_simulator.hpp"
#include "png_file.hpp"
#include "render_trajectory.hpp"

namespace diffphys::cli {
namespace {

namespace fs = std::filesystem;
using viewer::operator+;
using viewer::operator-;

// Pictures up to this many pixels are drawn at 2 × 2 samples per pixel (antialiased edges);
// larger ones at one, so that the drawing buffers stay near 120 MB.
constexpr long long kMaxSupersampledPixels = 1920LL * 1200LL;

// "X,Y,Z" as three finite numbers; throws naming the option and the value.
viewer::Vec3 parse_point(const std::string& text, const char* option) {
  viewer::Vec3 point{};
  std::size_t start = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const std::size_t comma = k < 2 ? text.find(',', start) : text.size();
    const std::string piece = comma == std::string::npos ? "" : text.substr(start, comma - start);
    char* end = nullptr;
    const double value = piece.empty() ? NAN : std::strtod(piece.c_str(), &end);
    if (piece.empty() || *end != '\0' || !std::isfinite(value) ||
        (k == 2 && text.find(',', start) != std::string::npos))
      throw Error(message(option, " ", text, ": expected a point X,Y,Z of three finite numbers (metres, world frame)"));
    point[k] = value;
    start = comma + 1;
  }
  return point;
}

// A non-negative integer, or `fallback` for an empty text; throws naming --frames.
long long parse_bound(const std::string& text, long long fallback, const std::string& whole) {
  if (text.empty()) return fallback;
  long long value = 0;
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || stop != text.data() + text.size() || value < 0)
    throw Error(message("--frames ", whole,
                        ": expected A:B, recorded frames A to B − 1 (non-negative integers; either may be "
                        "left out)"));
  return value;
}

// The recorded frames to draw: [A, B) of "A:B", every `every`-th from A.
std::vector<int> selected_frames(const std::string& range, long long every, int frame_count,
                                 const std::string& source) {
  long long first = 0, end = frame_count;
  if (!range.empty()) {
    const std::size_t colon = range.find(':');
    if (colon == std::string::npos || range.find(':', colon + 1) != std::string::npos)
      throw Error(message("--frames ", range,
                          ": expected A:B, recorded frames A to B − 1 (either may be left out: 10: or :50)"));
    first = parse_bound(range.substr(0, colon), 0, range);
    end = parse_bound(range.substr(colon + 1), frame_count, range);
    if (end > frame_count)
      throw Error(message("--frames ", range, ": ", source, " has ", frame_count, " frames (0 to ", frame_count - 1,
                          "), so B can be at most ", frame_count));
    if (first >= end)
      throw Error(message("--frames ", range, ": selects no frame (A must be less than B; ", source, " has ",
                          frame_count, " frames)"));
  }
  std::vector<int> frames;
  for (long long f = first; f < end; f += every) frames.push_back(static_cast<int>(f));
  return frames;
}

std::string frame_name(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "frame_%05zu.png", index);
  return name;
}

// How many frame_NNNNN.png files in `folder` have an index of `written` or more: left from an
// earlier render, they would end up in a video made from the folder.
long long stale_frames(const fs::path& folder, std::size_t written) {
  long long count = 0;
  std::error_code status;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, status)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("frame_") || !name.ends_with(".png") || name.size() < 15) continue;
    const std::string digits = name.substr(6, name.size() - 10);
    std::size_t index = 0;
    const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc() && stop == digits.data() + digits.size() && index >= written) ++count;
  }
  return count;
}

// `render SCENE --camera NAME --steps N --out DIR`: the scene simulated N world steps, states
// 0, every, 2·every, … ≤ N drawn through the camera. Everything is checked before anything is
// written.
int run_camera_render(const RenderOptions& options) {
  const std::string& scene_path = options.trajectory_path;
  if (options.size_given)
    throw Error(message("--camera ", options.camera, ": the camera has its own size (the scene file's \"width\" and ",
                        "\"height\"); leave out --width and --height"));
  if (!options.frames.empty() || !options.camera_from.empty() || !options.camera_at.empty())
    throw Error(message("--camera ", options.camera, ": --frames, --camera-from and --camera-at draw a trajectory ",
                        "file; with --camera, give --steps (and --every)"));
  if (options.steps < 0) throw Error(message("--steps ", options.steps, ": must be ≥ 0"));
  if (options.out_dir.empty()) throw Error("--out: give the folder to write the pictures into");
  std::error_code status;
  const fs::path out_dir(options.out_dir);
  if (fs::exists(out_dir, status) && !fs::is_directory(out_dir, status))
    throw Error(message("--out ", options.out_dir,
                        ": is a file, not a folder; give a folder for the pictures (created if missing)"));
  const World world = load_world(scene_path);
  const Camera* camera = nullptr;
  std::string names;
  for (const Camera& candidate : world.cameras) {
    if (candidate.name == options.camera) camera = &candidate;
    names += (names.empty() ? "'" : ", '") + candidate.name + "'";
  }
  if (camera == nullptr)
    throw Error(message(scene_path, ": no camera '", options.camera, "' (",
                        names.empty() ? "the scene has no \"cameras\" list" : "its cameras: " + names, ")"));
  if (!world.has_rigid())
    throw Error(message(scene_path, ": the camera draws rigid shapes and the scene has no rigid part"));
  const Model& model = world.rigid->model;
  // The scene's look for this camera ("colours", "background" of its entry).
  CameraRenderer renderer(model, *camera,
                          world_camera_appearance(world, static_cast<int>(camera - world.cameras.data())));
  WorldSimulator simulator(world, world.default_params(), world.initial_state());
  const Params params = rigid_params(world, simulator.params());
  fs::create_directories(out_dir, status);
  if (status || !fs::is_directory(out_dir))
    throw Error(
        message("--out ", options.out_dir, ": cannot create the folder", status ? ": " + status.message() : ""));
  CameraImage image;
  std::size_t written = 0;
  for (long long step = 0; step <= options.steps; ++step) {
    if (step > 0) simulator.step();
    if (step % options.every != 0) continue;
    renderer.render(params, simulator.state().rigid, image);
    viewer::write_camera_png(out_dir / frame_name(written++), image);
  }
  if (!options.quiet) {
    std::cout << "rendered    " << written << (written == 1 ? " frame" : " frames") << " of " << camera->width << " × "
              << camera->height << " pixels through camera '" << camera->name
              << "': " << (out_dir / frame_name(0)).string() << (written > 1 ? " … " + frame_name(written - 1) : "")
              << "\n";
    const double rate = 1.0 / (world.dt() * static_cast<double>(options.every));
    std::cout << "video       ffmpeg -framerate " << std::max(1LL, std::llround(std::min(rate, 240.0))) << " -i "
              << (out_dir / "frame_%05d.png").string() << " -pix_fmt yuv420p out.mp4\n";
  }
  return 0;
}

}  // namespace

int run_render(const RenderOptions& options) {
  if (!options.camera.empty()) return run_camera_render(options);
  if (options.steps > 0)
    throw Error(message("--steps ", options.steps, ": goes with --camera NAME (a trajectory file's frames are already ",
                        "simulated)"));
  // Everything is checked before anything is written.
  std::error_code status;
  const fs::path out_dir(options.out_dir);
  if (options.out_dir.empty()) throw Error("--out: give the folder to write the pictures into");
  if (fs::exists(out_dir, status) && !fs::is_directory(out_dir, status))
    throw Error(message("--out ", options.out_dir,
                        ": is a file, not a folder; give a folder for the pictures (created if missing)"));

  std::ifstream file(options.trajectory_path, std::ios::binary);
  if (!file || fs::is_directory(options.trajectory_path, status))
    throw Error(message(options.trajectory_path, ": cannot open the trajectory file"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(message(options.trajectory_path, ": cannot read the trajectory file"));
  const viewer::TrajectoryScene scene(text.str(), options.trajectory_path);

  const std::vector<int> frames =
      selected_frames(options.frames, options.every, scene.frame_count(), options.trajectory_path);
  viewer::Camera camera = scene.default_camera(static_cast<double>(options.width) / options.height);
  if (!options.camera_at.empty()) {
    const viewer::Vec3 at = parse_point(options.camera_at, "--camera-at");
    // The opening view's direction and distance, around the given point.
    camera.eye = at + (camera.eye - camera.target);
    camera.target = at;
  }
  if (!options.camera_from.empty()) camera.eye = parse_point(options.camera_from, "--camera-from");
  if (!(viewer::norm(camera.eye - camera.target) > 0))
    throw Error(message("--camera-from ", options.camera_from,
                        ": the camera is at the point it looks at; give two different points"));
  const int supersampling = static_cast<long long>(options.width) * options.height <= kMaxSupersampledPixels ? 2 : 1;

  fs::create_directories(out_dir, status);
  if (status || !fs::is_directory(out_dir))
    throw Error(
        message("--out ", options.out_dir, ": cannot create the folder", status ? ": " + status.message() : ""));
  for (const std::string& note : scene.notes()) std::cerr << "diffphys: note: " << note << "\n";
  for (std::size_t k = 0; k < frames.size(); ++k)
    viewer::write_png(out_dir / frame_name(k),
                      scene.render(frames[k], camera, options.width, options.height, supersampling));

  if (!options.quiet) {
    const fs::path first = out_dir / frame_name(0), last = out_dir / frame_name(frames.size() - 1);
    std::cout << "rendered    " << frames.size() << (frames.size() == 1 ? " frame" : " frames") << " of "
              << options.width << " × " << options.height << " pixels: " << first.string()
              << (frames.size() > 1 ? " … " + last.filename().string() : "") << "\n";
    // The frame rate that plays the picked frames in real time (their mean spacing in time).
    const double span = scene.frame_time(frames.back()) - scene.frame_time(frames.front());
    const double rate = frames.size() > 1 && span > 0 ? static_cast<double>(frames.size() - 1) / span : 0.0;
    const bool real_time = rate >= 1 && rate <= 240;
    char spacing[64] = "";
    if (real_time)
      std::snprintf(spacing, sizeof spacing, "   (real time: the frames are %.4g ms apart)", 1000.0 / rate);
    std::cout << "video       ffmpeg -framerate " << (real_time ? std::llround(rate) : 30) << " -i "
              << (out_dir / "frame_%05d.png").string() << " -pix_fmt yuv420p out.mp4" << spacing << "\n";
    if (const long long stale = stale_frames(out_dir, frames.size()); stale > 0)
      std::cout
          << "note        " << out_dir.string() << " also holds " << stale
          << " older frame_NNNNN.png files numbered after these (from an earlier render): remove them before making a "
             "video of the folder\n";
  }
  return 0;
}

}  // namespace diffphys::cli
