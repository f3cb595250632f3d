"""The 2D fluid (docs/fluids.md) as a part of the one world, from Python: the example scenes
(examples/fluid/cavity.json, smoke_plume.json) load with the fluid's named slices; the towed
cylinder's obstacle slices get torch gradients that agree with central differences; a WorldRollout,
diffphys.torch.world_rollout and a WorldSimulator give the same states; the torch gradient of a loss on the final
smoke density w.r.t. entries of x0, the forces (fluid/force) and θ (fluid/viscosity,
fluid/buoyancy) agrees with central differences; each step's FluidStepStatus and the backward
pass's FluidGradientHealth read back; a negative viscosity is refused by item and value.

Finite differences as the C++ gradcheck takes them (src/fluid/fluid_gradcheck.cpp): the solves'
relative tolerance tightened to 1e-13, fourth-order central differences with steps 1e-6 (m/s
and units of smoke), 1e-6/h (m/s², a force moves a velocity by h f) and max(1e-6 |θ|, 1e-7) for
θ, judged to its default tolerance, 1e-5 relative. A fluid at rest, or a flat smoke field, sits
on the kinks of the bilinear interpolation and of MacCormack's clamp (the adjoint takes one side,
a central difference averages both), so the initial velocities and smoke get the same small
offsets as there, and the forces are a non-zero pattern."""

import json

import numpy as np
import pytest
import torch

import diffphys as dp
from diffphys import torch as dpt
from conftest import SOURCE_DIR

FLUID = SOURCE_DIR / "examples" / "fluid"
TOLERANCE = 1e-5  # GradientCheckOptions.tolerance, relative
STATE_STEP = 1e-6  # GradientCheckOptions.state_epsilon
PARAM_STEP = 1e-6  # GradientCheckOptions.param_epsilon, relative (floor 1e-7)


def tight_world(path):
    """The scene at `path` with the fluid's solves far below finite-difference steps."""
    scene = json.loads(path.read_text())
    scene["fluid"]["solver"] = {"relative_tolerance": 1e-13, "max_iterations": 1000}
    return dp.parse_world(json.dumps(scene), str(path), str(path.parent))


def interior_faces(nx, ny):
    """(nu + nv) booleans: the faces not on a wall (u: i = 0, nx; v: j = 0, ny are always 0)."""
    u = np.zeros((ny, nx + 1), dtype=bool)
    u[:, 1:-1] = True
    v = np.zeros((ny + 1, nx), dtype=bool)
    v[1:-1, :] = True
    return np.concatenate([u.ravel(), v.ravel()])


def offset_state(world, scalar, nx, ny, spacing, dt):
    """The scene's x0 moved off the kinks as the C++ gradcheck moves it: + 0.05 Δx/h sin(1.3 k)
    on the interior faces (k the face index), + 0.05 sin(0.9 k + 0.3) on scalar `scalar`."""
    lay = world.layout
    x0 = world.initial_state()
    faces = slice(lay.state_slice("fluid/velocity_u").offset, lay.state_slice("fluid/velocity_v").range.stop)
    k = np.arange(faces.stop - faces.start)
    x0[faces] += np.where(interior_faces(nx, ny), 0.05 * spacing / dt * np.sin(1.3 * k), 0.0)
    scalars = lay.state_slice(f"fluid/scalar/{scalar}")
    x0[scalars.range] += 0.05 * np.sin(0.9 * np.arange(scalars.size) + 0.3)
    return x0


def central_difference(loss_at, step):
    """The fourth-order central difference (8 (L(h) − L(−h)) − (L(2h) − L(−2h))) / 12 h."""
    return (8 * (loss_at(step) - loss_at(-step)) - (loss_at(2 * step) - loss_at(-2 * step))) / (12 * step)


