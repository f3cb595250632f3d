// diffphys/soft.hpp — soft bodies as energy minimisation (issue 5; docs/soft-bodies.md).
//
// A soft body is a set of nodes (point masses) joined by elements — springs, tetrahedra,
// cloth triangles and hinges — each contributing an energy term. One implicit-Euler step is
// the minimisation (Rojas 2020, "Physics-based simulation via backpropagation on energy
// functions"; Martin et al. 2011, "Example-based elastic materials", §3):
//
//   x_{t+1} = argmin_x  ½ h⁻² (x − x̃)ᵀ M (x − x̃) + E(x; x_t, θ),   x̃ = x_t + h v_t,
//   v_{t+1} = (x_{t+1} − x_t) / h,
//
// where E sums the elastic energies, gravity, the external forces (controls), attachments and
// the obstacle barrier with lagged friction (lagged: depends on x_t, held fixed during the
// minimisation). The step is solved by Newton's method with a line search and a sparse
// Cholesky (src/soft/newton_solver.cpp) or, for comparison, by Adam (the article's
// first-order variant). Gradients come from the implicit function theorem at each step's
// minimiser (include/diffphys/soft_rollout.hpp).
//
// Same split as the rigid core (STYLE.md practice 1): SoftModel is the constant structure,
// SoftParams the flat vector θ of every differentiable constant (named slices), SoftState
// what changes. Build all three from a SoftSpec (or a soft scene file, soft_scene.hpp).
// Layouts: positions and velocities are (3 nnode) [x0 y0 z0 x1 ...], m and m/s.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace diffphys::soft {

using Vector3 = std::array<double, 3>;

// ---------------------------------------------------------------------------------------
// What a user writes: SoftSpec. Every value here that is a physical constant becomes a
// parameter in θ (SoftParams) when built.

enum class ElasticModel { NeoHookean, Corotated };

struct TetMaterialSpec {
  std::string name;
  ElasticModel model = ElasticModel::NeoHookean;
  double youngs_modulus = 1e5;  // Pa, > 0
  double poisson_ratio = 0.3;   // in (−1, 0.5)
  double density = 1000.0;      // kg/m³, ≥ 0 (lumped: a quarter of each tet's mass per node)
  double damping = 0.0;         // Pa·s, ≥ 0: viscosity on the Green strain rate (tet_damping_energy.cpp)
};

struct ClothMaterialSpec {
  std::string name;
  double stretch_modulus = 1e3;   // N/m: Young's modulus × thickness (StVK membrane)
  double poisson_ratio = 0.3;     // in (−1, 0.5)
  double bending_stiffness = 1e-3;  // N·m (discrete-shell hinges); 0 = no bending
  double areal_density = 0.1;     // kg/m², ≥ 0 (a third of each triangle's mass per node)
};

struct SpringSpec {
  int a = 0, b = 0;          // node indices
  double stiffness = 100.0;  // k, N/m, ≥ 0
  double rest_length = -1;   // l0, m, ≥ 0; negative: the rest distance of the two nodes
  double damping = 0.0;      // c, N·s/m, ≥ 0 (along the spring)
};

struct TetSpec {
  std::array<int, 4> nodes{};  // positively oriented: (x1−x0)·((x2−x0)×(x3−x0)) > 0
  int material = 0;            // index into SoftSpec::tet_materials
};

struct TriangleSpec {
  std::array<int, 3> nodes{};
  int material = 0;  // index into SoftSpec::cloth_materials
};

struct AttachmentSpec {
  int node = 0;
  Vector3 target{};          // world position the node is pulled to, m
  double stiffness = 1e4;    // N/m
};

enum class ObstacleType { Plane, Sphere, Box, Capsule };

// A rigid shape the nodes cannot penetrate (barrier energy, docs/soft-bodies.md). Static in
// the world, or moving with a frame (a rigid body's pose, see FrameSpec).
struct ObstacleSpec {
  std::string name;
  ObstacleType type = ObstacleType::Plane;
  Vector3 point{};              // plane: a point on it; sphere, box, capsule: the centre
  Vector3 normal{0, 0, 1};      // plane: outward normal (normalised on build)
  double radius = 0.0;          // sphere, capsule radius, m
  double friction = 0.0;        // Coulomb coefficient μ, ≥ 0
  // Box and capsule: shape frame → parent frame (world, or `frame`), unit quaternion
  // (w, x, y, z), normalised on build.
  std::array<double, 4> orientation{1, 0, 0, 0};
  Vector3 half_extents{};       // box, m (outer, rounding included)
  double half_length = 0.0;     // capsule: its segment runs along local z over ±half_length, m
  double rounding = 0.0;        // box: radius of its rounded edges and corners, m, in [0, min half extent)
  std::string frame{};          // empty: static in the world; else a FrameSpec name, and
                                // point, normal, orientation are in that frame
};

