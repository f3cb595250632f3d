"""Many worlds at once and closed loop from Python (diffphys.WorldBatch, the batched
diffphys.torch.world_rollout, diffphys.WorldController): a batch's states and gradients are the
bits of lone rollouts with each world's inputs, for 1 and 2 threads, on a rigid scene with
contacts, a rigid scene with servos and a soft scene; torch.autograd.gradcheck of a batched
soft rollout; a Python WorldController in rigid and soft worlds (open loop with its controls
gives the same states; its gradients against central differences); the checkpoint accounting
of a world rollout; bad sizes refused with the sizes named."""

import numpy as np
import pytest
import torch

import diffphys as dp
from diffphys import torch as dpt
from conftest import SCENES, SOURCE_DIR, tighten
from test_world import TOLERANCES, tight_world

SOFT = SOURCE_DIR / "examples" / "soft"
WORLDS, STEPS = 3, 6


def varied_inputs(world, seed=0):
    """Each world's own x0 (a velocity kick), θ (gravity scaled) and controls."""
    rng = np.random.default_rng(seed)
    lay = world.layout
    x0 = np.tile(world.initial_state(), (WORLDS, 1))
    velocities = lay.state_slice("soft/velocities" if world.has_soft() else f"body/{world.rigid.model.bodies[1].name}")
    kick = velocities.offset + (0 if world.has_soft() else 7)  # a soft velocity, or the first body's v_x
    x0[:, kick] += 0.05 * np.arange(WORLDS)
    params = np.tile(world.default_params(), (WORLDS, 1))
    gravity = lay.param_slice("soft/gravity" if world.has_soft() else "gravity")
    params[:, gravity.offset + 2] = -9.81 * (1 + 0.1 * np.arange(WORLDS))
    controls = np.tile(world.default_controls(), (WORLDS, STEPS, 1)) + 0.02 * rng.normal(
        size=(WORLDS, STEPS, lay.control_count))
    loss = rng.normal(size=(WORLDS, STEPS + 1, lay.tangent_size))
    return x0, controls, params, loss


def batch_worlds(sliding_ball):
    return [dp.World(sliding_ball), dp.load_world(SCENES / "servo_arm.json"), dp.load_world(SOFT / "mass_spring.json")]


@pytest.mark.parametrize("threads", [1, 2])
def test_world_batch_is_lone_rollouts_bit_for_bit(sliding_ball, threads):
    for world in batch_worlds(sliding_ball):
        x0, controls, params, loss = varied_inputs(world)
        batch = dp.WorldBatch(world, WORLDS, threads=threads)
        assert (batch.size(), batch.threads()) == (WORLDS, threads)
        batch.run(x0, controls, params)
        states = batch.states()
        assert states.shape == (WORLDS, STEPS + 1, world.layout.state_size) and batch.steps() == STEPS
        dx0, du, dtheta = batch.backward(loss)
        for b in range(WORLDS):
            lone = dp.WorldRollout(world, params[b])
            lone.run(x0[b], controls[b])
            assert np.array_equal(states[b], lone.states()), (world.name, b)
            assert batch.converged(b) == lone.converged()
            g = lone.backward(loss[b])
            assert np.array_equal(dx0[b], g.initial_state) and np.array_equal(du[b], g.controls)
            assert np.array_equal(dtheta[b], g.params), (world.name, b)
        assert not np.array_equal(states[0], states[1])  # the worlds' inputs differ, so do their states


def test_world_batch_defaults_and_parameter_gradients_off():
    world = dp.load_world(SOFT / "mass_spring.json")
    batch = dp.WorldBatch(world, 2, options=dp.RolloutOptions(checkpoint_interval=2))
    x0 = np.tile(world.initial_state(), (2, 1))
    batch.run(x0, steps=4)  # the world's default controls and θ
    lone = dp.WorldRollout(world)
    lone.run(world.initial_state(), steps=4)
    assert np.array_equal(batch.states()[1], lone.states())
    options = dp.RolloutOptions()
    options.parameter_gradients = False
    batch = dp.WorldBatch(world, 2, options=options)
    batch.run(x0, steps=4)
    dx0, du, dtheta = batch.backward(np.ones((2, 5, world.layout.tangent_size)))
    assert dtheta.shape == (2, 0) and du.shape == (2, 4, world.layout.control_count)
    assert np.array_equal(dx0[0], lone.backward(np.ones((5, world.layout.tangent_size))).initial_state)


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_torch_world_rollout_is_lone_calls_bit_for_bit(sliding_ball, threads):
    for world in batch_worlds(sliding_ball):
        x0, controls, params, _ = varied_inputs(world, seed=1)
        weights = torch.from_numpy(np.random.default_rng(2).normal(size=(WORLDS, STEPS + 1, world.layout.state_size)))
        inputs = [torch.from_numpy(a).requires_grad_() for a in (x0, controls, params)]
        states = dpt.world_rollout(world, *inputs, threads=threads)
        (weights * states).sum().backward()
        for b in range(WORLDS):
            lone = [torch.from_numpy(a[b]).requires_grad_() for a in (x0, controls, params)]
            lone_states = dpt.world_rollout(world, *lone)
            (weights[b] * lone_states).sum().backward()
            assert torch.equal(states[b], lone_states), (world.name, b)
            for batched, single in zip(inputs, lone):
                assert torch.equal(batched.grad[b], single.grad), (world.name, b)


