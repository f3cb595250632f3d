"""One world from Python (diffphys.World, WorldRollout, diffphys.torch.world_rollout): every kind
of scene file loads with its named slices; a rigid scene through the world API gives the rigid
Rollout's states and gradients bit for bit (NumPy and torch); torch.autograd.gradcheck of
world_rollout on a soft scene (the hanging beam's neo-Hookean tetrahedra) and on the two-way
coupled cloth_on_pendulum scene; the soft system-identification example; bad input refused by
name.

Finite differences need solves far below their step: the scenes are read with tight Newton and
LCP tolerances. Inputs of very different scales (a modulus of 2e5 Pa, a position of 0.5 m) are
checked through a relative perturbation p = p0 (1 + s), so that one gradcheck step (eps) suits
them all; outputs are a few fixed random projections of the states, so that the analytic
Jacobian costs a few backward passes."""

import json

import numpy as np
import pytest
import torch

import diffphys as dp
from diffphys import layout
from diffphys import torch as dpt
from conftest import SCENES, SOURCE_DIR

TOLERANCES = dict(eps=1e-6, atol=1e-6, rtol=1e-4)
SOFT = SOURCE_DIR / "examples" / "soft"


def tight_world(path):
    """The scene file at `path` with Newton and LCP tolerances far below finite-difference steps."""
    scene = json.loads(path.read_text())
    if "soft" in scene:
        scene["soft"]["newton"] = {"tolerance": 1e-12, "max_iterations": 100}
    if "rigid" in scene:
        scene["rigid"]["solver"] = {"tolerance": 1e-13, "max_iterations": 200, "stabilization_tolerance": 1e-15,
                                    "stabilization_iterations": 50}
    return dp.parse_world(json.dumps(scene), str(path), str(path.parent))


def test_every_kind_of_scene_loads_with_named_slices():
    rigid = dp.load_world(SCENES / "servo_arm.json")
    soft = dp.load_world(SOFT / "hanging_beam.json")
    both = dp.load_world(SOFT / "cloth_on_pendulum.json")
    robot = dp.load_world(SOURCE_DIR / "examples" / "robots" / "two_link_arm.urdf")
    assert [w.kind() for w in (rigid, soft, both, robot)] == ["rigid", "soft", "rigid + soft", "rigid"]
    assert both.coupling.two_way and both.coupling.substeps == 4 == both.rigid_steps_per_step()
    assert both.dt() == pytest.approx(0.01) and both.rigid.model.dt == pytest.approx(0.0025)
    assert soft.rigid is None and not soft.has_rigid() and soft.has_soft()
    layout_ = both.layout
    bodies = both.rigid.model.body_count()
    nodes = layout_.state_slice("soft/positions").size // 3
    assert layout_.state_size == 13 * bodies + 6 * nodes and layout_.tangent_size == 12 * bodies + 6 * nodes
    assert layout_.soft_state_offset == 13 * bodies and layout_.soft_tangent_offset == 12 * bodies
    # Each part's ranges: the rigid bodies' then the soft bodies', tiling every vector.
    assert [part.kind for part in layout_.parts] == ["rigid", "soft"]
    rigid_part, soft_part = layout_.parts
    assert rigid_part.state == slice(0, 13 * bodies, 1) and rigid_part.tangent == slice(0, 12 * bodies, 1)
    assert soft_part.state == slice(13 * bodies, layout_.state_size, 1)
    assert soft_part.params == slice(layout_.soft_param_offset, layout_.param_count, 1)
    assert soft_part.controls == layout_.control_slice("soft/forces").range
    assert layout_.state_slice("body/pendulum").range == slice(13, 26, 1)
    assert layout_.tangent_slice("soft/velocities").offset == 12 * bodies + 3 * nodes
    assert layout_.control_count == layout_.control_slice("soft/forces").size == 3 * nodes  # no actuators
    assert [s.name for s in layout_.params][:1] == ["gravity"] and layout_.param_slice("soft/gravity").size == 3
    # Slices tile each vector in order.
    for slices, size in ((layout_.state, layout_.state_size), (layout_.tangent, layout_.tangent_size),
                         (layout_.params, layout_.param_count), (layout_.controls, layout_.control_count)):
        assert [s.offset for s in slices] == list(np.cumsum([0] + [s.size for s in slices[:-1]]))
        assert slices[-1].offset + slices[-1].size == size
    x0 = both.initial_state()
    assert x0.shape == (layout_.state_size,) and x0[13 + 3] == 1.0  # the pendulum's quaternion w
    assert both.default_params().shape == (layout_.param_count,)
    assert both.default_controls().shape == (layout_.control_count,) and not both.default_controls().any()
    # parse_world reads the same file's text the same way; a World of a built Scene is its rigid world.
    again = dp.parse_world((SOFT / "cloth_on_pendulum.json").read_text(), "again", str(SOFT))
    assert np.array_equal(again.initial_state(), x0) and again.source == "again"
    scene = dp.load_scene(SCENES / "pendulum.json")
    assert np.array_equal(dp.World(scene).initial_state(), scene.state.to_vector())
    assert np.array_equal(dp.World(scene).default_params(), scene.params.values)


