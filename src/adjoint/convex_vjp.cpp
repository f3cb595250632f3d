// adjoint/convex_vjp.cpp — see convex_vjp.hpp for the equations.
#include "adjoint/convex_vjp.hpp"

#include <algorithm>
#include <tuple>

#include "diffphys/error.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::adjoint {

using solve::ConstraintRow;
using solve::ConvexGroup;
using solve::read_vec3;

namespace {

// Adjoint of a row's J blocks: += s · x restricted to the row's bodies.
void add_row_adjoint(const ConstraintRow& row, std::span<const double> x, double s, RowAdjoint& adjoint) {
  adjoint.linear_a += read_vec3(x, 6 * row.body_a) * s;
  adjoint.angular_a += read_vec3(x, 6 * row.body_a + 3) * s;
  adjoint.linear_b += read_vec3(x, 6 * row.body_b) * s;
  adjoint.angular_b += read_vec3(x, 6 * row.body_b + 3) * s;
}

}  // namespace

void convex_vjp(std::span<const ConstraintRow> rows, const solve::MassBlocks& mass, std::span<const double> velocity,
                std::span<const double> velocity_adjoint, std::span<double> free_velocity_adjoint,
                std::span<RowAdjoint> row_adjoints, MassAdjoint& mass_adjoint, const solve::ConvexWorkspace* prepared,
                ConvexVjpWorkspace& workspace) {
  solve::ConvexWorkspace& problem = workspace.problem;
  if (prepared != nullptr) {
    // Copies into the vectors' kept capacity: no allocation once the workspace has grown.
    problem.groups = prepared->groups;
    problem.responses = prepared->responses;
    problem.compliance = prepared->compliance;
    problem.scale = prepared->scale;
    problem.inertia = prepared->inertia;
    problem.islands = prepared->islands;
  } else {
    solve::prepare_convex_problem(rows, mass, problem);
  }
  const solve::ConvexIslands& islands = problem.islands;
  const std::size_t dof = velocity.size();
  // y at the solution, for every row of a group.
  problem.y.assign(rows.size(), 0.0);
  for (const ConvexGroup& group : problem.groups)
    for (int r = group.row; r < group.row + group.size; ++r) {
      const auto i = static_cast<std::size_t>(r);
      problem.y[i] = (rows[i].rhs - solve::row_times_velocity(rows[i], velocity)) / problem.compliance[i];
    }

  // u = H⁻¹ v̄ per island (0 on bodies no row moves, whose v⁺ = v_free: v̄_free = v̄ there).
  std::vector<double>& u = workspace.u;
  u.assign(dof, 0.0);
  for (std::size_t i = 0; i < dof; ++i)
    if (islands.island_of_body[i / 6] < 0) free_velocity_adjoint[i] += velocity_adjoint[i];
  for (int island = 0; island < islands.count; ++island) {
    const auto first_body = static_cast<std::size_t>(islands.body_start[static_cast<std::size_t>(island)]);
    const auto body_count = static_cast<std::size_t>(islands.body_start[static_cast<std::size_t>(island) + 1]) - first_body;
    const std::size_t n = 6 * body_count;
    // The forward solve's last factorisation, when it is ∇²ℓ at the solution bit for bit (no
    // projection piece moved since, solve_convex); else ∇²ℓ assembled and factorised here.
    const bool forward_factor = prepared != nullptr && prepared->factor_at_solution_island == island;
    if (!forward_factor) {
      solve::analyse_island_hessian(rows, island, problem);
      if (!solve::factorize_island_hessian(rows, island, problem, mass))
        throw Error("convex formulation: the Hessian at the solution is not positive definite (backward pass)");
    }
    workspace.local_adjoint.resize(n);
    for (std::size_t k = 0; k < body_count; ++k) {
      const auto b = static_cast<std::size_t>(islands.bodies[first_body + k]);
      for (std::size_t d = 0; d < 6; ++d) workspace.local_adjoint[6 * k + d] = velocity_adjoint[6 * b + d];
    }
    if (forward_factor) prepared->hessian.solve(workspace.local_adjoint, workspace.solve_scratch);
    else problem.hessian.solve(workspace.local_adjoint);
    for (std::size_t k = 0; k < body_count; ++k) {
      const auto b = static_cast<std::size_t>(islands.bodies[first_body + k]);
      for (std::size_t d = 0; d < 6; ++d) u[6 * b + d] = workspace.local_adjoint[6 * k + d];
    }
  }

  // v̄_free = M u on island bodies; the constraint force Jᵀγ for the mass adjoint.
  std::vector<double>& momentum = workspace.momentum;
  std::vector<double>& force = workspace.constraint_force;
  momentum.assign(dof, 0.0);
  force.assign(dof, 0.0);
  for (int b = 0; b < static_cast<int>(mass.inverse_mass.size()); ++b) {
    if (islands.island_of_body[static_cast<std::size_t>(b)] < 0) continue;
    const Vec3 linear = read_vec3(u, 6 * b) * (1.0 / mass.inverse_mass[static_cast<std::size_t>(b)]);
    const Vec3 angular = problem.inertia[static_cast<std::size_t>(b)] * read_vec3(u, 6 * b + 3);
    solve::add_vec3(momentum, 6 * b, linear);
    solve::add_vec3(momentum, 6 * b + 3, angular);
    solve::add_vec3(free_velocity_adjoint, 6 * b, linear);
    solve::add_vec3(free_velocity_adjoint, 6 * b + 3, angular);
  }

  for (const ConvexGroup& group : problem.groups) {
    const solve::GroupProjection projection = solve::project_group(group, problem.y.data() + group.row);
    double z[3] = {0, 0, 0};
    for (int r = 0; r < group.size; ++r) z[r] = solve::row_times_velocity(rows[static_cast<std::size_t>(group.row + r)], u);
    const double compliance = problem.compliance[static_cast<std::size_t>(group.row)];
    double compliance_adjoint = 0.0, bound_adjoint = 0.0;
    for (int r = 0; r < group.size; ++r) {
      const auto i = static_cast<std::size_t>(group.row + r);
      double xi = 0.0;
      for (int s = 0; s < group.size; ++s) xi += projection.jacobian[s][r] * z[s];
      const double eta = xi / compliance;
      row_adjoints[i].rhs += eta;
      // A body no row moves (zero inverse mass) keeps v⁺ = v_free, and its J_b v_b enters y as
      // −rhs does: v̄_free,b −= η J_b (a kinematic body's prescribed velocity; 0 for a static one).
      for (const auto& [body, linear, angular] : {std::tuple{rows[i].body_a, rows[i].linear_a, rows[i].angular_a},
                                                  std::tuple{rows[i].body_b, rows[i].linear_b, rows[i].angular_b}}) {
        if (islands.island_of_body[static_cast<std::size_t>(body)] >= 0) continue;
        solve::add_vec3(free_velocity_adjoint, 6 * body, linear * -eta);
        solve::add_vec3(free_velocity_adjoint, 6 * body + 3, angular * -eta);
      }
      add_row_adjoint(rows[i], u, projection.gamma[r], row_adjoints[i]);
      add_row_adjoint(rows[i], velocity, -eta, row_adjoints[i]);
      compliance_adjoint += -eta * problem.y[i];
      bound_adjoint += z[r] * projection.bound_derivative[r];
      solve::add_row_transpose(rows[i], projection.gamma[r], force);
    }
    if (group.kind == solve::ConvexGroupKind::Cone) row_adjoints[static_cast<std::size_t>(group.bound_row)].coefficient += bound_adjoint;
    if (group.kind == solve::ConvexGroupKind::Box) row_adjoints[static_cast<std::size_t>(group.bound_row)].rhs -= bound_adjoint;
    // R = κ w for the group's rows, w = A_ii of its first row: κ̄ on the first row's softness.
    const auto first = static_cast<std::size_t>(group.row);
    row_adjoints[first].softness += compliance_adjoint * problem.scale[first];
    const double diagonal_adjoint = compliance_adjoint * rows[first].softness;
    {
      const std::size_t i = first;
      const ConstraintRow& row = rows[i];
      const solve::RowResponse& response = problem.responses[i];
      // A_ii = Σ_body (J_lin m⁻¹ J_lin + J_ang I⁻¹ J_ang): J̄ += 2 Ā M⁻¹Jᵀ, (M⁻¹)‾ += Ā J Jᵀ.
      row_adjoints[i].linear_a += response.linear_a * (2.0 * diagonal_adjoint);
      row_adjoints[i].angular_a += response.angular_a * (2.0 * diagonal_adjoint);
      row_adjoints[i].linear_b += response.linear_b * (2.0 * diagonal_adjoint);
      row_adjoints[i].angular_b += response.angular_b * (2.0 * diagonal_adjoint);
      for (const auto& [body, linear, angular] :
           {std::tuple{row.body_a, row.linear_a, row.angular_a}, std::tuple{row.body_b, row.linear_b, row.angular_b}}) {
        const auto b = static_cast<std::size_t>(body);
        mass_adjoint.inverse_mass[b] += diagonal_adjoint * dot(linear, linear);
        for (int p = 0; p < 3; ++p)
          for (int q = 0; q < 3; ++q) mass_adjoint.inverse_inertia[b](p, q) += diagonal_adjoint * angular[p] * angular[q];
      }
    }
  }
  // (M⁻¹)‾_b += (M u)_b (Jᵀγ)_bᵀ.
  for (std::size_t b = 0; b < mass.inverse_mass.size(); ++b) {
    if (islands.island_of_body[b] < 0) continue;
    const int o = static_cast<int>(6 * b);
    mass_adjoint.inverse_mass[b] += dot(read_vec3(momentum, o), read_vec3(force, o));
    const Vec3 angular_momentum = read_vec3(momentum, o + 3), angular_force = read_vec3(force, o + 3);
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) mass_adjoint.inverse_inertia[b](p, q) += angular_momentum[p] * angular_force[q];
  }
}

}  // namespace diffphys::adjoint