@pytest.mark.parametrize("name, nx, ny, scalar", [("cavity", 32, 32, "dye"), ("smoke_plume", 32, 48, "smoke")])
def test_fluid_scenes_load_with_named_slices(name, nx, ny, scalar):
    world = dp.load_world(FLUID / f"{name}.json")
    assert world.kind() == "fluid" and world.has_fluid() and not world.has_rigid() and not world.has_soft()
    assert world.rigid is None
    lay = world.layout
    nu, nv = (nx + 1) * ny, nx * (ny + 1)
    expected = [("fluid/velocity_u", 0, nu), ("fluid/velocity_v", nu, nv), (f"fluid/scalar/{scalar}", nu + nv, nx * ny)]
    assert [(s.name, s.offset, s.size) for s in lay.state] == expected
    assert [(s.name, s.offset, s.size) for s in lay.tangent] == expected  # a fluid's tangent is its state
    assert [(s.name, s.offset, s.size) for s in lay.params] == [("fluid/viscosity", 0, 1), ("fluid/buoyancy", 1, 1)]
    assert [(s.name, s.offset, s.size) for s in lay.controls] == [("fluid/force", 0, 2 * nx * ny)]
    assert lay.state_size == lay.tangent_size == nu + nv + nx * ny and lay.control_count == 2 * nx * ny
    assert lay.fluid_state_offset == lay.fluid_tangent_offset == lay.fluid_param_offset == lay.fluid_control_offset == 0
    x0 = world.initial_state()
    assert not x0[: nu + nv].any() and 0 < x0[lay.state_slice(f"fluid/scalar/{scalar}").range].max() <= 1.0  # at rest
    assert not world.default_controls().any()
    scene = json.loads((FLUID / f"{name}.json").read_text())["fluid"]
    assert world.dt() == scene["dt"]
    assert world.default_params()[0] == scene["viscosity"]
    assert world.default_params()[1] == scene["scalars"][0].get("buoyancy", 0.0)


@pytest.mark.parametrize("name", ["cavity", "smoke_plume"])
def test_fluid_rollout_is_world_rollout_in_torch_with_status_and_health(name):
    """A short WorldRollout, diffphys.torch.world_rollout and a WorldSimulator give the same
    states bit for bit;
    every step's FluidStepStatus and the backward pass's FluidGradientHealth read back."""
    world = dp.load_world(FLUID / f"{name}.json")
    lay = world.layout
    steps = 6
    controls = 0.1 * np.sin(0.37 * np.arange(steps * lay.control_count)).reshape(steps, lay.control_count)
    rollout = dp.WorldRollout(world)
    rollout.run(world.initial_state(), controls)
    states = dpt.world_rollout(world, torch.from_numpy(world.initial_state()), torch.from_numpy(controls),
                               torch.from_numpy(world.default_params()))
    assert np.array_equal(states.numpy(), rollout.states())
    assert rollout.converged()
    simulator = dp.WorldSimulator(world)  # no tape: the same steps
    assert np.array_equal(simulator.run(steps, controls), rollout.states())
    assert simulator.step(controls[0]).fluid.converged

    tolerance = 1e-10  # the scenes' solver relative_tolerance (FluidSolverSettings default)
    for status in rollout.statuses():
        assert status.converged and status.rigid == [] and status.soft is None
        fluid = status.fluid
        assert fluid.converged and fluid.message == "" and fluid.pressure_iterations >= 1
        assert fluid.pressure_residual <= tolerance
        assert fluid.viscosity_iterations >= 1  # both scenes have ν > 0
        assert fluid.divergence_before > 0 and fluid.divergence_after <= tolerance * fluid.divergence_before
        assert 0.0 <= fluid.cfl <= 5.0  # the default max_cfl
    assert rollout.status(0).fluid.cfl == 0.0  # the first step starts at rest
    assert rollout.status(steps - 1).fluid.cfl > 0.0

    weights = np.random.default_rng(2).uniform(-1, 1, (steps + 1, lay.tangent_size))
    gradients = rollout.backward(weights)
    health = gradients.fluid_health
    assert len(health.state_gradient_norm) == steps + 1 and min(health.state_gradient_norm) > 0
    assert health.clipped_steps == 0 and health.first_non_finite_step == -1 and health.first_non_finite_stage == ""
    assert health.unconverged_adjoint_steps == [] and health.solver_converged and gradients.solver_converged
    assert gradients.soft_health.state_gradient_norm == [] and len(gradients.rigid_health.state_gradient_norm) == 0
    report = rollout.gradient_health(gradients, probes=2)
    assert np.array_equal(report["state_gradient_norm"], health.state_gradient_norm)

    options = dp.RolloutOptions()
    options.gradient_clip = 0.5 * min(health.state_gradient_norm)
    clipped = dp.WorldRollout(world, None, options)
    clipped.run(world.initial_state(), controls)
    clipped_health = clipped.backward(weights).fluid_health
    assert clipped_health.clipped_steps == steps + 1
    assert np.allclose(clipped_health.state_gradient_norm, options.gradient_clip, rtol=1e-12)


