// fluid/fluid_kind.cpp — the fluid as a kind of part (world/part_kind.hpp): its slices of the
// world's vectors (state and tangent "fluid/velocity_u", "fluid/velocity_v",
// "fluid/scalar/<name>"; θ "fluid/viscosity", "fluid/buoyancy", "fluid/obstacle/<name>/…";
// controls "fluid/force"), the state's conversion, and its part (FluidPart), report, health,
// gradient check and recording estimate. The world steps it through its schedule, as every part.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "fluid/fluid_gradcheck.hpp"
#include "fluid/fluid_part.hpp"
#include "fluid/fluid_scene_json.hpp"
#include "world/part_kind.hpp"
#include "world/part_report.hpp"

namespace diffphys::world {
namespace {

void append_fluid(std::vector<NamedSlice>& slices, int& size, std::string name, int count) {
  slices.push_back({std::move(name), size, count});
  size += count;
}

void add_fluid_slices(const World& world, WorldLayout& layout) {
  // The tangent of a fluid state is the state itself (flat fields).
  const fluid::FluidModel& model = world.fluid->model;
  for (std::vector<NamedSlice>* slices : {&layout.state, &layout.tangent}) {
    int& size = slices == &layout.state ? layout.state_size : layout.tangent_size;
    append_fluid(*slices, size, "fluid/velocity_u", model.u_count());
    append_fluid(*slices, size, "fluid/velocity_v", model.v_count());
    for (const std::string& scalar : model.scalar_names) append_fluid(*slices, size, "fluid/scalar/" + scalar, model.cell_count());
  }
  for (const fluid::FluidParamLayout::Slice& slice : model.layout.slices) append_fluid(layout.params, layout.param_count, slice.name, slice.size);
  append_fluid(layout.controls, layout.control_count, "fluid/force", model.control_count());
}

std::size_t scalar_values(const fluid::FluidModel& model) {
  return static_cast<std::size_t>(model.scalar_count) * static_cast<std::size_t>(model.cell_count());
}

void pack_fluid(const World& world, const WorldState& state, std::span<double> values) {
  const fluid::FluidModel& model = world.fluid->model;
  const auto faces = static_cast<std::size_t>(model.velocity_count());
  if (state.fluid.velocities.size() != faces || state.fluid.scalars.size() != scalar_values(model))
    throw Error(message("world state: the fluid state has ", state.fluid.velocities.size(), " face velocities and ",
                        state.fluid.scalars.size(), " scalar values, the world ", faces, " and ", scalar_values(model)));
  std::copy(state.fluid.velocities.begin(), state.fluid.velocities.end(), values.begin());
  std::copy(state.fluid.scalars.begin(), state.fluid.scalars.end(), values.begin() + static_cast<std::ptrdiff_t>(faces));
}

void unpack_fluid(const World& world, std::span<const double> values, WorldState& state) {
  const fluid::FluidModel& model = world.fluid->model;
  const auto faces = static_cast<std::ptrdiff_t>(model.velocity_count());
  const auto scalars = static_cast<std::ptrdiff_t>(scalar_values(model));
  state.fluid.velocities.assign(values.begin(), values.begin() + faces);
  state.fluid.scalars.assign(values.begin() + faces, values.begin() + faces + scalars);
}

void view_fluid_gradient(const World& world, std::span<double> tangent, WorldStateGradient& gradient) {
  const auto faces = static_cast<std::size_t>(world.fluid->model.velocity_count());
  gradient.fluid_velocities = tangent.first(faces);
  gradient.fluid_scalars = tangent.subspan(faces);
}

PartHealthSummary fluid_health(const WorldGradients& gradients) {
  const fluid::FluidGradientHealth& h = gradients.fluid_health;
  return {h.state_gradient_norm, h.first_non_finite_step, h.first_non_finite_stage, h.clipped_steps, h.solver_converged, "fluid: "};
}

// A frame holds every face velocity and scalar value (no per-cell overhead).
double fluid_values(const World& world) {
  const fluid::FluidModel& model = world.fluid->model;
  return model.velocity_count() + 1.0 * model.scalar_count * model.cell_count();
}

void refuse_company(const World& world) {
  if (world.rigid || world.soft)
    throw Error(message(world.source, ": a fluid cannot share a scene with rigid or soft bodies yet (no coupling between ",
                        "them is implemented; docs/fluids.md)"));
}

// A scene's "fluid" section: a world of the fluid alone.
World read_fluid_world(const nlohmann::json& root, const std::string& source) {
  if (root.contains("rigid") || root.contains("soft") || root.contains("coupling"))
    throw Error(message(source, ": fluid: a \"fluid\" section cannot share a scene with \"rigid\", \"soft\" or ",
                        "\"coupling\" yet (no coupling between a fluid and bodies is implemented; docs/fluids.md)"));
  fluid::FluidBuild built = fluid::read_fluid_section(root.at("fluid"), source);
  std::string name = built.model.name;
  return World(std::move(name), source, std::nullopt, std::nullopt, {}, std::move(built));
}

}  // namespace

const PartKind& fluid_part_kind() {
  static const PartKind kind{
      .name = "fluid",
      .held_by = [](const World& world) { return world.has_fluid(); },
      .add_slices = add_fluid_slices,
      .legacy_offsets = {&WorldLayout::fluid_state_offset, &WorldLayout::fluid_tangent_offset, &WorldLayout::fluid_param_offset,
                         &WorldLayout::fluid_control_offset},
      .section = "fluid",
      .read_section = read_fluid_world,
      .check_world = refuse_company,
      .converged = [](const WorldStepStatus& status) { return status.fluid == nullptr || status.fluid->converged; },
      .dt = [](const World& world) { return world.fluid->model.dt; },
      .initial_state = [](const World& world, WorldState& state) { state.fluid = world.fluid->state; },
      .time = [](const WorldState& state) { return state.fluid.time; },
      .default_params = [](const World& world) { return std::span<const double>(world.fluid->params.values); },
      .default_controls = nullptr,  // no forces
      .pack = pack_fluid,
      .unpack = unpack_fluid,
      .view_gradient = view_fluid_gradient,
      .make_part = [](const World& world) -> std::unique_ptr<Part> { return std::make_unique<FluidPart>(world); },
      .make_report = report::make_fluid_report,
      .health = fluid_health,
      .check_gradients = check_fluid_world_gradients,
      .default_gradcheck_steps = [](const World&) { return kDefaultFluidGradcheckSteps; },
      .recording_bytes_per_frame = [](const World& world) { return 100.0 * fluid_values(world); },
      .recording_size = [](const World& world) { return message("a fluid of ", static_cast<long long>(fluid_values(world)), " values"); },
      .solver_settings = "a fluid only (its solves are set in the scene file's \"fluid\".\"solver\" block)",
  };
  return kind;
}

}  // namespace diffphys::world