def test_batched_soft_world_rollout_gradcheck():
    world = tight_world(SOFT / "mass_spring.json")
    lay = world.layout
    positions, velocities = lay.state_slice("soft/positions").offset, lay.state_slice("soft/velocities").offset
    x0 = torch.from_numpy(np.tile(world.initial_state(), (2, 1)))
    x0[1, velocities + 4] = 0.3  # the second world moves
    theta = torch.from_numpy(np.tile(world.default_params(), (2, 1)))
    stiffness = lay.param_slice("soft/spring_stiffness").offset  # the first spring's
    weights = torch.from_numpy(np.random.default_rng(3).normal(size=(2, 3, lay.state_size)))

    def function(dx, controls, dtheta):
        x = x0.clone()
        x[:, positions + 1] += dx[:, 0]
        x[:, velocities + 6] += dx[:, 1]
        p = theta.clone()
        p[:, stiffness] *= 1 + dtheta[:, 0]
        return (weights * dpt.world_rollout(world, x, controls, p, threads=2)).sum(dim=(1, 2))

    inputs = [torch.zeros(2, 2, dtype=torch.float64, requires_grad=True),
              torch.full((2, 2, lay.control_count), 0.01, dtype=torch.float64, requires_grad=True),
              torch.zeros(2, 1, dtype=torch.float64, requires_grad=True)]
    assert torch.autograd.gradcheck(function, inputs, **TOLERANCES)


def test_bad_batch_sizes_are_named():
    world = dp.load_world(SOFT / "mass_spring.json")
    with pytest.raises(dp.Error, match="number of worlds must be ≥ 1, got 0"):
        dp.WorldBatch(world, 0)
    with pytest.raises(dp.Error, match="threads"):
        dp.WorldBatch(world, 2, threads=0)
    batch = dp.WorldBatch(world, 2)
    x0 = np.tile(world.initial_state(), (2, 1))
    with pytest.raises(dp.Error, match=r"WorldBatch.run: x0 must have shape \(B, state_size\) = \(2, 18\), got \(3, 18\)"):
        batch.run(np.zeros((3, 18)), steps=1)
    with pytest.raises(dp.Error, match=r"controls must have shape \(B, steps, control_count\) = \(2, 4, 9\), got \(2, 4, 8\)"):
        batch.run(x0, np.zeros((2, 4, 8)))
    with pytest.raises(dp.Error, match=r"params must have shape \(B, param_count\) = \(2, \d+\), got \(1, \d+\)"):
        batch.run(x0, params=world.default_params()[None], steps=1)
    with pytest.raises(dp.Error, match="give steps"):
        batch.run(x0)
    batch.run(x0, steps=2)
    with pytest.raises(dp.Error, match=r"state_gradients must have shape \(B, T \+ 1, tangent_size\) = \(2, 3, 18\), got \(2, 2, 18\)"):
        batch.backward(np.zeros((2, 2, 18)))
    theta = torch.from_numpy(np.tile(world.default_params(), (2, 1)))
    with pytest.raises(dp.Error, match=r"world_rollout: controls must have shape \(B, T, 9\), got \(4, 9\)"):
        dpt.world_rollout(world, torch.from_numpy(x0), torch.zeros(4, 9), theta)
    with pytest.raises(dp.Error, match=r"world_rollout: controls must have shape \(2, 4, 9\) \(B, T, control_count 9"):
        dpt.world_rollout(world, torch.from_numpy(x0), torch.zeros(3, 4, 9), theta)
    with pytest.raises(dp.Error, match=r"world_rollout: params must have shape \(2, \d+\) \(B, param_count\), got"):
        dpt.world_rollout(world, torch.from_numpy(x0), torch.zeros(2, 4, 9), theta[:1])
    with pytest.raises(dp.Error, match="number of worlds must be ≥ 1, got 0"):
        dpt.world_rollout(world, torch.zeros(0, 18), torch.zeros(0, 4, 9), theta[:0])


