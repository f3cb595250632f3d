"""iLQR and MPC (Ilqr, Mpc, SimulatorDynamics, LinearDynamics, QuadraticCost): on a linear
system iLQR's plan is the finite-horizon LQR solution of the Riccati recursion (computed here
in NumPy); on the diffphys motor pendulum it brings the bob from near upright to rest at the
bottom, the plan's controls replayed through Simulator.run reaching the same states, and MPC
does the same in closed loop."""

import math

import numpy as np
import pytest

import diffphys as dp

SUBSTEPS, HORIZON = 5, 40  # control steps of 5 × 10 ms; a 2 s plan


H = 0.1  # the double integrator's step, s
A_DOUBLE, B_DOUBLE = np.array([[1.0, H], [0.0, 1.0]]), np.array([[0.5 * H * H], [H]])
Q_DOUBLE, R_DOUBLE, Q_FINAL_DOUBLE = np.diag([1.0, 0.1]), np.array([[0.01]]), np.diag([100.0, 10.0])


def riccati_plan(x0, T):
    """Finite-horizon discrete LQR of the double integrator, ½ xᵀQx + ½ uᵀRu per step and
    ½ x_Tᵀ Q_f x_T at the end: (controls (T, 1), gains (T, 1, 2), cost)."""
    A, B, Q, R = A_DOUBLE, B_DOUBLE, Q_DOUBLE, R_DOUBLE
    P, gains = Q_FINAL_DOUBLE, []
    for _ in range(T):
        K = -np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ A + A.T @ P @ B @ K
        gains.append(K)
    gains.reverse()
    x, controls, cost = x0, [], 0.0
    for K in gains:
        u = K @ x
        cost += 0.5 * x @ Q @ x + 0.5 * u @ R @ u
        controls.append(u)
        x = A @ x + B @ u
    return np.array(controls), np.array(gains), cost + 0.5 * x @ Q_FINAL_DOUBLE @ x


def test_linear_system_plan_is_the_riccati_solution():
    T, x0 = 30, np.array([1.0, -0.5])
    dynamics = dp.LinearDynamics(A_DOUBLE, B_DOUBLE)
    cost = dp.QuadraticCost(dynamics, Q_DOUBLE, R_DOUBLE, Q_FINAL_DOUBLE, np.zeros(2))
    plan = dp.Ilqr(dynamics, cost).solve(x0, None, T)
    controls, gains, expected_cost = riccati_plan(x0, T)
    assert plan.converged and plan.controls.shape == (T, 1) and plan.states.shape == (T + 1, 2)
    assert plan.feedback.shape == (T, 1, 2) and plan.feedforward.shape == (T, 1)
    assert np.allclose(plan.controls, controls, rtol=1e-8, atol=1e-10)
    assert np.allclose(plan.feedback, gains, rtol=1e-6, atol=1e-8)
    assert plan.cost == pytest.approx(expected_cost, rel=1e-10)
    assert np.allclose(dynamics.step(x0, controls[0]), A_DOUBLE @ x0 + B_DOUBLE @ controls[0])


class PythonDoubleIntegrator(dp.IlqrDynamics):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def state_size(self):
        return 2

    def control_size(self):
        return 1

    def step(self, state, controls):
        return A_DOUBLE @ state + B_DOUBLE @ controls

    def linearize(self, state, controls):
        self.calls += 1
        return self.step(state, controls), A_DOUBLE, B_DOUBLE


class PythonQuadraticCost(dp.IlqrCost):
    def stage(self, step, state, controls, derivatives):
        if derivatives is not None:
            derivatives.x[:] += Q_DOUBLE @ state
            derivatives.xx[:] += Q_DOUBLE
            derivatives.u[:] += R_DOUBLE @ controls
            derivatives.uu[:] += R_DOUBLE
        return 0.5 * state @ Q_DOUBLE @ state + 0.5 * controls @ R_DOUBLE @ controls

    def final(self, state, derivatives):
        if derivatives is not None:
            derivatives.x[:] += Q_FINAL_DOUBLE @ state
            derivatives.xx[:] += Q_FINAL_DOUBLE
        return 0.5 * state @ Q_FINAL_DOUBLE @ state


