// world/world.cpp — World (diffphys/world.hpp): reading any scene file into one world, the
// flat layouts of its state, tangent, parameter and control vectors, and the conversions
// between those vectors and each part's own types.
//
// Each part keeps its own engine (the rigid Model and its step, the soft model and its
// Newton step, the fluid's grid); the world only lays out their slices of the shared vectors,
// in the order of the registry of part kinds (world/part_kind.hpp, each kind's slices and
// state conversion in its own file), and says how the parts are coupled.
#include "diffphys/world.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "camera/camera_json.hpp"
#include "diffphys/coupled.hpp"
#include "diffphys/error.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/soft_scene.hpp"
#include "model/json_reader.hpp"
#include "model/nearest_name.hpp"
#include "world/coupling_kind.hpp"
#include "world/part_kind.hpp"

namespace diffphys {

namespace {

// The layout: each registered kind's slices, in the registry's order, and the ranges they take.
WorldLayout build_layout(const World& world) {
  WorldLayout layout;
  const std::span<const world::PartKind> kinds = world::part_kinds();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const world::PartKind& kind = kinds[k];
    const int starts[4] = {layout.state_size, layout.tangent_size, layout.param_count, layout.control_count};
    for (int v = 0; v < 4; ++v)
      if (kind.legacy_offsets[v] != nullptr) layout.*kind.legacy_offsets[v] = starts[v];
    if (!kind.held_by(world)) continue;
    kind.add_slices(world, layout);
    layout.parts.push_back({std::string(kind.name), static_cast<int>(k), starts[0], layout.state_size - starts[0], starts[1],
                            layout.tangent_size - starts[1], starts[2], layout.param_count - starts[2], starts[3],
                            layout.control_count - starts[3]});
  }
  return layout;
}

// Each held kind's refusals (a fluid beside bodies), then each held coupling's.
void check_parts(const World& world) {
  bool any = false;
  for (const world::PartKind& kind : world::part_kinds()) {
    if (!kind.held_by(world)) continue;
    any = true;
    if (kind.check_world != nullptr) kind.check_world(world);
  }
  if (!any) throw Error(message(world.source, ": the scene holds no rigid or soft bodies or fluid"));
  for (const world::CouplingKind& kind : world::coupling_kinds()) {
    if (!kind.held_by(world)) continue;
    try {
      kind.check(world);
    } catch (const Error& error) {
      throw Error(message(world.source, ": ", error.what()));
    }
  }
}

std::string read_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::error_code status;
  if (!std::filesystem::exists(path, status)) throw Error(message(source, ": no such file"));
  if (std::filesystem::is_directory(path, status)) throw Error(message(source, ": is a directory, not a scene file"));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(message(source, ": cannot open the file for reading"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(message(source, ": cannot read the scene file"));
  return text.str();
}

World world_from_coupled(CoupledSystem system, const std::string& source) {
  Scene rigid{std::move(system.rigid_model), std::move(system.rigid_params), std::move(system.rigid_state),
              std::move(system.rigid_controls), {}};
  soft::SoftBuild soft{std::move(system.soft_model), std::move(system.soft_params), std::move(system.soft_state)};
  const std::string name = rigid.model.name;
  return World(name, source, std::move(rigid), std::move(soft),
               WorldCoupling{std::move(system.frame_bodies), system.substeps, system.two_way});
}

// A JSON scene's parts: sectioned ("rigid", "soft", "coupling") or a rigid scene at the top level.
// `rigid_file` reads a top-level rigid scene (by path, when there is one).
template <typename ReadRigid>
World parse_json_parts(const nlohmann::json& root, std::string_view text, const std::string& source,
                       const std::string& base_directory, ReadRigid read_rigid) {
  // The sections: "rigid", "soft" (and their "coupling"), then each kind's that stands alone.
  std::string beside = "\"rigid\"/\"soft\"", holds = "\"rigid\", \"soft\", \"coupling\"";
  bool kind_section = false;
  for (const world::PartKind& kind : world::part_kinds()) {
    if (kind.section.empty()) continue;
    beside += message("/\"", kind.section, "\"");
    holds += message(", \"", kind.section, "\"");
    kind_section = kind_section || (root.is_object() && root.contains(kind.section));
  }
  const bool sectioned = !root.is_discarded() && root.is_object() && (root.contains("rigid") || root.contains("soft") || kind_section);
  if (!sectioned) {
    // Not JSON, or a rigid scene at the top level: the scene reader reports what is wrong.
    Scene scene = read_rigid();
    std::string name = scene.model.name;
    return World(std::move(name), source, std::move(scene), std::nullopt);
  }
  // The strict reader over the whole file first: a key given twice (in a section or at the top
  // level) and over-deep nesting are refused with the file's own line and column, before a
  // section is re-read from its serialised copy (which would have lost both).
  json::parse(text, source);
  const std::span<const world::PartKind> kinds = world::part_kinds();
  for (const auto& [key, value] : root.items())
    if (key != "rigid" && key != "soft" && key != "coupling" && key != "cameras" &&
        std::none_of(kinds.begin(), kinds.end(), [&](const world::PartKind& kind) { return !kind.section.empty() && key == kind.section; }))
      throw Error(message(source, ": (top level): unknown key '", key, "' beside ", beside, " (a scene with sections holds ", holds,
                          " and \"cameras\"; put a rigid scene's keys under \"rigid\")"));
  for (const world::PartKind& kind : kinds)
    if (!kind.section.empty() && root.contains(kind.section)) return kind.read_section(root, source);
  if (root.contains("rigid") && root.contains("soft"))
    return world_from_coupled(parse_coupled_scene(text, source, base_directory), source);
  if (root.contains("coupling"))
    throw Error(message(source, ": coupling: a \"coupling\" section needs both a \"rigid\" and a \"soft\" section"));
  if (root.contains("rigid")) {
    Scene scene = parse_scene(root.at("rigid").dump(), source + " (\"rigid\")");
    std::string name = scene.model.name;
    return World(std::move(name), source, std::move(scene), std::nullopt);
  }
  soft::SoftBuild soft = soft::build_soft_scene(soft::parse_soft_scene(text, source, base_directory), source);
  std::string name = soft.model.name;
  return World(std::move(name), source, std::nullopt, std::move(soft));
}

// The parts, then the scene's "cameras" list (camera/camera_json.hpp), whose bodies are the
// rigid part's.
template <typename ReadRigid>
World parse_json_world(std::string_view text, const std::string& source, const std::string& base_directory,
                       ReadRigid read_rigid) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, false);
  World world = parse_json_parts(root, text, source, base_directory, read_rigid);
  if (root.is_object() && root.contains("cameras")) {
    camera::SceneCameras cameras = camera::read_cameras(root["cameras"], world.rigid ? &world.rigid->model : nullptr, source);
    world.cameras = std::move(cameras.cameras);
    world.camera_appearances = std::move(cameras.appearances);
  }
  return world;
}

}  // namespace

