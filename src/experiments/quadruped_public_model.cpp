// experiments/quadruped_public_model.cpp — the Degrave et al. 2019 quadruped built from its
// authors' public robot file (317070/TheanoPhysX robotmodel/demi_predator_ground.json; facts
// only, no code) and their engine's soft constraints mapped onto the convex formulation.
#include "experiments/quadruped_public_model.hpp"

#include <cmath>
#include <numbers>
#include <string>

namespace diffphys::experiments {
namespace {

// From demi_predator_ground.json.
constexpr double kRepositoryDensity = 1000.0;                 // kg/m³ (default_model_parameters)
constexpr Vec3 kRepositorySpineSize{0.7, 0.3, 0.1};           // m
constexpr double kRepositorySpineHeight = 0.4;                // m, the spine's centre at the start
constexpr double kRepositorySphereRadius = 0.05;              // m, feet and the spine's spheres
constexpr double kRepositorySpineSphereX = 0.3, kRepositorySpineSphereY = 0.1;  // m, in the spine's frame
constexpr Vec3 kRepositoryFemurSize{0.05, 0.05, 0.2};         // m, centre 0.1 m below the hip
constexpr Vec3 kRepositoryTibiaSize{0.05, 0.05, 0.15};        // m, centre 0.075 m below the knee
constexpr double kRepositoryLegX = 0.3, kRepositoryLegY = 0.2;          // m, hips at (±0.3, ±0.2, 0.4)
constexpr double kRepositoryKneeHeight = 0.2;                 // m
constexpr double kRepositoryFootHeight = 0.05;                // m: the foot's lowest point on the ground
constexpr double kRepositoryFriction = 0.5;                   // ground.mu
constexpr double kRepositoryServoGain = 50.0;                 // motor.motor_gain, 1/s
constexpr double kRepositoryServoVelocity = 1440.0 * std::numbers::pi / 180.0;  // motor_velocity, °/s
constexpr double kRepositoryServoTorque = 4.0;                // motor.motor_torque, N·m
constexpr double kRepositoryTargetLimit = 45.0 * std::numbers::pi / 180.0;      // motor min/max, °
constexpr double kRepositoryRowFrequency = 2.0;               // default.f, Hz
constexpr double kRepositoryRowDampingRatio = 0.01;           // default.zeta
constexpr double kRepositoryReferenceStep = 0.005;            // integration_parameters.time_step, s
constexpr std::uint32_t kRepositoryRobotGroup = 2;            // robot spheres touch the ground only

// A solid box's principal moments.
Vec3 solid_box_inertia(double mass, Vec3 size) {
  return {mass / 12 * (size.y * size.y + size.z * size.z), mass / 12 * (size.x * size.x + size.z * size.z),
          mass / 12 * (size.x * size.x + size.y * size.y)};
}

ShapeSpec contactless_box(std::string name, Vec3 size) {
  ShapeSpec box;
  box.name = std::move(name);
  box.type = ShapeType::Box;
  box.half_extents = size * 0.5;
  box.collision_mask = 0;  // the repository gives boxes no contacts
  return box;
}

BodySpec repository_sphere_body(std::string name, Vec3 position, const PublicQuadrupedDesign& design) {
  BodySpec body;
  body.name = std::move(name);
  body.position = position;
  const double mass = kRepositoryDensity * 4.0 / 3.0 * std::numbers::pi * std::pow(kRepositorySphereRadius, 3);
  body.mass = mass;
  body.center_of_mass = Vec3{};
  const double moment = design.repository_sphere_inertia ? 0.4 * mass : 0.4 * mass * kRepositorySphereRadius * kRepositorySphereRadius;
  body.inertia = Vec3{moment, moment, moment};
  body.friction = kRepositoryFriction;
  ShapeSpec sphere;
  sphere.name = body.name;
  sphere.type = ShapeType::Sphere;
  sphere.radius = kRepositorySphereRadius;
  sphere.collision_group = kRepositoryRobotGroup;
  sphere.collision_mask = 1;  // the ground's group
  body.shapes.push_back(sphere);
  return body;
}

BodySpec repository_box_body(std::string name, Vec3 position, Vec3 size) {
  BodySpec body;
  body.name = name;
  body.position = position;
  const double mass = kRepositoryDensity * size.x * size.y * size.z;
  body.mass = mass;
  body.center_of_mass = Vec3{};
  body.inertia = solid_box_inertia(mass, size);
  body.friction = kRepositoryFriction;
  body.shapes.push_back(contactless_box(std::move(name), size));
  return body;
}

void fix_to(ModelBuilder& builder, const std::string& parent, const std::string& child, Vec3 anchor) {
  JointSpec joint;
  joint.name = child + "_fixed";
  joint.type = JointType::Fixed;
  joint.parent = parent;
  joint.child = child;
  joint.anchor = anchor;
  builder.add_joint(joint);
}

}  // namespace

ModelBuilder::RowCompliance repository_row_compliance(double frequency_hz, double damping_ratio, double dt) {
  const double omega = 2 * std::numbers::pi * frequency_hz;
  return {dt / (damping_ratio * omega), damping_ratio / std::sqrt(dt)};
}

ModelBuilder::RowCompliance repository_servo_compliance(double frequency_hz, double dt) {
  const double omega = 2 * std::numbers::pi * frequency_hz;
  constexpr double kDampingRatio = 10.0;
  // h/(ζτ)² + 2/τ = ω²: with s = 1/τ, (h/ζ²) s² + 2 s − ω² = 0.
  const double a = dt / (kDampingRatio * kDampingRatio);
  const double s = (-2.0 + std::sqrt(4.0 + 4.0 * a * omega * omega)) / (2.0 * a);
  return {1.0 / s, kDampingRatio};
}

QuadrupedModel build_public_quadruped(const PublicQuadrupedDesign& design) {
  ModelBuilder builder;
  builder.name = "degrave_quadruped_public";
  builder.dt = design.dt;
  builder.world_friction = kRepositoryFriction;
  builder.solver.formulation = Formulation::Convex;
  const auto soft = repository_row_compliance(kRepositoryRowFrequency, kRepositoryRowDampingRatio, kRepositoryReferenceStep);
  builder.compliance[static_cast<int>(RowClass::Contact)] = soft;
  builder.compliance[static_cast<int>(RowClass::Joint)] = soft;
  if (design.repository_servo_compliance)
    builder.compliance[static_cast<int>(RowClass::Servo)] =
        repository_servo_compliance(kRepositoryRowFrequency, kRepositoryReferenceStep);
  builder.add_ground_plane();

  builder.add_body(repository_box_body("spine", {0, 0, kRepositorySpineHeight}, kRepositorySpineSize));
  for (int i = 0; i < 4; ++i) {
    const Vec3 at{(i & 1) ? -kRepositorySpineSphereX : kRepositorySpineSphereX, (i & 2) ? -kRepositorySpineSphereY : kRepositorySpineSphereY, kRepositorySpineHeight};
    const std::string name = "spine_sphere" + std::to_string(i + 1);
    builder.add_body(repository_sphere_body(name, at, design));
    fix_to(builder, "spine", name, at);
  }

  const char* leg_names[QuadrupedModel::kLegs] = {"front_left", "front_right", "hind_left", "hind_right"};
  const double leg_x[QuadrupedModel::kLegs] = {kRepositoryLegX, kRepositoryLegX, -kRepositoryLegX, -kRepositoryLegX};
  const double leg_y[QuadrupedModel::kLegs] = {kRepositoryLegY, -kRepositoryLegY, kRepositoryLegY, -kRepositoryLegY};
  std::vector<ActuatorSpec> hips, knees;
  for (int leg = 0; leg < QuadrupedModel::kLegs; ++leg) {
    const std::string name = leg_names[leg];
    const double x = leg_x[leg], y = leg_y[leg];
    builder.add_body(repository_box_body(name + "_femur", {x, y, kRepositorySpineHeight - kRepositoryFemurSize.z / 2}, kRepositoryFemurSize));
    builder.add_body(repository_box_body(name + "_tibia", {x, y, kRepositoryKneeHeight - kRepositoryTibiaSize.z / 2}, kRepositoryTibiaSize));
    builder.add_body(repository_sphere_body(name + "_foot", {x, y, kRepositoryFootHeight}, design));
    fix_to(builder, name + "_tibia", name + "_foot", {x, y, kRepositoryFootHeight});
    const char* joint_names[2] = {"_hip", "_knee"};
    const std::string parents[2] = {"spine", name + "_femur"};
    const std::string children[2] = {name + "_femur", name + "_tibia"};
    const double heights[2] = {kRepositorySpineHeight, kRepositoryKneeHeight};
    for (int j = 0; j < 2; ++j) {
      JointSpec hinge;
      hinge.name = name + joint_names[j];
      hinge.type = JointType::Revolute;
      hinge.parent = parents[j];
      hinge.child = children[j];
      hinge.anchor = {x, y, heights[j]};
      hinge.axis = {0, 1, 0};
      builder.add_joint(hinge);
      ActuatorSpec servo;
      servo.name = hinge.name;
      servo.type = ActuatorType::Servo;
      servo.joint = hinge.name;
      servo.gain = kRepositoryServoGain;
      servo.max_torque = kRepositoryServoTorque;
      servo.max_velocity = kRepositoryServoVelocity;
      (j == 0 ? hips : knees).push_back(servo);
    }
  }
  for (const ActuatorSpec& servo : hips) builder.add_actuator(servo);
  for (const ActuatorSpec& servo : knees) builder.add_actuator(servo);

  QuadrupedModel robot;
  robot.scene = builder.build();
  robot.torso = robot.scene.model.body_index("spine");
  robot.target_map = ServoTargetMap::Clip;
  robot.target_limit = kRepositoryTargetLimit;
  return robot;
}

}  // namespace diffphys::experiments
