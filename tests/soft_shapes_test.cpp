// tests/soft_shapes_test.cpp — soft nodes against boxes and capsules (static, or moving with a
// frame): the barrier + lagged friction term's energy, gradient and Hessian against central
// differences in every closest-feature region (face, edge, corner, cylinder, cap), rollout
// gradients w.r.t. κ, μ, the frame pose and the initial state, cloth draped over a box and a
// capsule staying outside, and the friction threshold of a cube on an inclined box.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>

#include "diffphys/error.hpp"
#include "diffphys/soft_rollout.hpp"
#include "diffphys/soft_scene.hpp"
#include "soft/energy_term.hpp"
#include "soft/shape_distance.hpp"
#include "soft_test_scenes.hpp"

namespace diffphys::soft {
namespace {

std::array<double, 4> about_y(double angle) { return {std::cos(angle / 2), 0, std::sin(angle / 2), 0}; }

// Contact energy and its derivatives from the model's contact terms at (x, x_t).
struct ContactProbe {
  const SoftModel& model;
  const SoftParams& params;
  std::vector<std::unique_ptr<EnergyTerm>> terms = make_energy_terms(model);

  double energy(const std::vector<double>& x, const std::vector<double>& previous) const {
    const TermInputs in{model, params.values, x, previous, model.dt, true};
    double total = 0.0;
    for (const auto& term : terms)
      if (term->kind() == EnergyTerm::Kind::Contact) total += term->energy(in);
    return total;
  }
  // Gradient and dense Hessian (3n × 3n, row-major).
  void derivatives(const std::vector<double>& x, const std::vector<double>& previous, std::vector<double>& gradient,
                   std::vector<double>& hessian) const {
    const auto dofs = x.size();
    const TermInputs in{model, params.values, x, previous, model.dt, true};
    gradient.assign(dofs, 0.0);
    hessian.assign(dofs * dofs, 0.0);
    for (const auto& term : terms) {
      if (term->kind() != EnergyTerm::Kind::Contact) continue;
      std::vector<std::array<int, 2>> blocks;
      HessianSink recorder(blocks);
      std::vector<double> scratch(dofs, 0.0);
      term->add_derivatives(in, scratch, &recorder);
      std::vector<int> slots;
      for (const auto& [a, b] : blocks)
        for (int r = 0; r < 9; ++r) slots.push_back(static_cast<int>((3 * a + r / 3) * dofs + 3 * b + r % 3));
      HessianSink sink(slots, hessian);
      term->add_derivatives(in, gradient, &sink);
    }
  }
};

SoftSpec shapes_spec() {
  SoftSpec spec;
  spec.name = "shapes";
  spec.dt = 0.01;
  spec.contact.barrier_distance = 0.02;  // a wide band: every probe node is in contact
  spec.contact.stiffness = 30.0;
  ObstacleSpec box;
  box.name = "box";
  box.type = ObstacleType::Box;
  box.point = {0.1, -0.05, 0.2};
  box.half_extents = {0.2, 0.15, 0.1};
  box.orientation = {0.9, 0.2, -0.3, 0.25};
  box.friction = 0.4;
  ObstacleSpec rounded = box;
  rounded.name = "rounded";
  rounded.point = {2.0, 0, 0};
  rounded.rounding = 0.03;
  ObstacleSpec capsule;
  capsule.name = "capsule";
  capsule.type = ObstacleType::Capsule;
  capsule.point = {-2.0, 0.1, 0};
  capsule.radius = 0.05;
  capsule.half_length = 0.2;
  capsule.orientation = {0.8, -0.1, 0.4, 0.3};
  capsule.friction = 0.7;
  ObstacleSpec moving = box;  // on a frame with a nontrivial pose
  moving.name = "moving";
  moving.frame = "paddle";
  moving.point = {0.05, 0.02, -0.01};
  spec.frames = {{"paddle", {0, 3.0, 0.5}, {0.7, 0.1, 0.6, -0.2}}};
  spec.obstacles = {box, rounded, capsule, moving};
  return spec;
}

// A point at distance `gap` from the shape, off the feature at shape-local direction
// `local` (unit-ish; its nonzero components choose face, edge or corner).
std::array<double, 3> near_shape(const SoftModel& model, const SoftParams& params, int shape, std::array<double, 3> local,
                                 double gap) {
  const Obstacle& o = model.obstacles[static_cast<std::size_t>(shape)];
  const std::array<double, 9>& q = o.rotation;
  std::array<double, 3> core{};  // closest point on the core, local
  double norm = 0.0;
  for (double v : local) norm += v * v;
  norm = std::sqrt(norm);
  for (double& v : local) v /= norm;
  const double reach = (o.type == ObstacleType::Box ? o.rounding : o.radius) + gap;
  if (o.type == ObstacleType::Box) {
    for (int i = 0; i < 3; ++i)
      core[static_cast<std::size_t>(i)] = local[static_cast<std::size_t>(i)] > 0.01    ? o.half_extents[static_cast<std::size_t>(i)]
                                          : local[static_cast<std::size_t>(i)] < -0.01 ? -o.half_extents[static_cast<std::size_t>(i)]
                                                                                     : 0.3 * o.half_extents[static_cast<std::size_t>(i)];
  } else {
    core = {0, 0, local[2] > 0.01 ? o.half_length : (local[2] < -0.01 ? -o.half_length : 0.05)};
    if (std::abs(local[2]) <= 0.01) local[2] = 0;
  }
  std::array<double, 3> z{};
  for (int r = 0; r < 3; ++r) {
    double sum = o.point[static_cast<std::size_t>(r)];
    for (int c = 0; c < 3; ++c)
      sum += q[static_cast<std::size_t>(3 * r + c)] * (core[static_cast<std::size_t>(c)] + reach * local[static_cast<std::size_t>(c)]);
    z[static_cast<std::size_t>(r)] = sum;
  }
  if (o.frame < 0) return z;
  const V3<double> world = from_frame(params.values.data() + model.layout.frame_pose[static_cast<std::size_t>(o.frame)],
                                      V3<double>{z[0], z[1], z[2]});
  return {world.x, world.y, world.z};
}

TEST(SoftShapes, BoxAndCapsuleContactDerivativesMatchCentralDifferences) {
  SoftSpec spec = shapes_spec();
  // Probe nodes: faces, edges and corners of each box, cylinder and caps of the capsule.
  const std::vector<std::array<double, 3>> box_directions = {{0, 0, 1}, {0.6, 0, 0.8}, {0.5, -0.6, 0.62}, {-1, 0, 0}};
  const std::vector<std::array<double, 3>> capsule_directions = {{1, 0, 0}, {0.3, 0.4, 0.8}, {-0.2, 0.1, -1}};
  // Built once to place the nodes, then rebuilt with them.
  spec.nodes = {{10, 10, 10}};
  spec.node_masses = {1};
  SoftBuild placement = build_soft(spec);
  spec.nodes.clear();
  const std::vector<double> gaps = {0.004, 0.011, 0.017, 0.008};
  for (int shape = 0; shape < 4; ++shape) {
    const auto& directions = shape == 2 ? capsule_directions : box_directions;
    for (std::size_t k = 0; k < directions.size(); ++k)
      spec.nodes.push_back(near_shape(placement.model, placement.params, shape, directions[k], gaps[k % gaps.size()]));
  }
  spec.node_masses.assign(spec.nodes.size(), 1.0);
  // A second frame pose at the step's start: the moving box turned and shifted a little.
  SoftBuild built = build_soft(spec);
  set_frame_pose(built.model, built.params, 0, {0.003, 2.998, 0.501}, {0.69, 0.12, 0.61, -0.19}, true);
  const ContactProbe probe{built.model, built.params};
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  std::vector<double> x(dofs), previous(dofs);
  for (std::size_t k = 0; k < dofs; ++k) {
    previous[k] = built.state.positions[k];
    // Small slips: some below ε_v h = 1e-5 m (the smoothed static regime), most above.
    x[k] = previous[k] + (k % 5 == 0 ? 3e-6 : 4e-4) * std::sin(1.7 * static_cast<double>(k) + 0.3);
  }
  ASSERT_TRUE(std::isfinite(probe.energy(x, previous)));
  ASSERT_GT(std::abs(probe.energy(x, previous)), 0.0);
  std::vector<double> gradient, hessian, g_plus, g_minus, h_scratch;
  probe.derivatives(x, previous, gradient, hessian);
  const double step = 1e-7;
  for (std::size_t k = 0; k < dofs; ++k) {
    std::vector<double> plus = x, minus = x;
    plus[k] += step;
    minus[k] -= step;
    const double numeric = (probe.energy(plus, previous) - probe.energy(minus, previous)) / (2 * step);
    EXPECT_NEAR(gradient[k], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "dE/dx[" << k << "]";
    probe.derivatives(plus, previous, g_plus, h_scratch);
    probe.derivatives(minus, previous, g_minus, h_scratch);
    for (std::size_t j = 0; j < dofs; ++j) {
      const double second = (g_plus[j] - g_minus[j]) / (2 * step);
      EXPECT_NEAR(hessian[j * dofs + k], second, 1e-4 * std::max(1.0, std::abs(second))) << "d²E/dx[" << j << "]dx[" << k << "]";
    }
  }
}

TEST(SoftShapes, DistanceRegionsAndContinuousCollision) {
  SoftSpec spec = shapes_spec();
  spec.nodes = {{10, 10, 10}};
  spec.node_masses = {1};
  const SoftBuild built = build_soft(spec);
  const Obstacle& box = built.model.obstacles[0];
  // An axis-aligned copy: exact distances in the face, edge and corner regions.
  Obstacle aligned = box;
  aligned.point = {0, 0, 0};
  aligned.rotation = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const auto d = [&](double x, double y, double z) { return shape_distance(aligned, V3<double>{x, y, z}, static_cast<V3<double>*>(nullptr)); };
  EXPECT_NEAR(d(0, 0, 0.13), 0.03, 1e-15);
  EXPECT_NEAR(d(0.23, 0, 0.14), std::hypot(0.03, 0.04), 1e-15);
  EXPECT_NEAR(d(0.21, -0.17, 0.12), std::sqrt(0.01 * 0.01 + 0.02 * 0.02 + 0.02 * 0.02), 1e-15);
  EXPECT_LT(d(0.1, 0.1, 0.05), 0.0);
  // Rounded: outer half extents as given, edges of radius 0.03.
  const Obstacle& rounded = built.model.obstacles[1];
  Obstacle rounded_aligned = rounded;
  rounded_aligned.point = {0, 0, 0};
  rounded_aligned.rotation = aligned.rotation;
  EXPECT_NEAR(shape_distance(rounded_aligned, V3<double>{0, 0, 0.13}, static_cast<V3<double>*>(nullptr)), 0.03, 1e-15);
  EXPECT_NEAR(shape_distance(rounded_aligned, V3<double>{0.2, 0.15, 0.1}, static_cast<V3<double>*>(nullptr)),
              0.03 * std::sqrt(3.0) - 0.03, 1e-15);
  // Capsule: cylinder and caps.
  Obstacle capsule = built.model.obstacles[2];
  capsule.point = {0, 0, 0};
  capsule.rotation = aligned.rotation;
  EXPECT_NEAR(shape_distance(capsule, V3<double>{0.08, 0, 0.1}, static_cast<V3<double>*>(nullptr)), 0.03, 1e-15);
  EXPECT_NEAR(shape_distance(capsule, V3<double>{0, 0.06, 0.28}, static_cast<V3<double>*>(nullptr)), 0.1 - 0.05, 1e-15);
  // Continuous collision: a segment through the box's edge region stops short of the surface
  // (0.9 of the way), one passing beside it is not limited.
  const V3<double> start{0.3, 0, 0.3}, through{-0.3, 0, -0.3}, beside{0.0, 0.5, 0.0};
  const double alpha = shape_max_step(aligned, start, through);
  const V3<double> hit{start.x + alpha / 0.9 * through.x, start.y, start.z + alpha / 0.9 * through.z};
  EXPECT_GE(d(hit.x, hit.y, hit.z), 0.0);  // never past the surface
  EXPECT_NEAR(d(hit.x, hit.y, hit.z), 0.0, 1e-9);
  EXPECT_EQ(shape_max_step(aligned, start, beside), 1.0);
  const double alpha_capsule = shape_max_step(capsule, V3<double>{0.2, 0.01, 0.35}, V3<double>{-0.4, 0, -0.4});
  const double capsule_gap = shape_distance(capsule, V3<double>{0.2 - 0.4 * alpha_capsule / 0.9, 0.01, 0.35 - 0.4 * alpha_capsule / 0.9},
                                            static_cast<V3<double>*>(nullptr));
  EXPECT_GE(capsule_gap, 0.0);
  EXPECT_NEAR(capsule_gap, 0.0, 1e-9);
}

// A one-cell cube resting in the band over a shape, with friction: rollout gradients against
// central differences, w.r.t. κ, μ, the stiffness, the frame pose and the initial state.
void check_contact_rollout(SoftSpec spec, int steps, const std::vector<std::string>& slices,
                           const std::function<void(SoftBuild&)>& adjust = {}) {
  spec.newton.tolerance = 1e-12;
  SoftBuild built = build_soft(spec);
  if (adjust) adjust(built);
  SoftParams params = built.params;
  const auto dofs = static_cast<std::size_t>(built.model.dof_count());
  const auto loss_of = [&](const SoftRollout& r) {
    double total = 0.0;
    const SoftState& s = r.final_state();
    for (std::size_t k = 0; k < dofs; ++k) total += std::sin(0.9 * static_cast<double>(k) + 0.2) * s.positions[k] + 0.1 * std::cos(1.1 * static_cast<double>(k)) * s.velocities[k];
    return total;
  };
  SoftRollout rollout(built.model, params);
  rollout.run(built.state, {}, steps);
  for (const SoftStepStatus& status : rollout.statuses()) ASSERT_TRUE(status.converged) << status.message;
  // Contact and friction are active along the way.
  int in_band = 0;
  for (int t = 0; t <= steps; ++t) {
    const SoftState s = rollout.state(t);
    for (int i = 0; i < built.model.node_count; ++i)
      for (const Obstacle& o : built.model.obstacles) {
        V3<double> z = load3(s.positions.data() + 3 * i);
        if (o.frame >= 0) z = to_frame(params.values.data() + built.model.layout.frame_pose[static_cast<std::size_t>(o.frame)], z);
        in_band += shape_distance(o, z, static_cast<V3<double>*>(nullptr)) < built.model.contact.barrier_distance ? 1 : 0;
      }
  }
  ASSERT_GT(in_band, steps);
  const SoftGradients g = rollout.backward([&](int t, const SoftState&, std::span<double> dx, std::span<double> dv) {
    if (t != steps) return;
    for (std::size_t k = 0; k < dofs; ++k) {
      dx[k] += std::sin(0.9 * static_cast<double>(k) + 0.2);
      dv[k] += 0.1 * std::cos(1.1 * static_cast<double>(k));
    }
  });
  const auto evaluate = [&](const SoftState& initial) {
    SoftRollout probe(built.model, params);
    probe.run(initial, {}, steps);
    return loss_of(probe);
  };
  for (const std::string& name : slices) {
    const std::span<double> slice = params.slice(built.model, name);
    const std::span<const double> analytic = g.param(built.model, name);
    for (std::size_t i = 0; i < slice.size(); ++i) {
      const double original = slice[i];
      const double epsilon = name.starts_with("frame/") ? 1e-7 : 1e-6 * std::max(1.0, std::abs(original));
      slice[i] = original + epsilon;
      const double plus = evaluate(built.state);
      slice[i] = original - epsilon;
      const double minus = evaluate(built.state);
      slice[i] = original;
      const double numeric = (plus - minus) / (2 * epsilon);
      EXPECT_NEAR(analytic[i], numeric, 3e-5 * std::max(1.0, std::abs(numeric))) << name << "[" << i << "]";
    }
  }
  for (std::size_t k = 0; k < dofs; k += 2) {
    for (const bool velocity : {false, true}) {
      SoftState plus = built.state, minus = built.state;
      auto& p = velocity ? plus.velocities : plus.positions;
      auto& m = velocity ? minus.velocities : minus.positions;
      const double epsilon = 1e-7;
      p[k] += epsilon;
      m[k] -= epsilon;
      const double numeric = (evaluate(plus) - evaluate(minus)) / (2 * epsilon);
      const double analytic = velocity ? g.initial_velocities[k] : g.initial_positions[k];
      EXPECT_NEAR(analytic, numeric, 3e-5 * std::max(1.0, std::abs(numeric))) << (velocity ? "dL/dv0[" : "dL/dx0[") << k << "]";
    }
  }
}

// A one-cell corotated cube whose bottom face rests `gap` above the top face of `shape`
// (shape-local +z up), moving with `velocity` along the face.
SoftSpec cube_on(const ObstacleSpec& shape, double top, double gap, const Vector3& velocity,
                 const std::array<int, 3>& cells = {1, 1, 1}) {
  SoftSpec spec;
  spec.name = "cube_on_shape";
  spec.dt = 0.01;
  spec.tet_materials = {{"foam", ElasticModel::Corotated, 3e4, 0.3, 400.0, 2.0}};
  add_tet_box(spec, {-0.04, -0.04, top + gap}, {0.08, 0.08, 0.08}, cells, 0);
  spec.initial_velocities.assign(spec.nodes.size(), velocity);
  spec.contact.barrier_distance = 2e-3;
  spec.contact.stiffness = 40.0;
  spec.obstacles = {shape};
  return spec;
}

TEST(SoftShapes, RolloutGradientsThroughBoxContactWithFriction) {
  ObstacleSpec box;
  box.name = "table";
  box.type = ObstacleType::Box;
  box.point = {0.02, 0.01, -0.1};
  box.half_extents = {0.3, 0.2, 0.1};
  box.rounding = 0.01;
  box.friction = 0.4;
  check_contact_rollout(cube_on(box, 0.0, 1e-3, {0.15, 0.05, -0.02}), 6,
                        {"contact_stiffness", "obstacle/table/friction", "tet_material/foam/youngs_modulus"});
}

TEST(SoftShapes, RolloutGradientsThroughCapsuleContactWithFriction) {
  ObstacleSpec capsule;
  capsule.name = "rail";
  capsule.type = ObstacleType::Capsule;
  capsule.point = {0.0, 0.0, -0.05};
  capsule.radius = 0.05;
  capsule.half_length = 0.3;
  capsule.orientation = about_y(std::numbers::pi / 2);  // along x
  capsule.friction = 0.5;
  // Two cells across: the middle row of bottom nodes rests on the capsule's top line.
  check_contact_rollout(cube_on(capsule, 0.0, 1e-3, {0.1, 0.0, 0.0}, {1, 2, 1}), 6, {"contact_stiffness", "obstacle/rail/friction"});
}

TEST(SoftShapes, RolloutGradientsWithRespectToAFramePose) {
  // The box moves with a frame whose pose at the step's start differs from its end: lagged
  // friction sees the slip relative to the moving surface; dL/d(pose) and dL/d(previous pose)
  // against central differences.
  ObstacleSpec box;
  box.name = "paddle";
  box.type = ObstacleType::Box;
  box.point = {0, 0, -0.1};
  box.half_extents = {0.3, 0.2, 0.1};
  box.friction = 0.6;
  box.frame = "carrier";
  SoftSpec spec = cube_on(box, 0.0, 1e-3, {0.02, 0.0, -0.03});
  spec.frames = {{"carrier", {0, 0, 0}, {1, 0, 0, 0}}};
  // The end-of-step pose shifted and turned against the start-of-step (previous) pose.
  check_contact_rollout(spec, 4, {"frame/carrier/pose", "frame/carrier/previous_pose", "obstacle/paddle/friction"},
                        [](SoftBuild& built) {
                          set_frame_pose(built.model, built.params, 0, {0.004, -0.002, -0.0005},
                                         {std::cos(0.01), 0.0, 0.0, std::sin(0.01)}, false);
                        });
}

double distance_to(const SoftModel& model, const Obstacle& o, const std::vector<double>& positions, int node) {
  (void)model;
  return shape_distance(o, load3(positions.data() + 3 * node), static_cast<V3<double>*>(nullptr));
}

// Cloth dropped onto a shape: every node stays strictly outside at every step, the nodes
// resting on the shape end inside the barrier band (d < d̂), and the cloth comes to rest.
void drape(const ObstacleSpec& shape, double drop_height) {
  SoftSpec spec;
  spec.name = "drape";
  spec.dt = 0.01;
  spec.cloth_materials = {{"cotton", 200.0, 0.3, 1e-4, 0.2}};
  add_cloth_rectangle(spec, {-0.2, -0.2, drop_height}, {0.4, 0, 0}, {0, 0.4, 0}, 8, 8, 0);
  spec.contact.barrier_distance = 2e-3;
  spec.contact.stiffness = 1.0;
  spec.obstacles = {shape};
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState state = built.state, next;
  const Obstacle& o = built.model.obstacles[0];
  double closest = 1e9;
  for (int t = 0; t < 120; ++t) {
    const SoftStepStatus status = soft_step(built.model, built.params, state, {}, next, workspace);
    ASSERT_TRUE(status.converged) << "step " << t << ": " << status.message;
    std::swap(state, next);
    for (int i = 0; i < built.model.node_count; ++i) closest = std::min(closest, distance_to(built.model, o, state.positions, i));
  }
  EXPECT_GT(closest, 0.0);  // never inside
  int resting = 0;
  for (int i = 0; i < built.model.node_count; ++i) {
    const double d = distance_to(built.model, o, state.positions, i);
    if (d < spec.contact.barrier_distance) ++resting;
  }
  EXPECT_GE(resting, 3) << "the cloth should rest on the shape";
}

TEST(SoftShapes, ClothDrapedOverABoxStaysOutside) {
  ObstacleSpec box;
  box.name = "box";
  box.type = ObstacleType::Box;
  box.point = {0, 0, 0};
  box.half_extents = {0.08, 0.08, 0.08};
  box.orientation = {std::cos(0.2), 0, 0, std::sin(0.2)};  // turned about z: the cloth edges cross the box edges
  box.friction = 0.3;
  drape(box, 0.0815);
}

TEST(SoftShapes, ClothDrapedOverACapsuleStaysOutside) {
  ObstacleSpec capsule;
  capsule.name = "bar";
  capsule.type = ObstacleType::Capsule;
  capsule.point = {0, 0, 0};
  capsule.radius = 0.04;
  capsule.half_length = 0.1;
  capsule.orientation = about_y(std::numbers::pi / 2);
  capsule.friction = 0.3;
  drape(capsule, 0.0415);
}

// A cube on a box tilted by θ about y, friction μ = 0.5 (tan θ* = 0.5): it sticks when
// tan θ < μ (creeping at about the smoothing speed ε_v tan θ/(2μ) = 0.4 mm/s of the lagged
// friction's static regime; measured 0.55 mm/s, the load is not shared evenly by the nodes)
// and slides with a = g (sin θ − μ cos θ) when tan θ > μ (measured 5 % faster: the lagged
// normal force trails the cube's small normal vibrations; a friction 3 % lower would already
// leave the 10 % band).
double incline_speed(double tan_theta, double seconds, double* expected_speed) {
  const double theta = std::atan(tan_theta);
  const double mu = 0.5;
  SoftSpec spec;
  spec.name = "incline";
  spec.dt = 0.01;
  spec.tet_materials = {{"rubber", ElasticModel::Corotated, 2e5, 0.3, 1000.0, 5.0}};
  add_tet_box(spec, {-0.04, -0.04, 0.0006}, {0.08, 0.08, 0.08}, {1, 1, 1}, 0);
  // Rotate the cube with the incline: the box's top face is z = 0 in the rotated frame.
  const double c = std::cos(theta), s = std::sin(theta);
  for (Vector3& node : spec.nodes) node = {c * node[0] + s * node[2], node[1], -s * node[0] + c * node[2]};
  ObstacleSpec box;
  box.name = "incline";
  box.type = ObstacleType::Box;
  box.point = {s * -0.05, 0, c * -0.05};
  box.half_extents = {2.0, 0.5, 0.05};
  box.orientation = about_y(theta);
  box.friction = mu;
  spec.obstacles = {box};
  spec.contact.barrier_distance = 1e-3;
  spec.contact.stiffness = 100.0;
  SoftBuild built = build_soft(spec);
  SoftWorkspace workspace(built.model);
  SoftState state = built.state, next;
  const int steps = static_cast<int>(std::lround(seconds / spec.dt));
  for (int t = 0; t < steps; ++t) {
    const SoftStepStatus status = soft_step(built.model, built.params, state, {}, next, workspace);
    EXPECT_TRUE(status.converged) << status.message;
    std::swap(state, next);
  }
  // Mean velocity down the slope: gravity's tangential part points along (cos θ, 0, −sin θ).
  double along = 0.0;
  for (int i = 0; i < built.model.node_count; ++i)
    along += c * state.velocities[static_cast<std::size_t>(3 * i)] - s * state.velocities[static_cast<std::size_t>(3 * i + 2)];
  along /= built.model.node_count;
  *expected_speed = 9.81 * (s - mu * c) * seconds;
  return along;
}

TEST(SoftShapes, CubeOnAnInclinedBoxSlidesIffTanThetaExceedsMu) {
  double expected = 0.0;
  const double stick = incline_speed(0.4, 0.6, &expected);
  EXPECT_LT(std::abs(stick), 1e-3) << "tan θ = 0.4 < μ = 0.5: the cube should stay (creep ≤ ε_v)";
  const double slide = incline_speed(0.65, 0.6, &expected);
  EXPECT_NEAR(std::abs(slide), expected, 0.1 * expected) << "tan θ = 0.65 > μ: a = g (sin θ − μ cos θ)";
}

TEST(SoftShapes, SceneFileBoxCapsuleAndFrames) {
  const std::string text = R"({"soft": {"name": "shapes", "nodes": [[0, 0, 0.5]], "node_masses": [1],
    "frames": [{"name": "carrier", "position": [0, 0, 0], "euler": [0, 0, 30]}],
    "frame_attachments": [{"node": 0, "frame": "carrier", "point": [0, 0, 0.5], "stiffness": 100}],
    "obstacles": [{"name": "b", "type": "box", "center": [0, 0, 0], "half_extents": [0.1, 0.2, 0.3], "rounding": 0.01,
                   "euler": [0, 90, 0], "friction": 0.2},
                  {"name": "c", "type": "capsule", "center": [2, 0, 0], "radius": 0.1, "half_length": 0.2,
                   "orientation": [1, 0, 0, 1], "frame": "carrier"}]}})";
  const SoftBuild built = build_soft(parse_soft_scene(text));
  ASSERT_EQ(built.model.obstacles.size(), 2u);
  EXPECT_EQ(built.model.obstacles[0].type, ObstacleType::Box);
  EXPECT_NEAR(built.model.obstacles[0].rotation[2], 1.0, 1e-12);  // euler pitch 90°: local z → +x
  EXPECT_NEAR(built.model.obstacles[0].half_extents[0], 0.09, 1e-15);
  EXPECT_EQ(built.model.obstacles[1].frame, 0);
  EXPECT_EQ(built.model.frame_attachment_nodes.size(), 1u);
  const auto pose = built.params.slice(built.model, "frame/carrier/pose");
  EXPECT_NEAR(pose[3], std::cos(std::numbers::pi / 6), 1e-12);
  EXPECT_NEAR(pose[6], std::sin(std::numbers::pi / 6), 1e-12);
  const auto refuses = [](const std::string& scene, const std::string& needle) {
    try {
      build_soft(parse_soft_scene(scene));
      ADD_FAILURE() << "accepted: " << scene;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  const std::string head = R"({"soft": {"nodes": [[0, 0, 1]], "node_masses": [1], "obstacles": [)";
  refuses(head + R"({"name": "b", "type": "box", "half_extents": [0.1, 0, 0.1]}]}})", "half_extents must be positive");
  refuses(head + R"({"name": "b", "type": "box", "half_extents": [0.1, 0.1, 0.1], "rounding": 0.2}]}})", "rounding");
  refuses(head + R"({"name": "c", "type": "capsule", "radius": 0.1}]}})", "half_length");
  refuses(head + R"({"name": "b", "type": "box", "half_extents": [1, 1, 1], "frame": "nowhere"}]}})", "unknown frame 'nowhere'");
  refuses(head + R"({"name": "b", "type": "box", "half_extents": [1, 1, 1], "radius": 1}]}})", "unknown key \"radius\"");
  refuses(head + R"({"name": "b", "type": "box", "half_extents": [0.1, 0.1, 0.1], "center": [0, 0, 1]}]}})", "strictly outside");
}

}  // namespace
}  // namespace diffphys::soft
