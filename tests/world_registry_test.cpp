// tests/world_registry_test.cpp — the registry of part kinds (src/world/part_kind.hpp) as the
// world's shared code uses it: each held kind owns one range of every flat vector, in the
// registry's order, whose sizes are the kind's closed-form counts; the loss's gradient view
// gives each kind its tangent range; combined_health adds the kinds' norms in quadrature and
// takes the latest non-finite step; a step's status converges only if every kind's does; the
// recording estimate sums the kinds' shares.
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "diffphys/gradient_health.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_report.hpp"
#include "world/part_kind.hpp"

namespace diffphys {
namespace {

std::string scene(const std::string& relative) { return std::string(test_paths::source_dir()) + "/examples/" + relative; }

std::vector<std::string> kinds_of(const World& world) {
  std::vector<std::string> kinds;
  for (const WorldLayout::PartRange& range : world.layout().parts) kinds.push_back(range.kind);
  return kinds;
}

// The ranges follow each other from 0 and end at each vector's size.
void expect_ranges_tile(const WorldLayout& layout) {
  int state = 0, tangent = 0, params = 0, controls = 0;
  for (const WorldLayout::PartRange& range : layout.parts) {
    EXPECT_EQ(range.state_offset, state) << range.kind;
    EXPECT_EQ(range.tangent_offset, tangent) << range.kind;
    EXPECT_EQ(range.param_offset, params) << range.kind;
    EXPECT_EQ(range.control_offset, controls) << range.kind;
    state += range.state_size;
    tangent += range.tangent_size;
    params += range.param_count;
    controls += range.control_count;
  }
  EXPECT_EQ(state, layout.state_size);
  EXPECT_EQ(tangent, layout.tangent_size);
  EXPECT_EQ(params, layout.param_count);
  EXPECT_EQ(controls, layout.control_count);
}

TEST(PartKinds, EachHeldKindOwnsOneRangeOfEveryVectorInTheRegistrysOrder) {
  const World both = load_world(scene("soft/cloth_on_pendulum.json"));
  ASSERT_EQ(kinds_of(both), (std::vector<std::string>{"rigid", "soft"}));
  expect_ranges_tile(both.layout());
  const int bodies = both.rigid->model.body_count(), dofs = both.soft->model.dof_count();
  const WorldLayout::PartRange& rigid = both.layout().parts[0];
  const WorldLayout::PartRange& soft = both.layout().parts[1];
  EXPECT_EQ(rigid.state_size, 13 * bodies);
  EXPECT_EQ(rigid.tangent_size, 12 * bodies);
  EXPECT_EQ(rigid.param_count, both.rigid->model.param_count());
  EXPECT_EQ(rigid.control_count, both.rigid_steps_per_step() * both.rigid->model.actuator_count());
  EXPECT_EQ(soft.state_size, 2 * dofs);
  EXPECT_EQ(soft.tangent_size, 2 * dofs);
  EXPECT_EQ(soft.param_count, both.soft->model.param_count());
  EXPECT_EQ(soft.control_count, dofs);
  // The offsets under the kinds' names are the same ranges'.
  EXPECT_EQ(both.layout().part("soft"), &soft);
  EXPECT_EQ(both.layout().soft_state_offset, soft.state_offset);
  EXPECT_EQ(both.layout().soft_tangent_offset, soft.tangent_offset);
  EXPECT_EQ(both.layout().soft_param_offset, soft.param_offset);
  EXPECT_EQ(both.layout().soft_control_offset, soft.control_offset);
  EXPECT_EQ(both.layout().part("fluid"), nullptr);

  const World fluid = load_world(scene("fluid/smoke_plume.json"));
  ASSERT_EQ(kinds_of(fluid), std::vector<std::string>{"fluid"});
  expect_ranges_tile(fluid.layout());
  const fluid::FluidModel& model = fluid.fluid->model;
  const int fields = model.velocity_count() + model.scalar_count * model.cell_count();
  EXPECT_EQ(fluid.layout().parts[0].state_size, fields);
  EXPECT_EQ(fluid.layout().parts[0].tangent_size, fields);
  EXPECT_EQ(fluid.layout().parts[0].control_count, 2 * model.cell_count());
  EXPECT_EQ(fluid.kind(), "fluid");
  EXPECT_EQ(kinds_of(load_world(scene("soft/hanging_beam.json"))), std::vector<std::string>{"soft"});
  EXPECT_EQ(kinds_of(load_world(scene("scenes/bouncing_ball.json"))), std::vector<std::string>{"rigid"});
}

// The loss callback's spans lie on the kinds' tangent ranges, with their sizes, in a world the
// schedule steps (a coupled one and a fluid).
TEST(PartKinds, TheGradientViewGivesEachKindItsTangentRange) {
  const World both = load_world(scene("soft/cloth_on_pendulum.json"));
  const WorldParams both_params = both.default_params();
  WorldRollout coupled(both, both_params);
  coupled.run(both.initial_state(), {}, 2);
  const WorldLayout::PartRange& rigid = *both.layout().part("rigid");
  const WorldLayout::PartRange& soft = *both.layout().part("soft");
  const auto dofs = static_cast<std::size_t>(both.soft->model.dof_count());
  int calls = 0;
  coupled.backward([&](int, const WorldState&, WorldStateGradient& g) {
    ++calls;
    EXPECT_EQ(g.all.size(), static_cast<std::size_t>(both.layout().tangent_size));
    EXPECT_EQ(g.rigid.data(), g.all.data() + rigid.tangent_offset);
    EXPECT_EQ(g.rigid.size(), static_cast<std::size_t>(rigid.tangent_size));
    EXPECT_EQ(g.soft_positions.data(), g.all.data() + soft.tangent_offset);
    EXPECT_EQ(g.soft_positions.size(), dofs);
    EXPECT_EQ(g.soft_velocities.data(), g.all.data() + soft.tangent_offset + dofs);
    EXPECT_EQ(g.soft_velocities.size(), dofs);
    EXPECT_TRUE(g.fluid_velocities.empty() && g.fluid_scalars.empty());
  });
  EXPECT_EQ(calls, 3);

  const World fluid = load_world(scene("fluid/smoke_plume.json"));
  const WorldParams fluid_params = fluid.default_params();
  WorldRollout plume(fluid, fluid_params);
  plume.run(fluid.initial_state(), {}, 1);
  const auto faces = static_cast<std::size_t>(fluid.fluid->model.velocity_count());
  plume.backward([&](int, const WorldState&, WorldStateGradient& g) {
    EXPECT_EQ(g.fluid_velocities.data(), g.all.data());
    EXPECT_EQ(g.fluid_velocities.size(), faces);
    EXPECT_EQ(g.fluid_scalars.data(), g.all.data() + faces);
    EXPECT_EQ(g.fluid_scalars.size(), g.all.size() - faces);
    EXPECT_TRUE(g.rigid.empty() && g.soft_positions.empty() && g.soft_velocities.empty());
  });
}

TEST(PartKinds, CombinedHealthAddsTheKindsNormsInQuadrature) {
  WorldGradients g;
  g.rigid_health.state_gradient_norm = {3.0, 0.0, 1.0};
  g.rigid_health.first_non_finite_step = 1;
  g.rigid_health.first_non_finite_stage = "LCP";
  g.rigid_health.clipped_steps = 1;
  g.soft_health.state_gradient_norm = {4.0};
  g.soft_health.first_non_finite_step = 2;
  g.soft_health.first_non_finite_stage = "implicit solve";
  g.soft_health.clipped_steps = 2;
  g.fluid_health.state_gradient_norm = {0.0, 12.0};
  g.fluid_health.first_non_finite_step = 2;
  g.fluid_health.first_non_finite_stage = "fluid step";
  g.fluid_health.clipped_steps = 4;
  g.fluid_health.solver_converged = false;
  const GradientHealth health = combined_health(g);
  EXPECT_EQ(health.state_gradient_norm, (std::vector<double>{5.0, 12.0, 1.0}));
  EXPECT_EQ(health.largest_state_gradient_norm, 12.0);
  // Counting back the latest step is met first; on a tie, the earlier kind's.
  EXPECT_EQ(health.first_non_finite_step, 2);
  EXPECT_EQ(health.first_non_finite_stage, "soft: implicit solve");
  EXPECT_EQ(health.clipped_steps, 7);
  EXPECT_FALSE(health.solver_converged);
  g.fluid_health.solver_converged = true;
  g.soft_health.first_non_finite_step = -1;
  g.fluid_health.first_non_finite_step = -1;
  const GradientHealth rigid_only = combined_health(g);
  EXPECT_TRUE(rigid_only.solver_converged);
  EXPECT_EQ(rigid_only.first_non_finite_step, 1);
  EXPECT_EQ(rigid_only.first_non_finite_stage, "LCP");
}

TEST(PartKinds, AStepConvergesOnlyIfEveryKindsStatusDid) {
  const std::vector<StepStatus> rigid(2);
  soft::SoftStepStatus soft;
  fluid::FluidStepStatus fluid;
  WorldStepStatus status{rigid, &soft, &fluid};
  EXPECT_TRUE(status.converged());
  fluid.converged = false;
  EXPECT_FALSE(status.converged());
  fluid.converged = true;
  soft.converged = false;
  EXPECT_FALSE(status.converged());
  soft.converged = true;
  std::vector<StepStatus> failing(2);
  failing[1].converged = false;
  EXPECT_FALSE((WorldStepStatus{failing, nullptr, nullptr}.converged()));
}

TEST(PartKinds, TheRecordingEstimateSumsTheKindsShares) {
  const World beam = load_world(scene("soft/hanging_beam.json"));
  const RecordingEstimate soft = estimate_recording(beam);
  EXPECT_EQ(soft.bytes_per_frame, 100.0 * beam.soft->model.dof_count());
  EXPECT_EQ(soft.size, std::to_string(beam.soft->model.node_count) + " soft nodes");
  const World both = load_world(scene("soft/cloth_on_pendulum.json"));
  const int moving = both.rigid->model.body_count() - 1;
  const RecordingEstimate coupled = estimate_recording(both);
  EXPECT_EQ(coupled.bytes_per_frame, 700.0 * moving + 100.0 * both.soft->model.dof_count());
  EXPECT_EQ(coupled.size, std::to_string(moving) + (moving == 1 ? " body" : " bodies") + " and " +
                              std::to_string(both.soft->model.node_count) + " soft nodes");
  const World plume = load_world(scene("fluid/smoke_plume.json"));
  const fluid::FluidModel& model = plume.fluid->model;
  const long long values = model.velocity_count() + static_cast<long long>(model.scalar_count) * model.cell_count();
  EXPECT_EQ(estimate_recording(plume).bytes_per_frame, 100.0 * static_cast<double>(values));
  EXPECT_EQ(estimate_recording(plume).size, "a fluid of " + std::to_string(values) + " values");
}

}  // namespace
}  // namespace diffphys
