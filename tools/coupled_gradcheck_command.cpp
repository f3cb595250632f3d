// tools/coupled_gradcheck_command.cpp — `diffphys gradcheck SCENE [--steps N]` for coupled
// rigid + soft scenes: the analytic gradient of a CoupledRollout (soft steps' implicit
// function theorem, pose adjoints routed into the rigid Rollout's backward; one- or two-way)
// against central finite differences of the same rollout, in the rigid command's table.
//
// The loss is L = Σ_{t=0..T} [Σ_k (a_k x_t,k + b_k v_t,k) + Σ_b w_b·(p_b, z axis of b, v_b, ω_b)]
// over the T soft steps, the rigid bodies taken at rigid step t·S, with fixed pseudo-random
// weights (seeded): it reaches every soft node and every rigid state component. Compared:
// every component of every rigid and soft θ slice (a spread of 8 on longer slices, such as one
// mass per node) except the soft frame poses, which the rollout sets from the rigid bodies
// (their adjoints are routed to the rigid side, checked through the rigid x₀); all 12 tangent
// components of x₀ of the dynamic rigid bodies (of a spread of 4 on larger scenes; orientation
// as exp(δθ) ⊗ q); x₀ and v₀ of a spread of 8 free soft nodes; a spread of 8 rigid controls per
// actuator and of 8 soft forces f_t. Both sides run with tightened solver tolerances (Newton
// 10⁻¹², rigid 10⁻¹³) so that differences are not solver noise. Every entry is judged by
// compare_with_finite_differences (diffphys/gradcheck.hpp), as for rigid and soft scenes; a
// soft parameter at 0 that must stay ≥ 0 (a friction, a damping, a node's extra mass) is
// differenced one-sided, and so is a rigid parameter on the bound of its range (a restitution
// of 0: the rollout refuses −ε).
#include "coupled_gradcheck_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diffphys/coupled.hpp"
#include "diffphys/error.hpp"
#include "diffphys/jacobians.hpp"
#include "gradcheck_table.hpp"

namespace diffphys::cli {

namespace {

constexpr int kSliceSamples = 8;       // components checked of a longer θ slice
constexpr int kRigidBodySamples = 4;   // dynamic bodies whose x₀ is checked on larger scenes
constexpr int kSoftNodeSamples = 8;    // free nodes whose x₀, v₀ are checked on larger meshes
constexpr int kControlSamples = 8;     // steps whose rigid controls are checked
constexpr int kCoupledForceSamples = 8;  // (step, node) pairs whose soft forces are checked
constexpr const char* kAxisName[3] = {"x", "y", "z"};
constexpr const char* kRigidComponent[4] = {"position", "rotation", "linear_velocity", "angular_velocity"};
constexpr int kTangent = kStateTangentPerBody;

// `count` indices spread evenly over [0, size) (all of them when size ≤ count).
std::vector<int> spread(int size, int count) {
  std::vector<int> picked;
  if (size <= count) {
    for (int i = 0; i < size; ++i) picked.push_back(i);
  } else {
    for (int s = 0; s < count; ++s) picked.push_back(static_cast<int>(static_cast<long long>(s) * (size - 1) / (count - 1)));
  }
  return picked;
}


struct CoupledCheck {
  const CoupledSystem& system;
  int steps = 0;
  std::vector<int> dynamic_bodies;
  std::vector<double> rigid_weights;  // 12 per rigid body (dynamic ones used)
  std::vector<double> soft_weights;   // 2 × 3 nnode: positions, then velocities

