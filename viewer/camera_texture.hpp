// viewer/camera_texture.hpp — PNG files as camera textures (diffphys/camera.hpp) and camera
// images as PNG files, through the PNG reader and writer of `diffphys render` (png_file.hpp).
// Here rather than in the library so that the library keeps no dependency on libpng.
#pragma once

#include <filesystem>
#include <string>

#include "diffphys/camera.hpp"

namespace diffphys::viewer {

// The PNG at `path` as a texture, texels in [0, 1]; throws diffphys::Error naming the path
// and libpng's reason if it does not load.
Texture load_texture(const std::filesystem::path& path);

// The colour plane of `image`, clamped to [0, 1], as an 8-bit RGB PNG (for looking at frames).
void write_camera_png(const std::filesystem::path& path, const CameraImage& image);

// The same PNG as a data URI, "data:image/png;base64,…" (the replay page's camera frames).
std::string camera_png_data_uri(const CameraImage& image);

}  // namespace diffphys::viewer
