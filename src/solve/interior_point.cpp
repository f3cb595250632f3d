// solve/interior_point.cpp — primal–dual interior point for the mixed LCP of mlcp.hpp.
//
// Unknowns λ (all rows) and slacks s = w_I > 0 of the complementarity rows I. Newton on
//   r_E = (Bλ + q)_E = 0,  r_I = (Bλ + q)_I − s = 0,  λ_I ∘ s = σμ,      B = A + F,
// with s eliminated: (B + diag(0_E, s/λ_I)) Δλ = −r − [0; Λ⁻¹ r_c]. Mehrotra's predictor–
// corrector picks the centring σ = (μ_aff/μ)³ and adds the second-order term Δλ_aff∘Δs_aff
// (Mattingley & Boyd 2012, §5; the same scheme de Avila Belbute-Peres et al. 2018 use for
// the LCP). B is not symmetric (friction couples rows one way), hence a dense LU with
// pivoting; problems with equality rows only skip all this: one sparse LDLᵀ solve.
#include <algorithm>
#include <cmath>

#include "solve/dense_lu.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/lemke.hpp"
#include "solve/mlcp.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {
namespace {

constexpr double kDirectionRegularisation = 1e-9;

bool is_complementarity(RowType type) { return type != RowType::Equality; }

// Natural-map residual from B and q (velocity units, as mlcp_residual), for the stopping test.
double natural_residual(std::span<const ConstraintRow> rows, const MlcpWorkspace& ws, std::span<const double> lambda,
                        std::span<const double> w) {
  double residual = 0.0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double r = 0.0;
    switch (rows[i].type) {
      case RowType::Equality: r = std::abs(w[i]); break;
      case RowType::Unilateral:
      case RowType::Direction: r = std::abs(std::min(ws.diagonal[i] * lambda[i], w[i])); break;
      case RowType::Bound: {
        double mean_diagonal = 0.0;
        for (int k = 0; k < rows[i].group_size; ++k) mean_diagonal += ws.diagonal[static_cast<std::size_t>(rows[i].group + k)];
        mean_diagonal /= std::max(rows[i].group_size, 1);
        r = std::abs(std::min(lambda[i], mean_diagonal * w[i]));
        break;
      }
    }
    if (std::isnan(r)) return r;
    residual = std::max(residual, r);
  }
  return residual;
}

