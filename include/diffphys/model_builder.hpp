// diffphys/model_builder.hpp — building a Model (plus its default Params and initial State).
//
// The builder takes specs in the user's terms (world-frame anchors and axes, body-frame
// shapes, mass from density or given), validates every item, computes mass properties,
// moves each body's origin to its centre of mass and returns a Scene. build() refuses bad
// input with an Error naming the item and the value; nothing is stepped before that.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

struct ShapeSpec {
  std::string name;                  // optional; defaults to "<body>/<index>"
  ShapeType type = ShapeType::Sphere;
  Vec3 position;                     // in the body frame, m
  Quat orientation;                  // in the body frame
  double radius = 0.0;               // sphere, capsule, cylinder, m
  Vec3 half_extents;                 // box: half extents; ellipsoid: semi-axes along x, y, z; m
  double half_length = 0.0;          // capsule: half the segment length along local z, m;
                                     // cylinder: half its height along local z, m
  std::shared_ptr<const ConvexMesh> mesh;  // convex mesh: the hull (load_convex_mesh)
  double scale = 1.0;                // convex mesh: uniform scale of the hull's coordinates
  std::uint32_t collision_group = 1;
  std::uint32_t collision_mask = ~0u;
};

struct BodySpec {
  std::string name;
  BodyType type = BodyType::Dynamic;
  Vec3 position;          // body frame origin in world, m
  Quat orientation;       // body frame → world
  Vec3 linear_velocity;   // of the body frame origin, m/s
  Vec3 angular_velocity;  // world frame, rad/s
  std::optional<double> mass;          // kg; default: density × shape volume
  std::optional<Vec3> inertia;         // principal moments about the centre of mass along
                                       // the body axes, kg·m²; default: from the shapes
  // Principal axes of `inertia` in the body frame: I_body = R diag(inertia) Rᵀ, the moments kept as
  // given (a written scene, diffphys::write_scene_json). Default: `inertia` is along the body axes.
  std::optional<Quat> inertia_frame;
  std::optional<Vec3> center_of_mass;  // body frame, m; default: from the shapes (or origin)
  double density = 1000.0;             // kg/m³, used when mass or inertia is not given
  double friction = 0.5;               // Coulomb coefficient
  double restitution = 0.0;            // in [0, 1]
  double linear_damping = 0.0;         // 1/s
  double angular_damping = 0.0;        // 1/s
  Vec3 force;                          // constant external force, world frame, N
  Vec3 torque;                         // constant external torque, world frame, N·m
  std::vector<ShapeSpec> shapes;
};

// A joint's geometry in its two bodies' frames, taken as given instead of computed from the
// world-frame anchor and axes at the build-time pose: what a written scene holds
// (diffphys::write_scene_json), so that it reloads bit for bit, also after stepping. The
// fields are Joint's (model.hpp); anchors are in the body frames as given (origin at the body's
// position; the builder subtracts the centre of mass, as for shapes). Every field is required.
struct JointFrames {
  Vec3 anchor_parent, anchor_child;  // m
  Vec3 axis_parent, axis_child;      // unit where the type uses an axis
  Vec3 axis2_parent, axis2_child;    // universal; planar: axis2_parent
  Vec3 axis3_parent;                 // planar
  Quat rest_relative;                // q_parentᵀ ⊗ q_child at the joint's zero, unit
};

struct JointSpec {
  std::string name;
  JointType type = JointType::Revolute;
  std::string parent = "world";
  std::string child;
  Vec3 anchor;  // world frame at build time, m
  Vec3 axis{0, 0, 1};   // world frame: hinge/slide axis; universal's first axis (on parent);
                        // planar: the plane's normal, about which the child turns (dof 2)
  Vec3 axis2{0, 1, 0};  // world frame: universal's second axis (on child), ⟂ axis; planar:
                        // the in-plane direction of dof 0, ⟂ axis
  // Planar only, world frame: the in-plane direction of dof 1, ⟂ axis and axis2; default
  // axis × axis2. Either sense is allowed, so an MJCF body's slides keep their own senses.
  std::optional<Vec3> axis3;
  std::optional<JointFrames> frames;  // when set: anchor, axis, axis2 and axis3 are not used
  std::optional<double> lower_limit;  // rad or m; both or neither
  std::optional<double> upper_limit;
  double damping = 0.0;
  bool collide_connected = false;
};

// The default in-plane direction of a planar joint whose file names only the normal: the
// world x axis projected into the plane, or the y axis when the normal is within ~25° of x.
Vec3 default_plane_direction(const Vec3& normal);

