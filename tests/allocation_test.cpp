// tests/allocation_test.cpp — the step allocates nothing once its buffers have grown.
// Counts calls of the global operator new while stepping a scene with joints (a planar one), servos,
// soft equalities (convex), contacts and friction (both solvers of the complementarity formulation and the convex
// formulation's Newton), convex mesh bodies included, and a fast ball whose contacts are
// found speculatively (collision/detect_contacts.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>

#include "camera_test_scenes.hpp"
#include "collision/detect_contacts.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/world_simulator.hpp"
#include "experiments/chain_problem.hpp"
#include "test_paths.hpp"
#include "test_scenes.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

[[gnu::noinline]] void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* pointer = std::malloc(size == 0 ? 1 : size)) return pointer;
  throw std::bad_alloc();
}
// Not inlined: once inlined into a caller, GCC's -Wmismatched-new-delete sees malloc/free meet
// operator new/delete (a false positive: this replacement pair is malloc/free throughout).
[[gnu::noinline]] void operator delete(void* pointer) noexcept { std::free(pointer); }
[[gnu::noinline]] void operator delete(void* pointer, std::size_t) noexcept { std::free(pointer); }
// The nothrow pair too (std::stable_sort's temporary buffer): libstdc++'s own forwards to the
// operator new above, but AddressSanitizer's runtime defines its own, whose blocks then reached
// the operator delete above, free(): "alloc-dealloc-mismatch (operator new vs free)" in every
// test of this executable that stable-sorts (make sanitize).
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
[[gnu::noinline]] void operator delete(void* pointer, const std::nothrow_t&) noexcept { std::free(pointer); }

