// viewer/png_file.cpp — PNG files through libpng's simplified API (png_image, libpng 1.6):
// viewer/png_file.hpp.
#include "png_file.hpp"

#include <png.h>

#include <cstring>
#include <system_error>

#include "diffphys/error.hpp"

namespace diffphys::viewer {

void write_png(const std::filesystem::path& path, const Image& image) {
  if (image.width < 1 || image.height < 1 ||
      image.pixels.size() != 3 * static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height))
    throw Error(message(path.string(), ": cannot write an empty or inconsistent image (", image.width, " × ",
                        image.height, " pixels)"));
  png_image description;
  std::memset(&description, 0, sizeof description);
  description.version = PNG_IMAGE_VERSION;
  description.width = static_cast<png_uint_32>(image.width);
  description.height = static_cast<png_uint_32>(image.height);
  description.format = PNG_FORMAT_RGB;
  const int row_stride = 3 * image.width;
  if (png_image_write_to_file(&description, path.c_str(), 0, image.pixels.data(), row_stride, nullptr) == 0) {
    const std::string reason = description.message;
    png_image_free(&description);
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    throw Error(message(path.string(), ": cannot write the PNG file: ", reason));
  }
}

std::vector<unsigned char> encode_png(const Image& image) {
  if (image.width < 1 || image.height < 1 ||
      image.pixels.size() != 3 * static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height))
    throw Error(message("cannot encode an empty or inconsistent image (", image.width, " × ", image.height,
                        " pixels) as a PNG"));
  png_image description;
  std::memset(&description, 0, sizeof description);
  description.version = PNG_IMAGE_VERSION;
  description.width = static_cast<png_uint_32>(image.width);
  description.height = static_cast<png_uint_32>(image.height);
  description.format = PNG_FORMAT_RGB;
  const int row_stride = 3 * image.width;
  // The first call measures, the second writes (libpng's simplified API, 1.6.22 and later).
  png_alloc_size_t size = 0;
  std::vector<unsigned char> bytes;
  for (int pass = 0; pass < 2; ++pass) {
    if (png_image_write_to_memory(&description, pass == 0 ? nullptr : bytes.data(), &size, 0, image.pixels.data(),
                                  row_stride, nullptr) == 0) {
      const std::string reason = description.message;
      png_image_free(&description);
      throw Error(message("cannot encode a PNG: ", reason));
    }
    if (pass == 0) bytes.resize(size);
  }
  bytes.resize(size);
  return bytes;
}

Image read_png(const std::filesystem::path& path) {
  png_image description;
  std::memset(&description, 0, sizeof description);
  description.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&description, path.c_str()) == 0)
    throw Error(message(path.string(), ": cannot read the PNG file: ", description.message));
  description.format = PNG_FORMAT_RGB;
  Image image;
  image.width = static_cast<int>(description.width);
  image.height = static_cast<int>(description.height);
  image.pixels.resize(PNG_IMAGE_SIZE(description));
  const png_color black{0, 0, 0};
  if (png_image_finish_read(&description, &black, image.pixels.data(), 0, nullptr) == 0) {
    const std::string reason = description.message;
    png_image_free(&description);
    throw Error(message(path.string(), ": cannot read the PNG file: ", reason));
  }
  return image;
}

}  // namespace diffphys::viewer
