// rigid/integrate.cpp — see integrate.hpp.
#include "rigid/integrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "rigid/joints.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::rigid {
namespace {

// q / |q| with one division (Quat::normalized divides each component): the joint projection
// renormalises every body's orientation on each of its iterations.
Quat unit(const Quat& q) {
  const double inverse_norm = 1.0 / std::sqrt(q.squared_norm());
  return {q.w * inverse_norm, q.x * inverse_norm, q.y * inverse_norm, q.z * inverse_norm};
}

// The envelope factorisation's cost, Σ w(w+1)/2 over the rows, w the distance from a row to
// the first row sharing one of its moving bodies, for the joints (runs of rows on one body
// pair) taken in `unit_order`.
long envelope_cost(std::span<const solve::ConstraintRow> rows, const solve::MassBlocks& mass,
                   std::span<const int> unit_order, StabilizationBuffers& buffers) {
  std::fill(buffers.body_first.begin(), buffers.body_first.end(), -1);
  long cost = 0;
  int position = 0;
  for (const int unit : unit_order)
    for (int i = buffers.unit_start[static_cast<std::size_t>(unit)];
         i < buffers.unit_start[static_cast<std::size_t>(unit) + 1]; ++i, ++position) {
      const solve::ConstraintRow& row = rows[static_cast<std::size_t>(i)];
      int first = position;
      for (const int body : {row.body_a, row.body_b}) {
        if (!(mass.inverse_mass[static_cast<std::size_t>(body)] > 0.0)) continue;
        int& body_first = buffers.body_first[static_cast<std::size_t>(body)];
        if (body_first < 0) body_first = position;
        first = std::min(first, body_first);
      }
      const long width = position - first;
      cost += width * (width + 1) / 2;
    }
  return cost;
}

// A profile-reducing order of the joint rows for the projection's envelope factorisation:
// reverse Cuthill–McKee (Cuthill & McKee 1969; George & Liu 1981, §4.3) on the graph of the
// joints, two joints adjacent when they share a moving body, a joint's rows kept together in
// their own order. Every joint is tried as the start (the first of the lowest cost wins) when
// there are at most kAllStarts joints, else those of least degree; the rows' own order is kept
// unless one is cheaper. A branching tree gains most: humanoid.xml's 15 joints, given
// trunk-first, reach the torso's four joints only after the abdomen and the legs, and their
// rows then span the envelope back to the first row (cost 11,471 → 4,210).
void order_joint_rows(std::span<const solve::ConstraintRow> rows, const solve::MassBlocks& mass,
                      StabilizationBuffers& buffers) {
  const std::size_t m = rows.size();
  std::vector<int>& unit_start = buffers.unit_start;
  unit_start.clear();
  for (std::size_t i = 0; i < m; ++i)
    if (i == 0 || rows[i].body_a != rows[i - 1].body_a || rows[i].body_b != rows[i - 1].body_b)
      unit_start.push_back(static_cast<int>(i));
  const auto units = static_cast<int>(unit_start.size());
  unit_start.push_back(static_cast<int>(m));
  const auto moving = [&](int body) { return mass.inverse_mass[static_cast<std::size_t>(body)] > 0.0; };
  const auto shares_body = [&](int u, int v) {
    const solve::ConstraintRow& a = rows[static_cast<std::size_t>(unit_start[static_cast<std::size_t>(u)])];
    const solve::ConstraintRow& b = rows[static_cast<std::size_t>(unit_start[static_cast<std::size_t>(v)])];
    for (const int body : {a.body_a, a.body_b})
      if (moving(body) && (body == b.body_a || body == b.body_b)) return true;
    return false;
  };
  buffers.adjacency_start.assign(static_cast<std::size_t>(units) + 1, 0);
  buffers.adjacency.clear();
  for (int u = 0; u < units; ++u) {
    buffers.adjacency_start[static_cast<std::size_t>(u)] = static_cast<int>(buffers.adjacency.size());
    for (int v = 0; v < units; ++v)
      if (v != u && shares_body(u, v)) buffers.adjacency.push_back(v);
  }
  buffers.adjacency_start[static_cast<std::size_t>(units)] = static_cast<int>(buffers.adjacency.size());
  const auto degree = [&](int u) {
    return buffers.adjacency_start[static_cast<std::size_t>(u) + 1] - buffers.adjacency_start[static_cast<std::size_t>(u)];
  };
  buffers.body_first.resize(mass.inverse_mass.size());
  std::vector<int>& best = buffers.unit_order;
  best.resize(static_cast<std::size_t>(units));
  for (int u = 0; u < units; ++u) best[static_cast<std::size_t>(u)] = u;
  long best_cost = envelope_cost(rows, mass, best, buffers);
  constexpr int kAllStarts = 64;
  int least_degree = m == 0 ? 0 : degree(0);
  for (int u = 0; u < units; ++u) least_degree = std::min(least_degree, degree(u));
  std::vector<int>& candidate = buffers.candidate;
  for (int start = 0; start < units; ++start) {
    if (units > kAllStarts && degree(start) != least_degree) continue;
    // Cuthill–McKee: breadth first from `start`, each node's unplaced neighbours by
    // increasing degree (then index); an unreached component from its lowest joint.
    buffers.placed.assign(static_cast<std::size_t>(units), 0);
    candidate.clear();
    for (int root = start, next_root = 0; root >= 0;) {
      buffers.placed[static_cast<std::size_t>(root)] = 1;
      candidate.push_back(root);
      for (std::size_t head = candidate.size() - 1; head < candidate.size(); ++head) {
        const int u = candidate[head];
        const std::size_t first_new = candidate.size();
        for (int e = buffers.adjacency_start[static_cast<std::size_t>(u)];
             e < buffers.adjacency_start[static_cast<std::size_t>(u) + 1]; ++e) {
          const int v = buffers.adjacency[static_cast<std::size_t>(e)];
          if (buffers.placed[static_cast<std::size_t>(v)]) continue;
          buffers.placed[static_cast<std::size_t>(v)] = 1;
          candidate.push_back(v);
        }
        std::sort(candidate.begin() + static_cast<std::ptrdiff_t>(first_new), candidate.end(),
                  [&](int a, int b) { return degree(a) != degree(b) ? degree(a) < degree(b) : a < b; });
      }
      while (next_root < units && buffers.placed[static_cast<std::size_t>(next_root)]) ++next_root;
      root = next_root < units ? next_root : -1;
    }
    std::reverse(candidate.begin(), candidate.end());
    const long cost = envelope_cost(rows, mass, candidate, buffers);
    if (cost < best_cost) {
      best_cost = cost;
      best.assign(candidate.begin(), candidate.end());
    }
  }
  buffers.order.clear();
  for (const int unit : best)
    for (int i = unit_start[static_cast<std::size_t>(unit)]; i < unit_start[static_cast<std::size_t>(unit) + 1]; ++i)
      buffers.order.push_back(i);
}

}  // namespace

