// bench/diffphys_scenes.cpp — owns the diffphys versions of the benchmark models, built with
// ModelBuilder from the constants of bench_models.hpp. Masses and inertias are given
// explicitly so that they match the MuJoCo versions exactly.
#include "diffphys_scenes.hpp"

#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "bench_models.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/simulator.hpp"

namespace diffphys::bench {
namespace {

// Rotation turning a shape's local z axis (a capsule's segment) onto the body's x axis.
Quat z_axis_onto_x_axis() {
  return Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 2);
}

std::string indexed_name(const char* prefix, int index) {
  return prefix + std::to_string(index);
}

// The chain's bodies and joints, ready for more items (actuators) before build().
ModelBuilder chain_builder(int link_count, Coordinates coordinates) {
  using D = ChainDimensions;
  ModelBuilder builder;
  builder.name = "chain" + std::to_string(link_count);
  builder.dt = D::time_step;
  builder.solver.coordinates = coordinates;

  // Links point along d = (sin θ, 0, −cos θ): body x turned about y by π/2 − θ.
  const Vec3 link_direction{std::sin(D::release_angle), 0.0, -std::cos(D::release_angle)};
  const Quat link_orientation = Quat::from_axis_angle({0, 1, 0}, std::numbers::pi / 2 - D::release_angle);
  const Vec3 pivot{0.0, 0.0, D::pivot_height};

  for (int link = 0; link < link_count; ++link) {
    BodySpec body;
    body.name = indexed_name("link", link);
    body.position = pivot + link_direction * ((link + 0.5) * D::link_length);
    body.orientation = link_orientation;
    body.mass = D::link_mass;
    body.inertia = Vec3{D::axial_inertia, D::transverse_inertia, D::transverse_inertia};
    ShapeSpec capsule;
    capsule.type = ShapeType::Capsule;
    capsule.orientation = z_axis_onto_x_axis();
    capsule.radius = D::link_radius;
    capsule.half_length = 0.5 * D::link_length - D::link_radius;
    capsule.collision_mask = 0;  // the benchmark measures joints only: no contact at all
    body.shapes.push_back(capsule);
    builder.add_body(body);

    JointSpec joint;
    joint.name = indexed_name("hinge", link);
    joint.type = JointType::Revolute;
    joint.parent = link == 0 ? std::string("world") : indexed_name("link", link - 1);
    joint.child = body.name;
    joint.anchor = pivot + link_direction * (link * D::link_length);
    joint.axis = {0, 1, 0};
    builder.add_joint(joint);
  }
  return builder;
}

}  // namespace

Scene build_chain_scene(int link_count, Coordinates coordinates) {
  return chain_builder(link_count, coordinates).build();
}

Scene build_motor_chain_scene(int link_count, Coordinates coordinates) {
  ModelBuilder builder = chain_builder(link_count, coordinates);
  builder.name = "motor_chain" + std::to_string(link_count);
  for (int link = 0; link < link_count; ++link) {
    ActuatorSpec motor;
    motor.name = indexed_name("motor", link);
    motor.type = ActuatorType::Motor;
    motor.joint = indexed_name("hinge", link);
    motor.max_torque = 0.0;  // unbounded, like MuJoCo's motor without ctrllimited/forcelimited
    builder.add_actuator(motor);
  }
  return builder.build();
}

Scene build_bouncing_sphere_scene() {
  using D = BouncingSphereDimensions;
  ModelBuilder builder;
  builder.name = "bouncing_sphere";
  builder.dt = D::time_step;
  builder.world_friction = D::friction;
  builder.world_restitution = 0.0;  // the contact takes the larger of the two: the sphere's
  builder.add_ground_plane();

  BodySpec sphere;
  sphere.name = "sphere";
  sphere.position = {0.0, 0.0, D::drop_height};
  sphere.mass = D::mass;
  sphere.inertia = Vec3{D::inertia, D::inertia, D::inertia};
  sphere.friction = D::friction;
  sphere.restitution = D::restitution;
  ShapeSpec ball;
  ball.type = ShapeType::Sphere;
  ball.radius = D::radius;
  sphere.shapes.push_back(ball);
  builder.add_body(sphere);
  return builder.build();
}

Scene build_arm_scene() {
  using D = ArmDimensions;
  ModelBuilder builder;
  builder.name = "servo_arm_4dof";
  builder.dt = D::time_step;

  const char* link_names[2] = {"upper_arm", "forearm"};
  const char* joint_names[2] = {"shoulder", "elbow"};
  for (int link = 0; link < 2; ++link) {
    const double top = D::shoulder_height - link * D::link_length;
    BodySpec body;
    body.name = link_names[link];
    body.position = {0.0, 0.0, top - 0.5 * D::link_length};
    body.mass = D::link_mass;
    body.inertia = Vec3{D::transverse_inertia, D::transverse_inertia, D::axial_inertia};
    ShapeSpec capsule;  // along the body's z axis, which hangs vertically
    capsule.type = ShapeType::Capsule;
    capsule.radius = D::link_radius;
    capsule.half_length = 0.5 * D::link_length - D::link_radius;
    body.shapes.push_back(capsule);
    builder.add_body(body);

    JointSpec joint;
    joint.name = joint_names[link];
    joint.type = JointType::Universal;
    joint.parent = link == 0 ? std::string("world") : std::string(link_names[0]);
    joint.child = body.name;
    joint.anchor = {0.0, 0.0, top};
    joint.axis = {1, 0, 0};
    joint.axis2 = {0, 1, 0};
    builder.add_joint(joint);

    for (int dof = 0; dof < 2; ++dof) {
      ActuatorSpec servo;
      servo.name = std::string(joint_names[link]) + (dof == 0 ? "_x" : "_y");
      servo.type = ActuatorType::Servo;
      servo.joint = joint.name;
      servo.dof = dof;
      servo.gain = D::servo_gain;
      servo.max_torque = D::servo_max_torque;
      servo.max_velocity = D::servo_max_velocity;
      servo.control = D::targets[2 * link + dof];
      builder.add_actuator(servo);
    }
  }
  return builder.build();
}