class Damping(dp.WorldController):
    """u = −k · (a velocity slice of x_t), with its exact VJP: the controls read `source`
    (indices of x, state layout) and write `target` (indices of u); the gradient goes to
    `tangent` (the same quantities' indices in the tangent layout)."""

    def __init__(self, gain, source, target, tangent):
        super().__init__()
        self.gain, self.source, self.target, self.tangent = gain, source, target, tangent
        self.backward_calls = []

    def act(self, step, x, controls):
        controls[self.target] = -self.gain * x[self.source]

    def act_backward(self, step, x, control_gradient, state_gradient):
        self.backward_calls.append(step)
        state_gradient[self.tangent] += -self.gain * control_gradient[self.target]


def test_world_controller_closed_loop_in_rigid_and_soft_worlds(motor_pendulum):
    """A motor damping a pendulum's swing (u = −k ω_y of the bob) and damping forces on a
    mass-spring's nodes (f = −c v): open loop with the controls they chose gives the same
    states; backward calls act_backward once per step, T−1 down to 0, and its share changes
    the gradient; the soft gradient matches central differences (the rigid one is checked
    through dp.Rollout in test_api, which is this path: see the test below)."""
    steps = 25
    soft = tight_world(SOFT / "mass_spring.json")
    velocities = soft.layout.state_slice("soft/velocities").offset
    soft_tangent = soft.layout.tangent_slice("soft/velocities").offset
    kick = np.zeros(soft.layout.state_size)
    kick[velocities + 4] = 0.1  # a node moving
    cases = [(dp.World(motor_pendulum), lambda: Damping(2.0, [13 + 11], [0], [12 + 10]), np.zeros(26), 12 + 10, 12),
             (soft, lambda: Damping(0.7, list(range(velocities, velocities + 9)), list(range(9)),
                                    list(range(soft_tangent, soft_tangent + 9))), kick, soft_tangent + 4, 1)]
    for world, make, kick, tangent_entry, loss_entry in cases:
        controller = make()
        rollout = dp.WorldRollout(world)
        x0 = world.initial_state() + kick
        rollout.run(x0, controller, steps)
        controls = rollout.controls()
        assert controls.shape == (steps, world.layout.control_count) and np.abs(controls).max() > 0
        open_loop = dp.WorldRollout(world)
        open_loop.run(x0, controls)
        assert np.array_equal(open_loop.states(), rollout.states()), world.kind()
        loss = np.zeros((steps + 1, world.layout.tangent_size))
        loss[steps, loss_entry] = 1.0  # L = one position coordinate at T: the bob's x, a node's y
        analytic = rollout.backward(loss).initial_state[tangent_entry]
        assert controller.backward_calls == list(range(steps - 1, -1, -1))
        assert open_loop.backward(loss).initial_state[tangent_entry] != analytic

    def final(value):
        trial = dp.WorldRollout(soft)
        x = x0.copy()
        x[velocities + 4] += value
        trial.run(x, make(), steps)
        return trial.final_state()[loss_entry]  # (soft: the same index in the state and the tangent)

    epsilon = 1e-6
    assert analytic == pytest.approx((final(epsilon) - final(-epsilon)) / (2 * epsilon), rel=1e-6)


def test_rigid_controller_is_the_world_controller(motor_pendulum):
    """dp.Rollout with a dp.Controller and dp.WorldRollout with the same feedback as a
    WorldController give the same states and gradients, bit for bit."""
    import test_api
    steps = 20
    rigid = dp.Rollout(motor_pendulum.model, motor_pendulum.params)
    rigid.run(motor_pendulum.state, test_api.DampingController(2.0), steps)
    world = dp.WorldRollout(dp.World(motor_pendulum))
    world.run(motor_pendulum.state.to_vector(), Damping(2.0, [13 + 11], [0], [12 + 10]), steps)
    assert np.array_equal(rigid.states(), world.states())
    loss = np.random.default_rng(4).normal(size=(steps + 1, 24))
    assert np.array_equal(rigid.backward(loss).initial_state, world.backward(loss).initial_state)
    assert rigid.state(7).time == pytest.approx(7 * motor_pendulum.model.dt) and rigid.final_state().time > 0


