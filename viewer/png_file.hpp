// viewer/png_file.hpp — writing and reading PNG files through libpng (Debian's libpng-dev), for
// `diffphys render` (viewer/render_trajectory.hpp) and its tests. 8-bit RGB only: what the
// software rasteriser makes.
#pragma once

#include <filesystem>
#include <vector>

#include "raster.hpp"

namespace diffphys::viewer {

// Writes `image` to `path` as an 8-bit RGB PNG; throws diffphys::Error naming the path (and
// libpng's reason) if it cannot, leaving no partial file there.
void write_png(const std::filesystem::path& path, const Image& image);

// `image` as the bytes of an 8-bit RGB PNG file, in memory; throws diffphys::Error with
// libpng's reason if it cannot.
std::vector<unsigned char> encode_png(const Image& image);

// Reads any PNG libpng reads, converted to 8-bit RGB (alpha composed over black, grey
// expanded); throws diffphys::Error naming the path and libpng's reason if it cannot.
Image read_png(const std::filesystem::path& path);

}  // namespace diffphys::viewer
