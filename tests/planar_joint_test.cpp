// tests/planar_joint_test.cpp — the planar joint (JointType::Planar, rigid/joints.hpp) against
// closed forms: a projectile in a tilted plane at random orientations, a frictionless incline
// inside the plane, an angle motor's I ω̇ = τ, energy and momentum of a free planar body; the
// body stays in its plane (out-of-plane offset and tilt at rounding level). Both formulations,
// and the convex formulation's flexible joint (a spring's static deflection).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <string>

#include "diffphys/error.hpp"
#include "test_scenes.hpp"

namespace diffphys::planar_joint_test {
namespace {

using testing::box_body;
using testing::run;

Vec3 random_direction(std::mt19937& random) {
  std::normal_distribution<double> normal;
  return normalized(Vec3{normal(random), normal(random), normal(random)});
}

const char* name_of(Formulation formulation) {
  return formulation == Formulation::Convex ? "convex" : "complementarity";
}

// World-frame in-plane directions and normal of joint 0 (parent: the world).
struct PlaneFrame {
  Vec3 normal, first, second;
};
PlaneFrame plane_of(const Model& model) {
  const Joint& joint = model.joints[0];
  return {joint.axis_parent, joint.axis2_parent, joint.axis3_parent};
}

// How far the child has left its plane: the anchor's offset along the normal and the angle
// between the child's copy of the axis and the parent's.
struct OutOfPlane {
  double offset = 0.0, tilt = 0.0;
};
OutOfPlane out_of_plane(const Model& model, const State& state, const State& initial) {
  const Joint& joint = model.joints[0];
  const auto b = static_cast<std::size_t>(joint.child);
  const Vec3 anchor = state.position[b] + state.orientation[b].rotate(joint.anchor_child);
  const Vec3 anchor0 = initial.position[b] + initial.orientation[b].rotate(joint.anchor_child);
  const Vec3 child_axis = state.orientation[b].rotate(joint.axis_child);
  return {std::abs(dot(anchor - anchor0, joint.axis_parent)), norm(cross(child_axis, joint.axis_parent))};
}

// A box (random orientation) on a planar joint to the world through its centre of mass, the
// plane's normal `normal` and first in-plane direction ⟂ it; in-plane velocity and a spin.
Scene planar_box(Formulation formulation, const Vec3& normal, const Vec3& first, const Vec3& velocity, double spin,
                 std::mt19937& random, Vec3 gravity = {0, 0, -9.81}) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.gravity = gravity;
  builder.solver.formulation = formulation;
  BodySpec box = box_body("box", {0.3, -0.2, 2.0}, {0.3, 0.2, 0.1}, 1.7);
  box.orientation = Quat::from_axis_angle(random_direction(random), 1.1);
  box.linear_velocity = velocity;
  box.angular_velocity = normal * spin;
  builder.add_body(box);
  JointSpec joint = testing::joint_spec("plane", JointType::Planar, "world", "box", box.position, normal);
  joint.axis2 = first;
  builder.add_joint(joint);
  return builder.build();
}

// Free flight inside a plane of any orientation: the centre of mass follows semi-implicit
// Euler's closed form under the in-plane part of gravity, p_N = p0 + v0 t + ½ g_p t (t + h),
// the angle turns at the initial spin, and the normal and tilt stay at rounding level. The
// plane's gravity component is held by the joint.
TEST(PlanarJoint, ProjectileInARandomPlaneMatchesTheClosedForm) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    std::mt19937 random(11);
    for (int trial = 0; trial < 5; ++trial) {
      const Vec3 normal = random_direction(random);
      const Vec3 first = normalized(cross(normal, random_direction(random)));
      const Vec3 second = cross(normal, first);
      const Vec3 velocity = first * 1.5 - second * 0.8;
      const double spin = 2.0;
      const Scene scene = planar_box(formulation, normal, first, velocity, spin, random);
      const PlaneFrame frame = plane_of(scene.model);
      const Vec3 gravity{0, 0, -9.81};
      const Vec3 in_plane_gravity = gravity - normal * dot(normal, gravity);
      const int steps = 1000;
      const double h = scene.model.dt, t = steps * h;
      State final_state;
      double worst_offset = 0.0, worst_tilt = 0.0;
      run(scene, steps, [&](const State& state, const StepStatus& status) {
        EXPECT_TRUE(status.converged);
        const OutOfPlane out = out_of_plane(scene.model, state, scene.state);
        worst_offset = std::max(worst_offset, out.offset);
        worst_tilt = std::max(worst_tilt, out.tilt);
        final_state = state;
      });
      const std::string label = std::string(name_of(formulation)) + " trial " + std::to_string(trial);
      const Vec3 expected = scene.state.position[1] + velocity * t + in_plane_gravity * (0.5 * t * (t + h));
      const Vec3 moved = expected - scene.state.position[1];
      EXPECT_LT(norm(final_state.position[1] - expected), 1e-9) << label;
      EXPECT_LT(norm(final_state.linear_velocity[1] - (velocity + in_plane_gravity * t)), 1e-9) << label;
      EXPECT_NEAR(joint_position(scene.model, final_state, 0, 0), dot(moved, frame.first), 1e-9) << label;
      EXPECT_NEAR(joint_position(scene.model, final_state, 0, 1), dot(moved, frame.second), 1e-9) << label;
      EXPECT_NEAR(joint_position(scene.model, final_state, 0, 2), spin * t, 1e-9) << label;
      EXPECT_NEAR(joint_velocity(scene.model, final_state, 0, 2), spin, 1e-9) << label;
      EXPECT_LT(worst_offset, 1e-12) << label;
      EXPECT_LT(worst_tilt, 1e-12) << label;
    }
  }
}

