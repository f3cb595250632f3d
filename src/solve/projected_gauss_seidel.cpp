// solve/projected_gauss_seidel.cpp — projected Gauss–Seidel for the mixed LCP of mlcp.hpp.
//
// Sequential impulses on body velocities (Catto 2005; Erleben 2007, §4): each row in turn
// takes the impulse that zeroes its w, projected onto its admissible set. Equality rows are
// unprojected; unilateral rows are clamped at 0; a friction group is updated as one block
// (the 2D tangential impulse is moved by −u/D and projected onto the friction polygon of
// radius μλ_n, whose fixed point is the maximal-dissipation solution of the LCP); a servo
// group is a boxed row clamped to ±(torque bound × dt). Warm-started from the incoming λ.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "solve/mlcp.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {
namespace {

struct Vec2 {
  double x = 0.0, y = 0.0;
};

// Euclidean projection of p onto the regular K-gon with vertices radius·(cos θ_k, sin θ_k),
// θ_k = 2πk/K (the friction polygon of the polyhedral cone).
Vec2 project_onto_polygon(Vec2 p, double radius, int sides) {
  if (!(radius > 0.0)) return {};
  const double sector = 2.0 * std::numbers::pi / sides;
  const double apothem = radius * std::cos(0.5 * sector);
  bool inside = true;
  for (int k = 0; k < sides && inside; ++k) {
    const double angle = (k + 0.5) * sector;
    if (p.x * std::cos(angle) + p.y * std::sin(angle) > apothem) inside = false;
  }
  if (inside) return p;
  Vec2 best;
  double best_distance = INFINITY;
  for (int k = 0; k < sides; ++k) {
    const Vec2 a{radius * std::cos(k * sector), radius * std::sin(k * sector)};
    const Vec2 b{radius * std::cos((k + 1) * sector), radius * std::sin((k + 1) * sector)};
    const Vec2 edge{b.x - a.x, b.y - a.y};
    const double t = std::clamp(((p.x - a.x) * edge.x + (p.y - a.y) * edge.y) / (edge.x * edge.x + edge.y * edge.y), 0.0, 1.0);
    const Vec2 c{a.x + t * edge.x, a.y + t * edge.y};
    const double distance = (p.x - c.x) * (p.x - c.x) + (p.y - c.y) * (p.y - c.y);
    if (distance < best_distance) {
      best_distance = distance;
      best = c;
    }
  }
  return best;
}

// Writes the tangential impulse f as non-negative weights on the two directions of its
// sector (the representation the LCP's β uses), zero elsewhere.
void decompose_onto_directions(Vec2 f, int sides, std::span<double> lambda, int first) {
  for (int k = 0; k < sides; ++k) lambda[static_cast<std::size_t>(first + k)] = 0.0;
  if (f.x == 0.0 && f.y == 0.0) return;
  const double sector = 2.0 * std::numbers::pi / sides;
  double angle = std::atan2(f.y, f.x);
  if (angle < 0) angle += 2.0 * std::numbers::pi;
  const int k = std::min(static_cast<int>(angle / sector), sides - 1);
  const Vec2 d0{std::cos(k * sector), std::sin(k * sector)};
  const Vec2 d1{std::cos((k + 1) * sector), std::sin((k + 1) * sector)};
  const double determinant = d0.x * d1.y - d0.y * d1.x;
  lambda[static_cast<std::size_t>(first + k)] = std::max(0.0, (f.x * d1.y - f.y * d1.x) / determinant);
  lambda[static_cast<std::size_t>(first + (k + 1) % sides)] = std::max(0.0, (d0.x * f.y - d0.y * f.x) / determinant);
}

}  // namespace

