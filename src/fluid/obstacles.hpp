// fluid/obstacles.hpp — the step's obstacle stage (diffphys/fluid.hpp, stage 3) and its exact
// VJP: solid ellipses as a Brinkman volume penalization (Angot, Bruneau & Fabrie 1999).
//
// Each obstacle o has a smooth indicator χ_o(x) = S(d_o(x)) of the signed distance estimate
//   d = f/|∇f|,  f = p²/a² + q²/b² − 1,  (p, q) = R(−φ)(x − c(t)),  c(t) = c + V t
// (d is the distance to the ellipse to first order near its boundary, negative inside), and
//   S(d) = s³(6s² − 15s + 10),  s = clamp((w − d)/(2w), 0, 1),  w = band · Δx,
// a C² ramp from 1 (d ≤ −w) to 0 (d ≥ w), so χ and with it the step are twice differentiable
// in the obstacle's center, semi-axes, angle and velocity. On every interior face the
// penalization du/dt = Σ_o χ_o (u_o − u)/η, taken by one implicit Euler step at t + h,
//   u' = (u + λ Σ_o χ_o u_o) / (1 + λ Σ_o χ_o),   λ = h/η,
// drags the fluid towards the solids' velocities; the force of the fluid on obstacle o is
//   F_o = Σ_faces χ_o (u' − u_o) Δx² / η   (its x from the u faces, its y from the v faces).
// Overlapping obstacles add their rates, so the stage does not depend on their order.
#pragma once

#include <span>

#include "diffphys/fluid.hpp"

namespace diffphys::fluid {

// Whether obstacle o's center at time t lies inside the domain; when not, `where` gets the
// center's coordinates. (A solid may overlap a wall, a bump on the floor; it may not leave.)
bool obstacle_inside_domain(const FluidModel& model, std::span<const double> theta, int obstacle, double time,
                            double where[2]);

// Stage 3 in place on `velocities` (u then v faces, diffphys/fluid.hpp layout) at time `time`
// (the step's end, t + h). Writes F_o into `forces` (2 per obstacle) unless it is empty.
void penalize_obstacles(const FluidModel& model, std::span<const double> theta, double time, double* velocities,
                        std::span<double> forces);

// The stage's VJP. `penalized`: the stage's output u'. `velocities_bar` holds ∂L/∂u' on entry
// and ∂L/∂u (the stage's input) on return; `forces_bar` (2 per obstacle, or empty) is ∂L/∂F;
// θ̄ of the obstacles' slices is added into `params_bar`.
void penalize_obstacles_vjp(const FluidModel& model, std::span<const double> theta, double time,
                            const double* penalized, double* velocities_bar, std::span<const double> forces_bar,
                            std::span<double> params_bar);

// χ_o at the point (x, y) (m) at time t, for tests and diagnostics.
double obstacle_indicator(const FluidModel& model, std::span<const double> theta, int obstacle, double time, double x,
                          double y);

}  // namespace diffphys::fluid
