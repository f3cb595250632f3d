// soft/sparse_cholesky.cpp — SparseCholesky on CHOLMOD (Chen, Davis, Hager & Rajamanickam,
// "Algorithm 887: CHOLMOD, supernodal sparse Cholesky factorization and update/downdate",
// ACM TOMS 35(3), 2008). Supernodal: dense blocks of columns are factorised by BLAS, which
// on a 3-D tetrahedral mesh (wide fronts) is far faster than a simplicial (column-by-column)
// factorisation.
#include "soft/sparse_cholesky.hpp"

#include <algorithm>
#include <mutex>

#include <cholmod.h>

#include "diffphys/error.hpp"

namespace diffphys::soft {

namespace {

// Two soft steps factorising at once on two threads (a WorldBatch) got wrong factors from
// CHOLMOD's supernodal code — Newton's iterations hid it in the states (differences of
// 1e-11), the implicit gradients did not (40 % off). Supernodes are where CHOLMOD calls BLAS
// and LAPACK (on Debian by default openblas-serial), the likely culprit; OPENBLAS_NUM_THREADS=1
// and OMP_NUM_THREADS=1 did not help. Every call into CHOLMOD that may reach them is
// serialised (tests/world_batch_test.cpp fails without it); the rest of a soft step runs in
// parallel.
std::mutex& cholmod_mutex() {
  static std::mutex mutex;
  return mutex;
}

// A cholmod_sparse view of caller-owned compressed columns (lower triangle: stype −1).
cholmod_sparse view_lower(int size, std::span<const int> column_starts, std::span<const int> row_indices,
                          double* values) {
  cholmod_sparse matrix{};
  matrix.nrow = static_cast<std::size_t>(size);
  matrix.ncol = static_cast<std::size_t>(size);
  matrix.nzmax = row_indices.size();
  matrix.p = const_cast<int*>(column_starts.data());
  matrix.i = const_cast<int*>(row_indices.data());
  matrix.x = values;
  matrix.stype = -1;
  matrix.itype = CHOLMOD_INT;
  matrix.xtype = values != nullptr ? CHOLMOD_REAL : CHOLMOD_PATTERN;
  matrix.dtype = CHOLMOD_DOUBLE;
  matrix.sorted = 1;
  matrix.packed = 1;
  return matrix;
}

void start(cholmod_common& common) {
  cholmod_start(&common);
  common.print = 0;  // errors are reported through Error, never printed by CHOLMOD
  common.supernodal = CHOLMOD_SUPERNODAL;
  common.final_asis = 1;  // keep the supernodal LLᵀ (no conversion after factorising)
  common.quick_return_if_not_posdef = 1;
}

}  // namespace

struct SparseCholesky::State {
  cholmod_common common{};
  cholmod_factor* factor = nullptr;
  cholmod_sparse matrix{};
  std::vector<double> rhs_values;
  cholmod_dense rhs{};
  cholmod_dense *solution = nullptr, *scratch_y = nullptr, *scratch_e = nullptr;

