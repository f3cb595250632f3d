// diffphys/fluid.hpp — incompressible Navier–Stokes on a staggered (MAC) grid, 2D (issue 21;
// docs/fluids.md).
//
//   ∂u/∂t + (u·∇)u = −∇p + ν∇²u + f + Σ_k β_k s_k ŷ,   ∇·u = 0,   ∂s_k/∂t + u·∇s_k = 0,
//
// with unit density (p is pressure over density), kinematic viscosity ν, a per-cell external
// acceleration f (the control), Boussinesq buoyancy from the passive scalars s_k. One step,
// state_in → state_out, is the usual split (Stam 1999; Bridson, "Fluid Simulation for Computer
// Graphics", 2nd ed., ch. 2–5, 8):
//
//   1. advect     u, v and the scalars by u_t (semi-Lagrangian, bilinear; MacCormack option)
//   2. forces     u += h f,  v += h Σ_k β_k s_k (s_k advected, averaged to the v faces)
//   3. obstacles  u ← (u + λ Σ_o χ_o u_o) / (1 + λ Σ_o χ_o),  λ = h/η   (Brinkman penalization)
//   4. viscosity  (I − θ ν h L) u* = (I + (1−θ) ν h L) u + walls   (θ = 1 backward Euler, ½ CN)
//   5. project    A p = −∇·u*,  u_{t+1} = u* − ∇p   (PCG with a multigrid V-cycle, A = −L_Neumann)
//
// Obstacles (stage 3) are solids given by a smooth indicator χ_o ∈ [0, 1] (1 inside, 0
// outside, a C² ramp across the boundary) that drags the fluid towards the solid's velocity
// u_o as a porous medium of permeability η (s) does: the volume penalization of Angot, Bruneau
// & Fabrie 1999 ("A penalization method to take into account obstacles in incompressible
// viscous flows", Numer. Math. 81), taken implicitly so any η is stable. The force of the
// fluid on obstacle o is Σ χ_o (u − u_o) Δx²/η over the faces (per unit depth and density).
// Everything about an obstacle is in θ, so drag and flow are differentiable in its shape
// (fluid/obstacles.hpp).
//
// The grid is nx × ny square cells of side Δx on [0, nx Δx] × [0, ny Δx]. Layouts (flat, so a
// gradient has the layout of what it differentiates):
//   velocities (nu + nv) m/s: u at the vertical faces, index j (nx+1) + i for the face at
//     (i Δx, (j+½) Δx), i ∈ [0, nx], j ∈ [0, ny); then v at the horizontal faces, index
//     nu + j nx + i for the face at ((i+½) Δx, j Δx), i ∈ [0, nx), j ∈ [0, ny].
//     nu = (nx+1) ny, nv = nx (ny+1). The faces on the walls (i = 0, nx for u; j = 0, ny for v)
//     are always 0 (no flow through a wall) and their gradients are 0.
//   scalars (nscalar × ncell): scalar k of cell (i, j) at k ncell + j nx + i, at the cell centre.
//   controls (2 ncell) m/s²: (f_x, f_y) of cell (i, j) at 2 (j nx + i) + {0, 1}, averaged to
//     the interior faces.
// 3D follows the same pattern: a third face family w at index nu + nv + (k ny + j) nx + i, the
// stencils gain a z neighbour, interpolation becomes trilinear, and the V-cycle coarsens by 2
// in each of three directions; no 3D code exists yet.
//
// Same split as the other subsystems (STYLE.md practice 1): FluidModel is constant, FluidParams
// the flat θ with named slices ("fluid/viscosity" (1), "fluid/buoyancy" (nscalar)),
// FluidState what changes. The step allocates nothing once its FluidWorkspace is built, and is
// single-threaded (same bits on any machine thread count).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace diffphys::fluid {

enum class WallType { NoSlip, FreeSlip };
enum class Side { Left = 0, Right = 1, Bottom = 2, Top = 3 };

struct WallSpec {
  WallType type = WallType::NoSlip;
  // The wall's own velocity along itself (m/s): x for bottom and top, y for left and right.
  // Only a no-slip wall drags the fluid (a lid-driven cavity's lid: top, 1 m/s).
  double tangential_velocity = 0.0;
};

// Semi-Lagrangian: first order (Euler backtrace, bilinear interpolation). MacCormack: the
// forward–backward error correction of Selle et al. 2008 ("An unconditionally stable MacCormack
// method", J. Sci. Comput. 35), second order where smooth, its result clamped to the min–max of
// the forward departure point's four samples (no new extrema).
enum class AdvectionScheme { SemiLagrangian, MacCormack };

