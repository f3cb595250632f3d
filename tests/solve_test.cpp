// tests/solve_test.cpp — the mixed-LCP machinery on problems with known answers: Lemke's
// pivoting, the sparse envelope LDLᵀ and the body-block Cholesky against dense solves, and
// both step solvers agreeing with each other on random frictional problems.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "diffphys/error.hpp"
#include "solve/body_block_cholesky.hpp"
#include "solve/dense_cholesky.hpp"
#include "solve/dense_lu.hpp"
#include "solve/envelope_ldlt.hpp"
#include "solve/envelope_lu.hpp"
#include "solve/lemke.hpp"
#include "solve/mlcp.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys::solve {
namespace {

TEST(Lemke, SolvesATwoByTwoLcpWithBothVariablesActive) {
  // w = M z + q with M = [2 1; 1 2], q = (−5, −6): both w = 0 → z = M⁻¹(5, 6) = (4/3, 7/3).
  const std::vector<double> matrix{2, 1, 1, 2}, q{-5, -6};
  std::vector<double> z(2);
  LemkeWorkspace workspace;
  ASSERT_TRUE(solve_lemke(matrix, q, 2, 100, workspace, z));
  EXPECT_NEAR(z[0], 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(z[1], 7.0 / 3.0, 1e-12);
}

TEST(Lemke, SolvesRandomPositiveDefiniteLcps) {
  std::mt19937 random(7);
  std::normal_distribution<double> normal;
  LemkeWorkspace workspace;
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 2 + trial % 12;
    std::vector<double> a(static_cast<std::size_t>(n * n)), matrix(static_cast<std::size_t>(n * n)), q(static_cast<std::size_t>(n));
    for (double& value : a) value = normal(random);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = i == j ? 0.1 : 0.0;
        for (int k = 0; k < n; ++k) sum += a[static_cast<std::size_t>(i * n + k)] * a[static_cast<std::size_t>(j * n + k)];
        matrix[static_cast<std::size_t>(i * n + j)] = sum;
      }
    for (double& value : q) value = normal(random);
    std::vector<double> z(static_cast<std::size_t>(n));
    ASSERT_TRUE(solve_lemke(matrix, q, n, 1000, workspace, z)) << "trial " << trial;
    for (int i = 0; i < n; ++i) {
      double w = q[static_cast<std::size_t>(i)];
      for (int j = 0; j < n; ++j) w += matrix[static_cast<std::size_t>(i * n + j)] * z[static_cast<std::size_t>(j)];
      EXPECT_GE(z[static_cast<std::size_t>(i)], 0.0);
      EXPECT_GE(w, -1e-9);
      EXPECT_LT(std::abs(w * z[static_cast<std::size_t>(i)]), 1e-9);
    }
  }
}

// Two free bodies (unit mass, identity inertia) and `rows` random equality rows between them.
struct RandomSystem {
  std::vector<ConstraintRow> rows;
  std::vector<double> inverse_mass{0.0, 1.0, 0.5, 2.0};
  std::vector<Mat3> inverse_inertia{Mat3{}, Mat3::identity(), Mat3::identity() * 0.5, Mat3::identity() * 3.0};
  MassBlocks mass() const { return {inverse_mass, inverse_inertia}; }
};

RandomSystem random_chain_rows(int count, std::mt19937& random) {
  std::normal_distribution<double> normal;
  RandomSystem system;
  for (int i = 0; i < count; ++i) {
    ConstraintRow row;
    row.body_a = i % 3;  // world (0), 1, 2: rows couple along a chain 0–1–2–3
    row.body_b = i % 3 + 1;
    row.linear_a = {normal(random), normal(random), normal(random)};
    row.angular_a = {normal(random), normal(random), normal(random)};
    row.linear_b = {normal(random), normal(random), normal(random)};
    row.angular_b = {normal(random), normal(random), normal(random)};
    row.rhs = normal(random);
    system.rows.push_back(row);
  }
  return system;
}

TEST(EnvelopeLdlt, MatchesADenseSolveOfTheDelassusSystem) {
  std::mt19937 random(3);
  for (const int count : {1, 4, 9}) {
    const RandomSystem system = random_chain_rows(count, random);
    MlcpWorkspace workspace;
    std::vector<double> b(static_cast<std::size_t>(count)), x(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) b[static_cast<std::size_t>(i)] = 0.3 * i - 1.0;
    ASSERT_TRUE(solve_delassus(system.rows, system.mass(), b, x, workspace));
    // Dense A from the same rows, multiplied back.
    for (int i = 0; i < count; ++i) {
      double sum = 0.0;
      for (int j = 0; j < count; ++j)
        sum += delassus_entry(system.rows[static_cast<std::size_t>(i)], system.rows[static_cast<std::size_t>(j)],
                              row_response(system.rows[static_cast<std::size_t>(j)], system.mass())) *
               x[static_cast<std::size_t>(j)];
      EXPECT_NEAR(sum, b[static_cast<std::size_t>(i)], 1e-8 * (1 + std::abs(b[static_cast<std::size_t>(i)])));
    }
  }
}

