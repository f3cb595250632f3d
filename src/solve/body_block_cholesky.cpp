// solve/body_block_cholesky.cpp — see body_block_cholesky.hpp.
#include "solve/body_block_cholesky.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "diffphys/error.hpp"

namespace diffphys::solve {

namespace {
constexpr int kBlock = 6;
constexpr int kBlockSize = kBlock * kBlock;

// Dense kernels of one 6×6 block, sized at compile time so that they unroll (the humanoid's
// Newton step spends most of its factorisation here). `reciprocal` holds 1/L_ii.

// L Lᵀ = A in place (lower triangle, row-major); false on a pivot that is not positive.
bool factorize_block(double* a, double* reciprocal) {
  for (int j = 0; j < kBlock; ++j) {
    double diagonal = a[j * kBlock + j];
    for (int l = 0; l < j; ++l) diagonal -= a[j * kBlock + l] * a[j * kBlock + l];
    if (!(diagonal > 0.0) || !std::isfinite(diagonal)) return false;
    const double pivot = std::sqrt(diagonal);
    a[j * kBlock + j] = pivot;
    reciprocal[j] = 1.0 / pivot;
    for (int i = j + 1; i < kBlock; ++i) {
      double value = a[i * kBlock + j];
      for (int l = 0; l < j; ++l) value -= a[i * kBlock + l] * a[j * kBlock + l];
      a[i * kBlock + j] = value * reciprocal[j];
    }
  }
  return true;
}

// x ← L⁻¹ x.
void forward_block(const double* factor, const double* reciprocal, double* x) {
  for (int i = 0; i < kBlock; ++i) {
    double value = x[i];
    for (int l = 0; l < i; ++l) value -= factor[i * kBlock + l] * x[l];
    x[i] = value * reciprocal[i];
  }
}

// Each row x of `block` (6 × 6, row-major) ← the solution of L xᵀ = xᵀ: block ← block L⁻ᵀ.
// The rows are solved together, column by column, on a transposed copy (`transposed`, kept
// for the caller): the six rows' recurrences are independent, so they run side by side
// rather than as six chains of dependent multiply–subtracts, and each entry is computed with
// the same operations in the same order as forward_block would.
void solve_block_rows(const double* factor, const double* reciprocal, double* block, double* transposed) {
  for (int r = 0; r < kBlock; ++r)
    for (int l = 0; l < kBlock; ++l) transposed[l * kBlock + r] = block[r * kBlock + l];
  for (int i = 0; i < kBlock; ++i) {
    double* row_i = transposed + i * kBlock;
    for (int l = 0; l < i; ++l) {
      const double f = factor[i * kBlock + l];
      const double* row_l = transposed + l * kBlock;
      for (int r = 0; r < kBlock; ++r) row_i[r] -= f * row_l[r];
    }
    for (int r = 0; r < kBlock; ++r) row_i[r] *= reciprocal[i];
  }
  for (int r = 0; r < kBlock; ++r)
    for (int l = 0; l < kBlock; ++l) block[r * kBlock + l] = transposed[l * kBlock + r];
}

// target −= right leftᵀ (6 × 6 blocks; left given transposed), each entry's sum formed over
// l = 0..5 in order before it is subtracted. `lower`: only the lower triangle of target.
template <bool lower>
void subtract_product(const double* right, const double* left_transposed, double* target) {
  for (int p = 0; p < kBlock; ++p) {
    double sum[kBlock] = {};
    for (int l = 0; l < kBlock; ++l) {
      const double a = right[p * kBlock + l];
      for (int q = 0; q < kBlock; ++q) sum[q] += a * left_transposed[l * kBlock + q];
    }
    const int end = lower ? p + 1 : kBlock;
    for (int q = 0; q < end; ++q) target[p * kBlock + q] -= sum[q];
  }
}

// x ← L⁻ᵀ x.
void backward_block(const double* factor, const double* reciprocal, double* x) {
  for (int i = kBlock - 1; i >= 0; --i) {
    double value = x[i];
    for (int l = i + 1; l < kBlock; ++l) value -= factor[l * kBlock + i] * x[l];
    x[i] = value * reciprocal[i];
  }
}
}  // namespace

void BodyBlockCholesky::analyse(int node_count, std::span<const std::pair<int, int>> edges) {
  const auto n = static_cast<std::size_t>(node_count);
  node_count_ = node_count;
  if (adjacency_.size() < n) adjacency_.resize(n);
  for (std::size_t v = 0; v < n; ++v) adjacency_[v].clear();
  for (const auto& [a, b] : edges) {
    if (a < 0 || b < 0 || a >= node_count || b >= node_count || a == b)
      throw Error(message("block Cholesky: pair (", a, ", ", b, ") is not two distinct nodes of ", node_count));
    adjacency_[static_cast<std::size_t>(a)].push_back(b);
    adjacency_[static_cast<std::size_t>(b)].push_back(a);
  }
  for (std::size_t v = 0; v < n; ++v) {
    std::vector<int>& list = adjacency_[v];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }

  // Minimum degree: eliminate the node with the fewest remaining neighbours (lowest index on
  // ties); its neighbours become a clique and form its column of L (node ids for now).
  eliminated_.assign(n, 0);
  order_.resize(n);
  position_.resize(n);
  column_start_.assign(n + 1, 0);
  rows_.clear();
  for (std::size_t step = 0; step < n; ++step) {
    std::size_t best = n;
    for (std::size_t v = 0; v < n; ++v)
      if (!eliminated_[v] && (best == n || adjacency_[v].size() < adjacency_[best].size())) best = v;
    const int pivot = static_cast<int>(best);
    order_[step] = pivot;
    position_[best] = static_cast<int>(step);
    eliminated_[best] = 1;
    const std::vector<int>& neighbours = adjacency_[best];
    rows_.insert(rows_.end(), neighbours.begin(), neighbours.end());
    column_start_[step + 1] = static_cast<int>(rows_.size());
    for (const int u : neighbours) {
      // adjacency(u) ← adjacency(u) ∪ neighbours, without u and the pivot (both lists sorted).
      std::vector<int>& own = adjacency_[static_cast<std::size_t>(u)];
      merged_.clear();
      std::set_union(own.begin(), own.end(), neighbours.begin(), neighbours.end(), std::back_inserter(merged_));
      std::erase_if(merged_, [&](int node) { return node == u || node == pivot; });
      own.assign(merged_.begin(), merged_.end());
    }
    adjacency_[best].clear();
  }
  for (std::size_t j = 0; j < n; ++j) {
    const auto first = rows_.begin() + column_start_[j], last = rows_.begin() + column_start_[j + 1];
    for (auto it = first; it != last; ++it) *it = position_[static_cast<std::size_t>(*it)];
    std::sort(first, last);
  }
  diagonal_.assign(kBlockSize * n, 0.0);
  blocks_.assign(kBlockSize * rows_.size(), 0.0);
  permuted_.resize(kBlock * n);
  reciprocal_.resize(kBlock * n);
  std::size_t widest = 0;
  for (std::size_t j = 0; j < n; ++j)
    widest = std::max(widest, static_cast<std::size_t>(column_start_[j + 1] - column_start_[j]));
  transposed_.resize(kBlockSize * widest);
}

std::size_t BodyBlockCholesky::buffer_bytes() const {
  std::size_t bytes = sizeof(int) * (order_.capacity() + position_.capacity() + column_start_.capacity() +
                                     rows_.capacity() + merged_.capacity()) +
                      sizeof(double) * (diagonal_.capacity() + blocks_.capacity() + permuted_.capacity() +
                                        reciprocal_.capacity() + saved_diagonal_.capacity() +
                                        saved_blocks_.capacity() + transposed_.capacity()) +
                      eliminated_.capacity() + sizeof(std::vector<int>) * adjacency_.capacity();
  for (const std::vector<int>& list : adjacency_) bytes += sizeof(int) * list.capacity();
  return bytes;
}

void BodyBlockCholesky::clear_values() {
  std::fill(diagonal_.begin(), diagonal_.end(), 0.0);
  std::fill(blocks_.begin(), blocks_.end(), 0.0);
}

double* BodyBlockCholesky::lower_block(int position_row, int position_column) {
  const auto first = rows_.begin() + column_start_[static_cast<std::size_t>(position_column)];
  const auto last = rows_.begin() + column_start_[static_cast<std::size_t>(position_column) + 1];
  const auto found = std::lower_bound(first, last, position_row);
  if (found == last || *found != position_row) return nullptr;
  return blocks_.data() + kBlockSize * static_cast<std::size_t>(found - rows_.begin());
}

void BodyBlockCholesky::add_outer(int a, const double* u, int b, const double* v, double s) {
  const int position_a = position_[static_cast<std::size_t>(a)], position_b = position_[static_cast<std::size_t>(b)];
  double* block = nullptr;
  if (a == b) block = diagonal_.data() + kBlockSize * static_cast<std::size_t>(position_a);
  else if (position_a < position_b) return;  // the upper triangle: its transpose is added as (b, a)
  else block = lower_block(position_a, position_b);
  if (block == nullptr)
    throw Error(message("block Cholesky: block (", a, ", ", b, ") is outside the analysed structure"));
  for (int p = 0; p < kBlock; ++p) {
    const double su = s * u[p];
    for (int q = 0; q < kBlock; ++q) block[p * kBlock + q] += su * v[q];
  }
}

void BodyBlockCholesky::add_block_pair(int a, int b, const double* m) {
  const int position_a = position_[static_cast<std::size_t>(a)], position_b = position_[static_cast<std::size_t>(b)];
  if (a == b) {
    double* block = diagonal_.data() + kBlockSize * static_cast<std::size_t>(position_a);
    for (int k = 0; k < kBlockSize; ++k) block[k] += m[k];
    return;
  }
  // Only the lower triangle is stored: m itself if a comes later in the order, else mᵀ.
  const bool transpose = position_a < position_b;
  double* block = transpose ? lower_block(position_b, position_a) : lower_block(position_a, position_b);
  if (block == nullptr)
    throw Error(message("block Cholesky: block (", a, ", ", b, ") is outside the analysed structure"));
  for (int p = 0; p < kBlock; ++p)
    for (int q = 0; q < kBlock; ++q) block[p * kBlock + q] += transpose ? m[q * kBlock + p] : m[p * kBlock + q];
}

void BodyBlockCholesky::add_outer_pair(int a, const double* u, int b, const double* v) {
  const int position_a = position_[static_cast<std::size_t>(a)], position_b = position_[static_cast<std::size_t>(b)];
  if (a == b) {
    double* block = diagonal_.data() + kBlockSize * static_cast<std::size_t>(position_a);
    for (int p = 0; p < kBlock; ++p)
      for (int q = 0; q <= p; ++q) block[p * kBlock + q] += u[p] * v[q];
    return;
  }
  const bool transpose = position_a < position_b;
  double* block = transpose ? lower_block(position_b, position_a) : lower_block(position_a, position_b);
  if (block == nullptr)
    throw Error(message("block Cholesky: block (", a, ", ", b, ") is outside the analysed structure"));
  if (transpose) {
    for (int p = 0; p < kBlock; ++p)
      for (int q = 0; q < kBlock; ++q) block[p * kBlock + q] += u[q] * v[p];
  } else {
    for (int p = 0; p < kBlock; ++p)
      for (int q = 0; q < kBlock; ++q) block[p * kBlock + q] += u[p] * v[q];
  }
}

void BodyBlockCholesky::save_values() {
  saved_diagonal_.assign(diagonal_.begin(), diagonal_.end());
  saved_blocks_.assign(blocks_.begin(), blocks_.end());
}

void BodyBlockCholesky::restore_values() {
  std::copy(saved_diagonal_.begin(), saved_diagonal_.end(), diagonal_.begin());
  std::copy(saved_blocks_.begin(), saved_blocks_.end(), blocks_.begin());
}

void BodyBlockCholesky::add_diagonal_3x3(int a, int part, const double* matrix) {
  double* block = diagonal_.data() + kBlockSize * static_cast<std::size_t>(position_[static_cast<std::size_t>(a)]);
  const int o = 3 * part;
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) block[(o + p) * kBlock + o + q] += matrix[3 * p + q];
}

