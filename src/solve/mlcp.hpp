// solve/mlcp.hpp — the velocity-level mixed linear complementarity problem of one step,
// and its two solvers.
//
// The problem (de Avila Belbute-Peres et al. 2018, eq. 1, after Cline 2002), in impulse form:
//
//   M v = M v_free + Jᵀ λ                       (momentum, impulses λ over the step)
//   w = J v − rhs + F λ                         (one w per row)
//   equality rows:   w = 0, λ free              (joints)
//   other rows:      w ≥ 0, λ ≥ 0, w·λ = 0      (contacts, limits, friction, servos)
//
// F couples the rows of a *bounded group*: K Direction rows followed by one Bound row γ.
//   Direction k: w_k = J_k v − rhs_k + γ              (F[k, γ] = 1)
//   Bound:       w_γ = c·λ_normal − Σ_k λ_k           (friction: c = μ, the normal row's λ)
//                w_γ = c − Σ_k λ_k                     (servo: c = torque bound × dt; normal = −1)
// This is the polyhedral Coulomb cone (Stewart & Trinkle 1996) and, for a servo, a boxed
// velocity motor written the same way. Eliminating v gives, with A = J M⁻¹ Jᵀ,
//   w = (A + F) λ + q,  q = J v_free − rhs.
//
// Both solvers return the same unknowns (λ for every row, v) and are judged by the same
// residual (mlcp_residual), in velocity units (m/s): equality rows |w|; complementarity rows
// |min(A_ii λ, w)|; bound rows |min(γ, a·w_γ)| with a the mean A_kk of the group.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "diffphys/math.hpp"
#include "solve/lemke.hpp"

