// tests/warm_start_test.cpp — PGS warm start from the previous step's impulses
// (rigid/warm_start.hpp): it finds each row's previous λ, it is used only on the state the
// previous step produced, and it makes a resting stack converge in fewer sweeps.
#include <gtest/gtest.h>

#include <vector>

#include "rigid/step_workspace.hpp"
#include "rigid/warm_start.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using testing::box_body;

Scene resting_stack(int boxes, double tolerance) {
  ModelBuilder builder;
  builder.dt = 1e-2;
  builder.solver.type = SolverType::ProjectedGaussSeidel;
  builder.solver.max_iterations = 2000;
  builder.solver.tolerance = tolerance;
  builder.add_ground_plane();
  for (int i = 0; i < boxes; ++i)
    builder.add_body(box_body("box" + std::to_string(i), {0, 0, 0.1 + 0.2 * i}, {0.2, 0.2, 0.1}, 1.0));
  return builder.build();
}

TEST(WarmStart, ReducesGaussSeidelSweepsOnARestingBoxStack) {
  const Scene scene = resting_stack(3, 1e-6);
  State current = scene.state, next = scene.state;
  Workspace warm;
  for (int i = 0; i < 200; ++i) {  // settle
    step(scene.model, scene.params, current, scene.controls, next, warm);
    std::swap(current, next);
  }
  long warm_sweeps = 0, cold_sweeps = 0;
  for (int i = 0; i < 50; ++i) {
    Workspace cold;  // a fresh workspace has nothing to start from
    State cold_next = current;
    const StepStatus cold_status = step(scene.model, scene.params, current, scene.controls, cold_next, cold);
    const StepStatus warm_status = step(scene.model, scene.params, current, scene.controls, next, warm);
    EXPECT_TRUE(cold_status.converged);
    EXPECT_TRUE(warm_status.converged);
    EXPECT_GE(warm_status.contact_count, 12);  // four corners under each box
    cold_sweeps += cold_status.iterations;
    warm_sweeps += warm_status.iterations;
    std::swap(current, next);
  }
  EXPECT_LT(warm_sweeps * 3, cold_sweeps) << "warm " << warm_sweeps << " sweeps, cold " << cold_sweeps;
}

TEST(WarmStart, GivesEveryRowItsPreviousImpulseOnTheStateThePreviousStepProduced) {
  const Scene scene = resting_stack(2, 1e-8);
  State current = scene.state, next = scene.state;
  Workspace workspace;
  for (int i = 0; i < 100; ++i) {
    step(scene.model, scene.params, current, scene.controls, next, workspace);
    std::swap(current, next);
  }
  // `current` is the state the last step produced: stepping it again with the same rows
  // (same contacts, same features) starts every row from the stored λ.
  const Workspace::Impl& record = workspace.impl();
  const rigid::RowBlocks blocks{record.joint_rows, record.limit_rows_end, record.first_contact_row};
  std::vector<double> lambda(record.rows.size(), -1.0);
  const std::size_t matched = rigid::apply_warm_start(record.warm_start, current, record.rows, blocks,
                                                      record.limit_sources, record.contacts, lambda);
  EXPECT_EQ(matched, record.rows.size());
  for (std::size_t i = 0; i < lambda.size(); ++i) EXPECT_EQ(lambda[i], record.lambda[i]) << "row " << i;
  // Any other state starts cold.
  State other = current;
  other.position[1].z += 1e-12;
  EXPECT_EQ(rigid::apply_warm_start(record.warm_start, other, record.rows, blocks, record.limit_sources,
                                    record.contacts, lambda),
            0u);
  for (const double value : lambda) EXPECT_EQ(value, 0.0);
}

TEST(WarmStart, MatchesContactsByShapePairAndFeatureWhateverTheirOrder) {
  const Scene scene = resting_stack(2, 1e-8);
  State current = scene.state, next = scene.state;
  Workspace workspace;
  for (int i = 0; i < 100; ++i) {
    step(scene.model, scene.params, current, scene.controls, next, workspace);
    std::swap(current, next);
  }
  const Workspace::Impl& record = workspace.impl();
  ASSERT_GE(record.contacts.size(), 2u);
  // The same contacts listed in reverse order, with their rows reversed contact by contact.
  const std::size_t first = record.first_contact_row;
  const std::size_t per_contact = (record.rows.size() - first) / record.contacts.size();
  std::vector<Contact> reversed(record.contacts.rbegin(), record.contacts.rend());
  std::vector<solve::ConstraintRow> rows(record.rows.begin(), record.rows.begin() + static_cast<std::ptrdiff_t>(first));
  for (std::size_t c = reversed.size(); c-- > 0;) {
    const auto shift = static_cast<int>(rows.size()) - static_cast<int>(first + c * per_contact);
    for (std::size_t k = 0; k < per_contact; ++k) {
      solve::ConstraintRow row = record.rows[first + c * per_contact + k];
      if (row.type == solve::RowType::Direction || row.type == solve::RowType::Bound) row.group += shift;
      if (row.type == solve::RowType::Bound) row.normal += shift;
      rows.push_back(row);
    }
  }
  const rigid::RowBlocks blocks{record.joint_rows, record.limit_rows_end, first};
  std::vector<double> lambda(rows.size(), -1.0);
  EXPECT_EQ(rigid::apply_warm_start(record.warm_start, current, rows, blocks, record.limit_sources, reversed, lambda),
            rows.size());
  for (std::size_t c = 0; c < reversed.size(); ++c)
    for (std::size_t k = 0; k < per_contact; ++k)
      EXPECT_EQ(lambda[first + c * per_contact + k],
                record.lambda[first + (reversed.size() - 1 - c) * per_contact + k])
          << "contact " << c << " row " << k;
}

}  // namespace
}  // namespace diffphys