namespace {

// The pile's open box: four static walls on the ground plane (the x walls span the full depth,
// corners included; the y walls fit between them).
void add_open_box(ModelBuilder& builder, double friction) {
  using D = SpherePileDimensions;
  const double wall_center = D::box_inner_half_width + D::wall_half_thickness;
  const double outer_half_width = D::box_inner_half_width + 2 * D::wall_half_thickness;
  const struct {
    const char* name;
    Vec3 center;
    Vec3 half_extents;
  } walls[4] = {
      {"wall_x_minus",
       {-wall_center, 0, D::wall_half_height},
       {D::wall_half_thickness, outer_half_width, D::wall_half_height}},
      {"wall_x_plus",
       {wall_center, 0, D::wall_half_height},
       {D::wall_half_thickness, outer_half_width, D::wall_half_height}},
      {"wall_y_minus",
       {0, -wall_center, D::wall_half_height},
       {D::box_inner_half_width, D::wall_half_thickness, D::wall_half_height}},
      {"wall_y_plus",
       {0, wall_center, D::wall_half_height},
       {D::box_inner_half_width, D::wall_half_thickness, D::wall_half_height}},
  };
  for (const auto& wall : walls) {
    BodySpec body;
    body.name = wall.name;
    body.type = BodyType::Static;
    body.position = wall.center;
    body.friction = friction;
    ShapeSpec box;
    box.type = ShapeType::Box;
    box.half_extents = wall.half_extents;
    body.shapes.push_back(box);
    builder.add_body(body);
  }
}

BodySpec cube_body(std::string name, Vec3 position, double half_size, double mass, double friction) {
  BodySpec body;
  body.name = std::move(name);
  body.position = position;
  body.mass = mass;
  const double inertia = mass * (2 * half_size) * (2 * half_size) / 6.0;
  body.inertia = Vec3{inertia, inertia, inertia};
  body.friction = friction;
  ShapeSpec box;
  box.type = ShapeType::Box;
  box.half_extents = {half_size, half_size, half_size};
  body.shapes.push_back(box);
  return body;
}

// A scene on the ground plane with the given solver, formulation and world friction.
ModelBuilder ground_builder(std::string name, double time_step, SolverType solver, Formulation formulation,
                            double friction) {
  ModelBuilder builder;
  builder.name = std::move(name);
  builder.dt = time_step;
  builder.solver.type = solver;
  builder.solver.formulation = formulation;
  builder.world_friction = friction;
  builder.add_ground_plane();
  return builder;
}

}  // namespace

Scene build_sphere_pile_scene(SolverType solver, Formulation formulation) {
  using D = SpherePileDimensions;
  ModelBuilder builder = ground_builder("sphere_pile", D::time_step, solver, formulation, D::friction);
  add_open_box(builder, D::friction);

  for (int index = 0; index < D::sphere_count; ++index) {
    BodySpec body;
    body.name = indexed_name("sphere", index);
    D::initial_position(index, body.position.x, body.position.y, body.position.z);
    body.mass = D::mass;
    body.inertia = Vec3{D::inertia, D::inertia, D::inertia};
    body.friction = D::friction;
    ShapeSpec ball;
    ball.type = ShapeType::Sphere;
    ball.radius = D::radius;
    body.shapes.push_back(ball);
    builder.add_body(body);
  }
  return builder.build();
}

Scene build_box_tower_scene(int height, SolverType solver, Formulation formulation) {
  using D = BoxTowerDimensions;
  ModelBuilder builder =
      ground_builder("box_tower" + std::to_string(height), D::time_step, solver, formulation, D::friction);
  for (int level = 0; level < height; ++level)
    builder.add_body(cube_body(indexed_name("box", level), {0, 0, D::centre_height(level)}, D::half_size, D::mass, D::friction));
  return builder.build();
}

Scene build_box_pile_scene(SolverType solver, Formulation formulation) {
  using D = BoxPileDimensions;
  ModelBuilder builder = ground_builder("box_pile", D::time_step, solver, formulation, D::friction);
  add_open_box(builder, D::friction);
  for (int index = 0; index < D::box_count; ++index) {
    Vec3 position;
    D::initial_position(index, position.x, position.y, position.z);
    BodySpec body = cube_body(indexed_name("box", index), position, D::half_size, D::mass, D::friction);
    double angle = 0, axis[3] = {0, 0, 1};
    D::initial_turn(index, angle, axis);
    body.orientation = Quat::from_axis_angle({axis[0], axis[1], axis[2]}, angle);
    builder.add_body(body);
  }
  return builder.build();
}

Scene build_humanoid_scene(Formulation formulation) {
  Scene scene = load_mjcf(HumanoidDimensions::mjcf_path);
  set_formulation(scene, formulation);
  return scene;
}

Scene build_settled_sphere_pile_scene(SolverType solver) {
  Scene scene = build_sphere_pile_scene(SolverType::ProjectedGaussSeidel);
  State next = scene.state;
  Workspace workspace;
  for (int k = 0; k < SpherePileDimensions::settle_steps; ++k) {
    step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
    std::swap(scene.state, next);
  }
  scene.model.solver.type = solver;
  return scene;
}

}  // namespace diffphys::bench