def test_dynamics_and_cost_written_in_python_give_the_riccati_solution():
    T, x0 = 30, np.array([1.0, -0.5])
    dynamics = PythonDoubleIntegrator()
    plan = dp.Ilqr(dynamics, PythonQuadraticCost()).solve(x0, None, T)
    controls, gains, expected_cost = riccati_plan(x0, T)
    assert dynamics.calls >= T and plan.converged
    assert np.allclose(plan.controls, controls, rtol=1e-8, atol=1e-10)
    assert np.allclose(plan.feedback, gains, rtol=1e-6, atol=1e-8)
    assert plan.cost == pytest.approx(expected_cost, rel=1e-10)
    # MPC over the Python dynamics and cost: its first control is the plan's.
    mpc = dp.Mpc(dynamics, PythonQuadraticCost(), T)
    assert np.allclose(mpc.control(x0), controls[0], rtol=1e-8)


def test_python_subclasses_are_checked():
    class NoLinearize(dp.IlqrDynamics):
        def state_size(self):
            return 2

        def control_size(self):
            return 1

        def step(self, state, controls):
            return A_DOUBLE @ state + B_DOUBLE @ controls

    class WrongB(PythonDoubleIntegrator):
        def linearize(self, state, controls):
            return self.step(state, controls), A_DOUBLE, np.zeros((2, 2))

    class NoNumber(PythonQuadraticCost):
        def final(self, state, derivatives):
            return "cheap"

    cost = PythonQuadraticCost()
    with pytest.raises(dp.Error, match=r"IlqrDynamics.linearize\(state, controls\): a Python subclass must define it"):
        dp.Ilqr(NoLinearize(), cost).solve([1.0, 0.0], None, 3)
    with pytest.raises(dp.Error, match=r"linearize: B \(tangent, control\) must have shape \(2, 1\), got \(2, 2\)"):
        dp.Ilqr(WrongB(), cost).solve([1.0, 0.0], None, 3)
    with pytest.raises(dp.Error, match="IlqrCost.final must return a number, got str"):
        dp.Ilqr(PythonDoubleIntegrator(), NoNumber()).solve([1.0, 0.0], None, 3)


@pytest.fixture
def lowering(motor_pendulum):
    """The motor pendulum from 0.3 rad off upright, at rest, to rest at the bottom (bob at z = 0.5 m):
    weights on the bob's position and velocity only."""
    dynamics = dp.SimulatorDynamics(motor_pendulum.model, motor_pendulum.params, SUBSTEPS)
    x0 = dynamics.pack(motor_pendulum.state)
    goal = x0.copy()
    goal[13:16] = [0, 0, 0.5]
    n = dynamics.tangent_size()
    Q = np.zeros((n, n))
    Q[12:15, 12:15] = np.eye(3)
    Q[18:21, 18:21] = 0.1 * np.eye(3)
    cost = dp.QuadraticCost(dynamics, Q, 0.01 * np.eye(1), 100 * Q, goal)
    return motor_pendulum, dynamics, cost, x0