// A moving rigid frame (a rigid body's centre-of-mass frame in a coupled scene,
// coupled.hpp). Its pose is a parameter: θ slices "frame/<name>/pose" (12: position, then the
// rotation matrix row-major, frame → world) and "frame/<name>/previous_pose" (the pose at the
// start of the step, used by lagged friction). A coupled rollout sets both every step.
struct FrameSpec {
  std::string name;
  Vector3 position{};                            // m
  std::array<double, 4> orientation{1, 0, 0, 0};  // frame → world, (w, x, y, z), normalised on build
};

// A node pulled to a point fixed in a frame by a zero-length spring: E = k/2 |x − (p + R r)|².
struct FrameAttachmentSpec {
  int node = 0;
  std::string frame;        // a FrameSpec name
  Vector3 point{};          // r, in the frame, m
  double stiffness = 1e4;   // k, N/m (θ slice frame_attachment_stiffness)
};

struct ContactSettings {
  double barrier_distance = 1e-3;     // d̂, m: the barrier acts at distances below d̂
  double stiffness = 1e4;             // κ, the barrier's scale (a parameter: contact_stiffness)
  double friction_velocity = 1e-3;    // ε_v, m/s: sliding speeds below it are smoothed
};

struct NewtonSettings {
  int max_iterations = 50;
  double tolerance = 1e-9;  // converged when the Newton step's ‖Δx‖∞ ≤ tolerance · h (m/s)
  double armijo = 1e-4;     // sufficient-decrease constant of the backtracking line search
};

struct SoftSpec {
  std::string name = "soft";
  double dt = 0.01;                 // h, s
  // A step whose result moves a free node faster than this is unhealthy (SoftStepStatus): an
  // implicit-Euler step does not explode by itself, but absurd forces or scales can throw a
  // node anywhere; the rigid bodies' solver.max_speed has the same default.
  double max_speed = 1000.0;        // m/s, > 0
  Vector3 gravity{0, 0, -9.81};     // m/s²
  std::vector<Vector3> nodes;       // rest (and default initial) positions, m
  std::vector<double> node_masses;  // extra point mass per node, kg (empty: all 0)
  std::vector<Vector3> initial_velocities;  // empty: all 0
  std::vector<int> pinned;          // nodes held at their rest position
  std::vector<SpringSpec> springs;
  std::vector<TetMaterialSpec> tet_materials;
  std::vector<TetSpec> tets;
  std::vector<ClothMaterialSpec> cloth_materials;
  std::vector<TriangleSpec> triangles;  // hinges are made for every interior edge
  std::vector<AttachmentSpec> attachments;
  std::vector<ObstacleSpec> obstacles;
  std::vector<FrameSpec> frames;
  std::vector<FrameAttachmentSpec> frame_attachments;
  ContactSettings contact;
  NewtonSettings newton;
};

// ---------------------------------------------------------------------------------------
// Built: SoftModel (constant), SoftParams (θ), SoftState.

struct TetElement {
  std::array<int, 4> nodes{};
  int material = 0;
  std::array<double, 9> rest_inverse{};  // D_m⁻¹, row-major, D_m = [X1−X0, X2−X0, X3−X0]
  double rest_volume = 0.0;              // m³
};

struct TriangleElement {
  std::array<int, 3> nodes{};
  int material = 0;
  std::array<double, 4> rest_inverse{};  // 2×2 D_m⁻¹ in the triangle's rest plane, row-major
  double rest_area = 0.0;                // m²
};

// Two triangles sharing the edge (nodes[0], nodes[1]); nodes[2], nodes[3] are the opposite
// vertices (Grinspun et al. 2003, "Discrete shells").
struct Hinge {
  std::array<int, 4> nodes{};
  int material = 0;
  double rest_angle = 0.0;  // rad
  double weight = 0.0;      // 3 |e|² / (A₁ + A₂), rest geometry, 1/m⁰ (dimensionless)
};