class NoBackward(dp.WorldController):
    def act(self, step, x, controls):
        return np.zeros(len(controls))


def test_world_controller_errors():
    soft = dp.load_world(SOFT / "mass_spring.json")
    rollout = dp.WorldRollout(soft)
    with pytest.raises(dp.Error, match="give steps"):
        rollout.run(soft.initial_state(), NoBackward())
    rollout.run(soft.initial_state(), NoBackward(), 2)
    with pytest.raises(dp.Error, match="WorldController: closed-loop backward needs act_backward"):
        rollout.backward(np.zeros((3, soft.layout.tangent_size)))
    wrong = NoBackward()
    wrong.act = lambda step, x, controls: np.zeros(2)
    with pytest.raises(dp.Error, match="WorldController.act: expected 9 values, got an array of shape \\(2,\\)"):
        rollout.run(soft.initial_state(), wrong, 1)
    # A world of both parts takes a controller too (the world's schedule), with the same checks.
    coupled = dp.load_world(SOFT / "cloth_on_pendulum.json")
    expected = f"WorldController.act: expected {coupled.layout.control_count} values, got an array of shape \\(2,\\)"
    with pytest.raises(dp.Error, match=expected):
        dp.WorldRollout(coupled).run(coupled.initial_state(), wrong, 1)
    closed = dp.WorldRollout(coupled)
    closed.run(coupled.initial_state(), NoBackward(), 2)
    used = np.asarray(closed.controls())
    assert used.size == 2 * coupled.layout.control_count and not used.any()


def test_checkpoint_accounting_of_a_world_rollout():
    world = dp.load_world(SOFT / "mass_spring.json")
    full = dp.WorldRollout(world)
    full.run(world.initial_state(), steps=20)
    sparse = dp.WorldRollout(world, options=dp.RolloutOptions(checkpoint_interval=6))
    sparse.run(world.initial_state(), steps=20)
    assert (full.checkpoint_interval(), sparse.checkpoint_interval()) == (1, 6)
    assert 0 < sparse.stored_state_bytes() < full.stored_state_bytes()
    assert full.stored_record_bytes() > 0 and sparse.stored_record_bytes() == 0
    assert np.array_equal(sparse.states(), full.states())


@pytest.mark.parametrize("batched", [False, True])
def test_torch_calls_reuse_their_engines(batched):
    """Calls of the torch bridge reuse an idle engine (a training loop does not allocate every
    step's records again): repeated calls, on the same engine, give the bits of the first one;
    a graph whose engine a later call has reused refuses a second backward pass by name, and one
    reversed before the next call may be reversed again (retain_graph)."""
    world = dp.load_world(SCENES / "servo_arm.json")
    x0, controls, params, _ = varied_inputs(world)
    if not batched:
        x0, controls, params = x0[0], controls[0], params[0]
    x0, controls, params = (torch.tensor(v) for v in (x0, controls, params))
    weights = torch.randn(controls.shape[:-2] + (STEPS + 1, world.layout.state_size), generator=torch.Generator().manual_seed(3),
                          dtype=torch.float64)

    def gradient():
        u = controls.clone().requires_grad_()
        loss = (dpt.world_rollout(world, x0, u, params, threads=2) * weights).sum()
        loss.backward()
        return loss.detach(), u.grad

    def idle():  # this world's idle engines
        return [engine for key, entries in dpt._engines._idle.items() if key[0] == id(world) for _, engine in entries]

    first = gradient()
    assert len(idle()) == 1, "the engine goes back to the pool"
    engine = idle()[0]
    for _ in range(2):
        again = gradient()
        assert torch.equal(again[0], first[0]) and torch.equal(again[1], first[1])
        assert idle() == [engine], "the same engine served every call"
    # Forward only (no gradient can be asked for): the engine is given back at once.
    with torch.no_grad():
        dpt.world_rollout(world, x0, controls, params, threads=2)
    assert idle() == [engine]
    # retain_graph: a second backward pass is fine before the next call, refused after it.
    u = controls.clone().requires_grad_()
    loss = (dpt.world_rollout(world, x0, u, params, threads=2) * weights).sum()
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    assert torch.equal(u.grad, 2 * first[1])
    gradient()
    with pytest.raises(dp.Error, match="this rollout's engine has run a later call since its forward pass"):
        loss.backward()