  double rigid_loss(const State& s) const {
    double sum = 0.0;
    for (const int b : dynamic_bodies) {
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
  double loss(const CoupledRollout& rollout) const {
    double sum = 0.0;
    for (int t = 0; t <= steps; ++t) sum += rigid_loss(rollout.rigid_state(t)) + soft_loss(rollout.soft_state(t));
    return sum;
  }
  // dL/d(rigid x_t) in the tangent layout: δ(z axis) = δθ × z, so the rotation's adjoint is z × w_z.
  CoupledLossGradient gradient() const {
    return [this](int, const State& rigid, const soft::SoftState& s, std::span<double> drigid, std::span<double> dx,
                  std::span<double> dv) {
      for (const int b : dynamic_bodies) {
        const auto i = static_cast<std::size_t>(b);
        const Vec3 z_axis = rigid.orientation[i].rotate({0, 0, 1});
        const double* w = &rigid_weights[kTangent * i];
        const Vec3 rotation = cross(z_axis, Vec3{w[3], w[4], w[5]});
        for (std::size_t k = 0; k < 3; ++k) {
          drigid[kTangent * i + k] += w[k];
          drigid[kTangent * i + 3 + k] += rotation[static_cast<int>(k)];
          drigid[kTangent * i + 6 + k] += w[6 + k];
          drigid[kTangent * i + 9 + k] += w[9 + k];
        }
      }
      const std::size_t dofs = s.positions.size();
      for (std::size_t k = 0; k < dofs; ++k) {
        dx[k] += soft_weights[k];
        dv[k] += soft_weights[dofs + k];
      }
    };
  }
};

// L of a rollout from given θ and initial states. One rollout serves every evaluation (its
// models copied, the soft Hessian's ordering analysed once); it references the probe's own
// rigid_params and soft_params, which are overwritten before each run.
struct Probe {
  Probe(const CoupledCheck& coupled_check)
      : check(coupled_check),
        rigid_params(check.system.rigid_params),
        soft_params(check.system.soft_params),
        rollout(check.system.rigid_model, rigid_params, check.system.soft_model, soft_params, check.system.frame_bodies,
                check.system.substeps, CoupledOptions{RolloutOptions{}, check.system.two_way}) {}
  const CoupledCheck& check;
  Params rigid_params;
  soft::SoftParams soft_params;
  CoupledRollout rollout;

  double loss(const Params& rigid, const State& rigid_initial, const std::vector<double>& rigid_controls,
              const soft::SoftParams& soft, const soft::SoftState& soft_initial, const std::vector<double>& soft_forces) {
    rigid_params.values = rigid.values;
    soft_params.values = soft.values;
    rollout.run(rigid_initial, rigid_controls, soft_initial, soft_forces, check.steps);
    return check.loss(rollout);
  }
};

}  // namespace

int run_coupled_gradcheck(const GradcheckOptions& options) {
  CoupledSystem system = load_coupled_scene(options.scene_path);
  // Finite differences divide the solvers' residuals by ε: tighten both (as the rigid and soft checks do).
  system.soft_model.newton.tolerance = std::min(system.soft_model.newton.tolerance, 1e-12);
  system.soft_model.newton.max_iterations = std::max(system.soft_model.newton.max_iterations, 100);
  SolverSettings& solver = system.rigid_model.solver;
  solver.tolerance = std::min(solver.tolerance, 1e-13);
  solver.max_iterations = std::max(solver.max_iterations, 200);
  solver.stabilization_tolerance = std::min(solver.stabilization_tolerance, 1e-14);
  solver.stabilization_iterations = std::max(solver.stabilization_iterations, 20);
  solver.warm_start = false;

  const Model& rigid_model = system.rigid_model;
  const soft::SoftModel& soft_model = system.soft_model;
  const int steps = options.steps_given ? options.steps : kDefaultSoftGradcheckSteps;
  const int rigid_steps = steps * system.substeps;
  const auto actuators = static_cast<std::size_t>(rigid_model.actuator_count());
  const auto dofs = static_cast<std::size_t>(soft_model.dof_count());

  CoupledCheck check{system, steps, {}, {}, {}};
  for (int b = 1; b < rigid_model.body_count(); ++b)
    if (rigid_model.bodies[static_cast<std::size_t>(b)].type == BodyType::Dynamic) check.dynamic_bodies.push_back(b);
  std::mt19937 random(1);
  std::normal_distribution<double> normal;
  check.rigid_weights.resize(static_cast<std::size_t>(kTangent * rigid_model.body_count()));
  for (double& w : check.rigid_weights) w = normal(random);
  check.soft_weights.resize(2 * dofs);
  for (double& w : check.soft_weights) w = normal(random);

  std::vector<double> rigid_controls;
  for (int k = 0; k < rigid_steps; ++k)
    rigid_controls.insert(rigid_controls.end(), system.rigid_controls.begin(), system.rigid_controls.end());
  // Small soft forces: f_t is an input like the others (zero would leave its check trivial).
  std::vector<double> soft_forces(static_cast<std::size_t>(steps) * dofs);
  for (std::size_t k = 0; k < soft_forces.size(); ++k) soft_forces[k] = 1e-3 * std::sin(0.37 * static_cast<double>(k));

  CoupledRollout rollout(system.rigid_model, system.rigid_params, system.soft_model, system.soft_params, system.frame_bodies,
                         system.substeps, CoupledOptions{RolloutOptions{}, system.two_way});
  rollout.run(system.rigid_state, rigid_controls, system.soft_state, soft_forces, steps);
  const CoupledGradients gradients = rollout.backward(check.gradient());
  long long rigid_failures = 0;
  for (const StepStatus& status : rollout.rigid_statuses()) rigid_failures += status.converged ? 0 : 1;

  std::vector<GradientCheckEntry> entries;
  // Each entry judged by compare_with_finite_differences (diffphys/gradcheck.hpp); an input
  // on the bound of its range (a restitution of 0 or 1) is differenced on its allowed side.
  double gradient_scale = 0.0;  // the largest component of the analytic gradient (kRoundOffFloor)
  for (const std::vector<double>* part :
       {&gradients.rigid.params, &gradients.rigid.initial_state, &gradients.rigid.controls, &gradients.soft.params,
        &gradients.soft.initial_positions, &gradients.soft.initial_velocities, &gradients.soft.controls})
    for (const double component : *part) gradient_scale = std::max(gradient_scale, std::abs(component));
  const auto add = [&](std::string name, double analytic, const std::function<double(double)>& loss_at, double step,
                       DifferenceSide side) {
    entries.push_back(
        compare_with_finite_differences(std::move(name), analytic, loss_at, step, options.tolerance, side, gradient_scale));
  };
  Probe probe(check);
  const auto evaluate_with = [&](const Params& rigid_params, const State& rigid_initial, const std::vector<double>& controls,
                                 const soft::SoftParams& soft_params, const soft::SoftState& soft_initial,
                                 const std::vector<double>& forces) {
    return probe.loss(rigid_params, rigid_initial, controls, soft_params, soft_initial, forces);
  };

  // Rigid θ (slices where the loss is not differentiable at their value are left out, as for rigid scenes).
  std::vector<std::string> skipped;
  for (const ParamLayout::Slice& slice : rigid_model.layout.slices) {
    const auto& not_differentiable = gradients.rigid.not_differentiable;
    if (std::find(not_differentiable.begin(), not_differentiable.end(), slice.name) != not_differentiable.end()) {
      skipped.push_back("rigid/" + slice.name);
      continue;
    }
    for (const int k : spread(slice.size, kSliceSamples)) {
      const auto p = static_cast<std::size_t>(slice.offset + k);
      const double value = std::abs(system.rigid_params.values[p]);
      const double h = value > 0 ? std::max(options.param_epsilon * value, 1e-7) : options.param_epsilon;
      add("rigid/" + slice.name + "[" + std::to_string(k) + "]", gradients.rigid.params[p],
          [&](double delta) {
            Params moved = system.rigid_params;
            moved.values[p] += delta;
            return evaluate_with(moved, system.rigid_state, rigid_controls, system.soft_params, system.soft_state, soft_forces);
          },
          h, DifferenceSide::Both);
    }
  }

  // Soft θ, without the frame poses (set from the rigid bodies at every step).
  const auto is_pose_slice = [&](int offset) {
    const auto& pose = soft_model.layout.frame_pose;
    const auto& previous = soft_model.layout.frame_previous_pose;
    return std::find(pose.begin(), pose.end(), offset) != pose.end() ||
           std::find(previous.begin(), previous.end(), offset) != previous.end();
  };
  std::vector<double> lumped(static_cast<std::size_t>(soft_model.node_count));
  soft::lumped_masses(soft_model, system.soft_params, lumped);
  for (const soft::SoftParamLayout::Slice& slice : soft_model.layout.slices) {
    if (is_pose_slice(slice.offset)) continue;
    for (const int k : spread(slice.size, kSliceSamples)) {
      const auto p = static_cast<std::size_t>(slice.offset + k);
      const double original = system.soft_params.values[p];
      const auto loss_at = [&](double delta) {
        soft::SoftParams moved = system.soft_params;
        moved.values[p] = original + delta;
        return evaluate_with(system.rigid_params, system.rigid_state, rigid_controls, moved, system.soft_state, soft_forces);
      };
      // A soft parameter at 0 other than gravity must stay ≥ 0 (a friction, a damping, a
      // node's extra mass): one-sided, as in the soft gradcheck. A node's extra mass steps by
      // 10⁻³ of its lumped mass (at least 10⁻⁷ kg).
      const bool at_zero_bound = original == 0.0 && slice.name != "gravity";
      const double h = at_zero_bound && slice.name == "node_mass" ? std::max(1e-7, 1e-3 * lumped[static_cast<std::size_t>(k)])
                       : original != 0.0 ? std::max(options.param_epsilon * std::abs(original), 1e-7)
                                         : options.param_epsilon;
      add("soft/" + slice.name + "[" + std::to_string(k) + "]", gradients.soft.params[p], loss_at, h,
          at_zero_bound ? DifferenceSide::Above : DifferenceSide::Both);
    }
  }

  // Rigid x₀ of the dynamic bodies: every tangent component.
  const double epsilon = options.state_epsilon;
  for (const int pick : spread(static_cast<int>(check.dynamic_bodies.size()), kRigidBodySamples)) {
    const int b = check.dynamic_bodies[static_cast<std::size_t>(pick)];
    for (int k = 0; k < kTangent; ++k) {
      add("rigid x0/" + rigid_model.bodies[static_cast<std::size_t>(b)].name + "/" + kRigidComponent[k / 3] + "[" +
              std::to_string(k % 3) + "]",
          gradients.rigid.initial_state[static_cast<std::size_t>(kTangent * b + k)],
          [&](double delta) {
            return evaluate_with(system.rigid_params, state_perturbed(system.rigid_state, b, k, delta), rigid_controls, system.soft_params,
                                 system.soft_state, soft_forces);
          },
          epsilon, DifferenceSide::Both);
    }
  }

  // Rigid controls: every actuator at a spread of rigid steps.
  if (actuators > 0)
    for (const int t : spread(rigid_steps, kControlSamples))
      for (std::size_t a = 0; a < actuators; ++a) {
        const std::size_t index = static_cast<std::size_t>(t) * actuators + a;
        add("rigid control/" + rigid_model.actuators[a].name + "/t=" + std::to_string(t), gradients.rigid.controls[index],
            [&](double delta) {
              std::vector<double> moved = rigid_controls;
              moved[index] += delta;
              return evaluate_with(system.rigid_params, system.rigid_state, moved, system.soft_params, system.soft_state, soft_forces);
            },
            epsilon, DifferenceSide::Both);
      }

  // Soft x₀, v₀ of a spread of free nodes, and a spread of forces f_t.
  std::vector<int> free_nodes;
  for (int i = 0; i < soft_model.node_count; ++i)
    if (!soft_model.pinned[static_cast<std::size_t>(i)]) free_nodes.push_back(i);
  for (const int pick : spread(static_cast<int>(free_nodes.size()), kSoftNodeSamples)) {
    const int node = free_nodes[static_cast<std::size_t>(pick)];
    for (int which = 0; which < 2; ++which)
      for (int axis = 0; axis < 3; ++axis) {
        const auto k = static_cast<std::size_t>(3 * node + axis);
        add(std::string(which == 0 ? "soft x0/node " : "soft v0/node ") + std::to_string(node) + "[" + kAxisName[axis] + "]",
            (which == 0 ? gradients.soft.initial_positions : gradients.soft.initial_velocities)[k],
            [&](double delta) {
              soft::SoftState moved = system.soft_state;
              (which == 0 ? moved.positions : moved.velocities)[k] += delta;
              return evaluate_with(system.rigid_params, system.rigid_state, rigid_controls, system.soft_params, moved, soft_forces);
            },
            epsilon, DifferenceSide::Both);
      }
  }
  if (!free_nodes.empty())
    for (int s = 0; s < kCoupledForceSamples; ++s) {
      const int t = s * (steps - 1) / (kCoupledForceSamples - 1);
      const int node = free_nodes[static_cast<std::size_t>(s * 7919) % free_nodes.size()];
      const int axis = s % 3;
      const std::size_t index = static_cast<std::size_t>(t) * dofs + static_cast<std::size_t>(3 * node + axis);
      add("soft force/node " + std::to_string(node) + "[" + kAxisName[axis] + "]/t=" + std::to_string(t), gradients.soft.controls[index],
          [&](double delta) {
            std::vector<double> moved = soft_forces;
            moved[index] += delta;
            return evaluate_with(system.rigid_params, system.rigid_state, rigid_controls, system.soft_params, system.soft_state, moved);
          },
          epsilon, DifferenceSide::Both);
    }

  std::printf("gradcheck  %s: coupled (%s), %d soft step%s of %g s (%d rigid step%s each), loss = weighted sum of every "
              "rigid body's and soft node's state over the trajectory\n",
              options.scene_path.c_str(), system.two_way ? "two-way" : "one-way", steps, steps == 1 ? "" : "s", soft_model.dt,
              system.substeps, system.substeps == 1 ? "" : "s");
  if (!gradients.soft.solver_converged)
    std::printf("warning: Newton did not converge at %zu soft step(s); gradients are valid only at converged steps\n",
                gradients.soft.health.non_converged_steps.size());
  if (rigid_failures > 0)
    std::printf("warning: the rigid solver did not converge at %lld rigid step(s)\n", rigid_failures);
  for (const std::string& name : skipped) std::printf("not compared: %s (not differentiable at its value)\n", name.c_str());
  return print_gradcheck_table(entries, options);
}

}  // namespace diffphys::cli
