// diffphys/ilqr.hpp — iterative LQR (Li & Todorov 2004) and receding-horizon MPC over any
// discrete dynamics x_{t+1} = f(x_t, u_t) that supplies its Jacobians — in particular the
// diffphys step itself (SimulatorDynamics, exact Jacobians from the step VJPs).
//
//   SimulatorDynamics dynamics(model, params);             // or your own IlqrDynamics
//   QuadraticCost cost(dynamics, Q, R, Q_final, x_goal);   // or your own IlqrCost
//   Ilqr ilqr(dynamics, cost, settings);
//   IlqrResult plan = ilqr.solve(x0, initial_controls, T); // plan.controls, plan.feedback, ...
//   Mpc mpc(dynamics, cost, /*horizon=*/5, settings);       // receding horizon:
//   u = mpc.control(x);                                     //   first control of a fresh plan
//
// States are flat vectors of state_size() numbers, perturbed in a tangent space of
// tangent_size() through difference() (x ⊖ x_ref) — for diffphys the 12-per-body layout of
// docs/gradients.md, so orientations are handled on the manifold. Controls are flat vectors
// of control_size(). Matrices are row-major.
//
// The algorithm (Li & Todorov 2004; regularisation and line search as in Tassa, Erez &
// Todorov 2012): linearise along the nominal trajectory, run the LQR backward pass on the
// quadratic model of the cost, with Levenberg–Marquardt regularisation μI on Q_uu (raised
// when Q_uu is not positive definite, lowered after a successful step), then a forward pass
// u = ū + α k + K (x ⊖ x̄) with a backtracking line search on α, accepted when the actual
// cost decrease is a fraction of the predicted one. Control bounds: the forward pass clamps
// u to [lower, upper]; the backward pass fixes the controls whose Newton step would leave the
// box at the bound and solves for the free ones (one active-set pass of the box QP of Tassa,
// Mansard & Todorov 2014).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

// x_{t+1} = f(x_t, u_t) with its Jacobians in the tangent space.
class IlqrDynamics {
 public:
  virtual ~IlqrDynamics() = default;
  virtual int state_size() const = 0;
  virtual int tangent_size() const { return state_size(); }
  virtual int control_size() const = 0;
  // next (state_size) = f(state, controls).
  virtual void step(std::span<const double> state, std::span<const double> controls, std::span<double> next) = 0;
  // next = f(state, controls) and A = ∂f/∂x (tangent × tangent), B = ∂f/∂u (tangent × control).
  virtual void linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                         std::span<double> A, std::span<double> B) = 0;
  // state ⊖ reference (tangent_size). Default: state − reference.
  virtual void difference(std::span<const double> state, std::span<const double> reference, std::span<double> tangent);
};

// x_{t+1} = A x_t + B u_t + c: a user-supplied linear system (state_size = tangent_size = n).
class LinearDynamics final : public IlqrDynamics {
 public:
  // A: n × n, B: n × m (row-major), offset c: n or empty (zero). Throws Error on bad sizes.
  LinearDynamics(int state_size, int control_size, std::vector<double> A, std::vector<double> B,
                 std::vector<double> offset = {});
  int state_size() const override { return n_; }
  int control_size() const override { return m_; }
  void step(std::span<const double> state, std::span<const double> controls, std::span<double> next) override;
  void linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                 std::span<double> A, std::span<double> B) override;

 private:
  int n_, m_;
  std::vector<double> A_, B_, offset_;
};

// The diffphys step as iLQR dynamics. One control step is `substeps` simulator steps with the
// control held (zero-order hold); its Jacobians are the exact step Jacobians (jacobians.hpp)
// chained: A = A_k ⋯ A_1, B = Σ_j A_k ⋯ A_{j+1} B_j. The flat state packs 13 numbers per
// body (world included): [p (3), q (w, x, y, z), v (3), ω (3)]; the tangent is 12 per body.
// The model is copied; `params` is referenced and may change between calls (learning).
class SimulatorDynamics final : public IlqrDynamics {
 public:
  static constexpr int kPackedPerBody = 13;
  SimulatorDynamics(const Model& model, const Params& params, int substeps = 1);
  ~SimulatorDynamics() override;

  int state_size() const override;
  int tangent_size() const override;
  int control_size() const override;
  void step(std::span<const double> state, std::span<const double> controls, std::span<double> next) override;
  void linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                 std::span<double> A, std::span<double> B) override;
  void difference(std::span<const double> state, std::span<const double> reference, std::span<double> tangent) override;

  // State ⇄ flat vector (13 per body). unpack() throws Error on a size mismatch.
  void pack(const State& state, std::span<double> flat) const;
  void unpack(std::span<const double> flat, State& state) const;
  const Model& model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Derivatives of a cost term with respect to the tangent of x and to u, row-major:
