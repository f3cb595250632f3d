// rigid/warm_start.hpp — warm start of the projected Gauss–Seidel solve from the previous
// step's impulses.
//
// PGS converges linearly from wherever it starts; in a scene at rest (a stack, a settled
// pile) the impulses barely change from one step to the next, so starting from the previous
// step's λ leaves only the change to be swept out. After a step, store_warm_start keeps that
// step's λ keyed by where each row came from; before the next solve, apply_warm_start gives
// each new row the λ of its match, and 0 where there is none:
//   joint rows and servo rows   by index (their number is fixed by the model);
//   limit rows                  by (joint, dof, side) (they come and go with the reach);
//   contact rows                by (shape_a, shape_b, feature) — Contact::feature is a stable
//                               id of the touching features within a shape pair — the
//                               normal, then the friction directions and γ when both steps
//                               have the same friction group.
// The stored λ is used only if the state being stepped is the very state the storing step
// produced (a 64-bit fingerprint of time, poses and velocities): stepping any other state
// with the same workspace starts cold, as a fresh workspace would. The result then depends
// on the previous call on this workspace, not on this step's inputs alone — which is why the
// step warm-starts PGS only: the interior point stays a function of its inputs.
//
// Deterministic (contacts are matched by sorted keys, ties in contact order) and, once the
// buffers have grown to the largest row and contact counts seen, allocation-free.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/state.hpp"
#include "rigid/inequality_rows.hpp"
#include "solve/mlcp.hpp"

namespace diffphys::rigid {

// Where the step's rows sit (rigid/step_workspace.hpp): joints [0, joint_rows), limits
// [joint_rows, limit_rows_end), servos [limit_rows_end, first_contact_row), contacts after,
// contact by contact.
struct RowBlocks {
  std::size_t joint_rows = 0, limit_rows_end = 0, first_contact_row = 0;
};

struct WarmStart {
  struct LimitEntry {
    int joint = 0, dof = 0;
    bool upper = false;
    double lambda = 0.0;
  };
  struct ContactEntry {
    int shape_a = 0, shape_b = 0, feature = 0;
    int order = 0;      // position among the stored step's contacts (ties)
    int first = 0;      // offset of its rows' λ in contact_lambda
    int row_count = 0;  // 1 (normal only) or 1 + K + 1 (with its friction group)
  };
  bool valid = false;
  std::uint64_t state_key = 0;  // fingerprint of the state the storing step produced
  std::vector<double> joint_lambda, servo_lambda;
  std::vector<LimitEntry> limits;      // in row order
  std::vector<ContactEntry> contacts;  // sorted by (shape_a, shape_b, feature, order)
  std::vector<double> contact_lambda;
};

// Fingerprint of a state: FNV-1a over the bits of its time, poses and velocities.
std::uint64_t state_fingerprint(const State& state);

// Writes λ for this step's rows: the stored λ of each row's match, 0 elsewhere (all 0 if
// `state_in` is not the state the stored step produced). Returns the number of rows matched.
std::size_t apply_warm_start(const WarmStart& warm_start, const State& state_in,
                             std::span<const solve::ConstraintRow> rows, const RowBlocks& blocks,
                             std::span<const LimitRowSource> limit_sources, std::span<const Contact> contacts,
                             std::span<double> lambda);

// Keeps this step's λ (after its solve) for the next step, which must step `state_out`.
void store_warm_start(WarmStart& warm_start, const State& state_out, std::span<const solve::ConstraintRow> rows,
                      const RowBlocks& blocks, std::span<const LimitRowSource> limit_sources,
                      std::span<const Contact> contacts, std::span<const double> lambda);

}  // namespace diffphys::rigid
