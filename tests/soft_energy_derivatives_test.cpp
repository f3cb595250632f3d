// tests/soft_energy_derivatives_test.cpp — the elastic tet terms' hand-chained derivatives
// (tet_derivatives_through_f: HyperDual over F, chained through x ↦ F) against central
// differences of their energy (gradient) and of that gradient (Hessian), for both elastic
// models on a deformed, rotated pair of tets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "soft/energy_term.hpp"
#include "soft_test_scenes.hpp"

namespace diffphys::soft {
namespace {

TEST(SoftEnergyDerivatives, TetTermsThroughFMatchCentralDifferences) {
  const SoftBuild built = build_soft(testing::tet_pair_spec());
  const SoftModel& model = built.model;
  const auto dofs = static_cast<std::size_t>(model.dof_count());
  std::vector<double> x = model.rest_positions;
  for (std::size_t k = 0; k < dofs; ++k) x[k] += 0.01 * std::sin(1.7 * static_cast<double>(k) + 0.3);  // stretch, shear, rotate
  const auto terms = make_energy_terms(model);
  int checked = 0;
  for (const auto& term : terms) {
    const std::string name = term->name();
    if (name != "neo_hookean" && name != "corotated") continue;
    ++checked;
    const auto inputs_at = [&](const std::vector<double>& positions) {
      return TermInputs{model, built.params.values, positions, positions, model.dt, true};
    };
    // Record the block layout, then assemble into a dense matrix.
    std::vector<std::array<int, 2>> blocks;
    std::vector<double> scratch(dofs, 0.0);
    HessianSink recorder(blocks);
    term->add_derivatives(inputs_at(x), scratch, &recorder);
    std::vector<int> slots;
    for (const auto& [a, b] : blocks)
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) slots.push_back(static_cast<int>((3 * a + r) * dofs + 3 * b + c));
    std::vector<double> dense(dofs * dofs, 0.0), gradient(dofs, 0.0);
    HessianSink sink(slots, dense);
    term->add_derivatives(inputs_at(x), gradient, &sink);
    const double h = 1e-6;
    for (std::size_t k = 0; k < dofs; ++k) {
      std::vector<double> plus = x, minus = x;
      plus[k] += h;
      minus[k] -= h;
      const double numeric = (term->energy(inputs_at(plus)) - term->energy(inputs_at(minus))) / (2 * h);
      EXPECT_NEAR(gradient[k], numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << name << " dE/dx[" << k << "]";
      std::vector<double> g_plus(dofs, 0.0), g_minus(dofs, 0.0);
      term->add_derivatives(inputs_at(plus), g_plus, nullptr);
      term->add_derivatives(inputs_at(minus), g_minus, nullptr);
      for (std::size_t j = 0; j < dofs; ++j) {
        const double second = (g_plus[j] - g_minus[j]) / (2 * h);
        EXPECT_NEAR(dense[j * dofs + k], second, 1e-5 * std::max(1.0, std::abs(second)))
            << name << " d2E/dx[" << j << "]dx[" << k << "]";
      }
    }
  }
  EXPECT_EQ(checked, 2);
}

}  // namespace
}  // namespace diffphys::soft