void integrate(const Model& model, const State& state_in, std::span<const double> velocity, State& state_out) {
  const double h = model.dt;
  state_out.time = state_in.time + h;
  for (std::size_t b = 0; b < state_in.position.size(); ++b) {
    const Vec3 linear = solve::read_vec3(velocity, static_cast<int>(6 * b));
    const Vec3 angular = solve::read_vec3(velocity, static_cast<int>(6 * b + 3));
    // A kinematic body moves like a dynamic one, by the solved velocity, which is its state
    // velocity (zero inverse mass: the rows cannot change it).
    if (model.bodies[b].type == BodyType::Static) {
      state_out.position[b] = state_in.position[b];
      state_out.orientation[b] = state_in.orientation[b];
      state_out.linear_velocity[b] = state_in.linear_velocity[b];
      state_out.angular_velocity[b] = state_in.angular_velocity[b];
      continue;
    }
    state_out.linear_velocity[b] = linear;
    state_out.angular_velocity[b] = angular;
    state_out.position[b] = state_in.position[b] + linear * h;
    state_out.orientation[b] = (Quat::from_rotation_vector(angular * h) * state_in.orientation[b]).normalized();
  }
}

void integrate(const Model& model, const State& state_in, std::span<const double> velocity,
               std::span<const double> free_velocity, const ImpactRecord& impacts, State& state_out) {
  integrate(model, state_in, velocity, state_out);
  if (!impacts.any) return;
  const double h = model.dt;
  for (std::size_t b = 0; b < state_in.position.size(); ++b) {
    if (impacts.body_contact[b] < 0) continue;
    // Free motion until the impact at τ, the solved velocity after it.
    const double before = impacts.body_time[b], after = h - before;
    const int o = static_cast<int>(6 * b);
    state_out.position[b] = state_in.position[b] + solve::read_vec3(free_velocity, o) * before +
                            solve::read_vec3(velocity, o) * after;
    const Quat free_rotation = Quat::from_rotation_vector(solve::read_vec3(free_velocity, o + 3) * before);
    const Quat solved_rotation = Quat::from_rotation_vector(solve::read_vec3(velocity, o + 3) * after);
    state_out.orientation[b] = (solved_rotation * (free_rotation * state_in.orientation[b])).normalized();
  }
}

