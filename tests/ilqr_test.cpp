// tests/ilqr_test.cpp — iLQR and MPC (diffphys/ilqr.hpp): on linear systems (a generic one
// through LinearDynamics, and a diffphys motor-driven cart, whose step is linear) the gains
// and the optimal cost equal the LQR solution of the discrete Riccati equation; with control
// bounds the plan stays in the box and beats the clamped LQR policy; SimulatorDynamics chains
// substep Jacobians exactly (central differences); on a nonlinear diffphys pendulum the
// converged plan is a stationary point of the cost, checked with gradients from
// Rollout::backward (an independent path); MPC whose final cost is the stationary Riccati
// cost-to-go applies exactly the infinite-horizon LQR law.
#include "diffphys/ilqr.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/jacobians.hpp"
#include "diffphys/rollout.hpp"
#include "test_scenes.hpp"

namespace diffphys {
namespace {

using Matrix = std::vector<double>;  // row-major

Matrix multiply(const Matrix& A, const Matrix& B, int r, int k, int c) {
  Matrix C(static_cast<std::size_t>(r * c), 0.0);
  for (int i = 0; i < r; ++i)
    for (int l = 0; l < k; ++l)
      for (int j = 0; j < c; ++j)
        C[static_cast<std::size_t>(i * c + j)] +=
            A[static_cast<std::size_t>(i * k + l)] * B[static_cast<std::size_t>(l * c + j)];
  return C;
}
Matrix transpose(const Matrix& A, int r, int c) {
  Matrix T(static_cast<std::size_t>(r * c));
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) T[static_cast<std::size_t>(j * r + i)] = A[static_cast<std::size_t>(i * c + j)];
  return T;
}
// X = S⁻¹ Y (S: m × m, Y: m × c) by Gauss–Jordan elimination with partial pivoting.
Matrix solve(Matrix S, Matrix Y, int m, int c) {
  for (int col = 0; col < m; ++col) {
    int pivot = col;
    for (int i = col + 1; i < m; ++i)
      if (std::abs(S[static_cast<std::size_t>(i * m + col)]) > std::abs(S[static_cast<std::size_t>(pivot * m + col)]))
        pivot = i;
    for (int j = 0; j < m; ++j)
      std::swap(S[static_cast<std::size_t>(col * m + j)], S[static_cast<std::size_t>(pivot * m + j)]);
    for (int j = 0; j < c; ++j)
      std::swap(Y[static_cast<std::size_t>(col * c + j)], Y[static_cast<std::size_t>(pivot * c + j)]);
    for (int i = 0; i < m; ++i) {
      if (i == col) continue;
      const double f = S[static_cast<std::size_t>(i * m + col)] / S[static_cast<std::size_t>(col * m + col)];
      for (int j = 0; j < m; ++j)
        S[static_cast<std::size_t>(i * m + j)] -= f * S[static_cast<std::size_t>(col * m + j)];
      for (int j = 0; j < c; ++j)
        Y[static_cast<std::size_t>(i * c + j)] -= f * Y[static_cast<std::size_t>(col * c + j)];
    }
  }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < c; ++j) Y[static_cast<std::size_t>(i * c + j)] /= S[static_cast<std::size_t>(i * m + i)];
  return Y;
}

// Finite-horizon discrete LQR by the Riccati recursion: P_T = Q_f,
// K_t = −(R + BᵀP B)⁻¹ BᵀP A,  P_t = Q + AᵀP A + AᵀP B K_t. Returns K_0 … K_{T−1} and P_0.
struct Riccati {
  std::vector<Matrix> gains;
  Matrix P0;
};
Riccati riccati(const Matrix& A, const Matrix& B, const Matrix& Q, const Matrix& R, const Matrix& Qf, int n, int m,
                int T) {
  Riccati out;
  out.gains.resize(static_cast<std::size_t>(T));
  Matrix P = Qf;
  const Matrix At = transpose(A, n, n), Bt = transpose(B, n, m);
  for (int t = T - 1; t >= 0; --t) {
    const Matrix PA = multiply(P, A, n, n, n), PB = multiply(P, B, n, n, m);
    Matrix S = multiply(Bt, PB, m, n, m);
    for (int i = 0; i < m * m; ++i) S[static_cast<std::size_t>(i)] += R[static_cast<std::size_t>(i)];
    Matrix K = solve(S, multiply(Bt, PA, m, n, n), m, n);
    for (double& v : K) v = -v;
    const Matrix AtPA = multiply(At, PA, n, n, n), AtPBK = multiply(multiply(At, PB, n, n, m), K, n, m, n);
    for (int i = 0; i < n * n; ++i)
      P[static_cast<std::size_t>(i)] =
          Q[static_cast<std::size_t>(i)] + AtPA[static_cast<std::size_t>(i)] + AtPBK[static_cast<std::size_t>(i)];
    out.gains[static_cast<std::size_t>(t)] = K;
  }
  out.P0 = P;
  return out;
}