// A box on a frictionless incline inside a vertical plane (normal y; the slope tilted about
// y by α): from rest it covers g sin α h² N(N+1)/2 along the slope in N steps, and stays in
// the plane while the contact pushes it.
TEST(PlanarJoint, SlidesDownAFrictionlessInclineInItsPlaneAtGSinAlpha) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    const double alpha = 0.4, g = 9.81;
    ModelBuilder builder;
    builder.dt = 1e-3;
    builder.solver.formulation = formulation;
    const Vec3 slope_normal{std::sin(alpha), 0, std::cos(alpha)};
    builder.add_ground_plane(slope_normal, 0.0);
    builder.world_friction = 0.0;
    BodySpec box = box_body("box", slope_normal * 0.05, {0.1, 0.15, 0.05}, 2.0);
    box.orientation = Quat::from_axis_angle({0, 1, 0}, alpha);
    box.friction = 0.0;
    builder.add_body(box);
    JointSpec joint = testing::joint_spec("plane", JointType::Planar, "world", "box", box.position, {0, 1, 0});
    joint.axis2 = {1, 0, 0};
    joint.collide_connected = true;  // its parent is the world, whose shape the slope is
    builder.add_joint(joint);
    const Scene scene = builder.build();
    const int steps = 1000;
    State final_state;
    double worst_offset = 0.0, worst_tilt = 0.0;
    run(scene, steps, [&](const State& state, const StepStatus&) {
      const OutOfPlane out = out_of_plane(scene.model, state, scene.state);
      worst_offset = std::max(worst_offset, out.offset);
      worst_tilt = std::max(worst_tilt, out.tilt);
      final_state = state;
    });
    const Vec3 downhill{std::cos(alpha), 0, -std::sin(alpha)};
    const double h = scene.model.dt;
    const double expected = g * std::sin(alpha) * h * h * steps * (steps + 1) / 2.0;
    const double travelled = dot(final_state.position[1] - scene.state.position[1], downhill);
    EXPECT_NEAR(travelled, expected, 1e-3 * expected) << name_of(formulation);
    EXPECT_LT(worst_offset, 1e-12) << name_of(formulation);
    EXPECT_LT(worst_tilt, 1e-12) << name_of(formulation);
    // The slope holds it: no motion along its normal beyond the contact's settling.
    EXPECT_LT(std::abs(dot(final_state.position[1] - scene.state.position[1], slope_normal)), 1e-4)
        << name_of(formulation);
  }
}

