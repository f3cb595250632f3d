"""The camera from Python (python/src/bind_camera.cpp): World.cameras and their looks,
WorldCamera's frames (any leading axes) and its backward pass (the colours' gradients against
central differences; the rest is checked through diffphys.torch.render in test_torch_render.py),
and bad input refused naming the item and the value. Helpers shared with test_torch_render.py:
the pendulum-cart scene with a small camera, and a few of its states."""

import json
import math

import numpy as np
import pytest

import diffphys as dp
from conftest import SCENES

CART = SCENES / "pendulum_cart.json"


def cart_world(width=36, height=12, **camera):
    """The pendulum-cart scene with its camera made small (gradcheck takes the whole Jacobian)
    and raised above the cart: seen from below, the pole's intersection with the cart's bottom
    face would be a visible interpenetration curve, where the image jumps (docs/camera.md)."""
    scene = json.loads(CART.read_text())
    side = scene["cameras"][0]
    side.update({"width": width, "height": height, "position": [0.3, -2.6, 1.25], "look_at": [0, 0, 0.85]})
    side.update(camera)
    return dp.parse_world(json.dumps(scene), "pendulum_cart.json")


def moving_states(world, count):
    """`count` states of a swinging pendulum-cart (a rollout under a varying push)."""
    rollout = dp.WorldRollout(world)
    controls = 3.0 * np.sin(np.arange(count - 1) * 0.7).reshape(-1, 1)
    rollout.run(world.initial_state(), controls)
    return rollout.states()


def test_world_cameras_and_frames():
    world = dp.load_world(CART)
    (side,) = world.cameras
    assert (side.name, side.width, side.height, side.body) == ("side", 288, 96, -1)
    assert np.allclose(side.position, [0, -2.6, 0.9]) and math.isclose(side.vertical_fov, math.radians(30))
    assert np.allclose(side.orientation, dp.camera_look_at([0, -2.6, 0.9], [0, 0, 0.9]))
    side.width = 5  # a copy: the world's camera is unchanged
    assert world.cameras[0].width == 288
    look = world.camera_appearance("side")
    model = world.rigid.model
    assert np.allclose(look.background, [0.75, 0.85, 0.95])
    assert np.allclose(look.shapes[[s.name for s in model.shapes].index("pole/0")].colour, [0.2, 0.4, 0.8])

    camera = dp.WorldCamera(world, "side")
    states = moving_states(world, 6)
    colour, depth = camera.render(states.reshape(2, 3, -1))
    assert colour.shape == (2, 3, 96, 288, 3) and depth.shape == (2, 3, 96, 288)
    one_colour, one_depth = camera.render(states[4])
    assert np.array_equal(one_colour, colour[1, 1]) and np.array_equal(one_depth, depth[1, 1])
    # The cart (red) is seen where the camera looks: the image centre's row band holds red pixels.
    red = colour[0, 0, ..., 0] > 2 * colour[0, 0, ..., 2] + 0.1
    assert red.sum() > 100 and red[:, 120:168].any()


def test_numpy_backward_colour_gradients_match_central_differences():
    """dL/d(shape colours) from WorldCamera.backward (torch.render does not differentiate looks):
    the image is linear in each colour, so central differences are exact up to rounding."""
    world = cart_world()
    camera = dp.WorldCamera(world, "side")
    x = moving_states(world, 3)[2]
    rng = np.random.default_rng(3)
    weights = rng.uniform(-1, 1, (camera.height, camera.width, 3))
    gradients = camera.backward(x, colour_gradient=weights)
    look = camera.appearance
    h = 1e-4
    for shape in range(len(look.shapes)):
        for channel in range(3):
            values = []
            for sign in (1, -1):
                moved = dp.Appearance(look)
                shapes = moved.shapes
                colour = np.array(shapes[shape].colour)
                colour[channel] += sign * h
                shapes[shape].colour = colour
                moved.shapes = shapes
                camera.appearance = moved
                values.append((camera.render(x)[0] * weights).sum())
            camera.appearance = look
            numeric = (values[0] - values[1]) / (2 * h)
            assert abs(numeric) > 1e-4  # every shape is in view
            assert gradients["colours"][shape, channel] == pytest.approx(numeric, rel=1e-9, abs=1e-9)


def test_coupled_world_gradients_sit_in_the_rigid_slices():
    """A rigid + soft world (the cloth on the pendulum, with a camera added): the camera draws the
    rigid part, so dL/dx has the world's tangent size with the soft rows zero, dL/dθ the world's
    parameter count with the soft slices zero; the pendulum's row is checked against a central
    difference of its position, through the world's flat state (rigid slices first)."""
    path = SCENES.parent / "soft" / "cloth_on_pendulum.json"
    scene = json.loads(path.read_text())
    scene["cameras"] = [{"name": "front", "position": [0.2, -2.0, 1.0], "look_at": [0.2, 0, 1.0], "fov_deg": 40,
                         "width": 32, "height": 24, "background": [0.2, 0.3, 0.4]}]
    world = dp.parse_world(json.dumps(scene), "cloth_on_pendulum.json", str(path.parent))
    layout = world.layout
    camera = dp.WorldCamera(world, "front")
    x = world.initial_state()
    weights = np.random.default_rng(2).uniform(-1, 1, (24, 32, 3))
    gradients = camera.backward(x, colour_gradient=weights)
    assert gradients["state"].shape == (layout.tangent_size,) and gradients["params"].shape == (layout.param_count,)
    assert not gradients["state"][layout.soft_tangent_offset:].any()
    assert not gradients["params"][layout.soft_param_offset:].any()
    pendulum = layout.state_slice("body/pendulum").offset
    tangent = layout.tangent_slice("body/pendulum").offset
    h = 1e-7
    rounding = np.finfo(float).eps * np.abs(weights * camera.render(x)[0]).sum() / (2 * h)  # ~4e-7
    for axis in range(3):
        values = []
        for sign in (1, -1):
            moved = x.copy()
            moved[pendulum + axis] += sign * h
            values.append((camera.render(moved)[0] * weights).sum())
        numeric = (values[0] - values[1]) / (2 * h)
        assert abs(numeric) > 1e-2
        assert gradients["state"][tangent + axis] == pytest.approx(numeric, rel=1e-6, abs=3 * rounding)


def test_world_camera_refuses_bad_input_naming_the_item_and_value():
    world = cart_world()
    x = world.initial_state()
    with pytest.raises(dp.Error, match=r"no camera 'top' \(its cameras: 'side'\)"):
        dp.WorldCamera(world, "top")
    camera = dp.WorldCamera(world, "side")
    with pytest.raises(dp.Error, match=r"WorldCamera.render: states must have shape \(\.\.\., state_size = 39\) "
                                       r"for world 'pendulum_cart', got \(38,\)"):
        camera.render(x[:-1])
    with pytest.raises(dp.Error, match=r"WorldCamera.render: params must have shape \(41,\) or \(2, 41\) \(one θ per "
                                       r"frame\), got \(3, 41\)"):
        camera.render(np.stack([x, x]), np.zeros((3, 41)))
    with pytest.raises(dp.Error, match=r"colour_gradient must have shape \(\.\.\., H, W, 3\) = \(12, 36, 3\), "
                                       r"got \(12, 36\)"):
        camera.backward(x, colour_gradient=np.zeros((12, 36)))
    broken = x.copy()
    broken[13 + 3] = 2.0  # the cart's quaternion, not unit (WorldCamera takes states as they are)
    with pytest.raises(dp.Error, match=r"body 'cart': orientation is not a unit quaternion \(norm² 4\)"):
        camera.render(broken)
