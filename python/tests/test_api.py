"""API coverage of the bindings: building, scene files, model info, Params and State views,
stepping, Simulator.run, rollouts (open and closed loop), backward, gradient health,
checkpointing options and the C++ gradient check — each against a closed form, finite
differences or a second path through the API."""

import math

import numpy as np
import pytest

import diffphys as dp
from conftest import SCENES, tighten

G, H = 9.81, 0.01


def test_builder_specs_and_model_info(falling_ball):
    model = falling_ball.model
    assert model.body_count() == 2 and model.bodies[0].name == "world" and model.bodies[1].name == "ball"
    assert model.bodies[1].type == dp.BodyType.Dynamic and model.body_index("ball") == 1
    assert model.dt == pytest.approx(0.01)
    names = model.layout.names()
    assert names[0] == "gravity" and "body/ball/mass" in names and "shape/ball/0/radius" in names
    sizes = {s.name: s.size for s in model.layout.slices}
    assert sizes["body/ball/inertia"] == 3 and sizes["body/ball/mass"] == 1
    offsets = [s.offset for s in model.layout.slices]
    assert offsets == sorted(offsets) and model.layout.size == model.param_count() == len(falling_ball.params)
    spec = dp.BodySpec(name="b", mass=None, position=[1, 2, 3])
    assert spec.mass is None and np.allclose(spec.position, [1, 2, 3])
    assert dp.ShapeSpec(type="BOX").type == dp.ShapeType.Box


def test_scene_file_and_parse_scene():
    scene = dp.load_scene(SCENES / "pendulum.json")
    assert scene.model.joints[0].name == "hinge" and scene.model.joint_count() == 1
    text = (SCENES / "bouncing_ball.json").read_text()
    parsed = dp.parse_scene(text, "ball.json")
    assert parsed.params.get(parsed.model, "body/ball/restitution")[0] == pytest.approx(0.8)


def test_params_are_views_with_named_slices(falling_ball):
    model, params = falling_ball.model, falling_ball.params
    mass = params.slice(model, "body/ball/mass")
    mass[0] = 3.0  # writes through to the C++ vector
    assert params.get(model, "body/ball/mass")[0] == 3.0
    params.set(model, "gravity", [0, 0, -1.62])
    assert np.allclose(params.values[model.layout.gravity:model.layout.gravity + 3], [0, 0, -1.62])
    values = params.values
    values[:] = values * 1.0
    assert np.shares_memory(values, params.values)
    assert list(params.as_dict(model))[0] == "gravity"
    copy = params.copy()
    copy.set(model, "body/ball/mass", 5.0)
    assert params.get(model, "body/ball/mass")[0] == 3.0


def test_named_parameters_set_what_a_rollout_sees(falling_ball):
    # Free fall under a set gravity and a set body force on a set mass: a = g + F/m, so after n
    # semi-implicit Euler steps z_n = z_0 + a h² n(n + 1)/2. The Rollout reads params at each run.
    model, params = falling_ball.model, falling_ball.params
    rollout = dp.Rollout(model, params)
    rollout.run(falling_ball.state, steps=10)
    params.set(model, "gravity", [0, 0, -1.62])
    params.set(model, "body/ball/mass", 4.0)
    params.set(model, "body/ball/force", [2.0, 0.0, 8.0])
    assert params.get(model, "body/ball/mass")[0] == 4.0 and list(params.get(model, "gravity")) == [0, 0, -1.62]
    rollout.run(falling_ball.state, steps=10)
    n = np.arange(11)
    acceleration = np.array([0.5, 0.0, -1.62 + 2.0])
    expected = falling_ball.state.position[1] + acceleration * (H * H * n * (n + 1) / 2)[:, None]
    assert np.allclose(rollout.states()[:, 13:16], expected, atol=1e-12)
    with pytest.raises(dp.Error, match=r"^unknown parameter 'body/ball/mas' \(did you mean 'body/ball/mass'\?\)$"):
        params.set(model, "body/ball/mas", 4.0)
    with pytest.raises(dp.Error, match=r"^unknown parameter 'gravty' \(did you mean 'gravity'\?\)$"):
        params.get(model, "gravty")


def test_state_views_and_flat_vector(falling_ball):
    state = falling_ball.state
    assert state.position.shape == (2, 3) and state.orientation.shape == (2, 4)
    state.linear_velocity[1] = [1.0, 2.0, 3.0]
    vector = state.to_vector()
    assert vector.shape == (26,)
    assert np.allclose(vector[13:16], [0, 0, 10]) and np.allclose(vector[16:20], [1, 0, 0, 0])
    assert np.allclose(vector[20:23], [1, 2, 3])
    again = dp.State.from_vector(vector)
    assert np.array_equal(again.to_vector(), vector)


