// fluid/viscosity.hpp — the implicit viscous stage and its VJP (fluid/viscosity.cpp,
// fluid/viscosity_vjp.cpp).
//
// The vector Laplacian on the faces is affine: L(w) = L0 w + c, with L0 the 5-point stencil
// over each face block and c the walls' contribution. At a wall a face's missing neighbour is a
// ghost: no-slip, w_ghost = 2 U_wall − w (the wall's tangential velocity U_wall half a cell
// away); free-slip, w_ghost = w (no shear). The normal faces on the walls are 0. L0 is
// symmetric negative semi-definite, so for a = θ ν h ≥ 0, I − a L0 is SPD. The θ-scheme
// (θ = 1 backward Euler, ½ Crank–Nicolson):
//   (I − θνh L0) u* = u + (1 − θ) νh L0 u + νh c.
// Solved by conjugate gradients with a Jacobi preconditioner (the matrix is diagonally dominant:
// its condition number is at most 1 + 8a/Δx², so no multigrid is needed).
#pragma once

#include "fluid/grid.hpp"

namespace diffphys::fluid {

struct SolveResult {
  int iterations = 0;
  double relative_residual = 0.0;
  bool converged = true;
};

// out = L0 w over both face blocks (wall faces 0), 1/m².
void apply_face_laplacian(const FluidModel& model, const double* w, double* out);
// out += scale · c (the walls' term of L), 1/m² × m/s.
void add_wall_term(const FluidModel& model, double scale, double* out);

struct ViscousScratch {
  double* residual;
  double* direction;
  double* preconditioned;
  double* product;
};

// Solves (I − a L0) x = rhs (a ≥ 0) to the model's relative tolerance; x starts at rhs.
SolveResult solve_viscous_system(const FluidModel& model, double a, const double* rhs, double* x,
                                 const ViscousScratch& scratch);

// The forward stage: u* from u (both (nu + nv)); `work` holds the right-hand side.
SolveResult viscosity_stage(const FluidModel& model, double viscosity, const double* u, double* u_star, double* work,
                            const ViscousScratch& scratch);

// Its VJP: from u*_bar, adds dL/du into u_bar and returns dL/dν, given u and u* of the forward
// stage. `work`, `adjoint`: (nu + nv) scratch.
double viscosity_stage_vjp(const FluidModel& model, double viscosity, const double* u, const double* u_star,
                           const double* u_star_bar, double* u_bar, double* work, double* adjoint,
                           const ViscousScratch& scratch, SolveResult& result);

}  // namespace diffphys::fluid
