// solve/convex.hpp — the velocity problem of the convex formulation (Formulation::Convex):
// every row a compliant constraint, the step the unique minimiser of a strictly convex
// function of the velocities, found by Newton's method with a line search.
//
// The rows are those of the mixed LCP (solve/mlcp.hpp) with a compliance R_i > 0 each
// (Catto 2011 "Soft constraints"; MuJoCo's regularised dual, Todorov 2014; Drake's SAP,
// Castro et al. 2022). With the target v̂ = rhs and y = R⁻¹(v̂ − J v) per row, the impulse of
// a group of rows is the projection, in the metric R, of y onto the group's convex set C:
//   Free (joint rows):             γ = y
//   NonNegative (limits, frictionless contacts):  γ = max(y, 0)
//   Box (servos, |γ| ≤ b = max_torque·h):          γ = clamp(y, −b, b)
//   Cone (contact: normal, two tangents; the normal's R for all three, so the R-projection
//         is the Euclidean one): γ = Π(y) onto {‖γ_t‖ ≤ μ γ_n}, friction isotropic by construction.
// The velocities minimise (Castro et al. 2022, for any closed convex C)
//   ℓ(v) = ½‖v − v_free‖²_M + Σ_g [½‖y_g‖²_R − ½‖y_g − Π_g(y_g)‖²_R],
//   ∇ℓ = M(v − v_free) − Jᵀγ,   ∇²ℓ = M + Jᵀ G J,   G = (∂Π/∂y) R⁻¹ (symmetric, ⪰ 0),
// which is strictly convex (M ≻ 0): one solution, whatever the starting point or the
// redundancy of the rows, and a smooth function of the data wherever no row sits exactly on
// the boundary of its set's pieces. Newton's direction solves ∇²ℓ Δv = −∇ℓ (per
// island); the step length minimises ℓ along it (safeguarded Newton on the 1D derivative,
// until |φ'(α)| ≤ 10⁻³|φ'(0)|). Bodies that no row connects form separate islands, each solved on its own.
// ∇²ℓ is sparse: a 6×6 block per body and per pair of bodies a row couples, factorised by a
// block Cholesky in minimum-degree order (solve/body_block_cholesky.hpp), so a tower of
// boxes costs time linear in its height.
// The certificate is ‖M⁻¹∇ℓ‖_∞ (m/s, rad/s): the velocity error left in the momentum balance,
// at most the tolerance or, where that is larger, the residual's own rounding error (a stiff
// row's y = (v̂ − Jv)/R divides the rounding of Jv by a small R: ~1e-10 m/s at κ ~ 1e-6).
//
// Row layout (rigid/inequality_rows.cpp builds it so in this formulation): a contact with
// friction is its Unilateral normal row, two Direction rows along orthonormal tangents and a
// Bound row carrying μ; a servo is a Direction row (+), its negation (−) and a Bound row
// carrying b. The Bound rows and the servo's (−) row keep λ = 0 here.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "solve/body_block_cholesky.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::solve {

enum class ConvexGroupKind : std::uint8_t { Free, NonNegative, Box, Cone };

struct ConvexGroup {
  ConvexGroupKind kind = ConvexGroupKind::Free;
  int row = 0;          // its first row (a Cone: the normal, the tangents follow)
  int size = 1;         // rows: 3 for a Cone, else 1
  double bound = 0.0;   // Box: b (N·s); Cone: μ
  int bound_row = -1;   // the layout's Bound row (Box, Cone), λ = 0
  int mirror_row = -1;  // Box: the servo's negated row, λ = 0
};

