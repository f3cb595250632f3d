// soft/step_system.cpp — the step objective Φ, its sparse Hessian assembly and factorisation,
// and the public stepping entry points (soft_step, solve_soft_static).
#include "soft/step_system.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"

namespace diffphys::soft {

SoftWorkspace::Impl::Impl(const SoftModel& soft_model) : model(&soft_model), terms(make_energy_terms(soft_model)) {
  const auto n = static_cast<std::size_t>(soft_model.node_count);
  const auto dofs = 3 * n;
  masses.assign(n, 0.0);
  predicted.assign(dofs, 0.0);
  gradient.assign(dofs, 0.0);
  direction.assign(dofs, 0.0);
  trial.assign(dofs, 0.0);
  x.assign(dofs, 0.0);
  adam_step.assign(dofs, 0.0);
  permuted_rhs.assign(dofs, 0.0);
  permuted_solution.assign(dofs, 0.0);

  // Record the block order with placeholder parameters (values are ignored).
  const std::vector<double> placeholder(static_cast<std::size_t>(soft_model.param_count()), 0.0);
  std::vector<std::array<int, 2>> blocks;
  HessianSink recorder(blocks);
  const TermInputs rest{soft_model, placeholder, soft_model.rest_positions, soft_model.rest_positions, soft_model.dt, true};
  std::vector<double> scratch(dofs, 0.0);
  for (const auto& term : terms) term->add_derivatives(rest, scratch, &recorder);

  const auto keep = [&](int row, int column) {
    return row >= column && !is_pinned_dof(static_cast<std::size_t>(row)) && !is_pinned_dof(static_cast<std::size_t>(column));
  };
  // Fill-reducing ordering of the symmetric pattern (lower triangle in natural DOF order),
  // computed once by CHOLMOD.
  std::vector<Eigen::Triplet<double>> triplets;
  for (const auto& [a, b] : blocks)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        if (keep(3 * a + r, 3 * b + c)) {
          const int row = 3 * a + r, column = 3 * b + c;
          triplets.emplace_back(std::max(row, column), std::min(row, column), 1.0);
        }
  for (std::size_t k = 0; k < dofs; ++k) triplets.emplace_back(static_cast<int>(k), static_cast<int>(k), 1.0);
  {
    Eigen::SparseMatrix<double> pattern(static_cast<Eigen::Index>(dofs), static_cast<Eigen::Index>(dofs));
    pattern.setFromTriplets(triplets.begin(), triplets.end());
    pattern.makeCompressed();
    const auto columns = static_cast<std::size_t>(dofs);
    permuted = SparseCholesky::choose_ordering(
        static_cast<int>(dofs), std::span<const int>(pattern.outerIndexPtr(), columns + 1),
        std::span<const int>(pattern.innerIndexPtr(), static_cast<std::size_t>(pattern.nonZeros())));
  }

  // Lower triangle of P H Pᵀ.
  const auto position = [&](int row, int column) {
    const int a = permuted[static_cast<std::size_t>(row)], b = permuted[static_cast<std::size_t>(column)];
    return std::pair<int, int>{std::max(a, b), std::min(a, b)};
  };
  triplets.clear();
  for (const auto& [a, b] : blocks)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        if (keep(3 * a + r, 3 * b + c)) {
          const auto [row, column] = position(3 * a + r, 3 * b + c);
          triplets.emplace_back(row, column, 0.0);
        }
  for (std::size_t k = 0; k < dofs; ++k) triplets.emplace_back(permuted[k], permuted[k], 0.0);
  hessian.resize(static_cast<Eigen::Index>(dofs), static_cast<Eigen::Index>(dofs));
  hessian.setFromTriplets(triplets.begin(), triplets.end());
  hessian.makeCompressed();
  const auto slot_of = [&](int row, int column) {
    const int* begin = hessian.innerIndexPtr() + hessian.outerIndexPtr()[column];
    const int* end = hessian.innerIndexPtr() + hessian.outerIndexPtr()[column + 1];
    const int* found = std::lower_bound(begin, end, row);
    return static_cast<int>(found - hessian.innerIndexPtr());
  };
  block_slots.reserve(9 * blocks.size());
  for (const auto& [a, b] : blocks)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        if (!keep(3 * a + r, 3 * b + c)) {
          block_slots.push_back(-1);
          continue;
        }
        const auto [row, column] = position(3 * a + r, 3 * b + c);
        block_slots.push_back(slot_of(row, column));
      }
  diagonal_slots.resize(dofs);
  for (std::size_t k = 0; k < dofs; ++k) diagonal_slots[k] = slot_of(permuted[k], permuted[k]);
  // Symbolic factorisation, once; every numeric factorisation reads `hessian` in place.
  factorisation.analyse(static_cast<int>(dofs), std::span<const int>(hessian.outerIndexPtr(), dofs + 1),
                        std::span<const int>(hessian.innerIndexPtr(), static_cast<std::size_t>(hessian.nonZeros())),
                        std::span<double>(hessian.valuePtr(), static_cast<std::size_t>(hessian.nonZeros())));
}

