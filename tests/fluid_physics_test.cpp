// tests/fluid_physics_test.cpp — the fluid step against closed forms and references: the
// Taylor–Green vortex's energy decay and its order in Δx, the lid-driven cavity against Ghia,
// Ghia & Shin (1982), the divergence after projection, the pressure solve's iterations against
// grid size, what semi-Lagrangian transport conserves of a scalar, determinism, and the refusals
// of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/fluid_rollout.hpp"
#include "fluid/fluid_step.hpp"
#include "fluid_test_support.hpp"

namespace diffphys::fluid {
namespace testing {
// For tests/allocation_test.cpp, which owns the counting operator new: a 32² cavity with a
// buoyant scalar and forces, MacCormack and Crank–Nicolson; one warm-up step and step VJP, then
// 5 steps and 5 step VJPs between start() and stop(). Returns the pressure iterations measured.
int run_fluid_steps_for_allocation_count(void (*start)(), void (*stop)()) {
  FluidSpec spec;
  spec.nx = spec.ny = 32;
  spec.spacing = 1.0 / 32;
  spec.dt = 0.02;
  spec.viscosity = 0.01;
  spec.buoyancy = {0.5};
  spec.viscosity_theta = 0.5;
  spec.walls[static_cast<int>(Side::Top)].tangential_velocity = 1.0;
  const FluidBuild built = build_fluid(spec);
  const FluidModel& model = built.model;
  FluidWorkspace workspace(model);
  FluidState current = built.state, next = built.state;
  randomise(model, current, 3, 0.5);
  std::vector<double> controls(static_cast<std::size_t>(model.control_count()), 0.1);
  std::vector<double> record(step_record_size(model));
  const std::size_t faces = static_cast<std::size_t>(model.velocity_count());
  std::vector<double> velocities_bar(faces, 1.0), scalars_bar(current.scalars.size(), 1.0);
  std::vector<double> velocities_bar_in(faces), scalars_bar_in(scalars_bar.size());
  std::vector<double> controls_bar(controls.size()), params_bar(static_cast<std::size_t>(model.param_count()));
  FluidStepStatus adjoint_status;
  const auto step_and_reverse = [&]() {
    const FluidStepStatus status = fluid_step_recorded(model, built.params, current, controls, next, workspace, record);
    fluid_step_vjp(model, built.params, current, controls, record, velocities_bar, scalars_bar, velocities_bar_in,
                   scalars_bar_in, controls_bar, params_bar, workspace, adjoint_status);
    std::swap(current, next);
    return status.pressure_iterations + adjoint_status.pressure_iterations;
  };
  step_and_reverse();
  int iterations = 0;
  start();
  for (int i = 0; i < 5; ++i) iterations += step_and_reverse();
  stop();
  return iterations;
}
}  // namespace testing

namespace {

// ---------------------------------------------------------------------------------------
// Taylor–Green vortex on [0, π]², free-slip walls (fluid_test_support.hpp): ν = 0.1 over
// T = 1 s, kinetic energy against E0 exp(−4νT), at a fixed CFL number (h = T / N, max|u| h / Δx
// = 1/π) on N = 16, 32, 64.
struct DecayErrors {
  double relative[3];  // (E_N / E_0 − exp(−4νT)) / exp(−4νT)
  double ratio[3];     // E_N / E_0
};

DecayErrors taylor_green_decay(AdvectionScheme scheme) {
  const double viscosity = 0.1, duration = 1.0;
  const double exact = std::exp(-4 * viscosity * duration);
  DecayErrors errors{};
  const int grids[3] = {16, 32, 64};
  for (int g = 0; g < 3; ++g) {
    const int cells = grids[g];
    const FluidBuild built = build_fluid(testing::taylor_green_spec(cells, viscosity, duration / cells, scheme));
    FluidState current = built.state;
    testing::set_taylor_green(built.model, current);
    const double initial = kinetic_energy(built.model, current);
    FluidWorkspace workspace(built.model);
    FluidState next = current;
    for (int t = 0; t < cells; ++t) {
      const FluidStepStatus status = fluid_step(built.model, built.params, current, {}, next, workspace);
      EXPECT_TRUE(status.converged) << status.message;
      EXPECT_LE(status.divergence_after, built.model.solver.relative_tolerance * status.divergence_before * 1.01);
      std::swap(current, next);
    }
    errors.ratio[g] = kinetic_energy(built.model, current) / initial;
    errors.relative[g] = (errors.ratio[g] - exact) / exact;
  }
  return errors;
}

// The step is first order in time (the advection's carrier is frozen over the step, then
// projected: Chorin's splitting; measured at fixed Δx: the error halves with h), so at a fixed
// CFL number the decay converges at first order in Δx. Expect an observed order in [0.8, 1.2]
// between each pair of grids, and the first-order Richardson extrapolation 2 E_64 − E_32 to
// remove the leading term: it must agree with exp(−4νT) to 1e-3 (MacCormack; its second-order
// advection leaves a small O(Δx²) remainder).
TEST(FluidTaylorGreen, EnergyDecayConvergesAtFirstOrderToTheExactRate) {
  const double exact = std::exp(-0.4);
  for (const AdvectionScheme scheme : {AdvectionScheme::SemiLagrangian, AdvectionScheme::MacCormack}) {
    const char* name = scheme == AdvectionScheme::MacCormack ? "MacCormack" : "semi-Lagrangian";
    const DecayErrors e = taylor_green_decay(scheme);
    const double order_coarse = std::log2(e.relative[0] / e.relative[1]);
    const double order_fine = std::log2(e.relative[1] / e.relative[2]);
    const double extrapolated = 2 * e.ratio[2] - e.ratio[1];
    std::printf("%s: E/E0 error %.3e %.3e %.3e (N = 16, 32, 64), order %.2f %.2f, extrapolated %.3e\n", name,
                e.relative[0], e.relative[1], e.relative[2], order_coarse, order_fine, (extrapolated - exact) / exact);
    EXPECT_GT(order_coarse, 0.8) << name;
    EXPECT_LT(order_coarse, 1.2) << name;
    EXPECT_GT(order_fine, 0.8) << name;
    EXPECT_LT(order_fine, 1.2) << name;
    if (scheme == AdvectionScheme::MacCormack) {
      EXPECT_LT(std::abs(extrapolated - exact) / exact, 1e-3);
    }
  }
  // MacCormack removes most of the semi-Lagrangian scheme's numerical dissipation.
  const DecayErrors first = taylor_green_decay(AdvectionScheme::SemiLagrangian);
  const DecayErrors second = taylor_green_decay(AdvectionScheme::MacCormack);
  for (int g = 0; g < 3; ++g) EXPECT_LT(std::abs(second.relative[g]), 0.25 * std::abs(first.relative[g]));
}

// ---------------------------------------------------------------------------------------
// Lid-driven cavity: unit square, no-slip walls, the lid (top) at U = 1 m/s, ν = U L / Re; run
// from rest to a steady state at CFL 1, MacCormack. Ghia, Ghia & Shin (1982), "High-Re solutions
// for incompressible flow using the Navier–Stokes equations and a multigrid method",
// J. Comput. Phys. 48:387–411: Table I (u along the vertical centreline x = 0.5) and Table II
// (v along the horizontal centreline y = 0.5), 129² grid; the values below were checked
// against several independent transcriptions of the tables.
const double kGhiaY[] = {0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000,
                         0.4531, 0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547};
const double kGhiaU100[] = {0.84123,  0.78871,  0.73722,  0.68717,  0.23151,  0.00332,  -0.13641, -0.20581,
                            -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717};
const double kGhiaU1000[] = {0.65928,  0.57492,  0.51117,  0.46604,  0.33304,  0.18719,  0.05702, -0.06080,
                             -0.10648, -0.27805, -0.38289, -0.29730, -0.22220, -0.20196, -0.18109};
const double kGhiaX[] = {0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000,
                         0.2344, 0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625};
const double kGhiaV100[] = {-0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533, 0.05454,
                            0.17527,  0.17507,  0.16077,  0.12317,  0.10890,  0.10091,  0.09233};
const double kGhiaV1000[] = {-0.21388, -0.27669, -0.33714, -0.39188, -0.51550, -0.42665, -0.31966, 0.02526,
                             0.32235,  0.33075,  0.37095,  0.32627,  0.30353,  0.29012,  0.27485};

// Piecewise-linear interpolation of samples (positions ascending) at x.
double piecewise_linear(const std::vector<double>& positions, const std::vector<double>& values, double x) {
  for (std::size_t k = 0; k + 1 < positions.size(); ++k)
    if (x >= positions[k] && x <= positions[k + 1]) {
      const double t = (x - positions[k]) / (positions[k + 1] - positions[k]);
      return (1 - t) * values[k] + t * values[k + 1];
    }
  ADD_FAILURE() << "position " << x << " outside the samples";
  return 0.0;
}

struct CavityErrors {
  double u = 0, v = 0;     // max |ours − Ghia| over the table's interior points, m/s
  double steady_rate = 0;  // max |u_{t+1} − u_t| / h at the end, m/s²
};

CavityErrors cavity_against_ghia(int cells, double reynolds, double duration, const double* ghia_u,
                                 const double* ghia_v) {
  FluidSpec spec;
  spec.nx = spec.ny = cells;
  spec.spacing = 1.0 / cells;
  spec.dt = 1.0 / cells;  // CFL 1 at the lid's speed
  spec.viscosity = 1.0 / reynolds;
  spec.scalar_count = 0;
  spec.walls[static_cast<int>(Side::Top)].tangential_velocity = 1.0;
  spec.solver.relative_tolerance = 1e-8;
  const FluidBuild built = build_fluid(spec);
  const FluidModel& model = built.model;
  FluidWorkspace workspace(model);
  FluidState current = built.state, next = built.state;
  CavityErrors errors;
  const int steps = static_cast<int>(std::lround(duration / spec.dt));
  for (int t = 0; t < steps; ++t) {
    const FluidStepStatus status = fluid_step(model, built.params, current, {}, next, workspace);
    EXPECT_TRUE(status.converged) << status.message;
    if (!status.converged) return errors;
    if (t + 1 == steps) {
      for (std::size_t k = 0; k < current.velocities.size(); ++k)
        errors.steady_rate =
            std::max(errors.steady_rate, std::abs(next.velocities[k] - current.velocities[k]) / spec.dt);
    }
    std::swap(current, next);
  }
  // u on x = 0.5 (the faces i = N/2), with the walls' values at y = 0 (0) and y = 1 (the lid, 1).
  std::vector<double> ys{0.0}, us{0.0}, xs{0.0}, vs{0.0};
  for (int j = 0; j < cells; ++j) {
    ys.push_back((j + 0.5) / cells);
    us.push_back(current.velocities[j * (cells + 1) + cells / 2]);
  }
  ys.push_back(1.0);
  us.push_back(1.0);
  // v on y = 0.5 (the faces j = N/2).
  for (int i = 0; i < cells; ++i) {
    xs.push_back((i + 0.5) / cells);
    vs.push_back(current.velocities[model.u_count() + (cells / 2) * cells + i]);
  }
  xs.push_back(1.0);
  vs.push_back(0.0);
  for (int k = 0; k < 15; ++k) {
    errors.u = std::max(errors.u, std::abs(piecewise_linear(ys, us, kGhiaY[k]) - ghia_u[k]));
    errors.v = std::max(errors.v, std::abs(piecewise_linear(xs, vs, kGhiaX[k]) - ghia_v[k]));
  }
  return errors;
}

// Re = 100 on 64² (Ghia: 129²). Tolerance 0.01 U: the scheme is first order at fixed CFL, and
// the error at 32² is 0.0086 (measured while writing this test): halving Δx must not make it
// worse than 0.01 anywhere on the table's 30 interior points.
TEST(FluidCavity, Reynolds100MatchesGhiaCentrelinesAt64) {
  const CavityErrors errors = cavity_against_ghia(64, 100.0, 15.0, kGhiaU100, kGhiaV100);
  std::printf("Re 100, 64^2: max |u - Ghia| %.4f, max |v - Ghia| %.4f, final rate of change %.1e\n", errors.u, errors.v,
              errors.steady_rate);
  EXPECT_LT(errors.steady_rate, 1e-3);  // steady
  EXPECT_LT(errors.u, 0.01);
  EXPECT_LT(errors.v, 0.01);
}

// Re = 1000 on 128² (about a minute: labelled long). Its boundary layers are thinner: the error
// measured at 64² was 0.055 U and halves with Δx (first order), so 0.03 U at 128².
TEST(FluidCavity, Reynolds1000MatchesGhiaCentrelinesAt128) {
  const CavityErrors errors = cavity_against_ghia(128, 1000.0, 40.0, kGhiaU1000, kGhiaV1000);
  std::printf("Re 1000, 128^2: max |u - Ghia| %.4f, max |v - Ghia| %.4f, final rate of change %.1e\n", errors.u,
              errors.v, errors.steady_rate);
  EXPECT_LT(errors.steady_rate, 1e-3);
  EXPECT_LT(errors.u, 0.03);
  EXPECT_LT(errors.v, 0.03);
}

// ---------------------------------------------------------------------------------------
// The projection: after it, the RMS divergence is at most relative_tolerance × before (its
// residual is the divergence: ∇·(u* − Gp) = −(b − A p)), measured from the state itself.
TEST(FluidProjection, DivergenceAfterIsBelowTheStatedTolerance) {
  for (const double tolerance : {1e-6, 1e-10}) {
    FluidSpec spec = testing::small_box_spec(AdvectionScheme::MacCormack, 1.0);
    spec.nx = 48;
    spec.ny = 40;
    spec.spacing = 0.02;
    spec.dt = 0.005;
    spec.solver.relative_tolerance = tolerance;
    const FluidBuild built = build_fluid(spec);
    FluidState state = built.state, next = built.state;
    testing::randomise(built.model, state, 5, 1.0);
    FluidWorkspace workspace(built.model);
    const FluidStepStatus status = fluid_step(built.model, built.params, state, {}, next, workspace);
    ASSERT_TRUE(status.converged) << status.message;
    EXPECT_GT(status.divergence_before, 1.0);  // a random field is far from solenoidal
    EXPECT_LE(status.divergence_after, tolerance * status.divergence_before * 1.01);
    EXPECT_NEAR(divergence_rms(built.model, next.velocities), status.divergence_after, 1e-3 * status.divergence_after);
    EXPECT_LE(status.pressure_residual, tolerance);
  }
}

// Multigrid keeps the PCG iteration count near constant with the grid size: a random field on
// N² for N = 32 … 256 (5 levels at 256²).
TEST(FluidProjection, PressureIterationsStayNearConstantWithGridSize) {
  std::vector<int> iterations;
  for (const int cells : {32, 64, 128, 256}) {
    FluidSpec spec;
    spec.nx = spec.ny = cells;
    spec.spacing = 1.0 / cells;
    spec.dt = 0.1 / cells;
    spec.scalar_count = 0;
    const FluidBuild built = build_fluid(spec);
    FluidState state = built.state, next = built.state;
    testing::randomise(built.model, state, 7, 1.0);
    FluidWorkspace workspace(built.model);
    const FluidStepStatus status = fluid_step(built.model, built.params, state, {}, next, workspace);
    ASSERT_TRUE(status.converged) << status.message;
    iterations.push_back(status.pressure_iterations);
    std::printf("N = %d: %d PCG iterations to 1e-10\n", cells, status.pressure_iterations);
  }
  const auto [fewest, most] = std::minmax_element(iterations.begin(), iterations.end());
  EXPECT_LE(*most - *fewest, 2);
  EXPECT_LE(*most, 15);
}

// ---------------------------------------------------------------------------------------
// What semi-Lagrangian transport conserves of a passive scalar. Exactly: a constant (the
// bilinear weights sum to 1; MacCormack's correction of a constant is 0) and the bounds (each
// value is a convex combination of old ones; MacCormack is clamped to its stencil's min–max), so
// no new extrema. Not exactly: the total mass Σ s Δx² — interpolation at departure points is not
// a flux form. Its error is the interpolation's: at a fixed CFL number it falls as Δx for the
// first-order scheme and as Δx² for MacCormack (second order where the field is smooth).
// Measured on a Gaussian blob carried by the inviscid Taylor–Green vortex over 1 s: the observed
// orders must be at least 0.8 and 1.6 between each pair of grids.
TEST(FluidScalar, ConstantsAndBoundsAreKeptExactlyMassToTheInterpolationError) {
  for (const AdvectionScheme scheme : {AdvectionScheme::SemiLagrangian, AdvectionScheme::MacCormack}) {
    const char* name = scheme == AdvectionScheme::MacCormack ? "MacCormack" : "semi-Lagrangian";
    std::vector<double> drift;
    for (const int cells : {32, 64, 128}) {
      FluidSpec spec = testing::taylor_green_spec(cells, 0.0, 1.0 / cells, scheme);
      spec.scalar_count = 2;
      const FluidBuild built = build_fluid(spec);
      const FluidModel& model = built.model;
      FluidState state = built.state, next = built.state;
      testing::set_taylor_green(model, state);
      const int n = model.cell_count();
      for (int j = 0; j < cells; ++j)
        for (int i = 0; i < cells; ++i) {
          const double x = (i + 0.5) * spec.spacing, y = (j + 0.5) * spec.spacing;
          state.scalars[j * cells + i] = 1.0;  // scalar 0: a constant
          state.scalars[n + j * cells + i] = std::exp(-((x - 1.2) * (x - 1.2) + (y - 1.0) * (y - 1.0)) / 0.1);
        }
      const double low = *std::min_element(state.scalars.begin() + n, state.scalars.end());
      const double high = *std::max_element(state.scalars.begin() + n, state.scalars.end());
      const double mass = scalar_mass(model, state, 1);
      FluidWorkspace workspace(model);
      for (int t = 0; t < cells; ++t) {
        ASSERT_TRUE(fluid_step(model, built.params, state, {}, next, workspace).converged);
        std::swap(state, next);
      }
      for (int c = 0; c < n; ++c) {
        EXPECT_NEAR(state.scalars[c], 1.0, 1e-15) << name << " cell " << c;
        EXPECT_GE(state.scalars[n + c], low) << name << " cell " << c;
        EXPECT_LE(state.scalars[n + c], high) << name << " cell " << c;
      }
      drift.push_back(std::abs(scalar_mass(model, state, 1) - mass) / mass);
    }
    std::printf("%s: relative mass drift over 1 s %.2e %.2e %.2e (N = 32, 64, 128)\n", name, drift[0], drift[1],
                drift[2]);
    const double expected_order = scheme == AdvectionScheme::MacCormack ? 2.0 : 1.0;
    EXPECT_GT(std::log2(drift[0] / drift[1]), 0.8 * expected_order) << name;
    EXPECT_GT(std::log2(drift[1] / drift[2]), 0.8 * expected_order) << name;
  }
}

// ---------------------------------------------------------------------------------------
// Same inputs, same bits: two workspaces, two runs of a cavity with a buoyant plume.
TEST(FluidStep, IsDeterministic) {
  FluidSpec spec = testing::small_box_spec(AdvectionScheme::MacCormack, 0.5);
  spec.nx = spec.ny = 16;
  const FluidBuild built = build_fluid(spec);
  FluidState initial = built.state;
  testing::randomise(built.model, initial, 9, 0.5);
  std::vector<double> finals[2];
  for (auto& result : finals) {
    FluidRollout rollout(built.model, built.params);
    rollout.run(initial, {}, 20);
    result = rollout.final_state().velocities;
    result.insert(result.end(), rollout.final_state().scalars.begin(), rollout.final_state().scalars.end());
  }
  EXPECT_EQ(finals[0], finals[1]);
}

// ---------------------------------------------------------------------------------------
// Bad input is refused with an Error naming the item and the value.
void expect_error_mentions(const std::function<void()>& action, const std::vector<std::string>& pieces) {
  try {
    action();
    ADD_FAILURE() << "no Error thrown (expected one mentioning '" << pieces.front() << "')";
  } catch (const Error& error) {
    for (const std::string& piece : pieces)
      EXPECT_NE(std::string(error.what()).find(piece), std::string::npos)
          << "'" << error.what() << "' lacks '" << piece << "'";
  }
}

TEST(FluidBadInput, IsRefusedNamingTheItemAndTheValue) {
  const auto with = [](auto change) {
    FluidSpec spec;
    change(spec);
    return [spec] { build_fluid(spec); };
  };
  expect_error_mentions(with([](FluidSpec& s) { s.nx = 0; }), {"resolution", "nx = 0"});
  expect_error_mentions(with([](FluidSpec& s) { s.ny = -3; }), {"resolution", "ny = -3"});
  expect_error_mentions(with([](FluidSpec& s) { s.spacing = 0.0; }), {"spacing", "got 0"});
  expect_error_mentions(with([](FluidSpec& s) { s.spacing = -0.1; }), {"spacing", "got -0.1"});
  expect_error_mentions(with([](FluidSpec& s) { s.dt = 0.0; }), {"dt", "got 0"});
  expect_error_mentions(with([](FluidSpec& s) { s.viscosity = -0.01; }), {"viscosity", "got -0.01"});
  expect_error_mentions(with([](FluidSpec& s) { s.viscosity = std::nan(""); }), {"viscosity", "got nan"});
  expect_error_mentions(with([](FluidSpec& s) { s.buoyancy = {std::nan("")}; }), {"buoyancy[0]", "got nan"});
  expect_error_mentions(with([](FluidSpec& s) { s.buoyancy = {1.0, 2.0}; }), {"buoyancy has 2 values"});
  expect_error_mentions(with([](FluidSpec& s) { s.viscosity_theta = 0.3; }), {"viscosity_theta", "got 0.3"});
  expect_error_mentions(with([](FluidSpec& s) { s.max_cfl = 50; }), {"max_cfl", "got 50"});
  expect_error_mentions(with([](FluidSpec& s) { s.walls[3].tangential_velocity = INFINITY; }),
                        {"top wall", "tangential_velocity", "got inf"});

  FluidSpec spec;
  spec.nx = spec.ny = 8;
  spec.spacing = 0.1;
  spec.dt = 0.1;
  spec.max_cfl = 2.0;
  const FluidBuild built = build_fluid(spec);
  // θ checked at run time.
  FluidParams negative = built.params;
  negative.slice(built.model, "fluid/viscosity")[0] = -1.0;
  expect_error_mentions([&] { FluidRollout(built.model, negative).run(built.state, {}, 1); },
                        {"fluid/viscosity", "got -1"});
  // A NaN velocity, a velocity on a wall, a CFL number the scheme is not allowed to take.
  FluidState state = built.state;
  state.velocities[3] = std::nan("");
  expect_error_mentions([&] { FluidRollout(built.model, built.params).run(state, {}, 1); },
                        {"velocity of face 3", "got nan"});
  state = built.state;
  state.velocities[0] = 1.0;
  expect_error_mentions([&] { validate_fluid_state(built.model, state); }, {"u face (0, 0)", "wall", "got 1"});
  state = built.state;
  state.velocities[4] = 2.5;  // CFL 2.5 × 0.1 / 0.1 = 2.5 > 2
  expect_error_mentions([&] { FluidRollout(built.model, built.params).run(state, {}, 1); },
                        {"CFL number 2.5", "max_cfl 2"});
  // The step itself reports (not throws) a CFL it cannot take, and the rollout makes it an Error.
  FluidWorkspace workspace(built.model);
  FluidState next;
  const FluidStepStatus status = fluid_step(built.model, built.params, state, {}, next, workspace);
  EXPECT_FALSE(status.converged);
  EXPECT_NE(status.message.find("CFL number 2.5"), std::string::npos) << status.message;
  // A NaN control; controls of the wrong size.
  std::vector<double> controls(static_cast<std::size_t>(built.model.control_count()), 0.0);
  controls[5] = std::nan("");
  expect_error_mentions([&] { FluidRollout(built.model, built.params).run(built.state, controls, 1); },
                        {"control 5", "got nan"});
  controls.pop_back();
  expect_error_mentions([&] { FluidRollout(built.model, built.params).run(built.state, controls, 1); },
                        {"controls have 127 values"});
  // A step whose state explodes is an error, not a converged step: a force that makes the flow
  // exceed max_cfl within the rollout.
  std::vector<double> huge(static_cast<std::size_t>(built.model.control_count()) * 3, 0.0);
  for (std::size_t k = 0; k < huge.size(); k += 2) huge[k] = 30.0 * (static_cast<int>(k / 16) % 2 ? 1 : -1);
  expect_error_mentions([&] { FluidRollout(built.model, built.params).run(built.state, huge, 3); },
                        {"step ", "CFL number", "exceeds max_cfl"});
  // A non-finite state given to the step is a failed step, not a converged one.
  state = built.state;
  state.scalars[2] = std::nan("");
  const FluidStepStatus non_finite = fluid_step(built.model, built.params, state, {}, next, workspace);
  EXPECT_FALSE(non_finite.converged);
  EXPECT_NE(non_finite.message.find("non-finite"), std::string::npos) << non_finite.message;
}

// A solve that misses its tolerance fails the step, and the rollout says which and by how much.
TEST(FluidStep, APressureSolveThatMissesItsToleranceIsAnError) {
  FluidSpec spec = testing::small_box_spec(AdvectionScheme::MacCormack, 1.0);
  spec.nx = spec.ny = 32;
  spec.spacing = 1.0 / 32;
  spec.dt = 0.01;
  spec.solver.max_iterations = 1;  // 8 are needed for 1e-14
  const FluidBuild built = build_fluid(spec);
  FluidState state = built.state;
  testing::randomise(built.model, state, 41, 1.0);
  expect_error_mentions([&] { FluidRollout(built.model, built.params).run(state, {}, 2); },
                        {"step 0 failed", "pressure solve missed its tolerance", "after 1 iterations"});
}

}  // namespace
}  // namespace diffphys::fluid
