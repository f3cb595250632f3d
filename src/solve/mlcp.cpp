// solve/mlcp.cpp — what both solvers share: the rows' responses M⁻¹Jᵀ, applying impulses,
// the residual that judges a solution, and the sparse solve of the joint-only system.
#include "solve/mlcp.hpp"

#include <algorithm>
#include <cmath>

#include "solve/envelope_ldlt.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {

void compute_responses(std::span<const ConstraintRow> rows, const MassBlocks& mass, MlcpWorkspace& workspace) {
  workspace.responses.resize(rows.size());
  workspace.diagonal.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    workspace.responses[i] = row_response(rows[i], mass);
    workspace.diagonal[i] = delassus_entry(rows[i], rows[i], workspace.responses[i]);
  }
}

void apply_impulses(std::span<const ConstraintRow> rows, std::span<const RowResponse> responses,
                    std::span<const double> lambda, std::span<const double> free_velocity, std::span<double> velocity) {
  std::copy(free_velocity.begin(), free_velocity.end(), velocity.begin());
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (lambda[i] != 0.0) apply_response(rows[i], responses[i], lambda[i], velocity);
}

double mlcp_residual(std::span<const ConstraintRow> rows, std::span<const double> lambda,
                     std::span<const double> velocity, MlcpWorkspace& workspace) {
  workspace.w.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ConstraintRow& row = rows[i];
    double w = row_times_velocity(row, velocity) - row.rhs;
    if (row.type == RowType::Direction) w += lambda[static_cast<std::size_t>(row.group)];
    if (row.type == RowType::Bound) {
      if (row.normal >= 0) w += row.coefficient * lambda[static_cast<std::size_t>(row.normal)];
      for (int k = 0; k < row.group_size; ++k) w -= lambda[static_cast<std::size_t>(row.group + k)];
    }
    workspace.w[i] = w;
  }
  double residual = 0.0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ConstraintRow& row = rows[i];
    const double w = workspace.w[i];
    double r = 0.0;
    switch (row.type) {
      case RowType::Equality: r = std::abs(w); break;
      case RowType::Unilateral:
      case RowType::Direction: r = std::abs(std::min(workspace.diagonal[i] * lambda[i], w)); break;
      case RowType::Bound: {
        double mean_diagonal = 0.0;
        for (int k = 0; k < row.group_size; ++k) mean_diagonal += workspace.diagonal[static_cast<std::size_t>(row.group + k)];
        mean_diagonal /= std::max(row.group_size, 1);
        r = std::abs(std::min(lambda[i], mean_diagonal * w));
        break;
      }
    }
    if (!(r <= residual)) residual = std::isnan(r) ? r : std::max(residual, r);
    if (std::isnan(residual)) break;
  }
  return residual;
}

bool solve_delassus(std::span<const ConstraintRow> rows, const MassBlocks& mass, std::span<const double> b,
                    std::span<double> x, MlcpWorkspace& workspace) {
  compute_responses(rows, mass, workspace);
  if (!envelope_factorize(rows, mass, workspace)) return false;
  std::copy(b.begin(), b.end(), x.begin());
  envelope_solve(workspace, x);
  return true;
}

}  // namespace diffphys::solve