def test_free_fall_matches_semi_implicit_euler(falling_ball):
    # v_n = −g h n, z_n = z_0 − g h² n(n + 1)/2 (velocity first, then position).
    trajectory, converged = dp.Simulator(falling_ball.model, falling_ball.params, falling_ball.state).run(100)
    n = np.arange(101)
    assert converged and trajectory.shape == (101, 26)
    assert np.allclose(trajectory[:, 13 + 2], 10 - G * H * H * n * (n + 1) / 2, atol=1e-12)
    assert np.allclose(trajectory[:, 13 + 9], -G * H * n, atol=1e-12)


def test_step_function_and_simulator_agree(sliding_ball):
    model, params = sliding_ball.model, sliding_ball.params
    state, next_state, workspace = sliding_ball.state.copy(), dp.State(), dp.Workspace()
    next_state.resize(model.body_count())
    for _ in range(5):
        status = dp.step(model, params, state, None, next_state, workspace)
        state, next_state = next_state, state
    assert status.converged and status.contact_count >= 1 and len(workspace.contacts()) >= 1
    simulator = dp.Simulator(model, params, sliding_ball.state)
    for _ in range(5):
        simulator.step()
    assert np.array_equal(simulator.state.to_vector(), state.to_vector())
    assert simulator.contacts()[0].normal_impulse > 0
    energy = dp.kinetic_energy(model, params, simulator.state)
    assert energy < dp.kinetic_energy(model, params, sliding_ball.state)  # friction dissipates


def test_rollout_states_match_simulation_and_gravity_gradient(falling_ball):
    model, params = falling_ball.model, falling_ball.params
    steps = 50
    rollout = dp.Rollout(model, params)
    rollout.run(falling_ball.state, steps=steps)
    trajectory, _ = dp.Simulator(model, params, falling_ball.state).run(steps)
    assert np.array_equal(rollout.states(), trajectory)
    # L = z_T = z_0 + v_z0 h T + g_z h² T(T + 1)/2: dL/dg_z = h² T(T + 1)/2, dL/dz_0 = 1, dL/dv_z0 = h T.
    loss_gradient = np.zeros((steps + 1, 24))
    loss_gradient[steps, 12 + 2] = 1.0
    gradients = rollout.backward(loss_gradient)
    assert gradients.param(model, "gravity")[2] == pytest.approx(H * H * steps * (steps + 1) / 2, rel=1e-12)
    assert gradients.initial_state[12 + 2] == pytest.approx(1.0)
    assert gradients.initial_state[12 + 8] == pytest.approx(H * steps)
    assert gradients.param(model, "body/ball/mass")[0] == pytest.approx(0.0, abs=1e-14)
    assert gradients.controls.shape == (steps, 0)
    health = gradients.health
    assert health.state_gradient_norm.shape == (steps + 1,) and health.first_non_finite_step == -1
    assert health.solver_converged and health.clipped_steps == 0
    # Free fall, L = z_T: the last step turns p̄ = 1 into v̄⁺ = v̄_free = h (no rows) and
    # x̄_{T-1} = (p̄, v̄) = (1, h), relative to |x̄_T| = 1 (GradientHealth.stage_gain).
    assert health.stage_gain.shape == (steps, 3)
    assert health.stage_gain[steps - 1] == pytest.approx([H, H, np.sqrt(1 + H * H)], rel=1e-12)
    # Free fall: x_T = x_t + (T − t)h v, so the sensitivity grows by at most (τ + √(τ² + 4))/2.
    report = rollout.gradient_health(gradients)
    assert report["verdict"] == "stable" and report["sensitivity"][-1] == pytest.approx(1.0)
    tau = steps * H
    assert report["sensitivity"][0] <= (tau + np.sqrt(tau * tau + 4)) / 2 * (1 + 1e-12)
    assert np.array_equal(report["state_gradient_norm"], health.state_gradient_norm)


