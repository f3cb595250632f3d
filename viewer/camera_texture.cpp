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

namespace {

Image picture_of(const CameraImage& image) {
  Image picture(image.width, image.height, Rgb{0, 0, 0});
  for (std::size_t i = 0; i < picture.pixels.size(); ++i)
    picture.pixels[i] = static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(image.colour[i], 0.0, 1.0)));
  return picture;
}

// RFC 4648 base64 with padding.
std::string base64(const std::vector<unsigned char>& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  text.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    const unsigned group = (static_cast<unsigned>(bytes[i]) << 16) |
                           (left > 1 ? static_cast<unsigned>(bytes[i + 1]) << 8 : 0u) |
                           (left > 2 ? static_cast<unsigned>(bytes[i + 2]) : 0u);
    text += kDigits[(group >> 18) & 63];
    text += kDigits[(group >> 12) & 63];
    text += left > 1 ? kDigits[(group >> 6) & 63] : '=';
    text += left > 2 ? kDigits[group & 63] : '=';
  }
  return text;
}

}  // namespace

void write_camera_png(const std::filesystem::path& path, const CameraImage& image) {
  write_png(path, picture_of(image));
}

std::string camera_png_data_uri(const CameraImage& image) {
  return "data:image/png;base64," + base64(encode_png(picture_of(image)));
}

}  // namespace diffphys::viewer
