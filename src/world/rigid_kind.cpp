// world/rigid_kind.cpp — the rigid bodies as a kind of part (world/part_kind.hpp): the Model's
// slices of the world's vectors ("body/<name>" 13 values of state and 12 of tangent each, the
// Model's own θ names, "actuator/<name>" per rigid substep), the state's conversion, and its
// part (RigidPart), report, health, gradient check and recording estimate.
#include <algorithm>
#include <string>

#include "diffphys/error.hpp"
#include "world/body_gradcheck.hpp"
#include "world/part_kind.hpp"
#include "world/part_report.hpp"
#include "world/rigid_part.hpp"

namespace diffphys::world {
namespace {

constexpr int kRigidStatePerBody = 13;  // [p, q (w, x, y, z), v, ω]

void append(std::vector<NamedSlice>& slices, int& size, std::string name, int count) {
  slices.push_back({std::move(name), size, count});
  size += count;
}

void add_rigid_slices(const World& world, WorldLayout& layout) {
  const Model& model = world.rigid->model;
  for (const Body& body : model.bodies) {
    append(layout.state, layout.state_size, "body/" + body.name, kRigidStatePerBody);
    append(layout.tangent, layout.tangent_size, "body/" + body.name, kStateTangentPerBody);
  }
  for (const ParamLayout::Slice& slice : model.layout.slices) append(layout.params, layout.param_count, slice.name, slice.size);
  const int substeps = world.rigid_steps_per_step();
  for (int k = 0; k < substeps; ++k)
    for (const Actuator& actuator : model.actuators)
      append(layout.controls, layout.control_count,
             substeps == 1 ? "actuator/" + actuator.name : "actuator/" + actuator.name + "/substep/" + std::to_string(k), 1);
}

void pack_rigid(const World& world, const WorldState& state, std::span<double> values) {
  const int bodies = world.rigid->model.body_count();
  if (state.rigid.body_count() != bodies)
    throw Error(message("world state: the rigid state has ", state.rigid.body_count(), " bodies, the world ", bodies));
  for (int b = 0; b < bodies; ++b) {
    const auto i = static_cast<std::size_t>(b);
    const Vec3 &p = state.rigid.position[i], &v = state.rigid.linear_velocity[i], &w = state.rigid.angular_velocity[i];
    const Quat& q = state.rigid.orientation[i];
    const double entries[kRigidStatePerBody] = {p.x, p.y, p.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z};
    std::copy(entries, entries + kRigidStatePerBody, values.begin() + kRigidStatePerBody * b);
  }
}

void unpack_rigid(const World&, std::span<const double> values, WorldState& state) {
  for (int b = 0; b < state.rigid.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    const double* x = values.data() + kRigidStatePerBody * b;
    state.rigid.position[i] = {x[0], x[1], x[2]};
    state.rigid.orientation[i] = Quat{x[3], x[4], x[5], x[6]};
    state.rigid.linear_velocity[i] = {x[7], x[8], x[9]};
    state.rigid.angular_velocity[i] = {x[10], x[11], x[12]};
  }
}

// One world step's controls: the scene's controls for each rigid substep.
void rigid_default_controls(const World& world, std::span<double> controls) {
  const std::vector<double>& scene = world.rigid->controls;
  for (int k = 0; k < world.rigid_steps_per_step(); ++k)
    std::copy(scene.begin(), scene.end(), controls.begin() + static_cast<std::ptrdiff_t>(k * scene.size()));
}

PartHealthSummary rigid_health(const WorldGradients& gradients) {
  const GradientHealth& h = gradients.rigid_health;
  return {h.state_gradient_norm, h.first_non_finite_step, h.first_non_finite_stage, h.clipped_steps, h.solver_converged, ""};
}

// Measured (bouncing_ball 100,000 frames: 212 MB; chain10 20,000 frames: 166 MB): about
// 0.7 kB per body and frame beside the frame's own 1.4 kB.
int moving_bodies(const World& world) { return world.rigid->model.body_count() - 1; }

}  // namespace

const PartKind& rigid_part_kind() {
  static const PartKind kind{
      .name = "rigid",
      .held_by = [](const World& world) { return world.has_rigid(); },
      .add_slices = add_rigid_slices,
      .legacy_offsets = {nullptr, nullptr, nullptr, nullptr},  // first in every vector: offset 0
      .section = "",
      .read_section = nullptr,
      .check_world = nullptr,
      .converged = [](const WorldStepStatus& status) {
            return std::all_of(status.rigid.begin(), status.rigid.end(), [](const StepStatus& s) { return s.converged; });
          },
      .dt = [](const World& world) { return world.rigid->model.dt; },
      .initial_state = [](const World& world, WorldState& state) { state.rigid = world.rigid->state; },
      .time = [](const WorldState& state) { return state.rigid.time; },
      .default_params = [](const World& world) { return std::span<const double>(world.rigid->params.values); },
      .default_controls = rigid_default_controls,
      .pack = pack_rigid,
      .unpack = unpack_rigid,
      .view_gradient = [](const World&, std::span<double> tangent, WorldStateGradient& gradient) { gradient.rigid = tangent; },
      .make_part = [](const World& world) -> std::unique_ptr<Part> { return std::make_unique<RigidPart>(world); },
      .make_report = report::make_rigid_report,
      .health = rigid_health,
      .check_gradients = check_rigid_world_gradients,
      .default_gradcheck_steps = [](const World&) { return GradientCheckOptions{}.steps; },
      .recording_bytes_per_frame = [](const World& world) { return 700.0 * moving_bodies(world); },
      .recording_size = [](const World& world) { return report::plural(moving_bodies(world), "body", "bodies"); },
      .solver_settings = "",
  };
  return kind;
}

}  // namespace diffphys::world
