// tests/test_scenes.hpp — small scenes the physics tests share, built with ModelBuilder so
// each test states its physical setup in a few lines.
#pragma once

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys::testing {

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

// A chain of `links` boxes hanging from the world along −z, hinged about y, each link
// `length` long, rotated by `initial_angle` about the top hinge so that it swings.
inline ModelBuilder hinge_chain(int links, double length, double mass, double initial_angle) {
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
    link.orientation = tilt;
    builder.add_body(link);
    JointSpec joint;
    joint.name = "hinge" + std::to_string(i);
    joint.type = JointType::Revolute;
    joint.parent = i == 0 ? "world" : "link" + std::to_string(i - 1);
    joint.child = "link" + std::to_string(i);
    joint.anchor = top;
    joint.axis = axis;
    builder.add_joint(joint);
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
  JointSpec slide;
  slide.name = "slide";
  slide.type = JointType::Prismatic;
  slide.child = "cart";
  slide.axis = {1, 0, 0};
  builder.add_joint(slide);
  ActuatorSpec motor;
  motor.name = "push";
  motor.joint = "slide";
  builder.add_actuator(motor);
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

}  // namespace diffphys::testing
