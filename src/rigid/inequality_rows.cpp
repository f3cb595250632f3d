// rigid/inequality_rows.cpp — see inequality_rows.hpp.
#include "rigid/inequality_rows.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "rigid/compliance.hpp"
#include "rigid/joints.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::rigid {

using solve::ConstraintRow;
using solve::RowType;

namespace {

ConstraintRow negated(ConstraintRow row) {
  row.linear_a = -row.linear_a;
  row.angular_a = -row.angular_a;
  row.linear_b = -row.linear_b;
  row.angular_b = -row.angular_b;
  return row;
}

// Row for the relative velocity of body a against body b at world point p along direction d.
ConstraintRow point_row(int body_a, int body_b, const Vec3& offset_a, const Vec3& offset_b, const Vec3& direction) {
  ConstraintRow row;
  row.body_a = body_a;
  row.body_b = body_b;
  row.linear_a = direction;
  row.angular_a = cross(offset_a, direction);
  row.linear_b = -direction;
  row.angular_b = -cross(offset_b, direction);
  return row;
}

}  // namespace

double gap_target(double gap, double dt, const SolverSettings& solver) {
  if (gap >= 0) return -gap / dt;
  return solver.contact_erp * std::max(0.0, -gap - solver.penetration_slop) / dt;
}

DirectionWeights friction_direction(const SolverSettings& solver, int k) {
  if (solver.formulation == Formulation::Convex) return k == 0 ? DirectionWeights{1.0, 0.0} : DirectionWeights{0.0, 1.0};
  const double sector = 2.0 * std::numbers::pi / solver.friction_directions;
  return {std::cos(k * sector), std::sin(k * sector)};
}

FrictionTangents friction_tangents(const SolverSettings& solver, const Vec3& normal, int body_a, int body_b,
                                   const Vec3& offset_a, const Vec3& offset_b, std::span<const double> free_velocity) {
  FrictionTangents axes;
  const auto velocity = [&](int body, int part) { return solve::read_vec3(free_velocity, 6 * body + part); };
  axes.relative_free_velocity = velocity(body_a, 0) + cross(velocity(body_a, 3), offset_a) - velocity(body_b, 0) -
                                cross(velocity(body_b, 3), offset_b);
  const Vec3 slip = axes.relative_free_velocity - normal * dot(normal, axes.relative_free_velocity);
  axes.slip_speed = norm(slip);
  axes.slip_aligned = solver.slip_aligned_friction && solver.formulation == Formulation::Complementarity &&
                      axes.slip_speed > kSlipAlignmentSpeed;
  if (axes.slip_aligned) {
    axes.tangent1 = slip / axes.slip_speed;
    axes.tangent2 = cross(normal, axes.tangent1);
  } else {
    orthonormal_basis(normal, axes.tangent1, axes.tangent2);
  }
  return axes;
}

void append_limit_rows(const Model& model, const Params& params, const State& state, const BodyDynamics& bodies,
                       std::vector<ConstraintRow>& rows, std::vector<LimitRowSource>& sources) {
  sources.clear();
  const double h = model.dt;
  const bool convex = model.solver.formulation == Formulation::Convex;
  const auto target = [&](double gap) {
    return convex ? compliant_gap_target(gap, h, row_compliance(model, params, RowClass::Limit), model.solver.penetration_slop).value
                  : gap_target(gap, h, model.solver);
  };
  for (int j = 0; j < model.joint_count(); ++j) {
    const Joint& joint = model.joints[static_cast<std::size_t>(j)];
    if (!joint.has_limits) continue;
    for (int dof = 0; dof < joint_dof_count(joint.type); ++dof) {
      const ConstraintRow row = coordinate_row(model, state, bodies, j, dof);
      const double position = coordinate_value(model, state, bodies, j, dof);
      // Within reach: the bound could be crossed this step (twice the current rate, plus a
      // small band so that a resting limit stays in the problem).
      const double reach = 2.0 * std::abs(coordinate_rate(row, state)) * h + 1e-2;
      const double lower_gap = position - joint.lower_limit;
      const double upper_gap = joint.upper_limit - position;
      if (lower_gap < reach) {
        ConstraintRow lower = row;
        lower.type = RowType::Unilateral;
        lower.rhs = target(lower_gap);
        rows.push_back(lower);
        sources.push_back({j, dof, false});
      }
      if (upper_gap < reach) {
        ConstraintRow upper = negated(row);
        upper.type = RowType::Unilateral;
        upper.rhs = target(upper_gap);
        rows.push_back(upper);
        sources.push_back({j, dof, true});
      }
    }
  }
}

void append_servo_rows(const Model& model, const Params& params, const State& state,
                       std::span<const double> controls, const BodyDynamics& bodies,
                       std::vector<ConstraintRow>& rows) {
  const ParamLayout& layout = model.layout;
  for (int a = 0; a < model.actuator_count(); ++a) {
    const Actuator& actuator = model.actuators[static_cast<std::size_t>(a)];
    if (actuator.type != ActuatorType::Servo) continue;
    const auto i = static_cast<std::size_t>(a);
    const double gain = params.at(layout.actuator_gain[i]);
    const double max_torque = params.at(layout.actuator_max_torque[i]);
    const double max_velocity = params.at(layout.actuator_max_velocity[i]);
    const double position = coordinate_value(model, state, bodies, actuator.joint, actuator.dof);
    const double target_rate = std::clamp(gain * (controls[i] - position), -max_velocity, max_velocity);
    const ConstraintRow row = coordinate_row(model, state, bodies, actuator.joint, actuator.dof);
    const int first = static_cast<int>(rows.size());
    ConstraintRow positive = row;
    positive.type = RowType::Direction;
    positive.rhs = target_rate;
    positive.group = first + 2;
    ConstraintRow negative = negated(row);
    negative.type = RowType::Direction;
    negative.rhs = -target_rate;
    negative.group = first + 2;
    ConstraintRow bound;
    bound.type = RowType::Bound;
    bound.group = first;
    bound.group_size = 2;
    bound.normal = -1;
    bound.coefficient = max_torque * model.dt;
    bound.rhs = -max_torque * model.dt;
    rows.push_back(positive);
    rows.push_back(negative);
    rows.push_back(bound);
  }
}

