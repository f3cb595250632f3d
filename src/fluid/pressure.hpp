// fluid/pressure.hpp — the pressure projection: the Neumann Poisson system solved by
// preconditioned conjugate gradients with a geometric multigrid V-cycle as the preconditioner
// (fluid/pressure.cpp), and the projection built on it (fluid/projection.cpp).
//
// A p = b with (A p)_c = Σ_{neighbours n in the domain} (p_c − p_n) / Δx² (the 5-point
// Laplacian with zero normal gradient at the walls): symmetric positive semi-definite, its null
// space the constants. b is made mean-free (it is, up to rounding, for a divergence with walls)
// and every preconditioned residual too, so CG stays in the range of A (the pressure is
// defined up to a constant; its mean is 0 here).
//
// The V-cycle (cell-centred multigrid; cf. McAdams, Sifakis & Teran 2010, "A parallel multigrid
// Poisson solver for fluids simulation on large grids"): red–black Gauss–Seidel smoothing
// (red then black before the coarse correction, black then red after: the cycle is a symmetric
// operator, as CG needs), prolongation P bilinear between cell centres (reflected at the walls),
// restriction R = Pᵀ/4 (an average), the coarse operator re-discretised at 2Δx. Levels halve
// while both sides are even and the level has more than 16 cells; the coarsest level is solved
// exactly by a dense Cholesky of A + (1/(n Δx²)) 11ᵀ (regular, same mean-free solution) when it
// has at most 1024 cells, else by 20 (smoothing_sweeps each way) symmetric sweeps — grids whose
// sides are 2^k × small keep the iteration count near constant; others converge more slowly.
#pragma once

#include <vector>

#include "fluid/viscosity.hpp"

namespace diffphys::fluid {

class PressureSolver {
 public:
  explicit PressureSolver(const FluidModel& model);
  // Solves A p = b (b: ncell, not modified; a mean-free copy is used) to the model's relative
  // tolerance from p = 0. No allocation.
  SolveResult solve(const double* b, double* p);
  int level_count() const { return static_cast<int>(levels_.size()); }

 private:
  struct Level {
    int nx = 0, ny = 0;
    double inverse_area = 0;      // 1 / Δx² of the level
    std::vector<double> x, b, r;  // (ncell of the level)
  };
  int sweeps_ = 2;
  double tolerance_ = 1e-10;
  int max_iterations_ = 500;
  std::vector<Level> levels_;
  std::vector<double> coarse_factor_;  // dense lower Cholesky factor (n × n), or empty
  std::vector<double> rhs_, residual_, preconditioned_, direction_, product_;

  void apply(const Level& level, const double* x, double* out) const;
  void smooth(Level& level, bool red_first) const;
  void v_cycle(int level);
  void precondition(const double* r, double* z);
};

// u_out = u* − G p with A p = −D u* (D the cell divergence, G the face gradient; D = −Gᵀ, so
// this map is an orthogonal projection: symmetric, and its VJP is the same map applied to ū —
// one more solve with A at the same tolerance). `pressure`: (ncell) output.
SolveResult project(const FluidModel& model, PressureSolver& solver, const double* u_star, double* u_out,
                    double* pressure, double* divergence);

// (ncell) ∇·w at the cell centres, 1/s.
void cell_divergence(const FluidModel& model, const double* w, double* divergence);

}  // namespace diffphys::fluid
