// world/world_gradcheck.cpp — check_world_gradients (diffphys/world_gradcheck.hpp): the
// analytic gradient of a WorldRollout against central finite differences of the same rollout,
// over the world's flat vectors. Each kind of part registers its check (world/part_kind.hpp)
// and a world is checked by its last held kind's: rigid-only worlds go to
// check_gradients(Scene); worlds with soft bodies are checked here, one function for
// soft-only and rigid + soft worlds (the rules of what is sampled are in the header).
#include "diffphys/world_gradcheck.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

#include "diffphys/error.hpp"
#include "diffphys/jacobians.hpp"
#include "world/body_gradcheck.hpp"
#include "world/gradcheck_sampling.hpp"
#include "world/part_kind.hpp"

namespace diffphys {

namespace {

using world::format_name;
using world::spread_indices;

constexpr int kSliceSamples = 8;       // components checked of a longer θ slice (several parts)
constexpr int kRigidBodySamples = 4;   // moving (dynamic, kinematic) bodies whose x₀ is checked on larger scenes
constexpr int kSoftNodeSamples = 8;    // free nodes whose x₀, v₀ are checked on larger meshes
constexpr int kControlSamples = 8;     // rigid steps whose controls are checked
constexpr int kForceSamples = 8;       // (step, node) pairs whose soft forces are checked
constexpr const char* kAxisName[3] = {"x", "y", "z"};
constexpr const char* kRigidComponent[4] = {"position", "rotation", "linear_velocity", "angular_velocity"};
constexpr int kTangent = kStateTangentPerBody;

// The weighted-sum loss of the header and its gradient.
struct WorldLoss {
  std::vector<int> moving_bodies;
  std::vector<double> rigid_weights;  // 12 per rigid body (moving ones used)
  std::vector<double> soft_weights;   // 2 × 3 nnode: positions, then velocities