void append_contact_rows(const Model& model, const Params& params, const State& state,
                         std::span<const Contact> contacts, std::span<const double> free_velocity,
                         std::vector<ConstraintRow>& rows, ImpactRecord& impacts) {
  const ParamLayout& layout = model.layout;
  const SolverSettings& solver = model.solver;
  const double h = model.dt;
  const int directions = friction_row_count(solver);
  const bool convex = solver.formulation == Formulation::Convex;
  impacts.contact_time.assign(contacts.size(), -1.0);
  impacts.contact_closing.assign(contacts.size(), 0);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const Contact& contact = contacts[c];
    const auto a = static_cast<std::size_t>(contact.body_a), b = static_cast<std::size_t>(contact.body_b);
    // ContactPoint::Surfaces pushes each body at its own surface point, the midpoint ± gap/2
    // along n: on an open contact that carries an impulse (within the margin, speculative, or
    // the convex formulation's relaxed cone, which acts up to h μ |v_t| away) or an overlapping
    // one, the midpoint lies gap/2 off the surface, and friction there has a moment about the
    // touching point (tests/contact_point_test.cpp). The normal row is the same either way.
    const ContactOffsets offsets = contact_offsets(solver, contact, state);
    const Vec3& offset_a = offsets.a;
    const Vec3& offset_b = offsets.b;
    const double friction = std::sqrt(params.at(layout.body_friction[a]) * params.at(layout.body_friction[b]));
    const double restitution = std::max(params.at(layout.body_restitution[a]), params.at(layout.body_restitution[b]));

    ConstraintRow normal_row = point_row(contact.body_a, contact.body_b, offset_a, offset_b, contact.normal);
    normal_row.type = RowType::Unilateral;
    // Approach speed at the start of the step, and where the free motion would take the gap.
    const double normal_velocity = dot(normal_row.linear_a, state.linear_velocity[a]) +
                                   dot(normal_row.angular_a, state.angular_velocity[a]) +
                                   dot(normal_row.linear_b, state.linear_velocity[b]) +
                                   dot(normal_row.angular_b, state.angular_velocity[b]);
    const double free_normal_velocity = solve::row_times_velocity(normal_row, free_velocity);
    const double compliant_target =
        convex ? compliant_gap_target(contact.gap, h, row_compliance(model, params, RowClass::Contact),
                                      solver.penetration_slop)
                     .value
               : 0.0;
    if (contact.gap > 0 && contact.gap + h * free_normal_velocity > 0) {
      // Open and not closing: the gap may close this step. The convex formulation takes the
      // same target as a closing contact without a bounce, so that nothing jumps where the
      // free motion starts to close the gap.
      normal_row.rhs = convex ? compliant_target : -contact.gap / h;
    } else {
      impacts.contact_closing[c] = 1;
      const bool bouncing = -normal_velocity > solver.restitution_threshold;
      const double correction = convex ? compliant_target : gap_target(contact.gap, h, solver);
      if (bouncing && solver.time_of_impact && restitution > 0 && free_of_joints(model, contact.body_a) &&
          free_of_joints(model, contact.body_b)) {
        // Newton's law at the time of impact inside the step (rigid/time_of_impact.hpp).
        const ImpactTarget impact = impact_target(contact.gap, -normal_velocity, -free_normal_velocity, restitution, h);
        normal_row.rhs = std::max(impact.target, correction);
        if (impact.target >= correction) impacts.contact_time[c] = impact.time;
      } else {
        // The complementarity formulation floors the target at 0 (a bounce of e = 0): a body
        // that would cross an open gap this step stops short, up to v·h above the surface,
        // and one resting less than g·h² above it stays there (docs/simulation.md). The
        // convex formulation takes the gap's own target without a bounce: its target is then
        // one smooth function of the gap, whether or not the free motion closes it.
        const double bounce = bouncing ? restitution * -normal_velocity : 0.0;
        const bool floored = !convex || (bouncing && restitution > 0);
        normal_row.rhs = floored ? std::max(bounce, correction) : correction;
      }
    }
    const int normal_index = static_cast<int>(rows.size());
    rows.push_back(normal_row);
    if (!(friction > 0)) continue;

    const FrictionTangents axes =
        friction_tangents(solver, contact.normal, contact.body_a, contact.body_b, offset_a, offset_b, free_velocity);
    const Vec3 &tangent1 = axes.tangent1, &tangent2 = axes.tangent2;
    const int first_direction = normal_index + 1;
    for (int k = 0; k < directions; ++k) {
      const DirectionWeights weights = friction_direction(solver, k);
      const Vec3 direction = tangent1 * weights.tangent1 + tangent2 * weights.tangent2;
      ConstraintRow row = point_row(contact.body_a, contact.body_b, offset_a, offset_b, direction);
      row.type = RowType::Direction;
      row.group = first_direction + directions;
      rows.push_back(row);
    }
    ConstraintRow bound;
    bound.type = RowType::Bound;
    bound.group = first_direction;
    bound.group_size = directions;
    bound.normal = normal_index;
    bound.coefficient = friction;
    rows.push_back(bound);
  }
}

}  // namespace diffphys::rigid