double half_quadratic_form(const Matrix& P, const std::vector<double>& x) {
  const int n = static_cast<int>(x.size());
  double value = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      value += 0.5 * x[static_cast<std::size_t>(i)] * P[static_cast<std::size_t>(i * n + j)] *
               x[static_cast<std::size_t>(j)];
  return value;
}

TEST(Ilqr, GenericLinearSystemMatchesTheRiccatiSolution) {
  const int n = 4, m = 2, T = 40;
  // A lightly unstable coupled system.
  const Matrix A = {1.02,  0.10, 0.00,  0.01,  //
                    -0.05, 0.98, 0.03,  0.00,  //
                    0.00,  0.02, 1.01,  0.10,  //
                    0.01,  0.00, -0.04, 0.99};
  const Matrix B = {0.00, 0.10, 0.05, 0.00, 0.01, 0.02, 0.10, -0.03};
  const Matrix Q = {2.0, 0.1, 0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0, 0.0, 1.5, 0.2, 0.0, 0.0, 0.2, 0.5};
  const Matrix R = {0.3, 0.05, 0.05, 0.2};
  const Matrix Qf = {5.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 2.0};
  const std::vector<double> x0 = {1.0, -0.5, 0.3, 2.0};
  LinearDynamics dynamics(n, m, A, B);
  QuadraticCost cost(dynamics, Q, R, Qf, std::vector<double>(n, 0.0));
  Ilqr ilqr(dynamics, cost);
  const IlqrResult plan = ilqr.solve(x0, {}, T);
  const Riccati lqr = riccati(A, B, Q, R, Qf, n, m, T);

  EXPECT_TRUE(plan.converged);
  EXPECT_LE(plan.iterations, 3);  // one Newton step solves a quadratic problem exactly
  const double optimal_cost = half_quadratic_form(lqr.P0, x0);
  EXPECT_NEAR(plan.cost, optimal_cost, 1e-8 * optimal_cost);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < m * n; ++i)
      EXPECT_NEAR(plan.feedback[static_cast<std::size_t>(t * m * n + i)],
                  lqr.gains[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)], 1e-8)
          << "K_" << t << " entry " << i;
  // The plan is the LQR feedback law applied along its own trajectory: u_t = K_t x_t.
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < m; ++i) {
      double u = 0.0;
      for (int j = 0; j < n; ++j)
        u += lqr.gains[static_cast<std::size_t>(t)][static_cast<std::size_t>(i * n + j)] *
             plan.states[static_cast<std::size_t>(t * n + j)];
      EXPECT_NEAR(plan.controls[static_cast<std::size_t>(t * m + i)], u, 1e-8);
    }
}

