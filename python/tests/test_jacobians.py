"""Step Jacobians (StepJacobians, step_jacobians, state_difference, state_retract): A, B and P
against central differences of single steps, perturbing states on the manifold through
state_retract, and against the closed form of a free-falling ball's semi-implicit Euler step."""

import numpy as np
import pytest

import diffphys as dp
from conftest import tighten

EPSILON = 1e-6


def single_step(model, params, state, controls):
    out = dp.State()
    dp.step(model, params, state, controls, out, dp.Workspace())
    return out


def central_difference(model, reference, plus, minus):
    """(x₊ ⊖ x_ref − x₋ ⊖ x_ref) / 2ε: one column of a Jacobian in the tangent layout."""
    return (dp.state_difference(model, plus, reference) - dp.state_difference(model, minus, reference)) / (2 * EPSILON)


@pytest.fixture
def swinging(motor_pendulum):
    model = tighten(motor_pendulum.model)
    model.solver.warm_start = False
    state = motor_pendulum.state.copy()
    state.angular_velocity[1] = [0, 1.5, 0]  # swinging about the hinge axis y
    state.linear_velocity[1] = np.cross([0, 1.5, 0], state.position[1] - [0, 0, 1])
    return model, motor_pendulum.params, state, np.array([0.7])


def test_retract_and_difference_are_inverse(swinging):
    model, _, state, _ = swinging
    n = dp.state_tangent_size(model)
    assert n == 12 * model.body_count() == 24
    tangent = np.zeros(n)
    tangent[12:] = [0.1, -0.2, 0.3, 0.2, -0.1, 0.3, 1, 2, 3, -1, 0.5, 0.25]
    moved = dp.state_retract(model, state, tangent)
    assert np.allclose(dp.state_difference(model, moved, state), tangent, atol=1e-12)
    assert np.allclose(np.linalg.norm(moved.orientation[1]), 1.0)
    with pytest.raises(dp.Error, match=r"state_retract: tangent: expected 24 values, got an array of shape \(3,\)"):
        dp.state_retract(model, state, np.zeros(3))


def test_A_and_B_match_central_differences(swinging):
    model, params, state, controls = swinging
    next_state, A, B = dp.StepJacobians(model).compute(params, state, controls)
    n, m = dp.state_tangent_size(model), model.actuator_count()
    assert A.shape == (n, n) and B.shape == (n, m)
    assert np.allclose(next_state.to_vector(), single_step(model, params, state, controls).to_vector(), atol=1e-14)
    assert np.all(A[:12] == 0) and np.all(A[:, :12] == 0)  # the world's rows and columns
    for column in range(12, n):
        tangent = np.zeros(n)
        tangent[column] = EPSILON
        plus = single_step(model, params, dp.state_retract(model, state, tangent), controls)
        minus = single_step(model, params, dp.state_retract(model, state, -tangent), controls)
        numeric = central_difference(model, next_state, plus, minus)
        assert np.allclose(A[:, column], numeric, rtol=1e-5, atol=1e-6), column
    numeric = central_difference(model, next_state, single_step(model, params, state, controls + EPSILON),
                                 single_step(model, params, state, controls - EPSILON))
    assert np.abs(B[:, 0]).max() > 1e-3  # the motor moves the bob
    assert np.allclose(B[:, 0], numeric, rtol=1e-5, atol=1e-7)


def test_P_matches_central_differences_on_parameters(swinging):
    model, params, state, controls = swinging
    next_state, A, B, P = dp.StepJacobians(model).compute(params, state, controls, with_params=True)
    assert P.shape == (dp.state_tangent_size(model), model.param_count())
    for name, component in [("body/bob/mass", 0), ("joint/hinge/damping", 0), ("gravity", 2)]:
        offset = model.layout.slices[model.layout.find(name)].offset + component
        plus, minus = params.copy(), params.copy()
        plus.values[offset] += EPSILON
        minus.values[offset] -= EPSILON
        numeric = central_difference(model, next_state, single_step(model, plus, state, controls),
                                     single_step(model, minus, state, controls))
        assert np.abs(numeric).max() > 1e-6 and np.allclose(P[:, offset], numeric, rtol=1e-5, atol=1e-7), name
    A2, B2 = dp.step_jacobians(model, params, state, controls)
    assert np.array_equal(A2, A) and np.array_equal(B2, B)


def test_free_fall_has_the_semi_implicit_euler_jacobians(falling_ball):
    # v' = v + h g, p' = p + h v', q' = exp(h ω) q, ω' = ω: in the tangent layout the ball's block
    # of A is [[I, 0, hI, 0], [0, I, 0, hI], [0, 0, I, 0], [0, 0, 0, I]], and ∂p'/∂g = h² I, ∂v'/∂g = h I.
    model, params, state = falling_ball.model, falling_ball.params, falling_ball.state
    h, I = model.dt, np.eye(3)
    _, A, B, P = dp.StepJacobians(model).compute(params, state, with_params=True)
    Z = np.zeros((3, 3))
    expected = np.block([[I, Z, h * I, Z], [Z, I, Z, h * I], [Z, Z, I, Z], [Z, Z, Z, I]])
    assert np.allclose(A[12:, 12:], expected, atol=1e-12) and B.shape == (24, 0)
    gravity = model.layout.gravity
    assert np.allclose(P[12:15, gravity:gravity + 3], h * h * I, atol=1e-12)
    assert np.allclose(P[18:21, gravity:gravity + 3], h * I, atol=1e-12)


def test_step_jacobians_name_the_bad_argument(swinging):
    model, params, state, _ = swinging
    with pytest.raises(dp.Error, match="controls has 2 entries, expected 1"):
        dp.StepJacobians(model).compute(params, state, np.zeros(2))
