// solve/projected_gauss_seidel.cpp — projected Gauss–Seidel for the mixed LCP of mlcp.hpp.
//
// Sequential impulses on body velocities (Catto 2005; Erleben 2007, §4): each row in turn
// takes the impulse that zeroes its w, projected onto its admissible set. Equality rows are
// unprojected; unilateral rows are clamped at 0; a friction group is updated as one block
// (the 2D tangential impulse is moved by −u/D and projected onto the friction polygon of
// radius μλ_n, whose fixed point is the maximal-dissipation solution of the LCP); a servo
// group is a boxed row clamped to ±(torque bound × dt). Warm-started from the incoming λ.
//
// Cost notes. The sweep is the whole solve on a pile, so nothing in it calls into libm: the
// K friction directions' angles θ_k = 2πk/K and the polygon's edge normals are tabulated
// once per solve (the same expressions as before, so the same values), and the sector of a
// tangential impulse is found by cross products with the tabulated directions, not atan2.
// The residual (a pass over every row, about a third of a sweep) and the bound rows' γ,
// which no sweep reads, are computed after sweeps 1–4, then every fourth sweep, and after
// the last: the solver may run up to three sweeps past the first one that met the
// tolerance, but the residual it reports is always that of the λ and v it returns.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "solve/mlcp.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {
namespace {

using Vec2 = MlcpWorkspace::Vec2;

// The regular K-gon of the friction cone: vertex directions (cos θ_k, sin θ_k), θ_k = 2πk/K,
// k = 0..K (entry K repeats entry 0's angle as 2π, as the old per-call expressions did), and
// the outward normals of its edges at (k + ½)·2π/K.
struct Polygon {
  int sides = 0;
  double apothem_factor = 0.0;  // cos(π/K): apothem of the unit polygon
  std::vector<Vec2>* vertex = nullptr;
  std::vector<Vec2>* edge_normal = nullptr;
};

Polygon tabulate_polygon(int sides, MlcpWorkspace& ws) {
  ws.polygon_vertex.resize(static_cast<std::size_t>(sides) + 1);
  ws.polygon_edge_normal.resize(static_cast<std::size_t>(sides));
  const double sector = 2.0 * std::numbers::pi / sides;
  for (int k = 0; k <= sides; ++k)
    ws.polygon_vertex[static_cast<std::size_t>(k)] = {std::cos(k * sector), std::sin(k * sector)};
  for (int k = 0; k < sides; ++k) {
    const double angle = (k + 0.5) * sector;
    ws.polygon_edge_normal[static_cast<std::size_t>(k)] = {std::cos(angle), std::sin(angle)};
  }
  return {sides, std::cos(0.5 * sector), &ws.polygon_vertex, &ws.polygon_edge_normal};
}

// Euclidean projection of p onto the regular K-gon with vertices radius·(cos θ_k, sin θ_k).
Vec2 project_onto_polygon(Vec2 p, double radius, const Polygon& polygon) {
  if (!(radius > 0.0)) return {};
  const std::vector<Vec2>& vertex = *polygon.vertex;
  const std::vector<Vec2>& normal = *polygon.edge_normal;
  const double apothem = radius * polygon.apothem_factor;
  bool inside = true;
  for (int k = 0; k < polygon.sides && inside; ++k) {
    const Vec2& n = normal[static_cast<std::size_t>(k)];
    if (p.x * n.x + p.y * n.y > apothem) inside = false;
  }
  if (inside) return p;
  Vec2 best;
  double best_distance = INFINITY;
  for (int k = 0; k < polygon.sides; ++k) {
    const Vec2& u = vertex[static_cast<std::size_t>(k)];
    const Vec2& v = vertex[static_cast<std::size_t>(k) + 1];
    const Vec2 a{radius * u.x, radius * u.y};
    const Vec2 b{radius * v.x, radius * v.y};
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
// sector (the representation the LCP's β uses), zero elsewhere. The sector k is the one with
// d_k × f ≥ 0 and f × d_{k+1} > 0 (f between d_k, inclusive, and d_{k+1}).
void decompose_onto_directions(Vec2 f, const Polygon& polygon, std::span<double> lambda, int first) {
  const int sides = polygon.sides;
  for (int k = 0; k < sides; ++k) lambda[static_cast<std::size_t>(first + k)] = 0.0;
  if (f.x == 0.0 && f.y == 0.0) return;
  const std::vector<Vec2>& vertex = *polygon.vertex;
  int k = sides - 1;
  for (int j = 0; j < sides; ++j) {
    const Vec2& d0 = vertex[static_cast<std::size_t>(j)];
    const Vec2& d1 = vertex[static_cast<std::size_t>(j) + 1];
    if (d0.x * f.y - d0.y * f.x >= 0.0 && f.x * d1.y - f.y * d1.x > 0.0) {
      k = j;
      break;
    }
  }
  const Vec2& d0 = vertex[static_cast<std::size_t>(k)];
  const Vec2& d1 = vertex[static_cast<std::size_t>(k) + 1];
  const double determinant = d0.x * d1.y - d0.y * d1.x;
  lambda[static_cast<std::size_t>(first + k)] = std::max(0.0, (f.x * d1.y - f.y * d1.x) / determinant);
  lambda[static_cast<std::size_t>(first + (k + 1) % sides)] = std::max(0.0, (d0.x * f.y - d0.y * f.x) / determinant);
}

// After which sweeps (1-based) the residual is computed, besides the last one.
bool residual_due(int sweeps_done) { return sweeps_done <= 4 || sweeps_done % 4 == 0; }

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
  // The friction polygon, for the K of the first friction group (a problem's friction groups
  // share K; another K is tabulated when met).
  Polygon polygon;
  const auto polygon_for = [&](int sides) -> const Polygon& {
    if (polygon.sides != sides) polygon = tabulate_polygon(sides, ws);
    return polygon;
  };
  // γ of each bounded group: the largest excess of a direction's target over its velocity.
  const auto update_gammas = [&] {
    for (std::size_t i = 0; i < count; ++i) {
      if (rows[i].type != RowType::Bound) continue;
      double gamma = 0.0;
      for (int k = 0; k < rows[i].group_size; ++k) {
        const ConstraintRow& direction = rows[static_cast<std::size_t>(rows[i].group + k)];
        gamma = std::max(gamma, direction.rhs - row_times_velocity(direction, velocity));
      }
      lambda[i] = gamma;
    }
  };

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
          const Polygon& cone = polygon_for(sides);
          const std::vector<Vec2>& vertex = *cone.vertex;
          const double c1 = vertex[1].x, s1 = vertex[1].y;
          const ConstraintRow& d0 = rows[first];
          const ConstraintRow& d1 = rows[first + 1];
          const double u0 = row_times_velocity(d0, velocity);
          const double u1 = row_times_velocity(d1, velocity);
          const Vec2 slip{u0, (u1 - c1 * u0) / s1};
          Vec2 impulse;
          double mean_diagonal = 0.0;
          for (int k = 0; k < sides; ++k) {
            const double beta = lambda[first + static_cast<std::size_t>(k)];
            impulse.x += beta * vertex[static_cast<std::size_t>(k)].x;
            impulse.y += beta * vertex[static_cast<std::size_t>(k)].y;
            mean_diagonal += ws.diagonal[first + static_cast<std::size_t>(k)];
          }
          mean_diagonal = regularised(mean_diagonal / sides);
          const double radius = row.coefficient * lambda[static_cast<std::size_t>(row.normal)];
          const Vec2 updated = project_onto_polygon({impulse.x - slip.x / mean_diagonal, impulse.y - slip.y / mean_diagonal},
                                                    radius, cone);
          const Vec2 change{updated.x - impulse.x, updated.y - impulse.y};
          // v += M⁻¹(J_t1ᵀ Δf1 + J_t2ᵀ Δf2) = M⁻¹(J_d0ᵀ (Δf1 − Δf2 c1/s1) + J_d1ᵀ Δf2/s1).
          apply_response(d0, ws.responses[first], change.x - change.y * c1 / s1, velocity);
          apply_response(d1, ws.responses[first + 1], change.y / s1, velocity);
          decompose_onto_directions(updated, cone, lambda, row.group);
          break;
        }
      }
    }
    result.iterations = sweep + 1;
    if (!residual_due(result.iterations) && result.iterations < max_iterations) continue;
    update_gammas();
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