// An unsymmetric perturbation of the Delassus matrix (B_ij = J_i · w_j, w_j = M⁻¹J_jᵀ + noise
// on row j's bodies), as the joint projection's backward pass builds it: the envelope LU
// solve must match a dense solve with partial pivoting.
TEST(EnvelopeLu, MatchesADenseSolveOfAnUnsymmetricDelassusLikeSystem) {
  std::mt19937 random(5);
  std::normal_distribution<double> noise(0.0, 0.05);
  const auto perturbed = [&](const Vec3& v) { return v + Vec3{noise(random), noise(random), noise(random)} * norm(v); };
  for (const int count : {1, 4, 9, 16}) {
    const RandomSystem system = random_chain_rows(count, random);
    std::vector<RowResponse> columns;
    for (const ConstraintRow& row : system.rows) {
      const RowResponse r = row_response(row, system.mass());
      columns.push_back({perturbed(r.linear_a), perturbed(r.angular_a), perturbed(r.linear_b), perturbed(r.angular_b)});
    }
    const auto n = static_cast<std::size_t>(count);
    std::vector<double> dense(n * n), b(n), x(n);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = std::sin(1.0 + static_cast<double>(i));
      for (std::size_t j = 0; j < n; ++j) dense[i * n + j] = delassus_entry(system.rows[i], system.rows[j], columns[j]);
    }
    EnvelopeLuWorkspace workspace;
    x = b;
    ASSERT_TRUE(envelope_lu_factorize(system.rows, columns, system.mass().inverse_mass, workspace, /*regularisation=*/0.0));
    envelope_lu_solve(workspace, x);
    std::vector<double> factors = dense, expected = b;
    std::vector<int> pivots(n);
    ASSERT_TRUE(lu_factorize(factors, count, pivots));
    lu_solve(factors, count, pivots, expected);
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], expected[i], 1e-10 * (1 + std::abs(expected[i]))) << count;
    // And B x = b, multiplied back.
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0.0;
      for (std::size_t j = 0; j < n; ++j) sum += dense[i * n + j] * x[j];
      EXPECT_NEAR(sum, b[i], 1e-10) << count;
    }
  }
}

// A box-like body on the ground with a few contact points: normal rows and friction groups.
std::vector<ConstraintRow> frictional_contacts(std::mt19937& random, int contacts, double friction) {
  std::uniform_real_distribution<double> uniform(-0.2, 0.2);
  std::vector<ConstraintRow> rows;
  const int directions = 4;
  for (int c = 0; c < contacts; ++c) {
    const Vec3 offset{uniform(random), uniform(random), -0.1};
    const Vec3 normal{0, 0, 1};
    ConstraintRow normal_row;
    normal_row.type = RowType::Unilateral;
    normal_row.body_a = 1;
    normal_row.body_b = 0;
    normal_row.linear_a = normal;
    normal_row.angular_a = cross(offset, normal);
    normal_row.rhs = 0.0;
    const int normal_index = static_cast<int>(rows.size());
    rows.push_back(normal_row);
    for (int k = 0; k < directions; ++k) {
      const double angle = 2 * std::numbers::pi * k / directions;
      const Vec3 direction{std::cos(angle), std::sin(angle), 0};
      ConstraintRow row;
      row.type = RowType::Direction;
      row.body_a = 1;
      row.body_b = 0;
      row.linear_a = direction;
      row.angular_a = cross(offset, direction);
      row.group = normal_index + 1 + directions;
      rows.push_back(row);
    }
    ConstraintRow bound;
    bound.type = RowType::Bound;
    bound.group = normal_index + 1;
    bound.group_size = directions;
    bound.normal = normal_index;
    bound.coefficient = friction;
    rows.push_back(bound);
  }
  return rows;
}