def test_bounce_height_gradient_with_respect_to_drop_height_is_restitution_squared():
    """h1 = e² h0: the bounce happens at its time of impact inside the step (solver.time_of_impact,
    on by default), so dh1/dh0 is e² up to O(h) and equals the simulator's central differences;
    the world (static, fixed scenery) is listed as not differentiable."""
    e, h0, dt = 0.6, 0.5371, 1e-3

    def dropped(height):
        builder = dp.ModelBuilder()
        builder.dt = dt
        builder.add_ground_plane()
        builder.add_body(name="ball", position=(0, 0, height + 0.1), mass=1.0, restitution=e,
                         shapes=[dp.ShapeSpec(type="sphere", radius=0.1)])
        return builder.build()

    scene = dropped(h0)
    assert scene.model.solver.time_of_impact
    trajectory, _ = dp.Simulator(scene.model, scene.params, scene.state).run(2000)
    vz = trajectory[:, 13 + 7 + 2]
    bounce = int(np.argmax(vz > 0))
    apex = bounce + int(np.argmax(vz[bounce:] <= 0)) - 1  # the last step of the rise
    rollout = dp.Rollout(scene.model, scene.params)
    rollout.run(scene.state, steps=apex)
    loss_gradient = np.zeros((apex + 1, 24))
    loss_gradient[apex, 12 + 2] = 1.0
    gradients = rollout.backward(loss_gradient)
    analytic = gradients.initial_state[12 + 2]
    heights = [dp.Simulator(s.model, s.params, s.state).run(apex)[0][apex, 13 + 2]
               for s in (dropped(h0 + 1e-5), dropped(h0 - 1e-5))]
    assert analytic == pytest.approx((heights[0] - heights[1]) / 2e-5, rel=1e-6)
    assert analytic == pytest.approx(e * e, rel=2e-2)
    assert "x0/world" in gradients.not_differentiable and not np.any(gradients.initial_state[:12])


def test_contact_point_surfaces_keeps_a_thrown_balls_angular_momentum():
    """solver.contact_point (default Midpoint): with Surfaces each body is pushed at its own surface
    point, so a ball thrown with backspin onto the ground keeps v_x + (2/5) r ω_y and ends rolling
    back at 5/7 of it (docs/simulation.md, Contact points)."""
    def thrown(contact_point):
        builder = dp.ModelBuilder()
        builder.dt = 0.01
        builder.solver.formulation = dp.Formulation.Convex
        builder.solver.contact_point = contact_point
        builder.add_ground_plane()
        builder.add_body(name="ball", position=(0, 0, 1.5), mass=1.0, friction=1.0, restitution=0.5,
                         linear_velocity=(5, 0, 2), angular_velocity=(0, -30, 0),
                         shapes=[dp.ShapeSpec(type="sphere", radius=0.5)])
        return builder.build()

    assert dp.SolverSettings().contact_point == dp.ContactPoint.Midpoint
    ends = {}
    for contact_point in (dp.ContactPoint.Midpoint, dp.ContactPoint.Surfaces):
        scene = thrown(contact_point)
        assert scene.model.solver.contact_point == contact_point
        trajectory, _ = dp.Simulator(scene.model, scene.params, scene.state).run(300)
        momentum = trajectory[:, 13 + 7] + 0.4 * 0.5 * trajectory[:, 13 + 11]
        ends[contact_point] = (np.max(np.abs(momentum - momentum[0])), trajectory[-1, 13 + 7])
    assert ends[dp.ContactPoint.Surfaces][0] < 1e-9
    assert ends[dp.ContactPoint.Surfaces][1] == pytest.approx(-5.0 / 7.0, abs=1e-3)
    assert ends[dp.ContactPoint.Midpoint][0] > 0.1


def test_backward_callback_equals_array_and_checkpointing_is_exact(sliding_ball):
    model, params, steps = sliding_ball.model, sliding_ball.params, 40
    rng = np.random.default_rng(0)
    weights = rng.normal(size=(steps + 1, 24))
    full = dp.Rollout(model, params)
    full.run(sliding_ball.state, steps=steps)
    from_array = full.backward(weights)
    from_callback = full.backward(lambda t, state, gradient: weights[t])

    def adding(t, state, gradient):
        gradient += weights[t]
    from_adding = full.backward(adding)
    checkpointed = dp.Rollout(model, params, dp.RolloutOptions(checkpoint_interval=7))
    checkpointed.run(sliding_ball.state, steps=steps)
    assert checkpointed.checkpoint_interval() == 7
    assert checkpointed.stored_state_bytes() < full.stored_state_bytes()
    assert np.array_equal(checkpointed.states(), full.states())
    assert np.array_equal(checkpointed.state(23).to_vector(), full.states()[23])
    from_checkpoints = checkpointed.backward(weights)
    for other in (from_callback, from_adding, from_checkpoints):
        assert np.array_equal(other.params, from_array.params)
        assert np.array_equal(other.initial_state, from_array.initial_state)


def test_gradient_decay_and_clip(falling_ball):
    model, params, steps = falling_ball.model, falling_ball.params, 10
    loss_gradient = np.zeros((steps + 1, 24))
    loss_gradient[steps, 12 + 2] = 1.0
    decayed = dp.Rollout(model, params, dp.RolloutOptions(gradient_decay=0.5))
    decayed.run(falling_ball.state, steps=steps)
    # Free fall: dz_T/dz_0 = 1, so with decay α the gradient reaching x_0 is α^T.
    assert decayed.backward(loss_gradient).initial_state[12 + 2] == pytest.approx(0.5 ** steps)
    clipped = dp.Rollout(model, params, dp.RolloutOptions(gradient_clip=0.5))
    clipped.run(falling_ball.state, steps=steps)
    gradients = clipped.backward(loss_gradient)
    assert gradients.health.clipped_steps > 0 and max(gradients.health.state_gradient_norm) <= 0.5 + 1e-12


