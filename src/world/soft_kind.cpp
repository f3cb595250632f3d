// world/soft_kind.cpp — the soft bodies as a kind of part (world/part_kind.hpp): their slices
// of the world's vectors ("soft/positions", "soft/velocities": 3 per node each; θ under
// "soft/<name>"; "soft/forces": 3 per node), the state's conversion, and their part
// (SoftPart), report, health, gradient check and recording estimate.
#include <algorithm>
#include <string>

#include "diffphys/error.hpp"
#include "world/body_gradcheck.hpp"
#include "world/part_kind.hpp"
#include "world/part_report.hpp"
#include "world/soft_part.hpp"

namespace diffphys::world {
namespace {

void append_soft(std::vector<NamedSlice>& slices, int& size, std::string name, int count) {
  slices.push_back({std::move(name), size, count});
  size += count;
}

void add_soft_slices(const World& world, WorldLayout& layout) {
  const soft::SoftModel& model = world.soft->model;
  for (std::vector<NamedSlice>* slices : {&layout.state, &layout.tangent}) {
    int& size = slices == &layout.state ? layout.state_size : layout.tangent_size;
    append_soft(*slices, size, "soft/positions", model.dof_count());
    append_soft(*slices, size, "soft/velocities", model.dof_count());
  }
  for (const soft::SoftParamLayout::Slice& slice : model.layout.slices)
    append_soft(layout.params, layout.param_count, "soft/" + slice.name, slice.size);
  append_soft(layout.controls, layout.control_count, "soft/forces", model.dof_count());
}

void pack_soft(const World& world, const WorldState& state, std::span<double> values) {
  const auto dofs = static_cast<std::size_t>(world.soft->model.dof_count());
  if (state.soft.positions.size() != dofs || state.soft.velocities.size() != dofs)
    throw Error(message("world state: the soft state has ", state.soft.positions.size(), " position and ",
                        state.soft.velocities.size(), " velocity values, the world ", dofs, " each"));
  std::copy(state.soft.positions.begin(), state.soft.positions.end(), values.begin());
  std::copy(state.soft.velocities.begin(), state.soft.velocities.end(), values.begin() + static_cast<std::ptrdiff_t>(dofs));
}

void unpack_soft(const World& world, std::span<const double> values, WorldState& state) {
  const auto dofs = static_cast<std::size_t>(world.soft->model.dof_count());
  state.soft.positions.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(dofs));
  state.soft.velocities.assign(values.begin() + static_cast<std::ptrdiff_t>(dofs), values.begin() + static_cast<std::ptrdiff_t>(2 * dofs));
}

void view_soft_gradient(const World& world, std::span<double> tangent, WorldStateGradient& gradient) {
  const auto dofs = static_cast<std::size_t>(world.soft->model.dof_count());
  gradient.soft_positions = tangent.first(dofs);
  gradient.soft_velocities = tangent.subspan(dofs, dofs);
}

PartHealthSummary soft_health(const WorldGradients& gradients) {
  const soft::SoftGradientHealth& h = gradients.soft_health;
  return {h.state_gradient_norm, h.first_non_finite_step, h.first_non_finite_stage, h.clipped_steps, h.solver_converged, "soft: "};
}

}  // namespace

const PartKind& soft_part_kind() {
  static const PartKind kind{
      .name = "soft",
      .held_by = [](const World& world) { return world.has_soft(); },
      .add_slices = add_soft_slices,
      .legacy_offsets = {&WorldLayout::soft_state_offset, &WorldLayout::soft_tangent_offset, &WorldLayout::soft_param_offset,
                         &WorldLayout::soft_control_offset},
      .section = "",
      .read_section = nullptr,
      .check_world = nullptr,
      .converged = [](const WorldStepStatus& status) { return status.soft == nullptr || status.soft->converged; },
      .dt = [](const World& world) { return world.soft->model.dt; },
      .initial_state = [](const World& world, WorldState& state) { state.soft = world.soft->state; },
      .time = [](const WorldState& state) { return state.soft.time; },
      .default_params = [](const World& world) { return std::span<const double>(world.soft->params.values); },
      .default_controls = nullptr,  // no forces
      .pack = pack_soft,
      .unpack = unpack_soft,
      .view_gradient = view_soft_gradient,
      .make_part = [](const World& world) -> std::unique_ptr<Part> { return std::make_unique<SoftPart>(world); },
      .make_report = report::make_soft_report,
      .health = soft_health,
      .check_gradients = check_soft_world_gradients,
      .default_gradcheck_steps = [](const World&) { return kDefaultSoftGradcheckSteps; },
      // Node positions are held as JSON numbers: about 0.1 kB per coordinate and frame.
      .recording_bytes_per_frame = [](const World& world) { return 100.0 * world.soft->model.dof_count(); },
      .recording_size = [](const World& world) { return std::to_string(world.soft->model.dof_count() / 3) + " soft nodes"; },
      .solver_settings = "soft bodies only (their Newton solver is set in the scene file's \"newton\" block)",
  };
  return kind;
}

}  // namespace diffphys::world