double stabilize_joints(const Model& model, std::span<const solve::ConstraintRow> joint_rows,
                        const solve::MassBlocks& mass, const solve::MlcpWorkspace* factorized, bool project,
                        State& state, StabilizationBuffers& buffers) {
  if (joint_rows.empty()) return 0.0;
  const std::size_t rows = joint_rows.size();
  buffers.errors.resize(rows);
  buffers.displacement.resize(6 * state.position.size());
  buffers.bodies.rotation.resize(state.orientation.size());
  // The factorisation of J_t M⁻¹ J_tᵀ: the velocity solve's if it is the same matrix, else its
  // own, in the convex formulation of the rows in a profile-reducing order (order_joint_rows)
  // when that is not theirs.
  const solve::MlcpWorkspace& factors = factorized != nullptr ? *factorized : buffers.solver;
  bool ready = factorized != nullptr;
  bool reordered = false;
  std::span<const solve::ConstraintRow> factor_rows = joint_rows;  // in the factorisation's order
  std::vector<double>& impulses = buffers.correction_impulse;      // (rows) in that order
  double error = 0.0;
  buffers.factorized = false;
  for (int iteration = 0;; ++iteration) {
    for (std::size_t b = 0; b < state.orientation.size(); ++b) buffers.bodies.rotation[b] = state.orientation[b].to_matrix();
    error = joint_position_errors(model, state, buffers.bodies, buffers.errors);
    if (!project || error <= model.solver.stabilization_tolerance || iteration >= model.solver.stabilization_iterations)
      break;
    // The complementarity formulation keeps the rows' order: its mixed LCP with redundant rows
    // has several solutions, and which one a trajectory follows can turn on the rounding of
    // this projection (the quadruped's learning test, tests/quadruped_test.cpp, then ends on a
    // different gait).
    if (!ready && model.solver.formulation == Formulation::Convex) {
      bool same_pattern = buffers.ordered_pattern.size() == rows;
      for (std::size_t i = 0; i < rows && same_pattern; ++i)
        same_pattern = buffers.ordered_pattern[i].first == joint_rows[i].body_a &&
                       buffers.ordered_pattern[i].second == joint_rows[i].body_b;
      if (!same_pattern) {
        order_joint_rows(joint_rows, mass, buffers);
        buffers.ordered_pattern.resize(rows);
        for (std::size_t i = 0; i < rows; ++i) buffers.ordered_pattern[i] = {joint_rows[i].body_a, joint_rows[i].body_b};
      }
      for (std::size_t k = 0; k < rows && !reordered; ++k) reordered = buffers.order[k] != static_cast<int>(k);
      if (reordered) {
        buffers.ordered_rows.resize(rows);
        for (std::size_t k = 0; k < rows; ++k)
          buffers.ordered_rows[k] = joint_rows[static_cast<std::size_t>(buffers.order[k])];
        factor_rows = buffers.ordered_rows;
      }
    }
    if (!ready) {
      solve::compute_responses(factor_rows, mass, buffers.solver);
      if (!(ready = solve::envelope_factorize(factor_rows, mass, buffers.solver))) break;
      buffers.factorized = true;
      buffers.reordered = reordered;
    }
    if (reordered) {
      impulses.resize(rows);
      for (std::size_t k = 0; k < rows; ++k) impulses[k] = -buffers.errors[static_cast<std::size_t>(buffers.order[k])];
    } else {
      impulses.resize(rows);
      for (std::size_t k = 0; k < rows; ++k) impulses[k] = -buffers.errors[k];
    }
    solve::envelope_solve(factors, impulses);  // now the correction impulses
    // Δq = M⁻¹J_tᵀ Δλ. A joint's rows are consecutive and share their two bodies: their
    // terms are summed in registers and each body's displacement is written once per joint
    // (rather than read, added and stored again for every row, a chain of store-to-load
    // dependencies).
    std::fill(buffers.displacement.begin(), buffers.displacement.end(), 0.0);
    for (std::size_t i = 0; i < rows;) {
      const int body_a = factor_rows[i].body_a, body_b = factor_rows[i].body_b;
      Vec3 linear_a, angular_a, linear_b, angular_b;
      for (; i < rows && factor_rows[i].body_a == body_a && factor_rows[i].body_b == body_b; ++i) {
        const solve::RowResponse& response = factors.responses[i];
        const double impulse = impulses[i];
        linear_a += response.linear_a * impulse;
        angular_a += response.angular_a * impulse;
        linear_b += response.linear_b * impulse;
        angular_b += response.angular_b * impulse;
      }
      solve::add_vec3(buffers.displacement, 6 * body_a, linear_a);
      solve::add_vec3(buffers.displacement, 6 * body_a + 3, angular_a);
      solve::add_vec3(buffers.displacement, 6 * body_b, linear_b);
      solve::add_vec3(buffers.displacement, 6 * body_b + 3, angular_b);
    }
    const double inverse_dt = 1.0 / model.dt;  // multiplications, not six divisions per body
    for (std::size_t b = 0; b < state.position.size(); ++b) {
      if (model.bodies[b].type != BodyType::Dynamic) continue;
      const Vec3 translation = solve::read_vec3(buffers.displacement, static_cast<int>(6 * b));
      const Vec3 rotation = solve::read_vec3(buffers.displacement, static_cast<int>(6 * b + 3));
      state.position[b] += translation;
      state.orientation[b] = unit(Quat::from_rotation_vector(rotation) * state.orientation[b]);
      state.linear_velocity[b] += translation * inverse_dt;
      state.angular_velocity[b] += rotation * inverse_dt;
    }
  }
  return error;
}

}  // namespace diffphys::rigid
