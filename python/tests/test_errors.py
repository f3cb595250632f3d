"""Bad input from Python: diffphys.Error (a ValueError) with the C++ message naming the item
and the value, TypeError for unknown keywords — never a crash or silent garbage."""

import numpy as np
import pytest
import torch

import diffphys as dp
from diffphys import torch as dpt
from conftest import SCENES


def test_error_is_a_value_error_with_the_cpp_message():
    assert issubclass(dp.Error, ValueError) and dp.Error.__module__ == "diffphys"
    builder = dp.ModelBuilder()
    builder.add_body(name="ball", mass=-1.0, shapes=[dp.ShapeSpec(type="sphere", radius=0.1)])
    with pytest.raises(dp.Error, match=r"^body 'ball': mass must be positive, got -1$"):
        builder.build()


def test_unknown_names(falling_ball):
    model, params = falling_ball.model, falling_ball.params
    with pytest.raises(dp.Error, match=r"^unknown parameter 'body/ball/mas' \(did you mean 'body/ball/mass'\?\)$"):
        params.slice(model, "body/ball/mas")
    with pytest.raises(dp.Error, match="^unknown parameter 'nope'$"):
        params.set(model, "nope", 1.0)
    # layout.find raises too (it returned -1, and slices[-1] silently picked the last slice).
    assert model.layout.slices[model.layout.find("body/ball/mass")].name == "body/ball/mass"
    with pytest.raises(dp.Error, match=r"^unknown parameter 'body/ball/mas' \(did you mean 'body/ball/mass'\?\)$"):
        model.layout.find("body/ball/mas")
    with pytest.raises(dp.Error, match=r"^unknown body 'balloon'$"):
        model.body_index("balloon")
    with pytest.raises(dp.Error, match=r"^unknown body 'bal' \(did you mean 'ball'\?\)$"):
        model.body_index("bal")
    with pytest.raises(TypeError, match="BodySpec has no field 'masss'"):
        dp.BodySpec(masss=1.0)
    with pytest.raises(TypeError, match="JointSpec has no field 'axes'"):
        dp.ModelBuilder().add_joint(name="j", axes=(0, 0, 1))
    with pytest.raises(dp.Error, match="unknown shape type 'sphear' \\(known: sphere, box, capsule, cylinder, plane, convexmesh, ellipsoid\\)"):
        dp.ShapeSpec(type="sphear")
    rollout = dp.Rollout(model, params)
    rollout.run(falling_ball.state, steps=2)
    with pytest.raises(dp.Error, match=r"unknown parameter 'gravity/x' \(did you mean 'gravity'\?\)"):
        rollout.backward(np.zeros((3, 24))).param(model, "gravity/x")


def test_invalid_parameter_values(falling_ball):
    model, params = falling_ball.model, falling_ball.params.copy()
    params.set(model, "body/ball/mass", -2.0)
    with pytest.raises(dp.Error, match="body/ball/mass"):
        dp.validate_params(model, params)
    with pytest.raises(dp.Error, match="body/ball/mass"):
        dp.Rollout(model, params)
    with pytest.raises(dp.Error, match="gradient_decay must lie in \\(0, 1\\], got 2"):
        dp.Rollout(model, falling_ball.params, dp.RolloutOptions(gradient_decay=2.0))