def test_per_step_logs_beyond_the_memory_budget_are_summarised():
    """A bouncing ball with a budget that holds its states but not a quarter's worth of per-step
    logs: the same gradient, the health's arrays empty and its summaries filled, statuses()
    refused, pointing to converged() (which still answers) and the budget."""
    scene = dp.load_scene(SCENES / "bouncing_ball.json")
    steps = 1500
    weights = np.zeros((steps + 1, 12 * scene.model.body_count()))
    weights[::100, 12 + 2] = 1.0
    roomy = dp.Rollout(scene.model, scene.params)
    roomy.run(scene.state, steps=steps)
    expected = roomy.backward(weights)
    assert expected.health.per_step_kept and len(expected.health.contact_changes) >= 2
    lean = dp.Rollout(scene.model, scene.params, dp.RolloutOptions(memory_budget=4 * steps * 92 - 1))
    lean.run(scene.state, steps=steps)
    got = lean.backward(weights)
    assert np.array_equal(got.initial_state, expected.initial_state)
    assert np.array_equal(got.params, expected.params)
    assert not got.health.per_step_kept and len(got.health.state_gradient_norm) == 0
    assert got.health.contact_change_count == len(expected.health.contact_changes)
    assert got.health.largest_state_gradient_norm == max(expected.health.state_gradient_norm)
    with pytest.raises(dp.Error, match=r"not kept .*converged\(\)"):
        lean.statuses()
    assert lean.engine.converged()


def test_gradient_against_finite_differences(sliding_ball):
    model = tighten(sliding_ball.model)
    params, steps = sliding_ball.params, 30

    def final_x(friction):
        trial = params.copy()
        trial.set(model, "body/ball/friction", friction)
        rollout = dp.Rollout(model, trial)
        rollout.run(sliding_ball.state, steps=steps)
        return rollout.final_state().position[1, 0], rollout

    _, rollout = final_x(0.4)
    loss_gradient = np.zeros((steps + 1, 24))
    loss_gradient[steps, 12] = 1.0
    analytic = rollout.backward(loss_gradient).param(model, "body/ball/friction")[0]
    epsilon = 1e-6
    numeric = (final_x(0.4 + epsilon)[0] - final_x(0.4 - epsilon)[0]) / (2 * epsilon)
    assert analytic == pytest.approx(numeric, rel=1e-6) and analytic < 0


class DampingController(dp.Controller):
    """u = −k θ̇ on the hinge (θ̇ = ω_y of the bob); the exact VJP in act_backward."""

    def __init__(self, gain):
        super().__init__()
        self.gain = gain
        self.calls = 0

    def act(self, step, state, controls):
        controls[0] = -self.gain * state.angular_velocity[1, 1]

    def act_backward(self, step, state, control_gradient, state_gradient):
        self.calls += 1
        state_gradient[12 + 9 + 1] += -self.gain * control_gradient[0]


def test_closed_loop_rollout_with_python_controller(motor_pendulum):
    model = tighten(motor_pendulum.model)
    params, steps = motor_pendulum.params, 30
    controller = DampingController(2.0)
    rollout = dp.Rollout(model, params)
    rollout.run(motor_pendulum.state, controller, steps)
    controls = rollout.controls()
    assert controls.shape == (steps, 1) and np.abs(controls).max() > 0
    open_loop = dp.Rollout(model, params)
    open_loop.run(motor_pendulum.state, controls)
    assert np.array_equal(open_loop.states(), rollout.states())
    # L = x-position of the bob at T; dL/dω_y(0) through physics and controller vs finite differences.
    loss_gradient = np.zeros((steps + 1, 24))
    loss_gradient[steps, 12] = 1.0
    analytic = rollout.backward(loss_gradient).initial_state[12 + 9 + 1]
    assert controller.calls == steps

    def final_x(omega):
        state = motor_pendulum.state.copy()
        # Rotating about the hinge: ω_y and the matching velocity of the bob's centre.
        state.angular_velocity[1] = [0, omega, 0]
        arm = state.position[1] - np.array([0, 0, 1.0])
        state.linear_velocity[1] = np.cross([0, omega, 0], arm)
        trial = dp.Rollout(model, params)
        trial.run(state, DampingController(2.0), steps)
        return trial.final_state().position[1, 0]

    epsilon = 1e-6
    numeric = (final_x(epsilon) - final_x(-epsilon)) / (2 * epsilon)
    arm = motor_pendulum.state.position[1] - np.array([0, 0, 1.0])
    # The perturbation moves ω_y and v = ω × arm together: the same combination analytically.
    gradients = rollout.backward(loss_gradient).initial_state
    analytic = gradients[12 + 10] + np.dot(gradients[12 + 6:12 + 9], np.cross([0, 1, 0], arm))
    assert analytic == pytest.approx(numeric, rel=1e-5)


