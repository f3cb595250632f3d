// adjoint/equality_vjp.cpp — see equality_vjp.hpp. The identities of adjoint/joints_vjp.cpp:
//   (1) a world vector u = R c carried by a body moves as δu = δθ × u: ū adds θ̄ += u × ū;
//   (2) for c = x × y: x̄ = y × c̄, ȳ = c̄ × x.
// A point p + o carried by a body: its adjoint ā adds p̄ += ā and, by (1), θ̄ += o × ā.
#include "adjoint/equality_vjp.hpp"

#include "rigid/compliance.hpp"
#include "rigid/equality_rows.hpp"

namespace diffphys::adjoint {
namespace {

const Vec3 kEqualityAxis[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

void add_point_adjoint(PoseAdjoint& body, const Vec3& offset, const Vec3& point_adjoint) {
  body.position += point_adjoint;
  body.rotation += cross(offset, point_adjoint);
}

}  // namespace

void equality_rows_vjp(const Model& model, const Params& params, const State& state, int equality_index,
                       std::span<const RowAdjoint> row_adjoints, PoseAdjoint& body_a, PoseAdjoint& body_b,
                       std::span<double> param_adjoint) {
  const Equality& equality = model.equalities[static_cast<std::size_t>(equality_index)];
  const auto a = static_cast<std::size_t>(equality.body_a), b = static_cast<std::size_t>(equality.body_b);
  const Vec3 offset_a = state.orientation[a].rotate(equality.anchor_a);
  const Vec3 offset_b = state.orientation[b].rotate(equality.anchor_b);
  const Vec3 point_a = state.position[a] + offset_a, point_b = state.position[b] + offset_b;
  const rigid::RowCompliance compliance = rigid::equality_compliance(model, params, equality_index);
  const rigid::Softness kappa = rigid::softness(model.dt, compliance);
  const rigid::TargetSlope slope = rigid::spring_target_slope(model.dt, compliance);
  // rhs = s φ and softness κ: s̄ = Σ rhs̄ φ, φ̄ = s rhs̄, κ̄ = Σ softness̄; then τ̄, ζ̄ by the chain rule.
  double slope_adjoint = 0.0, softness_adjoint = 0.0;
  Vec3 offset_a_adjoint, offset_b_adjoint;
  if (equality.type != EqualityType::Distance) {
    // angular_a = o_a × e_k, angular_b = −o_b × e_k; φ = (p_a + o_a) − (p_b + o_b).
    const Vec3 separation = point_a - point_b;
    Vec3 separation_adjoint;
    for (int k = 0; k < 3; ++k) {
      const RowAdjoint& row = row_adjoints[static_cast<std::size_t>(k)];
      offset_a_adjoint += cross(kEqualityAxis[k], row.angular_a);
      offset_b_adjoint -= cross(kEqualityAxis[k], row.angular_b);
      slope_adjoint += row.rhs * separation[k];
      softness_adjoint += row.softness;
      separation_adjoint[k] = slope.value * row.rhs;
    }
    add_point_adjoint(body_a, offset_a, separation_adjoint);
    add_point_adjoint(body_b, offset_b, -separation_adjoint);
    if (equality.type == EqualityType::Weld) {
      // Rows 3–5: constant J (∓e_k), φ = log(q_b relativeᵀ q_aᵀ).
      const Vec3 error = rigid::weld_rotation_error(equality, state);
      Vec3 error_adjoint;
      for (int k = 0; k < 3; ++k) {
        const RowAdjoint& row = row_adjoints[static_cast<std::size_t>(3 + k)];
        slope_adjoint += row.rhs * error[k];
        softness_adjoint += row.softness;
        error_adjoint[k] = slope.value * row.rhs;
      }
      relative_rotation_vector_vjp(error, error_adjoint, body_a, body_b);
    }
  } else {
    // linear_a = −n, angular_a = −o_a × n, linear_b = n, angular_b = o_b × n; φ = |d| − L.
    const RowAdjoint& row = row_adjoints[0];
    const Vec3 d = point_b - point_a;
    const double distance = norm(d);
    slope_adjoint += row.rhs * (distance - equality.length);
    softness_adjoint += row.softness;
    if (distance > 0) {
      const Vec3 n = d / distance;
      offset_a_adjoint -= cross(n, row.angular_a);
      offset_b_adjoint += cross(n, row.angular_b);
      const Vec3 direction_adjoint =
          row.linear_b - row.linear_a - cross(row.angular_a, offset_a) + cross(row.angular_b, offset_b);
      // n = d/|d|: d̄ = (n̄ − n (n·n̄))/|d|; φ = |d| − L: d̄ += φ̄ n.
      const Vec3 d_adjoint = (direction_adjoint - n * dot(n, direction_adjoint)) / distance + n * (slope.value * row.rhs);
      add_point_adjoint(body_b, offset_b, d_adjoint);
      add_point_adjoint(body_a, offset_a, -d_adjoint);
    }
  }
  body_a.rotation += cross(offset_a, offset_a_adjoint);
  body_b.rotation += cross(offset_b, offset_b_adjoint);
  const auto e = static_cast<std::size_t>(equality_index);
  const auto time_constant = static_cast<std::size_t>(model.layout.equality_time_constant[e]);
  const auto damping_ratio = static_cast<std::size_t>(model.layout.equality_damping_ratio[e]);
  param_adjoint[time_constant] += slope_adjoint * slope.d_time_constant + softness_adjoint * kappa.d_time_constant;
  param_adjoint[damping_ratio] += slope_adjoint * slope.d_damping_ratio + softness_adjoint * kappa.d_damping_ratio;
}

}  // namespace diffphys::adjoint
