// solve/interior_point.cpp — primal–dual interior point for the mixed LCP of mlcp.hpp.
//
// Unknowns λ (all rows) and slacks s = w_I > 0 of the complementarity rows I. Newton on
//   r_E = (Bλ + q)_E = 0,  r_I = (Bλ + q)_I − s = 0,  λ_I ∘ s = σμ,      B = A + F,
// with s eliminated: (B + diag(0_E, s/λ_I)) Δλ = −r − [0; Λ⁻¹ r_c]. Mehrotra's predictor–
// corrector picks the centring σ = (μ_aff/μ)³ and adds the second-order term Δλ_aff∘Δs_aff
// (Mattingley & Boyd 2012, §5; the same scheme de Avila Belbute-Peres et al. 2018 use for
// the LCP). B is not symmetric (friction couples rows one way), hence a dense LU with
// pivoting; problems with equality rows only skip all this: one sparse LDLᵀ solve.
//
// Cost structure (see the comments in solve_interior_point): the equality rows are
// eliminated once per solve (Schur complement, sparse envelope LDLᵀ of the joint block), so
// an iteration factorises the complementarity block alone; and problems without friction
// first try a few primal–dual active-set passes, which solve a servo or limit problem
// exactly in one or two small factorisations, the interior point running only if they fail.
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
// Sweep budget of the projected Gauss–Seidel fallback (a problem of ~100 rows takes ~1 µs per
// sweep; the leaning quadruped of tests/solver_robustness_test.cpp needs ~6,000 from zero).
constexpr int kFallbackSweeps = 20000;

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

  // B = A + F, dense row-major; A is symmetric, so its lower half is mirrored.
  ws.matrix.resize(count * count);
  const auto B = [&](std::size_t i, std::size_t j) -> double& { return ws.matrix[i * count + j]; };
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t j = 0; j <= i; ++j) B(j, i) = B(i, j) = delassus_entry(rows[i], rows[j], ws.responses[j]);
  for (std::size_t i = 0; i < count; ++i) {
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

  // The Newton matrix is B + R + diag(0_E, barrier_I) with R = kDirectionRegularisation ·
  // diag(A): a relative regularisation of every row's diagonal keeps rows that are linear
  // combinations of others (redundant joint rows; friction directions the joints already
  // forbid) solvable. It only perturbs the Newton direction — the residual is computed from
  // B itself — so the solution stays that of the unregularised problem.
  //
  // Only the complementarity block changes between iterations, so the equality rows E are
  // eliminated once per solve: with G = B_EE + R_E (symmetric positive definite: F couples
  // no equality row) and C = G⁻¹ B_EI, an iteration factorises the Schur complement
  //   S = B_II + R_I + barrier − B_IE C
  // alone (dense LU with pivoting, |I|³/3 instead of (|E| + |I|)³/3 operations), and a
  // Newton step is
  //   Δλ_I = S⁻¹(r_I − B_IE G⁻¹ r_E),  Δλ_E = G⁻¹ r_E − C Δλ_I,
  // the step of the unreduced system up to round-off. G is factorised by the sparse envelope
  // LDLᵀ when the equality rows come first (as the step lays them out: linear in the length
  // of a chain), otherwise — or if that fails — by a dense LU.
  ws.equality_rows.clear();
  ws.complementarity_rows.clear();
  for (std::size_t i = 0; i < count; ++i)
    (is_complementarity(rows[i].type) ? ws.complementarity_rows : ws.equality_rows).push_back(static_cast<int>(i));
  const std::size_t equalities = ws.equality_rows.size(), others = ws.complementarity_rows.size();
  const auto E = [&](std::size_t e) { return static_cast<std::size_t>(ws.equality_rows[e]); };
  const auto I = [&](std::size_t c) { return static_cast<std::size_t>(ws.complementarity_rows[c]); };
  bool equalities_first = true;  // then the complementarity rows are the rows E..count
  for (std::size_t e = 0; e < equalities; ++e) equalities_first = equalities_first && E(e) == e;
  bool equality_envelope = false;
  if (equalities > 0) {
    equality_envelope =
        equalities_first && envelope_factorize(rows.first(equalities), mass, ws, kDirectionRegularisation);
    if (!equality_envelope) {
      ws.equality_factor.resize(equalities * equalities);
      for (std::size_t a = 0; a < equalities; ++a)
        for (std::size_t b = 0; b < equalities; ++b) ws.equality_factor[a * equalities + b] = B(E(a), E(b));
      for (std::size_t a = 0; a < equalities; ++a)
        ws.equality_factor[a * equalities + a] += kDirectionRegularisation * ws.diagonal[E(a)];
      ws.equality_pivots.resize(equalities);
      if (!lu_factorize(ws.equality_factor, static_cast<int>(equalities), ws.equality_pivots)) return result;
    }
  }
  const auto solve_equality = [&](std::span<double> x) {  // x ← G⁻¹ x
    if (equalities == 0) return;
    if (equality_envelope) {
      envelope_solve(ws, x);
    } else {
      lu_solve(ws.equality_factor, static_cast<int>(equalities), ws.equality_pivots, x);
    }
  };
  // B_IE (others × equalities) and C = G⁻¹ B_EI (equalities × others), both row-major, and
  // S without its barrier (others × others).
  ws.complementarity_equality.resize(others * equalities);
  for (std::size_t a = 0; a < others; ++a)
    for (std::size_t e = 0; e < equalities; ++e) ws.complementarity_equality[a * equalities + e] = B(I(a), E(e));
  ws.coupling.resize(equalities * others);
  ws.equality_part.resize(equalities);
  for (std::size_t e = 0; e < equalities; ++e)
    for (std::size_t c = 0; c < others; ++c) ws.coupling[e * others + c] = B(E(e), I(c));
  if (equality_envelope) {
    envelope_solve_columns(ws, ws.coupling, others);
  } else {
    for (std::size_t c = 0; c < others; ++c) {
      for (std::size_t e = 0; e < equalities; ++e) ws.equality_part[e] = ws.coupling[e * others + c];
      solve_equality(ws.equality_part);
      for (std::size_t e = 0; e < equalities; ++e) ws.coupling[e * others + c] = ws.equality_part[e];
    }
  }
  // Without equality rows (contacts only) S is B itself plus R: the factorisation below then
  // reads B directly, as the unreduced method did.
  const bool reduced = equalities > 0;
  if (reduced) ws.schur.resize(others * others);
  for (std::size_t a = 0; a < others && reduced; ++a) {
    double* schur_row = &ws.schur[a * others];
    for (std::size_t b = 0; b < others; ++b) schur_row[b] = B(I(a), I(b));
    for (std::size_t e = 0; e < equalities; ++e) {
      const double entry = ws.complementarity_equality[a * equalities + e];
      if (entry == 0.0) continue;
      const double* coupling_row = &ws.coupling[e * others];
      for (std::size_t b = 0; b < others; ++b) schur_row[b] -= entry * coupling_row[b];
    }
    schur_row[a] += kDirectionRegularisation * ws.diagonal[I(a)];
  }

  ws.factor.resize(others * others);
  ws.pivots.resize(others);
  ws.complementarity_part.resize(others);
  ws.w.resize(count);
  ws.slack.resize(count);
  ws.step_lambda.resize(count);
  ws.step_slack.resize(count);
  ws.rhs_vector.resize(count);
  std::vector<double>& s = ws.slack;
  std::vector<double>& dl = ws.step_lambda;
  std::vector<double>& ds = ws.step_slack;
  std::vector<double>& w = ws.w;

  // w = Bλ + q. On larger problems with four partial sums per row, so that the additions do
  // not wait on each other (this product runs once per pass or iteration).
  const auto compute_w = [&] {
    for (std::size_t i = 0; i < count; ++i) {
      const double* row = &ws.matrix[i * count];
      if (count < 16) {
        double sum = ws.q[i];
        for (std::size_t j = 0; j < count; ++j) sum += row[j] * lambda[j];
        w[i] = sum;
        continue;
      }
      double sum0 = 0.0, sum1 = 0.0, sum2 = 0.0, sum3 = 0.0;
      std::size_t j = 0;
      for (; j + 4 <= count; j += 4) {
        sum0 += row[j] * lambda[j];
        sum1 += row[j + 1] * lambda[j + 1];
        sum2 += row[j + 2] * lambda[j + 2];
        sum3 += row[j + 3] * lambda[j + 3];
      }
      for (; j < count; ++j) sum0 += row[j] * lambda[j];
      w[i] = ws.q[i] + ((sum0 + sum1) + (sum2 + sum3));
    }
  };
  // The complementarity rows a solve works on, as positions in complementarity_rows
  // (ws.block[0..block_size)): all of them for the interior point, the active set for the
  // active-set passes below. With the step's layout (equality rows first) the complementarity
  // rows are the contiguous rows E.., and while the block is all of them the two functions
  // below work in place, without gathering through the index lists.
  std::size_t block_size = 0;
  bool block_is_all = false;
  // Factorises S (restricted to the block) + diag(barrier) into ws.factor; barrier(i) is
  // given by row index.
  const auto factorize = [&](auto barrier) {
    const std::size_t n = block_size;
    if (!reduced && block_is_all) {  // S = B + R: the rows are those of B, in order
      std::copy(ws.matrix.begin(), ws.matrix.end(), ws.factor.begin());
      for (std::size_t a = 0; a < n; ++a) ws.factor[a * n + a] += kDirectionRegularisation * ws.diagonal[a] + barrier(a);
    } else if (block_is_all) {
      std::copy(ws.schur.begin(), ws.schur.end(), ws.factor.begin());
      for (std::size_t a = 0; a < n; ++a) ws.factor[a * n + a] += barrier(I(a));
    } else if (!reduced) {
      for (std::size_t a = 0; a < n; ++a) {
        const auto i = static_cast<std::size_t>(ws.block[a]);
        const double* matrix_row = &ws.matrix[i * count];
        double* factor_row = &ws.factor[a * n];
        for (std::size_t b = 0; b < n; ++b) factor_row[b] = matrix_row[ws.block[b]];
        factor_row[a] += kDirectionRegularisation * ws.diagonal[i] + barrier(i);
      }
    } else {
      for (std::size_t a = 0; a < n; ++a) {
        const double* schur_row = &ws.schur[static_cast<std::size_t>(ws.block[a]) * others];
        double* factor_row = &ws.factor[a * n];
        for (std::size_t b = 0; b < n; ++b) factor_row[b] = schur_row[ws.block[b]];
        factor_row[a] += barrier(I(static_cast<std::size_t>(ws.block[a])));
      }
    }
    return n == 0 || lu_factorize(ws.factor, static_cast<int>(n), ws.pivots);
  };
  // x ← the Newton step for right-hand side x (read on E and the block, written there),
  // with the current factorisation.
  const auto newton_solve = [&](std::span<double> x) {
    const std::size_t n = block_size;
    std::span<double> y = ws.equality_part;  // G⁻¹ r_E
    for (std::size_t e = 0; e < equalities; ++e) y[e] = x[E(e)];
    solve_equality(y);
    // t = r_I − B_IE y over the block, in place when the block is the contiguous I.
    const bool in_place = block_is_all && equalities_first;
    std::span<double> t = in_place ? x.subspan(equalities, others) : std::span<double>(ws.complementarity_part);
    if (!in_place || equalities > 0)
      for (std::size_t a = 0; a < n; ++a) {
        const auto position = block_is_all ? a : static_cast<std::size_t>(ws.block[a]);
        double value = in_place ? t[a] : x[I(position)];
        // data() + offset, not &v[offset]: without equality rows the vector is empty.
        const double* b_row = ws.complementarity_equality.data() + position * equalities;
        for (std::size_t e = 0; e < equalities; ++e) value -= b_row[e] * y[e];
        t[a] = value;
      }
    if (n > 0) lu_solve(ws.factor, static_cast<int>(n), ws.pivots, t.first(n));
    if (!in_place)
      for (std::size_t a = 0; a < n; ++a) x[I(block_is_all ? a : static_cast<std::size_t>(ws.block[a]))] = t[a];
    for (std::size_t e = 0; e < equalities; ++e) {
      double value = y[e];
      const double* coupling_row = &ws.coupling[e * others];
      if (block_is_all) {
        for (std::size_t a = 0; a < n; ++a) value -= coupling_row[a] * t[a];
      } else {
        for (std::size_t a = 0; a < n; ++a) value -= coupling_row[ws.block[a]] * t[a];
      }
      x[E(e)] = value;
    }
  };

  // Active-set passes (primal–dual active set: Hintermüller, Ito & Kunisch 2002), before
  // any interior-point iteration. Guess which complementarity rows hold w = 0 (the active
  // set 𝒜; the others hold λ = 0) and solve that linear system — the same Schur complement,
  // restricted to 𝒜 — by passes λ += K⁻¹(−w) on E ∪ 𝒜 (the first solves, the next refine
  // against the regularisation). After each pass, a row whose complementarity is violated
  // beyond the tolerance moves to the side of the natural map that wins (active iff
  // A_ii λ_i > w_i), and the guess is refactorised; rows already within the tolerance keep
  // their side, so degenerate rows (λ = w = 0: the idle half of a servo, a friction
  // direction at rest) do not flip back and forth. The answer is accepted when its residual
  // meets the tolerance. The first guess is the rows with λ > 0 in the incoming λ — none when
  // it is zero, as the step passes it: the first pass then solves the equality rows alone,
  // and the answer depends on this step's inputs only. When the guesses reach the
  // solution's active set (a servo holding or saturated, a contact resting or sliding),
  // this is the exact solution of the LCP for a few passes and factorisations of |𝒜| rows,
  // where the interior point needs about ten factorisations of all |I|; when they do not
  // within kActiveSetPasses, the interior point runs from its own start as before.
  constexpr int kActiveSetPasses = 8;
  const auto row_residual = [&](std::size_t i) {  // as natural_residual, one row
    const ConstraintRow& row = rows[i];
    if (row.type != RowType::Bound) return std::abs(std::min(ws.diagonal[i] * lambda[i], w[i]));
    double mean_diagonal = 0.0;
    for (int k = 0; k < row.group_size; ++k) mean_diagonal += ws.diagonal[static_cast<std::size_t>(row.group + k)];
    mean_diagonal /= std::max(row.group_size, 1);
    return std::abs(std::min(lambda[i], mean_diagonal * w[i]));
  };
  const auto wins_natural_map = [&](std::size_t i) {
    const ConstraintRow& row = rows[i];
    if (row.type != RowType::Bound) return ws.diagonal[i] * lambda[i] > w[i];
    double mean_diagonal = 0.0;
    for (int k = 0; k < row.group_size; ++k) mean_diagonal += ws.diagonal[static_cast<std::size_t>(row.group + k)];
    mean_diagonal /= std::max(row.group_size, 1);
    return lambda[i] > mean_diagonal * w[i];
  };
  // Takes the guess in ws.active: the block, λ = 0 off it, the factorisation, w.
  const auto adopt_guess = [&] {
    block_size = 0;
    for (std::size_t a = 0; a < others; ++a) {
      if (ws.active[a]) {
        ws.block[block_size++] = static_cast<int>(a);
      } else {
        lambda[I(a)] = 0.0;
      }
    }
    if (!factorize([](std::size_t) { return 0.0; })) return false;
    compute_w();
    return true;
  };
  const auto try_active_set = [&]() -> bool {
    ws.block.resize(others);
    ws.active.resize(others);
    for (std::size_t a = 0; a < others; ++a) ws.active[a] = lambda[I(a)] > 0.0 ? 1 : 0;
    if (!adopt_guess()) return false;
    bool refined = false;  // the last pass reused the previous pass's factorisation
    for (int pass = 0;; ++pass) {
      if (pass > 0) {
        compute_w();
        const double residual = natural_residual(rows, ws, lambda, w);
        if (std::isnan(residual)) return false;
        // Accepted after at least one refinement with the final guess (or if already far
        // below the tolerance), so that the first solve's regularisation bias — about 1e-9
        // of q — does not stay in the answer.
        if (residual <= 0.5 * tolerance && (refined || residual <= 1e-3 * tolerance)) {
          result.iterations = pass;
          return true;
        }
        if (pass == kActiveSetPasses) return false;
        bool changed = false;
        for (std::size_t a = 0; a < others; ++a) {
          const std::size_t i = I(a);
          if (row_residual(i) <= 0.25 * tolerance) continue;
          const char active = wins_natural_map(i) ? 1 : 0;
          changed = changed || active != ws.active[a];
          ws.active[a] = active;
        }
        if (changed && !adopt_guess()) return false;
        refined = !changed;
      }
      for (std::size_t i = 0; i < count; ++i) dl[i] = -w[i];
      newton_solve(dl);
      for (std::size_t e = 0; e < equalities; ++e) lambda[E(e)] += dl[E(e)];
      for (std::size_t a = 0; a < block_size; ++a) {
        const std::size_t i = I(static_cast<std::size_t>(ws.block[a]));
        lambda[i] += dl[i];
      }
    }
  };
  // Not tried with friction: its LCP is not monotone and redundant contacts (a box on four
  // corners) make the guesses wander, so the attempts often fail and the interior point runs
  // anyway; worse, neighbouring inputs then get answers of the two methods (exact, or within
  // the tolerance), which shows as noise in finite differences of a trajectory.
  const bool has_friction = std::any_of(rows.begin(), rows.end(), [](const ConstraintRow& row) {
    return row.type == RowType::Bound && row.normal >= 0;
  });
  const bool solved_by_active_set = !has_friction && try_active_set();
  if (solved_by_active_set) result.converged = true;

  // The interior point, from its own starting point.
  block_size = others;
  block_is_all = true;
  const auto interior_point = [&] {
    // Starting point (Nocedal & Wright, Numerical Optimization, §16.6): a regularised solve,
    // then λ_I and s shifted into the positive orthant.
    if (!factorize([&](std::size_t) { return diagonal_scale; })) return false;
    for (std::size_t i = 0; i < count; ++i) lambda[i] = -ws.q[i];
    newton_solve(lambda);
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
      // halving the residual mean it has stalled, and pivoting takes over below. (A longer
      // window lets it finish some stalled friction problems that have several solutions, on
      // a different one than pivoting finds for neighbouring inputs: a jump in a trajectory;
      // docs/simulation.md, "Known limits".)
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
      newton_solve(dl);
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
      newton_solve(dl);
      for (std::size_t i = 0; i < count; ++i)
        ds[i] = is_complementarity(rows[i].type) ? -(ws.rhs_vector[i] + s[i] * dl[i]) / lambda[i] : 0.0;
      const double alpha = std::min(1.0, 0.99 * step_to_boundary());
      for (std::size_t i = 0; i < count; ++i) {
        lambda[i] += alpha * dl[i];
        s[i] += alpha * ds[i];
      }
      result.iterations = iteration + 1;
    }
    return true;
  };
  if (!solved_by_active_set && !interior_point()) return result;
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
  if (!(result.residual <= tolerance)) {
    // Last resort: projected Gauss–Seidel sweeps from the better answer so far. They converge,
    // slowly, where the path-following stalled and pivoting failed — e.g. servos saturated on
    // legs whose other joints rest on their stops, so that several rows can carry the same
    // impulse (a quadruped leaning on four feet: docs/simulation.md, "The two solvers").
    // The caller polishes the result to its active set's exact solution as usual.
    ws.rhs_vector.assign(lambda.begin(), lambda.end());
    const double before = result.residual;
    const MlcpResult swept = solve_projected_gauss_seidel(rows, mass, free_velocity, kFallbackSweeps, tolerance, ws,
                                                          lambda, velocity);
    if (swept.residual < before || std::isnan(before)) {
      result.residual = swept.residual;
      result.iterations += swept.iterations;
    } else {
      std::copy(ws.rhs_vector.begin(), ws.rhs_vector.end(), lambda.begin());
      apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
    }
  }
  result.converged = result.residual <= tolerance;
  result.exact = solved_by_active_set && result.converged;
  return result;
}

}  // namespace diffphys::solve