namespace diffphys::solve {

enum class RowType : std::uint8_t { Equality, Unilateral, Direction, Bound };

// One row of J: a linear and an angular part for each of (up to) two bodies. A static body
// (or the world) has zero inverse mass, so its half of the row never moves anything.
struct ConstraintRow {
  RowType type = RowType::Equality;
  int body_a = 0, body_b = 0;
  Vec3 linear_a, angular_a;  // J restricted to body a: w gets linear_a·v_a + angular_a·ω_a
  Vec3 linear_b, angular_b;
  double rhs = 0.0;          // target: w = J v − rhs (+ F λ)
  int group = -1;            // Direction: index of its Bound row. Bound: index of its first
                             // Direction row (the group's Direction rows are contiguous).
  int group_size = 0;        // Bound: number of Direction rows
  int normal = -1;           // Bound: the Unilateral row scaling the bound, or −1
  double coefficient = 0.0;  // Bound: μ (friction) or the constant bound (servo), N·s
  // Formulation::Convex only (solve/convex.hpp): the row's compliance relative to its
  // effective inverse mass, R_i = softness · A_ii (dimensionless; 0 in the mixed LCP).
  double softness = 0.0;
};

// The mass side of the problem: per body, M⁻¹ as an inverse mass and a world-frame inverse
// inertia (both zero for static bodies), and the velocity before constraints.
struct MassBlocks {
  std::span<const double> inverse_mass;        // (nbody) 1/kg
  std::span<const Mat3> inverse_inertia;       // (nbody) world frame, 1/(kg·m²)
};

struct MlcpResult {
  bool converged = false;
  int iterations = 0;
  double residual = 0.0;  // m/s, see the file comment
  // λ is the exact solution (to round-off) of its own active set's linear system — the
  // interior point's active-set passes found it — so polishing it (solve/polish.hpp) would
  // solve the same system again.
  bool exact = false;
};

// The column M⁻¹ J_iᵀ of one row: body a (linear, angular), body b (linear, angular).
struct RowResponse {
  Vec3 linear_a, angular_a, linear_b, angular_b;
};

// Buffers both solvers reuse between calls; no allocation once grown.
struct MlcpWorkspace {
  std::vector<RowResponse> responses;  // (rows) M⁻¹ J_iᵀ
  std::vector<double> diagonal;   // (rows) A_ii
  std::vector<double> matrix;     // (rows²) dense A + F (+ barrier diagonal), row-major
  std::vector<double> factor;     // (rows²) its LU factors
  std::vector<int> pivots;        // (rows)
  std::vector<double> q, w, slack, step_lambda, step_slack, rhs_vector, scratch;
  std::vector<int> envelope_first;   // (rows) first structural column of each row
  std::vector<int> envelope_start;   // (rows + 1) offsets into envelope_values
  std::vector<double> envelope_values;
  std::vector<double> envelope_pivots;  // (rows) D of LDLᵀ
  std::vector<int> envelope_body_first;  // (nbody) first row touching each body (scratch)
  std::vector<int> envelope_last;        // (rows) last row reaching each column (scratch)
  std::vector<double> envelope_column;   // (bandwidth) one column of the factorisation (scratch)
  // Interior point (equality rows eliminated once per solve) and its pivoting fallback
  // (equality rows eliminated, Lemke on the rest).
  std::vector<int> equality_rows, complementarity_rows;
  std::vector<double> coupling;       // (equality × complementarity) B_EE⁻¹ B_EI
  std::vector<double> schur;          // (complementarity²) B_II − B_IE B_EE⁻¹ B_EI
  std::vector<double> equality_factor;  // (equality²) dense LU of B_EE + R_E (if not envelope)
  std::vector<int> equality_pivots;     // (equality)
  std::vector<double> equality_part, complementarity_part;  // Newton step scratch
  std::vector<double> complementarity_equality;  // (complementarity × equality) B_IE
  std::vector<int> block;    // complementarity positions being solved (all, or the active set)
  std::vector<char> active;  // (complementarity) active-set guess: row held at w = 0
  // Projected Gauss–Seidel: the friction polygon of the current K, tabulated once per solve.
  struct Vec2 {
    double x = 0.0, y = 0.0;
  };
  std::vector<Vec2> polygon_vertex;       // (K + 1) (cos θ_k, sin θ_k)
  std::vector<Vec2> polygon_edge_normal;  // (K) outward normal of edge k
  std::vector<double> reduced_q, reduced_solution, equality_offset;
  LemkeWorkspace lemke;
};

// Fills workspace.responses (M⁻¹J_iᵀ) and workspace.diagonal (A_ii) for these rows.
void compute_responses(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace);

// Fills v (6 per body: linear, angular) = v_free + M⁻¹ Jᵀ λ, from the rows' responses.
void apply_impulses(std::span<const ConstraintRow> rows, std::span<const RowResponse> responses,
                    std::span<const double> lambda, std::span<const double> free_velocity, std::span<double> velocity);

// Residual of (λ, v) as defined above; fills w (rows) on the way. workspace.responses and
// workspace.diagonal must be those of `rows` (compute_responses; both solvers leave them so).
double mlcp_residual(std::span<const ConstraintRow> rows, std::span<const double> lambda,
                     std::span<const double> velocity, MlcpWorkspace& workspace);

// Primal–dual interior point with Mehrotra's predictor–corrector (Mattingley & Boyd 2012,
// as adapted to the LCP by de Avila Belbute-Peres et al. 2018). Equality-only problems are
// solved directly by a sparse (envelope) LDLᵀ in one step. Equality rows are eliminated once
// per solve (Schur complement), so iterations factorise the complementarity block only.
// Problems without friction first try a few primal–dual active-set passes (exact when they
// find the solution's active set; the first guess is the rows with λ > 0 in the incoming λ,
// none if it is zero). If the path-following stalls (friction makes the LCP non-monotone),
// the equality rows are eliminated and the rest is solved by Lemke's pivoting; the better of
// the two answers is kept. Writes λ and v.
MlcpResult solve_interior_point(std::span<const ConstraintRow> rows, const MassBlocks& mass,
                                std::span<const double> free_velocity, int max_iterations, double tolerance,
                                MlcpWorkspace& workspace, std::span<double> lambda, std::span<double> velocity);

// Projected Gauss–Seidel, warm-started from the incoming λ (the step passes the previous
// step's impulses: rigid/warm_start.hpp). Friction groups are updated as a block: the
// tangential impulse is projected onto the friction polygon (the fixed point is the
// maximal-dissipation solution of the same LCP). The residual is evaluated after sweeps 1–4,
// then every fourth sweep and after the last, so the solver may run up to three sweeps past
// the first that met the tolerance; the residual it reports is always that of the λ and v it
// returns. Writes λ and v.
MlcpResult solve_projected_gauss_seidel(std::span<const ConstraintRow> rows, const MassBlocks& mass,
                                        std::span<const double> free_velocity, int max_iterations,
                                        double tolerance, MlcpWorkspace& workspace, std::span<double> lambda,
                                        std::span<double> velocity);

// Solves A x = b for the equality-style system A = J M⁻¹ Jᵀ + regularisation·I of the given
// rows (used by the joint position projection). Sparse envelope LDLᵀ; returns false if A is
// numerically singular.
bool solve_delassus(std::span<const ConstraintRow> rows, const MassBlocks& mass, std::span<const double> b,
                    std::span<double> x, MlcpWorkspace& workspace);

}  // namespace diffphys::solve
