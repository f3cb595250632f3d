// tests/lcp_vjp_sparse_test.cpp — the LCP adjoint's sparse LU (adjoint/lcp_vjp.hpp, KLU) gives
// the dense LU's answer (both refined) on a pile of spheres in a box, where K has hundreds of active rows,
// friction groups at the cone's edge (F couplings) and redundant sticking directions (the
// 1e-10 Tikhonov term at work): every output of lcp_vjp, step by step, and the gradient of a
// whole backward pass (dL/dθ, dL/dx_0) through step_vjp with either solve.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "adjoint/lcp_vjp.hpp"
#include "adjoint/step_vjp.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"
#include "rigid/step_workspace.hpp"

namespace diffphys::adjoint {
namespace {

constexpr double kRadius = 0.05, kInnerHalfWidth = 0.16, kWallHalfThickness = 0.05, kWallHalfHeight = 0.2;
constexpr int kSettleSteps = 300;

// 18 spheres (two 3×3 layers, the upper one shifted into the lower one's pockets) dropped into
// a box with friction, settled for 0.3 s with projected Gauss–Seidel: a small resting pile.
Scene settled_pile() {
  ModelBuilder builder;
  builder.name = "small_pile";
  builder.dt = 1e-3;
  builder.solver.type = SolverType::ProjectedGaussSeidel;
  // The fixed pyramid: the pile this test was measured on. With the slip-aligned default, the
  // active system PGS's inexact answer leaves is worse conditioned (measured: KLU's relative
  // residual up to 3e-11, the two LUs 7e-9 apart), which says nothing about either LU.
  builder.solver.slip_aligned_friction = false;
  builder.world_friction = 0.5;
  builder.add_ground_plane();
  const double wall_center = kInnerHalfWidth + kWallHalfThickness;
  const double outer = kInnerHalfWidth + 2 * kWallHalfThickness;
  const Vec3 centers[4] = {{-wall_center, 0, kWallHalfHeight}, {wall_center, 0, kWallHalfHeight},
                           {0, -wall_center, kWallHalfHeight}, {0, wall_center, kWallHalfHeight}};
  const Vec3 extents[4] = {{kWallHalfThickness, outer, kWallHalfHeight}, {kWallHalfThickness, outer, kWallHalfHeight},
                           {kInnerHalfWidth, kWallHalfThickness, kWallHalfHeight},
                           {kInnerHalfWidth, kWallHalfThickness, kWallHalfHeight}};
  for (int w = 0; w < 4; ++w) {
    BodySpec wall;
    wall.name = "wall" + std::to_string(w);
    wall.type = BodyType::Static;
    wall.position = centers[w];
    wall.friction = 0.5;
    ShapeSpec box;
    box.type = ShapeType::Box;
    box.half_extents = extents[w];
    wall.shapes.push_back(box);
    builder.add_body(wall);
  }
  int index = 0;
  for (int layer = 0; layer < 2; ++layer)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        BodySpec sphere;
        sphere.name = "sphere" + std::to_string(index++);
        const double shift = layer == 1 ? 0.025 : 0.0;
        sphere.position = {0.105 * (i - 1) + shift, 0.105 * (j - 1) - shift, 0.06 + 0.1 * layer};
        sphere.mass = 0.1;
        sphere.inertia = Vec3{0.4 * 0.1 * kRadius * kRadius, 0.4 * 0.1 * kRadius * kRadius, 0.4 * 0.1 * kRadius * kRadius};
        sphere.friction = 0.5;
        ShapeSpec ball;
        ball.type = ShapeType::Sphere;
        ball.radius = kRadius;
        sphere.shapes.push_back(ball);
        builder.add_body(sphere);
      }
  Scene scene = builder.build();
  State next = scene.state;
  Workspace workspace;
  for (int k = 0; k < kSettleSteps; ++k) {
    step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
    std::swap(scene.state, next);
  }
  return scene;
}

// max |a − b| over max |b| (or 1e-300): the relative distance of two outputs.
double relative_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0, scale = 1e-300;
  for (std::size_t k = 0; k < a.size(); ++k) {
    difference = std::max(difference, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return difference / scale;
}

struct LcpOutputs {
  std::vector<double> free_velocity, rows, inverse_mass, inverse_inertia;
};

LcpOutputs run_lcp_vjp(const Workspace::Impl& record, std::span<const double> velocity_adjoint, LcpVjpWorkspace& ws) {
  const solve::MassBlocks mass = record.bodies.mass_blocks();
  const std::size_t bodies = mass.inverse_mass.size();
  std::vector<double> free_velocity(record.velocity.size(), 0.0);
  std::vector<RowAdjoint> rows(record.rows.size());
  MassAdjoint mass_adjoint{std::vector<double>(bodies, 0.0), std::vector<Mat3>(bodies)};
  lcp_vjp(record.rows, mass, record.lambda, record.velocity, velocity_adjoint, free_velocity, rows, mass_adjoint, ws);
  LcpOutputs out;
  out.free_velocity = free_velocity;
  for (const RowAdjoint& row : rows)
    for (const Vec3& v : {row.linear_a, row.angular_a, row.linear_b, row.angular_b}) out.rows.insert(out.rows.end(), {v.x, v.y, v.z});
  for (const RowAdjoint& row : rows) out.rows.insert(out.rows.end(), {row.rhs, row.coefficient});
  out.inverse_mass = mass_adjoint.inverse_mass;
  for (const Mat3& m : mass_adjoint.inverse_inertia)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) out.inverse_inertia.push_back(m(r, c));
  return out;
}

TEST(LcpVjpSparse, MatchesTheDenseLuStepByStepOnASpherePile) {
  Scene scene = settled_pile();
  State next = scene.state;
  Workspace workspace;
  LcpVjpWorkspace dense, sparse;
  dense.solve = LcpAdjointSolve::Dense;
  sparse.solve = LcpAdjointSolve::Sparse;
  std::size_t largest_active = 0;
  int coupled_groups = 0;
  for (int t = 0; t < 10; ++t) {
    step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
    std::swap(scene.state, next);
    const Workspace::Impl& record = workspace.impl();
    std::vector<double> velocity_adjoint(record.velocity.size());
    for (std::size_t k = 6; k < velocity_adjoint.size(); ++k) velocity_adjoint[k] = std::sin(0.7 * static_cast<double>(k) + t);
    const LcpOutputs reference = run_lcp_vjp(record, velocity_adjoint, dense);
    const LcpOutputs fresh = run_lcp_vjp(record, velocity_adjoint, sparse);
    ASSERT_TRUE(sparse.used_sparse) << "step " << t;
    ASSERT_FALSE(dense.used_sparse);
    EXPECT_LE(sparse.relative_residual, 1e-12) << "step " << t;
    // The same matrix again: the ordering and pivot sequence are reused (klu_refactor).
    const long refactorizations = sparse.sparse_refactorizations;
    const LcpOutputs refactored = run_lcp_vjp(record, velocity_adjoint, sparse);
    EXPECT_EQ(sparse.sparse_refactorizations, refactorizations + 1) << "step " << t;
    for (const LcpOutputs* outputs : {&fresh, &refactored}) {
      EXPECT_LE(relative_distance(outputs->free_velocity, reference.free_velocity), 1e-9) << "step " << t;
      EXPECT_LE(relative_distance(outputs->rows, reference.rows), 1e-9) << "step " << t;
      EXPECT_LE(relative_distance(outputs->inverse_mass, reference.inverse_mass), 1e-9) << "step " << t;
      EXPECT_LE(relative_distance(outputs->inverse_inertia, reference.inverse_inertia), 1e-9) << "step " << t;
    }
    largest_active = std::max(largest_active, sparse.active.size());
    for (const int i : sparse.active)
      if (record.rows[static_cast<std::size_t>(i)].type == solve::RowType::Bound) ++coupled_groups;
  }
  // The pile is what the test claims: a large active set with friction groups coupled by F.
  EXPECT_GE(largest_active, kSparseAdjointRows);
  EXPECT_GT(coupled_groups, 0);
}

TEST(LcpVjpSparse, WholeBackwardPassMatchesTheDenseLu) {
  const Scene scene = settled_pile();
  const Model& model = scene.model;
  const Params& params = scene.params;
  constexpr int steps = 20;
  // Forward, keeping every state and every step's record.
  std::vector<State> states(steps + 1, scene.state);
  std::vector<Workspace> records(steps);
  for (int t = 0; t < steps; ++t)
    step(model, params, states[static_cast<std::size_t>(t)], scene.controls, states[static_cast<std::size_t>(t) + 1],
         records[static_cast<std::size_t>(t)]);
  const std::size_t tangent = static_cast<std::size_t>(kBodyTangent * model.body_count());
  struct Result {
    std::vector<double> params, initial_state;
    int sparse_steps = 0;
  };
  // L = Σ_b |p_b(T)|² over the spheres; backward through step_vjp with the given solve.
  const auto backward = [&](LcpAdjointSolve solve) {
    StepVjpWorkspace vjp;
    vjp.lcp.solve = solve;
    Result result;
    result.params.assign(params.values.size(), 0.0);
    std::vector<double> adjoint(tangent, 0.0), previous(tangent, 0.0), controls;
    for (int b = 0; b < model.body_count(); ++b)
      if (model.bodies[static_cast<std::size_t>(b)].type == BodyType::Dynamic)
        for (int k = 0; k < 3; ++k)
          adjoint[static_cast<std::size_t>(kBodyTangent * b + k)] = 2 * states[steps].position[static_cast<std::size_t>(b)][k];
    for (int t = steps - 1; t >= 0; --t) {
      std::fill(previous.begin(), previous.end(), 0.0);
      step_vjp(model, params, states[static_cast<std::size_t>(t)], scene.controls, records[static_cast<std::size_t>(t)],
               states[static_cast<std::size_t>(t) + 1], adjoint, previous, controls, result.params, vjp);
      std::swap(adjoint, previous);
      if (vjp.lcp.used_sparse) ++result.sparse_steps;
    }
    result.initial_state = adjoint;
    return result;
  };
  const Result dense = backward(LcpAdjointSolve::Dense);
  const Result sparse = backward(LcpAdjointSolve::Sparse);
  EXPECT_EQ(dense.sparse_steps, 0);
  EXPECT_EQ(sparse.sparse_steps, steps);
  // Each step's LCP adjoint agrees to 1e-9 (the test above); twenty steps of the backward
  // pass compose those differences with the pile's own sensitivity (measured: ~7e-8).
  EXPECT_LE(relative_distance(sparse.params, dense.params), 1e-6);
  EXPECT_LE(relative_distance(sparse.initial_state, dense.initial_state), 1e-6);
  // Automatic picks the sparse LU for this many rows and agrees too.
  const Result automatic = backward(LcpAdjointSolve::Automatic);
  EXPECT_GT(automatic.sparse_steps, 0);
  EXPECT_LE(relative_distance(automatic.params, dense.params), 1e-6);
}

}  // namespace
}  // namespace diffphys::adjoint
