// rigid/warm_start.cpp — see warm_start.hpp.
#include "rigid/warm_start.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace diffphys::rigid {
namespace {

// Rows of the contact whose normal row is `row` (1, or 1 + K + 1 with a friction group).
std::size_t contact_row_count(std::span<const solve::ConstraintRow> rows, std::size_t row) {
  if (row + 1 < rows.size() && rows[row + 1].type == solve::RowType::Direction)
    return 1 + static_cast<std::size_t>(rows[row + 1].group) - row;  // normal, K directions, then the Bound row
  return 1;
}

bool precedes(const WarmStart::ContactEntry& a, const WarmStart::ContactEntry& b) {
  return std::tie(a.shape_a, a.shape_b, a.feature, a.order) < std::tie(b.shape_a, b.shape_b, b.feature, b.order);
}

}  // namespace

std::uint64_t state_fingerprint(const State& state) {
  std::uint64_t hash = 14695981039346656037ull;
  const auto mix = [&](double value) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  };
  mix(state.time);
  for (std::size_t b = 0; b < state.position.size(); ++b) {
    for (int k = 0; k < 3; ++k) {
      mix(state.position[b][k]);
      mix(state.linear_velocity[b][k]);
      mix(state.angular_velocity[b][k]);
    }
    const Quat& q = state.orientation[b];
    mix(q.w);
    mix(q.x);
    mix(q.y);
    mix(q.z);
  }
  return hash;
}

std::size_t apply_warm_start(const WarmStart& warm_start, const State& state_in,
                             std::span<const solve::ConstraintRow> rows, const RowBlocks& blocks,
                             std::span<const LimitRowSource> limit_sources, std::span<const Contact> contacts,
                             std::span<double> lambda) {
  std::fill(lambda.begin(), lambda.end(), 0.0);
  if (!warm_start.valid || warm_start.state_key != state_fingerprint(state_in)) return 0;
  std::size_t matched = 0;
  // Joint and servo rows: by index, if the model still has as many.
  if (warm_start.joint_lambda.size() == blocks.joint_rows) {
    std::copy(warm_start.joint_lambda.begin(), warm_start.joint_lambda.end(), lambda.begin());
    matched += blocks.joint_rows;
  }
  const std::size_t servo_rows = blocks.first_contact_row - blocks.limit_rows_end;
  if (warm_start.servo_lambda.size() == servo_rows) {
    std::copy(warm_start.servo_lambda.begin(), warm_start.servo_lambda.end(),
              lambda.begin() + static_cast<std::ptrdiff_t>(blocks.limit_rows_end));
    matched += servo_rows;
  }
  // Limit rows: both lists are in (joint, dof, side) order; merge.
  std::size_t stored = 0;
  for (std::size_t k = 0; k < limit_sources.size(); ++k) {
    const LimitRowSource& source = limit_sources[k];
    const auto key = std::make_tuple(source.joint, source.dof, source.upper);
    while (stored < warm_start.limits.size()) {
      const WarmStart::LimitEntry& entry = warm_start.limits[stored];
      if (std::make_tuple(entry.joint, entry.dof, entry.upper) >= key) break;
      ++stored;
    }
    if (stored < warm_start.limits.size()) {
      const WarmStart::LimitEntry& entry = warm_start.limits[stored];
      if (std::make_tuple(entry.joint, entry.dof, entry.upper) == key) {
        lambda[blocks.joint_rows + k] = entry.lambda;
        ++matched;
      }
    }
  }
  // Contacts: the first stored contact with the same (shape_a, shape_b, feature).
  std::size_t row = blocks.first_contact_row;
  for (const Contact& contact : contacts) {
    const std::size_t count = contact_row_count(rows, row);
    WarmStart::ContactEntry key;
    key.shape_a = contact.shape_a;
    key.shape_b = contact.shape_b;
    key.feature = contact.feature;
    key.order = -1;
    const auto found = std::lower_bound(warm_start.contacts.begin(), warm_start.contacts.end(), key, precedes);
    if (found != warm_start.contacts.end() && found->shape_a == key.shape_a && found->shape_b == key.shape_b &&
        found->feature == key.feature) {
      // The normal always; the friction group if both steps have one of the same size.
      const std::size_t copied = static_cast<std::size_t>(found->row_count) == count ? count : 1;
      for (std::size_t k = 0; k < copied; ++k)
        lambda[row + k] = warm_start.contact_lambda[static_cast<std::size_t>(found->first) + k];
      matched += copied;
    }
    row += count;
  }
  return matched;
}

void store_warm_start(WarmStart& warm_start, const State& state_out, std::span<const solve::ConstraintRow> rows,
                      const RowBlocks& blocks, std::span<const LimitRowSource> limit_sources,
                      std::span<const Contact> contacts, std::span<const double> lambda) {
  warm_start.valid = true;
  warm_start.state_key = state_fingerprint(state_out);
  warm_start.joint_lambda.assign(lambda.begin(), lambda.begin() + static_cast<std::ptrdiff_t>(blocks.joint_rows));
  warm_start.servo_lambda.assign(lambda.begin() + static_cast<std::ptrdiff_t>(blocks.limit_rows_end),
                                 lambda.begin() + static_cast<std::ptrdiff_t>(blocks.first_contact_row));
  warm_start.limits.clear();
  for (std::size_t k = 0; k < limit_sources.size(); ++k)
    warm_start.limits.push_back(
        {limit_sources[k].joint, limit_sources[k].dof, limit_sources[k].upper, lambda[blocks.joint_rows + k]});
  warm_start.contacts.clear();
  warm_start.contact_lambda.assign(lambda.begin() + static_cast<std::ptrdiff_t>(blocks.first_contact_row),
                                   lambda.end());
  std::size_t row = blocks.first_contact_row;
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const std::size_t count = contact_row_count(rows, row);
    WarmStart::ContactEntry entry;
    entry.shape_a = contacts[c].shape_a;
    entry.shape_b = contacts[c].shape_b;
    entry.feature = contacts[c].feature;
    entry.order = static_cast<int>(c);
    entry.first = static_cast<int>(row - blocks.first_contact_row);
    entry.row_count = static_cast<int>(count);
    warm_start.contacts.push_back(entry);
    row += count;
  }
  std::sort(warm_start.contacts.begin(), warm_start.contacts.end(), precedes);
}

}  // namespace diffphys::rigid
