"""Levenberg–Marquardt from Python (minimize_least_squares): an exponential decay sampled
without noise from A = 2, k = 0.7 is recovered from (1, 0.1), as tests/least_squares_test.cpp
does in C++; the call contract (the Jacobian asked for alone, at the point of the last
residuals); a straight-line fit against the normal equations; a ball's launch velocity
fitted through the simulator with Jacobians from StepJacobians; bad input refused by name."""

import numpy as np
import pytest

import diffphys as dp

T = 0.25 * np.arange(12)
Y = 2.0 * np.exp(-0.7 * T)


def decay(x, want_jacobian):
    amplitude, rate = x
    e = np.exp(-rate * T)
    r = amplitude * e - Y
    return r, (np.column_stack([e, -amplitude * T * e]) if want_jacobian else None)


def test_exponential_decay_is_recovered_from_its_samples():
    calls = []

    def logged(x, want_jacobian):
        calls.append((x.copy(), want_jacobian))
        return decay(x, want_jacobian)

    result = dp.minimize_least_squares(logged, len(T), [1.0, 0.1])
    assert result.converged, result.stop_reason
    assert result.x == pytest.approx([2.0, 0.7], abs=1e-9)
    assert result.cost < 1e-20 and result.residuals.shape == (12,)
    assert result.jacobians == sum(want for _, want in calls) and result.evaluations == len(calls) - result.jacobians
    # Every Jacobian is asked for at the point of the residuals just before it.
    for (x, want), (previous, previous_want) in zip(calls[1:], calls[:-1]):
        if want:
            assert not previous_want and np.array_equal(x, previous)


def test_straight_line_is_the_normal_equations_solution():
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.5])
    y = np.array([1.1, 2.9, 5.2, 6.8, 10.3])
    design = np.column_stack([np.ones_like(t), t])
    expected = np.linalg.solve(design.T @ design, design.T @ y)
    result = dp.minimize_least_squares(lambda x, want: (design @ x - y, design if want else None), 5, [0.0, 0.0])
    assert result.converged and result.x == pytest.approx(expected, rel=1e-10)


def test_progress_stops_at_a_target():
    seen = []

    def progress(iteration, x, cost, residuals):
        seen.append(iteration)
        assert x.shape == (2,) and residuals.shape == (12,)
        return cost > 1e-4

    result = dp.minimize_least_squares(decay, 12, [1.0, 0.1], progress=progress)
    assert result.converged and result.stop_reason == "stopped by the progress callback" and result.cost <= 1e-4
    assert seen == list(range(result.iterations + 1))


def test_launch_velocity_through_the_simulator(falling_ball):
    # A ball in free fall (h = 10 ms, no ground) launched with velocity v must be at `target` after
    # 50 steps: r = p_50(v) − target, J = ∂p_50/∂v from the chained step Jacobians. Semi-implicit
    # Euler gives p_50 = p_0 + 50 h v + h² g (1 + … + 50), so the answer is known in closed form.
    model, params, start = falling_ball.model, falling_ball.params, falling_ball.state
    h, steps, g = model.dt, 50, np.array([0.0, 0.0, -9.81])
    target = np.array([3.0, -1.0, 12.0])
    jacobians = dp.StepJacobians(model)

    def residuals(v, want_jacobian):
        state = start.copy()
        state.linear_velocity[1] = v
        sensitivity = np.zeros((24, 3))
        sensitivity[18:21] = np.eye(3)  # ∂x_0/∂v in the tangent layout
        for _ in range(steps):
            state, A, _ = jacobians.compute(params, state)
            sensitivity = A @ sensitivity
        return state.position[1] - target, (sensitivity[12:15] if want_jacobian else None)

    result = dp.minimize_least_squares(residuals, 3, [0.0, 0.0, 0.0])
    expected = (target - start.position[1] - h * h * g * steps * (steps + 1) / 2) / (steps * h)
    assert result.converged and result.x == pytest.approx(expected, rel=1e-9)


def test_bad_input_is_refused_by_name():
    with pytest.raises(dp.Error, match="initial_damping must be positive and finite, got 0"):
        dp.minimize_least_squares(decay, 12, [1.0, 0.1], dp.LeastSquaresSettings(initial_damping=0.0))
    with pytest.raises(dp.Error, match="max_rejections must be at least 1, got 0"):
        dp.minimize_least_squares(decay, 12, [1.0, 0.1], dp.LeastSquaresSettings(max_rejections=0))
    with pytest.raises(dp.Error, match="residual_count must be at least 1, got 0"):
        dp.minimize_least_squares(decay, 0, [1.0, 0.1])
    with pytest.raises(dp.Error, match="x0 is empty"):
        dp.minimize_least_squares(decay, 12, np.zeros(0))
    with pytest.raises(dp.Error, match=r"r must have shape \(residual_count,\) = \(11,\), got \(12,\)"):
        dp.minimize_least_squares(decay, 11, [1.0, 0.1])
    with pytest.raises(dp.Error, match=r"J must have shape \(residual_count, len\(x\)\) = \(12, 2\), got \(12, 3\)"):
        dp.minimize_least_squares(lambda x, want: (decay(x, False)[0], np.zeros((12, 3))), 12, [1.0, 0.1])
    with pytest.raises(dp.Error, match=r"must return a tuple \(r, J or None\), got ndarray"):
        dp.minimize_least_squares(lambda x, want: decay(x, want)[0], 12, [1.0, 0.1])
    with pytest.raises(ZeroDivisionError):
        dp.minimize_least_squares(lambda x, want: 1 / 0, 12, [1.0, 0.1])