// Fallback for a stalled interior point: λ_E = −B_EE⁻¹(q_E + B_EI λ_I) turns the mixed LCP
// into the standard LCP w_I = (B_II − B_IE B_EE⁻¹ B_EI) λ_I + q_I − B_IE B_EE⁻¹ q_E, solved by
// Lemke's method. Uses ws.matrix (B) and ws.q; returns false if pivoting found no solution.
bool solve_by_pivoting(std::span<const ConstraintRow> rows, MlcpWorkspace& ws, std::span<double> lambda) {
  const std::size_t count = rows.size();
  ws.equality_rows.clear();
  ws.complementarity_rows.clear();
  for (std::size_t i = 0; i < count; ++i)
    (is_complementarity(rows[i].type) ? ws.complementarity_rows : ws.equality_rows).push_back(static_cast<int>(i));
  const auto equalities = ws.equality_rows.size(), others = ws.complementarity_rows.size();
  const auto B = [&](int i, int j) { return ws.matrix[static_cast<std::size_t>(i) * count + static_cast<std::size_t>(j)]; };
  ws.coupling.assign(equalities * others, 0.0);
  ws.equality_offset.assign(equalities, 0.0);
  if (equalities > 0) {
    ws.factor.resize(equalities * equalities);
    for (std::size_t a = 0; a < equalities; ++a)
      for (std::size_t b = 0; b < equalities; ++b)
        ws.factor[a * equalities + b] = B(ws.equality_rows[a], ws.equality_rows[b]) * (a == b ? 1.0 + 1e-13 : 1.0);
    ws.pivots.resize(equalities);
    if (!lu_factorize(ws.factor, static_cast<int>(equalities), ws.pivots)) return false;
    ws.scratch.resize(equalities);
    for (std::size_t c = 0; c < others; ++c) {
      for (std::size_t e = 0; e < equalities; ++e) ws.scratch[e] = B(ws.equality_rows[e], ws.complementarity_rows[c]);
      lu_solve(ws.factor, static_cast<int>(equalities), ws.pivots, ws.scratch);
      for (std::size_t e = 0; e < equalities; ++e) ws.coupling[e * others + c] = ws.scratch[e];
    }
    for (std::size_t e = 0; e < equalities; ++e) ws.equality_offset[e] = ws.q[static_cast<std::size_t>(ws.equality_rows[e])];
    lu_solve(ws.factor, static_cast<int>(equalities), ws.pivots, ws.equality_offset);
  }
  ws.schur.resize(others * others);
  ws.reduced_q.resize(others);
  for (std::size_t a = 0; a < others; ++a) {
    const int row = ws.complementarity_rows[a];
    double reduced = ws.q[static_cast<std::size_t>(row)];
    for (std::size_t e = 0; e < equalities; ++e) reduced -= B(row, ws.equality_rows[e]) * ws.equality_offset[e];
    ws.reduced_q[a] = reduced;
    for (std::size_t b = 0; b < others; ++b) {
      double entry = B(row, ws.complementarity_rows[b]);
      for (std::size_t e = 0; e < equalities; ++e) entry -= B(row, ws.equality_rows[e]) * ws.coupling[e * others + b];
      ws.schur[a * others + b] = entry;
    }
  }
  ws.reduced_solution.resize(others);
  const int n = static_cast<int>(others);
  if (!solve_lemke(ws.schur, ws.reduced_q, n, 50 * n + 100, ws.lemke, ws.reduced_solution)) return false;
  for (std::size_t a = 0; a < others; ++a) lambda[static_cast<std::size_t>(ws.complementarity_rows[a])] = ws.reduced_solution[a];
  for (std::size_t e = 0; e < equalities; ++e) {
    double value = -ws.equality_offset[e];
    for (std::size_t b = 0; b < others; ++b) value -= ws.coupling[e * others + b] * ws.reduced_solution[b];
    lambda[static_cast<std::size_t>(ws.equality_rows[e])] = value;
  }
  return true;
}

}  // namespace