def test_fluid_torch_gradient_against_central_differences():
    """L = Σ_c w_c s_c² of the smoke density at step T, w_c fixed in [0, 1): its torch gradient
    w.r.t. x0 entries (faces and cells in the blob and around it), forces and θ."""
    path = FLUID / "smoke_plume.json"
    world = tight_world(path)
    lay = world.layout
    nx, ny, spacing, dt, steps = 32, 48, 0.03125, 0.02, 8
    x0 = offset_state(world, "smoke", nx, ny, spacing, dt)
    controls = 0.1 * np.sin(0.37 * np.arange(steps * lay.control_count)).reshape(steps, lay.control_count)
    theta = world.default_params()
    smoke = lay.state_slice("fluid/scalar/smoke").range
    weights = np.random.default_rng(5).uniform(0, 1, nx * ny)

    def loss_of(state):
        return float(np.sum(weights * state[smoke] ** 2))

    x0_t, controls_t, theta_t = (torch.tensor(a, requires_grad=True) for a in (x0, controls, theta))
    states = dpt.world_rollout(world, x0_t, controls_t, theta_t)
    loss = (torch.from_numpy(weights) * states[-1, smoke] ** 2).sum()
    loss.backward()

    probe = dp.WorldRollout(world)

    def loss_at(x=x0, u=controls, p=theta):
        probe.run(x, u, params=p)
        return loss_of(probe.final_state())

    assert loss.item() == pytest.approx(loss_at(), rel=1e-14)
    checked = []

    def check(what, analytic, moved, step):
        numeric = central_difference(moved, step)
        checked.append(what)
        assert abs(analytic - numeric) <= TOLERANCE * max(abs(analytic), abs(numeric)), (what, analytic, numeric)
        assert analytic != 0.0, what  # every entry picked reaches the final smoke

    u_offset, v_offset = lay.state_slice("fluid/velocity_u").offset, lay.state_slice("fluid/velocity_v").offset
    blob = 9 * nx + 16  # the cell holding the blob's centre (0.5, 0.3) m
    for what, index in (("u face (16, 9)", u_offset + 9 * (nx + 1) + 16), ("v face (16, 10)", v_offset + 10 * nx + 16),
                        ("v face (12, 14)", v_offset + 14 * nx + 12), ("smoke (16, 9)", smoke.start + blob),
                        ("smoke (16, 12)", smoke.start + blob + 3 * nx)):
        def moved(delta, index=index):
            x = x0.copy()
            x[index] += delta
            return loss_at(x=x)
        check("x0/" + what, x0_t.grad[index].item(), moved, STATE_STEP)

    force = lay.control_slice("fluid/force").offset
    for t, k in ((0, 2 * blob + 1), (3, 2 * (blob + nx)), (steps - 2, 2 * blob + 1)):
        def moved(delta, t=t, k=k):
            u = controls.copy()
            u[t, force + k] += delta
            return loss_at(u=u)
        check(f"fluid/force[{k}] t={t}", controls_t.grad[t, force + k].item(), moved, STATE_STEP / dt)
    # The last step's forces act after its advection: they cannot reach s_T.
    assert not controls_t.grad[steps - 1].any()

    for name in ("fluid/viscosity", "fluid/buoyancy"):
        index = lay.param_slice(name).offset

        def moved(delta, index=index):
            p = theta.copy()
            p[index] += delta
            return loss_at(p=p)
        check(name, theta_t.grad[index].item(), moved, max(PARAM_STEP * abs(theta[index]), 1e-7))
    assert len(checked) == 10