// A motor on the angle (dof 2) of a box with a random plane and orientation, no gravity:
// I_n ω̇ = τ with I_n = n·I n the inertia about the axis through the centre of mass, so
// ω_N = τ t / I_n and θ_N = ½ (τ/I_n) t (t + h); motors on dofs 0 and 1 push the centre of
// mass along the in-plane directions with F/m.
TEST(PlanarJoint, MotorsGiveTheClosedFormAccelerationsOnEachDof) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    std::mt19937 random(5);
    for (int trial = 0; trial < 3; ++trial) {
      const Vec3 normal = random_direction(random);
      const Vec3 first = normalized(cross(normal, random_direction(random)));
      ModelBuilder builder;
      builder.dt = 1e-3;
      builder.gravity = {0, 0, 0};
      builder.solver.formulation = formulation;
      BodySpec box = box_body("box", {0, 0, 1}, {0.3, 0.2, 0.1}, 1.7);
      box.orientation = Quat::from_axis_angle(random_direction(random), 0.9);
      builder.add_body(box);
      JointSpec joint = testing::joint_spec("plane", JointType::Planar, "world", "box", box.position, normal);
      joint.axis2 = first;
      builder.add_joint(joint);
      const double forces[3] = {0.7, -0.4, 0.3};  // N, N, N·m
      for (int dof = 0; dof < 3; ++dof) {
        ActuatorSpec motor = testing::motor_spec("motor" + std::to_string(dof), "plane", forces[dof]);
        motor.dof = dof;
        builder.add_actuator(motor);
      }
      const Scene scene = builder.build();
      // The box's inertia about the normal: principal moments of a box, in its turned frame.
      const Vec3 half{0.3, 0.2, 0.1};
      const double mass = 1.7;
      const Vec3 moments{mass * (half.y * half.y + half.z * half.z) / 3.0,
                         mass * (half.x * half.x + half.z * half.z) / 3.0,
                         mass * (half.x * half.x + half.y * half.y) / 3.0};
      const Vec3 local = box.orientation.inverse_rotate(normal);
      const double axial_inertia =
          moments.x * local.x * local.x + moments.y * local.y * local.y + moments.z * local.z * local.z;
      const int steps = 500;
      const double h = scene.model.dt, t = steps * h;
      State final_state;
      run(scene, steps, [&](const State& state, const StepStatus&) { final_state = state; });
      const std::string label = std::string(name_of(formulation)) + " trial " + std::to_string(trial);
      const double angular_acceleration = forces[2] / axial_inertia;
      // The joint projection moves velocities by O(h²) relative per step (as Motor's test in
      // rigid_physics_test.cpp): 1e-6 relative.
      EXPECT_NEAR(joint_velocity(scene.model, final_state, 0, 2), angular_acceleration * t,
                  1e-6 * angular_acceleration * t)
          << label;
      EXPECT_NEAR(joint_position(scene.model, final_state, 0, 2), 0.5 * angular_acceleration * t * (t + h), 1e-8)
          << label;
      for (int dof = 0; dof < 2; ++dof) {
        const double acceleration = forces[dof] / mass;
        EXPECT_NEAR(joint_velocity(scene.model, final_state, 0, dof), acceleration * t, 1e-9)
            << label << " dof " << dof;
        EXPECT_NEAR(joint_position(scene.model, final_state, 0, dof), 0.5 * acceleration * t * (t + h), 1e-9)
            << label << " dof " << dof;
      }
    }
  }
}

// A free planar body without gravity, its anchor off the centre of mass and its spin axis not
// a principal one (the joint supplies the gyroscopic torque): kinetic energy, the in-plane
// momentum and the angular momentum about the normal stay constant over 2,000 steps.
TEST(PlanarJoint, FreePlanarBodyConservesEnergyAndInPlaneMomenta) {
  for (const Formulation formulation : {Formulation::Complementarity, Formulation::Convex}) {
    std::mt19937 random(3);
    const Vec3 normal = random_direction(random);
    const Vec3 first = normalized(cross(normal, random_direction(random)));
    ModelBuilder builder;
    builder.dt = 1e-3;
    builder.gravity = {0, 0, 0};
    builder.solver.formulation = formulation;
    BodySpec box = box_body("box", {0, 0, 1}, {0.3, 0.2, 0.1}, 1.7);
    box.orientation = Quat::from_axis_angle(random_direction(random), 0.9);
    box.linear_velocity = first * 0.6 + cross(normal, first) * 0.3;
    box.angular_velocity = normal * 3.0;
    builder.add_body(box);
    JointSpec joint =
        testing::joint_spec("plane", JointType::Planar, "world", "box", box.position + first * 0.2, normal);
    joint.axis2 = first;
    builder.add_joint(joint);
    const Scene scene = builder.build();
    const double mass = 1.7;
    const Vec3 half{0.3, 0.2, 0.1};
    const Vec3 moments{mass * (half.y * half.y + half.z * half.z) / 3.0,
                       mass * (half.x * half.x + half.z * half.z) / 3.0,
                       mass * (half.x * half.x + half.y * half.y) / 3.0};
    const auto inertia_times = [&](const State& state, const Vec3& omega) {
      const Vec3 local = state.orientation[1].inverse_rotate(omega);
      return state.orientation[1].rotate({moments.x * local.x, moments.y * local.y, moments.z * local.z});
    };
    const auto energy = [&](const State& state) {
      return 0.5 * mass * squared_norm(state.linear_velocity[1]) +
             0.5 * dot(state.angular_velocity[1], inertia_times(state, state.angular_velocity[1]));
    };
    const auto axial_momentum = [&](const State& state) {  // about the world origin, along n
      return dot(normal, inertia_times(state, state.angular_velocity[1]) +
                             cross(state.position[1], state.linear_velocity[1]) * mass);
    };
    const double energy0 = energy(scene.state), axial0 = axial_momentum(scene.state);
    const Vec3 momentum0 = scene.state.linear_velocity[1] * mass;
    double worst_energy = 0.0, worst_axial = 0.0, worst_momentum = 0.0, worst_offset = 0.0, worst_tilt = 0.0;
    run(scene, 2000, [&](const State& state, const StepStatus&) {
      worst_energy = std::max(worst_energy, std::abs(energy(state) - energy0) / energy0);
      worst_axial = std::max(worst_axial, std::abs(axial_momentum(state) - axial0) / std::abs(axial0));
      worst_momentum = std::max(worst_momentum, norm(state.linear_velocity[1] * mass - momentum0) / norm(momentum0));
      const OutOfPlane out = out_of_plane(scene.model, state, scene.state);
      worst_offset = std::max(worst_offset, out.offset);
      worst_tilt = std::max(worst_tilt, out.tilt);
    });
    EXPECT_LT(worst_energy, 1e-9) << name_of(formulation);
    EXPECT_LT(worst_axial, 1e-9) << name_of(formulation);
    EXPECT_LT(worst_momentum, 1e-9) << name_of(formulation);
    EXPECT_LT(worst_offset, 1e-12) << name_of(formulation);
    EXPECT_LT(worst_tilt, 1e-12) << name_of(formulation);
  }
}