def test_cpp_gradient_check_binding():
    scene = dp.load_scene(SCENES / "pendulum.json")
    report = dp.check_gradients(scene, None, dp.GradientCheckOptions(steps=20, tolerance=1e-5))
    assert report.passed and report.entries and report.worst_relative_error < 1e-5
    assert all(abs(e.analytic - e.numeric) <= 1e-5 * max(1, abs(e.numeric)) for e in report.entries)


def test_convex_formulation_from_python():
    """set_formulation adds the compliance slices to θ; the convex step of a ball landing on
    the ground converges, and its gradients (compliance included) match central differences."""
    scene = dp.load_scene(SCENES / "bouncing_ball.json")
    count = scene.model.param_count()
    dp.set_formulation(scene, dp.Formulation.Convex)
    assert scene.model.solver.formulation == dp.Formulation.Convex
    assert scene.model.param_count() == count + 8
    assert scene.params.get(scene.model, "compliance/contact/time_constant")[0] == pytest.approx(2e-5)
    report = dp.check_gradients(scene, None, dp.GradientCheckOptions(steps=30, tolerance=1e-5))
    assert report.passed, report.worst_relative_error
    assert any(e.name.startswith("compliance/contact/time_constant") for e in report.entries)
    builder = dp.ModelBuilder()
    builder.solver.formulation = dp.Formulation.Convex
    with pytest.raises(dp.Error, match="unknown row class 'floor'"):
        builder.set_compliance("floor", 1e-3)


def test_cylinder_from_python_and_mesh_shapes_read_back():
    """A cylinder built from Python lies on the ground at its radius; a scene's convex meshes
    read back as ShapeType.ConvexMesh; the hard contact's friction follows the slip by default."""
    builder = dp.ModelBuilder()
    builder.dt = 0.01
    assert builder.solver.slip_aligned_friction
    builder.add_ground_plane()
    can = dp.ShapeSpec(type="cylinder", radius=0.05, half_length=0.15)
    half_turn = math.sqrt(0.5)
    builder.add_body(dp.BodySpec(name="can", position=[0, 0, 0.2], orientation=[half_turn, 0, half_turn, 0],
                                 density=700.0, shapes=[can]))
    scene = builder.build()
    assert scene.model.shapes[1].type == dp.ShapeType.Cylinder
    simulator = dp.Simulator(scene.model, scene.params, scene.state)
    for _ in range(200):
        assert simulator.step().converged
    assert simulator.state.position[1][2] == pytest.approx(0.05, abs=1e-3)
    meshes = dp.load_scene(SCENES / "mesh_shapes.json")
    assert {shape.type for shape in meshes.model.shapes} >= {dp.ShapeType.ConvexMesh, dp.ShapeType.Box}


def test_save_scene_round_trips_a_stepped_scene_bit_for_bit(tmp_path):
    # Written after 30 steps and a change of θ: the file loads back to the same θ, state and
    # controls (==), and both scenes step identically (docs/scene-format.md, "Writing scenes").
    scene = dp.load_scene(SCENES / "servo_arm.json")
    simulator = dp.Simulator(scene.model, scene.params, scene.state)
    for _ in range(30):
        simulator.step(scene.controls)
    state = simulator.state.copy()
    state.time = 0.0
    scene.state = state
    scene.params.values[scene.model.layout.gravity + 2] = -9.5
    dp.save_scene(scene, tmp_path / "arm.json")
    reloaded = dp.load_scene(tmp_path / "arm.json")
    assert np.array_equal(reloaded.params.values, scene.params.values)
    assert np.array_equal(reloaded.state.to_vector(), scene.state.to_vector())
    assert np.array_equal(reloaded.controls, scene.controls)
    assert dp.scene_json_text(reloaded) == (tmp_path / "arm.json").read_text()
    first, _ = dp.Simulator(scene.model, scene.params, scene.state).run(50)
    second, _ = dp.Simulator(reloaded.model, reloaded.params, reloaded.state).run(50)
    assert np.array_equal(first, second)
    state.time = 0.5
    scene.state = state
    with pytest.raises(dp.Error, match=r"later.json: cannot write the scene: state: time is 0.5 s"):
        dp.save_scene(scene, tmp_path / "later.json")
    assert not (tmp_path / "later.json").exists()