def test_negative_viscosity_is_refused_by_item_and_value():
    path = FLUID / "smoke_plume.json"
    scene = json.loads(path.read_text())
    scene["fluid"]["viscosity"] = -0.01
    with pytest.raises(dp.Error, match=r"^bad_smoke\.json: fluid\.viscosity: must be non-negative, got -0\.01$"):
        dp.parse_world(json.dumps(scene), "bad_smoke.json", str(path.parent))
    # As θ of a rollout (torch or NumPy): named by its slice.
    world = dp.load_world(path)
    theta = world.default_params()
    theta[world.layout.param_slice("fluid/viscosity").offset] = -0.5
    message = r"fluid 'smoke plume': fluid/viscosity must be non-negative and finite, got -0\.5"
    with pytest.raises(dp.Error, match=message):
        dp.WorldRollout(world, theta).run(world.initial_state(), steps=1)
    with pytest.raises(dp.Error, match=message):
        dpt.world_rollout(world, torch.from_numpy(world.initial_state()), torch.zeros(1, world.layout.control_count),
                          torch.from_numpy(theta))


def test_obstacle_gradients_through_torch_against_central_differences():
    """examples/fluid/towed_cylinder.json: a cylinder towed past a band of dye. L = Σ_c w_c s_c²
    of the dye at step T; its torch gradient w.r.t. the obstacle's θ (center, semi-axes,
    velocity) against central differences, as above. The obstacle's slices are θ of the world
    like viscosity's; a negative semi-axis is refused naming the obstacle."""
    path = FLUID / "towed_cylinder.json"
    world = tight_world(path)
    lay = world.layout
    nx, ny, spacing, dt, steps = 48, 24, 0.0625, 0.02, 6
    x0 = offset_state(world, "dye", nx, ny, spacing, dt)
    theta = world.default_params()
    dye = lay.state_slice("fluid/scalar/dye").range
    weights = np.random.default_rng(7).uniform(0, 1, nx * ny)
    x0_t, theta_t = torch.tensor(x0), torch.tensor(theta, requires_grad=True)
    states = dpt.world_rollout(world, x0_t, torch.zeros(steps, lay.control_count, dtype=torch.float64), theta_t)
    (torch.from_numpy(weights) * states[-1, dye] ** 2).sum().backward()

    probe = dp.WorldRollout(world)

    def loss_at(p):
        probe.run(x0, np.zeros((steps, lay.control_count)), params=p)
        return float(np.sum(weights * probe.final_state()[dye] ** 2))

    for name, k in (("center", 0), ("center", 1), ("semi_axes", 0), ("semi_axes", 1), ("velocity", 0), ("velocity", 1)):
        index = lay.param_slice(f"fluid/obstacle/cylinder/{name}").offset + k

        def moved(delta, index=index):
            p = theta.copy()
            p[index] += delta
            return loss_at(p)
        analytic = theta_t.grad[index].item()
        numeric = central_difference(moved, max(PARAM_STEP * abs(theta[index]), 1e-7))
        assert analytic != 0.0, name
        assert abs(analytic - numeric) <= TOLERANCE * max(abs(analytic), abs(numeric)), (name, k, analytic, numeric)

    theta[lay.param_slice("fluid/obstacle/cylinder/semi_axes").offset] = -0.1
    with pytest.raises(dp.Error, match=r"obstacle 'cylinder': semi_axes\[0\] must be positive and finite, got -0\.1"):
        dp.WorldRollout(world, theta).run(world.initial_state(), steps=1)