bool BodyBlockCholesky::factorize() {
  const auto n = static_cast<std::size_t>(node_count_);
  for (std::size_t j = 0; j < n; ++j) {
    double* pivot = diagonal_.data() + kBlockSize * j;
    double* reciprocal = reciprocal_.data() + kBlock * j;
    if (!factorize_block(pivot, reciprocal)) return false;
    const auto begin = static_cast<std::size_t>(column_start_[j]), end = static_cast<std::size_t>(column_start_[j + 1]);
    // L_ij = A_ij L_jj⁻ᵀ: each row x of the block solves L_jj xᵀ = a_rowᵀ (transposed copies
    // of the column's blocks for the products below).
    for (std::size_t e = begin; e < end; ++e)
      solve_block_rows(pivot, reciprocal, blocks_.data() + kBlockSize * e,
                       transposed_.data() + kBlockSize * (e - begin));
    // Schur complement: A_ki −= L_kj L_ijᵀ for every pair i ≤ k of the column's rows (the
    // lower triangle of the diagonal blocks only: factorize_block reads no more).
    for (std::size_t e1 = begin; e1 < end; ++e1) {
      const auto i = static_cast<std::size_t>(rows_[e1]);
      const double* left = blocks_.data() + kBlockSize * e1;
      const double* left_transposed = transposed_.data() + kBlockSize * (e1 - begin);
      subtract_product<true>(left, left_transposed, diagonal_.data() + kBlockSize * i);
      auto cursor = static_cast<std::size_t>(column_start_[i]);
      for (std::size_t e2 = e1 + 1; e2 < end; ++e2) {
        const int k = rows_[e2];
        while (rows_[cursor] != k) ++cursor;  // present: the pivot's neighbours formed a clique
        subtract_product<false>(blocks_.data() + kBlockSize * e2, left_transposed,
                                blocks_.data() + kBlockSize * cursor);
      }
    }
  }
  return true;
}