const WorldLayout::PartRange* WorldLayout::part(std::string_view kind) const {
  for (const PartRange& range : parts)
    if (range.kind == kind) return &range;
  return nullptr;
}

const NamedSlice& WorldLayout::find(std::span<const NamedSlice> slices, std::string_view name, std::string_view vector) {
  for (const NamedSlice& slice : slices)
    if (slice.name == name) return slice;
  std::vector<std::string_view> known;
  known.reserve(slices.size());
  for (const NamedSlice& slice : slices) known.push_back(slice.name);
  throw Error(message("unknown ", vector, " slice '", name, "'", did_you_mean(name, known)));
}

World::World(std::string name_, std::string source_, std::optional<Scene> rigid_, std::optional<soft::SoftBuild> soft_,
             WorldCoupling coupling_, std::optional<fluid::FluidBuild> fluid_)
    : name(std::move(name_)), source(std::move(source_)), rigid(std::move(rigid_)), soft(std::move(soft_)),
      coupling(std::move(coupling_)), fluid(std::move(fluid_)) {
  check_parts(*this);
  layout_ = build_layout(*this);
  // Soft obstacles moved by a rigid body are named "<body>/<shape>" after the rigid shape
  // they copy (soft/coupled_scene_json.cpp).
  if (rigid && soft)
    for (const soft::Obstacle& obstacle : soft->model.obstacles) {
      if (obstacle.frame < 0) continue;
      const Model& model = rigid->model;
      for (std::size_t s = 0; s < model.shapes.size(); ++s) {
        const Shape& shape = model.shapes[s];
        if (obstacle.name != model.bodies[static_cast<std::size_t>(shape.body)].name + "/" + shape.name) continue;
        const std::string prefix = "shape/" + shape.name + "/";
        for (const NamedSlice& slice : layout_.params)
          if (slice.name.starts_with(prefix)) collider_geometry_.push_back(slice);
      }
    }
}

// "rigid", "soft", "rigid + soft", "fluid": the held kinds' names.
std::string World::kind() const {
  std::string names;
  for (const WorldLayout::PartRange& part : layout_.parts) names += (names.empty() ? "" : " + ") + part.kind;
  return names;
}

// The last held kind's step: the coarsest (a rigid part takes substeps inside a soft step).
double World::dt() const { return world::kind_of(layout_.parts.back()).dt(*this); }

WorldState World::initial_state() const {
  WorldState state;
  for (const WorldLayout::PartRange& part : layout_.parts) world::kind_of(part).initial_state(*this, state);
  state.time = world::kind_of(layout_.parts.front()).time(state);
  return state;
}