void SoftWorkspace::Impl::set_problem(const SoftParams& theta, std::span<const double> x_previous,
                                      std::span<const double> v_previous, std::span<const double> forces,
                                      bool is_dynamic) {
  params = &theta;
  previous_positions = x_previous;
  external_forces = forces;
  dynamic = is_dynamic;
  lumped_masses(*model, theta, masses);
  for (std::size_t k = 0; k < predicted.size(); ++k)
    predicted[k] = is_pinned_dof(k) ? model->rest_positions[k]
                                    : x_previous[k] + (dynamic ? model->dt * v_previous[k] : 0.0);
}

TermInputs SoftWorkspace::Impl::inputs(std::span<const double> positions) const {
  return TermInputs{*model, params->values, positions, dynamic ? previous_positions : positions, model->dt, dynamic};
}

double SoftWorkspace::Impl::objective(std::span<const double> positions) const {
  const double* g = params->values.data() + model->layout.gravity;
  const double inertia = dynamic ? 0.5 / (model->dt * model->dt) : 0.0;
  double total = 0.0;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    if (is_pinned_dof(k)) continue;
    const double m = masses[k / 3];
    const double offset = positions[k] - predicted[k];
    total += m * (inertia * offset * offset - g[k % 3] * positions[k]);
    if (!external_forces.empty()) total -= external_forces[k] * positions[k];
  }
  const TermInputs in = inputs(positions);
  for (const auto& term : terms) {
    total += term->energy(in);
    if (!std::isfinite(total)) return kInfinity;
  }
  return total;
}

void SoftWorkspace::Impl::derivatives(std::span<const double> positions, bool with_hessian) {
  std::fill(gradient.begin(), gradient.end(), 0.0);
  double* values = hessian.valuePtr();
  if (with_hessian) std::fill(values, values + hessian.nonZeros(), 0.0);
  const TermInputs in = inputs(positions);
  HessianSink sink(block_slots, std::span<double>(values, static_cast<std::size_t>(hessian.nonZeros())));
  for (const auto& term : terms) term->add_derivatives(in, gradient, with_hessian ? &sink : nullptr);
  const double* g = params->values.data() + model->layout.gravity;
  const double inertia = dynamic ? 1.0 / (model->dt * model->dt) : 0.0;
  for (std::size_t k = 0; k < gradient.size(); ++k) {
    if (is_pinned_dof(k)) {
      gradient[k] = 0.0;
      if (with_hessian) values[diagonal_slots[k]] = 1.0;
      continue;
    }
    const double m = masses[k / 3];
    gradient[k] += m * (inertia * (positions[k] - predicted[k]) - g[k % 3]);
    if (!external_forces.empty()) gradient[k] -= external_forces[k];
    if (with_hessian) values[diagonal_slots[k]] += m * inertia;
  }
}

bool SoftWorkspace::Impl::factorise(double shift) { return factorisation.factorise(shift); }

bool SoftWorkspace::Impl::factorise_for_adjoint() {
  if (factorise(0.0)) return true;
  double scale = 0.0;
  for (const int slot : diagonal_slots) scale = std::max(scale, std::abs(hessian.valuePtr()[slot]));
  factorise(1e-10 * std::max(1.0, scale));
  return false;
}

void SoftWorkspace::Impl::solve(std::span<const double> b, std::span<double> out) {
  for (std::size_t k = 0; k < b.size(); ++k) permuted_rhs[static_cast<std::size_t>(permuted[k])] = b[k];
  factorisation.solve(permuted_rhs, permuted_solution);
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = permuted_solution[static_cast<std::size_t>(permuted[k])];
}

double SoftWorkspace::Impl::max_feasible_step(std::span<const double> positions, std::span<const double> step) const {
  const TermInputs in = inputs(positions);
  double alpha = 1.0;
  for (const auto& term : terms) alpha = std::min(alpha, term->max_feasible_step(in, step));
  return alpha;
}

SoftWorkspace::SoftWorkspace(const SoftModel& model) : impl_(std::make_unique<Impl>(model)) {}
SoftWorkspace::~SoftWorkspace() = default;
SoftWorkspace::SoftWorkspace(SoftWorkspace&&) noexcept = default;
SoftWorkspace& SoftWorkspace::operator=(SoftWorkspace&&) noexcept = default;