def test_wrong_array_shapes(falling_ball, motor_pendulum):
    model, params, state = falling_ball.model, falling_ball.params, falling_ball.state
    with pytest.raises(dp.Error, match=r"State.position: expected an array of shape \(2, 3\), got \(3, 3\)"):
        state.position = np.zeros((3, 3))
    with pytest.raises(dp.Error, match=r"Params.values: expected 20 values, got an array of shape \(3,\)"):
        params.values = np.zeros(3)
    with pytest.raises(dp.Error, match=r"parameter 'gravity': expected 3 values"):
        params.set(model, "gravity", [1.0, 2.0])
    with pytest.raises(dp.Error, match="expected 3 numbers, got an array of shape \\(2,\\)"):
        dp.BodySpec(position=(1, 2))
    rollout = dp.Rollout(model, params)
    rollout.run(state, steps=4)
    with pytest.raises(dp.Error, match=r"must have shape \(T \+ 1, 12 nbody\) = \(5, 24\), got \(4, 24\)"):
        rollout.backward(np.zeros((4, 24)))
    with pytest.raises(dp.Error, match="loss gradient at step 4: expected 24 values"):
        rollout.backward(lambda t, x, g: np.zeros(3))
    pendulum = dp.Rollout(motor_pendulum.model, motor_pendulum.params)
    with pytest.raises(dp.Error, match=r"controls must have shape \(steps, nactuator\) = \(3, 1\), got \(3, 2\)"):
        pendulum.run(motor_pendulum.state, np.zeros((3, 2)))
    with pytest.raises(dp.Error, match="give steps"):
        pendulum.run(motor_pendulum.state)
    with pytest.raises(dp.Error, match="13 values per body"):
        dp.State.from_vector(np.zeros(14))
    with pytest.raises(dp.Error, match="x0 must have shape \\(26,\\)"):
        dpt.rollout(model, torch.zeros(25), torch.zeros(3, 0), dpt.params_tensor(params))
    with pytest.raises(dp.Error, match="u must have shape \\(1,\\)"):
        dpt.step(motor_pendulum.model, dpt.state_tensor(motor_pendulum.state), torch.zeros(2),
                 dpt.params_tensor(motor_pendulum.params))


def test_invalid_state_and_scene_files(tmp_path, falling_ball):
    state = falling_ball.state.copy()
    state.orientation[1] = [2.0, 0, 0, 0]
    with pytest.raises(dp.Error, match="body 'ball': orientation is not a unit quaternion"):
        dp.validate_state(falling_ball.model, state)
    with pytest.raises(dp.Error, match="body 'ball': orientation is not a unit quaternion"):
        dp.Rollout(falling_ball.model, falling_ball.params).run(state, steps=1)
    broken = tmp_path / "broken.json"
    broken.write_text('{"bodies": [{"name": "b", "mass": -3, "shapes": [{"type": "sphere", "radius": 0.1}]}]}')
    with pytest.raises(dp.Error, match="broken.json.*mass.*-3"):
        dp.load_scene(broken)
    with pytest.raises(dp.Error, match="missing.json"):
        dp.load_scene(tmp_path / "missing.json")
    with pytest.raises(dp.Error, match="inline"):
        dp.parse_scene('{"dt": -1}', "inline")


class FailingController(dp.Controller):
    def act(self, step, state, controls):
        if step == 2:
            raise RuntimeError("controller broke at step 2")
        controls[0] = 0.0


class NonFiniteController(dp.Controller):
    def act(self, step, state, controls):
        return np.array([np.nan])


class NoBackwardController(dp.Controller):
    def act(self, step, state, controls):
        return np.zeros(1)


def test_controller_errors_propagate(motor_pendulum):
    rollout = dp.Rollout(motor_pendulum.model, motor_pendulum.params)
    with pytest.raises(RuntimeError, match="controller broke at step 2"):
        rollout.run(motor_pendulum.state, FailingController(), 5)
    with pytest.raises(dp.Error, match=r"non-finite control nan for 'actuator/motor'\[0\] at step 0"):
        rollout.run(motor_pendulum.state, NonFiniteController(), 5)
    rollout.run(motor_pendulum.state, NoBackwardController(), 3)
    with pytest.raises(dp.Error, match="act_backward"):
        rollout.backward(np.zeros((4, 24)))


def test_a_slice_of_a_parameter_vector_of_the_wrong_length_is_refused():
    scene = dp.load_scene(str(SCENES / "bouncing_ball.json"))
    with pytest.raises(dp.Error, match="the parameter vector has 0 values, the model 'bouncing ball' expects"):
        dp.Params().slice(scene.model, "gravity")