def test_ilqr_brings_the_pendulum_to_rest_at_the_bottom(lowering):
    scene, dynamics, cost, x0 = lowering
    assert dynamics.state_size() == 26 and dynamics.tangent_size() == 24 and dynamics.control_size() == 1
    plan = dp.Ilqr(dynamics, cost, dp.IlqrSettings(max_iterations=50)).solve(x0, None, HORIZON)
    assert plan.converged and plan.cost_history[0] > 8 * plan.cost  # measured: 90.0 → 8.19
    assert np.all(np.diff(plan.cost_history) < 0)
    # Replayed step by step through the simulator, the plan's controls end at rest at the bottom.
    trajectory, converged = dp.Simulator(scene.model, scene.params, scene.state).run(
        HORIZON * SUBSTEPS, np.repeat(plan.controls, SUBSTEPS, axis=0))
    assert converged and np.allclose(trajectory[::SUBSTEPS], plan.states, atol=1e-12)
    bob = trajectory[-1, 13:26]
    assert np.linalg.norm(bob[0:3] - [0, 0, 0.5]) < 1e-3 and np.linalg.norm(bob[7:10]) < 1e-3
    # Without the motor it swings through the bottom and up the other side.
    passive, _ = dp.Simulator(scene.model, scene.params, scene.state).run(HORIZON * SUBSTEPS)
    assert np.linalg.norm(passive[-1, 13:16] - [0, 0, 0.5]) > 0.3
    # Bounded to ±0.5 N·m the motor cannot stop it in time: the controls stay in the box, touch it,
    # and the plan costs more.
    bounded = dp.Ilqr(dynamics, cost, dp.IlqrSettings(max_iterations=50, control_lower=[-0.5],
                                                      control_upper=[0.5])).solve(x0, None, HORIZON)
    assert np.all(np.abs(bounded.controls) <= 0.5) and np.isclose(np.abs(bounded.controls).max(), 0.5)
    assert plan.cost < bounded.cost < bounded.cost_history[0]


def test_mpc_brings_the_pendulum_to_rest_in_closed_loop(lowering):
    _, dynamics, cost, x0 = lowering
    mpc = dp.Mpc(dynamics, cost, 10, dp.IlqrSettings(max_iterations=10))
    x = x0
    for _ in range(HORIZON):
        u = mpc.control(x)
        assert u.shape == (1,) and np.array_equal(u, mpc.last_plan().controls[0])
        x = dynamics.step(x, u)
    assert mpc.horizon() == 10 and mpc.last_plan().states.shape == (11, 26)
    assert np.linalg.norm(x[13:16] - [0, 0, 0.5]) < 2e-3 and np.linalg.norm(x[20:23]) < 1e-2


def test_simulator_dynamics_linearize_is_the_chained_step_jacobians(motor_pendulum):
    model, params, state = motor_pendulum.model, motor_pendulum.params, motor_pendulum.state
    dynamics = dp.SimulatorDynamics(model, params, 2)
    next_flat, A, B = dynamics.linearize(dynamics.pack(state), [0.4])
    jacobians = dp.StepJacobians(model)
    middle, A1, B1 = jacobians.compute(params, state, [0.4])
    last, A2, B2 = jacobians.compute(params, middle, [0.4])
    assert np.allclose(next_flat, last.to_vector(), atol=1e-14)
    assert np.allclose(A, A2 @ A1, rtol=1e-12, atol=1e-12) and np.allclose(B, A2 @ B1 + B2, rtol=1e-12, atol=1e-14)
    assert np.allclose(dynamics.difference(next_flat, dynamics.pack(state)),
                       dp.state_difference(model, last, state), atol=1e-15)


def test_ilqr_refuses_bad_input(lowering):
    _, dynamics, cost, x0 = lowering
    n = dynamics.tangent_size()
    with pytest.raises(dp.Error, match=r"QuadraticCost: Q must have shape \(tangent, tangent\) = \(24, 24\), got \(3, 3\)"):
        dp.QuadraticCost(dynamics, np.eye(3), np.eye(1), np.eye(n), x0)
    with pytest.raises(dp.Error, match="horizon must be at least 1, got 0"):
        dp.Ilqr(dynamics, cost).solve(x0, None, 0)
    with pytest.raises(dp.Error, match="lower bound"):
        dp.Ilqr(dynamics, cost, dp.IlqrSettings(control_lower=[1.0], control_upper=[-1.0]))
    with pytest.raises(dp.Error, match=r"step: controls: expected 1 values, got an array of shape \(2,\)"):
        dynamics.step(x0, [0.0, 0.0])
    with pytest.raises(dp.Error, match=r"Mpc.last_plan: no plan yet"):
        dp.Mpc(dynamics, cost, 5).last_plan()