def test_trajectory_recorder(tmp_path, falling_ball):
    simulator = dp.Simulator(falling_ball.model, falling_ball.params, falling_ball.state)
    recorder = dp.TrajectoryRecorder(falling_ball.model)
    for _ in range(3):
        status = simulator.step()
        recorder.record(simulator.state, simulator.contacts(), status)
    recorder.write(tmp_path / "fall.json")
    import json
    data = json.loads((tmp_path / "fall.json").read_text())
    assert recorder.frame_count() == 3 and data["bodies"] == ["ball"] and len(data["frames"]) == 3
    assert "model" not in data


def test_trajectory_recorder_with_params_writes_what_the_viewer_draws(tmp_path, falling_ball):
    simulator = dp.Simulator(falling_ball.model, falling_ball.params, falling_ball.state)
    recorder = dp.TrajectoryRecorder(falling_ball.model, falling_ball.params)
    recorder.record(simulator.state)
    recorder.set_loss_curve([3.0, 2.0, 0.5])
    recorder.write(str(tmp_path / "fall.json"))
    import json
    data = json.loads((tmp_path / "fall.json").read_text())
    assert data["loss"] == [3.0, 2.0, 0.5]
    shapes = [shape["type"] for body in data["model"]["bodies"] for shape in body.get("shapes", [])]
    assert "sphere" in shapes
    with pytest.raises(dp.Error, match="loss"):
        recorder.set_loss_curve([1.0, float("nan")])


def test_joint_coordinates(motor_pendulum):
    assert dp.joint_position(motor_pendulum.model, motor_pendulum.state, 0) == pytest.approx(0.0, abs=1e-12)
    simulator = dp.Simulator(motor_pendulum.model, motor_pendulum.params, motor_pendulum.state)
    simulator.step(np.array([0.0]))
    # Released at 0.3 rad from upright, it starts falling towards +θ (gravity torque m g l sin θ).
    assert dp.joint_velocity(motor_pendulum.model, simulator.state, 0) > 0
    assert math.isfinite(dp.potential_energy(motor_pendulum.model, motor_pendulum.params, simulator.state))


def test_planar_joint_from_python():
    """A box on a planar joint in the xz plane (axis3 given with MJCF's sense), pushed along z by
    a motor on dof 1 without gravity: the coordinate follows ½ (F/m) t (t + h)."""
    builder = dp.ModelBuilder()
    builder.dt = 0.01
    builder.gravity = (0, 0, 0)
    builder.add_body(name="box", position=(0, 0, 1), mass=2.0, shapes=[dp.ShapeSpec(type="box", half_extents=(0.1, 0.1, 0.1))])
    builder.add_joint(name="plane", type="planar", child="box", anchor=(0, 0, 1), axis=(0, 1, 0), axis2=(1, 0, 0),
                      axis3=(0, 0, 1))
    builder.add_actuator(name="lift", type="motor", joint="plane", dof=1)
    scene = builder.build()
    assert scene.model.joints[0].type == dp.JointType.Planar
    assert dp.joint_dof_count(dp.JointType.Planar) == 3
    assert tuple(scene.model.joints[0].axis3_parent) == pytest.approx((0, 0, 1))
    simulator = dp.Simulator(scene.model, scene.params, scene.state)
    simulator.run(100, np.array([3.0]))
    final = simulator.state
    t, h = 1.0, 0.01
    assert dp.joint_position(scene.model, final, 0, 1) == pytest.approx(0.5 * 1.5 * t * (t + h), rel=1e-9)
    assert dp.joint_position(scene.model, final, 0, 0) == pytest.approx(0.0, abs=1e-12)


def test_robot_files_load_with_their_names_and_warnings():
    arm = dp.load_scene(SCENES.parent / "robots" / "two_link_arm.urdf")
    assert arm.model.body_count() >= 3
    features = dp.load_scene(SCENES.parent.parent / "tests" / "data" / "robots" / "features.urdf")
    assert any("features.urdf:" in w and "<visual> ignored" in w for w in features.warnings)


def test_urdf_package_path_and_self_collision_keywords(tmp_path):
    # A package:// mesh is found through package_path (docs/robot-formats.md), else skipped
    # with a warning naming the package; self_collision is accepted for URDF files.
    package = tmp_path / "packages" / "demo_meshes"
    package.mkdir(parents=True)
    (package / "tet.obj").write_text("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\n")
    urdf = tmp_path / "robot" / "r.urdf"
    urdf.parent.mkdir()
    urdf.write_text(
        '<robot name="r"><link name="body"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
        '<collision><geometry><mesh filename="package://demo_meshes/tet.obj"/></geometry></collision>'
        "</link></robot>"
    )
    missing = dp.load_scene(urdf)
    assert len(missing.model.shapes) == 0
    assert any("package 'demo_meshes' not found" in w for w in missing.warnings)
    found = dp.load_scene(urdf, package_path=[tmp_path / "packages"], self_collision=True)
    assert len(found.model.shapes) == 1 and not found.warnings


