// diffphys/model.hpp — the Model: everything constant during a rollout.
//
// A Model is built once (ModelBuilder, or a scene file) and never changes afterwards; every
// stage takes it by const reference. It holds the *structure* of the world — bodies, shapes,
// joints, actuators, the time step and solver settings — and the layout of the flat
// parameter vector θ (ParamLayout). The *values* of physical constants (masses, sizes,
// friction, gains, gravity, ...) live in Params beside the Model, so that a gradient has the
// same layout as what it differentiates (DESIGN.md §2, STYLE.md practice 1).
//
// Body 0 is always the world: static, at the origin, never in a joint's child slot. Ground
// planes are shapes of the world body (or of any other static body).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diffphys/convex_mesh.hpp"
#include "diffphys/math.hpp"

namespace diffphys {

// Static: never moves. Dynamic: moved by forces and constraints. Kinematic: moved by its own
// state velocity only (p⁺ = p + h v, q⁺ = exp(h ω) q, v unchanged); the program prescribes
// it by writing the state between steps (MuJoCo's mocap bodies). To every constraint row it
// is infinitely massive but moving: a row's relative velocity includes its velocity
// (docs/simulation.md, "Kinematic bodies").
enum class BodyType { Static, Dynamic, Kinematic };

// Shape frames: a sphere is centred on its frame's origin; a box's faces are normal to its
// frame's axes; a capsule's segment runs along its frame's z axis from -half_length to
// +half_length; a plane passes through its frame's origin with normal +z (static bodies only);
// a convex mesh is the hull Model::meshes[Shape::mesh] in its frame, times a uniform scale.
// A cylinder's axis is its frame's z axis, from -half_length to +half_length; its mass and
// inertia are exact, but it collides as the capsule of the same radius and half length
// (rounded caps that reach `radius` further along the axis) until a cylinder narrow phase
// exists (docs/robot-formats.md). An ellipsoid is centred on its frame's origin with its
// semi-axes along the frame's x, y and z axes (collision/ellipsoid_contacts.cpp).
enum class ShapeType { Sphere, Box, Capsule, Plane, ConvexMesh, Cylinder, Ellipsoid };

// Planar: the child translates in the plane through the anchor normal to `axis` and turns
// about `axis` (3 degrees of freedom; docs/scene-format.md, "Joint types").
enum class JointType { Fixed, Revolute, Prismatic, Ball, Universal, Planar };

// Motor: the control is a torque (N·m) or force (N) along the joint's degree of freedom.
// Servo (Degrave et al. 2019, §2.2): the control is a target position; the servo drives the
// joint velocity towards gain·(target − position), clipped to ±max_velocity, with a torque
// bounded by ±max_torque (a boxed velocity constraint in the complementarity problem).
enum class ActuatorType { Motor, Servo };

enum class SolverType { InteriorPoint, ProjectedGaussSeidel };

// How the velocity problem of a maximal-coordinates step is posed (docs/simulation.md).
// Complementarity: the hard mixed LCP, solved by SolverType's method; friction is a pyramid.
// Convex: every row is a stiff, damped compliant constraint (Catto 2011; MuJoCo's and Drake
// SAP's regularisation), friction an elliptic cone, and the step the unique minimiser of a
// strictly convex function of the velocities, solved by Newton's method (solve/convex.hpp).
enum class Formulation { Complementarity, Convex };

// Where a contact's impulse acts on its two bodies (docs/simulation.md, "Contact points").
// Midpoint: both at the point midway between the surfaces (MuJoCo's and Drake's contact
// frame). Surfaces: each body at its own surface point (the midpoint ± gap/2 along the
// normal), so that an impulse on an open or overlapping contact has no moment about the
// point where the body touches: a sphere on a plane keeps its angular momentum about its
// lowest point through bounces and slides, as every contact force conserves it.
enum class ContactPoint { Midpoint, Surfaces };

// The row classes of the convex formulation, each with its own compliance parameters.
enum class RowClass { Contact, Joint, Limit, Servo };
inline constexpr int kRowClassCount = 4;
const char* row_class_name(RowClass row_class);  // "contact", "joint", "limit", "servo"

// How a step describes an articulated body. Maximal: every body has 6 velocities and joints
// are constraint rows of the mixed LCP (anything: contacts, limits, servos, loops). Reduced:
// one coordinate per joint, the joints exact by construction (Featherstone's algorithms); for
// contact-free trees of revolute and prismatic joints with motors and servos (rigid/articulated.hpp says
// what is supported, docs/simulation.md "Reduced coordinates").
enum class Coordinates { Maximal, Reduced };

struct Body {
  std::string name;
  BodyType type = BodyType::Dynamic;
  // Rotation from the principal-axes frame to the body frame: I_body = R_p diag(I) R_pᵀ,
  // where diag(I) are the principal moments held in Params.
  Quat principal_frame;
  int first_shape = 0;  // shapes [first_shape, first_shape + shape_count) belong to this body
  int shape_count = 0;
};

struct Shape {
  std::string name;
  ShapeType type = ShapeType::Sphere;
  int body = 0;
  Vec3 local_position;     // shape frame origin in the body frame (body origin = centre of mass), m
  Quat local_orientation;  // shape frame in the body frame
  std::uint32_t collision_group = 1;   // this shape's bits
  std::uint32_t collision_mask = ~0u;  // the bits it collides with (both sides must agree)
  int mesh = -1;  // convex mesh shapes: index into Model::meshes; -1 otherwise
};

struct Joint {
  std::string name;
  JointType type = JointType::Revolute;
  int parent = 0;  // body index; 0 is the world
  int child = 0;   // body index, always dynamic (the parent may be static, dynamic or kinematic)
  Vec3 anchor_parent;  // joint anchor in the parent's body frame, m
  Vec3 anchor_child;   // the same point in the child's body frame, m
  Vec3 axis_parent;    // unit axis in the parent frame (revolute, prismatic; universal's first;
                       // planar: the plane's normal and the rotation axis)
  Vec3 axis_child;     // the same axis in the child frame at build time
  Vec3 axis2_child;    // universal joint only: second axis, fixed in the child frame
  Vec3 axis2_parent;   // universal: the second axis in the parent frame at build time;
                       // planar: the in-plane direction of dof 0, fixed in the parent frame
  Vec3 axis3_parent;   // planar only: the in-plane direction of dof 1, fixed in the parent frame
  Quat rest_relative;  // q_parentᵀ ⊗ q_child at build time: the zero of the joint's coordinates
  bool has_limits = false;
  double lower_limit = 0.0;  // rad or m, per degree of freedom (same bounds for each; not planar)
  double upper_limit = 0.0;
  bool collide_connected = false;  // may the two joined bodies collide? (default: no)
};

// Number of size parameters of a shape type: sphere (radius), box (half extents), capsule
// (radius, half length), plane (none), convex mesh (uniform scale), cylinder (radius, half length),
// ellipsoid (semi-axes).
// The names of the scene format (docs/scene-format.md): "sphere", "box", "capsule", "plane",
// "mesh", "cylinder", "ellipsoid"; "fixed", "revolute", "prismatic", "ball", "universal", "planar".
const char* type_name(ShapeType type);
const char* type_name(JointType type);
const char* type_name(BodyType type);  // "static", "dynamic", "kinematic"

constexpr int shape_size_count(ShapeType type) {
  switch (type) {
    case ShapeType::Sphere: return 1;
    case ShapeType::Box: return 3;
    case ShapeType::Ellipsoid: return 3;
    case ShapeType::Capsule: return 2;
    case ShapeType::Cylinder: return 2;
    case ShapeType::Plane: return 0;
    case ShapeType::ConvexMesh: return 1;
  }
  return 0;
}

// Number of actuated/limited degrees of freedom (coordinates) of a joint type.
constexpr int joint_dof_count(JointType type) {
  switch (type) {
    case JointType::Revolute:
    case JointType::Prismatic: return 1;
    case JointType::Universal: return 2;
    case JointType::Ball:
    case JointType::Planar: return 3;
    case JointType::Fixed: return 0;
  }
  return 0;
}

// Number of equality rows a joint contributes to the velocity-level problem.
constexpr int joint_constraint_count(JointType type) {
  switch (type) {
    case JointType::Fixed: return 6;
    case JointType::Revolute: return 5;
    case JointType::Prismatic: return 5;
    case JointType::Ball: return 3;
    case JointType::Universal: return 4;
    case JointType::Planar: return 3;
  }
  return 0;
}

// Equality constraints (docs/simulation.md, "Equality constraints"): soft, each a spring–damper
// of its own time constant and damping ratio (θ's "equality/<name>/time_constant" and
// ".../damping_ratio", MuJoCo's solref), posed as compliant rows of the convex formulation and
// never projected. Connect (3 rows): a point of body_a coincides with a point of body_b,
// φ = p_a + R_a r_a − (p_b + R_b r_b) (MJCF <equality connect>). Distance (1 row): two body
// points stay `length` apart, φ = |p_b + R_b r_b − p_a − R_a r_a| − length (MJCF <equality
// tendon> on a spatial tendon between two sites). Weld (6 rows): connect's three, and body_b's
// orientation held at `relative` to body_a's, φ = log(q_b relativeᵀ q_aᵀ) (the fixed joint's
// rotation lock; MJCF <equality weld>). Either body may be the world (body 0).
enum class EqualityType { Connect, Distance, Weld };

constexpr int equality_constraint_count(EqualityType type) {
  return type == EqualityType::Connect ? 3 : type == EqualityType::Weld ? 6 : 1;
}

struct Equality {
  std::string name;
  EqualityType type = EqualityType::Connect;
  int body_a = 0, body_b = 0;
  Vec3 anchor_a;  // the point in body_a's frame (origin = centre of mass), m
  Vec3 anchor_b;  // the point in body_b's frame, m
  double length = 0.0;  // distance only: the held length, m (> 0)
  Quat relative;        // weld only: body_b's orientation relative to body_a's held (q_b = q_a · relative)
};
const char* type_name(EqualityType type);  // "connect", "distance", "weld"

struct Actuator {
  std::string name;
  ActuatorType type = ActuatorType::Motor;
  int joint = 0;
  // Which coordinate of the joint: 0 for revolute/prismatic, 0 or 1 for universal; planar:
  // 0 and 1 the translations along its two in-plane directions (m), 2 the angle about its axis.
  int dof = 0;
};

// How joint drift is kept small: after each step, positions are projected back onto the
// joint manifold by Newton iterations on φ(q) = 0 in the mass metric (post-stabilisation,
// Cline & Pai 2003), so no Baumgarte term enters the velocity problem — except for the
// convex formulation's flexible joints (joint time constant ≥ dt), which are springs on φ
// and are not projected (docs/simulation.md, "The convex formulation").
struct SolverSettings {
  Coordinates coordinates = Coordinates::Maximal;
  // Fixed when the model is built: the convex formulation adds its compliance slices to θ.
  Formulation formulation = Formulation::Complementarity;
  SolverType type = SolverType::InteriorPoint;
  int max_iterations = 100;        // interior point: Newton iterations; PGS: sweeps
  double tolerance = 1e-10;        // on the mixed-LCP residual, a velocity (m/s; solve/mlcp.hpp)
  int friction_directions = 4;     // edges of the polyhedral friction cone (even, >= 4)
  // Complementarity: the pyramid's first direction follows the contact's tangential slip under
  // the free motion, so that friction opposing a slip meets μλ_n at any heading (the pyramid
  // is otherwise a polygon inscribed in Coulomb's circle); false: a fixed basis of the normal.
  // rigid/inequality_rows.hpp, docs/simulation.md.
  bool slip_aligned_friction = true;
  double contact_margin = 0.01;    // contacts are generated when the gap is below this, m
  // Speculative contacts (docs/simulation.md, "Speculative contacts"): a contact point whose
  // gap is at or above contact_margin is still generated when the gap is below
  // speculative_factor · h · (s_n⁺ + μ‖v_t‖), its relative approach speed plus μ times its
  // sliding speed at the start of the step, so that a fast contact appears while its row
  // still exerts no force instead of whole steps late. A scene where no point moves that
  // fast (h · (s_n⁺ + μ‖v_t‖) · factor < contact_margin) has exactly the contacts of the
  // fixed margin. 0 turns it off; must be 0 or ≥ 1.
  double speculative_factor = 2.0;
  ContactPoint contact_point = ContactPoint::Midpoint;
  double contact_erp = 0.2;        // fraction of penetration removed per step (contacts only)
  // Complementarity: penetration tolerated before correction, m. Convex: the band above a
  // contact or a limit over which its target turns smoothly from the open gap's −gap/h to the
  // spring's (rigid/compliance.hpp), m (rad for an angular limit).
  double penetration_slop = 1e-4;
  double restitution_threshold = 0.01;  // approach speeds below this do not bounce, m/s
  // Bounces at their time of impact inside the step (docs/simulation.md, "Time of impact"):
  // a contact that closes and bounces this step moves its free bodies to the contact first,
  // so that a bounce height is a smooth function of where the fall started.
  bool time_of_impact = true;
  // PGS starts from the previous step's impulses (rigid/warm_start.hpp). A step then depends
  // on the previous call on its workspace; Rollout turns this off so that the segments it
  // recomputes during backward are bit-identical to the forward pass.
  bool warm_start = true;
  int stabilization_iterations = 4;     // max Newton iterations of the joint projection
  double stabilization_tolerance = 1e-10;  // joint position error at which projection stops, m
  // State health (docs/robustness.md, "State health"): a step that leaves a body faster than
  // these is reported in its StepStatus as too_fast and not converged. No shipped scene comes
  // within a factor of 20 of either; a body this fast has left the scale the scene describes.
  double max_speed = 1000.0;            // linear speed of a body's centre of mass, m/s
  double max_angular_speed = 10000.0;   // angular speed of a body, rad/s
};

// Where each physical constant sits in the flat parameter vector θ. Offsets are -1 where a
// slot does not apply (a static or kinematic body has no mass; a sphere has no half-extents).
struct ParamLayout {
  struct Slice {
    std::string name;  // e.g. "body/ball/mass", "gravity", "joint/elbow/damping"
    int offset = 0;
    int size = 0;
  };
  std::vector<Slice> slices;  // in layout order; slices tile [0, size)
  int size = 0;

