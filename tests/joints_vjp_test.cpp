// tests/joints_vjp_test.cpp — the joint stage's VJPs (adjoint/joints_vjp.hpp) against central
// finite differences of the forward functions (rigid/joints.hpp) and against forward-mode
// dual numbers, for every joint type and every degree of freedom.
//
// Scenes: two bodies joined by one joint (the parent is a dynamic body or the world), built
// at a random pose with random anchor and axes, then moved along the joint's coordinates
// (on the manifold) and, in the off-manifold cases, given a random extra child displacement
// so that errors and coordinates are differentiated away from φ = 0.
//
// Perturbations use the engine's convention: p' = p + δp, q' = exp(δθ) ⊗ q with δθ a world
// rotation vector; a gradient is laid out as [p̄_parent, θ̄_parent, p̄_child, θ̄_child].
#include "adjoint/joints_vjp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "math/dual.hpp"
#include "math/rotation.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/joints.hpp"
#include "test_scenes.hpp"

namespace diffphys::adjoint {
namespace {

using Gradient = std::array<double, 12>;

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-6;

// ---------------------------------------------------------------------------------------
// Scenes

struct JointCase {
  JointType type;
  bool parent_is_world;
  bool off_manifold;
  unsigned seed;
  bool moved_along_coordinates = true;  // false: the coordinates stay at their rest value 0
};

std::string describe(const JointCase& c) {
  return std::string(type_name(c.type)) + (c.parent_is_world ? " (world parent)" : "") +
         (c.off_manifold ? " off the manifold" : " on the manifold") + " seed " + std::to_string(c.seed);
}

Vec3 random_vector(std::mt19937& random, double scale) {
  std::normal_distribution<double> normal;
  return Vec3{normal(random), normal(random), normal(random)} * scale;
}

Vec3 random_direction(std::mt19937& random) {
  return normalized(random_vector(random, 1.0));
}

Quat random_orientation(std::mt19937& random) {
  std::uniform_real_distribution<double> angle(-3.0, 3.0);
  return Quat::from_axis_angle(random_direction(random), angle(random));
}

// Rotates a body about the world point `centre` by `turn`.
void turn_body_about(State& state, int body, const Vec3& centre, const Quat& turn) {
  const auto b = static_cast<std::size_t>(body);
  state.position[b] = centre + turn.rotate(state.position[b] - centre);
  state.orientation[b] = (turn * state.orientation[b]).normalized();
}

struct JointScene {
  Scene scene;
  int parent = 0, child = 0;
};

JointScene build_joint_scene(const JointCase& c) {
  std::mt19937 random(c.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  ModelBuilder builder;
  if (!c.parent_is_world) {
    BodySpec parent = testing::sphere_body("parent", random_vector(random, 0.5), 0.2, 1.3);
    parent.orientation = random_orientation(random);
    builder.add_body(parent);
  }
  BodySpec child = testing::sphere_body("child", random_vector(random, 0.5) + Vec3{0, 0, 1}, 0.15, 0.7);
  child.orientation = random_orientation(random);
  builder.add_body(child);
  JointSpec joint;
  joint.name = "joint";
  joint.type = c.type;
  joint.parent = c.parent_is_world ? "world" : "parent";
  joint.child = "child";
  joint.anchor = random_vector(random, 0.4) + Vec3{0, 0, 0.5};
  joint.axis = random_direction(random);
  joint.axis2 = normalized(cross(joint.axis, random_direction(random)));
  builder.add_joint(joint);

  JointScene result{builder.build(), 0, 0};
  const Model& model = result.scene.model;
  const Joint& built = model.joints[0];
  result.parent = built.parent;
  result.child = built.child;
  State& state = result.scene.state;
  const auto a = static_cast<std::size_t>(built.parent), b = static_cast<std::size_t>(built.child);

  // Move along the joint's coordinates: the joint stays satisfied, the coordinates leave 0.
  const Vec3 anchor = state.position[a] + state.orientation[a].rotate(built.anchor_parent);
  const Vec3 axis = state.orientation[a].rotate(built.axis_parent);
  switch (c.moved_along_coordinates ? c.type : JointType::Fixed) {
    case JointType::Revolute:
      turn_body_about(state, built.child, anchor, Quat::from_axis_angle(axis, 2.0 * uniform(random)));
      break;
    case JointType::Prismatic:
      state.position[b] += axis * (0.5 * uniform(random));
      break;
    case JointType::Ball:
      turn_body_about(state, built.child, anchor,
                      Quat::from_rotation_vector(random_direction(random) * 2.0 * uniform(random)));
      break;
    case JointType::Universal: {
      // The child turns about its own axis 2, then both turn about the parent's axis 1.
      const Vec3 axis2 = state.orientation[b].rotate(built.axis2_child);
      turn_body_about(state, built.child, anchor, Quat::from_axis_angle(axis2, 1.5 * uniform(random)));
      turn_body_about(state, built.child, anchor, Quat::from_axis_angle(axis, 1.5 * uniform(random)));
      break;
    }
    case JointType::Planar: {
      // Along both in-plane directions, then a turn about the normal through the moved anchor.
      const Vec3 shift = state.orientation[a].rotate(built.axis2_parent) * (0.5 * uniform(random)) +
                         state.orientation[a].rotate(built.axis3_parent) * (0.5 * uniform(random));
      state.position[b] += shift;
      turn_body_about(state, built.child, anchor + shift, Quat::from_axis_angle(axis, 2.0 * uniform(random)));
      break;
    }
    case JointType::Fixed:
      break;
  }
  if (c.off_manifold) {
    state.position[b] += random_vector(random, 0.05);
    state.orientation[b] = (Quat::from_rotation_vector(random_vector(random, 0.1)) * state.orientation[b]).normalized();
  }
  return result;
}

std::vector<JointCase> all_cases() {
  std::vector<JointCase> cases;
  unsigned seed = 1;
  for (JointType type : {JointType::Fixed, JointType::Revolute, JointType::Prismatic, JointType::Ball,
                         JointType::Universal, JointType::Planar})
    for (bool parent_is_world : {false, true})
      for (bool off_manifold : {false, true})
        for (int repeat = 0; repeat < 3; ++repeat) cases.push_back({type, parent_is_world, off_manifold, seed++});
  return cases;
}

// ---------------------------------------------------------------------------------------
// Finite differences and comparisons

// Perturbation `index` in [0, 12) of the gradient layout, by `step`.
State perturbed(const State& state, int parent, int child, int index, double step) {
  State out = state;
  const auto body = static_cast<std::size_t>(index < 6 ? parent : child);
  const int component = index % 6;
  if (component < 3) {
    out.position[body][component] += step;
  } else {
    Vec3 rotation;
    rotation[component - 3] = step;
    out.orientation[body] = Quat::from_rotation_vector(rotation) * out.orientation[body];
  }
  return out;
}

Gradient central_differences(const JointScene& js, const std::function<double(const State&)>& scalar) {
  Gradient gradient{};
  for (int i = 0; i < 12; ++i) {
    const double plus = scalar(perturbed(js.scene.state, js.parent, js.child, i, kStep));
    const double minus = scalar(perturbed(js.scene.state, js.parent, js.child, i, -kStep));
    gradient[static_cast<std::size_t>(i)] = (plus - minus) / (2.0 * kStep);
  }
  return gradient;
}

Gradient flatten(const PoseAdjoint& parent, const PoseAdjoint& child) {
  return {parent.position.x, parent.position.y, parent.position.z, parent.rotation.x,
          parent.rotation.y, parent.rotation.z, child.position.x,  child.position.y,
          child.position.z,  child.rotation.x,  child.rotation.y,  child.rotation.z};
}

// max_i |computed_i − reference_i| / max(‖reference‖∞, 1e-2): relative to the gradient's size,
// with a floor so that an exactly-zero gradient is compared in absolute terms.
double relative_error(const Gradient& computed, const Gradient& reference) {
  double largest = 1e-2, difference = 0.0;
  for (std::size_t i = 0; i < 12; ++i) {
    if (!std::isfinite(computed[i]) || !std::isfinite(reference[i])) return INFINITY;  // max() would drop a NaN
    largest = std::max(largest, std::abs(reference[i]));
    difference = std::max(difference, std::abs(computed[i] - reference[i]));
  }
  return difference / largest;
}

std::string scientific(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3e", x);
  return text;
}

std::string show(const Gradient& g) {
  std::string text;
  for (double x : g) text += std::to_string(x) + " ";
  return text;
}

rigid::BodyDynamics dynamics_of(const Scene& scene, const State& state) {
  rigid::BodyDynamics bodies;
  rigid::compute_body_dynamics(scene.model, scene.params, state, bodies);
  return bodies;
}

std::vector<double> random_values(std::mt19937& random, int count) {
  std::normal_distribution<double> normal;
  std::vector<double> values(static_cast<std::size_t>(count));
  for (double& v : values) v = normal(random);
  return values;
}

RowAdjoint random_row_adjoint(std::mt19937& random) {
  RowAdjoint adjoint;
  adjoint.linear_a = random_vector(random, 1.0);
  adjoint.angular_a = random_vector(random, 1.0);
  adjoint.linear_b = random_vector(random, 1.0);
  adjoint.angular_b = random_vector(random, 1.0);
  return adjoint;
}

double pair(const RowAdjoint& adjoint, const solve::ConstraintRow& row) {
  return dot(adjoint.linear_a, row.linear_a) + dot(adjoint.angular_a, row.angular_a) +
         dot(adjoint.linear_b, row.linear_b) + dot(adjoint.angular_b, row.angular_b);
}

// ---------------------------------------------------------------------------------------
// Finite-difference checks, one per function

TEST(JointsVjp, RowsMatchCentralDifferences) {
  double worst = 0.0;
  for (const JointCase& c : all_cases()) {
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    std::mt19937 random(c.seed + 1000);
    const int count = joint_constraint_count(c.type);
    std::vector<RowAdjoint> adjoints;
    for (int i = 0; i < count; ++i) adjoints.push_back(random_row_adjoint(random));
    PoseAdjoint parent, child;
    joint_rows_vjp(model, js.scene.state, 0, adjoints, parent, child);
    const Gradient reference = central_differences(js, [&](const State& state) {
      std::vector<solve::ConstraintRow> rows;
      rigid::append_joint_rows(model, state, dynamics_of(js.scene, state), rows);
      double sum = 0.0;
      for (int i = 0; i < count; ++i)
        sum += pair(adjoints[static_cast<std::size_t>(i)], rows[static_cast<std::size_t>(i)]);
      return sum;
    });
    const Gradient computed = flatten(parent, child);
    const double error = relative_error(computed, reference);
    worst = std::max(worst, error);
    EXPECT_LT(error, kTolerance) << describe(c) << "\n vjp " << show(computed) << "\n fd  " << show(reference);
  }
  RecordProperty("worst_relative_error", scientific(worst));
}

TEST(JointsVjp, ErrorsMatchCentralDifferences) {
  double worst = 0.0;
  for (const JointCase& c : all_cases()) {
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    std::mt19937 random(c.seed + 2000);
    const int count = joint_constraint_count(c.type);
    const std::vector<double> adjoints = random_values(random, count);
    PoseAdjoint parent, child;
    joint_errors_vjp(model, js.scene.state, 0, adjoints, parent, child);
    const Gradient reference = central_differences(js, [&](const State& state) {
      std::vector<double> errors(static_cast<std::size_t>(count));
      rigid::joint_position_errors(model, state, dynamics_of(js.scene, state), errors);
      double sum = 0.0;
      for (std::size_t i = 0; i < errors.size(); ++i) sum += adjoints[i] * errors[i];
      return sum;
    });
    const Gradient computed = flatten(parent, child);
    const double error = relative_error(computed, reference);
    worst = std::max(worst, error);
    EXPECT_LT(error, kTolerance) << describe(c) << "\n vjp " << show(computed) << "\n fd  " << show(reference);
  }
  RecordProperty("worst_relative_error", scientific(worst));
}

TEST(JointsVjp, CoordinateRowsMatchCentralDifferences) {
  double worst = 0.0;
  for (const JointCase& c : all_cases()) {
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    std::mt19937 random(c.seed + 3000);
    for (int dof = 0; dof < joint_dof_count(c.type); ++dof) {
      const RowAdjoint adjoint = random_row_adjoint(random);
      PoseAdjoint parent, child;
      coordinate_row_vjp(model, js.scene.state, 0, dof, adjoint, parent, child);
      const Gradient reference = central_differences(js, [&](const State& state) {
        return pair(adjoint, rigid::coordinate_row(model, state, dynamics_of(js.scene, state), 0, dof));
      });
      const Gradient computed = flatten(parent, child);
      const double error = relative_error(computed, reference);
      worst = std::max(worst, error);
      EXPECT_LT(error, kTolerance) << describe(c) << " dof " << dof << "\n vjp " << show(computed) << "\n fd  "
                                   << show(reference);
    }
  }
  RecordProperty("worst_relative_error", scientific(worst));
}

TEST(JointsVjp, CoordinateValuesMatchCentralDifferences) {
  double worst = 0.0;
  for (const JointCase& c : all_cases()) {
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    std::mt19937 random(c.seed + 4000);
    for (int dof = 0; dof < joint_dof_count(c.type); ++dof) {
      const double adjoint = random_values(random, 1)[0];
      PoseAdjoint parent, child;
      coordinate_value_vjp(model, js.scene.state, 0, dof, adjoint, parent, child);
      const Gradient reference = central_differences(js, [&](const State& state) {
        return adjoint * rigid::coordinate_value(model, state, dynamics_of(js.scene, state), 0, dof);
      });
      const Gradient computed = flatten(parent, child);
      const double error = relative_error(computed, reference);
      worst = std::max(worst, error);
      EXPECT_LT(error, kTolerance) << describe(c) << " dof " << dof << "\n vjp " << show(computed) << "\n fd  "
                                   << show(reference);
    }
  }
  RecordProperty("worst_relative_error", scientific(worst));
}

// The VJPs accumulate (+=): calling twice into the same adjoints gives twice one call.
TEST(JointsVjp, AccumulatesIntoExistingAdjoints) {
  const JointScene js = build_joint_scene({JointType::Universal, false, true, 77});
  std::mt19937 random(5);
  const std::vector<double> adjoints = random_values(random, 4);
  PoseAdjoint parent_once, child_once, parent_twice, child_twice;
  joint_errors_vjp(js.scene.model, js.scene.state, 0, adjoints, parent_once, child_once);
  joint_errors_vjp(js.scene.model, js.scene.state, 0, adjoints, parent_twice, child_twice);
  joint_errors_vjp(js.scene.model, js.scene.state, 0, adjoints, parent_twice, child_twice);
  const Gradient once = flatten(parent_once, child_once), twice = flatten(parent_twice, child_twice);
  for (std::size_t i = 0; i < 12; ++i) EXPECT_NEAR(twice[i], 2.0 * once[i], 1e-14);
}

// ---------------------------------------------------------------------------------------
// Consistency of the forward rows with the errors and coordinates they differentiate: on
// the manifold a joint row is ∇φ_i and a coordinate row is ∇(coordinate), in the pose
// tangent above (J v = dφ/dt with v = (ṗ, ω)). The VJP with a unit adjoint is that gradient.

Gradient row_as_gradient(const solve::ConstraintRow& row) {
  PoseAdjoint parent{row.linear_a, row.angular_a}, child{row.linear_b, row.angular_b};
  return flatten(parent, child);
}

TEST(JointsVjp, RowsAreErrorGradientsOnTheManifold) {
  for (const JointCase& c : all_cases()) {
    if (c.off_manifold) continue;
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    std::vector<solve::ConstraintRow> rows;
    rigid::append_joint_rows(model, js.scene.state, dynamics_of(js.scene, js.scene.state), rows);
    const int count = joint_constraint_count(c.type);
    for (int i = 0; i < count; ++i) {
      std::vector<double> unit(static_cast<std::size_t>(count), 0.0);
      unit[static_cast<std::size_t>(i)] = 1.0;
      PoseAdjoint parent, child;
      joint_errors_vjp(model, js.scene.state, 0, unit, parent, child);
      const Gradient expected = row_as_gradient(rows[static_cast<std::size_t>(i)]);
      EXPECT_LT(relative_error(flatten(parent, child), expected), 1e-9) << describe(c) << " row " << i;
    }
  }
}

TEST(JointsVjp, CoordinateRowsAreValueGradientsOnTheManifold) {
  for (const JointCase& c : all_cases()) {
    // A ball's coordinate rows are the world axes, the rate of its rotation vector only at
    // rest (elsewhere dφ/dt = J_l⁻¹(φ) ω); checked at rest below.
    if (c.off_manifold || c.type == JointType::Ball) continue;
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    for (int dof = 0; dof < joint_dof_count(c.type); ++dof) {
      PoseAdjoint parent, child;
      coordinate_value_vjp(model, js.scene.state, 0, dof, 1.0, parent, child);
      const Gradient expected =
          row_as_gradient(rigid::coordinate_row(model, js.scene.state, dynamics_of(js.scene, js.scene.state), 0, dof));
      EXPECT_LT(relative_error(flatten(parent, child), expected), 1e-9) << describe(c) << " dof " << dof;
    }
  }
  for (bool parent_is_world : {false, true}) {
    const JointScene at_rest = build_joint_scene({JointType::Ball, parent_is_world, false, 99, false});
    for (int dof = 0; dof < 3; ++dof) {
      PoseAdjoint parent, child;
      coordinate_value_vjp(at_rest.scene.model, at_rest.scene.state, 0, dof, 1.0, parent, child);
      const Gradient expected = row_as_gradient(rigid::coordinate_row(
          at_rest.scene.model, at_rest.scene.state, dynamics_of(at_rest.scene, at_rest.scene.state), 0, dof));
      EXPECT_LT(relative_error(flatten(parent, child), expected), 1e-9) << "ball at rest, dof " << dof;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Dual-number cross-check: the errors and coordinate values restated on the scalar template
// from their definitions in rigid/joints.hpp, evaluated on Dual<12> with the 12 pose
// perturbations as the seeded variables (at zero). This differentiates exactly (no step),
// so it checks the VJPs independently of the finite-difference step.

using D = Dual<12>;

template <typename T>
struct PoseT {
  Vec3T<T> position;
  QuatT<T> orientation;
};

// Body pose under the dual perturbation: p + δp, exp(δθ) ⊗ q, δ = variables first..first+5.
PoseT<D> dual_pose(const State& state, int body, int first_variable) {
  const auto b = static_cast<std::size_t>(body);
  Vec3T<D> position_step, rotation_step;
  for (int k = 0; k < 3; ++k) {
    position_step[k] = D::variable(0.0, first_variable + k);
    rotation_step[k] = D::variable(0.0, first_variable + 3 + k);
  }
  return {Vec3T<D>(state.position[b]) + position_step,
          QuatT<D>::from_rotation_vector(rotation_step) * QuatT<D>(state.orientation[b])};
}

template <typename T>
Vec3T<T> rotate(const QuatT<T>& q, const Vec3& v) {
  return q.rotate(Vec3T<T>(v));
}

template <typename T>
T signed_angle_generic(const Vec3T<T>& from, const Vec3T<T>& to, const Vec3T<T>& axis) {
  using std::atan2;
  const Vec3T<T> from_planar = from - axis * dot(axis, from);
  const Vec3T<T> to_planar = to - axis * dot(axis, to);
  return atan2(dot(cross(from_planar, to_planar), axis), dot(from_planar, to_planar));
}

template <typename T>
Vec3T<T> relative_rotation_vector_generic(const Joint& joint, const PoseT<T>& a, const PoseT<T>& b) {
  return rotation_vector(b.orientation * QuatT<T>(joint.rest_relative.conjugate()) * a.orientation.conjugate());
}

// φ of one joint, in the order of for_each_joint_row.
template <typename T>
std::vector<T> joint_errors_generic(const Joint& joint, const PoseT<T>& a, const PoseT<T>& b) {
  std::vector<T> errors;
  const Vec3T<T> anchor_a = a.position + rotate(a.orientation, joint.anchor_parent);
  const Vec3T<T> anchor_b = b.position + rotate(b.orientation, joint.anchor_child);
  if (joint.type != JointType::Prismatic && joint.type != JointType::Planar)
    for (int k = 0; k < 3; ++k) errors.push_back(anchor_a[k] - anchor_b[k]);
  if (joint.type == JointType::Fixed || joint.type == JointType::Prismatic) {
    const Vec3T<T> lock = relative_rotation_vector_generic(joint, a, b);
    for (int k = 0; k < 3; ++k) errors.push_back(lock[k]);
  }
  if (joint.type == JointType::Revolute) {
    Vec3 perpendicular1, perpendicular2;
    orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
    const Vec3T<T> axis = rotate(a.orientation, joint.axis_parent);
    errors.push_back(dot(axis, rotate(b.orientation, perpendicular1)));
    errors.push_back(dot(axis, rotate(b.orientation, perpendicular2)));
  } else if (joint.type == JointType::Universal) {
    errors.push_back(dot(rotate(a.orientation, joint.axis_parent), rotate(b.orientation, joint.axis2_child)));
  } else if (joint.type == JointType::Prismatic) {
    Vec3 normal1, normal2;
    orthonormal_basis(joint.axis_parent, normal1, normal2);
    errors.push_back(dot(anchor_b - anchor_a, rotate(a.orientation, normal1)));
    errors.push_back(dot(anchor_b - anchor_a, rotate(a.orientation, normal2)));
  } else if (joint.type == JointType::Planar) {
    Vec3 perpendicular1, perpendicular2;
    orthonormal_basis(joint.axis_child, perpendicular1, perpendicular2);
    const Vec3T<T> axis = rotate(a.orientation, joint.axis_parent);
    errors.push_back(dot(anchor_b - anchor_a, axis));
    errors.push_back(dot(axis, rotate(b.orientation, perpendicular1)));
    errors.push_back(dot(axis, rotate(b.orientation, perpendicular2)));
  }
  return errors;
}

template <typename T>
T coordinate_value_generic(const Joint& joint, const PoseT<T>& a, const PoseT<T>& b, int dof) {
  using std::atan2;
  switch (joint.type) {
    case JointType::Prismatic: {
      const Vec3T<T> anchor_a = a.position + rotate(a.orientation, joint.anchor_parent);
      const Vec3T<T> anchor_b = b.position + rotate(b.orientation, joint.anchor_child);
      return dot(anchor_b - anchor_a, rotate(a.orientation, joint.axis_parent));
    }
    case JointType::Planar:
      if (dof < 2) {
        const Vec3T<T> anchor_a = a.position + rotate(a.orientation, joint.anchor_parent);
        const Vec3T<T> anchor_b = b.position + rotate(b.orientation, joint.anchor_child);
        return dot(anchor_b - anchor_a, rotate(a.orientation, dof == 0 ? joint.axis2_parent : joint.axis3_parent));
      }
      [[fallthrough]];
    case JointType::Revolute: {
      const QuatT<T> relative = a.orientation.conjugate() * b.orientation * QuatT<T>(joint.rest_relative.conjugate());
      return T(2.0) * atan2(dot(relative.vec(), Vec3T<T>(joint.axis_parent)), relative.w);
    }
    case JointType::Universal: {
      if (dof == 0) {
        const Vec3T<T> seen = a.orientation.inverse_rotate(rotate(b.orientation, joint.axis2_child));
        return signed_angle_generic(Vec3T<T>(joint.axis2_parent), seen, Vec3T<T>(joint.axis_parent));
      }
      const Vec3T<T> seen = b.orientation.inverse_rotate(rotate(a.orientation, joint.axis_parent));
      return -signed_angle_generic(Vec3T<T>(joint.axis_child), seen, Vec3T<T>(joint.axis2_child));
    }
    case JointType::Ball:
      return relative_rotation_vector_generic(joint, a, b)[dof];
    case JointType::Fixed:
      return T(0.0);
  }
  return T(0.0);
}

Gradient gradient_of(const D& value) {
  Gradient g{};
  for (std::size_t i = 0; i < 12; ++i) g[i] = value.derivative[i];
  return g;
}

TEST(JointsVjp, ErrorsAndCoordinateValuesMatchDualNumbers) {
  double worst = 0.0;
  for (const JointCase& c : all_cases()) {
    const JointScene js = build_joint_scene(c);
    const Model& model = js.scene.model;
    const State& state = js.scene.state;
    const Joint& joint = model.joints[0];
    const PoseT<D> a = dual_pose(state, js.parent, 0), b = dual_pose(state, js.child, 6);

    // The restatement computes what the forward computes.
    const std::vector<D> dual_errors = joint_errors_generic(joint, a, b);
    std::vector<double> errors(dual_errors.size());
    rigid::joint_position_errors(model, state, dynamics_of(js.scene, state), errors);
    ASSERT_EQ(static_cast<int>(dual_errors.size()), joint_constraint_count(c.type));
    for (std::size_t i = 0; i < errors.size(); ++i) ASSERT_NEAR(dual_errors[i].value, errors[i], 1e-12) << describe(c);

    std::mt19937 random(c.seed + 5000);
    const std::vector<double> adjoints = random_values(random, joint_constraint_count(c.type));
    D weighted_errors(0.0);
    for (std::size_t i = 0; i < adjoints.size(); ++i) weighted_errors += dual_errors[i] * adjoints[i];
    PoseAdjoint parent, child;
    joint_errors_vjp(model, state, 0, adjoints, parent, child);
    const double errors_error = relative_error(flatten(parent, child), gradient_of(weighted_errors));
    worst = std::max(worst, errors_error);
    EXPECT_LT(errors_error, 1e-12) << describe(c);

    for (int dof = 0; dof < joint_dof_count(c.type); ++dof) {
      const D value = coordinate_value_generic(joint, a, b, dof);
      ASSERT_NEAR(value.value, rigid::coordinate_value(model, state, dynamics_of(js.scene, state), 0, dof), 1e-12)
          << describe(c) << " dof " << dof;
      PoseAdjoint value_parent, value_child;
      coordinate_value_vjp(model, state, 0, dof, 1.0, value_parent, value_child);
      const double value_error = relative_error(flatten(value_parent, value_child), gradient_of(value));
      worst = std::max(worst, value_error);
      EXPECT_LT(value_error, 1e-12) << describe(c) << " dof " << dof;
    }
  }
  RecordProperty("worst_relative_error", scientific(worst));
}

// The log map's Jacobian switches from its closed form to a series at |φ| = 0.01 and has
// its other delicate end at |φ| → π: rotation-lock errors (fixed) and ball coordinates at
// relative rotations of chosen sizes on both sides of those points, against dual numbers.
// With the world as parent and no turn, the test makes φ exactly 0 (the series branch at 0).
TEST(JointsVjp, RotationVectorAdjointAcrossItsRange) {
  for (JointType type : {JointType::Fixed, JointType::Ball})
    for (bool parent_is_world : {false, true})
      for (double angle : {0.0, 1e-9, 1e-4, 0.0099, 0.0101, 0.5, 2.0, 3.1, 3.14}) {
        JointScene js = build_joint_scene({type, parent_is_world, false, 123, false});
        State& state = js.scene.state;
        const Joint& joint = js.scene.model.joints[0];
        const auto a = static_cast<std::size_t>(joint.parent);
        const Vec3 anchor = state.position[a] + state.orientation[a].rotate(joint.anchor_parent);
        if (angle != 0.0) {
          turn_body_about(state, joint.child, anchor, Quat::from_axis_angle(normalized(Vec3{0.3, -0.5, 0.8}), angle));
        } else if (parent_is_world) {
          // Exactly at rest: q_b = q_rest = identity, so E = identity to the last bit.
          js.scene.model.joints[0].rest_relative = Quat::identity();
          state.orientation[static_cast<std::size_t>(joint.child)] = Quat::identity();
        }
        const PoseT<D> pose_a = dual_pose(state, js.parent, 0), pose_b = dual_pose(state, js.child, 6);
        std::mt19937 random(static_cast<unsigned>(angle * 1000) + 7);
        if (type == JointType::Fixed) {
          const std::vector<double> adjoints = random_values(random, 6);
          const std::vector<D> errors = joint_errors_generic(joint, pose_a, pose_b);
          if (parent_is_world && angle == 0.0) {
            EXPECT_EQ(squared_norm(Vec3{errors[3].value, errors[4].value, errors[5].value}), 0.0);
          }
          D weighted(0.0);
          for (std::size_t i = 0; i < 6; ++i) weighted += errors[i] * adjoints[i];
          PoseAdjoint parent, child;
          joint_errors_vjp(js.scene.model, state, 0, adjoints, parent, child);
          EXPECT_LT(relative_error(flatten(parent, child), gradient_of(weighted)), 1e-12) << "fixed, angle " << angle;
        } else {
          for (int dof = 0; dof < 3; ++dof) {
            PoseAdjoint parent, child;
            coordinate_value_vjp(js.scene.model, state, 0, dof, 1.0, parent, child);
            EXPECT_LT(relative_error(flatten(parent, child),
                                     gradient_of(coordinate_value_generic(joint, pose_a, pose_b, dof))),
                      1e-12)
                << "ball, angle " << angle << " dof " << dof;
          }
        }
      }
}

}  // namespace
}  // namespace diffphys::adjoint
