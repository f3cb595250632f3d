// viewer/camera_texture.cpp — PNG textures and camera frames (camera_texture.hpp).
#include "camera_texture.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "png_file.hpp"

namespace diffphys::viewer {

Texture load_texture(const std::filesystem::path& path) {
  const Image image = read_png(path);  // throws Error naming the path and the reason
  if (image.width < 1 || image.height < 1)
    throw Error(message(path.string(), ": the texture has no texels (", image.width, " × ", image.height, ")"));
  Texture texture;
  texture.width = image.width;
  texture.height = image.height;
  texture.texels.resize(image.pixels.size());
  for (std::size_t i = 0; i < image.pixels.size(); ++i) texture.texels[i] = image.pixels[i] / 255.0;
  return texture;
}

void write_camera_png(const std::filesystem::path& path, const CameraImage& image) {
  Image picture(image.width, image.height, Rgb{0, 0, 0});
  for (std::size_t i = 0; i < picture.pixels.size(); ++i)
    picture.pixels[i] = static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(image.colour[i], 0.0, 1.0)));
  write_png(path, picture);
}

}  // namespace diffphys::viewer