TEST(MixedLcp, InteriorPointAndGaussSeidelFindTheSameFrictionalSolution) {
  std::mt19937 random(11);
  std::normal_distribution<double> normal;
  const std::vector<double> inverse_mass{0.0, 1.0};
  const std::vector<Mat3> inverse_inertia{Mat3{}, Mat3::identity() * 20.0};
  const MassBlocks mass{inverse_mass, inverse_inertia};
  int compared = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const auto rows = frictional_contacts(random, 1 + trial % 4, 0.2 + 0.1 * (trial % 5));
    // Falling and sliding: v_free pushes into the ground and sideways.
    std::vector<double> free_velocity{0, 0, 0, 0, 0, 0, normal(random), normal(random), -1.0 - std::abs(normal(random)),
                                      0.1 * normal(random), 0.1 * normal(random), 0.1 * normal(random)};
    std::vector<double> lambda_ip(rows.size()), lambda_pgs(rows.size()), v_ip(12), v_pgs(12);
    MlcpWorkspace workspace;
    const MlcpResult ip = solve_interior_point(rows, mass, free_velocity, 100, 1e-10, workspace, lambda_ip, v_ip);
    const MlcpResult pgs = solve_projected_gauss_seidel(rows, mass, free_velocity, 20000, 1e-10, workspace, lambda_pgs, v_pgs);
    EXPECT_TRUE(ip.converged) << "trial " << trial << " residual " << ip.residual;
    EXPECT_LE(mlcp_residual(rows, lambda_ip, v_ip, workspace), 1e-10);
    if (!pgs.converged) continue;  // PGS may be slow on redundant contacts; the test is about agreement
    ++compared;
    // The velocity (not λ, which is not unique with redundant contacts) is unique.
    for (int k = 6; k < 12; ++k) EXPECT_NEAR(v_ip[static_cast<std::size_t>(k)], v_pgs[static_cast<std::size_t>(k)], 1e-6) << "trial " << trial;
  }
  EXPECT_GE(compared, 10);
}

// Frictionless contacts and no joint: no equality rows, so the active-set passes solve over a
// subset of the rows with an empty equality block. They used to index that block's empty
// vector (undefined behaviour; an abort under -D_GLIBCXX_ASSERTIONS, issue #19).
TEST(MixedLcp, InteriorPointSolvesFrictionlessContactsWithoutJoints) {
  std::mt19937 random(3);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(-0.2, 0.2);
  const std::vector<double> inverse_mass{0.0, 1.0};
  const std::vector<Mat3> inverse_inertia{Mat3{}, Mat3::identity() * 20.0};
  const MassBlocks mass{inverse_mass, inverse_inertia};
  MlcpWorkspace workspace;
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<ConstraintRow> rows;
    for (int c = 0; c < 1 + trial % 4; ++c) {
      const Vec3 offset{uniform(random), uniform(random), -0.1};
      ConstraintRow row;
      row.type = RowType::Unilateral;
      row.body_a = 1;
      row.body_b = 0;
      row.linear_a = {0, 0, 1};
      row.angular_a = cross(offset, row.linear_a);
      rows.push_back(row);
    }
    // Some contacts pressed, some separating: the active set is a strict subset.
    std::vector<double> free_velocity(12);
    for (std::size_t k = 6; k < 12; ++k) free_velocity[k] = normal(random);
    std::vector<double> lambda(rows.size()), velocity(12);
    const MlcpResult result = solve_interior_point(rows, mass, free_velocity, 100, 1e-10, workspace, lambda, velocity);
    EXPECT_TRUE(result.converged) << "trial " << trial << " residual " << result.residual;
    EXPECT_LE(mlcp_residual(rows, lambda, velocity, workspace), 1e-10) << "trial " << trial;
  }
}

// A matrix of 6×6 blocks assembled as the convex formulation's Hessian is: an SPD 3×3 pair per
// node on the diagonal plus, per edge, a rank-one term w wᵀ with w on the edge's two nodes;
// the same matrix built densely is the reference.
struct BlockProblem {
  int nodes = 0;
  std::vector<std::pair<int, int>> edges;
};

void fill_both(const BlockProblem& problem, std::mt19937& random, BodyBlockCholesky& sparse, std::vector<double>& dense) {
  std::normal_distribution<double> normal;
  const auto n = static_cast<std::size_t>(6 * problem.nodes);
  dense.assign(n * n, 0.0);
  sparse.analyse(problem.nodes, problem.edges);
  for (int node = 0; node < problem.nodes; ++node)
    for (int part = 0; part < 2; ++part) {
      double a[9], m[9];
      for (double& value : a) value = normal(random);
      for (int r = 0; r < 3; ++r)  // m = a aᵀ + I
        for (int c = 0; c < 3; ++c) {
          m[3 * r + c] = r == c ? 1.0 : 0.0;
          for (int l = 0; l < 3; ++l) m[3 * r + c] += a[3 * r + l] * a[3 * c + l];
        }
      sparse.add_diagonal_3x3(node, part, m);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          dense[static_cast<std::size_t>(6 * node + 3 * part + r) * n + static_cast<std::size_t>(6 * node + 3 * part + c)] += m[3 * r + c];
    }
  for (const auto& [a, b] : problem.edges) {
    double u[6], v[6];
    for (double& value : u) value = normal(random);
    for (double& value : v) value = normal(random);
    const double s = 0.5 + std::abs(normal(random));
    const std::pair<int, const double*> parts[2] = {{a, u}, {b, v}};
    for (const auto& [p, x] : parts)
      for (const auto& [q, y] : parts) {
        sparse.add_outer(p, x, q, y, s);
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) dense[static_cast<std::size_t>(6 * p + i) * n + static_cast<std::size_t>(6 * q + j)] += s * x[i] * y[j];
      }
  }
}

