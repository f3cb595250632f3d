// fluid/fluid_gradcheck.cpp — check_fluid_world_gradients (fluid_gradcheck.hpp): every class of
// the fluid's gradient through the world (WorldRollout::backward) against fourth-order central
// differences (compare_with_finite_differences) of the same rollout, over the world's flat
// vectors. The loss is L = Σ_{t=0..T} (a·u_t + b·s_t) with fixed pseudo-random weights (seed
// options.seed; a = 0 on the wall faces, which are not state). Compared: every component of
// fluid/viscosity and a spread of 8 of fluid/buoyancy (viscosity at 0 is differenced one-sided,
// upwards: it cannot be negative); the initial velocity of a spread of 8 interior faces and
// each scalar's initial value at a spread of 8 cells; a spread of 8 forces f_t (step, cell,
// component). Steps: options.state_epsilon (m/s, and units of scalar) for the fields, that
// over h for forces (a force f moves a velocity by h f), options.param_epsilon relative for θ.
// Both sides run with the solves' relative tolerance tightened to 1e-13.
//
// Departures from the scene, stated in the report's description: without given controls the
// forces are 0.1 sin(0.37 k) m/s² (k indexing the T × 2 ncell forces), so that their check is
// not trivial; the initial velocities get 0.05 Δx/h sin(1.3 k) added on the interior faces,
// because a fluid at rest traces every departure point exactly onto a grid sample, where the
// bilinear interpolation has a kink (the adjoint takes one side, a central difference averages
// both); and the scalars get 0.05 sin(0.9 k + 0.3), because on a flat region (a scene's smoke
// is 0 outside its blobs) MacCormack's clamp sits exactly at its bound, another kink.
#include "fluid/fluid_gradcheck.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "diffphys/error.hpp"
#include "world/gradcheck_sampling.hpp"

