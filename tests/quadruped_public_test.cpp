// tests/quadruped_public_test.cpp — the quadruped of Degrave et al. 2019 as their public code
// builds it (`diffphys experiment quadruped`, src/experiments/quadruped_public_model.cpp): the
// robot file's masses and joints, the repository's soft rows mapped onto the convex
// formulation (a resting foot's deflection is the repository spring's closed form, the servo's
// gain its m ω²), the robot standing under the zero policy, the clip target map, and the
// episode's weight gradient against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"
#include "experiments/quadruped_public_model.hpp"
#include "quadruped_test_support.hpp"
#include "rigid/compliance.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kRepositoryStep = 0.005;                       // s
constexpr double kRepositoryOmega = 2 * std::numbers::pi * 2.0;  // the rows' 2 Hz, rad/s

double total_mass(const Scene& scene) {
  double mass = 0.0;
  for (int b = 0; b < scene.model.body_count(); ++b)
    if (scene.model.bodies[static_cast<std::size_t>(b)].type == BodyType::Dynamic)
      mass += scene.params.at(scene.model.layout.body_mass[static_cast<std::size_t>(b)]);
  return mass;
}

TEST(PublicQuadruped, BodiesJointsAndServosOfTheRobotFile) {
  const QuadrupedModel robot = build_public_quadruped();
  const Scene& scene = robot.scene;
  // spine 0.7 × 0.3 × 0.1 m, 4 femurs 0.05 × 0.05 × 0.2, 4 tibias × 0.15, 8 spheres r = 0.05,
  // all 1000 kg/m³: 21 + 2 + 1.5 + 8 · 0.5236 = 28.69 kg (the paper: 28.7).
  EXPECT_NEAR(total_mass(scene), 21.0 + 2.0 + 1.5 + 8 * 4.0 / 3.0 * std::numbers::pi * 0.125, 1e-12);
  EXPECT_NEAR(total_mass(scene), 28.7, 0.02);
  EXPECT_EQ(scene.model.body_count(), 18);   // the world and 17 bodies
  EXPECT_EQ(scene.model.joint_count(), 16);  // 8 hinges, 8 welds (feet, belly spheres)
  ASSERT_EQ(scene.model.actuator_count(), 8);
  for (int a = 0; a < 8; ++a) {
    const Actuator& servo = scene.model.actuators[static_cast<std::size_t>(a)];
    EXPECT_EQ(servo.type, ActuatorType::Servo);
    EXPECT_EQ(servo.name.ends_with(a < 4 ? "_hip" : "_knee"), true) << servo.name;
    EXPECT_DOUBLE_EQ(scene.params.at(scene.model.layout.actuator_max_torque[static_cast<std::size_t>(a)]), 4.0);
  }
  EXPECT_EQ(robot.target_map, ServoTargetMap::Clip);
  EXPECT_DOUBLE_EQ(robot.target_limit, std::numbers::pi / 4);
  // The repository's spheres turn with 0.4 m (kg·m²); the solid sphere's 0.4 m r².
  const int foot = scene.model.body_index("front_left_foot");
  const double foot_mass = scene.params.at(scene.model.layout.body_mass[static_cast<std::size_t>(foot)]);
  EXPECT_NEAR(scene.params.at(scene.model.layout.body_inertia[static_cast<std::size_t>(foot)]), 0.4 * foot_mass,
              1e-12);
  PublicQuadrupedDesign solid;
  solid.repository_sphere_inertia = false;
  const Scene solid_scene = build_public_quadruped(solid).scene;
  EXPECT_NEAR(solid_scene.params.at(solid_scene.model.layout.body_inertia[static_cast<std::size_t>(foot)]),
              0.4 * foot_mass * 0.05 * 0.05, 1e-12);
}