def test_reduced_coordinates_from_a_scene_file():
    # The 10-link chain in joint coordinates: the joints hold exactly, its gradients agree with
    # central differences, and without parameter gradients dL/dx_0 and dL/du_t are unchanged.
    scene = dp.load_scene(SCENES / "chain10_reduced.json")
    assert scene.model.solver.coordinates == dp.Coordinates.Reduced
    report = dp.check_gradients(scene, None, dp.GradientCheckOptions(steps=30, tolerance=1e-5, param_epsilon=1e-2))
    assert report.passed and len(report.entries) > 100
    trajectory, _ = dp.Simulator(scene.model, scene.params, scene.state).run(500)
    # link0's centre of mass stays 0.1 m from the pivot at (0, 0, 2.5): the hinge holds.
    assert np.allclose(np.linalg.norm(trajectory[:, 13:16] - [0, 0, 2.5], axis=1), 0.1, atol=1e-12)
    weights = np.zeros((41, 12 * 11))
    weights[40, 12 * 10 + 2] = 1.0
    full = dp.Rollout(scene.model, scene.params)
    partial_options = dp.RolloutOptions()
    partial_options.parameter_gradients = False
    partial = dp.Rollout(scene.model, scene.params, partial_options)
    for rollout in (full, partial):
        rollout.run(scene.state, steps=40)
    a, b = full.backward(weights), partial.backward(weights)
    assert len(b.params) == 0 and np.array_equal(a.initial_state, b.initial_state)


def test_kinematic_platform_carries_a_box():
    """A kinematic platform driven between steps (pose and velocity written into the state)
    carries a box by friction; the platform is where the program put it; its x0 gradient is
    the closed form of a box sliding at μg on it (dx/dv_platform = h per step of sliding)."""
    builder = dp.ModelBuilder()
    builder.dt = 1e-3
    builder.add_body(name="platform", type="kinematic", position=(0, 0, -0.05), friction=1.0,
                     shapes=[dp.ShapeSpec(type="box", half_extents=(3, 3, 0.05))])
    builder.add_body(name="box", position=(0, 0, 0.1), mass=1.0, friction=1.0,
                     shapes=[dp.ShapeSpec(type="box", half_extents=(0.1, 0.1, 0.1))])
    scene = builder.build()
    platform, box = scene.model.body_index("platform"), scene.model.body_index("box")
    assert scene.model.bodies[platform].type == dp.BodyType.Kinematic
    assert "kinematic" in repr(scene.model.bodies[platform])
    assert "body/platform/mass" not in scene.model.layout.names()
    sim = dp.Simulator(scene.model, scene.params, scene.state)
    world_sim = dp.WorldSimulator(dp.World(scene))  # driven the same way: the same steps, bit for bit
    amplitude, omega = 0.05, 2 * np.pi * 2.0
    for t in range(1000):
        s = sim.state
        s.position[platform, 0] = amplitude * np.sin(omega * t * builder.dt)
        s.linear_velocity[platform, 0] = amplitude * omega * np.cos(omega * t * builder.dt)
        sim.state = s
        sim.step()
        expected = s.position[platform, 0] + builder.dt * s.linear_velocity[platform, 0]
        assert sim.state.position[platform, 0] == expected
        world_sim.set_state(s.to_vector())
        world_sim.step()
        assert np.array_equal(world_sim.state(), sim.state.to_vector())
    final = sim.state
    assert final.linear_velocity[box, 0] == pytest.approx(final.linear_velocity[platform, 0], abs=1e-6)
    bad = sim.state
    bad.position[platform, 1] = math.nan
    with pytest.raises(dp.Error, match="body 'platform': position is not finite"):
        sim.state = bad
    with pytest.raises(dp.Error, match="body 'platform': position is not finite"):
        world_sim.set_state(bad.to_vector())

    # Gradients with respect to the platform's x0, against closed forms. Sliding (a box at rest
    # on a platform at 1 m/s, μ = 1, 50 steps of 1 ms, sticking only at 0.1 s): v_box(T) = T h μ g
    # whatever the speeds, so dv_box(T)/dv_platform = 0 and dv_box(T)/dv_box = 1. Sticking (the
    # box starts at the platform's speed): friction holds it to the platform, dv_box(T)/dv_platform
    # = 1 and dv_box(T)/dv_box = 0.
    def platform_scene(box_speed):
        return dp.parse_scene("""{"dt": 0.001, "bodies": [
            {"name": "platform", "type": "kinematic", "position": [0, 0, -0.05], "linear_velocity": [1, 0, 0],
             "friction": 1.0, "shapes": [{"type": "box", "half_extents": [3, 3, 0.05]}]},
            {"name": "box", "position": [0, 0, 0.1], "mass": 1.0, "friction": 1.0, "linear_velocity": [%r, 0, 0],
             "shapes": [{"type": "box", "half_extents": [0.1, 0.1, 0.1]}]}]}""" % box_speed, "platform.json")

    for box_speed, slope_platform, slope_box in ((0.0, 0.0, 1.0), (1.0, 1.0, 0.0)):
        moving = platform_scene(box_speed)
        rollout = dp.Rollout(moving.model, moving.params)
        rollout.run(moving.state, steps=50)
        final_speed = rollout.final_state().linear_velocity[box, 0]
        assert final_speed == pytest.approx(50 * 1e-3 * G if box_speed == 0 else 1.0, rel=1e-7)
        loss_gradient = np.zeros((51, 12 * moving.model.body_count()))
        loss_gradient[-1, 12 * box + 6] = 1.0  # L = the box's final x velocity
        g = rollout.backward(loss_gradient)
        assert g.initial_state[12 * platform + 6] == pytest.approx(slope_platform, abs=1e-6)
        assert g.initial_state[12 * box + 6] == pytest.approx(slope_box, abs=1e-6)
        assert "x0/platform" not in g.not_differentiable