// A solid ellipse in the flow, moving at a constant velocity: its centre at time t is
// center + velocity t. Every number here is a θ slice "fluid/obstacle/<name>/…" (center (2),
// semi_axes (2), angle (1), velocity (2)), so its value in FluidParams is what a step uses.
struct ObstacleSpec {
  std::string name;
  std::array<double, 2> center{};     // m, at t = 0
  std::array<double, 2> semi_axes{};  // m, > 0: along the ellipse's own x and y axes
  double angle = 0.0;                 // rad, of the ellipse's x axis from the grid's x axis
  std::array<double, 2> velocity{};   // m/s
};

struct FluidSolverSettings {
  // Both SPD solves (pressure; viscosity) stop when ‖b − A x‖₂ ≤ relative_tolerance ‖b‖₂. The
  // adjoint solves use the same operator and tolerance.
  double relative_tolerance = 1e-10;
  int max_iterations = 500;
  int smoothing_sweeps = 2;  // red–black Gauss–Seidel sweeps before and after each coarse correction
};

struct FluidSpec {
  std::string name = "fluid";
  int nx = 32, ny = 32;             // cells, ≥ 2 each
  double spacing = 1.0 / 32;        // Δx, m, > 0
  double dt = 0.01;                 // h, s, > 0
  double viscosity = 0.0;           // ν, m²/s, ≥ 0 (θ slice fluid/viscosity)
  int scalar_count = 1;             // passive scalars (smoke density, temperature, ...), ≥ 0
  // The scalars' names (a world's state slices "fluid/scalar/<name>"); empty: "scalar0", ...
  std::vector<std::string> scalar_names;
  std::vector<double> buoyancy;     // β_k, m/s² per unit of scalar k, along +y (empty: all 0)
  std::array<WallSpec, 4> walls{};  // indexed by Side
  AdvectionScheme advection = AdvectionScheme::MacCormack;
  double viscosity_theta = 1.0;  // θ in [½, 1]: 1 backward Euler, ½ Crank–Nicolson
  // A step refuses a state whose CFL number max|u| h / Δx exceeds this (semi-Lagrangian
  // advection is stable at any CFL, but its backtrace is a single Euler step: beyond a few
  // cells it misses the characteristic's curvature and accuracy is lost). In (0, 20].
  double max_cfl = 5.0;
  FluidSolverSettings solver{};
  std::vector<ObstacleSpec> obstacles;
  // η, s, > 0: the penalization's permeability. The velocity inside an obstacle differs from
  // its own by the factor 1/(1 + h/η) per step before the projection (fluids.md, "Obstacles").
  double obstacle_permeability = 1e-4;
  // Half-width of χ's ramp across an obstacle's boundary, in cells, > 0.
  double obstacle_band = 1.0;
};

struct FluidParamLayout {
  struct Slice {
    std::string name;
    int offset = 0;
    int size = 0;
  };
  std::vector<Slice> slices;
  int viscosity = -1;  // 1
  int buoyancy = -1;   // nscalar
  int obstacles = -1;  // kObstacleParams per obstacle: center (2), semi_axes (2), angle, velocity (2)
  int count = 0;
};
inline constexpr int kObstacleParams = 7;

struct FluidModel {
  std::string name;
  int nx = 0, ny = 0;
  double spacing = 0.0, dt = 0.0;
  int scalar_count = 0;
  std::vector<std::string> scalar_names;  // (scalar_count), distinct
  std::array<WallSpec, 4> walls{};
  AdvectionScheme advection = AdvectionScheme::MacCormack;
  double viscosity_theta = 1.0;
  double max_cfl = 5.0;
  FluidSolverSettings solver{};
  std::vector<std::string> obstacle_names;  // distinct; their θ slices in FluidParamLayout::obstacles
  double obstacle_permeability = 1e-4;      // η, s
  double obstacle_band = 1.0;               // cells
  FluidParamLayout layout;

  int cell_count() const { return nx * ny; }
  int obstacle_count() const { return static_cast<int>(obstacle_names.size()); }
  int u_count() const { return (nx + 1) * ny; }
  int v_count() const { return nx * (ny + 1); }
  int velocity_count() const { return u_count() + v_count(); }
  int control_count() const { return 2 * cell_count(); }
  int param_count() const { return layout.count; }
};

