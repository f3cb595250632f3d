// tests/contact_geometry_test.cpp — tests of adjoint/contact_geometry.cpp and of the dual
// instantiation of collision/narrow_phase.cpp.
//
// For every pair type (and the distinct cases within it: sphere–box face, edge, vertex and
// inside; capsule lying and tilted; box–box face manifolds with and without reduction and
// edge–edge; ...) at random poses, in both argument orders: the dual Jacobian of each
// contact's position, normal and gap against central finite differences (step 1e-6) of the
// double narrow phase run on perturbed body poses and sizes through collision::pose_shape,
// picking the contact with the same feature. A pose is used only where the geometry is
// smooth around it: the contact set (features) is the same under every perturbation of
// ±1e-6 and ±1e-5, and one-sided differences of step 1e-5 agree with each other (no kink,
// e.g. a clamp switching without a feature change). Every case must yield its quota of
// such poses; the generators aim for them, so few are skipped.
#include "adjoint/contact_geometry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "collision/detect_contacts.hpp"
#include "collision/narrow_phase.hpp"
#include "diffphys/model_builder.hpp"
#include "math/rotation.hpp"

namespace diffphys::adjoint {
namespace {

using collision::ContactPoint;
using collision::PosedShape;

constexpr int kInputs = kContactGeometryInputs;
constexpr double kDifferenceStep = 1e-6;    // central differences
constexpr double kSmoothnessStep = 1e-5;    // contact-set and kink checks
constexpr double kRelativeTolerance = 1e-6;  // dual vs finite differences
constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------------------
// Random geometry.

using Rng = std::mt19937_64;

double uniform(Rng& rng, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(rng);
}
int uniform_int(Rng& rng, int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(rng);
}
double random_sign(Rng& rng) { return uniform_int(rng, 0, 1) == 0 ? -1.0 : 1.0; }
Quat random_rotation(Rng& rng) {
  std::normal_distribution<double> gaussian;
  return Quat{gaussian(rng), gaussian(rng), gaussian(rng), gaussian(rng)}.normalized();
}
Vec3 random_vector(Rng& rng, double low, double high) {
  return {uniform(rng, low, high), uniform(rng, low, high), uniform(rng, low, high)};
}
Vec3 random_direction(Rng& rng) { return random_rotation(rng).rotate({0, 0, 1}); }
// A unit vector perpendicular to the unit `direction`, at a random angle about it.
Vec3 random_perpendicular(Rng& rng, const Vec3& direction) {
  Vec3 t1, t2;
  orthonormal_basis(direction, t1, t2);
  const double angle = uniform(rng, 0.0, 2.0 * kPi);
  return t1 * std::cos(angle) + t2 * std::sin(angle);
}
// The rotation taking +z onto the unit `direction`, then turned by a random angle about it.
Quat rotation_with_z_along(Rng& rng, const Vec3& direction) {
  const Vec3 z{0, 0, 1};
  const double c = dot(z, direction);
  Quat onto = c < -1.0 + 1e-12 ? Quat{0, 1, 0, 0}
                               : Quat{1.0 + c, cross(z, direction).x, cross(z, direction).y,
                                      cross(z, direction).z}
                                     .normalized();
  return Quat::from_axis_angle(direction, uniform(rng, 0.0, 2.0 * kPi)) * onto;
}
Vec3 column(const Quat& rotation, int axis) {
  Vec3 unit;
  unit[axis] = 1.0;
  return rotation.rotate(unit);
}
// The rotation whose matrix has the right-handed orthonormal columns x, y, z.
Quat rotation_with_columns(const Vec3& x, const Vec3& y, const Vec3& z) {
  Mat3 columns;
  for (int i = 0; i < 3; ++i) {
    columns(i, 0) = x[i];
    columns(i, 1) = y[i];
    columns(i, 2) = z[i];
  }
  return quat_from_matrix(columns).normalized();
}

// ---------------------------------------------------------------------------------------
// Scenes: each shape on its own body, at a random offset and orientation in that body and
// with the body's centre of mass elsewhere, so that the local pose is exercised.

// A shape's world pose and sizes (as PosedShape::size). A plane passes through `position`
// with normal orientation·z.
struct WorldShape {
  ShapeType type = ShapeType::Sphere;
  Vec3 position;
  Quat orientation;
  Vec3 size;
  std::shared_ptr<const ConvexMesh> mesh;  // convex mesh: the hull (size.x is its scale)
};
WorldShape sphere(const Vec3& center, double radius) {
  return {ShapeType::Sphere, center, Quat::identity(), {radius, 0, 0}, nullptr};
}
WorldShape box(const Vec3& center, const Quat& orientation, const Vec3& half_extents) {
  return {ShapeType::Box, center, orientation, half_extents, nullptr};
}
// A capsule whose segment runs along `axis` through `center`.
WorldShape capsule(Rng& rng, const Vec3& center, const Vec3& axis, double radius,
                   double half_length) {
  return {ShapeType::Capsule, center, rotation_with_z_along(rng, normalized(axis)),
          {radius, half_length, 0}, nullptr};
}
WorldShape plane(Rng& rng, const Vec3& point, const Vec3& normal) {
  return {ShapeType::Plane, point, rotation_with_z_along(rng, normalized(normal)), {}, nullptr};
}

struct PairScene {
  Scene scene;
  int shape_a = -1, shape_b = -1;
};

PairScene build_scene(Rng& rng, const WorldShape& first, const WorldShape& second) {
  ModelBuilder builder;
  const WorldShape* shapes[2] = {&first, &second};
  const char* names[2] = {"first", "second"};
  for (int i = 0; i < 2; ++i) {
    const WorldShape& world = *shapes[i];
    if (world.type == ShapeType::Plane) {
      const Vec3 normal = world.orientation.rotate({0, 0, 1});
      builder.add_ground_plane(normal, dot(normal, world.position));
      continue;
    }
    ShapeSpec spec;
    spec.type = world.type;
    spec.position = random_vector(rng, -0.2, 0.2);
    spec.orientation = random_rotation(rng);
    spec.radius = world.size.x;
    spec.half_extents = world.size;
    spec.half_length = world.size.y;
    spec.mesh = world.mesh;
    spec.scale = world.size.x;
    BodySpec body;
    body.name = names[i];
    body.orientation = world.orientation * spec.orientation.conjugate();
    body.position = world.position - body.orientation.rotate(spec.position);
    body.center_of_mass = random_vector(rng, -0.1, 0.1);
    body.shapes.push_back(spec);
    builder.add_body(body);
  }
  PairScene pair{builder.build(), -1, -1};
  const Model& model = pair.scene.model;
  for (int i = 0; i < 2; ++i) {
    int index = -1;
    for (int s = 0; s < model.shape_count(); ++s) {
      const Shape& shape = model.shapes[static_cast<std::size_t>(s)];
      if (shapes[i]->type == ShapeType::Plane ? shape.type == ShapeType::Plane
                                              : shape.body == model.body_index(names[i]))
        index = s;
    }
    (i == 0 ? pair.shape_a : pair.shape_b) = index;
  }
  return pair;
}

// ---------------------------------------------------------------------------------------
// The double narrow phase on perturbed inputs.

// Moves input `input` (contact_geometry.hpp's order) by `step`; false for a size entry the
// shape does not have.
bool perturb(const Model& model, int shape_a, int shape_b, int input, double step, State& state,
             Params& params) {
  const bool of_a = input < kBodyBTranslationInput ||
                    (input >= kShapeASizeInput && input < kShapeBSizeInput);
  const int shape_index = of_a ? shape_a : shape_b;
  const Shape& shape = model.shapes[static_cast<std::size_t>(shape_index)];
  const auto body = static_cast<std::size_t>(shape.body);
  if (input < kShapeASizeInput) {
    const int within = input % 6;
    Vec3 delta;
    delta[within % 3] = step;
    if (within < 3) {
      state.position[body] += delta;
    } else {
      state.orientation[body] = Quat::from_rotation_vector(delta) * state.orientation[body];
    }
    return true;
  }
  const int entry = (input - kShapeASizeInput) % 3;
  if (entry >= shape_size_count(shape.type)) return false;
  params.values[static_cast<std::size_t>(
      model.layout.shape_size[static_cast<std::size_t>(shape_index)] + entry)] += step;
  return true;
}

std::vector<ContactPoint> contacts_of(const Model& model, const Params& params, const State& state,
                                      int shape_a, int shape_b) {
  ContactPoint out[collision::kMaxPairContacts];
  const int count = collision::collide(collision::pose_shape(model, params, state, shape_a),
                                       collision::pose_shape(model, params, state, shape_b),
                                       model.solver.contact_margin, out,
                                       collision::pair_contact_limit(model.solver));
  return std::vector<ContactPoint>(out, out + count);
}

std::vector<int> sorted_features(const std::vector<ContactPoint>& contacts) {
  std::vector<int> features;
  for (const ContactPoint& contact : contacts) features.push_back(contact.feature);
  std::sort(features.begin(), features.end());
  return features;
}

// The 7 numbers differentiated: position, normal, gap.
using Geometry = std::array<double, 7>;
Geometry geometry_of(const ContactPoint& contact) {
  return {contact.position.x, contact.position.y, contact.position.z, contact.normal.x,
          contact.normal.y,   contact.normal.z,   contact.gap};
}

// ---------------------------------------------------------------------------------------
// The check.

struct CaseResult {
  int accepted = 0;
  int skipped = 0;
  double worst_relative_error = 0.0;
};

// Checks every contact of (shape_a, shape_b) at the scene's state when the pose is smooth
// (see the file comment) and `intended` accepts the contact set. Returns nullptr then, and
// otherwise (checking nothing) why the pose was skipped.
const char* check_pair(const PairScene& pair, int shape_a, int shape_b,
                const std::function<bool(const std::vector<ContactPoint>&)>& intended,
                double& worst_relative_error) {
  const Model& model = pair.scene.model;
  const Params& params = pair.scene.params;
  const State& state = pair.scene.state;
  const std::vector<ContactPoint> base = contacts_of(model, params, state, shape_a, shape_b);
  if (base.empty() || !intended(base)) return "not the intended contact set";
  const std::vector<int> base_features = sorted_features(base);

  // perturbed[input][k]: the contacts at steps −h, +h, −H, +H (h = difference step, H =
  // smoothness step); empty vector for an unused size entry.
  std::vector<std::array<std::vector<ContactPoint>, 4>> perturbed(kInputs);
  std::vector<bool> used(kInputs, true);
  const double steps[4] = {-kDifferenceStep, kDifferenceStep, -kSmoothnessStep, kSmoothnessStep};
  for (int input = 0; input < kInputs; ++input) {
    for (int k = 0; k < 4; ++k) {
      State moved_state = state;
      Params moved_params = params;
      if (!perturb(model, shape_a, shape_b, input, steps[k], moved_state, moved_params)) {
        used[static_cast<std::size_t>(input)] = false;
        break;
      }
      perturbed[static_cast<std::size_t>(input)][static_cast<std::size_t>(k)] =
          contacts_of(model, moved_params, moved_state, shape_a, shape_b);
      if (sorted_features(perturbed[static_cast<std::size_t>(input)][static_cast<std::size_t>(k)]) !=
          base_features)
        return "the contact set switches within the smoothness step";
    }
  }
  const auto with_feature = [](const std::vector<ContactPoint>& contacts, int feature) {
    for (const ContactPoint& contact : contacts)
      if (contact.feature == feature) return geometry_of(contact);
    ADD_FAILURE() << "feature " << feature << " vanished";
    return Geometry{};
  };

  // Finite differences first, so that a kinked pose is skipped before anything is checked.
  struct Differences {
    double central[kInputs][7] = {};
  };
  std::vector<Differences> differences(base.size());
  for (std::size_t c = 0; c < base.size(); ++c) {
    const Geometry at_base = geometry_of(base[c]);
    for (int input = 0; input < kInputs; ++input) {
      if (!used[static_cast<std::size_t>(input)]) continue;
      const auto& runs = perturbed[static_cast<std::size_t>(input)];
      const Geometry minus = with_feature(runs[0], base[c].feature);
      const Geometry plus = with_feature(runs[1], base[c].feature);
      const Geometry far_minus = with_feature(runs[2], base[c].feature);
      const Geometry far_plus = with_feature(runs[3], base[c].feature);
      for (int q = 0; q < 7; ++q) {
        const double forward = (far_plus[q] - at_base[q]) / kSmoothnessStep;
        const double backward = (at_base[q] - far_minus[q]) / kSmoothnessStep;
        if (std::abs(forward - backward) > 1e-2 * std::max(1.0, std::abs(forward)))
          return "a kink within the smoothness step";
        differences[c].central[input][q] = (plus[q] - minus[q]) / (2.0 * kDifferenceStep);
      }
    }
  }

  for (std::size_t c = 0; c < base.size(); ++c) {
    SCOPED_TRACE("feature " + std::to_string(base[c].feature));
    const Contact contact =
        collision::contact_from_point(model, shape_a, shape_b, base[c], model.solver.contact_margin);
    const ContactGeometryJacobian jacobian =
        contact_geometry_jacobian(model, params, state, contact);
    EXPECT_TRUE(jacobian.found);
    if (!jacobian.found) continue;
    // Per quantity (position, normal, gap): the largest difference over the largest
    // derivative (at least 1: the derivatives are O(1) in m/m, m/rad, 1/rad).
    const auto dual_entry = [&](int q, int input) {
      return q < 3 ? jacobian.position[q][input]
                   : (q < 6 ? jacobian.normal[q - 3][input] : jacobian.gap[input]);
    };
    const int quantity_first[3] = {0, 3, 6};
    const int quantity_end[3] = {3, 6, 7};
    const char* quantity_name[3] = {"position", "normal", "gap"};
    for (int quantity = 0; quantity < 3; ++quantity) {
      double largest = 1.0;
      double worst = 0.0;
      for (int q = quantity_first[quantity]; q < quantity_end[quantity]; ++q) {
        for (int input = 0; input < kInputs; ++input) {
          if (!used[static_cast<std::size_t>(input)]) {
            EXPECT_EQ(dual_entry(q, input), 0.0) << "unused size input " << input;
            continue;
          }
          largest = std::max(largest, std::abs(dual_entry(q, input)));
          worst = std::max(worst, std::abs(dual_entry(q, input) - differences[c].central[input][q]));
        }
      }
      const double relative_error = worst / largest;
      worst_relative_error = std::max(worst_relative_error, relative_error);
      EXPECT_LT(relative_error, kRelativeTolerance) << quantity_name[quantity];
    }
  }
  return nullptr;
}

// Runs `generate` until `wanted` smooth poses were checked.
// With swapped_order_too, each pose is also checked as (b, a), which mirrors (a, b) for
// pairs of different types.
void run_case(const char* name, std::uint64_t seed, int wanted,
              const std::function<std::pair<WorldShape, WorldShape>(Rng&)>& generate,
              const std::function<bool(const std::vector<ContactPoint>&)>& intended,
              bool swapped_order_too = true) {
  SCOPED_TRACE(name);
  const bool verbose = std::getenv("DIFFPHYS_VERBOSE") != nullptr;
  Rng rng(seed);
  CaseResult result;
  const int max_attempts = 20 * wanted;
  for (int attempt = 0; attempt < max_attempts && result.accepted < wanted; ++attempt) {
    const auto [first, second] = generate(rng);
    const PairScene pair = build_scene(rng, first, second);
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    double worst = 0.0;
    const char* skipped = check_pair(pair, pair.shape_a, pair.shape_b, intended, worst);
    if (skipped != nullptr) {
      ++result.skipped;
      if (verbose) std::printf("    attempt %d skipped: %s\n", attempt, skipped);
      continue;
    }
    if (swapped_order_too) {
      SCOPED_TRACE("swapped order");
      // The mirrored call reports the same features; intended() is about the (a, b) order.
      const char* swapped_skipped =
          check_pair(pair, pair.shape_b, pair.shape_a,
                     [](const std::vector<ContactPoint>&) { return true; }, worst);
      EXPECT_TRUE(swapped_skipped == nullptr) << swapped_skipped;
    }
    ++result.accepted;
    result.worst_relative_error = std::max(result.worst_relative_error, worst);
  }
  EXPECT_EQ(result.accepted, wanted) << "too few smooth poses (" << result.skipped << " skipped)";
  if (verbose)
    std::printf("  %-32s %d poses (%d skipped), worst relative error %.2e\n", name,
                result.accepted, result.skipped, result.worst_relative_error);
}

// Contact-set predicates.
std::function<bool(const std::vector<ContactPoint>&)> count_is(int count) {
  return [count](const std::vector<ContactPoint>& contacts) {
    return static_cast<int>(contacts.size()) == count;
  };
}
std::function<bool(const std::vector<ContactPoint>&)> features_in(int low, int high,
                                                                   int min_count = 1,
                                                                   int max_count = 4) {
  return [=](const std::vector<ContactPoint>& contacts) {
    if (static_cast<int>(contacts.size()) < min_count ||
        static_cast<int>(contacts.size()) > max_count)
      return false;
    for (const ContactPoint& contact : contacts)
      if (contact.feature < low || contact.feature >= high) return false;
    return true;
  };
}

// A gap within [−depth, margin/2): penetrating or separated within the default margin.
double random_gap(Rng& rng, double depth) { return uniform(rng, -depth, 0.004); }

// ---------------------------------------------------------------------------------------
// Sphere pairs.

TEST(ContactGeometry, SphereSphere) {
  run_case("sphere-sphere", 1, 6,
           [](Rng& rng) {
             const double radius_a = uniform(rng, 0.1, 0.4);
             const double radius_b = uniform(rng, 0.1, 0.4);
             const Vec3 center_b = random_vector(rng, -1, 1);
             const Vec3 direction = random_direction(rng);  // one draw per statement: operand order is unspecified
             const Vec3 center_a = center_b + direction * (radius_a + radius_b + random_gap(rng, 0.05));
             return std::pair{sphere(center_a, radius_a), sphere(center_b, radius_b)};
           },
           count_is(1));
}

TEST(ContactGeometry, SpherePlane) {
  run_case("sphere-plane", 2, 6,
           [](Rng& rng) {
             const Vec3 normal = normalized(Vec3{0, 0, 1} + random_vector(rng, -0.5, 0.5));
             const Vec3 on_plane = random_vector(rng, -1, 1);
             const double radius = uniform(rng, 0.1, 0.4);
             return std::pair{sphere(on_plane + normal * (radius + random_gap(rng, 0.05)), radius),
                              plane(rng, on_plane, normal)};
           },
           count_is(1));
}

// Sphere against a box face, edge or vertex region (outside), or centre inside the box.
enum class BoxRegion { Face, Edge, Vertex, Inside };
std::pair<WorldShape, WorldShape> sphere_near_box(Rng& rng, BoxRegion region) {
  const Vec3 half = random_vector(rng, 0.1, 0.5);
  const Quat orientation = random_rotation(rng);
  const Vec3 center = random_vector(rng, -1, 1);
  const double radius = uniform(rng, 0.1, 0.3);
  Vec3 local_center;
  switch (region) {
    case BoxRegion::Face: {
      const int axis = uniform_int(rng, 0, 2);
      for (int k = 0; k < 3; ++k) local_center[k] = uniform(rng, -0.8, 0.8) * half[k];
      const double side = random_sign(rng);
      local_center[axis] = side * (half[axis] + radius + random_gap(rng, 0.5 * radius));
      break;
    }
    case BoxRegion::Edge: {
      const int along = uniform_int(rng, 0, 2);
      const int u = (along + 1) % 3, v = (along + 2) % 3;
      const double side_u = random_sign(rng), side_v = random_sign(rng);
      const double angle = uniform(rng, 0.25, kPi / 2 - 0.25);
      const double distance = radius + random_gap(rng, 0.5 * radius);
      local_center[along] = uniform(rng, -0.8, 0.8) * half[along];
      local_center[u] = side_u * (half[u] + distance * std::cos(angle));
      local_center[v] = side_v * (half[v] + distance * std::sin(angle));
      break;
    }
    case BoxRegion::Vertex: {
      const Vec3 outward = normalized(random_vector(rng, 0.4, 1.0));
      const double distance = radius + random_gap(rng, 0.5 * radius);
      for (int k = 0; k < 3; ++k) {
        const double side = random_sign(rng);
        local_center[k] = side * (half[k] + distance * outward[k]);
      }
      break;
    }
    case BoxRegion::Inside: {
      const int axis = uniform_int(rng, 0, 2);
      const double depth = uniform(rng, 0.005, 0.03);
      for (int k = 0; k < 3; ++k) local_center[k] = uniform(rng, -1, 1) * (half[k] - depth - 0.03);
      local_center[axis] = random_sign(rng) * (half[axis] - depth);
      break;
    }
  }
  return {sphere(center + orientation.rotate(local_center), radius),
          box(center, orientation, half)};
}

TEST(ContactGeometry, SphereBoxFaceEdgeVertexInside) {
  const BoxRegion regions[4] = {BoxRegion::Face, BoxRegion::Edge, BoxRegion::Vertex,
                                BoxRegion::Inside};
  const char* names[4] = {"sphere-box face", "sphere-box edge", "sphere-box vertex",
                          "sphere-box centre inside"};
  for (int r = 0; r < 4; ++r)
    run_case(names[r], 10 + static_cast<std::uint64_t>(r), 4,
             [&](Rng& rng) { return sphere_near_box(rng, regions[r]); }, count_is(1));
}

TEST(ContactGeometry, SphereCapsuleSideAndEnd) {
  for (int end = 0; end < 2; ++end) {
    run_case(end == 0 ? "sphere-capsule side" : "sphere-capsule end", 20 + end, 4,
             [end](Rng& rng) {
               const double capsule_radius = uniform(rng, 0.05, 0.2);
               const double half_length = uniform(rng, 0.1, 0.5);
               const double sphere_radius = uniform(rng, 0.1, 0.3);
               const Vec3 axis = random_direction(rng);
               const Vec3 center = random_vector(rng, -1, 1);
               const double distance =
                   capsule_radius + sphere_radius + random_gap(rng, 0.5 * capsule_radius);
               Vec3 sphere_center;
               if (end == 0) {
                 sphere_center = center + axis * (uniform(rng, -0.7, 0.7) * half_length) +
                                 random_perpendicular(rng, axis) * distance;
               } else {
                 const double tilt = uniform(rng, 0.0, 1.2);
                 const Vec3 outward =
                     axis * std::cos(tilt) + random_perpendicular(rng, axis) * std::sin(tilt);
                 sphere_center = center + axis * half_length + outward * distance;
               }
               return std::pair{sphere(sphere_center, sphere_radius),
                                capsule(rng, center, axis, capsule_radius, half_length)};
             },
             end == 0 ? features_in(1, 2) : features_in(2, 3));
  }
}

// The closed forms contact_geometry_jacobian takes for a sphere against a sphere, a plane or
// a box (outside it) agree with the dual narrow phase entry by entry, in both orders, and
// the dual path still serves the centre-inside case.
TEST(ContactGeometry, SphereClosedFormsMatchDualNarrowPhase) {
  Rng rng(77);
  const auto compare = [](const PairScene& pair, int shape_a, int shape_b) {
    const Model& model = pair.scene.model;
    const std::vector<ContactPoint> points = contacts_of(model, pair.scene.params, pair.scene.state, shape_a, shape_b);
    ASSERT_EQ(points.size(), 1u);
    const Contact contact =
        collision::contact_from_point(model, shape_a, shape_b, points[0], model.solver.contact_margin);
    const ContactGeometryJacobian closed = contact_geometry_jacobian(model, pair.scene.params, pair.scene.state, contact);
    const ContactGeometryJacobian dual = contact_geometry_jacobian_dual(model, pair.scene.params, pair.scene.state, contact);
    ASSERT_TRUE(closed.found);
    ASSERT_TRUE(dual.found);
    for (int j = 0; j < kInputs; ++j) {
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(closed.position[k][j], dual.position[k][j], 1e-12 * std::max(1.0, std::abs(dual.position[k][j])))
            << "position " << k << ", input " << j;
        EXPECT_NEAR(closed.normal[k][j], dual.normal[k][j], 1e-12 * std::max(1.0, std::abs(dual.normal[k][j])))
            << "normal " << k << ", input " << j;
      }
      EXPECT_NEAR(closed.gap[j], dual.gap[j], 1e-12 * std::max(1.0, std::abs(dual.gap[j]))) << "gap, input " << j;
    }
  };
  for (int trial = 0; trial < 5; ++trial) {
    const double radius_a = uniform(rng, 0.1, 0.4), radius_b = uniform(rng, 0.1, 0.4);
    const Vec3 center_b = random_vector(rng, -1, 1);
    const Vec3 direction = random_direction(rng);  // one draw per statement: operand order is unspecified
    const Vec3 center_a = center_b + direction * (radius_a + radius_b + random_gap(rng, 0.05));
    const PairScene spheres = build_scene(rng, sphere(center_a, radius_a), sphere(center_b, radius_b));
    compare(spheres, spheres.shape_a, spheres.shape_b);
    compare(spheres, spheres.shape_b, spheres.shape_a);

    const Vec3 normal = normalized(Vec3{0, 0, 1} + random_vector(rng, -0.5, 0.5));
    const Vec3 on_plane = random_vector(rng, -1, 1);
    const PairScene ground =
        build_scene(rng, sphere(on_plane + normal * (radius_a + random_gap(rng, 0.05)), radius_a), plane(rng, on_plane, normal));
    compare(ground, ground.shape_a, ground.shape_b);
    compare(ground, ground.shape_b, ground.shape_a);

    for (const BoxRegion region : {BoxRegion::Face, BoxRegion::Edge, BoxRegion::Vertex, BoxRegion::Inside}) {
      const auto [ball, block] = sphere_near_box(rng, region);
      const PairScene boxed = build_scene(rng, ball, block);
      compare(boxed, boxed.shape_a, boxed.shape_b);
      compare(boxed, boxed.shape_b, boxed.shape_a);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Capsule pairs.

TEST(ContactGeometry, CapsulePlaneLyingAndTilted) {
  for (int tilted = 0; tilted < 2; ++tilted) {
    run_case(tilted == 0 ? "capsule-plane lying (2 points)" : "capsule-plane tilted (1 point)",
             30 + tilted, 4,
             [tilted](Rng& rng) {
               const Vec3 normal = normalized(Vec3{0, 0, 1} + random_vector(rng, -0.5, 0.5));
               const Vec3 on_plane = random_vector(rng, -1, 1);
               const double radius = uniform(rng, 0.05, 0.2);
               const double half_length = uniform(rng, 0.1, 0.5);
               const Vec3 along = random_perpendicular(rng, normal);
               if (tilted == 0) {
                 // Both ends within the margin: a tilt of at most ±0.004 m over the length.
                 const double slope = uniform(rng, -0.004, 0.004) / half_length;
                 const Vec3 axis = normalized(along + normal * slope);
                 const double height = radius + uniform(rng, -0.03, 0.0);
                 return std::pair{capsule(rng, on_plane + normal * height, axis, radius, half_length),
                                  plane(rng, on_plane, normal)};
               }
               const double tilt = uniform(rng, 0.3, 1.2);
               const Vec3 axis = along * std::cos(tilt) + normal * std::sin(tilt);
               const Vec3 lower_end = on_plane + normal * (radius + random_gap(rng, 0.05));
               return std::pair{capsule(rng, lower_end + axis * half_length, axis, radius, half_length),
                                plane(rng, on_plane, normal)};
             },
             count_is(tilted == 0 ? 2 : 1));
  }
}

// Capsule a crossing capsule b (closest points inside both segments), a's end against b's
// side, or a lying along b (parallel within 1e-3 rad: the two-point manifold).
enum class CapsuleCapsuleCase { Crossed, EndOnSide, Parallel };
std::pair<WorldShape, WorldShape> capsule_near_capsule(Rng& rng, CapsuleCapsuleCase which) {
  const double radius_a = uniform(rng, 0.05, 0.2), radius_b = uniform(rng, 0.05, 0.2);
  const double half_a = uniform(rng, 0.15, 0.5), half_b = uniform(rng, 0.15, 0.5);
  const Vec3 axis_b = random_direction(rng);
  const Vec3 center_b = random_vector(rng, -1, 1);
  const Vec3 normal = random_perpendicular(rng, axis_b);  // from b towards a
  const double distance = radius_a + radius_b + random_gap(rng, 0.5 * std::min(radius_a, radius_b));
  const Vec3 on_b = center_b + axis_b * (uniform(rng, -0.6, 0.6) * half_b);
  const WorldShape b = capsule(rng, center_b, axis_b, radius_b, half_b);
  const Vec3 across = cross(normal, axis_b);  // ⟂ normal and axis_b
  switch (which) {
    case CapsuleCapsuleCase::Crossed: {
      const double angle = uniform(rng, 0.4, kPi - 0.4);
      const Vec3 axis_a = axis_b * std::cos(angle) + across * std::sin(angle);
      const Vec3 center_a = on_b + normal * distance + axis_a * (uniform(rng, -0.6, 0.6) * half_a);
      return {capsule(rng, center_a, axis_a, radius_a, half_a), b};
    }
    case CapsuleCapsuleCase::EndOnSide: {
      const double tilt = uniform(rng, 0.0, 0.9);
      const Vec3 axis_a = normal * std::cos(tilt) + across * std::sin(tilt) * random_sign(rng);
      const Vec3 start_a = on_b + normal * distance;
      return {capsule(rng, start_a + axis_a * half_a, axis_a, radius_a, half_a), b};
    }
    case CapsuleCapsuleCase::Parallel: {
      // Tilted out of parallel in a random direction by 3e-4 to 9e-4 rad. Exactly parallel
      // axes are a kink: where the overlap ends at an end of b, the point on b is that end
      // clamped, and a tilt towards or away from b turns it from clamped to free.
      const double tilt = uniform(rng, 3e-4, 9e-4);
      const Vec3 axis_a = normalized(axis_b + random_perpendicular(rng, axis_b) * tilt);
      // Overlapping by part of each: a's centre shifted along the axis by up to the
      // shorter half length, and not so far that an end of one lines up with the other's.
      const double shift = uniform(rng, 0.3, 0.8) * std::min(half_a, half_b) * random_sign(rng);
      const Vec3 center_a = center_b + normal * distance + axis_b * shift;
      return {capsule(rng, center_a, axis_a, radius_a, half_a), b};
    }
  }
  return {};
}

TEST(ContactGeometry, CapsuleCapsuleCrossedEndAndParallel) {
  run_case("capsule-capsule crossed", 40, 4,
           [](Rng& rng) { return capsule_near_capsule(rng, CapsuleCapsuleCase::Crossed); },
           features_in(4, 5));
  run_case("capsule-capsule end on side", 41, 4,
           [](Rng& rng) { return capsule_near_capsule(rng, CapsuleCapsuleCase::EndOnSide); },
           [](const std::vector<ContactPoint>& contacts) {
             return contacts.size() == 1 &&
                    (contacts[0].feature == 1 || contacts[0].feature == 7);  // a's end, b inside
           });
  run_case("capsule-capsule parallel (2 points)", 42, 4,
           [](Rng& rng) { return capsule_near_capsule(rng, CapsuleCapsuleCase::Parallel); },
           features_in(9, 11, 2, 2));
}

// Capsule against a box: lying on a face (2 points; the segment above the face, or sunk
// below it), an end near a vertex (separated, one point), and crossing an edge into the box
// (the edge axis).
enum class CapsuleBoxCase { LyingOnFace, SunkIntoFace, EndNearVertex, CrossingEdge };
std::pair<WorldShape, WorldShape> capsule_near_box(Rng& rng, CapsuleBoxCase which) {
  const Vec3 half = random_vector(rng, 0.2, 0.5);
  const Quat orientation = random_rotation(rng);
  const Vec3 center = random_vector(rng, -1, 1);
  const double radius = uniform(rng, 0.05, 0.15);
  const double half_length = uniform(rng, 0.1, 0.3);
  const WorldShape the_box = box(center, orientation, half);
  const auto world = [&](const Vec3& local) { return center + orientation.rotate(local); };
  const auto world_direction = [&](const Vec3& local) { return orientation.rotate(local); };
  switch (which) {
    case CapsuleBoxCase::LyingOnFace:
    case CapsuleBoxCase::SunkIntoFace: {
      const int axis = uniform_int(rng, 0, 2);
      const double side = random_sign(rng);
      const int u = (axis + 1) % 3, v = (axis + 2) % 3;
      // Lying along a random in-face direction, tilted by at most ±0.003 m over its length;
      // the segment either inside the face or crossing its boundary (clipped ends).
      const double angle = uniform(rng, 0.0, 2.0 * kPi);
      Vec3 direction;
      direction[u] = std::cos(angle);
      direction[v] = std::sin(angle);
      direction[axis] = uniform(rng, -0.003, 0.003) / half_length;
      direction = normalized(direction);
      Vec3 local_center;
      local_center[u] = uniform(rng, -0.7, 0.7) * half[u];
      local_center[v] = uniform(rng, -0.7, 0.7) * half[v];
      local_center[axis] = which == CapsuleBoxCase::LyingOnFace
                               ? side * (half[axis] + radius + uniform(rng, -0.02, 0.004))
                               : side * (half[axis] - uniform(rng, 0.002, 0.02));
      return {capsule(rng, world(local_center), world_direction(direction), radius, half_length),
              the_box};
    }
    case CapsuleBoxCase::EndNearVertex: {
      Vec3 signs, outward = normalized(random_vector(rng, 0.4, 1.0));
      for (int k = 0; k < 3; ++k) signs[k] = random_sign(rng);
      Vec3 corner, direction;
      for (int k = 0; k < 3; ++k) {
        corner[k] = signs[k] * half[k];
        outward[k] *= signs[k];
      }
      const Vec3 end = corner + outward * (radius + random_gap(rng, 0.5 * radius));
      // The segment leaves the box further along roughly the same direction.
      const Vec3 axis = normalized(outward + random_vector(rng, -0.2, 0.2));
      return {capsule(rng, world(end + axis * half_length), world_direction(axis), radius,
                      half_length),
              the_box};
    }
    case CapsuleBoxCase::CrossingEdge: {
      const int along = uniform_int(rng, 0, 2);
      const int u = (along + 1) % 3, v = (along + 2) % 3;
      const double side_u = random_sign(rng), side_v = random_sign(rng);
      Vec3 on_edge;
      on_edge[along] = uniform(rng, -0.6, 0.6) * half[along];
      on_edge[u] = side_u * half[u];
      on_edge[v] = side_v * half[v];
      Vec3 bisector, across;  // the edge's outward bisector, and ⟂ it and the edge
      bisector[u] = side_u;
      bisector[v] = side_v;
      bisector = normalized(bisector);
      across[u] = side_u;
      across[v] = -side_v;
      across = normalized(across);
      // The segment crosses the edge at an angle, its axis a little below the edge line's
      // bisector plane: penetration depth (before the radius) of 0.002–0.02 m.
      Vec3 edge_direction;
      edge_direction[along] = 1.0;
      const double angle = uniform(rng, 0.5, kPi - 0.5);
      const Vec3 axis = across * std::sin(angle) + edge_direction * std::cos(angle);
      const Vec3 local_center = on_edge - bisector * uniform(rng, 0.002, 0.02) +
                                axis * (uniform(rng, -0.3, 0.3) * half_length);
      return {capsule(rng, world(local_center), world_direction(axis), radius, half_length),
              the_box};
    }
  }
  return {};
}

TEST(ContactGeometry, CapsuleBoxFaceVertexAndEdge) {
  // Lying on a face: the two ends of the part over the face. Away from the switch where an
  // end of that part changes from a segment end to a crossing of the face's boundary (a
  // kink with the same feature id), which the smoothness check skips.
  run_case("capsule-box lying on a face", 50, 5,
           [](Rng& rng) { return capsule_near_box(rng, CapsuleBoxCase::LyingOnFace); },
           features_in(200, 300, 2, 2));
  run_case("capsule-box sunk into a face", 53, 5,
           [](Rng& rng) { return capsule_near_box(rng, CapsuleBoxCase::SunkIntoFace); },
           features_in(200, 300, 2, 2));
  run_case("capsule-box end near a vertex", 51, 4,
           [](Rng& rng) { return capsule_near_box(rng, CapsuleBoxCase::EndNearVertex); },
           features_in(100, 200, 1, 1));
  run_case("capsule-box crossing an edge", 52, 4,
           [](Rng& rng) { return capsule_near_box(rng, CapsuleBoxCase::CrossingEdge); },
           features_in(300, 400, 1, 1));
}

// ---------------------------------------------------------------------------------------
// Box pairs.

// A box over a plane with `down` vertices within the margin: 1 (vertex down), 2 (edge
// down), 4 (face down), or 8 (submerged: the reduction keeps 4).
std::pair<WorldShape, WorldShape> box_over_plane(Rng& rng, int down) {
  const Vec3 normal = normalized(Vec3{0, 0, 1} + random_vector(rng, -0.5, 0.5));
  const Vec3 on_plane = random_vector(rng, -1, 1);
  const Vec3 half = random_vector(rng, 0.1, 0.5);
  // Box frame: its −z face (or edge, or vertex) towards the plane.
  Quat orientation = rotation_with_z_along(rng, normal);
  const Vec3 tangent = column(orientation, 0);
  switch (down) {
    case 1:
      orientation = Quat::from_rotation_vector(random_vector(rng, -1.0, 1.0)) * orientation;
      break;
    case 2: {  // the −z face's −y edge down: turn about the edge by 0.2–1.2 rad
      const double turn = uniform(rng, 0.2, 1.2);
      orientation = Quat::from_axis_angle(tangent, turn) * orientation;
      orientation = Quat::from_rotation_vector(normal * uniform(rng, -1.0, 1.0)) *
                    Quat::from_rotation_vector(random_direction(rng) * 1e-3) * orientation;
      break;
    }
    case 4:
    case 8:
      orientation = Quat::from_rotation_vector(random_direction(rng) * 2e-3) * orientation;
      break;
    default: break;
  }
  // Place the lowest vertex at the wanted height (deep below for the submerged case).
  double lowest = 1e30;
  for (int vertex = 0; vertex < 8; ++vertex) {
    const Vec3 corner{(vertex & 1) ? half.x : -half.x, (vertex & 2) ? half.y : -half.y,
                      (vertex & 4) ? half.z : -half.z};
    lowest = std::min(lowest, dot(normal, orientation.rotate(corner)));
  }
  const double height = down == 8 ? -2.0 : uniform(rng, -0.02, 0.001);
  const Vec3 center = on_plane + normal * (height - lowest);
  if (down == 8)  // all under: tilt freely so that the reduction has no ties
    orientation = Quat::from_rotation_vector(random_vector(rng, -0.5, 0.5)) * orientation;
  return {box(center, orientation, half), plane(rng, on_plane, normal)};
}

TEST(ContactGeometry, BoxPlaneVertexEdgeFaceAndReduced) {
  const int downs[4] = {1, 2, 4, 8};
  const char* names[4] = {"box-plane vertex down", "box-plane edge down",
                          "box-plane face down", "box-plane submerged (reduced 8 to 4)"};
  for (int i = 0; i < 4; ++i)
    run_case(names[i], 60 + static_cast<std::uint64_t>(i), 4,
             [&](Rng& rng) { return box_over_plane(rng, downs[i]); },
             count_is(std::min(downs[i], 4)));
}

// Box a resting on box b's face (a face manifold): a small box inside the face (its four
// vertices), a box overhanging the face's boundary (clipped points), or a turned box of
// similar size (up to 8 clipped points reduced to 4).
enum class BoxBoxFace { Inside, Overhanging, Turned };
std::pair<WorldShape, WorldShape> box_on_box(Rng& rng, BoxBoxFace which) {
  const Vec3 half_b = random_vector(rng, 0.3, 0.5);
  const Quat orientation_b = random_rotation(rng);
  const Vec3 center_b = random_vector(rng, -1, 1);
  const int axis = uniform_int(rng, 0, 2);
  const double side = random_sign(rng);
  const Vec3 normal = column(orientation_b, axis) * side;
  Vec3 half_a;
  double offset_fraction = 0.0;
  double turn = uniform(rng, 0.0, 2.0 * kPi);
  switch (which) {
    case BoxBoxFace::Inside:
      half_a = random_vector(rng, 0.05, 0.12);
      offset_fraction = 0.3;
      break;
    case BoxBoxFace::Overhanging:
      half_a = random_vector(rng, 0.1, 0.25);
      offset_fraction = 0.9;
      break;
    case BoxBoxFace::Turned: {
      const double scale = uniform(rng, 0.85, 0.95);
      // a's face the size of b's, nearly: its x half extent along x_a below.
      const int x_axis = side > 0 ? (axis + 1) % 3 : (axis + 2) % 3;
      const int y_axis = side > 0 ? (axis + 2) % 3 : (axis + 1) % 3;
      half_a = {half_b[x_axis] * scale, half_b[y_axis] * scale, uniform(rng, 0.1, 0.3)};
      turn = kPi / 4 + uniform(rng, -0.2, 0.2);
      break;
    }
  }
  // a's −z face against b's face, a's x and y along b's face axes (u, v, or v, u on the
  // negative side), then turned about the normal and tilted by ≤ 1e-3 rad.
  const int u = (axis + 1) % 3, v = (axis + 2) % 3;
  const Vec3 x_a = column(orientation_b, side > 0 ? u : v);
  const Vec3 y_a = column(orientation_b, side > 0 ? v : u);
  Quat orientation_a =
      Quat::from_axis_angle(normal, turn) * rotation_with_columns(x_a, y_a, normal);
  const Vec3 tilt_axis = random_direction(rng);  // one draw per statement: operand order is unspecified
  orientation_a = Quat::from_rotation_vector(tilt_axis * uniform(rng, 0.0, 1e-3)) * orientation_a;
  const double along_u = uniform(rng, -1, 1), along_v = uniform(rng, -1, 1);
  const Vec3 in_face = column(orientation_b, u) * (along_u * offset_fraction * half_b[u]) +
                       column(orientation_b, v) * (along_v * offset_fraction * half_b[v]);
  const double penetration = uniform(rng, 0.001, 0.02);
  const Vec3 center_a = center_b + normal * (half_b[axis] + half_a.z - penetration) + in_face;
  return {box(center_a, orientation_a, half_a), box(center_b, orientation_b, half_b)};
}

// Box a's edge crossing box b's edge, each box's edge pointing into the other.
std::pair<WorldShape, WorldShape> box_edge_on_box_edge(Rng& rng) {
  const Vec3 half_a = random_vector(rng, 0.15, 0.4), half_b = random_vector(rng, 0.15, 0.4);
  const Quat orientation_b = random_rotation(rng);
  const Vec3 center_b = random_vector(rng, -1, 1);
  // b's edge along its x at (+y, +z); its outward bisector is the contact normal.
  const Vec3 edge_b = column(orientation_b, 0);
  const Vec3 normal = normalized(column(orientation_b, 1) + column(orientation_b, 2));
  const Vec3 on_edge_b = center_b + orientation_b.rotate({uniform(rng, -0.6, 0.6) * half_b.x,
                                                          half_b.y, half_b.z});
  // a's edge along its x at (−y, −z), crossing b's at an angle, its bisector −normal.
  const double angle = uniform(rng, 0.5, kPi - 0.5);
  const Vec3 edge_a = edge_b * std::cos(angle) + cross(normal, edge_b) * std::sin(angle);
  const Vec3 w = cross(normal, edge_a);
  const Vec3 a_y = (normal + w) / std::sqrt(2.0), a_z = (normal - w) / std::sqrt(2.0);
  const Quat orientation_a = rotation_with_columns(edge_a, a_y, a_z);
  const double penetration = uniform(rng, 0.002, 0.02);
  const Vec3 on_edge_a = on_edge_b - normal * penetration;
  const Vec3 center_a = on_edge_a - orientation_a.rotate({uniform(rng, -0.6, 0.6) * half_a.x,
                                                          -half_a.y, -half_a.z});
  return {box(center_a, orientation_a, half_a), box(center_b, orientation_b, half_b)};
}

TEST(ContactGeometry, BoxBoxFaceManifolds) {
  run_case("box-box face, small box on a face", 70, 4,
           [](Rng& rng) { return box_on_box(rng, BoxBoxFace::Inside); },
           features_in(0, 2880, 4, 4));
  run_case("box-box face, clipped points", 71, 4,
           [](Rng& rng) { return box_on_box(rng, BoxBoxFace::Overhanging); },
           [](const std::vector<ContactPoint>& contacts) {
             if (contacts.size() < 3) return false;
             bool clipped = false;
             for (const ContactPoint& contact : contacts) {
               if (contact.feature >= 2880) return false;
               clipped = clipped || contact.feature % 40 >= 4;
             }
             return clipped;
           });
  // Turned by about 45°: the clipped polygon is an octagon of edge crossings (ids 4..19
  // within a face pair's 40), of which the reduction keeps 4. Away from the reduction's
  // switches (the smoothness check skips poses where the kept four change).
  run_case("box-box face, turned (reduced 8 to 4)", 72, 4,
           [](Rng& rng) { return box_on_box(rng, BoxBoxFace::Turned); },
           [](const std::vector<ContactPoint>& contacts) {
             if (contacts.size() != 4) return false;
             for (const ContactPoint& contact : contacts)
               if (contact.feature >= 2880 || contact.feature % 40 < 4 || contact.feature % 40 >= 20)
                 return false;
             return true;
           });
}

TEST(ContactGeometry, BoxBoxEdgeEdge) {
  run_case("box-box edge-edge", 80, 6, box_edge_on_box_edge, features_in(2880, 3024, 1, 1));
}

// ---------------------------------------------------------------------------------------
// Convex meshes (collision/convex_mesh_contacts.cpp): the box cases above with the box given
// as a mesh cube at a random scale (the scale is then a size input), and an irregular hull.

// The box as the hull of its corners divided by `scale`, at that scale: the same solid.
WorldShape as_mesh_cube(Rng& rng, const WorldShape& the_box) {
  const double scale = uniform(rng, 0.5, 2.0);
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i)
    corners.push_back(Vec3{(i & 1) ? the_box.size.x : -the_box.size.x,
                           (i & 2) ? the_box.size.y : -the_box.size.y,
                           (i & 4) ? the_box.size.z : -the_box.size.z} /
                      scale);
  WorldShape mesh = the_box;
  mesh.type = ShapeType::ConvexMesh;
  mesh.size = {scale, 0, 0};
  mesh.mesh = std::make_shared<const ConvexMesh>(convex_hull(corners, "box as a mesh"));
  return mesh;
}
// Which of the pair's boxes become meshes.
std::function<std::pair<WorldShape, WorldShape>(Rng&)> with_mesh_cubes(
    std::function<std::pair<WorldShape, WorldShape>(Rng&)> generate, bool first, bool second) {
  return [=](Rng& rng) {
    auto pair = generate(rng);
    if (first) pair.first = as_mesh_cube(rng, pair.first);
    if (second) pair.second = as_mesh_cube(rng, pair.second);
    return pair;
  };
}
std::function<bool(const std::vector<ContactPoint>&)> count_between(int low, int high) {
  return [=](const std::vector<ContactPoint>& contacts) {
    return static_cast<int>(contacts.size()) >= low && static_cast<int>(contacts.size()) <= high;
  };
}

TEST(ContactGeometry, MeshCubePlane) {
  const int downs[4] = {1, 2, 4, 8};
  const char* names[4] = {"mesh-plane vertex down", "mesh-plane edge down", "mesh-plane face down",
                          "mesh-plane submerged (reduced 8 to 4)"};
  for (int i = 0; i < 4; ++i)
    run_case(names[i], 100 + static_cast<std::uint64_t>(i), 3,
             with_mesh_cubes([&](Rng& rng) { return box_over_plane(rng, downs[i]); }, true, false),
             count_is(std::min(downs[i], 4)));
}

TEST(ContactGeometry, SphereMeshCubeFaceEdgeVertexInside) {
  const BoxRegion regions[4] = {BoxRegion::Face, BoxRegion::Edge, BoxRegion::Vertex, BoxRegion::Inside};
  const char* names[4] = {"sphere-mesh face", "sphere-mesh edge", "sphere-mesh vertex",
                          "sphere-mesh centre inside"};
  for (int r = 0; r < 4; ++r)
    run_case(names[r], 110 + static_cast<std::uint64_t>(r), 3,
             with_mesh_cubes([&](Rng& rng) { return sphere_near_box(rng, regions[r]); }, false, true),
             count_is(1));
}

TEST(ContactGeometry, CapsuleMeshCubeFaceVertexAndEdge) {
  const CapsuleBoxCase cases[4] = {CapsuleBoxCase::LyingOnFace, CapsuleBoxCase::SunkIntoFace,
                                   CapsuleBoxCase::EndNearVertex, CapsuleBoxCase::CrossingEdge};
  const char* names[4] = {"capsule-mesh lying on a face", "capsule-mesh sunk into a face",
                          "capsule-mesh end near a vertex", "capsule-mesh crossing an edge"};
  const int counts[4] = {2, 2, 1, 1};
  for (int i = 0; i < 4; ++i)
    run_case(names[i], 120 + static_cast<std::uint64_t>(i), 3,
             with_mesh_cubes([&](Rng& rng) { return capsule_near_box(rng, cases[i]); }, false, true),
             count_is(counts[i]));
}

TEST(ContactGeometry, MeshCubeBoxAndMeshCubeMesh) {
  const BoxBoxFace faces[3] = {BoxBoxFace::Inside, BoxBoxFace::Overhanging, BoxBoxFace::Turned};
  const char* names[3][2] = {{"mesh-box face, small on a face", "mesh-mesh face, small on a face"},
                             {"mesh-box face, clipped points", "mesh-mesh face, clipped points"},
                             {"mesh-box face, turned (reduced)", "mesh-mesh face, turned (reduced)"}};
  for (int i = 0; i < 3; ++i)
    for (int both = 0; both < 2; ++both)
      run_case(names[i][both], 130 + static_cast<std::uint64_t>(2 * i + both), 3,
               with_mesh_cubes([&](Rng& rng) { return box_on_box(rng, faces[i]); }, true, both == 1),
               count_between(3, 4));
  run_case("mesh-box edge-edge", 140, 3, with_mesh_cubes(box_edge_on_box_edge, true, false), count_is(1));
  run_case("mesh-mesh edge-edge", 141, 3, with_mesh_cubes(box_edge_on_box_edge, true, true), count_is(1));
}

// An irregular hull (20 points on an ellipsoid) near a plane, a sphere, a capsule, a box and
// another hull, at random poses: whatever features touch.
TEST(ContactGeometry, IrregularHullAgainstEveryShape) {
  Rng hull_rng(150);
  std::vector<Vec3> points;
  for (int i = 0; i < 20; ++i) {
    const Vec3 direction = random_direction(hull_rng);
    points.push_back({0.3 * direction.x, 0.2 * direction.y, 0.15 * direction.z});
  }
  const auto hull = std::make_shared<const ConvexMesh>(convex_hull(points, "irregular"));
  const auto hull_shape = [hull](Rng& rng, const Vec3& center) {
    return WorldShape{ShapeType::ConvexMesh, center, random_rotation(rng), {uniform(rng, 0.8, 1.5), 0, 0}, hull};
  };
  const auto near = [](Rng& rng, const Vec3& center, double reach) {
    const Vec3 direction = random_direction(rng);  // one draw per statement: operand order is unspecified
    return center + direction * (reach * uniform(rng, 0.5, 1.0));
  };
  const auto any = count_between(1, 4);
  run_case("hull-plane", 151, 3, [&](Rng& rng) {
    const Vec3 normal = normalized(Vec3{0, 0, 1} + random_vector(rng, -0.5, 0.5));
    WorldShape mesh = hull_shape(rng, {0, 0, 0});
    // The lowest vertex just under the plane through the origin.
    const Mat3 rotation = mesh.orientation.to_matrix();
    double lowest = 1e30;
    for (const Vec3& v : hull->vertices) lowest = std::min(lowest, dot(normal, rotation * (v * mesh.size.x)));
    mesh.position = normal * (uniform(rng, -0.02, 0.004) - lowest);
    return std::pair{mesh, plane(rng, {0, 0, 0}, normal)};
  }, any);
  run_case("sphere-hull", 152, 4, [&](Rng& rng) {
    const double radius = uniform(rng, 0.05, 0.2);
    return std::pair{sphere(near(rng, {0, 0, 0}, 0.3 + radius), radius), hull_shape(rng, {0, 0, 0})};
  }, any);
  run_case("capsule-hull", 153, 4, [&](Rng& rng) {
    const double radius = uniform(rng, 0.05, 0.15);
    return std::pair{capsule(rng, near(rng, {0, 0, 0}, 0.3 + radius), random_direction(rng), radius,
                             uniform(rng, 0.05, 0.2)),
                     hull_shape(rng, {0, 0, 0})};
  }, any);
  run_case("box-hull", 154, 4, [&](Rng& rng) {
    return std::pair{box(near(rng, {0, 0, 0}, 0.45), random_rotation(rng), random_vector(rng, 0.05, 0.2)),
                     hull_shape(rng, {0, 0, 0})};
  }, any);
  run_case("hull-hull", 155, 4, [&](Rng& rng) {
    return std::pair{hull_shape(rng, near(rng, {0, 0, 0}, 0.5)), hull_shape(rng, {0, 0, 0})};
  }, any);
}

// An ellipsoid (collision/ellipsoid_contacts.cpp) near a plane, a sphere, a capsule, a box, a
// hull and another ellipsoid, at random poses and sizes: one contact, whatever feature.
TEST(ContactGeometry, EllipsoidAgainstEveryShape) {
  Rng hull_rng(160);
  std::vector<Vec3> points;
  for (int i = 0; i < 20; ++i) points.push_back(random_direction(hull_rng) * 0.2);
  const auto hull = std::make_shared<const ConvexMesh>(convex_hull(points, "round"));
  const auto ellipsoid = [](Rng& rng, const Vec3& center) {
    return WorldShape{ShapeType::Ellipsoid, center, random_rotation(rng), random_vector(rng, 0.08, 0.25), nullptr};
  };
  // The ellipsoid's centre placed so that its support along `direction` from `center` is at
  // `reach` (+ a random gap): touching a shape whose support along −direction is `reach`.
  const auto touching = [&](Rng& rng, const Vec3& direction, double reach) {
    WorldShape e = ellipsoid(rng, {0, 0, 0});
    const Mat3 rotation = e.orientation.to_matrix();
    const Vec3 local = rotation.transpose_times(direction);
    const double support = norm(Vec3{local.x * e.size.x, local.y * e.size.y, local.z * e.size.z});
    e.position = direction * (reach + support + random_gap(rng, 0.01));
    return e;
  };
  const auto one = count_is(1);
  run_case("ellipsoid-plane", 161, 4, [&](Rng& rng) {
    const Vec3 normal = normalized(Vec3{0, 0, 1} + random_vector(rng, -0.5, 0.5));
    return std::pair{touching(rng, normal, 0.0), plane(rng, {0, 0, 0}, normal)};
  }, one);
  run_case("ellipsoid-sphere", 162, 4, [&](Rng& rng) {
    const double radius = uniform(rng, 0.05, 0.2);
    const Vec3 direction = random_direction(rng);
    return std::pair{touching(rng, direction, radius), sphere({0, 0, 0}, radius)};
  }, one);
  run_case("ellipsoid-capsule", 163, 6, [&](Rng& rng) {
    const double radius = uniform(rng, 0.05, 0.15);
    const Vec3 axis = random_direction(rng);
    const Vec3 direction = random_direction(rng);
    const double reach = radius + 0.15 * std::abs(dot(axis, direction));
    return std::pair{touching(rng, direction, reach), capsule(rng, {0, 0, 0}, axis, radius, 0.15)};
  }, one);
  run_case("ellipsoid-box", 164, 6, [&](Rng& rng) {
    const Quat orientation = random_rotation(rng);
    const Vec3 half = random_vector(rng, 0.05, 0.2);
    const Vec3 direction = random_direction(rng);
    const Vec3 local = orientation.conjugate().rotate(direction);
    const double reach = std::abs(local.x) * half.x + std::abs(local.y) * half.y + std::abs(local.z) * half.z;
    return std::pair{touching(rng, direction, reach), box({0, 0, 0}, orientation, half)};
  }, one);
  run_case("ellipsoid-hull", 165, 4, [&](Rng& rng) {
    const Vec3 direction = random_direction(rng);
    const WorldShape mesh{ShapeType::ConvexMesh, {0, 0, 0}, random_rotation(rng), {uniform(rng, 0.8, 1.2), 0, 0}, hull};
    const Mat3 rotation = mesh.orientation.to_matrix();
    double reach = -1e30;
    for (const Vec3& v : hull->vertices) reach = std::max(reach, dot(direction, rotation * (v * mesh.size.x)));
    return std::pair{touching(rng, direction, reach), mesh};
  }, one);
  run_case("ellipsoid-ellipsoid", 166, 4, [&](Rng& rng) {
    const WorldShape other = ellipsoid(rng, {0, 0, 0});
    const Vec3 direction = random_direction(rng);
    const Vec3 local = other.orientation.conjugate().rotate(direction);
    const double reach = norm(Vec3{local.x * other.size.x, local.y * other.size.y, local.z * other.size.z});
    return std::pair{touching(rng, direction, reach), other};
  }, one);
}

// ---------------------------------------------------------------------------------------
// Through detect_contacts: every contact a step would hold fixed has a Jacobian.

TEST(ContactGeometry, EveryDetectedContactIsFoundAgain) {
  Rng rng(90);
  ModelBuilder builder;
  builder.add_ground_plane(normalized(Vec3{0.1, -0.05, 1.0}), 0.0);
  const ShapeType types[4] = {ShapeType::Sphere, ShapeType::Capsule, ShapeType::Box,
                              ShapeType::ConvexMesh};
  std::vector<Vec3> hull_points;
  for (int k = 0; k < 14; ++k) hull_points.push_back(random_vector(rng, -0.15, 0.15));
  const auto hull = std::make_shared<const ConvexMesh>(convex_hull(hull_points, "rock"));
  for (int i = 0; i < 16; ++i) {
    ShapeSpec shape;
    shape.type = types[i % 4];
    shape.mesh = hull;
    shape.radius = 0.15;
    shape.half_length = 0.2;
    shape.half_extents = {0.15, 0.2, 0.1};
    shape.position = random_vector(rng, -0.05, 0.05);
    shape.orientation = random_rotation(rng);
    BodySpec body;
    body.name = "body" + std::to_string(i);
    body.position = {0.25 * (i % 4) + 0.03 * (i / 4), 0.25 * (i / 4), 0.12};
    body.orientation = random_rotation(rng);
    body.shapes.push_back(shape);
    builder.add_body(body);
  }
  const Scene scene = builder.build();
  collision::CollisionWorkspace workspace;
  std::vector<Contact> contacts;
  collision::detect_contacts(scene.model, scene.params, scene.state, workspace, contacts);
  ASSERT_GT(contacts.size(), 16u);
  int mesh_contacts = 0;
  for (const Contact& contact : contacts) {
    mesh_contacts += scene.model.shapes[static_cast<std::size_t>(contact.shape_a)].type == ShapeType::ConvexMesh ||
                     scene.model.shapes[static_cast<std::size_t>(contact.shape_b)].type == ShapeType::ConvexMesh;
    const ContactGeometryJacobian jacobian =
        contact_geometry_jacobian(scene.model, scene.params, scene.state, contact);
    EXPECT_TRUE(jacobian.found) << "shapes " << contact.shape_a << ", " << contact.shape_b
                                << " feature " << contact.feature;
    // Translating a along the normal opens the gap at unit rate; translating b closes it.
    double along_normal_a = 0.0, along_normal_b = 0.0;
    for (int k = 0; k < 3; ++k) {
      along_normal_a += jacobian.gap[kBodyATranslationInput + k] * contact.normal[k];
      along_normal_b += jacobian.gap[kBodyBTranslationInput + k] * contact.normal[k];
    }
    EXPECT_NEAR(along_normal_a, 1.0, 1e-9);
    EXPECT_NEAR(along_normal_b, -1.0, 1e-9);
  }
  EXPECT_GT(mesh_contacts, 4);
}

}  // namespace
}  // namespace diffphys::adjoint