TEST(Ilqr, DiffphysCartMatchesTheRiccatiSolutionOfItsLinearStep) {
  const double mass = 2.0, h = 0.05;
  const int T = 30;
  // The cart's step is linear: x' = [[1, h], [0, 1]] x + [h²/m, h/m] u.
  Scene scene = testing::motor_cart(mass, h, 1.0);
  scene.state.linear_velocity[1] = {0.5, 0, 0};
  SimulatorDynamics dynamics(scene.model, scene.params);
  const int n = dynamics.tangent_size();
  std::vector<double> x0(static_cast<std::size_t>(dynamics.state_size())), goal(x0.size());
  dynamics.pack(scene.state, x0);
  State goal_state = scene.state;
  goal_state.position[1] = {0, 0, 0};
  goal_state.linear_velocity[1] = {0, 0, 0};
  dynamics.pack(goal_state, goal);
  // Weights on the cart's p_x (tangent 12) and v_x (tangent 18) only.
  const double qp = 3.0, qv = 0.5, r = 0.2, qfp = 10.0, qfv = 1.0;
  Matrix Q(static_cast<std::size_t>(n * n), 0.0), Qf = Q;
  Q[12 * n + 12] = qp;
  Q[18 * n + 18] = qv;
  Qf[12 * n + 12] = qfp;
  Qf[18 * n + 18] = qfv;
  QuadraticCost cost(dynamics, Q, {r}, Qf, goal);
  Ilqr ilqr(dynamics, cost);
  const IlqrResult plan = ilqr.solve(x0, {}, T);

  const Riccati lqr = riccati({1, h, 0, 1}, {h * h / mass, h / mass}, {qp, 0, 0, qv}, {r}, {qfp, 0, 0, qfv}, 2, 1, T);
  EXPECT_TRUE(plan.converged);
  const double optimal_cost = half_quadratic_form(lqr.P0, {1.0, 0.5});
  EXPECT_NEAR(plan.cost, optimal_cost, 1e-8 * optimal_cost);
  for (int t = 0; t < T; ++t) {
    EXPECT_NEAR(plan.feedback[static_cast<std::size_t>(t * n + 12)], lqr.gains[static_cast<std::size_t>(t)][0], 1e-8)
        << "t " << t;
    EXPECT_NEAR(plan.feedback[static_cast<std::size_t>(t * n + 18)], lqr.gains[static_cast<std::size_t>(t)][1], 1e-8)
        << "t " << t;
  }
}

TEST(Ilqr, BoundedControlsStayInTheBoxAndBeatTheClampedLqrPolicy) {
  const int n = 2, m = 1, T = 60;
  const double h = 0.1;
  const Matrix A = {1, h, 0, 1}, B = {0.5 * h * h, h}, Q = {1, 0, 0, 0.1}, R = {0.01}, Qf = {10, 0, 0, 1};
  const std::vector<double> x0 = {3.0, 0.0};
  LinearDynamics dynamics(n, m, A, B);
  QuadraticCost cost(dynamics, Q, R, Qf, {0, 0});
  IlqrSettings settings;
  settings.control_lower = {-1.0};
  settings.control_upper = {1.0};
  Ilqr ilqr(dynamics, cost, settings);
  const IlqrResult plan = ilqr.solve(x0, {}, T);
  int saturated = 0;
  for (double u : plan.controls) {
    EXPECT_GE(u, -1.0);
    EXPECT_LE(u, 1.0);
    saturated += std::abs(u) > 1.0 - 1e-12;
  }
  EXPECT_GT(saturated, 3);  // the bound is active: the unbounded optimum starts near u = −20

  // The unbounded LQR law, clamped, is feasible: the plan must do at least as well.
  const Riccati lqr = riccati(A, B, Q, R, Qf, n, m, T);
  std::vector<double> x = x0, next(2);
  double clamped_cost = 0.0;
  for (int t = 0; t < T; ++t) {
    const Matrix& K = lqr.gains[static_cast<std::size_t>(t)];
    const double u = std::clamp(K[0] * x[0] + K[1] * x[1], -1.0, 1.0);
    clamped_cost += half_quadratic_form(Q, x) + 0.5 * R[0] * u * u;
    dynamics.step(x, std::vector<double>{u}, next);
    x = next;
  }
  clamped_cost += half_quadratic_form(Qf, x);
  EXPECT_LT(plan.cost, clamped_cost);
  EXPECT_NEAR(plan.cost, plan.cost_history.back(), 0.0);
}