  State() { start(common); }
  ~State() {
    if (factor != nullptr) cholmod_free_factor(&factor, &common);
    if (solution != nullptr) cholmod_free_dense(&solution, &common);
    if (scratch_y != nullptr) cholmod_free_dense(&scratch_y, &common);
    if (scratch_e != nullptr) cholmod_free_dense(&scratch_e, &common);
    cholmod_finish(&common);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

SparseCholesky::SparseCholesky() : state_(std::make_unique<State>()) {}
SparseCholesky::~SparseCholesky() = default;
SparseCholesky::SparseCholesky(SparseCholesky&&) noexcept = default;
SparseCholesky& SparseCholesky::operator=(SparseCholesky&&) noexcept = default;

std::vector<int> SparseCholesky::choose_ordering(int size, std::span<const int> column_starts,
                                                 std::span<const int> row_indices) {
  cholmod_common common{};
  start(common);
  cholmod_sparse pattern = view_lower(size, column_starts, row_indices, nullptr);
  const std::lock_guard lock(cholmod_mutex());
  // CHOLMOD's default strategy: AMD, then METIS if AMD's fill is high; postordered.
  cholmod_factor* symbolic = cholmod_analyze(&pattern, &common);
  if (symbolic == nullptr) {
    cholmod_finish(&common);
    throw Error(message("soft solver: CHOLMOD could not order the Hessian (status ", common.status, ")"));
  }
  std::vector<int> position(static_cast<std::size_t>(size));
  const int* order = static_cast<const int*>(symbolic->Perm);  // order[new] = old
  for (int k = 0; k < size; ++k) position[static_cast<std::size_t>(order[k])] = k;
  cholmod_free_factor(&symbolic, &common);
  cholmod_finish(&common);
  return position;
}

void SparseCholesky::analyse(int size, std::span<const int> column_starts, std::span<const int> row_indices,
                             std::span<double> values) {
  State& s = *state_;
  if (s.factor != nullptr) cholmod_free_factor(&s.factor, &s.common);
  s.matrix = view_lower(size, column_starts, row_indices, values.data());
  // Already ordered and postordered (choose_ordering): analyse as is.
  s.common.nmethods = 1;
  s.common.method[0].ordering = CHOLMOD_NATURAL;
  s.common.postorder = 0;
  {
    const std::lock_guard lock(cholmod_mutex());
    s.factor = cholmod_analyze(&s.matrix, &s.common);
  }
  if (s.factor == nullptr || !s.factor->is_super)
    throw Error(message("soft solver: CHOLMOD's symbolic factorisation failed (status ", s.common.status, ")"));
  s.rhs_values.assign(static_cast<std::size_t>(size), 0.0);
  s.rhs = cholmod_dense{};
  s.rhs.nrow = static_cast<std::size_t>(size);
  s.rhs.ncol = 1;
  s.rhs.nzmax = static_cast<std::size_t>(size);
  s.rhs.d = static_cast<std::size_t>(size);
  s.rhs.x = s.rhs_values.data();
  s.rhs.xtype = CHOLMOD_REAL;
  s.rhs.dtype = CHOLMOD_DOUBLE;
}

bool SparseCholesky::factorise(double shift) {
  State& s = *state_;
  double beta[2] = {shift, 0.0};  // factorises A + βI
  int ok = 0;
  {
    const std::lock_guard lock(cholmod_mutex());
    ok = cholmod_factorize_p(&s.matrix, beta, nullptr, 0, s.factor, &s.common);
  }
  if (s.common.status == CHOLMOD_NOT_POSDEF) return false;
  if (ok == 0 || s.common.status < CHOLMOD_OK)
    throw Error(message("soft solver: CHOLMOD's numeric factorisation failed (status ", s.common.status, ")"));
  return s.factor->minor == s.factor->n;
}

void SparseCholesky::solve(std::span<const double> b, std::span<double> out) {
  State& s = *state_;
  std::copy(b.begin(), b.end(), s.rhs_values.begin());
  // The solution and CHOLMOD's scratch are allocated by the first solve, then reused.
  int ok = 0;
  {
    const std::lock_guard lock(cholmod_mutex());
    ok = cholmod_solve2(CHOLMOD_A, s.factor, &s.rhs, nullptr, &s.solution, nullptr, &s.scratch_y, &s.scratch_e, &s.common);
  }
  if (ok == 0)
    throw Error(message("soft solver: CHOLMOD's solve failed (status ", s.common.status, ")"));
  const double* x = static_cast<const double*>(s.solution->x);
  std::copy(x, x + out.size(), out.begin());
}

std::size_t SparseCholesky::factor_size() const { return state_->factor != nullptr ? state_->factor->xsize : 0; }

void SparseCholesky::save_factor(std::span<double> out) const {
  const double* x = static_cast<const double*>(state_->factor->x);
  std::copy(x, x + factor_size(), out.begin());
}

void SparseCholesky::load_factor(std::span<const double> in) {
  cholmod_factor& factor = *state_->factor;
  std::copy(in.begin(), in.end(), static_cast<double*>(factor.x));
  factor.minor = factor.n;  // a saved factor is always a complete (positive definite) one
}

double SparseCholesky::factor_nonzeros() const { return state_->common.lnz; }

}  // namespace diffphys::soft
