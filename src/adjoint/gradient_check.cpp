// adjoint/gradient_check.cpp — see diffphys/gradcheck.hpp.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "diffphys/gradcheck.hpp"
#include "diffphys/jacobians.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys {
namespace {

constexpr int kTangent = kStateTangentPerBody;
const char* const kComponent[4] = {"position", "rotation", "linear_velocity", "angular_velocity"};


struct WeightedLoss {
  std::vector<double> weights;  // 12 per body
  double value(const State& s) const {
    double sum = 0.0;
    for (std::size_t b = 0; b < s.position.size(); ++b) {
      const Vec3 z_axis = s.orientation[b].rotate({0, 0, 1});
      const double* w = &weights[kTangent * b];
      for (int k = 0; k < 3; ++k)
        sum += w[k] * s.position[b][k] + w[3 + k] * z_axis[k] + w[6 + k] * s.linear_velocity[b][k] +
               w[9 + k] * s.angular_velocity[b][k];
    }
    return sum;
  }
  // In the tangent layout; δ(z axis) = δθ × z, so its adjoint is θ̄ = z × w_z.
  void gradient(const State& s, std::span<double> out) const {
    for (std::size_t b = 0; b < s.position.size(); ++b) {
      const Vec3 z_axis = s.orientation[b].rotate({0, 0, 1});
      const double* w = &weights[kTangent * b];
      const Vec3 rotation = cross(z_axis, Vec3{w[3], w[4], w[5]});
      for (int k = 0; k < 3; ++k) {
        out[kTangent * b + static_cast<std::size_t>(k)] += w[k];
        out[kTangent * b + 3 + static_cast<std::size_t>(k)] += rotation[k];
        out[kTangent * b + 6 + static_cast<std::size_t>(k)] += w[6 + k];
        out[kTangent * b + 9 + static_cast<std::size_t>(k)] += w[9 + k];
      }
    }
  }
};

double trajectory_loss(const Model& model, const Params& params, const State& initial, std::span<const double> controls,
                       int steps, const WeightedLoss& loss) {
  State current = initial, next = initial;
  Workspace workspace;
  const auto actuators = static_cast<std::size_t>(model.actuator_count());
  double sum = loss.value(current);
  for (int t = 0; t < steps; ++t) {
    step(model, params, current, controls.subspan(static_cast<std::size_t>(t) * actuators, actuators), next, workspace);
    std::swap(current, next);
    sum += loss.value(current);
  }
  return sum;
}

}  // namespace

GradientCheckReport check_gradients(const Scene& scene_in, std::span<const double> controls_in,
                                    const GradientCheckOptions& options) {
  // Finite differences divide the solver's residual by ε: with the default 1e-10 m/s they
  // would carry ~1e-4 of noise. The check runs both sides with tight tolerances instead.
  Scene scene = scene_in;
  scene.model.solver.tolerance = std::min(scene.model.solver.tolerance, 1e-13);
  scene.model.solver.max_iterations = std::max(scene.model.solver.max_iterations, 200);
  scene.model.solver.stabilization_tolerance = std::min(scene.model.solver.stabilization_tolerance, 1e-14);
  scene.model.solver.stabilization_iterations = std::max(scene.model.solver.stabilization_iterations, 20);
  scene.model.solver.warm_start = false;  // as in Rollout: each step a function of its inputs
  const Model& model = scene.model;
  const auto actuators = static_cast<std::size_t>(model.actuator_count());
  const auto steps = static_cast<std::size_t>(options.steps);
  std::vector<double> controls(controls_in.begin(), controls_in.end());
  if (controls.empty())
    for (std::size_t t = 0; t < steps; ++t) controls.insert(controls.end(), scene.controls.begin(), scene.controls.end());
  std::mt19937 random(options.seed);
  std::normal_distribution<double> normal;
  WeightedLoss loss;
  loss.weights.resize(static_cast<std::size_t>(kTangent * model.body_count()));
  for (double& w : loss.weights) w = normal(random);

  Rollout rollout(model, scene.params);
  rollout.run(scene.state, controls, options.steps);
  const Gradients gradients = rollout.backward([&](int, const State& s, std::span<double> out) { loss.gradient(s, out); });

  GradientCheckReport report;
  double gradient_scale = 0.0;  // the largest component of the analytic gradient (kRoundOffFloor)
  for (const std::vector<double>* part : {&gradients.params, &gradients.initial_state, &gradients.controls})
    for (const double component : *part) gradient_scale = std::max(gradient_scale, std::abs(component));
  const auto add = [&](std::string name, double analytic, const std::function<double(double)>& loss_at, double step) {
    report.entries.push_back(compare_with_finite_differences(std::move(name), analytic, loss_at, step, options.tolerance,
                                                             DifferenceSide::Both, gradient_scale));
    const double error = report.entries.back().relative_error;
    report.worst_relative_error = std::max(report.worst_relative_error, std::isnan(error) ? INFINITY : error);
  };
  for (const auto& slice : model.layout.slices)
    for (int k = 0; k < slice.size; ++k) {
      const auto index = static_cast<std::size_t>(slice.offset + k);
      if (std::find(gradients.not_differentiable.begin(), gradients.not_differentiable.end(), slice.name) !=
          gradients.not_differentiable.end()) {
        report.skipped.push_back(slice.name);
        continue;
      }
      // A first step relative to the parameter's size (inertias of small links are ~1e-6
      // kg·m²), but never below 1e-7: the loss sums hundreds of terms, and a few units in its
      // last place divided by a smaller step would be all the "derivative" there is. A
      // parameter at zero (no damping, no force) steps by param_epsilon itself. Where that
      // step is not right, compare_with_finite_differences searches for a better one.
      const double value = std::abs(scene.params.values[index]);
      const double step = value > 0 ? std::max(options.param_epsilon * value, 1e-7) : options.param_epsilon;
      add(slice.name + "[" + std::to_string(k) + "]", gradients.params[index],
          [&](double delta) {
            Params moved = scene.params;
            moved.values[index] += delta;
            return trajectory_loss(model, moved, scene.state, controls, options.steps, loss);
          },
          step);
    }
  for (int b = 0; b < model.body_count(); ++b) {
    if (model.bodies[static_cast<std::size_t>(b)].type == BodyType::Static) continue;  // kinematic ones are state too
    for (int k = 0; k < kTangent; ++k)
      add("x0/" + model.bodies[static_cast<std::size_t>(b)].name + "/" + kComponent[k / 3] + "[" + std::to_string(k % 3) + "]",
          gradients.initial_state[static_cast<std::size_t>(kTangent * b + k)],
          [&](double delta) {
            return trajectory_loss(model, scene.params, state_perturbed(scene.state, b, k, delta), controls, options.steps, loss);
          },
          options.state_epsilon);
  }
  if (actuators > 0 && steps > 0) {
    const std::size_t samples = std::min<std::size_t>(static_cast<std::size_t>(std::max(options.control_samples, 0)), steps);
    for (std::size_t s = 0; s < samples; ++s) {
      const std::size_t t = samples > 1 ? s * (steps - 1) / (samples - 1) : 0;
      for (std::size_t a = 0; a < actuators; ++a) {
        const std::size_t i = t * actuators + a;
        add("control/" + model.actuators[a].name + "/t=" + std::to_string(t), gradients.controls[i],
            [&](double delta) {
              std::vector<double> moved = controls;
              moved[i] += delta;
              return trajectory_loss(model, scene.params, scene.state, moved, options.steps, loss);
            },
            options.state_epsilon);
      }
    }
  }
  report.passed = report.worst_relative_error <= options.tolerance;
  return report;
}

}  // namespace diffphys
