// world/world.cpp — World (diffphys/world.hpp): reading any scene file into one world, the
// flat layouts of its state, tangent, parameter and control vectors, and the conversions
// between those vectors and each part's own types.
//
// Each part keeps its own engine (the rigid Model and its step, the soft model and its
// Newton step); the world only names their slices of the shared vectors and says how the
// parts are coupled, so that a new part adds slices here and an engine beside the others.
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
#include "fluid/fluid_scene_json.hpp"
#include "model/json_reader.hpp"
#include "model/nearest_name.hpp"

namespace diffphys {

namespace {

constexpr int kStatePerBody = 13;

void add(std::vector<NamedSlice>& slices, int& size, std::string name, int count) {
  slices.push_back({std::move(name), size, count});
  size += count;
}

WorldLayout build_layout(const World& world) {
  WorldLayout layout;
  if (world.rigid) {
    const Model& model = world.rigid->model;
    for (const Body& body : model.bodies) {
      add(layout.state, layout.state_size, "body/" + body.name, kStatePerBody);
      add(layout.tangent, layout.tangent_size, "body/" + body.name, kStateTangentPerBody);
    }
    for (const ParamLayout::Slice& slice : model.layout.slices) add(layout.params, layout.param_count, slice.name, slice.size);
    const int substeps = world.rigid_steps_per_step();
    for (int k = 0; k < substeps; ++k)
      for (const Actuator& actuator : model.actuators)
        add(layout.controls, layout.control_count,
            substeps == 1 ? "actuator/" + actuator.name : "actuator/" + actuator.name + "/substep/" + std::to_string(k), 1);
  }
  layout.soft_state_offset = layout.state_size;
  layout.soft_tangent_offset = layout.tangent_size;
  layout.soft_param_offset = layout.param_count;
  layout.soft_control_offset = layout.control_count;
  if (world.soft) {
    const soft::SoftModel& model = world.soft->model;
    for (std::vector<NamedSlice>* slices : {&layout.state, &layout.tangent}) {
      int& size = slices == &layout.state ? layout.state_size : layout.tangent_size;
      add(*slices, size, "soft/positions", model.dof_count());
      add(*slices, size, "soft/velocities", model.dof_count());
    }
    for (const soft::SoftParamLayout::Slice& slice : model.layout.slices)
      add(layout.params, layout.param_count, "soft/" + slice.name, slice.size);
    add(layout.controls, layout.control_count, "soft/forces", model.dof_count());
  }
  layout.fluid_state_offset = layout.state_size;
  layout.fluid_tangent_offset = layout.tangent_size;
  layout.fluid_param_offset = layout.param_count;
  layout.fluid_control_offset = layout.control_count;
  if (world.fluid) {
    // The tangent of a fluid state is the state itself (flat fields).
    const fluid::FluidModel& model = world.fluid->model;
    for (std::vector<NamedSlice>* slices : {&layout.state, &layout.tangent}) {
      int& size = slices == &layout.state ? layout.state_size : layout.tangent_size;
      add(*slices, size, "fluid/velocity_u", model.u_count());
      add(*slices, size, "fluid/velocity_v", model.v_count());
      for (const std::string& scalar : model.scalar_names) add(*slices, size, "fluid/scalar/" + scalar, model.cell_count());
    }
    for (const fluid::FluidParamLayout::Slice& slice : model.layout.slices) add(layout.params, layout.param_count, slice.name, slice.size);
    add(layout.controls, layout.control_count, "fluid/force", model.control_count());
  }
  return layout;
}

void check_parts(const World& world) {
  if (world.fluid && (world.rigid || world.soft))
    throw Error(message(world.source, ": a fluid cannot share a scene with rigid or soft bodies yet (no coupling between ",
                        "them is implemented; docs/fluids.md)"));
  if (world.fluid) return;
  if (!world.rigid && !world.soft) throw Error(message(world.source, ": the scene holds no rigid or soft bodies or fluid"));
  if (!world.rigid || !world.soft) return;
  try {
    validate_coupling(world.rigid->model, world.soft->model, world.coupling.frame_bodies, world.coupling.substeps);
  } catch (const Error& error) {
    throw Error(message(world.source, ": ", error.what()));
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
  const bool sectioned = !root.is_discarded() && root.is_object() &&
                         (root.contains("rigid") || root.contains("soft") || root.contains("fluid"));
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
  for (const auto& [key, value] : root.items())
    if (key != "rigid" && key != "soft" && key != "coupling" && key != "cameras" && key != "fluid")
      throw Error(message(source, ": (top level): unknown key '", key, "' beside \"rigid\"/\"soft\"/\"fluid\" (a scene with ",
                          "sections holds \"rigid\", \"soft\", \"coupling\", \"fluid\" and \"cameras\"; put a rigid ",
                          "scene's keys under \"rigid\")"));
  if (root.contains("fluid")) {
    if (root.contains("rigid") || root.contains("soft") || root.contains("coupling"))
      throw Error(message(source, ": fluid: a \"fluid\" section cannot share a scene with \"rigid\", \"soft\" or ",
                          "\"coupling\" yet (no coupling between a fluid and bodies is implemented; docs/fluids.md)"));
    fluid::FluidBuild built = fluid::read_fluid_section(root.at("fluid"), source);
    std::string name = built.model.name;
    return World(std::move(name), source, std::nullopt, std::nullopt, {}, std::move(built));
  }
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

std::string World::kind() const {
  if (fluid) return "fluid";
  if (rigid && soft) return "rigid + soft";
  return rigid ? "rigid" : "soft";
}

double World::dt() const {
  if (fluid) return fluid->model.dt;
  return soft ? soft->model.dt : rigid->model.dt;
}

WorldState World::initial_state() const {
  WorldState state;
  if (rigid) state.rigid = rigid->state;
  if (soft) state.soft = soft->state;
  if (fluid) state.fluid = fluid->state;
  state.time = rigid ? rigid->state.time : soft ? soft->state.time : fluid->state.time;
  return state;
}

WorldParams World::default_params() const {
  WorldParams params;
  params.values.reserve(static_cast<std::size_t>(layout_.param_count));
  if (rigid) params.values = rigid->params.values;
  if (soft) params.values.insert(params.values.end(), soft->params.values.begin(), soft->params.values.end());
  if (fluid) params.values.insert(params.values.end(), fluid->params.values.begin(), fluid->params.values.end());
  return params;
}

std::vector<double> World::default_controls() const {
  std::vector<double> controls(static_cast<std::size_t>(layout_.control_count), 0.0);
  if (rigid)
    for (int k = 0; k < rigid_steps_per_step(); ++k)
      std::copy(rigid->controls.begin(), rigid->controls.end(), controls.begin() + static_cast<std::ptrdiff_t>(k * rigid->controls.size()));
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
  if (world.rigid) {
    const int bodies = world.rigid->model.body_count();
    if (state.rigid.body_count() != bodies)
      throw Error(message("world state: the rigid state has ", state.rigid.body_count(), " bodies, the world ", bodies));
    for (int b = 0; b < bodies; ++b) {
      const auto i = static_cast<std::size_t>(b);
      double* x = values.data() + kStatePerBody * b;
      const Vec3 &p = state.rigid.position[i], &v = state.rigid.linear_velocity[i], &w = state.rigid.angular_velocity[i];
      const Quat& q = state.rigid.orientation[i];
      const double entries[kStatePerBody] = {p.x, p.y, p.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z};
      std::copy(entries, entries + kStatePerBody, x);
    }
  }
  if (world.soft) {
    const auto dofs = static_cast<std::size_t>(world.soft->model.dof_count());
    if (state.soft.positions.size() != dofs || state.soft.velocities.size() != dofs)
      throw Error(message("world state: the soft state has ", state.soft.positions.size(), " position and ",
                          state.soft.velocities.size(), " velocity values, the world ", dofs, " each"));
    const auto offset = static_cast<std::ptrdiff_t>(layout.soft_state_offset);
    std::copy(state.soft.positions.begin(), state.soft.positions.end(), values.begin() + offset);
    std::copy(state.soft.velocities.begin(), state.soft.velocities.end(), values.begin() + offset + static_cast<std::ptrdiff_t>(dofs));
  }
  if (world.fluid) {
    const fluid::FluidModel& model = world.fluid->model;
    const auto faces = static_cast<std::size_t>(model.velocity_count());
    const auto scalars = static_cast<std::size_t>(model.scalar_count) * static_cast<std::size_t>(model.cell_count());
    if (state.fluid.velocities.size() != faces || state.fluid.scalars.size() != scalars)
      throw Error(message("world state: the fluid state has ", state.fluid.velocities.size(), " face velocities and ",
                          state.fluid.scalars.size(), " scalar values, the world ", faces, " and ", scalars));
    const auto offset = static_cast<std::ptrdiff_t>(layout.fluid_state_offset);
    std::copy(state.fluid.velocities.begin(), state.fluid.velocities.end(), values.begin() + offset);
    std::copy(state.fluid.scalars.begin(), state.fluid.scalars.end(), values.begin() + offset + static_cast<std::ptrdiff_t>(faces));
  }
  return values;
}

WorldState unpack_state(const World& world, std::span<const double> values) {
  const WorldLayout& layout = world.layout();
  if (values.size() != static_cast<std::size_t>(layout.state_size))
    throw Error(message("world state: expected ", layout.state_size, " values (", world.kind(), " world), got ", values.size()));
  WorldState state = world.initial_state();
  if (world.rigid) {
    for (int b = 0; b < state.rigid.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      const double* x = values.data() + kStatePerBody * b;
      state.rigid.position[i] = {x[0], x[1], x[2]};
      state.rigid.orientation[i] = Quat{x[3], x[4], x[5], x[6]};
      state.rigid.linear_velocity[i] = {x[7], x[8], x[9]};
      state.rigid.angular_velocity[i] = {x[10], x[11], x[12]};
    }
  }
  if (world.soft) {
    const auto dofs = static_cast<std::size_t>(world.soft->model.dof_count());
    const double* x = values.data() + layout.soft_state_offset;
    state.soft.positions.assign(x, x + dofs);
    state.soft.velocities.assign(x + dofs, x + 2 * dofs);
  }
  if (world.fluid) {
    const fluid::FluidModel& model = world.fluid->model;
    const auto faces = static_cast<std::size_t>(model.velocity_count());
    const auto scalars = static_cast<std::size_t>(model.scalar_count) * static_cast<std::size_t>(model.cell_count());
    const double* x = values.data() + layout.fluid_state_offset;
    state.fluid.velocities.assign(x, x + faces);
    state.fluid.scalars.assign(x + faces, x + faces + scalars);
  }
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