namespace diffphys {
namespace soft::testing {
int run_soft_steps_for_allocation_count(int scene, void (*start)(), void (*stop)());  // soft_physics_test.cpp
}  // namespace soft::testing
namespace fluid::testing {
int run_fluid_steps_for_allocation_count(void (*start)(), void (*stop)());  // fluid_physics_test.cpp
}  // namespace fluid::testing
namespace camera::testing {
int run_world_camera_frames_for_allocation_count(void (*start)(), void (*stop)());  // camera_world_test.cpp
}  // namespace camera::testing
namespace {

TEST(Step, AllocatesNothingAfterWarmUp) {
  const struct {
    SolverType solver;
    Formulation formulation;
    const char* name;
  } configurations[] = {{SolverType::InteriorPoint, Formulation::Complementarity, "interior point"},
                        {SolverType::ProjectedGaussSeidel, Formulation::Complementarity, "PGS"},
                        {SolverType::InteriorPoint, Formulation::Convex, "convex Newton"}};
  for (const auto& [solver, formulation, name] : configurations) {
    ModelBuilder builder = testing::hinge_chain(3, 0.3, 0.5, 0.6);
    builder.solver.type = solver;
    builder.solver.formulation = formulation;
    builder.add_ground_plane({0, 0, 1}, -2.0);
    for (int i = 0; i < 4; ++i) {
      BodySpec body = testing::box_body("box" + std::to_string(i), {0.5 * i, 1.0, -1.9 + 0.1 * i}, {0.1, 0.1, 0.1}, 1.0);
      body.linear_velocity = {0.2, 0, 0};
      builder.add_body(body);
    }
    // Convex mesh bodies (a hull of 12 points) land on the ground and on each other.
    std::vector<Vec3> points;
    for (int k = 0; k < 12; ++k)
      points.push_back({0.1 * std::cos(0.7 * k), 0.1 * std::sin(1.3 * k), 0.08 * std::cos(2.1 * k + 0.5)});
    const auto hull = std::make_shared<const ConvexMesh>(convex_hull(points, "rock"));
    for (int i = 0; i < 2; ++i) {
      BodySpec rock;
      rock.name = "rock" + std::to_string(i);
      rock.position = {-0.6, 1.0, -1.9 + 0.2 * i};
      ShapeSpec shape;
      shape.type = ShapeType::ConvexMesh;
      shape.mesh = hull;
      rock.shapes.push_back(shape);
      builder.add_body(rock);
    }
    // A box on a planar joint (the vertical xz plane) landing on the ground, pushed along
    // the plane by a motor and turned by a servo on its angle.
    BodySpec sled = testing::box_body("sled", {-1.5, 1.0, -1.85}, {0.15, 0.1, 0.1}, 1.0);
    sled.orientation = Quat::from_axis_angle({0, 1, 0}, 0.2);
    builder.add_body(sled);
    JointSpec plane = testing::joint_spec("plane", JointType::Planar, "world", "sled", sled.position, {0, 1, 0});
    plane.axis2 = {1, 0, 0};
    plane.collide_connected = true;
    builder.add_joint(plane);
    builder.add_actuator(testing::motor_spec("push", "plane", 2.0));
    ActuatorSpec turn = testing::servo_spec("turn", "plane", 0.1, 5.0, 2.0, 1.0);
    turn.dof = 2;
    builder.add_actuator(turn);
    ActuatorSpec servo;
    servo.name = "servo";
    servo.type = ActuatorType::Servo;
    servo.joint = "hinge1";
    servo.gain = 5;
    servo.max_torque = 1;
    servo.max_velocity = 1;
    servo.control = 0.3;
    builder.add_actuator(servo);
    if (formulation == Formulation::Convex) {
      // Soft equalities (convex only): a distance between two boxes, a connect between two others.
      EqualitySpec tether;
      tether.name = "tether";
      tether.type = EqualityType::Distance;
      tether.body_a = "box0";
      tether.body_b = "box1";
      tether.anchor_a = {0.0, 1.0, -1.9};
      tether.anchor_b = {0.5, 1.0, -1.8};
      builder.add_equality(tether);
      EqualitySpec pin;
      pin.name = "pin";
      pin.body_a = "box2";
      pin.body_b = "box3";
      pin.anchor = {1.25, 1.0, -1.65};
      builder.add_equality(pin);
    }
    const Scene scene = builder.build();
    State current = scene.state, next = scene.state;
    Workspace workspace;
    // The counter does see the step's allocations: a fresh workspace grows on its first step.
    allocations = 0;
    counting = true;
    step(scene.model, scene.params, current, scene.controls, next, workspace);
    counting = false;
    EXPECT_GT(allocations.load(), 0);
    for (int i = 0; i < 300; ++i) {  // warm-up: boxes land, buffers grow
      step(scene.model, scene.params, current, scene.controls, next, workspace);
      std::swap(current, next);
    }
    allocations = 0;
    counting = true;
    int contact_steps = 0;
    for (int i = 0; i < 200; ++i) {
      const StepStatus status = step(scene.model, scene.params, current, scene.controls, next, workspace);
      contact_steps += status.contact_count > 0;
      std::swap(current, next);
    }
    counting = false;
    EXPECT_EQ(allocations.load(), 0) << name;
    EXPECT_EQ(contact_steps, 200) << name;  // the measured steps did solve contacts
  }
}

// Joint coordinates (rigid/articulated.hpp): the reduced step of a chain with servos and a motor.
// The chain-mass scene (convex, speculative contacts): the ball, pushed for the whole run here,
// crosses several margins per step. The second pass over the same 300 steps meets no buffer
// size the first did not.
TEST(Step, SpeculativeContactsAllocateNothingAfterWarmUp) {
  const Scene scene = parse_scene(experiments::chain_scene_json(10, 0.7, experiments::ChainContacts::Continuous));
  Workspace workspace;
  collision::CollisionWorkspace collision_workspace;
  std::vector<Contact> contacts;
  State current = scene.state, next = scene.state;
  int speculative_steps = 0;
  for (int i = 0; i < 300; ++i) {
    collision::detect_contacts(scene.model, scene.params, current, collision_workspace, contacts);
    for (const Contact& contact : contacts)
      if (contact.margin > scene.model.solver.contact_margin) {
        ++speculative_steps;
        break;
      }
    step(scene.model, scene.params, current, scene.controls, next, workspace);
    std::swap(current, next);
  }
  EXPECT_GT(speculative_steps, 0);
  current = scene.state;
  allocations = 0;
  counting = true;
  int contact_steps = 0;
  for (int i = 0; i < 300; ++i) {
    const StepStatus status = step(scene.model, scene.params, current, scene.controls, next, workspace);
    contact_steps += status.contact_count > 0;
    std::swap(current, next);
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_GT(contact_steps, 0);
}

TEST(Step, ReducedCoordinatesAllocateNothingAfterTheFirstStep) {
  ModelBuilder builder = testing::hinge_chain(3, 0.3, 0.5, 0.6, 0);
  builder.solver.coordinates = Coordinates::Reduced;
  builder.add_actuator(testing::servo_spec("servo0", "hinge0", 0.5, 10.0, 0.5, 2.0));  // saturates
  builder.add_actuator(testing::servo_spec("servo2", "hinge2", -0.3, 10.0, 20.0, 2.0));
  builder.add_actuator(testing::motor_spec("motor1", "hinge1", 0.2));
  const Scene scene = builder.build();
  State current = scene.state, next = scene.state;
  Workspace workspace;
  step(scene.model, scene.params, current, scene.controls, next, workspace);
  std::swap(current, next);
  allocations = 0;
  counting = true;
  for (int i = 0; i < 200; ++i) {
    step(scene.model, scene.params, current, scene.controls, next, workspace);
    std::swap(current, next);
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
}

// Soft bodies (issue 5): a Newton step (assembly, LDLᵀ, line search) allocates nothing once
// the SoftWorkspace is built. The scenes are stepped in tests/soft_physics_test.cpp (which
// keeps their construction out of this file); this file owns the counting operator new.
TEST(SoftStep, AllocatesNothingAfterWarmUp) {
  for (int scene = 0; scene < 3; ++scene) {  // tets with contact and friction, cloth on a sphere, springs
    allocations = 0;
    const int iterations = soft::testing::run_soft_steps_for_allocation_count(
        scene, [] { counting = true; }, [] { counting = false; });
    EXPECT_EQ(allocations.load(), 0) << "soft scene " << scene;
    EXPECT_GT(iterations, 10) << "soft scene " << scene;  // real Newton solves were measured
  }
}

// fluid_step and its VJP (the pressure multigrid, the viscous CG, MacCormack's buffers):
// nothing after one warm-up step, on a 32² cavity with forces and a buoyant scalar.
TEST(FluidStep, AllocatesNothingAfterWarmUp) {
  allocations = 0;
  const int iterations =
      fluid::testing::run_fluid_steps_for_allocation_count([] { counting = true; }, [] { counting = false; });
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_GT(iterations, 10);  // real pressure solves were measured
}

// WorldSimulator::step (`diffphys simulate`): after two warm-up steps, a world step allocates
// nothing — a rigid world, a soft world, and rigid + soft worlds one-way and two-way (the
// reactions of the attachments and, on the tray, of the contact, through the world schedule).
TEST(WorldSimulator, AllocatesNothingAfterWarmUp) {
  const std::string examples = std::string(test_paths::source_dir()) + "/examples/";
  const std::string tray = R"({
    "rigid": {"dt": 0.005, "gravity": [0, 0, 0],
              "bodies": [{"name": "tray", "position": [0, 0, 1], "mass": 0.02,
                          "shapes": [{"name": "plate", "type": "box", "half_extents": [0.15, 0.15, 0.02]}]}]},
    "soft": {"dt": 0.01, "contact": {"barrier_distance": 0.002, "stiffness": 1.0},
             "cloth_materials": [{"name": "c", "stretch_modulus": 40, "poisson_ratio": 0.3, "bending_stiffness": 0.0005,
                                  "areal_density": 0.2}],
             "cloth_rectangles": [{"material": "c", "origin": [-0.1, -0.1, 1.0215], "edge_u": [0.2, 0, 0], "edge_v": [0, 0.2, 0],
                                   "cells": [4, 4]}]},
    "coupling": {"two_way": true, "colliders": [{"body": "tray", "friction": 0.3}]}
  })";
  std::vector<World> worlds;
  worlds.push_back(load_world(examples + "scenes/servo_arm.json"));
  worlds.push_back(load_world(examples + "soft/tet_drop.json"));
  worlds.push_back(load_world(examples + "soft/cloth_on_pendulum.json"));
  worlds.back().coupling.two_way = false;  // read by the simulator: one-way
  worlds.push_back(load_world(examples + "soft/cloth_on_pendulum.json"));
  worlds.push_back(parse_world(tray, "tray.json"));
  worlds.push_back(load_world(examples + "fluid/smoke_plume.json"));  // the schedule's fluid part
  for (const World& world : worlds) {
    SCOPED_TRACE(world.source + (world.coupling.two_way ? " (two-way)" : ""));
    WorldSimulator simulator(world, world.default_params(), world.initial_state());
    for (int t = 0; t < 2; ++t) simulator.step();
    allocations = 0;
    counting = true;
    bool converged = true;
    for (int t = 0; t < 8; ++t) converged = simulator.step().converged() && converged;
    counting = false;
    EXPECT_EQ(allocations.load(), 0);
    EXPECT_TRUE(converged);
  }
}

// The camera's render and backward on 2 threads (diffphys/camera.hpp): nothing once the image,
// the gradients and the renderer's per-band scratch have their sizes.
TEST(CameraAllocation, RenderAndBackwardAllocateNothingAfterWarmUp) {
  camera_test::CameraSetup setup = camera_test::mixed_scene(3, 64, 48);
  CameraRenderer renderer(setup.scene.model, setup.camera, setup.appearance, 2);
  CameraImage image, cotangent;
  CameraGradients gradients;
  renderer.render(setup.scene.params, setup.scene.state, image);
  cotangent = image;
  renderer.backward(setup.scene.params, setup.scene.state, cotangent, gradients);
  allocations = 0;
  counting = true;
  for (int frame = 0; frame < 3; ++frame) {
    setup.scene.state.position[1].x += 0.01;  // the ball moves between frames
    renderer.render(setup.scene.params, setup.scene.state, image);
    renderer.backward(setup.scene.params, setup.scene.state, cotangent, gradients);
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
}

// A world's camera (diffphys/world_camera.hpp), render and backward in the world's layouts:
// nothing once the image and the gradients have their sizes (the state and θ are copied into
// buffers sized once). The frames run in camera_world_test.cpp, which builds the world.
TEST(CameraAllocation, WorldCameraAllocatesNothingAfterWarmUp) {
  allocations = 0;
  const int frames =
      camera::testing::run_world_camera_frames_for_allocation_count([] { counting = true; }, [] { counting = false; });
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(frames, 3);
}

}  // namespace
}  // namespace diffphys