// The repository's row is a spring k = m ω² and damper per unit impulse (CFM, ERP): at rest a
// sphere on the ground sinks by F h/(m ω²) = g h/ω² (0.31 mm). The mapped compliance gives the
// same rest in the convex formulation, at the repository's step and at half of it (our robot is
// one continuous spring; the repository's depends on its step).
TEST(PublicQuadruped, RestingFootSinksAsTheRepositorysSpring) {
  for (const double dt : {kRepositoryStep, kRepositoryStep / 2}) {
    ModelBuilder builder;
    builder.dt = dt;
    builder.solver.formulation = Formulation::Convex;
    builder.compliance[static_cast<int>(RowClass::Contact)] =
        repository_row_compliance(2.0, 0.01, kRepositoryStep);
    builder.add_ground_plane();
    BodySpec foot;
    foot.name = "foot";
    foot.position = {0, 0, 0.05};
    ShapeSpec sphere;
    sphere.type = ShapeType::Sphere;
    sphere.radius = 0.05;
    foot.shapes.push_back(sphere);
    builder.add_body(foot);
    const Scene scene = builder.build();
    Simulator simulator(scene.model, scene.params, scene.state);
    for (int t = 0; t < static_cast<int>(std::lround(2.0 / dt)); ++t) simulator.step();
    const double sink = 9.81 * kRepositoryStep / (kRepositoryOmega * kRepositoryOmega);
    EXPECT_NEAR(simulator.state().position[static_cast<std::size_t>(scene.model.body_index("foot"))].z, 0.05 - sink,
                1e-9)
        << "dt " << dt;
  }
}

// The repository's servo row (ζ = 0): torque m ω² (v_target − v⁺) at any step. Ours:
// m (v_target − v⁺)/(h κ), κ the row's softness (rigid/compliance.hpp).
TEST(PublicQuadruped, ServoGainIsTheRepositorys) {
  const auto compliance = repository_servo_compliance(2.0, kRepositoryStep);
  for (const double dt : {kRepositoryStep, kRepositoryStep / 2}) {
    const double kappa = rigid::softness(dt, {compliance.time_constant, compliance.damping_ratio}).value;
    EXPECT_NEAR(1.0 / (dt * kappa), kRepositoryOmega * kRepositoryOmega,
                (dt == kRepositoryStep ? 1e-9 : 3e-3) * kRepositoryOmega * kRepositoryOmega)
        << "dt " << dt;
  }
}

TEST(PublicQuadruped, StandsUnderTheZeroPolicy) {
  const QuadrupedModel robot = build_public_quadruped();
  const int steps = 600;
  const QuadrupedEpisode episode =
      run_quadruped_open_loop(robot, std::vector<double>(static_cast<std::size_t>(steps) * 8, 0.0), steps);
  EXPECT_TRUE(episode.finite);
  EXPECT_LT(std::abs(episode.distance), 1e-3);
  // Up on its legs (0.4 m at the start), sagging by its flexible joints and contacts.
  EXPECT_GT(episode.lowest_torso_height, 0.34);
  EXPECT_LT(episode.final_torso_height, 0.39);
  EXPECT_EQ(episode.unconverged_steps, 0);
}

TEST(PublicQuadruped, TargetsAreTheNetworksOutputsClippedTo45Degrees) {
  const QuadrupedModel robot = build_public_quadruped();
  MlpSpec spec = quadruped_network_spec();
  spec.output_init_scale = 5.0;
  const Mlp network(spec, 3);
  const int steps = 500;
  const std::vector<double> targets = quadruped_servo_targets(robot, network, network.weights(), steps, 0.005);
  int clipped = 0, inside = 0;
  for (const double y : targets) {
    EXPECT_LE(std::abs(y), std::numbers::pi / 4 + 1e-15);
    (std::abs(y) == std::numbers::pi / 4 ? clipped : inside)++;
  }
  EXPECT_GT(clipped, 100);
  EXPECT_GT(inside, 100);
}

// Through contacts, flexible joints, servos and the clip, 40 steps of a network with outputs
// partly clipped: dL/dW against central differences.
TEST(PublicQuadruped, EpisodeWeightGradientMatchesCentralDifferences) {
  testing::expect_episode_weight_gradient_matches_central_differences(build_public_quadruped());
}

}  // namespace
}  // namespace diffphys::experiments
