// tests/soft_physics_test.cpp — soft bodies against closed forms and conservation laws:
// Euler–Bernoulli cantilever deflection, a spring–mass oscillator's period, Newton's
// monotone descent, momentum of a free body, cloth draped over a sphere, Adam vs Newton.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "diffphys/soft.hpp"
#include "diffphys/soft_mesh.hpp"
#include "soft_test_scenes.hpp"
#include "test_scenes.hpp"

namespace diffphys::soft {

namespace testing {
// For tests/allocation_test.cpp, which owns the counting operator new: one warm-up step of
// scene 0 (tets, ground contact, friction), 1 (cloth on a sphere) or 2 (spring chain), then
// 10 steps between start() and stop(); returns their Newton iterations.
int run_soft_steps_for_allocation_count(int scene, void (*start)(), void (*stop)()) {
  const SoftSpec spec = scene == 0 ? tet_pair_spec() : scene == 1 ? small_cloth_spec() : spring_chain_spec();
  const SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState current = built.state, next = built.state;
  soft_step(built.model, built.params, current, {}, next, workspace);
  std::swap(current, next);
  int iterations = 0;
  start();
  for (int i = 0; i < 10; ++i) {
    iterations += soft_step(built.model, built.params, current, {}, next, workspace).iterations;
    std::swap(current, next);
  }
  stop();
  return iterations;
}
}  // namespace testing

namespace {

// Tip deflection of a clamped beam of length 1 m and square section 0.1 m (nx × ny × ny
// cells) under its own weight, relative to Euler–Bernoulli: δ = qL⁴/(8EI) = 1.5 ρ g L⁴/(E h²).
double beam_deflection_ratio(int nx, int ny) {
  const double length = 1.0, height = 0.1, youngs = 1e9, density = 1000.0, gravity = 9.81;
  SoftSpec spec;
  spec.gravity = {0, 0, -gravity};
  // ν = 0: the beam theory ignores the lateral (Poisson) coupling at the clamp.
  spec.tet_materials = {{"steel", ElasticModel::NeoHookean, youngs, 0.0, density}};
  add_tet_box(spec, {0, 0, 0}, {length, height, height}, {nx, ny, ny}, 0);
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    if (spec.nodes[i][0] == 0.0) spec.pinned.push_back(static_cast<int>(i));
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  std::vector<double> x = built.state.positions;
  const SoftStepStatus status = solve_soft_static(built.model, built.params, x, workspace);
  EXPECT_TRUE(status.converged) << status.message;
  double sum = 0.0;
  int count = 0;
  for (int i = 0; i < built.model.node_count; ++i)
    if (std::abs(built.model.rest_positions[static_cast<std::size_t>(3 * i)] - length) < 1e-12) {
      sum += built.model.rest_positions[static_cast<std::size_t>(3 * i + 2)] - x[static_cast<std::size_t>(3 * i + 2)];
      ++count;
    }
  const double expected = 1.5 * density * gravity * std::pow(length, 4) / (youngs * height * height);
  return sum / count / expected;
}

TEST(SoftPhysics, CantileverDeflectionMatchesEulerBernoulli) {
  // Linear tets are too stiff in bending (shear locking), so the deflection converges to the
  // beam theory from below as the mesh is refined; Richardson extrapolation of the two finest
  // meshes (error ∝ h²) estimates the converged value.
  const double coarse = beam_deflection_ratio(40, 4);
  const double fine = beam_deflection_ratio(60, 6);
  EXPECT_LT(coarse, fine);
  EXPECT_LT(fine, 1.0);
  EXPECT_GT(fine, 0.9);
  const double h_coarse = 1.0 / 4, h_fine = 1.0 / 6;
  const double extrapolated = (fine * h_coarse * h_coarse - coarse * h_fine * h_fine) / (h_coarse * h_coarse - h_fine * h_fine);
  EXPECT_NEAR(extrapolated, 1.0, 0.03);
}

TEST(SoftPhysics, SpringMassOscillatorPeriod) {
  const double mass = 1.0, stiffness = 100.0, h = 1e-3;
  SoftSpec spec;
  spec.dt = h;
  spec.gravity = {0, 0, 0};
  spec.nodes = {{0, 0, 0}, {0, 0, -0.5}};
  spec.node_masses = {0.0, mass};
  spec.pinned = {0};
  spec.springs = {{0, 1, stiffness, 0.5, 0.0}};
  spec.initial_velocities = {{0, 0, 0}, {0, 0, 0.2}};
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState state = built.state, next;
  // Upward zero crossings of the displacement z + 0.5, linearly interpolated.
  std::vector<double> crossings;
  double previous = 0.0;
  for (int step = 1; step <= 2500; ++step) {
    const SoftStepStatus status = soft_step(built.model, built.params, state, {}, next, workspace);
    ASSERT_TRUE(status.converged) << status.message;
    std::swap(state, next);
    const double displacement = state.positions[5] + 0.5;
    if (previous < 0.0 && displacement >= 0.0)
      crossings.push_back((step - 1 + previous / (previous - displacement)) * h);
    previous = displacement;
  }
  ASSERT_GE(crossings.size(), 3u);
  const double measured = (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
  const double omega = std::sqrt(stiffness / mass);
  // Implicit Euler turns each step by atan(ωh) instead of ωh: the period is 2πh/atan(ωh).
  EXPECT_NEAR(measured, 2 * std::numbers::pi * h / std::atan(omega * h), 2e-4);
  EXPECT_NEAR(measured, 2 * std::numbers::pi / omega, 2e-3 * 2 * std::numbers::pi / omega);
}

TEST(SoftPhysics, NewtonDecreasesTheObjectiveMonotonically) {
  SoftSpec spec;
  spec.dt = 0.02;
  spec.tet_materials = {{"rubber", ElasticModel::NeoHookean, 1e5, 0.4, 1000.0},
                        {"foam", ElasticModel::Corotated, 5e4, 0.3, 200.0}};
  add_tet_box(spec, {0, 0, 0.1}, {0.3, 0.1, 0.1}, {3, 1, 1}, 0);
  add_tet_box(spec, {0.5, 0, 0.1}, {0.2, 0.2, 0.1}, {2, 2, 1}, 1);
  spec.obstacles = {{"ground", ObstacleType::Plane, {0, 0, 0}, {0, 0, 1}, 0.0, 0.4}};
  spec.initial_velocities.resize(spec.nodes.size());
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    spec.initial_velocities[i] = {3.0 * std::sin(3.0 * static_cast<double>(i)), 2.0 * std::cos(static_cast<double>(i)), -4.0};
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState state = built.state, next;
  int total_iterations = 0;
  for (int step = 0; step < 15; ++step) {
    std::vector<double> history;
    SoftStepOptions options;
    options.objective_history = &history;
    const SoftStepStatus status = soft_step(built.model, built.params, state, {}, next, workspace, options);
    ASSERT_TRUE(status.converged) << "step " << step << ": " << status.message;
    ASSERT_GE(history.size(), 2u);
    for (std::size_t k = 1; k < history.size(); ++k)
      EXPECT_LE(history[k], history[k - 1] + 1e-12 * std::abs(history[k - 1])) << "step " << step << " iteration " << k;
    total_iterations += status.iterations;
    std::swap(state, next);
  }
  EXPECT_GT(total_iterations, 2 * 15);  // the test exercised real multi-iteration solves
  for (int i = 0; i < built.model.node_count; ++i) EXPECT_GT(state.positions[static_cast<std::size_t>(3 * i + 2)], 0.0);
}

TEST(SoftPhysics, FreeBodyConservesLinearMomentum) {
  SoftSpec spec;
  spec.gravity = {0, 0, 0};
  // With strain-rate damping: it dissipates internal motion but must not touch momentum.
  spec.tet_materials = {{"rubber", ElasticModel::NeoHookean, 5e4, 0.3, 900.0, 20.0}};
  add_tet_box(spec, {0, 0, 0}, {0.2, 0.1, 0.1}, {2, 1, 1}, 0);
  spec.springs = {{0, static_cast<int>(spec.nodes.size()) - 1, 200.0, -1.0, 3.0}};
  spec.initial_velocities.resize(spec.nodes.size());
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    spec.initial_velocities[i] = {std::sin(1.7 * static_cast<double>(i)), std::cos(2.3 * static_cast<double>(i)), 0.5 * std::sin(static_cast<double>(i))};
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  const Vector3 initial = soft_momentum(built.model, built.params, built.state);
  SoftState state = built.state, next;
  for (int step = 0; step < 40; ++step) {
    ASSERT_TRUE(soft_step(built.model, built.params, state, {}, next, workspace).converged);
    std::swap(state, next);
  }
  const Vector3 final_momentum = soft_momentum(built.model, built.params, state);
  for (int r = 0; r < 3; ++r) EXPECT_NEAR(final_momentum[static_cast<std::size_t>(r)], initial[static_cast<std::size_t>(r)], 1e-9);
  // Internal forces moved the nodes relative to each other (the test is not a rigid drift).
  const SoftEnergies energies = soft_energies(built.model, built.params, state);
  EXPECT_GT(energies.elastic, 1e-6);
}

TEST(SoftPhysics, ClothDrapedOverSphereStaysOutside) {
  SoftSpec spec;
  spec.dt = 0.01;
  spec.cloth_materials = {{"cotton", 200.0, 0.3, 1e-4, 0.2}};
  const double radius = 0.2;
  add_cloth_rectangle(spec, {-0.3, -0.3, 0.25}, {0.6, 0, 0}, {0, 0.6, 0}, 10, 10, 0);
  spec.obstacles = {{"ball", ObstacleType::Sphere, {0, 0, 0}, {0, 0, 1}, radius, 0.3},
                    {"ground", ObstacleType::Plane, {0, 0, -0.3}, {0, 0, 1}, 0.0, 0.3}};
  spec.contact.barrier_distance = 2e-3;
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState state = built.state, next;
  for (int step = 0; step < 60; ++step) {
    const SoftStepStatus status = soft_step(built.model, built.params, state, {}, next, workspace);
    ASSERT_TRUE(status.converged) << "step " << step << ": " << status.message;
    std::swap(state, next);
  }
  double closest = 1e9;
  for (int i = 0; i < built.model.node_count; ++i) {
    const double* p = state.positions.data() + 3 * i;
    closest = std::min(closest, std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) - radius);
  }
  EXPECT_GT(closest, 0.0);                                    // never inside the sphere
  EXPECT_LT(closest, built.model.contact.barrier_distance);   // and actually resting on it
  // The centre node sits on top of the sphere; the corners have fallen below its top.
  const int centre = 5 + 11 * 5;
  EXPECT_NEAR(state.positions[static_cast<std::size_t>(3 * centre + 2)], radius, 2e-3);
  EXPECT_LT(state.positions[2], radius - 0.05);
}

TEST(SoftPhysics, AdamReachesTheNewtonMinimiser) {
  SoftSpec spec = testing::spring_chain_spec();
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState newton_state, adam_state;
  const SoftStepStatus newton = soft_step(built.model, built.params, built.state, {}, newton_state, workspace);
  SoftStepOptions options;
  options.solver = SoftSolver::Adam;
  options.adam.learning_rate = 1e-4;
  options.adam.tolerance = 1e-7;
  options.adam.max_iterations = 200000;
  const SoftStepStatus adam = soft_step(built.model, built.params, built.state, {}, adam_state, workspace, options);
  ASSERT_TRUE(newton.converged);
  ASSERT_TRUE(adam.converged) << adam.message << " residual " << adam.residual;
  EXPECT_GT(adam.iterations, 10 * newton.iterations);
  for (std::size_t k = 0; k < newton_state.positions.size(); ++k)
    EXPECT_NEAR(adam_state.positions[k], newton_state.positions[k], 1e-6);
}

TEST(SoftPhysics, NonConvergenceIsReportedNotSilent) {
  SoftSpec spec = testing::tet_pair_spec();
  spec.newton.max_iterations = 1;
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState next;
  const SoftStepStatus status = soft_step(built.model, built.params, built.state, {}, next, workspace);
  EXPECT_FALSE(status.converged);
  EXPECT_NE(status.message.find("1 Newton iterations"), std::string::npos) << status.message;
  EXPECT_GT(status.residual, 0.0);
}

// State health (docs/robustness.md): a node thrown faster than max_speed makes the step
// unhealthy and not converged, naming the first such free node and its speed; raising the
// bound accepts the same step; a bound that is not positive is refused.
TEST(SoftPhysics, ANodeFasterThanMaxSpeedIsReportedWithTheNodeAndTheSpeed) {
  SoftSpec spec = testing::spring_chain_spec();
  spec.initial_velocities = {{0, 0, 0}, {0, 0, 0}, {1500, 0, 0}};
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState next;
  const SoftStepStatus status = soft_step(built.model, built.params, built.state, {}, next, workspace);
  EXPECT_FALSE(status.converged);
  EXPECT_EQ(status.health, SoftStepStatus::Health::TooFast);
  EXPECT_EQ(status.health_node, 2);
  const double speed = std::sqrt(next.velocities[6] * next.velocities[6] + next.velocities[7] * next.velocities[7] +
                                 next.velocities[8] * next.velocities[8]);
  EXPECT_GT(speed, 1000.0);
  EXPECT_DOUBLE_EQ(status.health_value, speed);
  EXPECT_NE(status.message.find("node 2: speed"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("above max_speed 1000 m/s"), std::string::npos) << status.message;

  spec.max_speed = 5000.0;
  SoftBuild faster = build_soft(spec);
  SoftWorkspace faster_workspace(faster.model);
  const SoftStepStatus allowed = soft_step(faster.model, faster.params, faster.state, {}, next, faster_workspace);
  EXPECT_TRUE(allowed.converged) << allowed.message;
  EXPECT_EQ(allowed.health, SoftStepStatus::Health::Ok);
  EXPECT_EQ(allowed.health_node, -1);

  spec.max_speed = 0.0;
  EXPECT_EQ(diffphys::testing::error_of([&] { build_soft(spec); }), "soft model 'spring_chain': max_speed must be positive and finite, got 0");
}

}  // namespace
}  // namespace diffphys::soft