TEST(SimulatorDynamics, ChainedSubstepJacobiansMatchCentralDifferences) {
  // Three simulator steps per control step: A = A₃A₂A₁, B = A₃A₂B₁ + A₃B₂ + B₃, against
  // central differences of the whole control step on the manifold.
  ModelBuilder builder = testing::hinge_chain(2, 0.4, 0.7, 0.5);
  builder.dt = 0.01;
  // Off-manifold perturbations are pulled back by the joint projection, which stops at its
  // tolerance; whatever it leaves, divided by dt, becomes velocity noise in the differences.
  // Converging it fully keeps that noise below the differences' truncation error.
  builder.solver.stabilization_tolerance = 1e-15;
  builder.solver.stabilization_iterations = 20;
  ActuatorSpec motor;
  motor.name = "torque";
  motor.joint = "hinge1";
  builder.add_actuator(motor);
  Scene scene = builder.build();
  scene.state.angular_velocity[1] = {0, 0.8, 0};
  SimulatorDynamics dynamics(scene.model, scene.params, 3);
  const int n = dynamics.tangent_size(), nx = dynamics.state_size();
  std::vector<double> x(static_cast<std::size_t>(nx)), next(x.size()), A(static_cast<std::size_t>(n * n)),
      B(static_cast<std::size_t>(n));
  dynamics.pack(scene.state, x);
  const std::vector<double> u = {0.3};
  dynamics.linearize(x, u, next, A, B);

  const double epsilon = 1e-6;
  std::vector<double> plus(x.size()), minus(x.size()), d_plus(static_cast<std::size_t>(n)),
      d_minus(static_cast<std::size_t>(n)), tangent(static_cast<std::size_t>(n), 0.0);
  State moved;
  auto expect_column = [&](const std::vector<double>& analytic, int columns, int column) {
    dynamics.difference(plus, next, d_plus);
    dynamics.difference(minus, next, d_minus);
    double largest = 0.0, error = 0.0;
    for (int i = 0; i < n; ++i) {
      const double numeric =
          (d_plus[static_cast<std::size_t>(i)] - d_minus[static_cast<std::size_t>(i)]) / (2 * epsilon);
      largest = std::max(largest, std::abs(numeric));
      error = std::max(error, std::abs(numeric - analytic[static_cast<std::size_t>(i * columns + column)]));
    }
    EXPECT_LE(error, 1e-5 * std::max(1.0, largest)) << "column " << column;
  };
  for (int j = 12; j < n; ++j) {  // body 0, the world, does not move
    for (const double sign : {1.0, -1.0}) {
      tangent[static_cast<std::size_t>(j)] = sign * epsilon;
      state_retract(scene.model, scene.state, tangent, moved);
      std::vector<double> packed(x.size());
      dynamics.pack(moved, packed);
      dynamics.step(packed, u, sign > 0 ? plus : minus);
    }
    tangent[static_cast<std::size_t>(j)] = 0.0;
    expect_column(A, n, j);
  }
  dynamics.step(x, std::vector<double>{u[0] + epsilon}, plus);
  dynamics.step(x, std::vector<double>{u[0] - epsilon}, minus);
  expect_column(B, 1, 0);
}