// The projection of one group and its derivatives: γ = Π(y), ∂Π/∂y (symmetric, size²
// entries, row-major in a 3×3 array) and ∂Π/∂bound (μ of a cone, b of a box).
struct GroupProjection {
  double gamma[3] = {0, 0, 0};
  double jacobian[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  double bound_derivative[3] = {0, 0, 0};
};
GroupProjection project_group(const ConvexGroup& group, const double* y);

// Islands: groups of moving bodies connected through rows, and the rows' groups.
struct ConvexIslands {
  std::vector<int> parent;        // (nbody) union–find
  std::vector<int> island_of_body;  // (nbody) island index, −1 for bodies no row moves
  std::vector<int> local_index;     // (nbody) position of the body within its island
  std::vector<int> body_start, bodies;    // CSR: the bodies of each island, ascending
  std::vector<int> group_start, groups;   // CSR: the groups of each island
  int count = 0;
};

struct ConvexWorkspace {
  std::vector<ConvexGroup> groups;
  std::vector<RowResponse> responses;  // (rows) M⁻¹J_iᵀ
  std::vector<double> compliance;      // (rows) R_i = softness_i · w_i
  std::vector<double> scale;           // (rows) w_i: A_ii of the group's first row (a cone's normal)
  std::vector<Mat3> inertia;           // (nbody) world inertia, the inverse of mass.inverse_inertia
  ConvexIslands islands;
  std::vector<double> row_velocity, row_step, y;  // (rows) J v, J Δv, y
  std::vector<std::pair<int, int>> island_edges;  // one island's pairs of coupled bodies (local indices)
  std::vector<std::pair<int, int>> analysed_edges;  // the pairs hessian was last analysed for
  BodyBlockCholesky hessian;                       // one island's ∇²ℓ, factorised
  int constant_hessian_island = -1;  // the island whose M + (leading Free groups' JᵀGJ) hessian saved, or −1
  std::vector<double> gradient, step;              // one island's vectors, 6 per body
  std::vector<double> rounding;                    // one island's |J|ᵀ(rounding of y), 6 per body
  // The projection pieces (ProjectionPiece) of the island's groups at hessian's last
  // factorisation, and at the current y: while they are equal and no cone slides, ∇²ℓ is the
  // same matrix bit for bit, and its factorisation is reused instead of repeated.
  std::vector<std::uint8_t> factored_pieces, current_pieces;
  // The island whose ∇²ℓ at the returned velocities hessian holds factorised (solve_convex's
  // last factorisation, still exact there), or −1: the backward pass solves with it.
  int factor_at_solution_island = -1;
};

// Which piece of its projection a group's y lies on (project_group's branches). ∂Π/∂y, and
// with it the group's term of ∇²ℓ, is constant on each piece except a cone's sliding one.
enum class ProjectionPiece : std::uint8_t { Zero, Identity, BoxUpper, BoxLower, Sliding };
ProjectionPiece projection_piece(const ConvexGroup& group, const double* y);

// Reads the groups of `rows` (layout above); throws Error on a layout it does not know.
void describe_convex_groups(std::span<const ConstraintRow> rows, std::vector<ConvexGroup>& groups);

// Fills responses, scale, compliance (R_i = rows[i].softness · scale_i), inertia and islands.
void prepare_convex_problem(std::span<const ConstraintRow> rows, const MassBlocks& mass, ConvexWorkspace& workspace);

// Solves the problem from `initial_velocity` (6 per body; the step passes the state's
// velocities, which depend on the step's inputs only). Writes λ (γ of each group's rows, 0
// on Bound and mirror rows) and v. iterations: Newton iterations summed over islands.
MlcpResult solve_convex(std::span<const ConstraintRow> rows, const MassBlocks& mass,
                        std::span<const double> free_velocity, std::span<const double> initial_velocity,
                        int max_iterations, double tolerance, ConvexWorkspace& workspace, std::span<double> lambda,
                        std::span<double> velocity);

// The structure of island `island`'s ∇²ℓ (a 6×6 block per pair of bodies some row couples):
// orders and analyses workspace.hessian for it, unless the last analysis was of the same
// pairs (then keeps it). Once per island and step, before factorize_island_hessian.
void analyse_island_hessian(std::span<const ConstraintRow> rows, int island, ConvexWorkspace& workspace);

// Assembles ∇²ℓ of island `island` at the y in workspace.y into workspace.hessian (analysed
// for this island) and factorises it (sparse block Cholesky; its solve takes 6 entries per
// island body, in the island's body order). False if it is not positive definite (it always
// is for positive masses and compliances).
bool factorize_island_hessian(std::span<const ConstraintRow> rows, int island, ConvexWorkspace& workspace,
                              const MassBlocks& mass);

}  // namespace diffphys::solve
