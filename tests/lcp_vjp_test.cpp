// tests/lcp_vjp_test.cpp — the implicit VJP of the mixed LCP (adjoint/lcp_vjp.hpp) against
// central finite differences of the solver's answer, on random problems with a joint, a
// servo and frictional contacts (sticking and sliding), for every physical input: v_free,
// joint and contact geometry, restitution targets, servo rate and bound, μ, inverse masses
// and inertias.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "adjoint/lcp_vjp.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::adjoint {
namespace {

using solve::ConstraintRow;
using solve::RowType;

struct Problem {
  std::vector<ConstraintRow> rows;
  std::vector<double> inverse_mass;
  std::vector<Mat3> inverse_inertia;
  std::vector<double> free_velocity;
};

// The physical parameters a problem is built from. Perturbing them keeps the structure the
// engine's rows always have (a contact's directions turn together, d_{k+2} = −d_k, a servo's
// two rows mirror each other), which is what the gradient is defined for: an individual
// entry of a sticking contact's direction row is not a direction the physics can move in.
struct Parameters {
  std::vector<double> values;
};
// Layout: [0,18) v_free of bodies 1–3; [18,24) joint offsets (1, 2); [24,26) servo rate and
// bound; per contact c (2): [26+6c, 26+6c+3) offset, +3 basis angle, +4 bounce target, +5 μ;
// [38,41) inverse masses; [41,50) diagonal inverse inertias.
Parameters random_parameters(std::mt19937& random) {
  std::normal_distribution<double> normal;
  Parameters p;
  p.values.resize(50);
  for (int k = 0; k < 18; ++k) p.values[static_cast<std::size_t>(k)] = normal(random);
  p.values[2] -= 2.0;   // body 1 falls onto the ground
  p.values[14] -= 2.0;  // body 3 too
  for (int k = 18; k < 24; ++k) p.values[static_cast<std::size_t>(k)] = 0.3 * normal(random);
  p.values[24] = 0.3;
  p.values[25] = 0.05;
  for (int c = 0; c < 2; ++c) {
    const std::size_t o = static_cast<std::size_t>(26 + 6 * c);
    p.values[o] = 0.05 * normal(random);
    p.values[o + 1] = 0.05 * normal(random);
    p.values[o + 2] = -0.2;
    p.values[o + 3] = 0.1 + 0.2 * normal(random);
    p.values[o + 4] = 0.1;
    p.values[o + 5] = c == 0 ? 0.9 : 0.15;  // one contact tends to stick, one to slide
  }
  const double inverse_masses[3] = {1.0 / 1.5, 1.0 / 0.8, 1.0 / 2.0};
  const double inverse_inertias[9] = {8, 6, 7, 10, 12, 9, 5, 5, 6};
  for (int k = 0; k < 3; ++k) p.values[static_cast<std::size_t>(38 + k)] = inverse_masses[k];
  for (int k = 0; k < 9; ++k) p.values[static_cast<std::size_t>(41 + k)] = inverse_inertias[k];
  return p;
}

// World (0) and three bodies; a ball joint between 1 and 2; a servo-like bounded group on
// their relative rotation about z; bodies 1 and 3 touch the ground with friction.
Problem problem_from(const Parameters& parameters) {
  const auto& v = parameters.values;
  const auto at = [&](int k) { return v[static_cast<std::size_t>(k)]; };
  Problem p;
  p.inverse_mass = {0.0, at(38), at(39), at(40)};
  p.inverse_inertia = {Mat3{}, Mat3::diagonal({at(41), at(42), at(43)}), Mat3::diagonal({at(44), at(45), at(46)}),
                       Mat3::diagonal({at(47), at(48), at(49)})};
  p.free_velocity.assign(24, 0.0);
  for (int k = 0; k < 18; ++k) p.free_velocity[static_cast<std::size_t>(6 + k)] = at(k);
  const Vec3 offset_1{at(18), at(19), at(20)}, offset_2{at(21), at(22), at(23)};
  for (int k = 0; k < 3; ++k) {
    ConstraintRow row;
    row.body_a = 1;
    row.body_b = 2;
    Vec3 e;
    e[k] = 1.0;
    row.linear_a = e;
    row.angular_a = cross(offset_1, e);
    row.linear_b = -e;
    row.angular_b = -cross(offset_2, e);
    p.rows.push_back(row);
  }
  {
    const int first = static_cast<int>(p.rows.size());
    ConstraintRow positive;
    positive.type = RowType::Direction;
    positive.body_a = 1;
    positive.body_b = 2;
    positive.angular_a = {0, 0, -1};
    positive.angular_b = {0, 0, 1};
    positive.rhs = at(24);
    positive.group = first + 2;
    ConstraintRow negative = positive;
    negative.angular_a = {0, 0, 1};
    negative.angular_b = {0, 0, -1};
    negative.rhs = -at(24);
    ConstraintRow bound;
    bound.type = RowType::Bound;
    bound.group = first;
    bound.group_size = 2;
    bound.normal = -1;
    bound.coefficient = at(25);
    bound.rhs = -at(25);
    p.rows.push_back(positive);
    p.rows.push_back(negative);
    p.rows.push_back(bound);
  }
  for (int c = 0; c < 2; ++c) {
    const int body = c == 0 ? 1 : 3;
    const int o = 26 + 6 * c;
    const Vec3 offset{at(o), at(o + 1), at(o + 2)};
    const int normal_index = static_cast<int>(p.rows.size());
    ConstraintRow normal_row;
    normal_row.type = RowType::Unilateral;
    normal_row.body_a = body;
    normal_row.body_b = 0;
    normal_row.linear_a = {0, 0, 1};
    normal_row.angular_a = cross(offset, Vec3{0, 0, 1});
    normal_row.rhs = at(o + 4);
    p.rows.push_back(normal_row);
    const int directions = 4;
    for (int k = 0; k < directions; ++k) {
      const double angle = 2 * std::numbers::pi * k / directions + at(o + 3);
      const Vec3 d{std::cos(angle), std::sin(angle), 0};
      ConstraintRow row;
      row.type = RowType::Direction;
      row.body_a = body;
      row.body_b = 0;
      row.linear_a = d;
      row.angular_a = cross(offset, d);
      row.group = normal_index + 1 + directions;
      p.rows.push_back(row);
    }
    ConstraintRow bound;
    bound.type = RowType::Bound;
    bound.group = normal_index + 1;
    bound.group_size = directions;
    bound.normal = normal_index;
    bound.coefficient = at(o + 5);
    p.rows.push_back(bound);
  }
  return p;
}

std::vector<double> solve_velocity(const Problem& p, std::vector<double>* lambda_out = nullptr) {
  std::vector<double> lambda(p.rows.size()), velocity(p.free_velocity.size());
  solve::MlcpWorkspace workspace;
  const solve::MassBlocks mass{p.inverse_mass, p.inverse_inertia};
  const solve::MlcpResult result =
      solve::solve_interior_point(p.rows, mass, p.free_velocity, 200, 1e-13, workspace, lambda, velocity);
  EXPECT_LE(result.residual, 1e-12);
  if (lambda_out) *lambda_out = lambda;
  return velocity;
}

// Σ adjoint · (dProblem/dparameter): the VJP contracted with a direction of the inputs.
double contract(const Problem& derivative, const std::vector<double>& free_velocity_adjoint,
                const std::vector<RowAdjoint>& row_adjoints, const MassAdjoint& mass_adjoint) {
  double sum = 0.0;
  for (std::size_t k = 0; k < derivative.free_velocity.size(); ++k) sum += free_velocity_adjoint[k] * derivative.free_velocity[k];
  for (std::size_t i = 0; i < derivative.rows.size(); ++i) {
    const ConstraintRow& d = derivative.rows[i];
    const RowAdjoint& a = row_adjoints[i];
    sum += dot(a.linear_a, d.linear_a) + dot(a.angular_a, d.angular_a) + dot(a.linear_b, d.linear_b) +
           dot(a.angular_b, d.angular_b) + a.rhs * d.rhs + a.coefficient * d.coefficient;
  }
  for (std::size_t b = 0; b < derivative.inverse_mass.size(); ++b) {
    sum += mass_adjoint.inverse_mass[b] * derivative.inverse_mass[b];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) sum += mass_adjoint.inverse_inertia[b](r, c) * derivative.inverse_inertia[b](r, c);
  }
  return sum;
}

