// fluid/viscosity_vjp.cpp — the viscous stage's VJP (fluid/viscosity.hpp). With
// A = I − θνh L0 symmetric, A u* = u + (1−θ)νh L0 u + νh c gives, for w = A⁻¹ ū* (one more
// solve with the same operator and tolerance):
//   ū = w + (1−θ)νh L0 w,
//   ν̄ = wᵀ h (θ L0 u* + (1−θ) L0 u + c)   (differentiating A u* = rhs in ν).
#include "fluid/viscosity.hpp"

namespace diffphys::fluid {

double viscosity_stage_vjp(const FluidModel& model, double viscosity, const double* u, const double* u_star,
                           const double* u_star_bar, double* u_bar, double* work, double* adjoint,
                           const ViscousScratch& scratch, SolveResult& result) {
  const int n = model.velocity_count();
  const double h = model.dt, theta = model.viscosity_theta;
  const double nu_h = viscosity * h;
  double* w = adjoint;
  if (nu_h == 0.0) {
    for (int k = 0; k < n; ++k) w[k] = u_star_bar[k];
    result = {};
  } else {
    result = solve_viscous_system(model, theta * nu_h, u_star_bar, w, scratch);
  }
  // ν̄ (before ū, which reuses `work`).
  double viscosity_bar = 0.0;
  apply_face_laplacian(model, u_star, work);
  for (int k = 0; k < n; ++k) work[k] *= theta * h;
  if (theta < 1.0) {
    double* laplacian_u = scratch.product;  // free until the next solve
    apply_face_laplacian(model, u, laplacian_u);
    for (int k = 0; k < n; ++k) work[k] += (1.0 - theta) * h * laplacian_u[k];
  }
  add_wall_term(model, h, work);
  for (int k = 0; k < n; ++k) viscosity_bar += w[k] * work[k];
  // ū.
  if (theta < 1.0 && nu_h != 0.0) {
    apply_face_laplacian(model, w, work);
    for (int k = 0; k < n; ++k) u_bar[k] += w[k] + (1.0 - theta) * nu_h * work[k];
  } else {
    for (int k = 0; k < n; ++k) u_bar[k] += w[k];
  }
  return viscosity_bar;
}

}  // namespace diffphys::fluid
