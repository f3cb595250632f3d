// tools/soft_gradcheck_command.cpp — `diffphys gradcheck SCENE [--steps N]` for soft scenes:
// the analytic gradient of a rollout (SoftRollout::backward, implicit function theorem)
// against central finite differences of the same rollout, in the rigid command's table.
//
// The loss is L = Σ_t Σ_k (a_k x_t,k + b_k v_t,k) over the whole trajectory with fixed
// pseudo-random weights (seeded), so it reaches every node at every step. Compared: every
// component of every θ slice; x_0 and v_0 of every free node (of a spread of 8 nodes on
// larger meshes); the forces f_t on a spread of (step, node) pairs, each judged by
// compare_with_finite_differences (diffphys/gradcheck.hpp). Both sides run Newton with the
// tolerance tightened to 10⁻¹², so that differences are not solver noise. A parameter at 0
// that must stay ≥ 0 (a damping, a friction, a node's extra mass) is differenced one-sided,
// from a first step ε = --param-epsilon (10⁻³ of the node's lumped mass, at least 10⁻⁷ kg,
// for a node's extra mass).
#include "soft_gradcheck_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diffphys/soft.hpp"
#include "diffphys/soft_rollout.hpp"
#include "diffphys/soft_scene.hpp"
#include "gradcheck_table.hpp"

namespace diffphys::cli {

namespace {

using namespace diffphys::soft;

constexpr int kStateSamples = 8;    // nodes whose x_0, v_0 are checked on larger meshes
constexpr int kForceSamples = 8;    // (step, node) pairs whose forces are checked
constexpr const char* kAxis[3] = {"x", "y", "z"};

struct Check {
  Check(const SoftModel& soft_model, int rollout_steps, std::size_t dofs)
      : model(soft_model), steps(rollout_steps), weights(2 * dofs), workspace(soft_model) {}
  const SoftModel& model;
  int steps = 0;
  std::vector<double> weights;  // 2 × 3 nnode: positions, then velocities
  mutable SoftWorkspace workspace;  // ordered and analysed once for every evaluation