namespace {
void check_workspace(const SoftModel& model, SoftWorkspace& workspace) {
  if (workspace.impl().model != &model)
    throw Error("soft step: the workspace was built for a different SoftModel object");
}

// The state health of the rigid step (src/rigid/state_health.hpp) for nodes: the first free
// node whose position or velocity is not finite, or whose speed exceeds model.max_speed.
// Pinned nodes sit at their rest positions and are not looked at. No allocation unless unhealthy.
void check_soft_state_health(const SoftModel& model, const SoftState& state, SoftStepStatus& status) {
  const double limit_squared = model.max_speed * model.max_speed;
  for (int node = 0; node < model.node_count; ++node) {
    if (model.pinned[static_cast<std::size_t>(node)] != 0) continue;
    const std::size_t k = 3 * static_cast<std::size_t>(node);
    double speed_squared = 0.0;
    for (std::size_t a = 0; a < 3; ++a) {
      const double x = state.positions[k + a], v = state.velocities[k + a];
      if (!std::isfinite(x) || !std::isfinite(v)) {
        status.health = SoftStepStatus::Health::NonFinite;
        status.health_node = node;
        status.health_value = std::isfinite(x) ? v : x;
        status.converged = false;
        status.message = message("node ", node, ": ", std::isfinite(x) ? "velocity" : "position", " component ", a,
                                 " is not finite (", status.health_value, ")");
        return;
      }
      speed_squared += v * v;
    }
    if (speed_squared > limit_squared) {
      status.health = SoftStepStatus::Health::TooFast;
      status.health_node = node;
      status.health_value = std::sqrt(speed_squared);
      status.converged = false;
      status.message = message("node ", node, ": speed ", significant(status.health_value), " m/s above max_speed ",
                               model.max_speed, " m/s");
      return;
    }
  }
}
}  // namespace

SoftStepStatus soft_step(const SoftModel& model, const SoftParams& params, const SoftState& in,
                         std::span<const double> external_forces, SoftState& out,
                         SoftWorkspace& workspace, const SoftStepOptions& options) {
  check_workspace(model, workspace);
  const auto dofs = static_cast<std::size_t>(model.dof_count());
  if (in.positions.size() != dofs || in.velocities.size() != dofs)
    throw Error(message("soft step: expected ", dofs, " positions and velocities, got ", in.positions.size(), " and ", in.velocities.size()));
  if (!external_forces.empty() && external_forces.size() != dofs)
    throw Error(message("soft step: expected ", dofs, " external force values (3 per node) or none, got ", external_forces.size()));
  if (&in == &out) throw Error("soft step: `in` and `out` must be distinct states");
  if (static_cast<int>(params.values.size()) != model.param_count())
    throw Error(message("soft step: expected ", model.param_count(), " parameters, got ", params.values.size()));
  SoftWorkspace::Impl& system = workspace.impl();
  system.set_problem(params, in.positions, in.velocities, external_forces, true);
  out.positions.resize(dofs);
  out.velocities.resize(dofs);
  // Start from x_t: it is feasible, and lagged friction is smooth there (u = 0).
  std::copy(in.positions.begin(), in.positions.end(), out.positions.begin());
  if (!options.start_positions.empty()) {  // a caller's feasible start (coupled rollouts, coupled.hpp)
    if (options.start_positions.size() != dofs)
      throw Error(message("soft step: expected ", dofs, " start positions or none, got ", options.start_positions.size()));
    std::copy(options.start_positions.begin(), options.start_positions.end(), out.positions.begin());
  }
  for (std::size_t k = 0; k < dofs; ++k)
    if (system.is_pinned_dof(k)) out.positions[k] = model.rest_positions[k];
  if (!std::isfinite(system.objective(out.positions)))
    throw Error("soft step: the state is infeasible (a node on or inside an obstacle, or an inverted element)");
  SoftStepStatus status = options.solver == SoftSolver::Newton
                              ? newton_minimise(system, out.positions, options.objective_history)
                              : adam_minimise(system, out.positions, options.adam, options.objective_history);
  for (std::size_t k = 0; k < dofs; ++k) out.velocities[k] = (out.positions[k] - in.positions[k]) / model.dt;
  out.time = in.time + model.dt;
  check_soft_state_health(model, out, status);
  return status;
}

SoftStepStatus solve_soft_static(const SoftModel& model, const SoftParams& params, std::span<double> positions,
                                 SoftWorkspace& workspace) {
  check_workspace(model, workspace);
  if (positions.size() != static_cast<std::size_t>(model.dof_count()))
    throw Error(message("solve_soft_static: expected ", model.dof_count(), " positions, got ", positions.size()));
  SoftWorkspace::Impl& system = workspace.impl();
  system.set_problem(params, positions, positions, {}, false);
  system.x.assign(positions.begin(), positions.end());
  for (std::size_t k = 0; k < positions.size(); ++k)
    if (system.is_pinned_dof(k)) system.x[k] = model.rest_positions[k];
  system.previous_positions = system.x;
  if (!std::isfinite(system.objective(system.x)))
    throw Error("solve_soft_static: the start positions are infeasible (a node on or inside an obstacle, or an inverted element)");
  const SoftStepStatus status = newton_minimise(system, system.x, nullptr);
  std::copy(system.x.begin(), system.x.end(), positions.begin());
  return status;
}

}  // namespace diffphys::soft