TEST(BodyBlockCholesky, SolvesLikeADenseCholeskyOnRandomGraphs) {
  std::mt19937 random(11);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 40; ++trial) {
    BlockProblem problem;
    problem.nodes = 1 + trial % 17;
    std::uniform_int_distribution<int> pick(0, problem.nodes - 1);
    const int edge_count = problem.nodes > 1 ? trial % 3 * problem.nodes : 0;  // none, sparse, dense-ish
    for (int e = 0; e < edge_count; ++e) {
      const int a = pick(random), b = pick(random);
      if (a != b) problem.edges.emplace_back(a, b);
    }
    if (!problem.edges.empty()) problem.edges.push_back(problem.edges.front());  // a duplicate pair
    BodyBlockCholesky sparse;
    std::vector<double> dense;
    fill_both(problem, random, sparse, dense);
    const auto n = static_cast<std::size_t>(6 * problem.nodes);
    std::vector<double> x(n), reference(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = reference[i] = normal(random);
    ASSERT_TRUE(sparse.factorize());
    ASSERT_TRUE(cholesky_factorize(dense.data(), n, n));
    sparse.solve(x);
    cholesky_solve(dense.data(), n, n, reference.data());
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_NEAR(x[i], reference[i], 1e-10 * (1.0 + std::abs(reference[i]))) << "trial " << trial << ", entry " << i;
  }
}

TEST(BodyBlockCholesky, ChainsAndStarsFactoriseWithoutFill) {
  // Minimum degree eliminates a path from its ends and a star from its leaves: L has exactly
  // the graph's blocks, so the cost is linear in the number of bodies.
  for (const bool star : {false, true}) {
    BlockProblem problem;
    problem.nodes = 40;
    for (int k = 1; k < problem.nodes; ++k) problem.edges.emplace_back(star ? 0 : k - 1, k);
    BodyBlockCholesky sparse;
    std::vector<double> dense;
    std::mt19937 random(3);
    fill_both(problem, random, sparse, dense);
    EXPECT_EQ(sparse.factor_block_count(), problem.edges.size()) << (star ? "star" : "path");
    EXPECT_TRUE(sparse.factorize());
  }
  // A 2D grid does fill in, but far from the dense triangle (40·39/2 = 780 blocks).
  BlockProblem grid;
  grid.nodes = 40;
  for (int k = 0; k < grid.nodes; ++k) {
    if (k % 5 != 4) grid.edges.emplace_back(k, k + 1);
    if (k + 5 < grid.nodes) grid.edges.emplace_back(k, k + 5);
  }
  BodyBlockCholesky sparse;
  sparse.analyse(grid.nodes, grid.edges);
  EXPECT_GT(sparse.factor_block_count(), grid.edges.size());
  EXPECT_LT(sparse.factor_block_count(), 200u);
}

TEST(BodyBlockCholesky, ReportsAnIndefiniteMatrixAndRefusesABlockOutsideItsStructure) {
  BodyBlockCholesky sparse;
  const std::vector<std::pair<int, int>> edges{{0, 1}};
  sparse.analyse(3, edges);
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double negative[9] = {-1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int node = 0; node < 3; ++node) {
    sparse.add_diagonal_3x3(node, 0, node == 2 ? negative : identity);
    sparse.add_diagonal_3x3(node, 1, identity);
  }
  EXPECT_FALSE(sparse.factorize());
  const double u[6] = {1, 0, 0, 0, 0, 0};
  // Nodes 0 and 2 were never paired: whichever orientation is the stored one is refused.
  EXPECT_THROW(
      {
        sparse.add_outer(2, u, 0, u, 1.0);
        sparse.add_outer(0, u, 2, u, 1.0);
      },
      Error);
  EXPECT_NO_THROW(sparse.add_outer(1, u, 0, u, 1.0));
  const std::vector<std::pair<int, int>> bad{{0, 3}};
  EXPECT_THROW(sparse.analyse(3, bad), Error);
}

}  // namespace
}  // namespace diffphys::solve