struct ActuatorSpec {
  std::string name;
  ActuatorType type = ActuatorType::Motor;
  std::string joint;
  int dof = 0;
  double gain = 0.0;          // servo, 1/s
  double max_torque = 0.0;    // servo: torque bound; motor: control clip (0 = unbounded)
  double max_velocity = 0.0;  // servo, rad/s or m/s
  double control = 0.0;       // initial control (motor torque or servo target)
};

// A soft equality constraint (model.hpp, Equality). Points are given in the world frame at
// build time and carried by their bodies from then on. Connect: `anchor`, shared by both
// bodies. Distance: `anchor_a` on body_a and `anchor_b` on body_b, held `length` apart
// (default: their distance at build time). Weld: `anchor` as connect, or `anchor_a` and
// `anchor_b` held together when `separate_anchors` (MJCF's relpose, whose target is not the
// build-time pose), and body_b's orientation relative to body_a's held at `relative` (default:
// theirs at build time). Needs solver.formulation == Convex.
struct EqualitySpec {
  std::string name;
  EqualityType type = EqualityType::Connect;
  std::string body_a = "world";
  std::string body_b;
  Vec3 anchor;                   // connect, world frame, m
  Vec3 anchor_a, anchor_b;       // distance, world frame, m
  std::optional<double> length;  // distance, m, > 0
  bool separate_anchors = false;  // weld: anchor_a and anchor_b rather than anchor
  // Any type: anchor_a and anchor_b are in body_a's and body_b's frames as given (origin at the
  // body's position), not the world frame (a written scene, diffphys::write_scene_json); a
  // distance then needs `length` and a weld `relative`.
  bool local_anchors = false;
  std::optional<Quat> relative;   // weld: q_b = q_a · relative held (unit; default: at build time)
  double time_constant = 0.02;   // τ, s, > 0 (MuJoCo's default solref 0.02 1)
  double damping_ratio = 1.0;    // ζ, > 0
};

struct Scene {
  Model model;
  Params params;
  State state;
  std::vector<double> controls;  // (nactuator) default control held by every step
  // What a robot-file loader (URDF, MJCF) ignored or approximated, one message per item with
  // file and line ("arm.xml:12: <site 's0'>: ..."); empty for JSON scenes and C++ builds.
  std::vector<std::string> warnings;
};

class ModelBuilder {
 public:
  std::string name = "scene";
  double dt = 1e-3;
  Vec3 gravity{0, 0, -9.81};
  SolverSettings solver;
  double world_friction = 1.0;     // material of the world body (ground planes)
  double world_restitution = 0.0;
  // solver.formulation == Convex: the initial values of θ's compliance slices
  // ("compliance/<class>/time_constant", ".../damping_ratio"), indexed by RowClass. The
  // defaults make every row stiff: the regularisation R = κ A_ii has κ ≈ 4e-4 at dt = 1 ms
  // (docs/simulation.md, "The convex formulation").
  struct RowCompliance {
    double time_constant = 2e-5;  // s, > 0
    double damping_ratio = 1.0;   // > 0
  };
  RowCompliance compliance[kRowClassCount] = {{2e-5, 1.0}, {1e-5, 1.0}, {2e-5, 1.0}, {2e-5, 1.0}};

  // Each returns the index of what it added; names must be unique within their kind.
  int add_body(BodySpec spec);
  // A plane shape on the world body: normal (world) and offset d, the plane n·x = d.
  int add_ground_plane(Vec3 normal = {0, 0, 1}, double offset = 0.0);
  // A plane shape on the world body whose frame is given exactly: through `position`, normal
  // orientation·z (a written scene, diffphys::write_scene_json).
  int add_ground_plane_frame(Vec3 position, Quat orientation);
  int add_joint(JointSpec spec);
  int add_actuator(ActuatorSpec spec);
  int add_equality(EqualitySpec spec);
  // The shapes of these two bodies never collide with each other (by body name).
  void exclude_collision(std::string body_a, std::string body_b);

  // Validates everything and builds; throws Error naming the offending item and value.
  Scene build() const;

 private:
  std::vector<BodySpec> bodies_;
  std::vector<ShapeSpec> world_shapes_;
  std::vector<JointSpec> joints_;
  std::vector<ActuatorSpec> actuators_;
  std::vector<EqualitySpec> equalities_;
  std::vector<std::pair<std::string, std::string>> collision_exclusions_;
};

// Switches a built scene's formulation (the command line's --formulation, Python's
// diffphys.set_formulation). Convex adds θ's compliance slices, with ModelBuilder's default
// values, at the end of θ if the scene has none; Complementarity keeps them, unused.
void set_formulation(Scene& scene, Formulation formulation);

}  // namespace diffphys
