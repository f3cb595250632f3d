// tests/test_scenes.hpp — small scenes the physics tests share, built with ModelBuilder so
// each test states its physical setup in a few lines; and error_of, the message of a thrown
// Error.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys::testing {

// The message of the Error that `run` throws ("" if it throws none).
template <typename Function>
std::string error_of(Function&& run) {
  try {
    run();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

inline BodySpec sphere_body(const std::string& name, Vec3 position, double radius, double mass) {
  BodySpec body;
  body.name = name;
  body.position = position;
  body.mass = mass;
  ShapeSpec sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = radius;
  body.shapes.push_back(sphere);
  return body;
}

inline BodySpec box_body(const std::string& name, Vec3 position, Vec3 half_extents, double mass) {
  BodySpec body;
  body.name = name;
  body.position = position;
  body.mass = mass;
  ShapeSpec box;
  box.type = ShapeType::Box;
  box.half_extents = half_extents;
  body.shapes.push_back(box);
  return body;
}

// A joint between two named bodies, its anchor and axis in world coordinates at build time.
inline JointSpec joint_spec(const std::string& name, JointType type, const std::string& parent,
                            const std::string& child, Vec3 anchor, Vec3 axis, double damping = 0.0) {
  JointSpec joint;
  joint.name = name;
  joint.type = type;
  joint.parent = parent;
  joint.child = child;
  joint.anchor = anchor;
  joint.axis = normalized(axis);
  joint.damping = damping;
  return joint;
}

// A motor on a joint's coordinate: torque or force `control`, clipped at max_torque (0: free).
inline ActuatorSpec motor_spec(const std::string& name, const std::string& joint, double control = 0.0,
                               double max_torque = 0.0) {
  ActuatorSpec motor;
  motor.name = name;
  motor.joint = joint;
  motor.control = control;
  motor.max_torque = max_torque;
  return motor;
}

// A position servo on a joint's coordinate (Degrave et al. 2019, §2.2): target `control`.
inline ActuatorSpec servo_spec(const std::string& name, const std::string& joint, double control, double gain,
                               double max_torque, double max_velocity) {
  ActuatorSpec servo;
  servo.name = name;
  servo.type = ActuatorType::Servo;
  servo.joint = joint;
  servo.control = control;
  servo.gain = gain;
  servo.max_torque = max_torque;
  servo.max_velocity = max_velocity;
  return servo;
}

// A chain of `links` boxes hanging from the world along −z, hinged about y, each link
// `length` long, rotated by `initial_angle` about the top hinge so that it swings. Its boxes
// collide with `collision_mask` (0: with nothing).
inline ModelBuilder hinge_chain(int links, double length, double mass, double initial_angle,
                                std::uint32_t collision_mask = ~0u) {
  ModelBuilder builder;
  builder.name = "chain";
  builder.dt = 1e-3;
  const Vec3 axis{0, 1, 0};
  const Quat tilt = Quat::from_axis_angle(axis, initial_angle);
  const Vec3 down = tilt.rotate({0, 0, -1});
  for (int i = 0; i < links; ++i) {
    const Vec3 top = down * (length * i);
    BodySpec link = box_body("link" + std::to_string(i), top + down * (0.5 * length),
                             {0.1 * length, 0.1 * length, 0.5 * length}, mass);
    link.shapes[0].collision_mask = collision_mask;
    link.orientation = tilt;
    builder.add_body(link);
    builder.add_joint(joint_spec("hinge" + std::to_string(i), JointType::Revolute,
                                 i == 0 ? "world" : "link" + std::to_string(i - 1), "link" + std::to_string(i), top,
                                 axis));
  }
  return builder;
}

// A box cart on a prismatic joint along x at (x, 0, 0), pushed by a force motor ("push"), no
// gravity: the step is linear in (p_x, v_x, u), v' = v + h u/m, p' = p + h v'.
inline Scene motor_cart(double mass, double dt, double x) {
  ModelBuilder builder;
  builder.dt = dt;
  builder.gravity = {0, 0, 0};
  builder.add_body(box_body("cart", {x, 0, 0}, {0.2, 0.1, 0.1}, mass));
  builder.add_joint(joint_spec("slide", JointType::Prismatic, "world", "cart", {}, {1, 0, 0}));
  builder.add_actuator(motor_spec("push", "slide"));
  return builder.build();
}

// Runs `steps` steps, calling observe(state, status) after each.
template <typename Observe>
void run(const Scene& scene, int steps, Observe&& observe, std::vector<double> controls = {}) {
  if (controls.empty()) controls = scene.controls;
  State current = scene.state, next = scene.state;
  Workspace workspace;
  for (int i = 0; i < steps; ++i) {
    const StepStatus status = step(scene.model, scene.params, current, controls, next, workspace);
    std::swap(current, next);
    observe(current, status);
  }
}

// A box (half extents 0.1 × 0.15 × 0.05 m, 2 kg) released at rest on a slope of
// `slope_angle` whose downhill direction is at `heading` about z, turned 0.3 rad about the
// normal so that no face edge lines up with downhill; friction μ on box and slope, the rest
// from `builder` (dt, solver). Returns the displacement along the slope after `seconds`;
// adds the steps that did not converge to `unconverged_steps`.
inline double slope_travel(ModelBuilder builder, double slope_angle, double heading, double friction,
                           double seconds, int& unconverged_steps) {
  const Vec3 normal{std::sin(slope_angle) * std::cos(heading), std::sin(slope_angle) * std::sin(heading),
                    std::cos(slope_angle)};
  builder.add_ground_plane(normal, 0.0);
  builder.world_friction = friction;
  const Vec3 z{0, 0, 1};
  const Vec3 axis = cross(z, normal);
  const Quat tilt = norm(axis) > 0 ? Quat::from_axis_angle(normalized(axis), slope_angle) : Quat{};
  BodySpec box = box_body("box", normal * 0.05, {0.1, 0.15, 0.05}, 2.0);
  box.orientation = tilt * Quat::from_axis_angle(z, 0.3);
  box.friction = friction;
  builder.add_body(box);
  const Scene scene = builder.build();
  Simulator simulator(scene.model, scene.params, scene.state);
  const int steps = static_cast<int>(std::lround(seconds / scene.model.dt));
  for (int i = 0; i < steps; ++i)
    if (!simulator.step().converged) ++unconverged_steps;
  const Vec3 downhill = normalized(Vec3{0, 0, -1} - normal * dot(Vec3{0, 0, -1}, normal));
  return dot(simulator.state().position[1] - scene.state.position[1], downhill);
}

}  // namespace diffphys::testing

namespace diffphys::testing {

// A contact-free tree in joint coordinates (Coordinates::Reduced): a turntable on the world
// (revolute about z), an upper arm on it (revolute about a tilted axis, its principal axes
// turned off the body frame), and two children of the arm — a forearm (revolute about x)
// and a slider (prismatic along the arm, with body damping, an external force and torque).
// Joint damping and three motors, one clipped at its bound, so that every term of the
// reduced step and its backward pass is exercised.
inline Scene reduced_tree(double dt) {
  ModelBuilder builder;
  builder.name = "reduced_tree";
  builder.dt = dt;
  builder.solver.coordinates = Coordinates::Reduced;
  const auto link = [](const std::string& name, Vec3 position, Vec3 half_extents, double mass) {
    BodySpec body = box_body(name, position, half_extents, mass);
    body.shapes[0].collision_mask = 0;  // nothing touches: what reduced coordinates simulate
    return body;
  };
  BodySpec base = link("base", {0, 0, 0.1}, {0.1, 0.1, 0.05}, 2.0);
  base.angular_velocity = {0, 0, 0.8};
  builder.add_body(base);
  BodySpec arm = link("arm", {0.25, 0, 0.2}, {0.25, 0.04, 0.04}, 1.2);
  arm.orientation = Quat::from_axis_angle(normalized(Vec3{1, 1, 0}), 0.4);
  builder.add_body(arm);
  builder.add_body(link("forearm", {0.5, 0, 0.0}, {0.03, 0.03, 0.2}, 0.7));
  BodySpec slider = link("slider", {0.25, 0.1, 0.2}, {0.05, 0.05, 0.05}, 0.4);
  slider.linear_damping = 0.3;
  slider.angular_damping = 0.2;
  slider.force = {0.5, 0.2, 0.1};
  slider.torque = {0.0, 0.1, 0.05};
  builder.add_body(slider);
  builder.add_joint(joint_spec("turn", JointType::Revolute, "world", "base", {0, 0, 0.1}, {0, 0, 1}, 0.05));
  builder.add_joint(joint_spec("shoulder", JointType::Revolute, "base", "arm", {0, 0, 0.2}, {0, 1, 0.3}));
  builder.add_joint(joint_spec("elbow", JointType::Revolute, "arm", "forearm", {0.5, 0, 0.2}, {1, 0, 0}, 0.02));
  builder.add_joint(joint_spec("slide", JointType::Prismatic, "arm", "slider", {0.25, 0.1, 0.2}, {1, 0, 0}, 0.1));
  builder.add_actuator(motor_spec("turn_motor", "turn", 0.3, 2.0));
  builder.add_actuator(motor_spec("elbow_motor", "elbow", 0.2, 0.05));  // clipped: dL/du = 0, dL/d(max_torque) ≠ 0
  builder.add_actuator(motor_spec("slide_motor", "slide", -0.4, 5.0));
  return builder.build();
}

}  // namespace diffphys::testing
