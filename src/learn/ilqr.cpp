// learn/ilqr.cpp — iLQR (Li & Todorov 2004) with Levenberg–Marquardt regularisation on Q_uu,
// a backtracking line search on the forward pass and box bounds on the controls; receding-
// horizon MPC on top; the diffphys step as dynamics (diffphys/ilqr.hpp). The matrices are
// small (n = 12·nbody, m = nactuator), so plain row-major loops and a Cholesky of Q_uu do.
#include "diffphys/ilqr.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "diffphys/error.hpp"
#include "diffphys/jacobians.hpp"
#include "diffphys/simulator.hpp"
#include "solve/dense_cholesky.hpp"

namespace diffphys {

namespace {

using Index = std::size_t;

void require_size(std::size_t size, std::size_t expected, const char* what) {
  if (size != expected) throw Error(message("iLQR: ", what, " has ", size, " entries, expected ", expected));
}

// C (r × c) = Aᵀ (k × r)ᵀ · B (k × c), all row-major; C may not alias.
void multiply_transposed(const double* A, const double* B, double* C, Index k, Index r, Index c) {
  std::fill(C, C + r * c, 0.0);
  for (Index l = 0; l < k; ++l)
    for (Index i = 0; i < r; ++i) {
      const double a = A[l * r + i];
      if (a == 0.0) continue;
      for (Index j = 0; j < c; ++j) C[i * c + j] += a * B[l * c + j];
    }
}

// C (r × c) = A (r × k) · B (k × c).
void multiply(const double* A, const double* B, double* C, Index r, Index k, Index c) {
  std::fill(C, C + r * c, 0.0);
  for (Index i = 0; i < r; ++i)
    for (Index l = 0; l < k; ++l) {
      const double a = A[i * k + l];
      if (a == 0.0) continue;
      for (Index j = 0; j < c; ++j) C[i * c + j] += a * B[l * c + j];
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Dynamics

void IlqrDynamics::difference(std::span<const double> state, std::span<const double> reference,
                              std::span<double> tangent) {
  require_size(state.size(), static_cast<std::size_t>(state_size()), "state");
  require_size(reference.size(), static_cast<std::size_t>(state_size()), "reference state");
  require_size(tangent.size(), static_cast<std::size_t>(tangent_size()), "state difference");
  for (Index i = 0; i < state.size(); ++i) tangent[i] = state[i] - reference[i];
}

LinearDynamics::LinearDynamics(int state_size, int control_size, std::vector<double> A, std::vector<double> B,
                               std::vector<double> offset)
    : n_(state_size), m_(control_size), A_(std::move(A)), B_(std::move(B)), offset_(std::move(offset)) {
  if (n_ <= 0 || m_ <= 0)
    throw Error(message("LinearDynamics: state size ", n_, " and control size ", m_, " must be positive"));
  const auto n = static_cast<Index>(n_), m = static_cast<Index>(m_);
  require_size(A_.size(), n * n, "LinearDynamics A (n × n)");
  require_size(B_.size(), n * m, "LinearDynamics B (n × m)");
  if (offset_.empty()) offset_.assign(n, 0.0);
  require_size(offset_.size(), n, "LinearDynamics offset");
}

void LinearDynamics::step(std::span<const double> state, std::span<const double> controls, std::span<double> next) {
  const auto n = static_cast<Index>(n_), m = static_cast<Index>(m_);
  require_size(state.size(), n, "state");
  require_size(controls.size(), m, "controls");
  require_size(next.size(), n, "next state");
  for (Index i = 0; i < n; ++i) {
    double value = offset_[i];
    for (Index j = 0; j < n; ++j) value += A_[i * n + j] * state[j];
    for (Index j = 0; j < m; ++j) value += B_[i * m + j] * controls[j];
    next[i] = value;
  }
}

void LinearDynamics::linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                               std::span<double> A, std::span<double> B) {
  step(state, controls, next);
  require_size(A.size(), A_.size(), "A");
  require_size(B.size(), B_.size(), "B");
  std::copy(A_.begin(), A_.end(), A.begin());
  std::copy(B_.begin(), B_.end(), B.begin());
}

struct SimulatorDynamics::Impl {
  Impl(const Model& model, const Params& params_in, int substeps_in)
      : jacobians(model), params(params_in), substeps(substeps_in) {}
  StepJacobians jacobians;
  const Params& params;
  int substeps;
  Workspace workspace;
  State current, next, reference;
  std::vector<double> A_step, B_step, product;
};

SimulatorDynamics::SimulatorDynamics(const Model& model, const Params& params, int substeps)
    : impl_(std::make_unique<Impl>(model, params, substeps)) {
  if (substeps < 1) throw Error(message("SimulatorDynamics: substeps must be at least 1, got ", substeps));
  validate_params(model, params);
}
SimulatorDynamics::~SimulatorDynamics() = default;

const Model& SimulatorDynamics::model() const {
  return impl_->jacobians.model();
}
int SimulatorDynamics::state_size() const {
  return kPackedPerBody * model().body_count();
}
int SimulatorDynamics::tangent_size() const {
  return state_tangent_size(model());
}
int SimulatorDynamics::control_size() const {
  return model().actuator_count();
}

void SimulatorDynamics::pack(const State& state, std::span<double> flat) const {
  require_size(flat.size(), static_cast<Index>(state_size()), "packed state");
  require_size(static_cast<Index>(state.body_count()), static_cast<Index>(model().body_count()), "state bodies");
  for (Index b = 0; b < static_cast<Index>(model().body_count()); ++b) {
    double* x = flat.data() + kPackedPerBody * b;
    const Vec3& p = state.position[b];
    const Quat& q = state.orientation[b];
    const Vec3& v = state.linear_velocity[b];
    const Vec3& w = state.angular_velocity[b];
    const double values[kPackedPerBody] = {p.x, p.y, p.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z};
    std::copy(values, values + kPackedPerBody, x);
  }
}

void SimulatorDynamics::unpack(std::span<const double> flat, State& state) const {
  require_size(flat.size(), static_cast<Index>(state_size()), "packed state");
  state.resize(model().body_count());
  for (Index b = 0; b < static_cast<Index>(model().body_count()); ++b) {
    const double* x = flat.data() + kPackedPerBody * b;
    state.position[b] = {x[0], x[1], x[2]};
    state.orientation[b] = Quat{x[3], x[4], x[5], x[6]};
    state.linear_velocity[b] = {x[7], x[8], x[9]};
    state.angular_velocity[b] = {x[10], x[11], x[12]};
  }
}

void SimulatorDynamics::step(std::span<const double> state, std::span<const double> controls, std::span<double> next) {
  Impl& s = *impl_;
  require_size(controls.size(), static_cast<Index>(control_size()), "controls");
  unpack(state, s.current);
  for (int k = 0; k < s.substeps; ++k) {
    diffphys::step(model(), s.params, s.current, controls, s.next, s.workspace);
    std::swap(s.current, s.next);
  }
  pack(s.current, next);
}

void SimulatorDynamics::linearize(std::span<const double> state, std::span<const double> controls,
                                  std::span<double> next, std::span<double> A, std::span<double> B) {
  Impl& s = *impl_;
  const auto n = static_cast<Index>(tangent_size()), m = static_cast<Index>(control_size());
  require_size(controls.size(), m, "controls");
  require_size(A.size(), n * n, "A");
  require_size(B.size(), n * m, "B");
  unpack(state, s.current);
  s.jacobians.compute(s.params, s.current, controls, s.next, A, B);
  std::swap(s.current, s.next);
  // Zero-order hold over the substeps: A ← A_k A, B ← A_k B + B_k.
  s.A_step.resize(n * n);
  s.B_step.resize(n * m);
  s.product.resize(n * std::max(n, m));
  for (int k = 1; k < s.substeps; ++k) {
    s.jacobians.compute(s.params, s.current, controls, s.next, s.A_step, s.B_step);
    std::swap(s.current, s.next);
    multiply(s.A_step.data(), A.data(), s.product.data(), n, n, n);
    std::copy(s.product.begin(), s.product.begin() + static_cast<std::ptrdiff_t>(n * n), A.begin());
    multiply(s.A_step.data(), B.data(), s.product.data(), n, n, m);
    for (Index i = 0; i < n * m; ++i) B[i] = s.product[i] + s.B_step[i];
  }
  pack(s.current, next);
}

void SimulatorDynamics::difference(std::span<const double> state, std::span<const double> reference,
                                   std::span<double> tangent) {
  Impl& s = *impl_;
  unpack(state, s.current);
  unpack(reference, s.reference);
  state_difference(model(), s.current, s.reference, tangent);
}

// ---------------------------------------------------------------------------------------------
// Quadratic cost

QuadraticCost::QuadraticCost(IlqrDynamics& dynamics, std::vector<double> Q, std::vector<double> R,
                             std::vector<double> Q_final, std::vector<double> state_reference,
                             std::vector<double> control_reference)
    : dynamics_(dynamics),
      n_(dynamics.tangent_size()),
      m_(dynamics.control_size()),
      Q_(std::move(Q)),
      R_(std::move(R)),
      Q_final_(std::move(Q_final)),
      state_reference_(std::move(state_reference)),
      control_reference_(std::move(control_reference)) {
  const auto n = static_cast<Index>(n_), m = static_cast<Index>(m_);
  require_size(Q_.size(), n * n, "QuadraticCost Q (tangent × tangent)");
  require_size(R_.size(), m * m, "QuadraticCost R (control × control)");
  require_size(Q_final_.size(), n * n, "QuadraticCost Q_final (tangent × tangent)");
  require_size(state_reference_.size(), static_cast<Index>(dynamics.state_size()), "QuadraticCost state reference");
  if (control_reference_.empty()) control_reference_.assign(m, 0.0);
  require_size(control_reference_.size(), m, "QuadraticCost control reference");
  difference_.resize(n);
  product_.resize(n);
}

double QuadraticCost::quadratic(std::span<const double> state, const std::vector<double>& weight,
                                CostDerivatives* derivatives) {
  const auto n = static_cast<Index>(n_);
  dynamics_.difference(state, state_reference_, difference_);
  double value = 0.0;
  for (Index i = 0; i < n; ++i) {
    double row = 0.0;
    for (Index j = 0; j < n; ++j) row += weight[i * n + j] * difference_[j];
    product_[i] = row;
    value += 0.5 * difference_[i] * row;
  }
  if (derivatives) {
    for (Index i = 0; i < n; ++i) derivatives->x[i] += product_[i];
    for (Index i = 0; i < n * n; ++i) derivatives->xx[i] += weight[i];
  }
  return value;
}

double QuadraticCost::stage(int, std::span<const double> state, std::span<const double> controls,
                            CostDerivatives* derivatives) {
  const auto m = static_cast<Index>(m_);
  double value = quadratic(state, Q_, derivatives);
  for (Index i = 0; i < m; ++i) {
    double row = 0.0;
    for (Index j = 0; j < m; ++j) row += R_[i * m + j] * (controls[j] - control_reference_[j]);
    value += 0.5 * (controls[i] - control_reference_[i]) * row;
    if (derivatives) derivatives->u[i] += row;
  }
  if (derivatives)
    for (Index i = 0; i < m * m; ++i) derivatives->uu[i] += R_[i];
  return value;
}

double QuadraticCost::final(std::span<const double> state, CostDerivatives* derivatives) {
  return quadratic(state, Q_final_, derivatives);
}

// ---------------------------------------------------------------------------------------------
// iLQR

struct Ilqr::Buffers {
  std::vector<double> states, controls, new_states, new_controls;  // nominal and candidate
  std::vector<double> A, B;                                        // (T n n), (T n m)
  std::vector<CostDerivatives> derivatives;                        // (T + 1)
  std::vector<double> K, k;                                        // (T m n), (T m)
  std::vector<double> Vx, Vxx, Qx, Qu, Qxx, Quu, Qux, Quu_factor, VA, VB, scratch, delta;
  std::vector<char> clamped;
  std::vector<Index> free_indices;
};

Ilqr::Ilqr(IlqrDynamics& dynamics, IlqrCost& cost, IlqrSettings settings)
    : dynamics_(dynamics), cost_(cost), settings_(std::move(settings)), buffers_(std::make_unique<Buffers>()) {
  const auto m = static_cast<Index>(dynamics_.control_size());
  if (!settings_.control_lower.empty()) require_size(settings_.control_lower.size(), m, "control_lower");
  if (!settings_.control_upper.empty()) require_size(settings_.control_upper.size(), m, "control_upper");
  for (Index i = 0; i < m && !settings_.control_lower.empty() && !settings_.control_upper.empty(); ++i)
    if (!(settings_.control_lower[i] <= settings_.control_upper[i]))
      throw Error(message("iLQR: control ", i, " has lower bound ", settings_.control_lower[i],
                          " above its upper bound ", settings_.control_upper[i]));
  if (settings_.max_iterations < 1 || settings_.line_search_steps < 1)
    throw Error(message("iLQR: max_iterations (", settings_.max_iterations, ") and line_search_steps (",
                        settings_.line_search_steps, ") must be at least 1"));
}
Ilqr::~Ilqr() = default;

IlqrResult Ilqr::solve(std::span<const double> initial_state, std::span<const double> initial_controls, int horizon) {
  if (horizon < 1) throw Error(message("iLQR: horizon must be at least 1, got ", horizon));
  const auto T = static_cast<Index>(horizon);
  const auto nx = static_cast<Index>(dynamics_.state_size());
  const auto n = static_cast<Index>(dynamics_.tangent_size());
  const auto m = static_cast<Index>(dynamics_.control_size());
  require_size(initial_state.size(), nx, "initial state");
  for (Index i = 0; i < nx; ++i)
    if (!std::isfinite(initial_state[i]))
      throw Error(message("iLQR: initial state entry ", i, " is not finite: ", initial_state[i]));
  if (!initial_controls.empty()) require_size(initial_controls.size(), T * m, "initial controls (T × m)");

  Buffers& b = *buffers_;
  const std::vector<double>& lower = settings_.control_lower;
  const std::vector<double>& upper = settings_.control_upper;
  auto clamp_control = [&](Index i, double u) {
    if (!lower.empty()) u = std::max(u, lower[i]);
    if (!upper.empty()) u = std::min(u, upper[i]);
    return u;
  };
  b.states.assign((T + 1) * nx, 0.0);
  b.new_states.assign((T + 1) * nx, 0.0);
  b.controls.assign(T * m, 0.0);
  if (!initial_controls.empty()) std::copy(initial_controls.begin(), initial_controls.end(), b.controls.begin());
  for (Index t = 0; t < T; ++t)
    for (Index i = 0; i < m; ++i) b.controls[t * m + i] = clamp_control(i, b.controls[t * m + i]);
  b.new_controls = b.controls;
  b.A.assign(T * n * n, 0.0);
  b.B.assign(T * n * m, 0.0);
  b.derivatives.resize(T + 1);
  b.K.assign(T * m * n, 0.0);
  b.k.assign(T * m, 0.0);
  b.Vx.resize(n);
  b.Vxx.resize(n * n);
  b.Qx.resize(n);
  b.Qu.resize(m);
  b.Qxx.resize(n * n);
  b.Quu.resize(m * m);
  b.Qux.resize(m * n);
  b.Quu_factor.resize(m * m);
  b.VA.resize(n * n);
  b.VB.resize(n * m);
  b.scratch.resize(std::max(n, m) * std::max(n, m));
  b.free_indices.reserve(m);
  b.delta.resize(n);
  b.clamped.resize(m);

  auto state_at = [&](std::vector<double>& states, Index t) { return std::span<double>(states).subspan(t * nx, nx); };
  auto control_at = [&](std::vector<double>& controls, Index t) {
    return std::span<double>(controls).subspan(t * m, m);
  };
  auto reset_derivatives = [&](CostDerivatives& d) {
    d.x.assign(n, 0.0);
    d.u.assign(m, 0.0);
    d.xx.assign(n * n, 0.0);
    d.uu.assign(m * m, 0.0);
    d.ux.assign(m * n, 0.0);
  };
  // Linearise dynamics and cost along the nominal trajectory; returns its cost.
  auto linearize_nominal = [&]() {
    double total = 0.0;
    for (Index t = 0; t < T; ++t) {
      dynamics_.linearize(state_at(b.states, t), control_at(b.controls, t), state_at(b.states, t + 1),
                          std::span<double>(b.A).subspan(t * n * n, n * n),
                          std::span<double>(b.B).subspan(t * n * m, n * m));
      reset_derivatives(b.derivatives[t]);
      total += cost_.stage(static_cast<int>(t), state_at(b.states, t), control_at(b.controls, t), &b.derivatives[t]);
    }
    reset_derivatives(b.derivatives[T]);
    total += cost_.final(state_at(b.states, T), &b.derivatives[T]);
    return total;
  };

  // The LQR backward pass on the local model (Li & Todorov 2004 §3; Tassa et al. 2012 eqs. 5–6)
  // with Q_uu + μI; false when a regularised Q_uu is not positive definite. Accumulates the
  // predicted decrease ΔJ(α) = −(α d1 + α² d2).
  double expected_linear = 0.0, expected_quadratic = 0.0;
  auto backward = [&](double mu) {
    expected_linear = expected_quadratic = 0.0;
    std::copy(b.derivatives[T].x.begin(), b.derivatives[T].x.end(), b.Vx.begin());
    std::copy(b.derivatives[T].xx.begin(), b.derivatives[T].xx.end(), b.Vxx.begin());
    for (Index t = T; t-- > 0;) {
      const double* A = b.A.data() + t * n * n;
      const double* B = b.B.data() + t * n * m;
      const CostDerivatives& l = b.derivatives[t];
      // Q_x = ℓ_x + Aᵀ V_x, Q_u = ℓ_u + Bᵀ V_x
      multiply_transposed(A, b.Vx.data(), b.Qx.data(), n, n, 1);
      multiply_transposed(B, b.Vx.data(), b.Qu.data(), n, m, 1);
      for (Index i = 0; i < n; ++i) b.Qx[i] += l.x[i];
      for (Index i = 0; i < m; ++i) b.Qu[i] += l.u[i];
      // Q_xx = ℓ_xx + Aᵀ V_xx A, Q_uu = ℓ_uu + Bᵀ V_xx B, Q_ux = ℓ_ux + Bᵀ V_xx A
      multiply(b.Vxx.data(), A, b.VA.data(), n, n, n);
      multiply(b.Vxx.data(), B, b.VB.data(), n, n, m);
      multiply_transposed(A, b.VA.data(), b.Qxx.data(), n, n, n);
      multiply_transposed(B, b.VB.data(), b.Quu.data(), n, m, m);
      multiply_transposed(B, b.VA.data(), b.Qux.data(), n, m, n);
      for (Index i = 0; i < n * n; ++i) b.Qxx[i] += l.xx[i];
      for (Index i = 0; i < m * m; ++i) b.Quu[i] += l.uu[i];
      for (Index i = 0; i < m * n; ++i) b.Qux[i] += l.ux[i];

      // Regularised Q_uu: its factor gives the Newton step; controls whose step would leave
      // the box are fixed at the bound and the free ones re-solved (one active-set pass).
      double* k = b.k.data() + t * m;
      double* K = b.K.data() + t * m * n;
      const double* u = b.controls.data() + t * m;
      b.Quu_factor = b.Quu;
      for (Index i = 0; i < m; ++i) b.Quu_factor[i * m + i] += mu;
      if (!solve::cholesky_factorize(b.Quu_factor.data(), m, m)) return false;
      for (Index i = 0; i < m; ++i) k[i] = -b.Qu[i];
      solve::cholesky_solve(b.Quu_factor.data(), m, m, k);
      bool any_clamped = false;
      for (Index i = 0; i < m; ++i) {
        const double target = u[i] + k[i];
        b.clamped[i] = (!lower.empty() && target < lower[i]) || (!upper.empty() && target > upper[i]);
        any_clamped = any_clamped || b.clamped[i];
      }
      if (any_clamped) {
        // Free block: Quu_ff k_f = −(Q_u,f + Quu_fc k_c), K_f = −Quu_ff⁻¹ Q_ux,f; clamped: K_c = 0.
        std::vector<Index>& free_indices = b.free_indices;
        free_indices.clear();
        for (Index i = 0; i < m; ++i) {
          if (b.clamped[i])
            k[i] = clamp_control(i, u[i] + k[i]) - u[i];
          else
            free_indices.push_back(i);
        }
        const Index f = free_indices.size();
        for (Index i = 0; i < m * n; ++i) K[i] = 0.0;
        if (f > 0) {
          for (Index a = 0; a < f; ++a)
            for (Index c = 0; c < f; ++c)
              b.Quu_factor[a * m + c] = b.Quu[free_indices[a] * m + free_indices[c]] + (a == c ? mu : 0.0);
          if (!solve::cholesky_factorize(b.Quu_factor.data(), f, m)) return false;
          for (Index a = 0; a < f; ++a) {
            double rhs = -b.Qu[free_indices[a]];
            for (Index c = 0; c < m; ++c)
              if (b.clamped[c]) rhs -= b.Quu[free_indices[a] * m + c] * k[c];
            b.scratch[a] = rhs;
          }
          solve::cholesky_solve(b.Quu_factor.data(), f, m, b.scratch.data());
          for (Index a = 0; a < f; ++a) k[free_indices[a]] = b.scratch[a];
          for (Index j = 0; j < n; ++j) {
            for (Index a = 0; a < f; ++a) b.scratch[a] = -b.Qux[free_indices[a] * n + j];
            solve::cholesky_solve(b.Quu_factor.data(), f, m, b.scratch.data());
            for (Index a = 0; a < f; ++a) K[free_indices[a] * n + j] = b.scratch[a];
          }
        }
      } else {
        for (Index j = 0; j < n; ++j) {
          for (Index i = 0; i < m; ++i) b.scratch[i] = -b.Qux[i * n + j];
          solve::cholesky_solve(b.Quu_factor.data(), m, m, b.scratch.data());
          for (Index i = 0; i < m; ++i) K[i * n + j] = b.scratch[i];
        }
      }

      // Predicted decrease and the value function (Tassa et al. 2012, eq. 11):
      // V_x = Q_x + Kᵀ Q_uu k + Kᵀ Q_u + Q_uxᵀ k,  V_xx = Q_xx + Kᵀ Q_uu K + Kᵀ Q_ux + Q_uxᵀ K.
      for (Index i = 0; i < m; ++i) {
        expected_linear += k[i] * b.Qu[i];
        for (Index j = 0; j < m; ++j) expected_quadratic += 0.5 * k[i] * b.Quu[i * m + j] * k[j];
      }
      for (Index j = 0; j < n; ++j) {
        double value = b.Qx[j];
        for (Index i = 0; i < m; ++i) {
          double quu_k = 0.0;
          for (Index c = 0; c < m; ++c) quu_k += b.Quu[i * m + c] * k[c];
          value += K[i * n + j] * (quu_k + b.Qu[i]) + b.Qux[i * n + j] * k[i];
        }
        b.Vx[j] = value;
      }
      // scratch (m × n) = Q_uu K + Q_ux; V_xx = Q_xx + Kᵀ scratch + Q_uxᵀ K.
      multiply(b.Quu.data(), K, b.scratch.data(), m, m, n);
      for (Index i = 0; i < m * n; ++i) b.scratch[i] += b.Qux[i];
      multiply_transposed(K, b.scratch.data(), b.Vxx.data(), m, n, n);
      multiply_transposed(b.Qux.data(), K, b.VA.data(), m, n, n);
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j) b.Vxx[i * n + j] += b.Qxx[i * n + j] + b.VA[i * n + j];
      for (Index i = 0; i < n; ++i)
        for (Index j = i + 1; j < n; ++j) {
          const double mean = 0.5 * (b.Vxx[i * n + j] + b.Vxx[j * n + i]);
          b.Vxx[i * n + j] = b.Vxx[j * n + i] = mean;
        }
    }
    return true;
  };

  // Forward pass with step α: u = ū + α k + K (x ⊖ x̄), clamped; returns the new cost.
  auto forward = [&](double alpha) {
    double total = 0.0;
    std::copy(initial_state.begin(), initial_state.end(), b.new_states.begin());
    for (Index t = 0; t < T; ++t) {
      dynamics_.difference(state_at(b.new_states, t), state_at(b.states, t), b.delta);
      for (Index i = 0; i < m; ++i) {
        double u = b.controls[t * m + i] + alpha * b.k[t * m + i];
        for (Index j = 0; j < n; ++j) u += b.K[(t * m + i) * n + j] * b.delta[j];
        b.new_controls[t * m + i] = clamp_control(i, u);
      }
      total += cost_.stage(static_cast<int>(t), state_at(b.new_states, t), control_at(b.new_controls, t), nullptr);
      dynamics_.step(state_at(b.new_states, t), control_at(b.new_controls, t), state_at(b.new_states, t + 1));
    }
    total += cost_.final(state_at(b.new_states, T), nullptr);
    return std::isfinite(total) ? total : std::numeric_limits<double>::infinity();
  };

  IlqrResult result;
  std::copy(initial_state.begin(), initial_state.end(), b.states.begin());
  double cost = linearize_nominal();
  result.cost_history.push_back(cost);
  double mu = settings_.initial_regularization;
  double mu_factor = 1.0;
  const double factor = settings_.regularization_factor;
  auto raise_mu = [&]() {
    mu_factor = std::max(factor, mu_factor * factor);
    mu = std::max(settings_.min_regularization, mu * mu_factor);
  };
  auto lower_mu = [&]() {
    mu_factor = std::min(1.0 / factor, mu_factor / factor);
    mu = mu * mu_factor > settings_.min_regularization ? mu * mu_factor : 0.0;
  };

  while (result.iterations < settings_.max_iterations) {
    ++result.iterations;
    if (!backward(mu)) {
      raise_mu();
      if (mu > settings_.max_regularization) break;
      continue;
    }
    const double predicted = -(expected_linear + expected_quadratic);
    if (predicted <= settings_.tolerance * std::abs(cost) || predicted <= 0.0) {
      result.converged = true;  // the local model sees nothing left to gain
      break;
    }
    bool accepted = false;
    double alpha = 1.0, new_cost = cost;
    for (int attempt = 0; attempt < settings_.line_search_steps; ++attempt, alpha *= 0.5) {
      new_cost = forward(alpha);
      const double expected = -(alpha * expected_linear + alpha * alpha * expected_quadratic);
      if (cost - new_cost >= settings_.acceptance_ratio * expected && new_cost < cost) {
        accepted = true;
        break;
      }
    }
    if (!accepted) {
      raise_mu();
      if (mu > settings_.max_regularization) break;
      continue;
    }
    std::swap(b.states, b.new_states);
    std::swap(b.controls, b.new_controls);
    const double decrease = cost - new_cost;
    cost = linearize_nominal();
    result.cost_history.push_back(cost);
    lower_mu();
    if (decrease <= settings_.tolerance * std::abs(cost)) {
      result.converged = true;
      break;
    }
  }

  result.states = b.states;
  result.controls = b.controls;
  result.feedback = b.K;
  result.feedforward = b.k;
  result.cost = cost;
  result.regularization = mu;
  return result;
}

// ---------------------------------------------------------------------------------------------
// MPC

Mpc::Mpc(IlqrDynamics& dynamics, IlqrCost& cost, int horizon, IlqrSettings settings)
    : ilqr_(dynamics, cost, std::move(settings)), horizon_(horizon), control_size_(dynamics.control_size()) {
  if (horizon < 1) throw Error(message("MPC: horizon must be at least 1, got ", horizon));
}

void Mpc::reset() {
  warm_start_.clear();
}

std::span<const double> Mpc::control(std::span<const double> state) {
  plan_ = ilqr_.solve(state, warm_start_, horizon_);
  // Shift the plan by one step for the next call, repeating its last control.
  const auto m = static_cast<Index>(control_size_);
  warm_start_.assign(plan_.controls.begin() + static_cast<std::ptrdiff_t>(m), plan_.controls.end());
  warm_start_.insert(warm_start_.end(), plan_.controls.end() - static_cast<std::ptrdiff_t>(m), plan_.controls.end());
  return std::span<const double>(plan_.controls).subspan(0, m);
}

}  // namespace diffphys