struct FluidParams {
  std::vector<double> values;  // θ, FluidParamLayout
  // A named slice ("fluid/viscosity", "fluid/buoyancy"); throws Error for another name.
  std::span<double> slice(const FluidModel& model, std::string_view name);
  std::span<const double> slice(const FluidModel& model, std::string_view name) const;
};

struct FluidState {
  std::vector<double> velocities;  // (nu + nv) m/s, layout above
  std::vector<double> scalars;     // (nscalar × ncell)
  double time = 0.0;               // s
};

struct FluidBuild {
  FluidModel model;
  FluidParams params;
  FluidState state;  // at rest, scalars 0
};

// Checks the spec and builds; throws Error naming the item and the value (non-positive spacing,
// dt or resolution, negative or non-finite viscosity, θ outside [½, 1], ...).
FluidBuild build_fluid(const FluidSpec& spec);

// Checks θ (finite; ν ≥ 0); throws Error naming the slice and the value.
void validate_fluid_params(const FluidModel& model, const FluidParams& params);

// Checks a state's sizes, finiteness, zero wall faces and CFL number; throws Error naming the
// item and the value.
void validate_fluid_state(const FluidModel& model, const FluidState& state);

struct FluidStepStatus {
  bool converged = true;         // false: a solve did not reach its tolerance, or the state failed
  int pressure_iterations = 0;   // PCG iterations of the projection
  double pressure_residual = 0;  // ‖b − A p‖₂ / ‖b‖₂ at exit
  int viscosity_iterations = 0;  // PCG iterations of the viscous solve (0 when ν = 0)
  double divergence_before = 0;  // RMS of ∇·u* over the cells before projection, 1/s
  double divergence_after = 0;   // RMS of ∇·u_{t+1} after projection, 1/s (≤ tol · before)
  double cfl = 0;                // max|u_t| h / Δx of the input
  std::string message;           // empty when converged; otherwise why not
};

// What a backward pass through the fluid saw (a world's WorldGradients::fluid_health).
struct FluidGradientHealth {
  std::vector<double> state_gradient_norm;  // (T + 1) ‖x̄_t‖₂ of the fluid's slice, after clipping
  int clipped_steps = 0;                    // steps whose x̄_t was clipped to gradient_clip
  int first_non_finite_step = -1;           // the first step whose adjoint was not finite, or −1
  std::string first_non_finite_stage;       // where it was seen ("loss gradient", "fluid step", ...)
  std::vector<int> unconverged_adjoint_steps;  // steps whose adjoint solves missed their tolerance
  bool solver_converged = true;             // every forward step and adjoint solve converged
};

// Scratch memory of a step (multigrid hierarchy, solver and advection buffers), built for one
// model; no allocation after construction. Opaque (the solvers live in src/fluid/).
class FluidWorkspace {
 public:
  explicit FluidWorkspace(const FluidModel& model);
  ~FluidWorkspace();
  FluidWorkspace(FluidWorkspace&&) noexcept;
  FluidWorkspace& operator=(FluidWorkspace&&) noexcept;
  struct Impl;
  Impl& impl() { return *impl_; }
  // The force of the fluid on each obstacle during the last step taken with this workspace
  // (fx, fy per obstacle, m³/s²: per unit depth and density; zero before any step).
  std::span<const double> obstacle_forces() const;

 private:
  std::unique_ptr<Impl> impl_;
};

// One step, state_in → state_out (must be distinct objects with the model's sizes; `out` is
// resized on first use only). `controls`: (2 ncell) m/s², or empty for none. A non-finite
// state, a CFL above max_cfl or a solve that misses its tolerance gives converged = false and
// a message (the rollout turns that into an Error).
FluidStepStatus fluid_step(const FluidModel& model, const FluidParams& params, const FluidState& in,
                           std::span<const double> controls, FluidState& out, FluidWorkspace& workspace);

// Closed-form helpers for tests and examples.
// Kinetic energy ½ Σ u² Δx² over the interior faces (each face carries a Δx² area), m⁴/s²
// per unit depth and density.
double kinetic_energy(const FluidModel& model, const FluidState& state);
// Σ_cells s_k Δx² of scalar k.
double scalar_mass(const FluidModel& model, const FluidState& state, int scalar);
// RMS of the discrete divergence over the cells, 1/s.
double divergence_rms(const FluidModel& model, std::span<const double> velocities);

}  // namespace diffphys::fluid
