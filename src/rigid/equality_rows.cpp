// rigid/equality_rows.cpp — see equality_rows.hpp for the rows and their compliance.
#include "rigid/equality_rows.hpp"

#include <algorithm>
#include <cmath>

namespace diffphys::rigid {
namespace {

const Vec3 kEqualityUnit[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// A distance row's direction when its two points coincide (|d| = 0, far from any held
// length > 0): any unit vector keeps the row finite; the spring then pushes the points apart.
const Vec3 kCoincidentDirection{1, 0, 0};

// Rows (and errors) of one equality, written through `emit(row, error)`.
template <typename Emit>
void for_each_equality_row(const Equality& equality, const State& state, Emit&& emit) {
  const auto a = static_cast<std::size_t>(equality.body_a), b = static_cast<std::size_t>(equality.body_b);
  const Vec3 offset_a = state.orientation[a].rotate(equality.anchor_a);
  const Vec3 offset_b = state.orientation[b].rotate(equality.anchor_b);
  const Vec3 point_a = state.position[a] + offset_a, point_b = state.position[b] + offset_b;
  solve::ConstraintRow row;
  row.type = solve::RowType::Equality;
  row.body_a = equality.body_a;
  row.body_b = equality.body_b;
  if (equality.type != EqualityType::Distance) {
    const Vec3 separation = point_a - point_b;
    for (int k = 0; k < 3; ++k) {
      row.linear_a = kEqualityUnit[k];
      row.angular_a = cross(offset_a, kEqualityUnit[k]);
      row.linear_b = -kEqualityUnit[k];
      row.angular_b = -cross(offset_b, kEqualityUnit[k]);
      emit(row, separation[k]);
    }
    if (equality.type == EqualityType::Weld) {
      const Vec3 error = weld_rotation_error(equality, state);
      for (int k = 0; k < 3; ++k) {
        row.linear_a = row.linear_b = Vec3{};
        row.angular_a = -kEqualityUnit[k];
        row.angular_b = kEqualityUnit[k];
        emit(row, error[k]);
      }
    }
    return;
  }
  const Vec3 d = point_b - point_a;
  const double distance = norm(d);
  const Vec3 n = distance > 0 ? d / distance : kCoincidentDirection;
  row.linear_a = -n;
  row.angular_a = -cross(offset_a, n);
  row.linear_b = n;
  row.angular_b = cross(offset_b, n);
  emit(row, distance - equality.length);
}

}  // namespace

Vec3 weld_rotation_error(const Equality& equality, const State& state) {
  const Quat& qa = state.orientation[static_cast<std::size_t>(equality.body_a)];
  const Quat& qb = state.orientation[static_cast<std::size_t>(equality.body_b)];
  return rotation_vector(qb * equality.relative.conjugate() * qa.conjugate());
}

int equality_row_count(const Model& model) {
  int count = 0;
  for (const Equality& equality : model.equalities) count += equality_constraint_count(equality.type);
  return count;
}

void append_equality_rows(const Model& model, const Params& params, const State& state, const BodyDynamics& /*bodies*/,
                          std::vector<solve::ConstraintRow>& rows) {
  for (int e = 0; e < model.equality_count(); ++e) {
    const RowCompliance compliance = equality_compliance(model, params, e);
    const double kappa = softness(model.dt, compliance).value;
    const double slope = spring_target_slope(model.dt, compliance).value;
    for_each_equality_row(model.equalities[static_cast<std::size_t>(e)], state,
                          [&](solve::ConstraintRow row, double error) {
                            row.rhs = slope * error;
                            row.softness = kappa;
                            rows.push_back(row);
                          });
  }
}

double equality_position_errors(const Model& model, const State& state, std::span<double> errors) {
  std::size_t i = 0;
  double largest = 0.0;
  for (const Equality& equality : model.equalities)
    for_each_equality_row(equality, state, [&](const solve::ConstraintRow&, double error) {
      errors[i++] = error;
      largest = std::max(largest, std::abs(error));
    });
  return largest;
}

}  // namespace diffphys::rigid