// A flexible planar joint (convex, time constant 0.05 s ≥ h) carrying a box in a horizontal
// plane sags along the normal by the spring's static deflection g/ω², ω = 1/(ζτ), as a
// flexible weld does (joint_projection_test.cpp): the normal row is a spring, not projected,
// and its reported error is the deflection; the in-plane coordinates do not move.
TEST(PlanarJoint, FlexiblePlanarJointSagsByTheSpringsStaticDeflection) {
  const double time_constant = 0.05, damping_ratio = 1.0;
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.solver.formulation = Formulation::Convex;
  builder.compliance[static_cast<int>(RowClass::Joint)] = {time_constant, damping_ratio};
  BodySpec box = box_body("box", {0, 0, 1}, {0.2, 0.1, 0.05}, 2.0);
  box.shapes[0].collision_mask = 0;
  builder.add_body(box);
  JointSpec joint = testing::joint_spec("plane", JointType::Planar, "world", "box", box.position, {0, 0, 1});
  joint.axis2 = {1, 0, 0};
  builder.add_joint(joint);
  const Scene scene = builder.build();
  StepStatus last;
  State final_state;
  run(scene, 3000, [&](const State& state, const StepStatus& status) {
    final_state = state;
    last = status;
  });
  const double omega = 1.0 / (damping_ratio * time_constant);
  EXPECT_NEAR(final_state.position[1].z - 1.0, -9.81 / (omega * omega), 1e-9);
  EXPECT_NEAR(last.joint_error, 9.81 / (omega * omega), 1e-9);
  EXPECT_NEAR(joint_position(scene.model, final_state, 0, 0), 0.0, 1e-12);
  EXPECT_NEAR(joint_position(scene.model, final_state, 0, 1), 0.0, 1e-12);
  EXPECT_NEAR(joint_position(scene.model, final_state, 0, 2), 0.0, 1e-12);
}

// Bad planar input is refused naming the joint and the value.
TEST(PlanarJoint, BadInputIsRefusedNamingTheJointAndTheValue) {
  const auto build_with = [](const std::function<void(JointSpec&)>& change) {
    return testing::error_of([&] {
      ModelBuilder builder;
      builder.add_body(box_body("box", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0));
      JointSpec joint = testing::joint_spec("plane", JointType::Planar, "world", "box", {0, 0, 1}, {0, 1, 0});
      joint.axis2 = {1, 0, 0};
      change(joint);
      builder.add_joint(joint);
      builder.build();
    });
  };
  EXPECT_EQ(build_with([](JointSpec&) {}), "");
  EXPECT_NE(build_with([](JointSpec& j) {
              j.axis2 = {1, 1, 0};
            }).find("joint 'plane': axis2 of a planar joint must lie in its plane"),
            std::string::npos);
  EXPECT_NE(build_with([](JointSpec& j) {
              j.axis3 = {1, 0, 1};
            }).find("joint 'plane': axis3 of a planar joint must be perpendicular"),
            std::string::npos);
  EXPECT_NE(build_with([](JointSpec& j) {
              j.lower_limit = -1;
              j.upper_limit = 1;
            }).find("joint 'plane': limits apply to revolute, prismatic and universal joints only, not planar"),
            std::string::npos);
  EXPECT_NE(build_with([](JointSpec& j) {
              j.type = JointType::Revolute;
              j.axis3 = Vec3{1, 0, 0};
            }).find("joint 'plane': axis3 applies to planar joints only"),
            std::string::npos);
}

}  // namespace
}  // namespace diffphys::planar_joint_test