def test_soft_world_rollout_steps_statuses_and_gradient_layout():
    world = dp.load_world(SOFT / "mass_spring.json")
    rollout = dp.WorldRollout(world)
    forces = np.full((5, world.layout.control_count), 0.01)
    rollout.run(world.initial_state(), forces)
    states = rollout.states()
    assert states.shape == (6, world.layout.state_size) and rollout.steps() == 5
    assert np.array_equal(states[3], rollout.state(3)) and np.array_equal(states[5], rollout.final_state())
    assert rollout.converged() and len(rollout.statuses()) == 5
    status = rollout.status(0)
    assert status.converged and status.rigid == [] and status.soft.converged and status.soft.iterations >= 1
    # L = Σ_t Σ positions: the callback and the array give the same gradients.
    velocities = world.layout.tangent_slice("soft/velocities")
    weights = np.zeros((6, world.layout.tangent_size))
    weights[:, world.layout.tangent_slice("soft/positions").range] = 1.0
    from_array = rollout.backward(weights)
    from_callback = rollout.backward(lambda t, x, gradient: weights[t])
    assert np.array_equal(from_array.params, from_callback.params)
    assert np.array_equal(from_array.initial_state, from_callback.initial_state)
    assert from_array.controls.shape == (5, world.layout.control_count) and from_array.solver_converged
    assert from_array.soft_health.solver_converged and len(from_array.soft_health.state_gradient_norm) == 6
    # Moving a free node's initial velocity or raising g_z (less negative) raises the positions.
    assert from_array.initial_state[velocities.range].max() > 0
    assert from_array.param(world, "soft/gravity")[2] > 0
    # Passing θ at run() replaces it: with gravity (the scene has none) the nodes fall.
    theta = world.default_params()
    theta[world.layout.param_slice("soft/gravity").range] = [0, 0, -9.81]
    rollout.run(world.initial_state(), forces, params=theta)
    heights = world.layout.state_slice("soft/positions").range
    assert np.array_equal(rollout.params(), theta)
    assert rollout.final_state()[heights][2::3].sum() < states[5][heights][2::3].sum()


def rigid_case():
    """The servo arm under varied controls: its scene, world, x0, controls and θ."""
    scene = dp.load_scene(SCENES / "servo_arm.json")
    world = dp.load_world(SCENES / "servo_arm.json")
    steps, actuators = 30, scene.model.actuator_count()
    controls = 0.3 * np.sin(0.1 * np.arange(steps)[:, None] + np.arange(actuators)[None, :])
    return scene, world, controls