  int gravity = -1;                        // 3: m/s²
  std::vector<int> body_mass;              // (nbody) 1: kg
  std::vector<int> body_inertia;           // (nbody) 3: principal moments, kg·m²
  std::vector<int> body_friction;          // (nbody) 1: Coulomb coefficient
  std::vector<int> body_restitution;       // (nbody) 1: in [0, 1]
  std::vector<int> body_linear_damping;    // (nbody) 1: 1/s
  std::vector<int> body_angular_damping;   // (nbody) 1: 1/s
  std::vector<int> body_force;             // (nbody) 3: world-frame external force, N
  std::vector<int> body_torque;            // (nbody) 3: world-frame external torque, N·m
  std::vector<int> shape_size;             // (nshape) sphere 1 (radius); box 3 (half extents);
                                           // capsule, cylinder 2 (radius, half length); plane 0;
                                           // convex mesh 1 (scale, dimensionless)
  std::vector<int> joint_damping;          // (njoint) 1: N·m·s/rad or N·s/m per coordinate
  std::vector<int> actuator_gain;          // (nactuator) servo 1: 1/s
  std::vector<int> actuator_max_torque;    // (nactuator) 1: N·m or N (motor: control clip)
  std::vector<int> actuator_max_velocity;  // (nactuator) servo 1: rad/s or m/s
  std::vector<int> equality_time_constant;  // (nequality) 1: τ, s
  std::vector<int> equality_damping_ratio;  // (nequality) 1: ζ
  // Formulation::Convex only (−1 otherwise), one per RowClass: the time constant τ (s) and
  // damping ratio ζ of that class's compliant rows (docs/simulation.md, "The convex formulation").
  int compliance_time_constant[kRowClassCount] = {-1, -1, -1, -1};
  int compliance_damping_ratio[kRowClassCount] = {-1, -1, -1, -1};

