// tests/convex_factor_reuse_test.cpp — the convex Newton solver's reuse of its Hessian
// factorisation (solve/convex.hpp: ProjectionPiece, ConvexWorkspace::factor_at_solution_island):
// the pieces are project_group's branches, and the backward pass that solves with the forward
// factorisation gets the same bits as one that assembles and factorises the Hessian anew.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "adjoint/convex_vjp.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/simulator.hpp"
#include "rigid/step_workspace.hpp"
#include "solve/convex.hpp"
#include "test_scenes.hpp"

namespace diffphys::convex_factor_reuse_test {
namespace {

using solve::ConvexGroup;
using solve::ConvexGroupKind;
using solve::ProjectionPiece;

// project_group's derivative on `piece`: the identity (γ = y), zero (γ = 0 or a box's bound),
// or — sliding — neither.
void expect_piece_matches_projection(const ConvexGroup& group, const double* y) {
  const ProjectionPiece piece = solve::projection_piece(group, y);
  const solve::GroupProjection projection = solve::project_group(group, y);
  bool identity = true, zero = true;
  for (int r = 0; r < group.size; ++r)
    for (int c = 0; c < group.size; ++c) {
      identity = identity && projection.jacobian[r][c] == (r == c ? 1.0 : 0.0);
      zero = zero && projection.jacobian[r][c] == 0.0;
    }
  const auto where = ::testing::Message() << "kind " << static_cast<int>(group.kind) << ", y = (" << y[0] << ", "
                                          << (group.size > 1 ? y[1] : 0.0) << ", " << (group.size > 1 ? y[2] : 0.0)
                                          << ")";
  switch (piece) {
    case ProjectionPiece::Identity:
      EXPECT_TRUE(identity) << where;
      for (int r = 0; r < group.size; ++r) EXPECT_EQ(projection.gamma[r], y[r]) << where;
      break;
    case ProjectionPiece::Zero:
      EXPECT_TRUE(zero) << where;
      for (int r = 0; r < group.size; ++r) EXPECT_EQ(projection.gamma[r], 0.0) << where;
      break;
    case ProjectionPiece::BoxUpper:
    case ProjectionPiece::BoxLower:
      EXPECT_TRUE(zero) << where;
      EXPECT_EQ(projection.gamma[0], piece == ProjectionPiece::BoxUpper ? group.bound : -group.bound) << where;
      break;
    case ProjectionPiece::Sliding:
      EXPECT_FALSE(identity || zero) << where;
      break;
  }
}

// On a grid of y through every branch and onto each boundary (the cone's surface and its
// polar's, a box's ends, 0), each group kind's piece is the branch project_group takes.
TEST(ConvexFactorReuse, ProjectionPiecesAreProjectGroupsBranches) {
  const double values[] = {-2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0};
  for (const ConvexGroupKind kind : {ConvexGroupKind::Free, ConvexGroupKind::NonNegative, ConvexGroupKind::Box}) {
    ConvexGroup group;
    group.kind = kind;
    group.bound = 0.5;
    for (const double value : values) expect_piece_matches_projection(group, &value);
  }
  ConvexGroup cone;
  cone.kind = ConvexGroupKind::Cone;
  cone.size = 3;
  cone.bound = 0.5;  // μ: ‖t‖ = 0.5 n on the surface, n = −0.5‖t‖ on the polar cone's
  int sliding = 0, inside = 0, polar = 0;
  for (const double n : values)
    for (const double t1 : values)
      for (const double t2 : {0.0, 0.5}) {
        const double y[3] = {n, t1, t2};
        expect_piece_matches_projection(cone, y);
        const ProjectionPiece piece = solve::projection_piece(cone, y);
        sliding += piece == ProjectionPiece::Sliding;
        inside += piece == ProjectionPiece::Identity;
        polar += piece == ProjectionPiece::Zero;
      }
  EXPECT_GT(sliding, 0);
  EXPECT_GT(inside, 0);
  EXPECT_GT(polar, 0);
}

// A box on the ground after `settle` steps of the convex formulation, then one more step
// whose record is returned in `workspace`; `push` (m/s along x) makes it slide.
void step_box(Workspace& workspace, int settle, double push) {
  ModelBuilder builder;
  builder.dt = 1e-3;
  builder.solver.formulation = Formulation::Convex;
  builder.add_ground_plane();
  builder.add_body(testing::box_body("box", {0, 0, 0.05}, {0.1, 0.08, 0.05}, 2.0));
  const Scene scene = builder.build();
  Simulator simulator(scene.model, scene.params, scene.state);
  for (int i = 0; i < settle; ++i) simulator.step();
  State start = simulator.state();
  start.linear_velocity[1].x += push;
  State next = start;
  step(scene.model, scene.params, start, {}, next, workspace);
}

// convex_vjp with the forward solve's workspace (`prepared`) and without it, for one velocity
// adjoint: every output equal, bit for bit.
void expect_same_vjp_with_and_without_forward_factor(const Workspace& workspace) {
  const Workspace::Impl& record = workspace.impl();
  const solve::MassBlocks mass = record.bodies.mass_blocks();
  const std::size_t dof = record.velocity.size(), rows = record.rows.size(), bodies = dof / 6;
  std::vector<double> velocity_adjoint(dof);
  for (std::size_t i = 0; i < dof; ++i) velocity_adjoint[i] = std::sin(1.0 + 0.7 * static_cast<double>(i));
  struct Output {
    std::vector<double> free_velocity_adjoint;
    std::vector<adjoint::RowAdjoint> rows;
    adjoint::MassAdjoint mass;
  };
  const auto run = [&](const solve::ConvexWorkspace* prepared) {
    Output out;
    out.free_velocity_adjoint.assign(dof, 0.0);
    out.rows.assign(rows, adjoint::RowAdjoint{});
    out.mass.inverse_mass.assign(bodies, 0.0);
    out.mass.inverse_inertia.assign(bodies, Mat3{});
    adjoint::ConvexVjpWorkspace scratch;
    adjoint::convex_vjp(record.rows, mass, record.velocity, velocity_adjoint, out.free_velocity_adjoint, out.rows,
                        out.mass, prepared, scratch);
    return out;
  };
  const Output reused = run(&record.convex), fresh = run(nullptr);
  for (std::size_t i = 0; i < dof; ++i) EXPECT_EQ(reused.free_velocity_adjoint[i], fresh.free_velocity_adjoint[i]) << i;
  for (std::size_t r = 0; r < rows; ++r) {
    EXPECT_EQ(reused.rows[r].rhs, fresh.rows[r].rhs) << "row " << r;
    EXPECT_EQ(reused.rows[r].softness, fresh.rows[r].softness) << "row " << r;
    EXPECT_EQ(reused.rows[r].coefficient, fresh.rows[r].coefficient) << "row " << r;
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(reused.rows[r].linear_a[k], fresh.rows[r].linear_a[k]) << "row " << r;
      EXPECT_EQ(reused.rows[r].angular_b[k], fresh.rows[r].angular_b[k]) << "row " << r;
    }
  }
  for (std::size_t b = 0; b < bodies; ++b) EXPECT_EQ(reused.mass.inverse_mass[b], fresh.mass.inverse_mass[b]) << b;
}

// At rest every contact sticks: the forward's last factorisation is the Hessian at the
// solution, and the backward pass solving with it gets what a fresh factorisation gives.
TEST(ConvexFactorReuse, RestingBoxBackwardSolvesWithTheForwardFactorisation) {
  Workspace workspace;
  step_box(workspace, 300, 0.0);
  ASSERT_GE(workspace.impl().rows.size(), 4U) << "the box on its contacts";
  EXPECT_EQ(workspace.impl().convex.factor_at_solution_island, 0);
  expect_same_vjp_with_and_without_forward_factor(workspace);
}

// Sliding, a cone's Hessian term varies with y: the forward factorisation is not the one at
// the solution, so it is not offered, and the backward pass factorises anew.
TEST(ConvexFactorReuse, SlidingBoxBackwardFactorisesAtTheSolution) {
  Workspace workspace;
  step_box(workspace, 300, 1.0);
  EXPECT_EQ(workspace.impl().convex.factor_at_solution_island, -1);
  expect_same_vjp_with_and_without_forward_factor(workspace);
}

}  // namespace
}  // namespace diffphys::convex_factor_reuse_test