namespace diffphys::world {
namespace {

constexpr int kSamples = 8;

}  // namespace

WorldGradientCheckReport check_fluid_world_gradients(const World& given, std::span<const double> controls,
                                                     const GradientCheckOptions& options) {
  if (options.steps < 1) throw Error(message("gradcheck: steps must be ≥ 1, got ", options.steps));
  World world = given;
  fluid::FluidModel& model = world.fluid->model;
  model.solver.relative_tolerance = std::min(model.solver.relative_tolerance, 1e-13);
  model.solver.max_iterations = std::max(model.solver.max_iterations, 1000);
  const WorldLayout& layout = world.layout();
  const int steps = options.steps;
  const auto per_step = static_cast<std::size_t>(layout.control_count);
  const auto force_offset = static_cast<std::size_t>(layout.fluid_control_offset);
  const auto forces = static_cast<std::size_t>(model.control_count());
  const auto tangent = static_cast<std::size_t>(layout.fluid_tangent_offset);
  const auto faces = static_cast<std::size_t>(model.velocity_count());
  const auto cells = static_cast<std::size_t>(model.cell_count());

  std::vector<double> u;
  const bool given_controls = !controls.empty();
  if (given_controls) {
    if (controls.size() != static_cast<std::size_t>(steps) * per_step)
      throw Error(message("gradcheck: expected ", static_cast<std::size_t>(steps) * per_step, " control values (", steps,
                          " steps × ", per_step, ") or none, got ", controls.size()));
    u.assign(controls.begin(), controls.end());
  } else {
    u.assign(static_cast<std::size_t>(steps) * per_step, 0.0);
    for (std::size_t t = 0; t < static_cast<std::size_t>(steps); ++t)
      for (std::size_t k = 0; k < forces; ++k)
        u[t * per_step + force_offset + k] = 0.1 * std::sin(0.37 * static_cast<double>(t * forces + k));
  }

  // Interior faces (the wall faces are not state).
  std::vector<bool> interior(faces, true);
  for (int j = 0; j < model.ny; ++j) interior[static_cast<std::size_t>(j * (model.nx + 1))] = interior[static_cast<std::size_t>(j * (model.nx + 1) + model.nx)] = false;
  for (int i = 0; i < model.nx; ++i)
    interior[static_cast<std::size_t>(model.u_count() + i)] = interior[static_cast<std::size_t>(model.u_count() + model.ny * model.nx + i)] = false;
  std::vector<int> interior_faces;
  for (std::size_t k = 0; k < faces; ++k)
    if (interior[k]) interior_faces.push_back(static_cast<int>(k));

  WorldState initial = world.initial_state();
  const double nudge = 0.05 * model.spacing / model.dt;
  for (const int k : interior_faces) initial.fluid.velocities[static_cast<std::size_t>(k)] += nudge * std::sin(1.3 * k);
  for (std::size_t k = 0; k < initial.fluid.scalars.size(); ++k) initial.fluid.scalars[k] += 0.05 * std::sin(0.9 * static_cast<double>(k) + 0.3);

  std::vector<double> velocity_weights(faces, 0.0), scalar_weights(initial.fluid.scalars.size());
  std::mt19937 random(options.seed);
  std::normal_distribution<double> normal;
  for (const int k : interior_faces) velocity_weights[static_cast<std::size_t>(k)] = normal(random);
  for (double& w : scalar_weights) w = normal(random);
  const auto state_loss = [&](const fluid::FluidState& s) {
    double sum = 0.0;
    for (std::size_t k = 0; k < faces; ++k) sum += velocity_weights[k] * s.velocities[k];
    for (std::size_t k = 0; k < s.scalars.size(); ++k) sum += scalar_weights[k] * s.scalars[k];
    return sum;
  };

  const WorldParams params = world.default_params();
  WorldRollout rollout(world, params);
  rollout.run(initial, u, steps);
  const WorldGradients gradients = rollout.backward([&](int, const WorldState&, WorldStateGradient& gradient) {
    for (std::size_t k = 0; k < faces; ++k) gradient.fluid_velocities[k] += velocity_weights[k];
    for (std::size_t k = 0; k < scalar_weights.size(); ++k) gradient.fluid_scalars[k] += scalar_weights[k];
  });

  WorldGradientCheckReport report;
  std::vector<GradientCheckEntry>& entries = report.check.entries;
  double gradient_scale = 0.0;
  for (const std::vector<double>* part : {&gradients.params, &gradients.initial_state, &gradients.controls})
    for (const double component : *part) gradient_scale = std::max(gradient_scale, std::abs(component));
  const auto add = [&](std::string name, double analytic, const std::function<double(double)>& loss_at, double step,
                       DifferenceSide side) {
    entries.push_back(compare_with_finite_differences(std::move(name), analytic, loss_at, step, options.tolerance, side, gradient_scale));
  };
  WorldParams probe_params = params;
  WorldRollout probe(world, probe_params);
  const auto loss_with = [&](const WorldParams& theta, const WorldState& start, const std::vector<double>& inputs) {
    probe_params.values = theta.values;
    probe.run(start, inputs, steps);
    double sum = 0.0;
    for (int t = 0; t <= steps; ++t) sum += state_loss(probe.state(t).fluid);
    return sum;
  };

  for (const fluid::FluidParamLayout::Slice& slice : model.layout.slices)
    for (const int k : spread_indices(slice.size, kSamples)) {
      const auto p = static_cast<std::size_t>(layout.fluid_param_offset + slice.offset + k);
      const double value = std::abs(params.values[p]);
      const double h = value > 0 ? std::max(options.param_epsilon * value, 1e-7) : options.param_epsilon;
      const bool at_bound = slice.name == "fluid/viscosity" && params.values[p] == 0.0;
      add(slice.name + "[" + std::to_string(k) + "]", gradients.params[p],
          [&](double delta) {
            WorldParams moved = params;
            moved.values[p] += delta;
            return loss_with(moved, initial, u);
          },
          h, at_bound ? DifferenceSide::Above : DifferenceSide::Both);
    }
  const double epsilon = options.state_epsilon;
  for (const int pick : spread_indices(static_cast<int>(interior_faces.size()), kSamples)) {
    const auto k = static_cast<std::size_t>(interior_faces[static_cast<std::size_t>(pick)]);
    const bool is_u = k < static_cast<std::size_t>(model.u_count());
    add(std::string("x0/") + (is_u ? "velocity_u[" + std::to_string(k) : "velocity_v[" + std::to_string(k - model.u_count())) + "]",
        gradients.initial_state[tangent + k],
        [&](double delta) {
          WorldState moved = initial;
          moved.fluid.velocities[k] += delta;
          return loss_with(params, moved, u);
        },
        epsilon, DifferenceSide::Both);
  }
  for (int s = 0; s < model.scalar_count; ++s)
    for (const int c : spread_indices(static_cast<int>(cells), kSamples)) {
      const std::size_t k = static_cast<std::size_t>(s) * cells + static_cast<std::size_t>(c);
      add("x0/scalar/" + model.scalar_names[static_cast<std::size_t>(s)] + "[" + std::to_string(c) + "]",
          gradients.initial_state[tangent + faces + k],
          [&](double delta) {
            WorldState moved = initial;
            moved.fluid.scalars[k] += delta;
            return loss_with(params, moved, u);
          },
          epsilon, DifferenceSide::Both);
    }
  for (int s = 0; s < kSamples; ++s) {
    const int t = kSamples > 1 ? s * (steps - 1) / (kSamples - 1) : 0;
    const std::size_t k = static_cast<std::size_t>(s * 7919) % forces;
    const std::size_t index = static_cast<std::size_t>(t) * per_step + force_offset + k;
    add("force/cell " + std::to_string(k / 2) + "[" + (k % 2 == 0 ? "x" : "y") + "]/t=" + std::to_string(t), gradients.controls[index],
        [&](double delta) {
          std::vector<double> moved = u;
          moved[index] += delta;
          return loss_with(params, initial, moved);
        },
        epsilon / model.dt, DifferenceSide::Both);
  }

  report.check.passed = true;
  for (const GradientCheckEntry& entry : entries) {
    report.check.passed = report.check.passed && entry.relative_error <= options.tolerance;
    report.check.worst_relative_error =
        std::max(report.check.worst_relative_error, std::isnan(entry.relative_error) ? INFINITY : entry.relative_error);
  }
  report.description = format_name("gradcheck  %s: fluid %d x %d, %d steps of %g s, loss = weighted sum of every face velocity and "
                              "scalar over the trajectory; initial velocities + %g sin(1.3 k) m/s on the interior faces, scalars + 0.05 sin(0.9 k + 0.3)%s",
                              world.source.c_str(), model.nx, model.ny, steps, model.dt, nudge,
                              given_controls ? "" : ", forces 0.1 sin(0.37 k) m/s²");
  if (!gradients.solver_converged) report.notes.push_back("warning: an adjoint solve of the fluid missed its tolerance");
  return report;
}

}  // namespace diffphys::world