// x (n), u (m), xx (n × n), uu (m × m), ux (m × n). Sized by Ilqr before each call.
struct CostDerivatives {
  std::vector<double> x, u, xx, uu, ux;
};

// ℓ_t(x, u) for t = 0 … T−1 (t counts from the start of the current horizon) and ℓ_T(x).
// When `derivatives` is not null, fill it (it arrives zeroed); otherwise return the value only.
class IlqrCost {
 public:
  virtual ~IlqrCost() = default;
  virtual double stage(int step, std::span<const double> state, std::span<const double> controls,
                       CostDerivatives* derivatives) = 0;
  virtual double final(std::span<const double> state, CostDerivatives* derivatives) = 0;
};

// ℓ_t = ½ dᵀ Q d + ½ (u − u_ref)ᵀ R (u − u_ref),  ℓ_T = ½ dᵀ Q_final d,  d = x ⊖ x_ref (the
// dynamics' difference). Derivatives take ∂d/∂δx = I: exact for vector states, and to first
// order about x_ref on a manifold (Gauss–Newton). Q, Q_final: n × n; R: m × m (symmetric).
class QuadraticCost final : public IlqrCost {
 public:
  QuadraticCost(IlqrDynamics& dynamics, std::vector<double> Q, std::vector<double> R, std::vector<double> Q_final,
                std::vector<double> state_reference, std::vector<double> control_reference = {});
  double stage(int step, std::span<const double> state, std::span<const double> controls,
               CostDerivatives* derivatives) override;
  double final(std::span<const double> state, CostDerivatives* derivatives) override;

 private:
  double quadratic(std::span<const double> state, const std::vector<double>& weight, CostDerivatives* derivatives);
  IlqrDynamics& dynamics_;
  int n_, m_;
  std::vector<double> Q_, R_, Q_final_, state_reference_, control_reference_, difference_, product_;
};

struct IlqrSettings {
  int max_iterations = 100;
  double tolerance = 1e-10;           // stop when a step lowers the cost by less than this, relative
  double initial_regularization = 0;  // μ on the first backward pass
  double min_regularization = 1e-8;   // a μ lowered below this becomes 0
  double max_regularization = 1e10;   // give up (not converged) above this
  double regularization_factor = 2;   // Δ₀ of Tassa et al. 2012's μ schedule
  int line_search_steps = 10;         // α = 1, ½, ¼, …
  double acceptance_ratio = 1e-4;     // accept when (J − J_new) ≥ this × predicted decrease
  std::vector<double> control_lower;  // (m) or empty: unbounded
  std::vector<double> control_upper;  // (m) or empty: unbounded
};

struct IlqrResult {
  std::vector<double> states;        // ((T + 1) × state_size) the final nominal trajectory
  std::vector<double> controls;      // (T × m)
  std::vector<double> feedback;      // (T × m × n) K_t of the last backward pass: δu = K_t δx
  std::vector<double> feedforward;   // (T × m) k_t of the last backward pass
  std::vector<double> cost_history;  // the cost before the first iteration and after each accepted one
  double cost = 0.0;
  int iterations = 0;  // backward passes
  bool converged = false;
  double regularization = 0.0;  // μ at the end
};

class Ilqr {
 public:
  // Both are referenced and must outlive the Ilqr. Throws Error on inconsistent bounds.
  Ilqr(IlqrDynamics& dynamics, IlqrCost& cost, IlqrSettings settings = {});
  ~Ilqr();
  // Optimises T = horizon controls from x0, starting from initial_controls (T × m, or empty
  // for zeros; clamped to the bounds). Throws Error on mismatched sizes or a non-finite x0.
  IlqrResult solve(std::span<const double> initial_state, std::span<const double> initial_controls, int horizon);
  const IlqrSettings& settings() const { return settings_; }

 private:
  struct Buffers;
  IlqrDynamics& dynamics_;
  IlqrCost& cost_;
  IlqrSettings settings_;
  std::unique_ptr<Buffers> buffers_;
};

// Receding-horizon control: every call plans `horizon` steps ahead from the current state
// with iLQR, warm-started from the previous plan shifted by one step, and returns the plan's
// first control.
class Mpc {
 public:
  Mpc(IlqrDynamics& dynamics, IlqrCost& cost, int horizon, IlqrSettings settings = {});
  // The controls (m) to apply now; the span is valid until the next call.
  std::span<const double> control(std::span<const double> state);
  const IlqrResult& last_plan() const { return plan_; }
  int horizon() const { return horizon_; }
  void reset();  // forget the warm start

 private:
  Ilqr ilqr_;
  int horizon_, control_size_;
  std::vector<double> warm_start_;
  IlqrResult plan_;
};

}  // namespace diffphys