def test_equalities_from_python():
    """Soft equality constraints built, listed and differentiated from Python: a 2 kg ball held
    at its centre by a connect settles g(ζτ)² below the anchor, and d(z_T)/dτ there is the
    closed form −2gζ²τ; a weld lists its six rows' parameters; an unknown body is refused."""
    g, tau, zeta = 9.81, 0.05, 1.0
    builder = dp.ModelBuilder()
    builder.dt = 1e-3
    builder.gravity = (0, 0, -g)
    builder.solver.formulation = dp.Formulation.Convex
    builder.add_body(name="weight", position=(0.3, -0.2, 1.0), mass=2.0,
                     shapes=[dp.ShapeSpec(type="sphere", radius=0.05)])
    builder.add_equality(name="hold", type="connect", body_b="weight", anchor=(0.3, -0.2, 1.0),
                         time_constant=tau, damping_ratio=zeta)
    scene = builder.build()
    (hold,) = scene.model.equalities
    assert hold.name == "hold" and hold.type == dp.EqualityType.Connect and repr(hold) == "<Equality 'hold' (connect)>"
    assert scene.model.bodies[hold.body_b].name == "weight"
    assert "equality/hold/time_constant" in scene.model.layout.names()
    steps = 4000
    rollout = dp.Rollout(scene.model, scene.params)
    rollout.run(scene.state, steps=steps)
    weight = scene.model.body_index("weight")
    sag = 1.0 - rollout.final_state().position[weight, 2]
    assert sag == pytest.approx(g * (zeta * tau) ** 2, rel=1e-6)

    def z_final(t, state, gradient):
        if t == steps:
            gradient[12 * weight + 2] += 1.0  # dL/dz of the weight at T (12 per body: p, θ, v, ω)
    gradients = rollout.backward(z_final)
    assert gradients.param(scene.model, "equality/hold/time_constant")[0] == pytest.approx(-2 * g * zeta**2 * tau, rel=1e-6)

    welded = dp.ModelBuilder()
    welded.solver.formulation = dp.Formulation.Convex
    welded.add_body(name="a", position=(0, 0, 1), mass=1.0, shapes=[dp.ShapeSpec(type="box", half_extents=(0.1, 0.1, 0.1))])
    welded.add_body(name="b", position=(0.3, 0, 1), mass=1.0, shapes=[dp.ShapeSpec(type="box", half_extents=(0.1, 0.1, 0.1))])
    welded.add_equality(dp.EqualitySpec(name="glue", type=dp.EqualityType.Weld, body_a="a", body_b="b", anchor=(0.15, 0, 1)))
    (glue,) = welded.build().model.equalities
    assert glue.type == dp.EqualityType.Weld and np.allclose(glue.relative, (1, 0, 0, 0))
    broken = dp.ModelBuilder()
    broken.solver.formulation = dp.Formulation.Convex
    broken.add_equality(name="nowhere", body_b="ghost", anchor=(0, 0, 0))
    with pytest.raises(dp.Error, match="ghost"):
        broken.build()
