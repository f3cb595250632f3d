// solve/convex_groups.cpp — the convex problem's groups of rows (convex.hpp): which rows form
// a free row, a bound, a box or a friction cone (describe_convex_groups), and the projection
// onto each group's set with its derivative (project_group, projection_piece), which the
// Newton solver (solve/convex.cpp) and the implicit backward pass (adjoint/convex_vjp.cpp) read.
#include "solve/convex.hpp"

#include <algorithm>
#include <cmath>

namespace diffphys::solve {

GroupProjection project_group(const ConvexGroup& group, const double* y) {
  GroupProjection p;
  switch (group.kind) {
    case ConvexGroupKind::Free:
      p.gamma[0] = y[0];
      p.jacobian[0][0] = 1.0;
      break;
    case ConvexGroupKind::NonNegative:
      if (y[0] > 0.0) {
        p.gamma[0] = y[0];
        p.jacobian[0][0] = 1.0;
      }
      break;
    case ConvexGroupKind::Box:
      if (y[0] >= group.bound) {
        p.gamma[0] = group.bound;
        p.bound_derivative[0] = 1.0;
      } else if (y[0] <= -group.bound) {
        p.gamma[0] = -group.bound;
        p.bound_derivative[0] = -1.0;
      } else {
        p.gamma[0] = y[0];
        p.jacobian[0][0] = 1.0;
      }
      break;
    case ConvexGroupKind::Cone: {
      // Euclidean projection onto the second-order cone ‖t‖ ≤ μ n (e.g. Boyd & Vandenberghe
      // 2004 §8.1; its derivative, Ali, Wong & Kolter 2017).
      const double mu = group.bound, n = y[0], t1 = y[1], t2 = y[2];
      // ‖t‖ without std::hypot's guard against overflow (impulses are far from 1e154) and
      // its cost (libm's hypot was 2 % of humanoid.xml's step).
      const double s = std::sqrt(t1 * t1 + t2 * t2);
      if (s <= mu * n) {  // sticking (or at rest in contact): inside the cone
        for (int k = 0; k < 3; ++k) {
          p.gamma[k] = y[k];
          p.jacobian[k][k] = 1.0;
        }
      } else if (mu * s <= -n) {  // separating: in the polar cone
        break;
      } else {  // sliding: onto the cone's surface (s > 0 here)
        const double d = 1.0 + mu * mu;
        const double normal = (n + mu * s) / d;
        const double e1 = t1 / s, e2 = t2 / s;
        p.gamma[0] = normal;
        p.gamma[1] = mu * normal * e1;
        p.gamma[2] = mu * normal * e2;
        const double e[2] = {e1, e2};
        p.jacobian[0][0] = 1.0 / d;
        for (int k = 0; k < 2; ++k) {
          p.jacobian[0][k + 1] = p.jacobian[k + 1][0] = mu * e[k] / d;
          for (int l = 0; l < 2; ++l)
            p.jacobian[k + 1][l + 1] =
                mu * mu * e[k] * e[l] / d + mu * normal / s * ((k == l ? 1.0 : 0.0) - e[k] * e[l]);
        }
        const double normal_derivative = s / d - 2.0 * mu * (n + mu * s) / (d * d);
        p.bound_derivative[0] = normal_derivative;
        p.bound_derivative[1] = (normal + mu * normal_derivative) * e1;
        p.bound_derivative[2] = (normal + mu * normal_derivative) * e2;
      }
      break;
    }
  }
  return p;
}

ProjectionPiece projection_piece(const ConvexGroup& group, const double* y) {
  switch (group.kind) {
    case ConvexGroupKind::Free:
      return ProjectionPiece::Identity;
    case ConvexGroupKind::NonNegative:
      return y[0] > 0.0 ? ProjectionPiece::Identity : ProjectionPiece::Zero;
    case ConvexGroupKind::Box:
      if (y[0] >= group.bound) return ProjectionPiece::BoxUpper;
      if (y[0] <= -group.bound) return ProjectionPiece::BoxLower;
      return ProjectionPiece::Identity;
    case ConvexGroupKind::Cone: {
      // The same tests, in the same arithmetic, as project_group's.
      const double mu = group.bound, n = y[0], t1 = y[1], t2 = y[2];
      const double s = std::sqrt(t1 * t1 + t2 * t2);
      if (s <= mu * n) return ProjectionPiece::Identity;
      if (mu * s <= -n) return ProjectionPiece::Zero;
      return ProjectionPiece::Sliding;
    }
  }
  return ProjectionPiece::Sliding;
}

void describe_convex_groups(std::span<const ConstraintRow> rows, std::vector<ConvexGroup>& groups) {
  groups.clear();
  const auto count = static_cast<int>(rows.size());
  for (int i = 0; i < count;) {
    const ConstraintRow& row = rows[static_cast<std::size_t>(i)];
    ConvexGroup group;
    group.row = i;
    if (row.type == RowType::Equality) {
      group.kind = ConvexGroupKind::Free;
      ++i;
    } else if (row.type == RowType::Unilateral) {
      const bool cone = i + 3 < count && rows[static_cast<std::size_t>(i) + 3].type == RowType::Bound &&
                        rows[static_cast<std::size_t>(i) + 3].normal == i;
      if (cone) {
        const ConstraintRow& bound = rows[static_cast<std::size_t>(i) + 3];
        if (bound.group_size != 2 || rows[static_cast<std::size_t>(i) + 1].type != RowType::Direction ||
            rows[static_cast<std::size_t>(i) + 2].type != RowType::Direction)
          throw Error(message("convex formulation: contact row ", i, " has a friction group of ", bound.group_size,
                              " directions; the elliptic cone takes two orthonormal tangents"));
        group.kind = ConvexGroupKind::Cone;
        group.size = 3;
        group.bound = bound.coefficient;
        group.bound_row = i + 3;
        i += 4;
      } else {
        group.kind = ConvexGroupKind::NonNegative;
        ++i;
      }
    } else if (row.type == RowType::Direction && i + 2 < count &&
               rows[static_cast<std::size_t>(i) + 2].type == RowType::Bound &&
               rows[static_cast<std::size_t>(i) + 2].normal < 0 && rows[static_cast<std::size_t>(i) + 2].group == i &&
               rows[static_cast<std::size_t>(i) + 2].group_size == 2) {
      group.kind = ConvexGroupKind::Box;
      group.bound = rows[static_cast<std::size_t>(i) + 2].coefficient;
      group.mirror_row = i + 1;
      group.bound_row = i + 2;
      i += 3;
    } else {
      throw Error(message("convex formulation: row ", i, " is not part of a group this formulation knows"));
    }
    groups.push_back(group);
  }
}

}  // namespace diffphys::solve
