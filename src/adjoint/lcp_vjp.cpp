// adjoint/lcp_vjp.cpp — see lcp_vjp.hpp for the equations.
#include "adjoint/lcp_vjp.hpp"

#include <algorithm>

#include "solve/dense_lu.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/polish.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::adjoint {

using solve::ConstraintRow;
using solve::RowType;

bool row_is_active(const ConstraintRow& row, double lambda, double w, double diagonal) {
  return solve::row_holds_equality(row, lambda, w, diagonal);
}

namespace {

}  // namespace

void lcp_vjp(std::span<const ConstraintRow> rows, const solve::MassBlocks& mass, std::span<const double> lambda, std::span<const double> velocity, std::span<const double> velocity_adjoint,
             std::span<double> free_velocity_adjoint, std::span<RowAdjoint> row_adjoints, MassAdjoint& mass_adjoint,
             LcpVjpWorkspace& ws, const solve::MlcpWorkspace* factorized) {
  const std::size_t count = rows.size();
  const std::size_t dof = velocity.size();
  ws.responses.resize(count);
  ws.position_in_active.assign(count, -1);
  ws.active.clear();
  // Which rows hold w = 0: classify from the solution.
  for (std::size_t i = 0; i < count; ++i) {
    const ConstraintRow& row = rows[i];
    ws.responses[i] = solve::row_response(row, mass);
    double w = solve::row_times_velocity(row, velocity) - row.rhs;
    if (row.type == RowType::Direction) w += lambda[static_cast<std::size_t>(row.group)];
    double diagonal = solve::delassus_entry(row, row, ws.responses[i]);
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) w += row.coefficient * lambda[static_cast<std::size_t>(row.normal)];
      for (int k = 0; k < row.group_size; ++k) w -= lambda[static_cast<std::size_t>(row.group + k)];
      diagonal = 0.0;
      for (int k = 0; k < row.group_size; ++k)
        diagonal += solve::delassus_entry(rows[static_cast<std::size_t>(row.group + k)], rows[static_cast<std::size_t>(row.group + k)],
                                          solve::row_response(rows[static_cast<std::size_t>(row.group + k)], mass));
      diagonal /= std::max(row.group_size, 1);
    }
    if (row_is_active(row, lambda[i], w, diagonal)) {
      ws.position_in_active[i] = static_cast<int>(ws.active.size());
      ws.active.push_back(static_cast<int>(i));
    }
  }
  const std::size_t n = ws.active.size();
  const auto active_lambda = [&](std::size_t i) { return ws.position_in_active[i] >= 0 ? lambda[i] : 0.0; };

  // u = M⁻¹ v̄⁺; λ̄ = (J u)_𝒜; then ζ = K⁻ᵀ λ̄.
  ws.velocity_adjoint_scaled.resize(dof);
  solve::apply_inverse_mass(mass, velocity_adjoint, ws.velocity_adjoint_scaled);
  ws.rhs.resize(n);
  for (std::size_t a = 0; a < n; ++a)
    ws.rhs[a] = solve::row_times_velocity(rows[static_cast<std::size_t>(ws.active[a])], ws.velocity_adjoint_scaled);
  const bool joint_rows_only =
      std::all_of(rows.begin(), rows.end(), [](const ConstraintRow& row) { return row.type == RowType::Equality; });
  if (joint_rows_only) {
    // K = A: symmetric and sparse, the forward's envelope LDLᵀ solves it in O(rows).
    if (factorized != nullptr) {
      solve::envelope_solve(*factorized, ws.rhs);
    } else {
      solve::compute_responses(rows, mass, ws.envelope);
      if (solve::envelope_factorize(rows, mass, ws.envelope)) {
        solve::envelope_solve(ws.envelope, ws.rhs);
      } else {
        std::fill(ws.rhs.begin(), ws.rhs.end(), 0.0);
      }
    }
  } else {
    // Kᵀ, built transposed so that the dense LU solves Kᵀ ζ = λ̄ directly.
    ws.matrix.assign(n * n, 0.0);
    const auto transposed = [&](std::size_t row_of_k, std::size_t column_of_k) -> double& {
      return ws.matrix[column_of_k * n + row_of_k];
    };
    double mean_diagonal = 0.0;
    for (std::size_t a = 0; a < n; ++a) {
      const ConstraintRow& row = rows[static_cast<std::size_t>(ws.active[a])];
      for (std::size_t b = 0; b < n; ++b) {
        const auto j = static_cast<std::size_t>(ws.active[b]);
        transposed(a, b) = solve::delassus_entry(row, rows[j], ws.responses[j]);
      }
      mean_diagonal += transposed(a, a);
      const auto coupled = [&](int column, double value) {
        const int position = ws.position_in_active[static_cast<std::size_t>(column)];
        if (position >= 0) transposed(a, static_cast<std::size_t>(position)) += value;
      };
      if (row.type == RowType::Direction) coupled(row.group, 1.0);
      if (row.type == RowType::Bound) {
        if (row.normal >= 0) coupled(row.normal, row.coefficient);
        for (int k = 0; k < row.group_size; ++k) coupled(row.group + k, -1.0);
      }
    }
    mean_diagonal = n > 0 ? mean_diagonal / static_cast<double>(n) : 1.0;
    for (std::size_t a = 0; a < n; ++a) transposed(a, a) += 1e-10 * (mean_diagonal > 0 ? mean_diagonal : 1.0);
    ws.pivots.resize(n);
    if (n > 0) {
      if (solve::lu_factorize(ws.matrix, static_cast<int>(n), ws.pivots)) {
        solve::lu_solve(ws.matrix, static_cast<int>(n), ws.pivots, ws.rhs);  // now ζ
      } else {
        std::fill(ws.rhs.begin(), ws.rhs.end(), 0.0);
      }
    }
  }
  const auto zeta = [&](std::size_t i) {
    const int position = ws.position_in_active[i];
    return position >= 0 ? ws.rhs[static_cast<std::size_t>(position)] : 0.0;
  };

  // Jᵀζ, z = M⁻¹Jᵀζ, and the impulse f = Jᵀλ.
  ws.constraint_response.assign(dof, 0.0);
  ws.impulse.assign(dof, 0.0);
  for (std::size_t i = 0; i < count; ++i) {
    solve::add_row_transpose(rows[i], zeta(i), ws.constraint_response);
    solve::add_row_transpose(rows[i], active_lambda(i), ws.impulse);
  }
  ws.scaled_constraint_response.resize(dof);
  solve::apply_inverse_mass(mass, ws.constraint_response, ws.scaled_constraint_response);
  const std::span<const double> z = ws.scaled_constraint_response;

  for (std::size_t i = 0; i < count; ++i) {
    if (ws.position_in_active[i] < 0) continue;
    const ConstraintRow& row = rows[i];
    RowAdjoint& adjoint = row_adjoints[i];
    const double l = lambda[i], s = zeta(i);
    const auto part = [&](int offset) {
      return (solve::read_vec3(ws.velocity_adjoint_scaled, offset) - solve::read_vec3(z, offset)) * l -
             solve::read_vec3(velocity, offset) * s;
    };
    adjoint.linear_a += part(6 * row.body_a);
    adjoint.angular_a += part(6 * row.body_a + 3);
    adjoint.linear_b += part(6 * row.body_b);
    adjoint.angular_b += part(6 * row.body_b + 3);
    adjoint.rhs += s;
    if (row.type == RowType::Bound && row.normal >= 0)
      adjoint.coefficient -= s * active_lambda(static_cast<std::size_t>(row.normal));
  }
  // v̄_free = v̄⁺ − Jᵀζ, and (M⁻¹)‾_b = v̄_free,b f_bᵀ split into its two blocks.
  for (std::size_t b = 0; b < mass.inverse_mass.size(); ++b) {
    const int o = static_cast<int>(6 * b);
    const Vec3 linear_adjoint = solve::read_vec3(velocity_adjoint, o) - solve::read_vec3(ws.constraint_response, o);
    const Vec3 angular_adjoint =
        solve::read_vec3(velocity_adjoint, o + 3) - solve::read_vec3(ws.constraint_response, o + 3);
    solve::add_vec3(free_velocity_adjoint, o, linear_adjoint);
    solve::add_vec3(free_velocity_adjoint, o + 3, angular_adjoint);
    mass_adjoint.inverse_mass[b] += dot(linear_adjoint, solve::read_vec3(ws.impulse, o));
    const Vec3 angular_impulse = solve::read_vec3(ws.impulse, o + 3);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) mass_adjoint.inverse_inertia[b](r, c) += angular_adjoint[r] * angular_impulse[c];
  }
}

}  // namespace diffphys::adjoint