  // Index of the slice with this name, or -1.
  int find(std::string_view name) const;
  // Index of the slice with this name; throws Error naming it and the nearest known name.
  int index(std::string_view name) const;
};

class Model {
 public:
  std::string name;
  double dt = 1e-3;  // time step, s
  SolverSettings solver;
  std::vector<Body> bodies;  // (nbody) body 0 is the world
  std::vector<Shape> shapes;
  std::vector<Joint> joints;
  std::vector<Actuator> actuators;
  std::vector<Equality> equalities;
  // Body pairs (a < b, sorted, unique) whose shapes never collide, beyond the pairs joined by
  // a joint without collide_connected: what a robot file excludes (MJCF <contact><exclude>,
  // MuJoCo's weld and parent filters). ModelBuilder::exclude_collision adds to it.
  std::vector<std::pair<int, int>> collision_exclusions;
  std::vector<ConvexMesh> meshes;  // hulls referred to by ShapeType::ConvexMesh shapes
  ParamLayout layout;

  int body_count() const { return static_cast<int>(bodies.size()); }
  int shape_count() const { return static_cast<int>(shapes.size()); }
  int joint_count() const { return static_cast<int>(joints.size()); }
  int actuator_count() const { return static_cast<int>(actuators.size()); }
  int equality_count() const { return static_cast<int>(equalities.size()); }
  int param_count() const { return layout.size; }

  // Lookups by name; each throws diffphys::Error naming the kind and the unknown name.
  int body_index(std::string_view body_name) const;
  int joint_index(std::string_view joint_name) const;
  int actuator_index(std::string_view actuator_name) const;
};

}  // namespace diffphys