// (a − b) / scale, entry by entry, for two problems of the same structure.
Problem difference(const Problem& a, const Problem& other, double scale) {
  Problem d = a;
  for (std::size_t k = 0; k < d.free_velocity.size(); ++k) d.free_velocity[k] = (a.free_velocity[k] - other.free_velocity[k]) / scale;
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    d.rows[i].linear_a = (a.rows[i].linear_a - other.rows[i].linear_a) / scale;
    d.rows[i].angular_a = (a.rows[i].angular_a - other.rows[i].angular_a) / scale;
    d.rows[i].linear_b = (a.rows[i].linear_b - other.rows[i].linear_b) / scale;
    d.rows[i].angular_b = (a.rows[i].angular_b - other.rows[i].angular_b) / scale;
    d.rows[i].rhs = (a.rows[i].rhs - other.rows[i].rhs) / scale;
    d.rows[i].coefficient = (a.rows[i].coefficient - other.rows[i].coefficient) / scale;
  }
  for (std::size_t b = 0; b < d.inverse_mass.size(); ++b) {
    d.inverse_mass[b] = (a.inverse_mass[b] - other.inverse_mass[b]) / scale;
    d.inverse_inertia[b] = (a.inverse_inertia[b] - other.inverse_inertia[b]) * (1.0 / scale);
  }
  return d;
}

