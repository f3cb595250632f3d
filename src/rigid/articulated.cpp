// rigid/articulated.cpp — see articulated.hpp.
#include "rigid/articulated.hpp"

#include <algorithm>
#include <cmath>

#include "collision/detect_contacts.hpp"
#include "diffphys/error.hpp"
#include "rigid/forces.hpp"
#include "solve/dense_cholesky.hpp"

namespace diffphys::rigid {
namespace {

// Orders the joints into links (parents first) and checks what the step can simulate, but
// for the shape pairs (validate_reduced_coordinates).
void build_tree(const Model& model, ArticulatedRecord& record) {
  const auto body_count = static_cast<std::size_t>(model.body_count());
  record.body_link.assign(body_count, -1);
  record.links.clear();
  record.servos.clear();
  // A moving base would need its prescribed acceleration in the recursions: not supported.
  for (std::size_t b = 0; b < body_count; ++b)
    if (model.bodies[b].type == BodyType::Kinematic)
      throw Error(message("body '", model.bodies[b].name,
                          "' is kinematic: reduced coordinates do not support kinematic bodies (a prescribed moving "
                          "base); use maximal coordinates"));
  // body_link doubles as "has a parent joint" (-2) until the body is placed.
  for (const Joint& joint : model.joints) {
    if (joint.type != JointType::Revolute && joint.type != JointType::Prismatic)
      throw Error(message("joint '", joint.name, "': reduced coordinates support revolute and prismatic joints, this one is ",
                          type_name(joint.type)));
    if (joint.has_limits)
      throw Error(message("joint '", joint.name, "': reduced coordinates do not support joint limits yet"));
    int& slot = record.body_link[static_cast<std::size_t>(joint.child)];
    if (slot != -1)
      throw Error(message("joint '", joint.name, "': body '", model.bodies[static_cast<std::size_t>(joint.child)].name,
                          "' is the child of two joints: reduced coordinates need a tree (no loops)"));
    slot = -2;
  }
  for (std::size_t b = 0; b < body_count; ++b)
    if (model.bodies[b].type == BodyType::Dynamic && record.body_link[b] == -1)
      throw Error(message("body '", model.bodies[b].name,
                          "': reduced coordinates need every dynamic body to hang from a revolute or prismatic joint"));
  // Place joints whose parent is static or placed, pass after pass (one pass when the joints
  // are listed parents first).
  const int joint_count = model.joint_count();
  bool progress = true;
  while (static_cast<int>(record.links.size()) < joint_count && progress) {
    progress = false;
    for (int j = 0; j < joint_count; ++j) {
      const Joint& joint = model.joints[static_cast<std::size_t>(j)];
      if (record.body_link[static_cast<std::size_t>(joint.child)] >= 0) continue;
      const bool static_parent = model.bodies[static_cast<std::size_t>(joint.parent)].type != BodyType::Dynamic;
      const int parent_link = static_parent ? -1 : record.body_link[static_cast<std::size_t>(joint.parent)];
      if (!static_parent && parent_link < 0) continue;
      ArticulatedLink link;
      link.joint = j;
      link.body = joint.child;
      link.parent_body = joint.parent;
      link.parent = parent_link;
      link.revolute = joint.type == JointType::Revolute;
      record.body_link[static_cast<std::size_t>(joint.child)] = static_cast<int>(record.links.size());
      record.links.push_back(link);
      progress = true;
    }
  }
  if (static_cast<int>(record.links.size()) < joint_count) {
    for (const Joint& joint : model.joints)
      if (record.body_link[static_cast<std::size_t>(joint.child)] < 0)
        throw Error(message("joint '", joint.name, "': its chain does not reach a static body (a joint loop): "
                            "reduced coordinates need a tree"));
  }
  for (int a = 0; a < model.actuator_count(); ++a) {
    const Actuator& actuator = model.actuators[static_cast<std::size_t>(a)];
    if (actuator.type != ActuatorType::Servo) continue;
    const int link = actuator_link(record, model, static_cast<std::size_t>(a));
    for (const ArticulatedServo& other : record.servos)
      if (other.link == link)
        throw Error(message("actuator '", actuator.name, "': joint '",
                            model.joints[static_cast<std::size_t>(actuator.joint)].name,
                            "' has a servo already (reduced coordinates take one servo per joint)"));
    ArticulatedServo servo;
    servo.actuator = a;
    servo.link = link;
    record.servos.push_back(servo);
  }
}

struct LinkPose {
  Quat orientation;
  Mat3 rotation;
  Vec3 com, axis;
  Spatial motion_subspace;
};

// Forward kinematics of one link from its parent's pose: the joint's world axis a and point
// o are fixed in the parent; the child turns about a by joint_rotation = exp(q u) (revolute,
// q_child = q_parent ⊗ exp(q u) ⊗ q_rest) or slides by q along it (prismatic), its anchor
// staying on o (+ q a).
LinkPose place_link(const Joint& joint, bool revolute, const Quat& parent_orientation, const Mat3& parent_rotation,
                    const Vec3& parent_com, const Quat& joint_rotation, double slide) {
  LinkPose pose;
  pose.axis = parent_rotation * joint.axis_parent;
  const Vec3 point = parent_com + parent_rotation * joint.anchor_parent;
  pose.orientation = revolute ? parent_orientation * joint_rotation * joint.rest_relative
                              : parent_orientation * joint.rest_relative;
  pose.rotation = pose.orientation.to_matrix();
  pose.com = point - pose.rotation * joint.anchor_child;
  if (revolute) {
    pose.motion_subspace = {pose.axis, cross(point, pose.axis)};
  } else {
    pose.com += pose.axis * slide;
    pose.motion_subspace = {Vec3{}, pose.axis};
  }
  return pose;
}

// The joint coordinate and its rate in state (rigid/joints.hpp's coordinate_value and
// coordinate_rate, written out for one revolute or prismatic joint). A revolute joint's
// angle q = 2 atan2(s, w) of the relative rotation (w, v), s = v·u, is returned as
// exp(q u) = (w, s u)/|(w, s)|, which is all the step needs of it.
void read_coordinate(const Joint& joint, bool revolute, const State& state, Quat& joint_rotation, double& q,
                     double& rate) {
  const auto p = static_cast<std::size_t>(joint.parent), c = static_cast<std::size_t>(joint.child);
  const Vec3 axis = state.orientation[p].rotate(joint.axis_parent);
  if (revolute) {
    const Quat relative = state.orientation[p].conjugate() * state.orientation[c] * joint.rest_relative.conjugate();
    const double along = dot(relative.vec(), joint.axis_parent);
    const double squared = relative.w * relative.w + along * along;
    // Zero only for a relative rotation by π about an axis ⟂ u: no angle about u to read.
    if (!(squared > 1e-24))
      throw Error(message("joint '", joint.name, "': the state turns the child by π about an axis across the joint; ",
                          "no joint angle can be read from it"));
    const double scale = 1.0 / std::sqrt(squared);
    joint_rotation = {relative.w * scale, joint.axis_parent.x * (along * scale), joint.axis_parent.y * (along * scale),
                      joint.axis_parent.z * (along * scale)};
    q = 0.0;
    rate = dot(axis, state.angular_velocity[c] - state.angular_velocity[p]);
    return;
  }
  joint_rotation = Quat::identity();
  const Vec3 offset_parent = state.orientation[p].rotate(joint.anchor_parent);
  const Vec3 offset_child = state.orientation[c].rotate(joint.anchor_child);
  const Vec3 separation = state.position[c] + offset_child - state.position[p] - offset_parent;
  q = dot(separation, axis);
  rate = dot(axis, state.linear_velocity[c] + cross(state.angular_velocity[c], offset_child) - state.linear_velocity[p] -
                       cross(state.angular_velocity[p], offset_parent)) +
         dot(cross(state.angular_velocity[p], axis), separation);
}

// exp((q + δ) u) = exp(δ u) ⊗ exp(q u): both turn about u, so the product is the sum of
// two half angles (a rotation of (w, s) in the plane).
Quat turned_further(const Quat& joint_rotation, const Vec3& axis, double angle) {
  const double c = std::cos(0.5 * angle), s = std::sin(0.5 * angle);
  const double along = dot(joint_rotation.vec(), axis);
  const double w = c * joint_rotation.w - s * along, v = c * along + s * joint_rotation.w;
  return {w, axis.x * v, axis.y * v, axis.z * v};
}

// build_tree, then the check that no two shapes may collide.
void build_validated_tree(const Model& model, ArticulatedRecord& record) {
  build_tree(model, record);
  record.shape_count = model.shape_count();
  record.actuator_count = model.actuator_count();
  std::vector<std::pair<int, int>> excluded;
  collision::excluded_body_pairs(model, excluded);
  for (int a = 0; a < model.shape_count(); ++a)
    for (int b = a + 1; b < model.shape_count(); ++b)
      if (collision::may_collide(model, excluded, a, b))
        throw Error(message("shapes '", model.shapes[static_cast<std::size_t>(a)].name, "' and '",
                            model.shapes[static_cast<std::size_t>(b)].name,
                            "' may collide: reduced coordinates do not handle contacts (set their collision_mask to 0, "
                            "exclude the pair, or use \"coordinates\": \"maximal\")"));
}

// Whether the record's tree was built for this model: the same Model object, and — in case
// another model now sits at the same address — the same counts and, link by link, the same
// joint between the same bodies (O(n), every step).
bool tree_describes(const ArticulatedRecord& record, const Model& model) {
  if (record.tree_model != &model || record.body_link.size() != model.bodies.size() ||
      record.links.size() != model.joints.size() || record.shape_count != model.shape_count() ||
      record.actuator_count != model.actuator_count())
    return false;
  for (const ArticulatedLink& link : record.links) {
    const Joint& joint = model.joints[static_cast<std::size_t>(link.joint)];
    if (joint.child != link.body || joint.parent != link.parent_body || (joint.type == JointType::Revolute) != link.revolute)
      return false;
  }
  return true;
}

}  // namespace

void validate_reduced_coordinates(const Model& model) {
  ArticulatedRecord record;
  build_validated_tree(model, record);
}

void solve_mass_matrix(const ArticulatedRecord& record, std::span<double> values) {
  const auto n = static_cast<std::size_t>(record.size());
  const double* factor = record.mass_factor.data();
  for (std::size_t i = 0; i < n; ++i) {  // L z = b
    double sum = values[i];
    for (std::size_t k = 0; k < i; ++k) sum -= factor[i * n + k] * values[k];
    values[i] = sum * record.inverse_diagonal[i];
  }
  for (std::size_t i = n; i-- > 0;) {  // Lᵀ x = z, by rows of L (contiguous): x_i, then z_k −= L_ik x_i
    const double x = values[i] * record.inverse_diagonal[i];
    values[i] = x;
    for (std::size_t k = 0; k < i; ++k) values[k] -= factor[i * n + k] * x;
  }
}

std::size_t free_servo_block(const ArticulatedRecord& record, double h, std::span<double> block) {
  const std::size_t s = record.servos.size(), n = static_cast<std::size_t>(record.size());
  std::size_t row = 0;
  for (const ArticulatedServo& servo : record.servos) {
    if (servo.torque_bound != 0) continue;
    std::size_t column = 0;
    for (std::size_t j = 0; j < s; ++j)
      if (record.servos[j].torque_bound == 0)
        block[row * s + column++] = h * record.servo_columns[j * n + static_cast<std::size_t>(servo.link)];
    ++row;
  }
  return row;
}

namespace {

// The servos' boxed problem: τ ∈ [−T, T]^s with, for each servo j, w_j = a_j + (B τ)_j − ω*_j
// zero where τ_j is inside its box, ≤ 0 at +T_j (the rate not reached pushing forward), ≥ 0
// at −T_j — the optimality conditions of min ½ τᵀBτ + (a − ω*)ᵀτ over the box, B SPD. Solved
// exactly by primal–dual active-set passes (Hintermüller, Ito & Kunisch 2002), each one small
// solve on the servos inside their box; returns the passes, or −1 if they did not settle.
int solve_servos(ArticulatedRecord& record, double h) {
  const std::size_t s = record.servos.size(), n = static_cast<std::size_t>(record.size());
  const std::vector<double>& free_rate = record.servo_free_rate;
  const std::vector<double>& bound = record.servo_bound;
  constexpr double kTolerance = 1e-12;
  for (ArticulatedServo& servo : record.servos) servo.torque_bound = 0;
  const int max_passes = 4 * static_cast<int>(s) + 10;
  for (int pass = 1; pass <= max_passes; ++pass) {
    // The servos inside their box: B_ff τ_f = ω*_f − a_f − B_fc τ_c.
    std::size_t m = 0;
    for (std::size_t i = 0; i < s; ++i) {
      ArticulatedServo& servo = record.servos[i];
      if (servo.torque_bound != 0) {
        servo.torque = servo.torque_bound * bound[i];
        continue;
      }
      double rhs = servo.target_rate - free_rate[i];
      for (std::size_t j = 0; j < s; ++j)
        if (record.servos[j].torque_bound != 0)
          rhs -= h * record.servo_columns[j * n + static_cast<std::size_t>(servo.link)] * record.servos[j].torque_bound *
                 bound[j];
      record.servo_rhs[m++] = rhs;
    }
    free_servo_block(record, h, record.servo_matrix);
    if (m > 0 && !solve::cholesky_factorize(record.servo_matrix.data(), m, s)) return -1;
    solve::cholesky_solve(record.servo_matrix.data(), m, s, record.servo_rhs.data());
    std::size_t row = 0;
    for (ArticulatedServo& servo : record.servos)
      if (servo.torque_bound == 0) servo.torque = record.servo_rhs[row++];
    // New sets: free torques beyond their bound clamp; clamped ones whose rate overshoots free.
    bool changed = false;
    for (std::size_t i = 0; i < s; ++i) {
      ArticulatedServo& servo = record.servos[i];
      double rate = free_rate[i];
      for (std::size_t j = 0; j < s; ++j)
        rate += h * record.servo_columns[j * n + static_cast<std::size_t>(servo.link)] * record.servos[j].torque;
      const double w = rate - servo.target_rate;
      const double slack = kTolerance * (1.0 + std::abs(servo.target_rate));
      int next = servo.torque_bound;
      if (servo.torque_bound == 0 && servo.torque > bound[i] * (1 + kTolerance)) next = 1;
      if (servo.torque_bound == 0 && servo.torque < -bound[i] * (1 + kTolerance)) next = -1;
      if (servo.torque_bound == 1 && w > slack) next = 0;
      if (servo.torque_bound == -1 && w < -slack) next = 0;
      if (next != servo.torque_bound) {
        servo.torque_bound = next;
        changed = true;
      }
    }
    if (!changed) return pass;
  }
  return -1;
}

}  // namespace

StepStatus step_reduced(const Model& model, const Params& params, const State& state_in, std::span<const double> controls,
                        State& state_out, ArticulatedRecord& record) {
  if (!tree_describes(record, model)) {
    record.tree_model = nullptr;
    build_validated_tree(model, record);
    record.tree_model = &model;
  }

  const ParamLayout& layout = model.layout;
  const auto n = static_cast<std::size_t>(record.size());
  const double h = model.dt;
  record.loads.resize(n);
  record.frames.resize(n);
  record.q.resize(n);
  record.velocity.resize(n);
  record.acceleration.resize(n);
  record.applied.assign(n, 0.0);
  record.bias.resize(n);
  record.mass_factor.assign(n * n, 0.0);
  record.composite.resize(n);
  record.subtree_force.resize(n);
  const Vec3 gravity = params.vec3_at(layout.gravity);
  const Spatial origin_acceleration{Vec3{}, -gravity};  // gravity as an upward acceleration of the base

  // Coordinates, then the kinematics and body quantities at the start of the step.
  for (std::size_t k = 0; k < n; ++k) {
    ArticulatedLink& link = record.links[k];
    const Joint& joint = model.joints[static_cast<std::size_t>(link.joint)];
    LinkFrame& frame = record.frames[k];
    read_coordinate(joint, link.revolute, state_in, frame.joint_rotation, record.q[k], record.velocity[k]);
    const bool static_parent = link.parent < 0;
    const ArticulatedLink* parent = static_parent ? nullptr : &record.links[static_cast<std::size_t>(link.parent)];
    const auto pb = static_cast<std::size_t>(link.parent_body);
    const LinkPose pose =
        static_parent ? place_link(joint, link.revolute, state_in.orientation[pb], state_in.orientation[pb].to_matrix(),
                                   state_in.position[pb], frame.joint_rotation, record.q[k])
                      : place_link(joint, link.revolute, record.frames[static_cast<std::size_t>(link.parent)].orientation,
                                   record.frames[static_cast<std::size_t>(link.parent)].rotation, parent->com,
                                   frame.joint_rotation, record.q[k]);
    frame.orientation = pose.orientation;
    frame.rotation = pose.rotation;
    link.com = pose.com;
    link.motion_subspace = pose.motion_subspace;
    const Spatial joint_velocity = pose.motion_subspace * record.velocity[k];
    const Spatial parent_velocity = static_parent ? Spatial{} : parent->velocity;
    link.velocity = parent_velocity + joint_velocity;
    link.bias_acceleration = (static_parent ? origin_acceleration : parent->bias_acceleration) +
                             cross_motion(parent_velocity, joint_velocity);
    const auto b = static_cast<std::size_t>(link.body);
    const double mass = params.at(layout.body_mass[b]);
    const Quat& principal_frame = model.bodies[b].principal_frame;
    link.principal_rotation =
        principal_frame == Quat::identity() ? pose.rotation : pose.rotation * principal_frame.to_matrix();
    // R diag(I) Rᵀ, R = principal_rotation: Σ_i I_i r_i r_iᵀ over R's columns.
    const Vec3 moments = params.vec3_at(layout.body_inertia[b]);
    Mat3 inertia_com;
    for (int row = 0; row < 3; ++row)
      for (int column = 0; column <= row; ++column) {
        const Mat3& r = link.principal_rotation;
        inertia_com(row, column) = inertia_com(column, row) = moments.x * r(row, 0) * r(column, 0) +
                                                              moments.y * r(row, 1) * r(column, 1) +
                                                              moments.z * r(row, 2) * r(column, 2);
      }
    link.inertia = spatial_inertia(mass, pose.com, inertia_com);
    const double linear_damping = params.at(layout.body_linear_damping[b]);
    const double angular_damping = params.at(layout.body_angular_damping[b]);
    LinkLoads& loads = record.loads[k];
    loads.external_force = params.vec3_at(layout.body_force[b]);
    loads.external_torque = params.vec3_at(layout.body_torque[b]);
    link.loaded = linear_damping != 0.0 || angular_damping != 0.0 || loads.external_force != Vec3{} ||
                  loads.external_torque != Vec3{};
    loads.damping = spatial_inertia(mass * linear_damping, pose.com, Mat3{});
    loads.damping.rotational = loads.damping.rotational + inertia_com * angular_damping;
  }

  // C(q, q̇): recursive Newton–Euler at q̈ = 0 (Featherstone Table 5.1, in world coordinates),
  // f = I A + V ×* I V + D V − f_ext, then joint forces S·F over each subtree.
  for (std::size_t k = 0; k < n; ++k) {
    ArticulatedLink& link = record.links[k];
    link.momentum = link.inertia.apply(link.velocity);
    record.subtree_force[k] = link.inertia.apply(link.bias_acceleration) + cross_force(link.velocity, link.momentum);
    if (link.loaded) {
      const LinkLoads& loads = record.loads[k];
      const Spatial external{loads.external_torque + cross(link.com, loads.external_force), loads.external_force};
      record.subtree_force[k] += loads.damping.apply(link.velocity) - external;
    }
  }
  for (std::size_t k = n; k-- > 0;) {
    const ArticulatedLink& link = record.links[k];
    const double damping = params.at(layout.joint_damping[static_cast<std::size_t>(link.joint)]);
    record.bias[k] = dot(link.motion_subspace, record.subtree_force[k]) + damping * record.velocity[k];
    if (link.parent >= 0) record.subtree_force[static_cast<std::size_t>(link.parent)] += record.subtree_force[k];
  }

  // τ: each motor's clipped control on its joint's coordinate.
  for (std::size_t a = 0; a < controls.size(); ++a) {
    if (model.actuators[a].type != ActuatorType::Motor) continue;
    record.applied[static_cast<std::size_t>(actuator_link(record, model, a))] +=
        clipped_motor_torque(controls[a], params.at(layout.actuator_max_torque[a]));
  }

  // M(q): composite-rigid-body algorithm (Featherstone Table 6.2): M_kj = S_j · (I^C_k S_k)
  // for every ancestor j of k, I^C_k the inertia of k's subtree. Lower triangle, then L Lᵀ.
  for (std::size_t k = 0; k < n; ++k) record.composite[k] = record.links[k].inertia;
  for (std::size_t k = n; k-- > 0;)
    if (record.links[k].parent >= 0) record.composite[static_cast<std::size_t>(record.links[k].parent)] += record.composite[k];
  record.inverse_diagonal.resize(n);
  double* factor = record.mass_factor.data();
  for (std::size_t k = 0; k < n; ++k) {
    const Spatial force = record.composite[k].apply(record.links[k].motion_subspace);
    factor[k * n + k] = dot(record.links[k].motion_subspace, force);
    for (int j = record.links[k].parent; j >= 0; j = record.links[static_cast<std::size_t>(j)].parent)
      factor[k * n + static_cast<std::size_t>(j)] = dot(record.links[static_cast<std::size_t>(j)].motion_subspace, force);
  }
  for (std::size_t j = 0; j < n; ++j) {
    double pivot = factor[j * n + j];
    for (std::size_t p = 0; p < j; ++p) pivot -= factor[j * n + p] * factor[j * n + p];
    if (!(pivot > 0))
      throw Error(message("reduced step: the joint-space mass matrix is not positive definite at joint '",
                          model.joints[static_cast<std::size_t>(record.links[j].joint)].name, "' (pivot ", pivot, ")"));
    const double diagonal = std::sqrt(pivot), inverse = 1.0 / diagonal;
    factor[j * n + j] = diagonal;
    record.inverse_diagonal[j] = inverse;
    for (std::size_t i = j + 1; i < n; ++i) {
      double sum = factor[i * n + j];
      for (std::size_t p = 0; p < j; ++p) sum -= factor[i * n + p] * factor[j * n + p];
      factor[i * n + j] = sum * inverse;
    }
  }
  for (std::size_t k = 0; k < n; ++k) record.acceleration[k] = record.applied[k] - record.bias[k];
  solve_mass_matrix(record, record.acceleration);

  // Servos: their torques from the boxed problem, then q̈ += Σ M⁻¹ e_k τ_k.
  StepStatus status;
  if (!record.servos.empty()) {
    const std::size_t servo_count = record.servos.size();
    record.servo_columns.assign(servo_count * n, 0.0);
    record.servo_matrix.resize(servo_count * servo_count);
    record.servo_rhs.resize(servo_count);
    record.servo_free_rate.resize(servo_count);
    record.servo_bound.resize(servo_count);
    for (std::size_t i = 0; i < servo_count; ++i) {
      ArticulatedServo& servo = record.servos[i];
      const auto k = static_cast<std::size_t>(servo.link);
      const std::span<double> column(record.servo_columns.data() + i * n, n);
      column[k] = 1.0;
      solve_mass_matrix(record, column);
      const ArticulatedLink& link = record.links[k];
      const Quat& turn = record.frames[k].joint_rotation;
      servo.position = link.revolute ? 2.0 * std::atan2(dot(turn.vec(), model.joints[static_cast<std::size_t>(link.joint)].axis_parent), turn.w)
                                     : record.q[k];
      const auto a = static_cast<std::size_t>(servo.actuator);
      const double rate = params.at(layout.actuator_gain[a]) * (controls[a] - servo.position);
      const double max_velocity = params.at(layout.actuator_max_velocity[a]);
      servo.rate_bound = rate > max_velocity ? 1 : (rate < -max_velocity ? -1 : 0);
      servo.target_rate = servo.rate_bound == 0 ? rate : servo.rate_bound * max_velocity;
      record.servo_free_rate[i] = record.velocity[k] + h * record.acceleration[k];
      record.servo_bound[i] = params.at(layout.actuator_max_torque[a]);
    }
    const int passes = solve_servos(record, h);
    status.converged = passes > 0;
    status.iterations = passes > 0 ? passes : 0;
    for (std::size_t i = 0; i < servo_count; ++i) {
      const ArticulatedServo& servo = record.servos[i];
      record.applied[static_cast<std::size_t>(servo.link)] += servo.torque;
      for (std::size_t k = 0; k < n; ++k) record.acceleration[k] += record.servo_columns[i * n + k] * servo.torque;
    }
    // The residual: how far a servo inside its box misses its rate.
    for (const ArticulatedServo& servo : record.servos)
      if (servo.torque_bound == 0) {
        const auto k = static_cast<std::size_t>(servo.link);
        status.residual =
            std::max(status.residual, std::abs(record.velocity[k] + h * record.acceleration[k] - servo.target_rate));
      }
  }

  // Semi-implicit Euler, then forward kinematics of (q', q̇') into state_out.
  state_out.resize(model.body_count());
  state_out.time = state_in.time + h;
  for (std::size_t b = 0; b < state_in.position.size(); ++b)
    if (model.bodies[b].type != BodyType::Dynamic) {
      state_out.position[b] = state_in.position[b];
      state_out.orientation[b] = state_in.orientation[b];
      state_out.linear_velocity[b] = state_in.linear_velocity[b];
      state_out.angular_velocity[b] = state_in.angular_velocity[b];
    }
  for (std::size_t k = 0; k < n; ++k) {
    ArticulatedLink& link = record.links[k];
    const Joint& joint = model.joints[static_cast<std::size_t>(link.joint)];
    const double rate = record.velocity[k] + h * record.acceleration[k];
    const double slide = record.q[k] + h * rate;
    LinkFrame& frame = record.frames[k];
    const Quat joint_rotation =
        link.revolute ? turned_further(frame.joint_rotation, joint.axis_parent, h * rate) : frame.joint_rotation;
    const auto pb = static_cast<std::size_t>(link.parent_body);
    const LinkPose pose =
        link.parent < 0
            ? place_link(joint, link.revolute, state_in.orientation[pb], state_in.orientation[pb].to_matrix(),
                         state_in.position[pb], joint_rotation, slide)
            : place_link(joint, link.revolute, state_out.orientation[pb],
                         record.frames[static_cast<std::size_t>(link.parent)].rotation, state_out.position[pb],
                         joint_rotation, slide);
    frame.orientation = pose.orientation;  // the end pose, for the children
    frame.rotation = pose.rotation;
    link.end_motion_subspace = pose.motion_subspace;
    link.end_velocity = pose.motion_subspace * rate;
    if (link.parent >= 0) link.end_velocity += record.links[static_cast<std::size_t>(link.parent)].end_velocity;
    link.end_com = pose.com;
    const auto b = static_cast<std::size_t>(link.body);
    state_out.position[b] = pose.com;
    state_out.orientation[b] = pose.orientation;
    state_out.linear_velocity[b] = link.end_velocity.linear + cross(link.end_velocity.angular, pose.com);
    state_out.angular_velocity[b] = link.end_velocity.angular;
  }
  return status;
}

}  // namespace diffphys::rigid