WorldParams World::default_params() const {
  WorldParams params;
  params.values.reserve(static_cast<std::size_t>(layout_.param_count));
  for (const WorldLayout::PartRange& part : layout_.parts) {
    const std::span<const double> values = world::kind_of(part).default_params(*this);
    params.values.insert(params.values.end(), values.begin(), values.end());
  }
  return params;
}

std::vector<double> World::default_controls() const {
  std::vector<double> controls(static_cast<std::size_t>(layout_.control_count), 0.0);
  for (const WorldLayout::PartRange& part : layout_.parts)
    if (world::kind_of(part).default_controls != nullptr)
      world::kind_of(part).default_controls(
          *this, std::span<double>(controls).subspan(static_cast<std::size_t>(part.control_offset), static_cast<std::size_t>(part.control_count)));
  return controls;
}

World load_world(const std::filesystem::path& path, const UrdfOptions& urdf_options) {
  const std::string extension = path.extension().string();
  const std::string source = path.string();
  if (extension == ".urdf" || extension == ".xml" || extension == ".mjcf") {
    Scene scene = load_scene(path, urdf_options);
    std::string name = scene.model.name;
    return World(std::move(name), source, std::move(scene), std::nullopt);
  }
  const std::string text = read_file(path);
  const std::string base = path.has_parent_path() ? path.parent_path().string() : std::string(".");
  return parse_json_world(text, source, base, [&] { return load_scene(path, urdf_options); });
}

World parse_world(std::string_view json_text, const std::string& source, const std::string& base_directory) {
  return parse_json_world(json_text, source, base_directory, [&] { return parse_scene(json_text, source); });
}

std::vector<double> pack_state(const World& world, const WorldState& state) {
  const WorldLayout& layout = world.layout();
  std::vector<double> values(static_cast<std::size_t>(layout.state_size));
  for (const WorldLayout::PartRange& part : layout.parts)
    world::kind_of(part).pack(world, state, std::span<double>(values).subspan(static_cast<std::size_t>(part.state_offset),
                                                                              static_cast<std::size_t>(part.state_size)));
  return values;
}

WorldState unpack_state(const World& world, std::span<const double> values) {
  const WorldLayout& layout = world.layout();
  if (values.size() != static_cast<std::size_t>(layout.state_size))
    throw Error(message("world state: expected ", layout.state_size, " values (", world.kind(), " world), got ", values.size()));
  WorldState state = world.initial_state();
  for (const WorldLayout::PartRange& part : layout.parts)
    world::kind_of(part).unpack(world, values.subspan(static_cast<std::size_t>(part.state_offset), static_cast<std::size_t>(part.state_size)),
                                state);
  return state;
}

std::span<double> WorldParams::slice(const World& world, std::string_view name) {
  const NamedSlice& s = WorldLayout::find(world.layout().params, name, "parameter");
  if (values.size() != static_cast<std::size_t>(world.layout().param_count))
    throw Error(message("world parameters: expected ", world.layout().param_count, " values, got ", values.size()));
  return std::span<double>(values).subspan(static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.size));
}

std::span<const double> WorldParams::slice(const World& world, std::string_view name) const {
  return const_cast<WorldParams&>(*this).slice(world, name);
}

Params rigid_params(const World& world, const WorldParams& params) {
  Params rigid;
  if (params.values.size() != static_cast<std::size_t>(world.layout().param_count))
    throw Error(message("world parameters: expected ", world.layout().param_count, " values, got ", params.values.size()));
  rigid.values.assign(params.values.begin(), params.values.begin() + world.layout().soft_param_offset);
  return rigid;
}

soft::SoftParams soft_params(const World& world, const WorldParams& params) {
  soft::SoftParams soft;
  if (params.values.size() != static_cast<std::size_t>(world.layout().param_count))
    throw Error(message("world parameters: expected ", world.layout().param_count, " values, got ", params.values.size()));
  soft.values.assign(params.values.begin() + world.layout().soft_param_offset,
                     params.values.begin() + world.layout().fluid_param_offset);
  return soft;
}

fluid::FluidParams fluid_params(const World& world, const WorldParams& params) {
  fluid::FluidParams fluid;
  if (params.values.size() != static_cast<std::size_t>(world.layout().param_count))
    throw Error(message("world parameters: expected ", world.layout().param_count, " values, got ", params.values.size()));
  fluid.values.assign(params.values.begin() + world.layout().fluid_param_offset, params.values.end());
  return fluid;
}

std::span<const double> WorldGradients::param(const World& world, std::string_view name) const {
  const NamedSlice& s = WorldLayout::find(world.layout().params, name, "parameter");
  if (params.size() != static_cast<std::size_t>(world.layout().param_count))
    throw Error(message("world gradients: no parameter gradients (RolloutOptions::parameter_gradients was off)"));
  return std::span<const double>(params).subspan(static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.size));
}

}  // namespace diffphys