  double loss_of(const SoftState& s) const {
    const std::size_t dofs = s.positions.size();
    double sum = 0.0;
    for (std::size_t k = 0; k < dofs; ++k) sum += weights[k] * s.positions[k] + weights[dofs + k] * s.velocities[k];
    return sum;
  }
  double trajectory_loss(const SoftParams& params, const SoftState& initial, const std::vector<double>& forces) const {
    const auto dofs = static_cast<std::size_t>(model.dof_count());
    SoftState current = initial, next;
    prepare_soft_state(model, current);
    double sum = loss_of(current);
    for (int t = 0; t < steps; ++t) {
      soft_step(model, params, current, std::span<const double>(forces).subspan(static_cast<std::size_t>(t) * dofs, dofs), next,
                workspace);
      std::swap(current, next);
      sum += loss_of(current);
    }
    return sum;
  }
};

}  // namespace

int run_soft_gradcheck(const GradcheckOptions& options) {
  SoftSpec spec = load_soft_scene(options.scene_path);
  spec.newton.tolerance = std::min(spec.newton.tolerance, 1e-12);
  spec.newton.max_iterations = std::max(spec.newton.max_iterations, 100);
  const SoftBuild built = build_soft_scene(spec, options.scene_path);
  const SoftModel& model = built.model;
  const int steps = options.steps_given ? options.steps : kDefaultSoftGradcheckSteps;
  const auto dofs = static_cast<std::size_t>(model.dof_count());
  std::mt19937 random(1);
  std::normal_distribution<double> normal;
  Check check(model, steps, dofs);
  for (double& w : check.weights) w = normal(random);
  // Small forces: f_t is an input like the others (zero would leave its check trivial).
  std::vector<double> forces(static_cast<std::size_t>(steps) * dofs);
  for (std::size_t k = 0; k < forces.size(); ++k) forces[k] = 1e-3 * std::sin(0.37 * static_cast<double>(k));

  SoftRollout rollout(model, built.params);
  rollout.run(built.state, forces, steps);
  const SoftGradients gradients = rollout.backward(
      [&](int, const SoftState&, std::span<double> dx, std::span<double> dv) {
        for (std::size_t k = 0; k < dofs; ++k) {
          dx[k] += check.weights[k];
          dv[k] += check.weights[dofs + k];
        }
      });

  std::vector<GradientCheckEntry> entries;
  double gradient_scale = 0.0;  // the largest component of the analytic gradient (kRoundOffFloor)
  for (const std::vector<double>* part :
       {&gradients.params, &gradients.initial_positions, &gradients.initial_velocities, &gradients.controls})
    for (const double component : *part) gradient_scale = std::max(gradient_scale, std::abs(component));
  const auto add = [&](std::string name, double analytic, const std::function<double(double)>& loss_at, double step,
                       DifferenceSide side) {
    entries.push_back(
        compare_with_finite_differences(std::move(name), analytic, loss_at, step, options.tolerance, side, gradient_scale));
  };

  SoftParams params = built.params;
  std::vector<double> lumped(static_cast<std::size_t>(model.node_count));
  lumped_masses(model, built.params, lumped);
  for (const SoftParamLayout::Slice& slice : model.layout.slices)
    for (int i = 0; i < slice.size; ++i) {
      const auto p = static_cast<std::size_t>(slice.offset + i);
      const double original = params.values[p];
      const auto loss_at = [&](double delta) {
        params.values[p] = original + delta;
        const double loss = check.trajectory_loss(params, built.state, forces);
        params.values[p] = original;
        return loss;
      };
      if (original == 0.0 && slice.name != "gravity") {
        // A node's extra mass steps by 10⁻³ of the node's lumped mass (at least 10⁻⁷ kg): small
        // against it (truncation ~10⁻⁶), large enough that the loss's round-off stays below
        // the tolerance (nodes weigh from grams, cloth, to tens of grams, tets).
        const double epsilon = slice.name == "node_mass" ? std::max(1e-7, 1e-3 * lumped[static_cast<std::size_t>(i)]) : options.param_epsilon;
        add(slice.name + "[" + std::to_string(i) + "]", gradients.params[p], loss_at, epsilon, DifferenceSide::Above);
      } else {
        const double epsilon = original != 0.0 ? std::max(options.param_epsilon * std::abs(original), 1e-7) : options.param_epsilon;
        add(slice.name + "[" + std::to_string(i) + "]", gradients.params[p], loss_at, epsilon, DifferenceSide::Both);
      }
    }

  std::vector<int> free_nodes;
  for (int i = 0; i < model.node_count; ++i)
    if (!model.pinned[static_cast<std::size_t>(i)]) free_nodes.push_back(i);
  std::vector<int> state_nodes = free_nodes;
  if (state_nodes.size() > static_cast<std::size_t>(kStateSamples)) {
    state_nodes.clear();
    for (int s = 0; s < kStateSamples; ++s)
      state_nodes.push_back(free_nodes[static_cast<std::size_t>(s) * (free_nodes.size() - 1) / (kStateSamples - 1)]);
  }
  const double epsilon = options.state_epsilon;
  for (const int node : state_nodes)
    for (int which = 0; which < 2; ++which)
      for (int axis = 0; axis < 3; ++axis) {
        const auto k = static_cast<std::size_t>(3 * node + axis);
        add(std::string(which == 0 ? "x0" : "v0") + "/node " + std::to_string(node) + "[" + kAxis[axis] + "]",
            (which == 0 ? gradients.initial_positions : gradients.initial_velocities)[k],
            [&](double delta) {
              SoftState moved = built.state;
              (which == 0 ? moved.positions : moved.velocities)[k] += delta;
              return check.trajectory_loss(built.params, moved, forces);
            },
            epsilon, DifferenceSide::Both);
      }
  if (!free_nodes.empty() && steps > 0)
    for (int s = 0; s < kForceSamples; ++s) {
      const int t = kForceSamples > 1 ? s * (steps - 1) / (kForceSamples - 1) : 0;
      const int node = free_nodes[static_cast<std::size_t>(s * 7919) % free_nodes.size()];
      const int axis = s % 3;
      const std::size_t index = static_cast<std::size_t>(t) * dofs + static_cast<std::size_t>(3 * node + axis);
      add("force/node " + std::to_string(node) + "[" + kAxis[axis] + "]/t=" + std::to_string(t), gradients.controls[index],
          [&](double delta) {
            std::vector<double> moved = forces;
            moved[index] += delta;
            return check.trajectory_loss(built.params, built.state, moved);
          },
          epsilon, DifferenceSide::Both);
    }

  std::printf("gradcheck  %s: %d steps of %g s, loss = weighted sum of every node's position and velocity over the trajectory\n",
              options.scene_path.c_str(), steps, model.dt);
  if (!gradients.solver_converged)
    std::printf("warning: Newton did not converge at %zu step(s); gradients are valid only at converged steps\n",
                gradients.health.non_converged_steps.size());
  return print_gradcheck_table(entries, options);
}

}  // namespace diffphys::cli