struct Obstacle {
  std::string name;
  ObstacleType type = ObstacleType::Plane;
  Vector3 point{};
  Vector3 normal{0, 0, 1};
  double radius = 0.0;
  std::array<double, 9> rotation{1, 0, 0, 0, 1, 0, 0, 0, 1};  // box, capsule: shape → parent, row-major
  Vector3 half_extents{};  // box: of the inner box (outer minus rounding)
  double half_length = 0.0;
  double rounding = 0.0;
  int frame = -1;  // −1: static in the world; else index into SoftModel::frames
};

struct TetMaterial {
  std::string name;
  ElasticModel model = ElasticModel::NeoHookean;
};

// Offsets of every parameter in θ (−1: absent). Slice names are listed in `slices`.
struct SoftParamLayout {
  struct Slice {
    std::string name;
    int offset = 0;
    int size = 0;
  };
  std::vector<Slice> slices;
  int gravity = -1;             // 3
  int node_mass = -1;           // nnode
  int spring_stiffness = -1;    // nspring
  int spring_rest_length = -1;  // nspring
  int spring_damping = -1;      // nspring
  std::vector<int> tet_youngs_modulus, tet_poisson_ratio, tet_density, tet_damping;  // per tet material
  std::vector<int> cloth_stretch_modulus, cloth_poisson_ratio, cloth_bending_stiffness,
      cloth_areal_density;  // per cloth material
  int attachment_stiffness = -1;  // nattachment
  int contact_stiffness = -1;     // 1
  std::vector<int> obstacle_friction;  // per obstacle
  std::vector<int> frame_pose, frame_previous_pose;  // per frame, 12 each: p (3), R row-major (9)
  int frame_attachment_stiffness = -1;  // nframe_attachment
  int count = 0;
};

struct SoftModel {
  std::string name;
  double dt = 0.01;
  double max_speed = 1000.0;  // m/s (SoftSpec::max_speed)
  int node_count = 0;
  std::vector<double> rest_positions;  // (3 nnode)
  std::vector<char> pinned;            // (nnode) 1: held at its rest position
  std::vector<std::array<int, 2>> springs;
  std::vector<TetMaterial> tet_materials;
  std::vector<TetElement> tets;
  std::vector<std::string> cloth_materials;
  std::vector<TriangleElement> triangles;
  std::vector<Hinge> hinges;
  std::vector<int> attachment_nodes;
  std::vector<Vector3> attachment_targets;
  std::vector<Obstacle> obstacles;
  std::vector<std::string> frames;  // FrameSpec names
  std::vector<int> frame_attachment_nodes, frame_attachment_frames;
  std::vector<Vector3> frame_attachment_points;  // in the frame
  ContactSettings contact;
  NewtonSettings newton;
  SoftParamLayout layout;
  // Lumped mass: m_i = Σ_k θ[mass_param[k]] · mass_share[k] for k in
  // [mass_begin[i], mass_begin[i+1]) — node_mass, densities × volume/4, areal densities × area/3.
  std::vector<int> mass_begin, mass_param;
  std::vector<double> mass_share;

  int param_count() const { return layout.count; }
  int dof_count() const { return 3 * node_count; }
};

struct SoftParams {
  std::vector<double> values;  // θ, SoftParamLayout
  // A named slice ("gravity", "tet_material/rubber/youngs_modulus", ...); throws Error.
  std::span<double> slice(const SoftModel& model, std::string_view name);
  std::span<const double> slice(const SoftModel& model, std::string_view name) const;
};

struct SoftState {
  std::vector<double> positions;   // (3 nnode) m
  std::vector<double> velocities;  // (3 nnode) m/s
  double time = 0.0;
};

struct SoftBuild {
  SoftModel model;
  SoftParams params;
  SoftState state;  // rest positions, the spec's initial velocities
};

// Checks the spec (indices, orientation, degeneracy, values) and builds; throws Error naming
// the item and value.
SoftBuild build_soft(const SoftSpec& spec);

// Checks θ (positive moduli, Poisson ratio in (−1, 0.5), nonnegative densities, a positive
// mass at every free node, ...); throws Error naming the slice and value.
void validate_soft_params(const SoftModel& model, const SoftParams& params);

// Lumped node masses (nnode) from θ.
void lumped_masses(const SoftModel& model, const SoftParams& params, std::span<double> masses);