MlcpResult solve_projected_gauss_seidel(std::span<const ConstraintRow> rows, const MassBlocks& mass,
                                        std::span<const double> free_velocity, int max_iterations,
                                        double tolerance, MlcpWorkspace& ws, std::span<double> lambda,
                                        std::span<double> velocity) {
  const std::size_t count = rows.size();
  compute_responses(rows, mass, ws);
  apply_impulses(rows, ws.responses, lambda, free_velocity, velocity);
  MlcpResult result;
  const auto regularised = [](double diagonal) { return diagonal * (1.0 + 1e-11) + 1e-300; };

  for (int sweep = 0; sweep < max_iterations; ++sweep) {
    for (std::size_t i = 0; i < count; ++i) {
      const ConstraintRow& row = rows[i];
      switch (row.type) {
        case RowType::Equality:
        case RowType::Unilateral: {
          const double w = row_times_velocity(row, velocity) - row.rhs;
          double updated = lambda[i] - w / regularised(ws.diagonal[i]);
          if (row.type == RowType::Unilateral) updated = std::max(0.0, updated);
          apply_response(row, ws.responses[i], updated - lambda[i], velocity);
          lambda[i] = updated;
          break;
        }
        case RowType::Direction: break;  // updated with its group's Bound row
        case RowType::Bound: {
          const auto first = static_cast<std::size_t>(row.group);
          if (row.normal < 0) {
            // Servo: rows first (+J, rhs ω) and first+1 (−J, −ω); a boxed impulse.
            const ConstraintRow& positive = rows[first];
            const double bound = -row.rhs;
            const double current = lambda[first] - lambda[first + 1];
            const double w = row_times_velocity(positive, velocity) - positive.rhs;
            const double updated = std::clamp(current - w / regularised(ws.diagonal[first]), -bound, bound);
            apply_response(positive, ws.responses[first], updated - current, velocity);
            lambda[first] = std::max(updated, 0.0);
            lambda[first + 1] = std::max(-updated, 0.0);
            break;
          }
          // Friction: directions d_k = cos θ_k t1 + sin θ_k t2, so J_t1 = J_d0 and
          // J_t2 = (J_d1 − cos θ_1 J_d0) / sin θ_1.
          const int sides = row.group_size;
          const double sector = 2.0 * std::numbers::pi / sides;
          const double c1 = std::cos(sector), s1 = std::sin(sector);
          const ConstraintRow& d0 = rows[first];
          const ConstraintRow& d1 = rows[first + 1];
          const double u0 = row_times_velocity(d0, velocity);
          const double u1 = row_times_velocity(d1, velocity);
          const Vec2 slip{u0, (u1 - c1 * u0) / s1};
          Vec2 impulse;
          double mean_diagonal = 0.0;
          for (int k = 0; k < sides; ++k) {
            const double beta = lambda[first + static_cast<std::size_t>(k)];
            impulse.x += beta * std::cos(k * sector);
            impulse.y += beta * std::sin(k * sector);
            mean_diagonal += ws.diagonal[first + static_cast<std::size_t>(k)];
          }
          mean_diagonal = regularised(mean_diagonal / sides);
          const double radius = row.coefficient * lambda[static_cast<std::size_t>(row.normal)];
          const Vec2 updated = project_onto_polygon({impulse.x - slip.x / mean_diagonal, impulse.y - slip.y / mean_diagonal},
                                                    radius, sides);
          const Vec2 change{updated.x - impulse.x, updated.y - impulse.y};
          // v += M⁻¹(J_t1ᵀ Δf1 + J_t2ᵀ Δf2) = M⁻¹(J_d0ᵀ (Δf1 − Δf2 c1/s1) + J_d1ᵀ Δf2/s1).
          apply_response(d0, ws.responses[first], change.x - change.y * c1 / s1, velocity);
          apply_response(d1, ws.responses[first + 1], change.y / s1, velocity);
          decompose_onto_directions(updated, sides, lambda, row.group);
          break;
        }
      }
    }
    // γ of each bounded group: the largest excess of a direction's target over its velocity.
    for (std::size_t i = 0; i < count; ++i) {
      if (rows[i].type != RowType::Bound) continue;
      double gamma = 0.0;
      for (int k = 0; k < rows[i].group_size; ++k) {
        const ConstraintRow& direction = rows[static_cast<std::size_t>(rows[i].group + k)];
        gamma = std::max(gamma, direction.rhs - row_times_velocity(direction, velocity));
      }
      lambda[i] = gamma;
    }
    result.iterations = sweep + 1;
    result.residual = mlcp_residual(rows, lambda, velocity, ws);
    if (result.residual <= tolerance) {
      result.converged = true;
      break;
    }
    if (std::isnan(result.residual)) break;
  }
  return result;
}

}  // namespace diffphys::solve
