// viewer/camera_film.cpp — CameraFilm (camera_film.hpp): every scene camera drawn at each
// recorded frame, kept as PNG data URIs, written under the trajectory's "cameras".
#include "camera_film.hpp"

#include <nlohmann/json.hpp>

#include "camera_texture.hpp"
#include "diffphys/error.hpp"

namespace diffphys::viewer {

CameraFilm::CameraFilm(const World& world, const WorldParams& params) : params_(params) {
  if (world.cameras.empty())
    throw Error(message("world '", world.name,
                        "': --cameras films the scene's cameras, and it has none (a \"cameras\" ",
                        "list, docs/scene-format.md)"));
  for (const diffphys::Camera& camera : world.cameras)
    reels_.push_back({std::make_unique<WorldCamera>(world, camera.name), {}});
}

void CameraFilm::record(const WorldSimulator& simulator) {
  for (Reel& reel : reels_) {
    reel.camera->render(params_, simulator.state(), image_);
    reel.frames.push_back(camera_png_data_uri(image_));
  }
}

int CameraFilm::frame_count() const {
  return static_cast<int>(reels_.front().frames.size());
}

std::string CameraFilm::add_to(std::string_view document) const {
  nlohmann::json trajectory = nlohmann::json::parse(document);
  nlohmann::json cameras = nlohmann::json::array();
  for (const Reel& reel : reels_) {
    const diffphys::Camera& camera = reel.camera->camera();
    cameras.push_back(
        {{"name", camera.name}, {"width", camera.width}, {"height", camera.height}, {"frames", reel.frames}});
  }
  trajectory["cameras"] = std::move(cameras);
  return trajectory.dump();
}

double camera_film_bytes_per_frame(const World& world) {
  double bytes = 0.0;
  // An 8-bit RGB PNG holds at most about its raw pixels (deflate's stored blocks) plus a row
  // filter byte each and its chunks; base64 takes 4 characters per 3 bytes.
  for (const diffphys::Camera& camera : world.cameras)
    bytes += 4.0 / 3.0 * (3.0 * camera.width * camera.height + camera.height + 1000.0) + 100.0;
  return bytes;
}

}  // namespace diffphys::viewer