// ---------------------------------------------------------------------------------------
// Stepping.

enum class SoftSolver { Newton, Adam };

struct AdamSettings {
  int max_iterations = 20000;
  double learning_rate = 1e-3;  // m per iteration (Adam's step is ~ this size)
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-12;
  double tolerance = 1e-6;  // converged when ‖∇Φ‖∞ ≤ tolerance × (max m_i / h²) m: a position error
};

struct SoftStepStatus {
  bool converged = true;
  int iterations = 0;          // Newton (or Adam) iterations
  double residual = 0.0;       // ‖∇Φ‖∞ over free DOFs at the returned positions, N
  double step_norm = 0.0;      // last ‖Δx‖∞, m
  int regularised = 0;         // Newton iterations whose Hessian needed a diagonal shift
  int line_search_failures = 0;
  double objective = 0.0;      // Φ at the returned positions, J
  std::string message;         // empty when converged; otherwise why not
  // The state the step wrote (docs/robustness.md, "State health"): Ok, or the first free node
  // (lowest index) whose position or velocity is not finite (NonFinite, health_value that
  // component) or whose speed exceeds SoftModel::max_speed (TooFast, health_value the speed).
  // An unhealthy step is not converged, and `message` names the node and the value.
  enum class Health { Ok, NonFinite, TooFast };
  Health health = Health::Ok;
  int health_node = -1;
  double health_value = 0.0;
};

// Scratch memory of a step (sparse Hessian pattern and factorisation, buffers). Built for
// one model; reused without allocation after construction. Opaque (Eigen lives in
// src/soft/ only).
class SoftWorkspace {
 public:
  explicit SoftWorkspace(const SoftModel& model);
  ~SoftWorkspace();
  SoftWorkspace(SoftWorkspace&&) noexcept;
  SoftWorkspace& operator=(SoftWorkspace&&) noexcept;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct SoftStepOptions {
  SoftSolver solver = SoftSolver::Newton;
  AdamSettings adam;
  // When set, Φ after each accepted Newton/Adam iteration is appended (allocates; for tests
  // and experiments).
  std::vector<double>* objective_history = nullptr;
  // Where Newton/Adam starts (3 nnode; empty: x_t). It must be feasible; the minimiser does
  // not depend on it. A coupled rollout starts nodes that a moving shape would swallow where
  // the shape carries them (coupled.hpp).
  std::span<const double> start_positions;
};

// One implicit-Euler step from `in` to `out` (distinct objects). `external_forces` is
// (3 nnode) N per node or empty. Throws Error for mismatched sizes or an infeasible state
// (a node on or inside an obstacle); non-convergence is reported in the status, never thrown.
SoftStepStatus soft_step(const SoftModel& model, const SoftParams& params, const SoftState& in,
                         std::span<const double> external_forces, SoftState& out,
                         SoftWorkspace& workspace, const SoftStepOptions& options = {});

// Static equilibrium: argmin_x E(x; θ) (no inertia, no friction or damping) by Newton from
// `positions` (updated in place).
SoftStepStatus solve_soft_static(const SoftModel& model, const SoftParams& params,
                                 std::span<double> positions, SoftWorkspace& workspace);

// Energy pieces at positions x (lagged terms evaluated with x_t = x): for tests and reports.
struct SoftEnergies {
  double kinetic = 0, gravity = 0, elastic = 0, contact = 0, total_potential = 0;
};
SoftEnergies soft_energies(const SoftModel& model, const SoftParams& params, const SoftState& state);

// Σ m_i v_i, kg·m/s.
Vector3 soft_momentum(const SoftModel& model, const SoftParams& params, const SoftState& state);

// Sets frame `frame`'s pose slice ("frame/<name>/pose", or "/previous_pose" when `previous`)
// from a position and a quaternion (w, x, y, z; normalised here). Throws Error for an unknown
// frame index or a zero quaternion.
void set_frame_pose(const SoftModel& model, SoftParams& params, int frame, const Vector3& position,
                    const std::array<double, 4>& orientation, bool previous);

// Resets pinned nodes of `state` to their rest position and zero velocity and checks sizes
// and feasibility (every node strictly outside every static obstacle; shapes moving with a
// frame are checked by the step, which knows their pose); throws Error.
void prepare_soft_state(const SoftModel& model, SoftState& state);

}  // namespace diffphys::soft
