// fuzz/reader_entry_points.cpp — the readers' fuzzing entry points (reader_entry_points.hpp).
#include "reader_entry_points.hpp"

#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "diffphys/convex_mesh.hpp"
#include "diffphys/coupled.hpp"
#include "diffphys/world.hpp"
#include "diffphys/error.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_mesh.hpp"
#include "diffphys/soft_scene.hpp"

namespace diffphys::fuzz {
namespace {

const std::string kSource(kSourceName);

// The mesh readers take a path and dispatch on its extension: the bytes go to a file of this
// process's own (the fuzzers may run in parallel), rewritten for every input.
std::filesystem::path write_input_file(std::string_view bytes, std::string_view extension) {
  static const std::filesystem::path folder = [] {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("diffphys-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(path);
    return path;
  }();
  const std::filesystem::path path = folder / (std::string(kSourceName) + std::string(extension));
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void read_scene(std::string_view bytes) { parse_scene(bytes, kSourceName); }
// `diffphys info` on a soft scene: parse, then build the model.
void read_soft(std::string_view bytes) { soft::build_soft_scene(soft::parse_soft_scene(bytes, kSource), kSource); }
void read_coupled(std::string_view bytes) { parse_coupled_scene(bytes, kSource); }
// Any JSON scene through the one-world reader (sections, a top-level rigid scene, a soft scene).
void read_world(std::string_view bytes) { parse_world(bytes, kSource); }
void read_urdf(std::string_view bytes) { parse_urdf(bytes, kSourceName); }
void read_mjcf(std::string_view bytes) { parse_mjcf(bytes, kSourceName); }
// A mesh shape's file: its vertices, then their convex hull (libqhull).
void read_obj(std::string_view bytes) { load_convex_mesh(write_input_file(bytes, ".obj")); }
void read_stl(std::string_view bytes) { load_convex_mesh(write_input_file(bytes, ".stl")); }
// A soft body's tet mesh, then a soft model built from it (what a scene's "tet_mesh" does).
void read_tet(std::string_view bytes) {
  const soft::TetMesh mesh = soft::parse_tet_mesh(bytes, kSource);
  soft::SoftSpec spec;
  spec.tet_materials.push_back({});
  soft::add_tet_mesh(spec, mesh, 0);
  soft::build_soft_scene(spec, kSource);
}

constexpr std::array kReaders{
    Reader{"scene", ".json", read_scene}, Reader{"soft", ".json", read_soft}, Reader{"coupled", ".json", read_coupled},
    Reader{"world", ".json", read_world},
    Reader{"urdf", ".urdf", read_urdf},   Reader{"mjcf", ".xml", read_mjcf},  Reader{"obj", ".obj", read_obj},
    Reader{"stl", ".stl", read_stl},      Reader{"tet", ".tet", read_tet},
};

}  // namespace

std::span<const Reader> readers() { return kReaders; }

const Reader* find_reader(std::string_view name) {
  for (const Reader& reader : kReaders) {
    if (reader.name == name) return &reader;
  }
  return nullptr;
}

Outcome run_reader(const Reader& reader, std::string_view bytes) {
  try {
    reader.read(bytes);
    return {true, {}};
  } catch (const Error& error) {
    return {false, error.what()};
  }
}

}  // namespace diffphys::fuzz