MlcpResult solve_interior_point(std::span<const ConstraintRow> rows, const MassBlocks& mass,
                                std::span<const double> free_velocity, int max_iterations, double tolerance,
                                MlcpWorkspace& ws, std::span<double> lambda, std::span<double> velocity) {
  const int m = static_cast<int>(rows.size());
  const auto count = static_cast<std::size_t>(m);
  MlcpResult result;
  compute_responses(rows, mass, ws);
  ws.q.resize(count);
  for (std::size_t i = 0; i < count; ++i) ws.q[i] = row_times_velocity(rows[i], free_velocity) - rows[i].rhs;

  const bool has_complementarity = std::any_of(rows.begin(), rows.end(), [](const ConstraintRow& row) {
    return is_complementarity(row.type);
  });
  if (!has_complementarity) {
    // Equality rows only: A λ = −q, one sparse factorisation.
    if (m > 0 && !envelope_factorize(rows, mass, ws)) {
      std::fill(lambda.begin(), lambda.end(), 0.0);
      apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
      result.residual = mlcp_residual(rows, lambda, velocity, ws);
      return result;  // not converged: singular joint system
    }
    for (std::size_t i = 0; i < count; ++i) lambda[i] = -ws.q[i];
    if (m > 0) envelope_solve(ws, lambda);
    apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
    result.iterations = 1;
    result.residual = mlcp_residual(rows, lambda, velocity, ws);
    if (result.residual > tolerance) {
      // One step of iterative refinement removes the regularisation's bias: λ += Â⁻¹(−w).
      ws.rhs_vector.resize(count);
      for (std::size_t i = 0; i < count; ++i) ws.rhs_vector[i] = -ws.w[i];
      envelope_solve(ws, ws.rhs_vector);
      for (std::size_t i = 0; i < count; ++i) lambda[i] += ws.rhs_vector[i];
      apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
      result.iterations = 2;
      result.residual = mlcp_residual(rows, lambda, velocity, ws);
    }
    result.converged = result.residual <= tolerance;
    return result;
  }

  // B = A + F, dense row-major.
  ws.matrix.assign(count * count, 0.0);
  const auto B = [&](std::size_t i, std::size_t j) -> double& { return ws.matrix[i * count + j]; };
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j = 0; j < count; ++j) B(i, j) = delassus_entry(rows[i], rows[j], ws.responses[j]);
    const ConstraintRow& row = rows[i];
    if (row.type == RowType::Direction) B(i, static_cast<std::size_t>(row.group)) += 1.0;
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) B(i, static_cast<std::size_t>(row.normal)) += row.coefficient;
      for (int k = 0; k < row.group_size; ++k) B(i, static_cast<std::size_t>(row.group + k)) -= 1.0;
    }
  }
  // A scale for the barrier's start: the mean diagonal of A over rows that have one.
  double diagonal_scale = 0.0;
  int diagonal_count = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (ws.diagonal[i] > 0) {
      diagonal_scale += ws.diagonal[i];
      ++diagonal_count;
    }
  diagonal_scale = diagonal_count > 0 ? diagonal_scale / diagonal_count : 1.0;

  ws.factor.resize(count * count);
  ws.pivots.resize(count);
  ws.w.resize(count);
  ws.slack.resize(count);
  ws.step_lambda.resize(count);
  ws.step_slack.resize(count);
  ws.rhs_vector.resize(count);
  std::vector<double>& s = ws.slack;
  std::vector<double>& dl = ws.step_lambda;
  std::vector<double>& ds = ws.step_slack;
  std::vector<double>& w = ws.w;

  const auto compute_w = [&] {
    for (std::size_t i = 0; i < count; ++i) {
      double sum = ws.q[i];
      const double* row = &ws.matrix[i * count];
      for (std::size_t j = 0; j < count; ++j) sum += row[j] * lambda[j];
      w[i] = sum;
    }
  };
  // Factorises B + diag(0_E, barrier) into ws.factor.
  const auto factorize = [&](auto barrier) {
    std::copy(ws.matrix.begin(), ws.matrix.end(), ws.factor.begin());
    // A relative regularisation of every row's diagonal keeps rows that are linear
    // combinations of others (redundant joint rows; friction directions the joints already
    // forbid) solvable. It only perturbs the Newton direction — the residual is computed
    // from B itself — so the solution stays that of the unregularised problem.
    for (std::size_t i = 0; i < count; ++i)
      ws.factor[i * count + i] += kDirectionRegularisation * ws.diagonal[i] +
                                  (is_complementarity(rows[i].type) ? barrier(i) : 0.0);
    return lu_factorize(ws.factor, m, ws.pivots);
  };

  // Starting point (Nocedal & Wright, Numerical Optimization, §16.6): a regularised solve,
  // then λ_I and s shifted into the positive orthant.
  if (!factorize([&](std::size_t) { return diagonal_scale; })) return result;
  for (std::size_t i = 0; i < count; ++i) lambda[i] = -ws.q[i];
  lu_solve(ws.factor, m, ws.pivots, lambda);
  compute_w();
  double lambda_shift = 0.0, slack_shift = 0.0;
  for (std::size_t i = 0; i < count; ++i)
    if (is_complementarity(rows[i].type)) {
      lambda_shift = std::max(lambda_shift, -1.5 * lambda[i]);
      slack_shift = std::max(slack_shift, -1.5 * w[i]);
    }
  double lambda_sum = 0.0, slack_sum = 0.0, product_sum = 0.0;
  int complementarity_count = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (is_complementarity(rows[i].type)) {
      lambda[i] += lambda_shift;
      s[i] = w[i] + slack_shift;
      lambda_sum += lambda[i];
      slack_sum += s[i];
      product_sum += lambda[i] * s[i];
      ++complementarity_count;
    } else {
      s[i] = 0.0;
    }
  for (std::size_t i = 0; i < count; ++i)
    if (is_complementarity(rows[i].type)) {
      lambda[i] += slack_sum > 0 ? 0.5 * product_sum / slack_sum : 0.0;
      s[i] += lambda_sum > 0 ? 0.5 * product_sum / lambda_sum : 0.0;
      // Never start on the boundary: a floor relative to the problem's scale.
      lambda[i] = std::max(lambda[i], 1e-6);
      s[i] = std::max(s[i], 1e-6 * diagonal_scale);
    }

  double best_residual = INFINITY;
  int last_improvement = 0;
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    compute_w();
    result.iterations = iteration;
    const double residual = natural_residual(rows, ws, lambda, w);
    if (std::isnan(residual)) break;
    if (residual <= tolerance) {
      result.converged = true;
      break;
    }
    // Mehrotra's method converges superlinearly or not at all: ten iterations without
    // halving the residual mean it has stalled, and pivoting takes over below.
    if (residual < 0.5 * best_residual) {
      best_residual = residual;
      last_improvement = iteration;
    } else if (iteration - last_improvement > 10) {
      break;
    }
    double mu = 0.0;
    for (std::size_t i = 0; i < count; ++i)
      if (is_complementarity(rows[i].type)) mu += lambda[i] * s[i];
    mu /= complementarity_count;

    if (!factorize([&](std::size_t i) { return s[i] / lambda[i]; })) break;
    // Predictor (affine scaling): target λ∘s = 0.
    for (std::size_t i = 0; i < count; ++i)
      dl[i] = is_complementarity(rows[i].type) ? -(w[i] - s[i]) - s[i] : -w[i];
    lu_solve(ws.factor, m, ws.pivots, dl);
    const auto step_to_boundary = [&] {
      double alpha = 1.0;
      for (std::size_t i = 0; i < count; ++i) {
        if (!is_complementarity(rows[i].type)) continue;
        if (dl[i] < 0) alpha = std::min(alpha, -lambda[i] / dl[i]);
        if (ds[i] < 0) alpha = std::min(alpha, -s[i] / ds[i]);
      }
      return alpha;
    };
    for (std::size_t i = 0; i < count; ++i)
      ds[i] = is_complementarity(rows[i].type) ? -s[i] - s[i] / lambda[i] * dl[i] : 0.0;
    const double alpha_affine = step_to_boundary();
    double mu_affine = 0.0;
    for (std::size_t i = 0; i < count; ++i)
      if (is_complementarity(rows[i].type))
        mu_affine += (lambda[i] + alpha_affine * dl[i]) * (s[i] + alpha_affine * ds[i]);
    mu_affine /= complementarity_count;
    const double sigma = std::pow(mu_affine / mu, 3.0);
    // Corrector: target λ∘s = σμ − Δλ_aff∘Δs_aff.
    for (std::size_t i = 0; i < count; ++i) {
      if (is_complementarity(rows[i].type)) {
        ws.rhs_vector[i] = lambda[i] * s[i] + dl[i] * ds[i] - sigma * mu;  // r_c
      } else {
        ws.rhs_vector[i] = 0.0;
      }
    }
    for (std::size_t i = 0; i < count; ++i)
      dl[i] = is_complementarity(rows[i].type) ? -(w[i] - s[i]) - ws.rhs_vector[i] / lambda[i] : -w[i];
    lu_solve(ws.factor, m, ws.pivots, dl);
    for (std::size_t i = 0; i < count; ++i)
      ds[i] = is_complementarity(rows[i].type) ? -(ws.rhs_vector[i] + s[i] * dl[i]) / lambda[i] : 0.0;
    const double alpha = std::min(1.0, 0.99 * step_to_boundary());
    for (std::size_t i = 0; i < count; ++i) {
      lambda[i] += alpha * dl[i];
      s[i] += alpha * ds[i];
    }
    result.iterations = iteration + 1;
  }
  apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
  result.residual = mlcp_residual(rows, lambda, velocity, ws);
  if (!(result.residual <= tolerance)) {
    // Keep the interior point's answer unless pivoting does better.
    ws.rhs_vector.assign(lambda.begin(), lambda.end());
    if (solve_by_pivoting(rows, ws, lambda)) {
      apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
      const double pivoting_residual = mlcp_residual(rows, lambda, velocity, ws);
      if (pivoting_residual < result.residual || std::isnan(result.residual)) {
        result.residual = pivoting_residual;
      } else {
        std::copy(ws.rhs_vector.begin(), ws.rhs_vector.end(), lambda.begin());
        apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
      }
    } else {
      std::copy(ws.rhs_vector.begin(), ws.rhs_vector.end(), lambda.begin());
    }
  }
  result.converged = result.residual <= tolerance;
  return result;
}

}  // namespace diffphys::solve
