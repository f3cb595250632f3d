// rigid/articulated.hpp — reduced (joint) coordinates for contact-free trees of revolute and
// prismatic joints: the step taken when SolverSettings::coordinates is Coordinates::Reduced.
//
// Why it exists: in maximal coordinates a chain of N hinges is 6N velocities held together
// by 5N constraint rows that are solved and projected every step; in joint coordinates it is
// N numbers, the joints hold exactly (no drift, no projection) and the step and its gradient
// cost a fraction (docs/BENCHMARKS.md). It serves what touches nothing: arms in free space,
// pendulums and chains, trajectory optimisation of a manipulator — what MuJoCo and
// Pinocchio simulate in the same coordinates.
//
// The State stays the maximal one. A step reads the joint coordinates q, q̇ of state_in (the
// definitions of rigid/joints.hpp: the revolute angle of q_parentᵀ q_child q_restᵀ about the
// parent-frame axis, the prismatic slide of the child's anchor along it, their rates), takes
// one semi-implicit Euler step
//   q̇' = q̇ + h M(q)⁻¹ (τ(u) − C(q, q̇)),   q' = q + h q̇',
// and writes every body's pose and velocity by forward kinematics. M comes from the
// composite-rigid-body algorithm and C from recursive Newton–Euler (Featherstone 2008,
// "Rigid Body Dynamics Algorithms", §6.2 and §5.3), both in world coordinates with spatial
// vectors taken at the world origin, so no transform is needed between links (Featherstone
// §2.9: a tree's spatial quantities can all live in one frame). C holds gravity, velocity
// products, joint damping, body damping (explicit: −m d_lin v at the centre of mass,
// −d_ang I ω) and the external forces of Params.
//
// Supported: every dynamic body the child of exactly one revolute or prismatic joint, no
// joint limits, motors and servos (at most one servo per joint), and no pair of shapes that
// may collide.
// validate_reduced_coordinates() says which item breaks this; step() refuses such a model.
#pragma once

#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys::rigid {

// A spatial vector in world coordinates at the world origin (Featherstone §2.2). As a motion:
// (ω, v_O), v_O the velocity of the body-fixed point passing through the origin. As a force:
// (n_O, f), n_O the moment about the origin.
struct Spatial {
  Vec3 angular, linear;
};

inline Spatial operator+(const Spatial& a, const Spatial& b) { return {a.angular + b.angular, a.linear + b.linear}; }
inline Spatial operator-(const Spatial& a, const Spatial& b) { return {a.angular - b.angular, a.linear - b.linear}; }
inline Spatial operator*(const Spatial& a, double s) { return {a.angular * s, a.linear * s}; }
inline Spatial& operator+=(Spatial& a, const Spatial& b) {
  a.angular += b.angular;
  a.linear += b.linear;
  return a;
}
inline Spatial& operator-=(Spatial& a, const Spatial& b) {
  a.angular -= b.angular;
  a.linear -= b.linear;
  return a;
}
// motion · force (power)
inline double dot(const Spatial& motion, const Spatial& force) {
  return dot(motion.angular, force.angular) + dot(motion.linear, force.linear);
}
// a ×ₘ b, the derivative of motion b moving with velocity a (Featherstone eq. 2.31)
inline Spatial cross_motion(const Spatial& a, const Spatial& b) {
  return {cross(a.angular, b.angular), cross(a.angular, b.linear) + cross(a.linear, b.angular)};
}
// a ×* f, the derivative of force f moving with velocity a (Featherstone eq. 2.32)
inline Spatial cross_force(const Spatial& a, const Spatial& f) {
  return {cross(a.angular, f.angular) + cross(a.linear, f.linear), cross(a.angular, f.linear)};
}

// A spatial inertia about the world origin: mass m, first moment h = m c (c the centre of
// mass) and rotational inertia Ī = I_c − m [c]ײ about the origin (Featherstone eq. 2.63).
struct SpatialInertia {
  double mass = 0.0;
  Vec3 first_moment;
  Mat3 rotational;

  // The momentum I·V = (Ī ω + h × v_O, m v_O + ω × h).
  Spatial apply(const Spatial& velocity) const {
    return {rotational * velocity.angular + cross(first_moment, velocity.linear),
            velocity.linear * mass + cross(velocity.angular, first_moment)};
  }
  SpatialInertia& operator+=(const SpatialInertia& o) {
    mass += o.mass;
    first_moment += o.first_moment;
    rotational = rotational + o.rotational;
    return *this;
  }
};

// The inertia of a body of mass m at c with inertia I_c about c (world frame), about the origin.
inline SpatialInertia spatial_inertia(double mass, const Vec3& com, const Mat3& inertia_com) {
  // −m [c]ײ = m (|c|² 1 − c cᵀ)
  SpatialInertia inertia{mass, com * mass, inertia_com};
  const double squared = dot(com, com);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) inertia.rotational(i, j) += mass * ((i == j ? squared : 0.0) - com[i] * com[j]);
  return inertia;
}

// One link of the tree: a dynamic body and the joint that carries it, in an order where a
// parent's link comes before its children's. What the backward pass reads of it; the rest
// of a step's quantities live apart (LinkLoads, LinkFrame) so that it stays small.
struct ArticulatedLink {
  int joint = 0, body = 0, parent_body = 0;
  int parent = -1;  // the parent body's link, or -1 when the parent is static
  bool revolute = true;
  bool loaded = false;  // the body has damping or an external force or torque (LinkLoads)
  // At the start of the step (forward kinematics of q, q̇):
  Mat3 principal_rotation;  // of the body's principal axes (rotation · principal frame)
  Vec3 com;                 // centre of mass, m
  Spatial motion_subspace;  // S: revolute (a, o × a) about the joint point o; prismatic (0, a)
  Spatial velocity;         // V = V_parent + S q̇
  Spatial momentum;         // I V
  Spatial bias_acceleration;  // A at q̈ = 0, gravity included as the origin's upward acceleration
  SpatialInertia inertia;     // of the body alone
  // At the end of the step (written into state_out):
  Spatial end_motion_subspace, end_velocity;
  Vec3 end_com;
};

