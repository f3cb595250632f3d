"""diffphys.torch: torch.autograd.gradcheck (double precision, central differences against
the backward pass) of rollout() and the batched step() on small scenes — a pendulum, a ball
sliding and spinning on a plane, a motor-driven pendulum — and the quaternion ↔ tangent
gradient conversion of diffphys.layout.

Static bodies (the world) are not differentiated (their gradient is 0), so the checks perturb
the dynamic bodies' rows of x0. Parameters sitting at a bound of their domain (restitution 0)
cannot be perturbed both ways and are left out; the rest of θ is checked."""

import numpy as np
import pytest
import torch

import diffphys as dp
from diffphys import layout
from diffphys import torch as dpt
from conftest import SCENES, tighten

TOLERANCES = dict(eps=1e-6, atol=1e-6, rtol=1e-4)


def checked_parameters(model, names):
    return torch.tensor(np.concatenate([np.arange(s.offset, s.offset + s.size) for s in model.layout.slices
                                        if s.name in names]))


def rollout_function(scene, steps, names, controls=None, values=None):
    """f(dynamic rows of x0, selected θ entries[, controls]) → all states; `values` moves
    parameters away from the bound of their domain first."""
    model = tighten(scene.model)
    for name, value in (values or {}).items():
        scene.params.set(model, name, value)
    x0 = dpt.state_tensor(scene.state)
    theta = dpt.params_tensor(scene.params)
    index = checked_parameters(model, names)
    world = x0[:13]

    def function(dynamic, selected, controls_in):
        return dpt.rollout(model, torch.cat([world, dynamic]), controls_in, theta.index_put((index,), selected))

    if controls is None:
        controls = torch.zeros(steps, model.actuator_count(), dtype=torch.float64)
    return function, (x0[13:].clone().requires_grad_(), theta[index].clone().requires_grad_(), controls)


def test_rollout_gradcheck_pendulum():
    scene = dp.load_scene(SCENES / "pendulum.json")
    function, inputs = rollout_function(scene, 12, ["gravity", "body/pendulum/mass", "body/pendulum/inertia",
                                                    "body/pendulum/linear_damping"],
                                        values={"body/pendulum/linear_damping": 0.2})
    # A swing already under way, so every state component moves.
    inputs[0].data[10:13] = torch.tensor([0.0, 1.5, 0.0])
    arm = inputs[0].data[0:3] - torch.tensor([0.0, 0.0, 1.5])
    inputs[0].data[7:10] = torch.linalg.cross(torch.tensor([0.0, 1.5, 0.0], dtype=torch.float64), arm)
    assert torch.autograd.gradcheck(function, inputs, **TOLERANCES)


def test_rollout_gradcheck_sphere_sliding_on_a_plane(sliding_ball):
    function, inputs = rollout_function(sliding_ball, 12, ["gravity", "body/ball/mass", "body/ball/inertia",
                                                           "body/ball/friction", "body/world/friction",
                                                           "shape/ball/0/radius"])
    states = function(*inputs)
    assert states.shape == (13, 26)
    # The ball stays in contact and slides: friction enters every step.
    assert (states[:, 13 + 2] - 0.1).abs().max() < 1e-3 and states[-1, 13 + 7] < 1.0
    assert torch.autograd.gradcheck(function, inputs, **TOLERANCES)


def test_rollout_gradcheck_controls(motor_pendulum):
    controls = torch.linspace(-1.0, 2.0, 10, dtype=torch.float64).reshape(10, 1).requires_grad_()
    function, inputs = rollout_function(motor_pendulum, 10, ["body/bob/mass", "joint/hinge/damping"], controls,
                                        values={"joint/hinge/damping": 0.1})
    assert torch.autograd.gradcheck(function, inputs, **TOLERANCES)


def test_batched_step_gradcheck_closed_loop(motor_pendulum):
    model = tighten(motor_pendulum.model)
    theta = dpt.params_tensor(motor_pendulum.params)
    x0 = dpt.state_tensor(motor_pendulum.state).repeat(2, 1)
    x0[1, 13 + 10:13 + 13] = torch.tensor([0.0, -0.7, 0.0])
    gain = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    mass = theta[model.layout.body_mass[1]:model.layout.body_mass[1] + 1].clone().requires_grad_()
    index = torch.tensor([model.layout.body_mass[1]])

    def closed_loop(dynamic, gain_in, mass_in):
        x = torch.cat([x0[:, :13], dynamic], dim=1)
        parameters = theta.index_put((index,), mass_in)
        for _ in range(4):  # a linear policy u = −k ω_y, in closed loop through the physics
            x = dpt.step(model, x, -gain_in * dpt.angular_velocities(x)[:, 1, 1:2], parameters)
        return x

    assert torch.autograd.gradcheck(closed_loop, (x0[:, 13:].clone().requires_grad_(), gain, mass), **TOLERANCES)


def test_rollout_forward_matches_engine_and_static_bodies_get_no_gradient(sliding_ball):
    x0 = dpt.state_tensor(sliding_ball.state).requires_grad_()
    states = dpt.rollout(sliding_ball.model, x0, torch.zeros(20, 0), dpt.params_tensor(sliding_ball.params))
    engine = dp.Rollout(sliding_ball.model, sliding_ball.params)
    engine.run(sliding_ball.state, steps=20)
    assert np.array_equal(states.detach().numpy(), engine.states())
    states[-1, 13:16].sum().backward()
    assert torch.all(x0.grad[:13] == 0) and x0.grad[13] == pytest.approx(1.0)


def test_quaternion_gradient_conversion_against_finite_differences():
    rng = np.random.default_rng(3)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    body_vector = rng.normal(size=3)
    weights = rng.normal(size=3)

    def rotate(quaternion, vector):
        w, u = quaternion[0], quaternion[1:]
        return vector + 2 * w * np.cross(u, vector) + 2 * np.cross(u, np.cross(u, vector))

    def loss(quaternion):  # depends on q only through the rotation it represents
        return weights @ rotate(quaternion / np.linalg.norm(quaternion), body_vector)

    state = np.zeros(13)
    state[3:7] = q
    world_vector = rotate(q, body_vector)
    tangent = np.zeros(12)
    tangent[3:6] = np.cross(world_vector, weights)  # dL/dθ = u × dL/du (docs/gradients.md)
    quaternion_gradient = layout.quaternion_gradient_from_tangent(tangent, state)[3:7]
    numeric = np.array([(loss(q + 1e-7 * e) - loss(q - 1e-7 * e)) / 2e-7 for e in np.eye(4)])
    assert np.allclose(quaternion_gradient, numeric, atol=1e-8)
    assert abs(quaternion_gradient @ q) < 1e-12
    # And back: the tangent gradient of a quaternion gradient.
    back = layout.tangent_gradient_from_quaternion(layout.quaternion_gradient_from_tangent(tangent, state), state)
    assert np.allclose(back, tangent, atol=1e-12)