def test_rigid_world_is_the_rigid_rollout_in_numpy():
    scene, world, controls = rigid_case()
    reference = dp.Rollout(scene.model, scene.params)
    reference.run(scene.state, controls)
    rollout = dp.WorldRollout(world, scene.params.values)
    rollout.run(world.initial_state(), controls)
    assert np.array_equal(rollout.states(), reference.states())
    weights = np.random.default_rng(1).normal(size=(31, world.layout.tangent_size))
    expected, got = reference.backward(weights), rollout.backward(weights)
    for name in ("initial_state", "controls", "params"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name
    assert got.not_differentiable == expected.not_differentiable
    assert [s.rigid[0].iterations for s in rollout.statuses()] == [s.iterations for s in reference.statuses()]


def test_rigid_world_rollout_in_torch_is_the_rigid_rollout():
    scene, world, controls = rigid_case()
    inputs = [torch.from_numpy(world.initial_state()), torch.from_numpy(controls), torch.from_numpy(world.default_params())]
    weights = torch.from_numpy(np.random.default_rng(2).normal(size=(31, world.layout.state_size)))
    results = []
    for function in (lambda x, u, p: dpt.world_rollout(world, x, u, p),
                     lambda x, u, p: dpt.rollout(scene.model, x, u, p)):
        leaves = [value.clone().requires_grad_() for value in inputs]
        states = function(*leaves)
        (states * weights).sum().backward()
        results.append([states.detach()] + [leaf.grad for leaf in leaves])
    for world_value, rigid_value in zip(*results):
        assert torch.equal(world_value, rigid_value)
    # And against the C++ Rollout directly, through diffphys.layout's conversions.
    engine = dp.Rollout(scene.model, scene.params)
    engine.run(scene.state, controls)
    states = engine.states()
    assert np.array_equal(results[0][0].numpy(), states)
    gradients = engine.backward(layout.tangent_gradient_from_quaternion(weights.numpy(), states))
    x0_gradient = layout.quaternion_gradient_from_tangent(np.array(gradients.initial_state), states[0])
    x0_gradient[:13] = 0.0  # the world body is scenery
    assert np.array_equal(results[0][1].numpy(), x0_gradient)
    assert np.array_equal(results[0][2].numpy(), gradients.controls)
    assert np.array_equal(results[0][3].numpy(), gradients.params)


def projected(world, steps, entries, controls, params_names, directions=3, seed=0):
    """f(s_x0, s_controls, s_params) → a few random projections of all states, where each
    selected input is moved relatively, p = p0 (1 + s) (absolutely, by s, where p0 is 0)."""
    lay = world.layout
    x0 = torch.from_numpy(world.initial_state())
    theta = torch.from_numpy(world.default_params())
    params_index = torch.tensor(np.concatenate([np.arange(lay.param_slice(n).offset,
                                                          lay.param_slice(n).offset + lay.param_slice(n).size)
                                                for n in params_names]))
    x0_index = torch.tensor(entries)
    control_index = torch.tensor(controls)
    base_controls = torch.zeros(steps, lay.control_count, dtype=torch.float64)
    base_controls.view(-1)[control_index] = 0.01 * torch.cos(control_index.double())
    weights = torch.from_numpy(np.random.default_rng(seed).normal(size=(directions, steps + 1, lay.state_size)))

    def scaled(base, s):
        return base + torch.where(base != 0, base, torch.ones_like(base)) * s

    def function(s_x0, s_controls, s_params):
        x = x0.index_put((x0_index,), scaled(x0[x0_index], s_x0))
        u = base_controls.reshape(-1).index_put((control_index,), scaled(base_controls.reshape(-1)[control_index],
                                                                          s_controls)).reshape(base_controls.shape)
        p = theta.index_put((params_index,), scaled(theta[params_index], s_params))
        states = dpt.world_rollout(world, x, u, p)
        return (weights * states).sum(dim=(1, 2))

    zeros = [torch.zeros(len(index), dtype=torch.float64, requires_grad=True)
             for index in (entries, controls, params_index)]
    return function, zeros


def test_soft_world_rollout_gradcheck_hanging_beam():
    world = tight_world(SOFT / "hanging_beam.json")
    lay = world.layout
    positions, velocities = lay.state_slice("soft/positions").offset, lay.state_slice("soft/velocities").offset
    tip = int(np.argmax(world.initial_state()[positions:velocities:3]))  # the free end's first node
    free = [3 * tip, 3 * tip + 2, 3 * (tip - 5) + 1]
    entries = [positions + i for i in free] + [velocities + i for i in free]
    forces = [3 * tip + 2, lay.control_count + 3 * tip, lay.control_count + 3 * (tip - 5) + 2]
    function, inputs = projected(world, 3, entries, forces,
                                 ["soft/tet_material/rubber/youngs_modulus", "soft/tet_material/rubber/poisson_ratio",
                                  "soft/tet_material/rubber/density", "soft/gravity"])
    assert torch.autograd.gradcheck(function, inputs, **TOLERANCES)


def test_coupled_world_rollout_gradcheck_cloth_on_pendulum():
    world = tight_world(SOFT / "cloth_on_pendulum.json")
    lay = world.layout
    pendulum = lay.state_slice("body/pendulum")
    positions, velocities = lay.state_slice("soft/positions").offset, lay.state_slice("soft/velocities").offset
    node = 20
    entries = [pendulum.offset + i for i in range(13)] + [positions + 3 * node, velocities + 3 * node + 2]
    forces = [3 * node + 2, lay.control_count + 3 * node + 2]
    function, inputs = projected(world, 2, entries, forces,
                                 ["body/pendulum/mass", "body/pendulum/inertia",
                                  "soft/cloth_material/silk/stretch_modulus", "soft/cloth_material/silk/areal_density",
                                  "soft/frame_attachment_stiffness"])
    assert torch.autograd.gradcheck(function, inputs, **TOLERANCES)


def test_fit_soft_stiffness_example_recovers_the_modulus():
    import fit_soft_stiffness
    result = fit_soft_stiffness.main(["--quick"])
    assert result["start_modulus"] == 0.25 * result["true_modulus"]
    assert result["relative_error"] < 1e-6 and result["final_loss"] < 1e-12 * result["first_loss"]


def test_bad_input_is_refused_by_name():
    world = dp.load_world(SOFT / "cloth_on_pendulum.json")
    lay = world.layout
    with pytest.raises(dp.Error, match=r"^unknown parameter slice 'soft/gravty' \(did you mean 'soft/gravity'\?\)$"):
        lay.param_slice("soft/gravty")
    with pytest.raises(dp.Error, match=r"unknown state slice 'body/pendulm' \(did you mean 'body/pendulum'\?\)"):
        lay.state_slice("body/pendulm")
    with pytest.raises(dp.Error, match=r"unknown control slice 'soft/force' \(did you mean 'soft/forces'\?\)"):
        lay.control_slice("soft/force")
    with pytest.raises(dp.Error, match="unknown tangent slice 'nope'"):
        lay.tangent_slice("nope")
    with pytest.raises(dp.Error, match=r"WorldRollout: params must have shape \(117,\), got \(3,\)"):
        dp.WorldRollout(world, np.zeros(3))
    rollout = dp.WorldRollout(world)
    x0 = world.initial_state()
    with pytest.raises(dp.Error, match=r"WorldRollout.run: x0 must have shape \(320,\), got \(319,\)"):
        rollout.run(x0[:-1], steps=1)
    with pytest.raises(dp.Error, match=r"controls must have shape \(steps, control_count\) = \(2, 147\), got \(2, 3\)"):
        rollout.run(x0, np.zeros((2, 3)))
    with pytest.raises(dp.Error, match="give steps"):
        rollout.run(x0)
    rollout.run(x0, steps=1)
    with pytest.raises(dp.Error, match=r"loss gradients must have shape \(T \+ 1, tangent_size\) = \(2, 318\), got \(2, 320\)"):
        rollout.backward(np.zeros((2, 320)))
    with pytest.raises(dp.Error, match="WorldRollout.backward: loss gradient at step 1: expected 318 values"):
        rollout.backward(lambda t, x, g: np.zeros(3))
    with pytest.raises(dp.Error, match=r"unknown parameter slice 'gravty' \(did you mean 'gravity'\?\)"):
        rollout.backward(np.zeros((2, 318))).param(world, "gravty")
    theta = torch.from_numpy(world.default_params())
    with pytest.raises(dp.Error, match=r"world_rollout: x0 must have shape \(320,\) \(the state_size of world 'pendulum'\)"):
        dpt.world_rollout(world, torch.zeros(13), torch.zeros(1, 147), theta)
    with pytest.raises(dp.Error, match=r"world_rollout: controls must have shape \(2, 147\)"):
        dpt.world_rollout(world, torch.from_numpy(x0), torch.zeros(2, 146), theta)
    with pytest.raises(dp.Error, match=r"world_rollout: params must have shape \(117,\)"):
        dpt.world_rollout(world, torch.from_numpy(x0), torch.zeros(2, 147), theta[:-1])
    with pytest.raises(dp.Error, match="missing.json: no such file"):
        dp.load_world(SOFT / "missing.json")


@pytest.mark.parametrize("scene", [SCENES / "servo_arm.json", SOFT / "mass_spring.json", SOFT / "cloth_on_pendulum.json"])
def test_world_simulator_steps_any_world_as_the_rollout(scene):
    """WorldSimulator steps any world without a tape, bit for bit as WorldRollout (given controls
    and the defaults), with each step's status per part; bad sizes refused by name."""
    world = dp.load_world(scene)
    lay = world.layout
    steps = 5
    controls = np.tile(world.default_controls(), (steps, 1)) + 0.01 * np.sin(np.arange(steps * lay.control_count)).reshape(
        steps, lay.control_count)
    rollout = dp.WorldRollout(world)
    rollout.run(world.initial_state(), controls)
    simulator = dp.WorldSimulator(world)
    assert np.array_equal(simulator.run(steps, controls), rollout.states())
    assert simulator.steps() == steps and simulator.time() == pytest.approx(steps * world.dt())
    one = dp.WorldSimulator(world, x0=rollout.state(2))
    status = one.step(controls[2])
    assert np.array_equal(one.state(), rollout.state(3))
    assert status.converged and (status.soft is not None) == world.has_soft()
    assert len(status.rigid) == (world.rigid_steps_per_step() if world.has_rigid() else 0)
    defaults = dp.WorldRollout(world)
    defaults.run(world.initial_state(), steps=3)
    assert np.array_equal(dp.WorldSimulator(world).run(3), defaults.states())
    with pytest.raises(dp.Error, match=r"WorldSimulator.step: controls must have shape"):
        one.step(np.zeros(lay.control_count + 1))
    with pytest.raises(dp.Error, match=r"WorldSimulator: params must have shape"):
        dp.WorldSimulator(world, params=np.zeros(2))


def test_gradient_health_of_rigid_and_soft_worlds():
    """WorldRollout.gradient_health (docs/gradients.md, "Gradient health"): Newton's cradle's
    first impact multiplies the final state's sensitivity ×1,063 in one step (as the command
    line reports it); a soft world's probes are relative to their own |x̄_T| (s_T = 1); given
    the loss's gradients, the report carries their |dL/dx_t|."""
    cradle = dp.load_world(SCENES / "newtons_cradle.json")
    rollout = dp.WorldRollout(cradle)
    rollout.run(cradle.initial_state(), steps=2000)
    report = rollout.gradient_health()
    assert report["verdict"] == "exploding" and report["largest_step"] == 722
    assert report["largest_step_gain"] == pytest.approx(1063, rel=1e-3)
    assert report["sensitivity"].shape == (2001,) and report["sensitivity"][-1] == pytest.approx(1.0)
    assert report["text"].startswith("gradient health over 2000 steps (1 s): exploding")

    beam = dp.load_world(SOFT / "hanging_beam.json")
    rollout = dp.WorldRollout(beam)
    rollout.run(beam.initial_state(), steps=10)
    weights = np.random.default_rng(3).uniform(-1, 1, (11, beam.layout.tangent_size))
    gradients = rollout.backward(weights)
    report = rollout.gradient_health(gradients, probes=2)
    assert report["sensitivity"][-1] == pytest.approx(1.0) and report["verdict"] in ("stable", "vanishing")
    assert np.allclose(report["state_gradient_norm"], gradients.soft_health.state_gradient_norm)