// A body's damping and external load (zero unless ArticulatedLink::loaded).
struct LinkLoads {
  SpatialInertia damping;  // D: −D V is the body-damping force
  Vec3 external_force, external_torque;  // of Params, world frame
};

// Forward kinematics scratch of one link: its pose at the start of the step, overwritten by
// its pose at the end (parents first, so a child always finds its parent's current pose).
struct LinkFrame {
  Quat joint_rotation;  // revolute: exp(q u), the child's turn about the parent-frame axis u
  Quat orientation;
  Mat3 rotation;
};

// A servo in joint coordinates (Degrave et al. 2019, §2.2, as rigid/inequality_rows.hpp has it
// in maximal coordinates): the joint's rate after the step is the target rate
// ω* = clamp(gain (target − q), ±max_velocity) unless reaching it takes a torque beyond
// ±max_torque, which then holds at the bound. The servos of a step together are a boxed
// problem in their torques τ_s: q̇'_s = a_s + B τ_s, B = h (M⁻¹)_ss (solve_servos).
struct ArticulatedServo {
  int actuator = 0, link = 0;
  double position = 0.0;     // q read for the servo, rad or m
  double target_rate = 0.0;  // ω*
  int rate_bound = 0;        // ±1: ω* = ±max_velocity; 0: gain (target − q)
  int torque_bound = 0;      // ±1: τ = ±max_torque (the rate not reached); 0: between
  double torque = 0.0;       // τ, N·m or N
};

// What one reduced step keeps for its backward pass (adjoint/articulated_vjp.hpp).
struct ArticulatedRecord {
  // The model whose tree `links` and `body_link` describe: validated and ordered on the first
  // step with a model (a Model is immutable once built, DESIGN.md §2), reused after while the
  // same model (address, counts, each link's joint and bodies) comes back.
  const Model* tree_model = nullptr;
  int shape_count = 0, actuator_count = 0;
  std::vector<ArticulatedLink> links;  // (n) in tree order
  std::vector<LinkLoads> loads;        // (n)
  std::vector<LinkFrame> frames;       // (n)
  std::vector<int> body_link;          // (nbody) the link of each body, -1 for static bodies
  // (n) q, q̇, q̈ at the start of the step. q is read for prismatic joints only: a revolute
  // joint's q enters through exp(q u) alone, which is read from the state without atan2 and
  // advanced by exp(h q̇' u) (LinkFrame::joint_rotation).
  std::vector<double> q, velocity, acceleration;
  std::vector<double> applied;       // (n) τ: motor torques or forces on each coordinate
  std::vector<double> bias;          // (n) C(q, q̇)
  std::vector<double> mass_factor;   // (n × n) row-major Cholesky factor L of M = L Lᵀ
  std::vector<double> inverse_diagonal;  // (n) 1 / L_kk
  std::vector<ArticulatedServo> servos;   // (nservo) in actuator order
  std::vector<double> servo_columns;      // (nservo × n) M⁻¹ e_k of each servo's link k
  std::vector<double> servo_free_rate, servo_bound;  // (nservo) a_s (the rates without servos), T_s
  std::vector<double> servo_matrix, servo_rhs;  // solve_servos scratch: B_ff (stride nservo), its right side
  std::vector<SpatialInertia> composite;  // (n) CRBA scratch
  std::vector<Spatial> subtree_force;     // (n) RNEA scratch
  int size() const { return static_cast<int>(links.size()); }
};

// Throws Error naming the first item that reduced coordinates cannot simulate: a joint that
// is not revolute or prismatic, a joint with limits, a servo, a dynamic body without exactly
// one parent joint, a joint loop, a pair of shapes that may collide.
void validate_reduced_coordinates(const Model& model);

// One step in joint coordinates (see above); same contract as diffphys::step. Validates the
// model and orders its tree on the first call with a model (see ArticulatedRecord). The
// status reports the servos' boxed problem (iterations of its active set); a step without
// servos always converges.
StepStatus step_reduced(const Model& model, const Params& params, const State& state_in, std::span<const double> controls,
                        State& state_out, ArticulatedRecord& record);

// Writes B_ff = h (M⁻¹)_ff of the servos inside their box (torque_bound 0), in servo order,
// into the leading m × m part of `block` with row stride nservo; returns m. The servos' small
// systems, forward (solve_servos) and backward (adjoint/articulated_vjp.cpp), factorise it in
// place with solve/dense_cholesky.hpp.
std::size_t free_servo_block(const ArticulatedRecord& record, double h, std::span<double> block);

// The link of the joint that actuator `a` drives.
inline int actuator_link(const ArticulatedRecord& record, const Model& model, std::size_t a) {
  const Joint& joint = model.joints[static_cast<std::size_t>(model.actuators[a].joint)];
  return record.body_link[static_cast<std::size_t>(joint.child)];
}

// Solves L Lᵀ x = b in place (b ← x) with the record's factor.
void solve_mass_matrix(const ArticulatedRecord& record, std::span<double> values);

}  // namespace diffphys::rigid
