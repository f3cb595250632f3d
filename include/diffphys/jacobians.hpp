// diffphys/jacobians.hpp — the Jacobians of one step, exactly: A = ∂x_{t+1}/∂x_t,
// B = ∂x_{t+1}/∂u_t and optionally P = ∂x_{t+1}/∂θ, for linearisation-based control (iLQR,
// LQR, MPC: diffphys/ilqr.hpp), Gauss–Newton system identification and sensitivity studies.
//
//   StepJacobians jacobians(model);
//   jacobians.compute(params, x_t, u_t, x_next, A, B);          // A: n×n, B: n×m, row-major
//
// States are differentiated in the tangent layout of docs/gradients.md, n = 12·nbody (body 0,
// the world, included): [δp, δθ, δv, δω] per body with q' = exp(δθ) ⊗ q (world frame). Row i
// of [A B P] is the vector–Jacobian product of the step (adjoint/step_vjp.hpp) with the unit
// seed e_i, so the matrices are exact to round-off — no finite differences — with the same
// things held fixed as every gradient (contact set, LCP active set; docs/gradients.md).
// Rows of static bodies are zero (their state never changes) and cost nothing; so are their
// columns (fixed scenery, not differentiated state: docs/gradients.md).
#pragma once

#include <memory>
#include <span>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

// 12 · nbody: the length of a state tangent (and of A's rows and columns).
int state_tangent_size(const Model& model);

// state ⊖ reference in the tangent layout: δp = p − p_ref, δθ = log(q ⊗ q_refᵀ) (world-frame
// rotation vector, angle in (−π, π]), δv = v − v_ref, δω = ω − ω_ref. `difference`: (12 nbody).
void state_difference(const Model& model, const State& state, const State& reference, std::span<double> difference);

// state ⊕ tangent: p + δp, exp(δθ) ⊗ q, v + δv, ω + δω — the perturbation every state
// gradient measures. `out` may alias `state`. Throws Error on a size mismatch.
void state_retract(const Model& model, const State& state, std::span<const double> tangent, State& out);

// `state` moved by ε along one tangent component (body `body`, component 0–11 of its 12:
// δp, δθ, δv, δω), the other bodies untouched: the perturbation of central differences of a
// state gradient (gradcheck).
State state_perturbed(State state, int body, int component, double epsilon);

// Reusable buffers for Jacobians of steps of one model (one per thread). The model is
// copied with PGS warm start off, so that each call depends on its inputs only.
class StepJacobians {
 public:
  explicit StepJacobians(const Model& model);
  ~StepJacobians();
  StepJacobians(StepJacobians&&) noexcept;
  StepJacobians& operator=(StepJacobians&&) noexcept;

  const Model& model() const;

  // Steps `state` with `controls` into `next` and fills, row-major:
  //   A (n × n)        dx_{t+1}/dx_t,  n = state_tangent_size(model)
  //   B (n × m)        dx_{t+1}/du_t,  m = nactuator
  //   P (n × nparam)   dx_{t+1}/dθ,    Params layout — optional (empty span: not computed)
  // Throws Error naming the argument whose size does not match.
  StepStatus compute(const Params& params, const State& state, std::span<const double> controls, State& next,
                     std::span<double> A, std::span<double> B, std::span<double> P = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-off convenience: StepJacobians(model).compute(...), discarding x_{t+1}.
StepStatus step_jacobians(const Model& model, const Params& params, const State& state,
                          std::span<const double> controls, std::span<double> A, std::span<double> B,
                          std::span<double> P = {});

}  // namespace diffphys