TEST(Ilqr, ConvergedPendulumPlanIsStationaryUnderRolloutGradients) {
  // A hinged box swinging under gravity, driven by a motor, to reach and hold 1 rad.
  ModelBuilder builder = testing::hinge_chain(1, 0.5, 1.0, 0.2);
  builder.dt = 0.02;
  ActuatorSpec motor;
  motor.name = "torque";
  motor.joint = "hinge0";
  builder.add_actuator(motor);
  const Scene scene = builder.build();
  SimulatorDynamics dynamics(scene.model, scene.params);
  const int n = dynamics.tangent_size(), T = 40;
  std::vector<double> x0(static_cast<std::size_t>(dynamics.state_size())), goal(x0.size());
  dynamics.pack(scene.state, x0);
  State goal_state = scene.state;
  goal_state.orientation[1] = Quat::from_axis_angle({0, 1, 0}, 1.0);
  dynamics.pack(goal_state, goal);
  // Angle about y (tangent 16) and angular velocity about y (tangent 22) of the link: for a
  // hinge about y these are exact quadratic costs in the tangent (no manifold curvature).
  const double q_angle = 10.0, q_rate = 0.1, r = 0.05;
  Matrix Q(static_cast<std::size_t>(n * n), 0.0);
  Q[16 * n + 16] = q_angle;
  Q[22 * n + 22] = q_rate;
  const Matrix Qf = Q;
  QuadraticCost cost(dynamics, Q, {r}, Qf, goal);
  IlqrSettings settings;
  settings.tolerance = 1e-12;
  Ilqr ilqr(dynamics, cost, settings);
  const IlqrResult plan = ilqr.solve(x0, {}, T);
  ASSERT_TRUE(plan.converged);
  EXPECT_LT(plan.cost, 0.2 * plan.cost_history.front());

  // dJ/du_t by the adjoint of the whole rollout: ℓ_x = Q (x ⊖ goal) per state, + R u_t — at
  // the initial (zero) controls and at the plan, whose gradient must have all but vanished.
  std::vector<double> difference(static_cast<std::size_t>(n));
  auto largest_control_gradient = [&](const std::vector<double>& controls) {
    Rollout rollout(scene.model, scene.params);
    rollout.run(scene.state, controls, T);
    const Gradients g = rollout.backward([&](int, const State& x, std::span<double> dL_dx) {
      state_difference(scene.model, x, goal_state, difference);
      dL_dx[16] += q_angle * difference[16];
      dL_dx[22] += q_rate * difference[22];
    });
    double largest = 0.0;
    for (int t = 0; t < T; ++t)
      largest = std::max(largest,
                         std::abs(g.controls[static_cast<std::size_t>(t)] + r * controls[static_cast<std::size_t>(t)]));
    return largest;
  };
  const double initial = largest_control_gradient(std::vector<double>(static_cast<std::size_t>(T), 0.0));
  const double converged = largest_control_gradient(plan.controls);
  EXPECT_GT(initial, 0.1);
  EXPECT_LT(converged, 1e-6 * initial) << "largest |dJ/du_t|: " << converged << " at the plan, " << initial
                                       << " at u = 0";
}

TEST(Mpc, WithTheInfiniteHorizonCostToGoAsFinalCostItIsTheLqrLawAndStabilises) {
  // An unstable system; with Q_f = P∞ (the stationary Riccati solution) every horizon's first
  // gain is the infinite-horizon LQR gain K∞, so MPC must apply u = K∞ x exactly.
  const int n = 2, m = 1;
  const Matrix A = {1.1, 0.1, 0.0, 0.95}, B = {0.0, 0.1}, Q = {1, 0, 0, 1}, R = {0.1};
  const Riccati stationary = riccati(A, B, Q, R, Q, n, m, 3000);
  const Matrix& K = stationary.gains[0];
  LinearDynamics dynamics(n, m, A, B);
  QuadraticCost cost(dynamics, Q, R, stationary.P0, {0, 0});
  Mpc mpc(dynamics, cost, 5);
  std::vector<double> x = {1.0, -1.0}, next(2);
  for (int t = 0; t < 200; ++t) {
    const std::span<const double> u = mpc.control(x);
    EXPECT_NEAR(u[0], K[0] * x[0] + K[1] * x[1], 1e-8 * (1 + std::abs(u[0]))) << "step " << t;
    EXPECT_EQ(mpc.last_plan().controls.size(), 5u);
    dynamics.step(x, u, next);
    x = next;
  }
  EXPECT_LT(std::abs(x[0]) + std::abs(x[1]), 1e-6);  // without control it grows as 1.1^t
}

TEST(Ilqr, RefusesBadInput) {
  LinearDynamics dynamics(1, 1, {1.0}, {1.0});
  QuadraticCost cost(dynamics, {1}, {1}, {1}, {0});
  EXPECT_THROW(LinearDynamics(2, 1, {1.0}, {1.0}), Error);
  IlqrSettings bad;
  bad.control_lower = {1.0};
  bad.control_upper = {-1.0};
  EXPECT_THROW(Ilqr(dynamics, cost, bad), Error);
  Ilqr ilqr(dynamics, cost);
  EXPECT_THROW(ilqr.solve(std::vector<double>{1.0, 2.0}, {}, 5), Error);
  EXPECT_THROW(ilqr.solve(std::vector<double>{NAN}, {}, 5), Error);
  EXPECT_THROW(ilqr.solve(std::vector<double>{1.0}, {}, 0), Error);
}

}  // namespace
}  // namespace diffphys