void BodyBlockCholesky::solve(std::span<double> x) { solve(x, permuted_); }

void BodyBlockCholesky::solve(std::span<double> x, std::vector<double>& permuted) const {
  const auto n = static_cast<std::size_t>(node_count_);
  permuted.resize(kBlock * n);
  for (std::size_t j = 0; j < n; ++j)
    for (int d = 0; d < kBlock; ++d)
      permuted[kBlock * j + static_cast<std::size_t>(d)] = x[kBlock * static_cast<std::size_t>(order_[j]) + static_cast<std::size_t>(d)];
  // L y = x.
  for (std::size_t j = 0; j < n; ++j) {
    double* y = permuted.data() + kBlock * j;
    forward_block(diagonal_.data() + kBlockSize * j, reciprocal_.data() + kBlock * j, y);
    for (auto e = static_cast<std::size_t>(column_start_[j]); e < static_cast<std::size_t>(column_start_[j + 1]); ++e) {
      const double* block = blocks_.data() + kBlockSize * e;
      double* target = permuted.data() + kBlock * static_cast<std::size_t>(rows_[e]);
      for (int p = 0; p < kBlock; ++p) {
        double sum = 0.0;
        for (int c = 0; c < kBlock; ++c) sum += block[p * kBlock + c] * y[c];
        target[p] -= sum;
      }
    }
  }
  // Lᵀ x = y.
  for (std::size_t j = n; j-- > 0;) {
    double* y = permuted.data() + kBlock * j;
    for (auto e = static_cast<std::size_t>(column_start_[j]); e < static_cast<std::size_t>(column_start_[j + 1]); ++e) {
      const double* block = blocks_.data() + kBlockSize * e;
      const double* source = permuted.data() + kBlock * static_cast<std::size_t>(rows_[e]);
      for (int c = 0; c < kBlock; ++c) {
        double sum = 0.0;
        for (int p = 0; p < kBlock; ++p) sum += block[p * kBlock + c] * source[p];
        y[c] -= sum;
      }
    }
    backward_block(diagonal_.data() + kBlockSize * j, reciprocal_.data() + kBlock * j, y);
  }
  for (std::size_t j = 0; j < n; ++j)
    for (int d = 0; d < kBlock; ++d)
      x[kBlock * static_cast<std::size_t>(order_[j]) + static_cast<std::size_t>(d)] = permuted[kBlock * j + static_cast<std::size_t>(d)];
}

}  // namespace diffphys::solve
