// solve/body_block_cholesky.hpp — sparse Cholesky L Lᵀ of a symmetric positive definite
// matrix of 6×6 blocks, one block row and column per body: the Newton Hessian M + JᵀGJ of the
// convex formulation (solve/convex.cpp), whose block (a, b) is non-zero only where a
// constraint row couples bodies a and b.
//
// The bodies are ordered by minimum degree on their graph (Tinney & Walker 1967; George & Liu
// 1989, "The evolution of the minimum degree ordering algorithm"), ties to the lowest index so
// that the order depends on the graph alone. The elimination is simulated on the graph: when a
// body is eliminated its remaining neighbours become a clique, and they are the block rows of
// its column of L. The numeric factorisation is right-looking with dense 6×6 blocks. A tower
// or a chain of bodies costs O(bodies); a pile costs what its fill costs, far below the dense
// O((6·bodies)³) for islands of more than a few bodies.
//
// Exact minimum degree on the explicit elimination graph, not AMD's approximate degree:
// islands have tens to hundreds of bodies, and this keeps the step free of allocation once
// its buffers have grown (SuiteSparse's amd_order allocates on every call).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace diffphys::solve {

class BodyBlockCholesky {
 public:
  // The structure: `node_count` nodes and the pairs (a, b), a ≠ b, whose block may be
  // non-zero (duplicates allowed). Orders the nodes and finds the factor's structure. Every
  // block is zero afterwards.
  void analyse(int node_count, std::span<const std::pair<int, int>> edges);
  // Zeroes every block, keeping the structure.
  void clear_values();
  // Adds s·u vᵀ to block (a, b) (u: node a's 6 entries, v: node b's), for a sum that is
  // symmetric as a whole: callers add both (a, b) and (b, a) terms, and of an off-diagonal
  // pair only the one in the stored lower triangle is kept. Throws Error if that kept block
  // is outside the structure ((a, b) was not among analyse's pairs).
  void add_outer(int a, const double* u, int b, const double* v, double s);
  // Adds the 6×6 block m (row-major) at (a, b) and its transpose at (b, a); for a = b, m must
  // be symmetric and is added once. Throws Error if (a, b) is outside the structure.
  void add_block_pair(int a, int b, const double* m);
  // add_block_pair(a, b, m) for the rank-one m = u vᵀ (m_pq = u_p v_q, the same values),
  // without forming m. For a = b (v = u) only the lower triangle is added: the only part of
  // a diagonal block that factorize reads.
  void add_outer_pair(int a, const double* u, int b, const double* v);
  // Adds a symmetric 3×3 matrix (row-major) at rows and columns 3·part .. 3·part + 2 of node
  // a's diagonal block (part 0: linear, 1: angular).
  void add_diagonal_3x3(int a, int part, const double* matrix);
  // Keeps a copy of every block as it is now; restore_values puts it back (a sum whose first
  // terms do not change between factorisations is assembled once).
  void save_values();
  void restore_values();
  // Factorises in place. False if a pivot is not positive or not finite.
  bool factorize();
  // x ← (L Lᵀ)⁻¹ x, x holding 6 entries per node in node order.
  void solve(std::span<double> x);
  // The same with the caller's scratch (resized to 6 per node), for a factor shared read-only
  // (the backward pass solving with the forward solve's factorisation).
  void solve(std::span<double> x, std::vector<double>& scratch) const;

  int node_count() const { return node_count_; }
  // Off-diagonal blocks of L (fill included).
  std::size_t factor_block_count() const { return rows_.size(); }
  // Bytes held by the buffers (their capacity), for the workspace's memory report.
  std::size_t buffer_bytes() const;

 private:
  double* lower_block(int position_row, int position_column);

  int node_count_ = 0;
  std::vector<int> order_;          // position → node
  std::vector<int> position_;       // node → position
  std::vector<int> column_start_;   // (positions + 1) CSR of L's off-diagonal blocks by column
  std::vector<int> rows_;           // row position of each block, ascending within a column
  std::vector<double> diagonal_;    // 36 per position, row-major (L_jj in the lower triangle)
  std::vector<double> blocks_;      // 36 per off-diagonal block, row-major (rows: the row node)
  std::vector<double> permuted_;    // solve's scratch, 6 per position
  std::vector<double> reciprocal_;  // 1 / L_ii of the diagonal blocks, 6 per position
  std::vector<double> saved_diagonal_, saved_blocks_;  // save_values' copy
  std::vector<double> transposed_;  // factorize's scratch: one column's blocks of L, transposed
  // analyse's scratch: the elimination graph (kept between calls for its capacity).
  std::vector<std::vector<int>> adjacency_;
  std::vector<int> merged_;
  std::vector<char> eliminated_;
};

}  // namespace diffphys::solve