  double rigid_loss(const State& s) const {
    double sum = 0.0;
    for (const int b : moving_bodies) {
      const auto i = static_cast<std::size_t>(b);
      const Vec3 z_axis = s.orientation[i].rotate({0, 0, 1});
      const double* w = &rigid_weights[kTangent * i];
      for (int k = 0; k < 3; ++k)
        sum += w[k] * s.position[i][k] + w[3 + k] * z_axis[k] + w[6 + k] * s.linear_velocity[i][k] + w[9 + k] * s.angular_velocity[i][k];
    }
    return sum;
  }
  double soft_loss(const soft::SoftState& s) const {
    const std::size_t dofs = s.positions.size();
    double sum = 0.0;
    for (std::size_t k = 0; k < dofs; ++k) sum += soft_weights[k] * s.positions[k] + soft_weights[dofs + k] * s.velocities[k];
    return sum;
  }
  double trajectory_loss(const WorldRollout& rollout) const {
    double sum = 0.0;
    for (int t = 0; t <= rollout.steps(); ++t) {
      const WorldState state = rollout.state(t);
      sum += rigid_loss(state.rigid) + soft_loss(state.soft);
    }
    return sum;
  }
  // dL/d(rigid x_t) in the tangent layout: δ(z axis) = δθ × z, so the rotation's adjoint is z × w_z.
  void add_gradient(const WorldState& state, WorldStateGradient& gradient) const {
    for (const int b : moving_bodies) {
      const auto i = static_cast<std::size_t>(b);
      const Vec3 z_axis = state.rigid.orientation[i].rotate({0, 0, 1});
      const double* w = &rigid_weights[kTangent * i];
      const Vec3 rotation = cross(z_axis, Vec3{w[3], w[4], w[5]});
      for (std::size_t k = 0; k < 3; ++k) {
        gradient.rigid[kTangent * i + k] += w[k];
        gradient.rigid[kTangent * i + 3 + k] += rotation[static_cast<int>(k)];
        gradient.rigid[kTangent * i + 6 + k] += w[6 + k];
        gradient.rigid[kTangent * i + 9 + k] += w[9 + k];
      }
    }
    const std::size_t dofs = gradient.soft_positions.size();
    for (std::size_t k = 0; k < dofs; ++k) {
      gradient.soft_positions[k] += soft_weights[k];
      gradient.soft_velocities[k] += soft_weights[dofs + k];
    }
  }
};

// The kind whose check covers the world: the last it holds (a soft check covers the rigid
// bodies coupled to it).
const world::PartKind& checking_kind(const World& world) { return world::kind_of(world.layout().parts.back()); }

}  // namespace

int default_gradcheck_steps(const World& world) { return checking_kind(world).default_gradcheck_steps(world); }

WorldGradientCheckReport check_world_gradients(const World& world, std::span<const double> controls,
                                               const GradientCheckOptions& options) {
  const world::PartKind& kind = checking_kind(world);
  if (kind.check_gradients == nullptr)
    throw Error(message("gradcheck: ", world.source, ": a ", kind.name, " world has no gradient check"));
  return kind.check_gradients(world, controls, options);
}

namespace world {

WorldGradientCheckReport check_rigid_world_gradients(const World& world, std::span<const double> controls,
                                                     const GradientCheckOptions& options) {
  WorldGradientCheckReport report;
  report.check = check_gradients(*world.rigid, controls, options);
  const Model& model = world.rigid->model;
  report.description = format_name("gradcheck  %s: %d steps of %g s (%s formulation), loss = weighted sum of every state over the trajectory",
                              world.source.c_str(), options.steps, model.dt,
                              model.solver.formulation == Formulation::Convex ? "convex" : "complementarity");
  return report;
}

WorldGradientCheckReport check_soft_world_gradients(const World& given, std::span<const double> controls,
                                                    const GradientCheckOptions& options) {
  if (options.steps < 1) throw Error(message("gradcheck: steps must be ≥ 1, got ", options.steps));
  // Finite differences divide the solvers' residuals by ε: tighten both.
  World world = given;
  soft::SoftModel& soft_model = world.soft->model;
  soft_model.newton.tolerance = std::min(soft_model.newton.tolerance, 1e-12);
  soft_model.newton.max_iterations = std::max(soft_model.newton.max_iterations, 100);
  if (world.has_rigid()) {
    SolverSettings& solver = world.rigid->model.solver;
    solver.tolerance = std::min(solver.tolerance, 1e-13);
    solver.max_iterations = std::max(solver.max_iterations, 200);
    solver.stabilization_tolerance = std::min(solver.stabilization_tolerance, 1e-14);
    solver.stabilization_iterations = std::max(solver.stabilization_iterations, 20);
    solver.warm_start = false;
  }
  const bool several = world.has_rigid();  // entries carry their part's name
  const WorldLayout& layout = world.layout();
  const int steps = options.steps;
  const int substeps = world.rigid_steps_per_step();
  const auto per_step = static_cast<std::size_t>(layout.control_count);
  const auto dofs = static_cast<std::size_t>(soft_model.dof_count());
  const auto soft_controls = static_cast<std::size_t>(layout.soft_control_offset);
  const auto soft_tangent = static_cast<std::size_t>(layout.soft_tangent_offset);
  const auto soft_params_offset = static_cast<std::size_t>(layout.soft_param_offset);
  const Model* rigid_model = world.has_rigid() ? &world.rigid->model : nullptr;
  const auto actuators = rigid_model ? static_cast<std::size_t>(rigid_model->actuator_count()) : 0;

  // Controls: given, or the scene's rigid controls held and small soft forces (f_t is an input
  // like the others: zero would leave its check trivial).
  std::vector<double> u;
  if (!controls.empty()) {
    if (controls.size() != static_cast<std::size_t>(steps) * per_step)
      throw Error(message("gradcheck: expected ", static_cast<std::size_t>(steps) * per_step, " control values (", steps,
                          " steps × ", per_step, ") or none, got ", controls.size()));
    u.assign(controls.begin(), controls.end());
  } else {
    const std::vector<double> defaults = world.default_controls();
    u.resize(static_cast<std::size_t>(steps) * per_step);
    for (std::size_t t = 0; t < static_cast<std::size_t>(steps); ++t) {
      std::copy(defaults.begin(), defaults.begin() + static_cast<std::ptrdiff_t>(soft_controls), u.begin() + static_cast<std::ptrdiff_t>(t * per_step));
      for (std::size_t k = 0; k < dofs; ++k)
        u[t * per_step + soft_controls + k] = 1e-3 * std::sin(0.37 * static_cast<double>(t * dofs + k));
    }
  }

  WorldLoss loss;
  std::mt19937 random(options.seed);
  std::normal_distribution<double> normal;
  if (rigid_model) {
    for (int b = 1; b < rigid_model->body_count(); ++b)
      if (rigid_model->bodies[static_cast<std::size_t>(b)].type != BodyType::Static) loss.moving_bodies.push_back(b);
    loss.rigid_weights.resize(static_cast<std::size_t>(kTangent * rigid_model->body_count()));
    for (double& w : loss.rigid_weights) w = normal(random);
  }
  loss.soft_weights.resize(2 * dofs);
  for (double& w : loss.soft_weights) w = normal(random);

  const WorldParams params = world.default_params();
  const WorldState initial = world.initial_state();
  WorldRollout rollout(world, params);
  rollout.run(initial, u, steps);
  const WorldGradients gradients =
      rollout.backward([&](int, const WorldState& state, WorldStateGradient& gradient) { loss.add_gradient(state, gradient); });
  long long rigid_failures = 0, soft_failures = 0;
  for (int t = 0; t < steps; ++t) {
    const WorldStepStatus status = rollout.status(t);
    for (const StepStatus& rigid : status.rigid) rigid_failures += rigid.converged ? 0 : 1;
    soft_failures += status.soft->converged ? 0 : 1;
  }

  WorldGradientCheckReport report;
  std::vector<GradientCheckEntry>& entries = report.check.entries;
  double gradient_scale = 0.0;  // the largest component of the analytic gradient (kRoundOffFloor)
  for (const std::vector<double>* part : {&gradients.params, &gradients.initial_state, &gradients.controls})
    for (const double component : *part) gradient_scale = std::max(gradient_scale, std::abs(component));
  const auto add = [&](std::string name, double analytic, const std::function<double(double)>& loss_at, double step,
                       DifferenceSide side) {
    entries.push_back(
        compare_with_finite_differences(std::move(name), analytic, loss_at, step, options.tolerance, side, gradient_scale));
  };
  // One rollout serves every evaluation (its models copied, the soft Hessian's ordering
  // analysed once); it references `probe_params`, overwritten before each run.
  WorldParams probe_params = params;
  WorldRollout probe(world, probe_params);
  const auto loss_with = [&](const WorldParams& theta, const WorldState& start, const std::vector<double>& inputs) {
    probe_params.values = theta.values;
    probe.run(start, inputs, steps);
    return loss.trajectory_loss(probe);
  };

  // Rigid θ (slices where the loss is not differentiable at their value are left out).
  if (rigid_model)
    for (const ParamLayout::Slice& slice : rigid_model->layout.slices) {
      const auto& not_differentiable = gradients.not_differentiable;
      if (std::find(not_differentiable.begin(), not_differentiable.end(), slice.name) != not_differentiable.end()) {
        report.check.skipped.push_back("rigid/" + slice.name);
        continue;
      }
      for (const int k : spread_indices(slice.size, kSliceSamples)) {
        const auto p = static_cast<std::size_t>(slice.offset + k);
        const double value = std::abs(params.values[p]);
        const double h = value > 0 ? std::max(options.param_epsilon * value, 1e-7) : options.param_epsilon;
        add("rigid/" + slice.name + "[" + std::to_string(k) + "]", gradients.params[p],
            [&](double delta) {
              WorldParams moved = params;
              moved.values[p] += delta;
              return loss_with(moved, initial, u);
            },
            h, DifferenceSide::Both);
      }
    }

  // Soft θ, without the frame poses (set from the rigid bodies at every step).
  const soft::SoftParamLayout& soft_layout = soft_model.layout;
  const auto is_pose_slice = [&](int offset) {
    return std::find(soft_layout.frame_pose.begin(), soft_layout.frame_pose.end(), offset) != soft_layout.frame_pose.end() ||
           std::find(soft_layout.frame_previous_pose.begin(), soft_layout.frame_previous_pose.end(), offset) !=
               soft_layout.frame_previous_pose.end();
  };
  const soft::SoftParams soft_theta = soft_params(world, params);
  std::vector<double> lumped(static_cast<std::size_t>(soft_model.node_count));
  soft::lumped_masses(soft_model, soft_theta, lumped);
  for (const soft::SoftParamLayout::Slice& slice : soft_layout.slices) {
    if (is_pose_slice(slice.offset)) continue;
    for (const int k : spread_indices(slice.size, several ? kSliceSamples : INT_MAX)) {
      const std::size_t p = soft_params_offset + static_cast<std::size_t>(slice.offset + k);
      const double original = params.values[p];
      const auto loss_at = [&](double delta) {
        WorldParams moved = params;
        moved.values[p] = original + delta;
        return loss_with(moved, initial, u);
      };
      // A soft parameter at 0 other than gravity must stay ≥ 0 (a friction, a damping, a
      // node's extra mass): one-sided. A node's extra mass steps by 10⁻³ of the node's lumped
      // mass (at least 10⁻⁷ kg): small against it (truncation ~10⁻⁶), large enough that the
      // loss's round-off stays below the tolerance (nodes weigh from grams, cloth, to tens of
      // grams, tets).
      const bool at_zero_bound = original == 0.0 && slice.name != "gravity";
      const double h = at_zero_bound && slice.name == "node_mass" ? std::max(1e-7, 1e-3 * lumped[static_cast<std::size_t>(k)])
                       : original != 0.0 ? std::max(options.param_epsilon * std::abs(original), 1e-7)
                                         : options.param_epsilon;
      add((several ? "soft/" : "") + slice.name + "[" + std::to_string(k) + "]", gradients.params[p], loss_at, h,
          at_zero_bound ? DifferenceSide::Above : DifferenceSide::Both);
    }
  }

  // Rigid x₀ of the moving bodies (dynamic and kinematic): every tangent component.
  const double epsilon = options.state_epsilon;
  for (const int pick : spread_indices(static_cast<int>(loss.moving_bodies.size()), kRigidBodySamples)) {
    const int b = loss.moving_bodies[static_cast<std::size_t>(pick)];
    for (int k = 0; k < kTangent; ++k)
      add("rigid x0/" + rigid_model->bodies[static_cast<std::size_t>(b)].name + "/" + kRigidComponent[k / 3] + "[" +
              std::to_string(k % 3) + "]",
          gradients.initial_state[static_cast<std::size_t>(kTangent * b + k)],
          [&](double delta) {
            WorldState moved = initial;
            moved.rigid = state_perturbed(initial.rigid, b, k, delta);
            return loss_with(params, moved, u);
          },
          epsilon, DifferenceSide::Both);
  }

  // Rigid controls: every actuator at a spread of rigid steps (substep s of world step t).
  if (actuators > 0)
    for (const int k : spread_indices(steps * substeps, kControlSamples))
      for (std::size_t a = 0; a < actuators; ++a) {
        const std::size_t index = static_cast<std::size_t>(k / substeps) * per_step +
                                  static_cast<std::size_t>(k % substeps) * actuators + a;
        add("rigid control/" + rigid_model->actuators[a].name + "/t=" + std::to_string(k), gradients.controls[index],
            [&](double delta) {
              std::vector<double> moved = u;
              moved[index] += delta;
              return loss_with(params, initial, moved);
            },
            epsilon, DifferenceSide::Both);
      }

  // Soft x₀, v₀ of a spread of free nodes, and a spread of forces f_t.
  std::vector<int> free_nodes;
  for (int i = 0; i < soft_model.node_count; ++i)
    if (!soft_model.pinned[static_cast<std::size_t>(i)]) free_nodes.push_back(i);
  const std::string soft_prefix = several ? "soft " : "";
  for (const int pick : spread_indices(static_cast<int>(free_nodes.size()), kSoftNodeSamples)) {
    const int node = free_nodes[static_cast<std::size_t>(pick)];
    for (int which = 0; which < 2; ++which)
      for (int axis = 0; axis < 3; ++axis) {
        const auto k = static_cast<std::size_t>(3 * node + axis);
        add(soft_prefix + (which == 0 ? "x0/node " : "v0/node ") + std::to_string(node) + "[" + kAxisName[axis] + "]",
            gradients.initial_state[soft_tangent + (which == 0 ? 0 : dofs) + k],
            [&](double delta) {
              WorldState moved = initial;
              (which == 0 ? moved.soft.positions : moved.soft.velocities)[k] += delta;
              return loss_with(params, moved, u);
            },
            epsilon, DifferenceSide::Both);
      }
  }
  if (!free_nodes.empty())
    for (int s = 0; s < kForceSamples; ++s) {
      const int t = s * (steps - 1) / (kForceSamples - 1);
      const int node = free_nodes[static_cast<std::size_t>(s * 7919) % free_nodes.size()];
      const int axis = s % 3;
      const std::size_t index = static_cast<std::size_t>(t) * per_step + soft_controls + static_cast<std::size_t>(3 * node + axis);
      add(soft_prefix + "force/node " + std::to_string(node) + "[" + kAxisName[axis] + "]/t=" + std::to_string(t),
          gradients.controls[index],
          [&](double delta) {
            std::vector<double> moved = u;
            moved[index] += delta;
            return loss_with(params, initial, moved);
          },
          epsilon, DifferenceSide::Both);
    }

  report.check.passed = true;
  for (const GradientCheckEntry& entry : entries) {
    report.check.passed = report.check.passed && entry.relative_error <= options.tolerance;
    report.check.worst_relative_error =
        std::max(report.check.worst_relative_error, std::isnan(entry.relative_error) ? INFINITY : entry.relative_error);
  }
  if (several)
    report.description = format_name("gradcheck  %s: coupled (%s), %d soft step%s of %g s (%d rigid step%s each), loss = weighted sum of "
                                "every rigid body's and soft node's state over the trajectory",
                                world.source.c_str(), world.coupling.two_way ? "two-way" : "one-way", steps, steps == 1 ? "" : "s",
                                soft_model.dt, substeps, substeps == 1 ? "" : "s");
  else
    report.description = format_name("gradcheck  %s: %d steps of %g s, loss = weighted sum of every node's position and velocity over "
                                "the trajectory",
                                world.source.c_str(), steps, soft_model.dt);
  if (soft_failures > 0)
    report.notes.push_back(format_name("warning: Newton did not converge at %lld %s; gradients are valid only at converged steps",
                                  soft_failures, several ? "soft step(s)" : "step(s)"));
  if (rigid_failures > 0) report.notes.push_back(format_name("warning: the rigid solver did not converge at %lld rigid step(s)", rigid_failures));
  for (const std::string& name : report.check.skipped) report.notes.push_back("not compared: " + name + " (not differentiable at its value)");
  return report;
}

}  // namespace world

}  // namespace diffphys