TEST(LcpVjp, MatchesCentralDifferencesForEveryPhysicalInput) {
  std::mt19937 random(5);
  int sliding_seen = 0, sticking_seen = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const Parameters parameters = random_parameters(random);
    const Problem problem = problem_from(parameters);
    std::vector<double> lambda;
    const std::vector<double> velocity = solve_velocity(problem, &lambda);
    // Which regime each contact is in (γ > 0: sliding), so the test is known to cover both.
    for (std::size_t i = 0; i < problem.rows.size(); ++i)
      if (problem.rows[i].type == RowType::Bound && problem.rows[i].normal >= 0 && lambda[static_cast<std::size_t>(problem.rows[i].normal)] > 1e-6)
        (lambda[i] > 1e-6 ? sliding_seen : sticking_seen) += 1;
    std::vector<double> weights(velocity.size());
    std::normal_distribution<double> normal;
    for (std::size_t k = 6; k < weights.size(); ++k) weights[k] = normal(random);
    const auto loss = [&](const Problem& p) {
      const std::vector<double> v = solve_velocity(p);
      double sum = 0.0;
      for (std::size_t k = 0; k < v.size(); ++k) sum += weights[k] * v[k];
      return sum;
    };
    std::vector<double> free_velocity_adjoint(velocity.size(), 0.0);
    std::vector<RowAdjoint> row_adjoints(problem.rows.size());
    MassAdjoint mass_adjoint{std::vector<double>(4, 0.0), std::vector<Mat3>(4)};
    LcpVjpWorkspace workspace;
    lcp_vjp(problem.rows, {problem.inverse_mass, problem.inverse_inertia}, lambda, velocity, weights,
            free_velocity_adjoint, row_adjoints, mass_adjoint, workspace);

    const double step = 1e-6;
    for (std::size_t k = 0; k < parameters.values.size(); ++k) {
      Parameters plus = parameters, minus = parameters;
      plus.values[k] += step;
      minus.values[k] -= step;
      const Problem plus_problem = problem_from(plus), minus_problem = problem_from(minus);
      const double numeric = (loss(plus_problem) - loss(minus_problem)) / (2 * step);
      const double analytic = contract(difference(plus_problem, minus_problem, 2 * step), free_velocity_adjoint,
                                       row_adjoints, mass_adjoint);
      EXPECT_NEAR(analytic, numeric, 1e-5 * std::max(1.0, std::abs(numeric)))
          << "trial " << trial << ", parameter " << k;
    }
  }
  EXPECT_GT(sliding_seen, 0);
  EXPECT_GT(sticking_seen, 0);
}

}  // namespace
}  // namespace diffphys::adjoint
