"""diffphys.torch.render (python/diffphys/torch.py): gradients against central differences
(torch.autograd.gradcheck in float64, the whole Jacobian of a small image; a texture's texels),
render(world_rollout(...))
against central differences of the whole pipeline, a sphere's image area and centroid against
the pinhole camera's closed forms, the same bits on 1 and 2 threads, and bad input refused
naming the item and the value."""

import json
import math

import numpy as np
import pytest
import torch

import diffphys as dp
from diffphys import torch as dpt
from test_camera import CART, cart_world, moving_states

def test_render_gradcheck_states_params_camera_and_colours():
    """The whole Jacobian of two frames (36 × 12 colour and depth values each) with respect to both
    states (every entry, quaternions included: they are normalised inside), θ, the camera's
    position, orientation and field of view, and the shapes' colours (the image is linear in
    them). Steps of 1e-7 (m, rad): a sample moves ~1e-6 px,
    far from the coverage ramp's joints (a chance crossing of one, a kink of a C¹ function, would
    cost O(eps · (f/z)²) ≈ 1e-5 on its entries; none happens here), and the rounding is
    ~ε · 30 m / eps ≈ 7e-8. Allowed 1e-6 + 1e-6 |numeric|; measured 4.7e-7 at worst, on
    orientation entries of ~450."""
    world = cart_world()
    states = torch.from_numpy(moving_states(world, 8)[[3, 7]]).requires_grad_()
    params = torch.tensor(world.default_params(), requires_grad=True)
    side = world.cameras[0]
    position = torch.tensor(side.position, requires_grad=True)
    orientation = torch.tensor(side.orientation, requires_grad=True)
    fov = torch.tensor(side.vertical_fov, dtype=torch.float64, requires_grad=True)
    colours = torch.tensor(np.array([look.colour for look in world.camera_appearance("side").shapes]),
                           requires_grad=True)

    def frames(x, theta, p, q, angle, albedos):
        return dpt.render(world, x, theta, "side", camera_position=p, camera_orientation=q, vertical_fov=angle,
                          colours=albedos)

    assert torch.autograd.gradcheck(frames, (states, params, position, orientation, fov, colours), eps=1e-7,
                                    atol=1e-6, rtol=1e-6)


def test_render_gradcheck_camera_carried_by_the_pole():
    """A camera riding the pole (its pose X_BC in the pole's frame): the whole Jacobian of two
    frames with respect to both states (the pole's pose moves the camera too) and the camera's
    body-frame position, orientation and field of view; steps and allowance as above."""
    scene = json.loads(CART.read_text())
    # On the swinging pole (so that R_WB turns the camera's gradients), looking down on the cart
    # and the pole with no horizon in view: the ground's depth at grazing incidence (~far_depth)
    # would put rounding noise of ~ε · 100 m / eps ≈ 5e-6 into the differences.
    scene["cameras"].append({"name": "rider", "body": "pole", "position": [0.1, -0.6, 1.2],
                             "look_at": [0, 0, 0.1], "fov_deg": 50, "width": 36, "height": 24,
                             "colours": {"pole": [0.2, 0.4, 0.8]}})
    world = dp.parse_world(json.dumps(scene), "pendulum_cart.json")
    states = torch.from_numpy(moving_states(world, 8)[[3, 7]]).requires_grad_()
    rider = world.cameras[1]
    assert rider.body == world.rigid.model.body_index("pole")
    position = torch.tensor(rider.position, requires_grad=True)
    orientation = torch.tensor(rider.orientation, requires_grad=True)
    fov = torch.tensor(rider.vertical_fov, dtype=torch.float64, requires_grad=True)
    params = torch.tensor(world.default_params())

    def frames(x, p, q, angle):
        return dpt.render(world, x, params, "rider", camera_position=p, camera_orientation=q, vertical_fov=angle)

    _, depth = frames(states, position, orientation, fov)
    assert (depth < 1.3).sum() > 40  # the cart and the pole fill part of the view (the ground is farther)
    assert torch.autograd.gradcheck(frames, (states, position, orientation, fov), eps=1e-7, atol=1e-6, rtol=1e-6)


def test_render_of_world_rollout_backpropagates_into_x0_controls_and_params():
    """loss(render(world_rollout(x0, u, θ))) against central differences of the whole pipeline:
    every dynamic entry of x0, every control and the θ entries that move the frames (sizes through
    the camera and the dynamics, masses, gravity, the joints' damping)."""
    world = cart_world()
    steps = 8
    x0 = torch.from_numpy(moving_states(world, 4)[3])
    rng = np.random.default_rng(11)
    controls = torch.from_numpy(rng.uniform(-4, 4, (steps, 1)))
    theta = torch.tensor(world.default_params())
    theta[world.layout.param_slice("joint/hinge/damping").range] = 0.02  # off its bound 0: differences both ways
    names = ["gravity", "body/cart/mass", "body/pole/mass", "shape/cart/0/half_extents", "shape/pole/0/radius",
             "shape/pole/0/half_length", "joint/hinge/damping"]
    checked = np.concatenate([np.arange(s.offset, s.offset + s.size) for s in world.layout.params if s.name in names])
    colour_weights = torch.from_numpy(rng.uniform(-1, 1, (steps + 1, 12, 36, 3)))
    depth_weights = torch.from_numpy(rng.uniform(-0.1, 0.1, (steps + 1, 12, 36)))
    dynamic = slice(13, world.layout.state_size)  # body 0, the world, is scenery

    def loss(x0_dynamic, u, selected):
        x = torch.cat([x0[:13], x0_dynamic])
        p = theta.index_put((torch.from_numpy(checked),), selected)
        colour, depth = dpt.render(world, dpt.world_rollout(world, x, u, p), p, "side")
        return (colour * colour_weights).sum() + (depth * depth_weights).sum()

    inputs = (x0[dynamic].clone().requires_grad_(), controls.clone().requires_grad_(),
              theta[checked].clone().requires_grad_())
    value = loss(*inputs)
    value.backward()
    with torch.no_grad():  # Σ|w·image|: what the central differences' rounding is relative to
        colour, depth = dpt.render(world, dpt.world_rollout(world, x0, controls, theta), theta, "side")
        magnitude = ((colour * colour_weights).abs().sum() + (depth * depth_weights).abs().sum()).item()
    # Steps per input kind: 1e-6 m (and rad, m/s) for x0; 1e-3 N for the controls, which move the
    # cart by only ~dt²/m = 1e-4 m per N within a step; 1e-5 for θ (m, kg, m/s², N·m·s). Each
    # keeps samples ~1e-5 px or less from where they were (the coverage ramp's joints are 1 px
    # apart) and the rollout in its smooth regime (no contacts).
    for which, (tensor, h) in enumerate(zip(inputs, (1e-6, 1e-3, 1e-5))):
        analytic = tensor.grad.numpy()
        numeric = np.zeros_like(analytic)
        for i in range(tensor.numel()):
            values = []
            for sign in (1, -1):
                moved = [t.detach().clone() for t in inputs]
                moved[which].view(-1)[i] += sign * h
                with torch.no_grad():
                    values.append(loss(*moved).item())
            numeric.reshape(-1)[i] = (values[0] - values[1]) / (2 * h)
        rounding = np.finfo(float).eps * magnitude / (2 * h)
        scale = np.abs(numeric).max()
        what = ["x0", "controls", "params"][which]
        assert scale > 1e3 * rounding, what  # the input moves the frames, far above the differences' noise
        # Allowed: 1e-5 of the largest derivative of the kind, and 10× the rounding bound.
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-5 * scale + 10 * rounding, err_msg=what)


def sphere_world(position, radius, width, height, fov_deg):
    scene = {"name": "sphere", "dt": 0.01,
             "bodies": [{"name": "ball", "position": position, "shapes": [{"type": "sphere", "radius": radius}]}],
             "cameras": [{"name": "eye", "position": [0, 0, 0], "orientation": [1, 0, 0, 0], "fov_deg": fov_deg,
                          "width": width, "height": height, "background": [0, 0, 0],
                          "colours": {"ball": [1, 1, 1]}}]}
    world = dp.parse_world(json.dumps(scene))
    look = world.camera_appearance("eye")
    look.ambient, look.diffuse = 1.0, 0.0  # colour = coverage
    return world, look


def test_sphere_image_area_and_centroid_closed_forms():
    """A sphere of radius r at distance z on the optical axis covers π r² f²/z² pixels to first
    order: the exact outline radius is R = f r/√(z² − r²), and π r² f²/z² = π R² cos²β (sin β =
    r/z). The soft edge erodes it by about a pixel: with the edge's slope k = cos²β,
    Σα = π(R − 1/k)² + π/(6k²) (docs/camera.md), up to the edge's curvature (≤ 0.05 px²) and the
    lattice's aliasing, bounded by Poisson summation as in the C++ test
    (tests/camera_closed_form_test.cpp). Off the axis at angle γ, the coverage centroid is the
    pinhole projection of the centre plus the outline ellipse's shift
    δ = f(tan(γ+β) + tan(γ−β))/2 − f tan γ, within 2 tan γ · β (+ 2e-3 for the lattice): the soft
    band's width varies around the outline."""
    width = height = 96
    f = (height / 2) / math.tan(math.radians(20))
    r, z = 0.3, 3.0
    world, look = sphere_world([0, 0, z], r, width, height, 40)
    x, theta = torch.tensor(world.initial_state()), torch.tensor(world.default_params())
    colour, _ = dpt.render(world, x, theta, "eye", appearance=look)
    area = colour[..., 0].sum().item()
    beta = math.asin(r / z)
    R, k = f * r / math.sqrt(z * z - r * r), math.cos(beta) ** 2
    assert math.pi * r * r * f * f / (z * z) == pytest.approx(math.pi * R * R * k, rel=1e-12)
    middle = R - 1 / k
    m = np.stack(np.meshgrid(np.arange(-40, 41), np.arange(-40, 41)), axis=-1).reshape(-1, 2)
    omega = 2 * math.pi * np.hypot(m[:, 0], m[:, 1])[np.any(m != 0, axis=1)]
    half = omega / (2 * k)
    transform = 2 * math.pi * middle / omega * np.sqrt(2 / (math.pi * middle * omega))
    aliasing = np.sum(transform * (np.sin(half) / half) ** 2)
    assert area == pytest.approx(math.pi * middle ** 2 + math.pi / (6 * k * k), abs=aliasing + 0.05)

    offset = 0.6
    world, look = sphere_world([offset, 0, z], r, width, height, 40)
    colour, _ = dpt.render(world, torch.tensor(world.initial_state()), theta, "eye", appearance=look)
    alpha = colour[..., 0].numpy()
    centres = np.arange(width) + 0.5  # pixel centres (width = height)
    centroid_u = (alpha.sum(axis=0) * centres).sum() / alpha.sum()
    centroid_v = (alpha.sum(axis=1) * centres).sum() / alpha.sum()
    gamma = math.atan2(offset, z)
    beta = math.asin(r / math.hypot(offset, z))
    shift = f * (math.tan(gamma + beta) + math.tan(gamma - beta)) / 2 - f * math.tan(gamma)
    assert shift > 0.05  # resolved: the centroid is not simply the projection
    assert centroid_u == pytest.approx(width / 2 + f * offset / z + shift, abs=2 * math.tan(gamma) * beta + 2e-3)
    assert centroid_v == pytest.approx(height / 2, abs=1e-9)  # symmetric about the image's middle row


def textured_ground_world():
    """A ball above a ground plane that carries an 8 × 8 checker texture (0.5 m a repeat), seen
    from above at 24 × 18 pixels: the plane's pixels are bilinear samples of the texels."""
    scene = {"name": "textured", "dt": 0.01, "ground": True,
             "bodies": [{"name": "ball", "position": [0, 0, 0.3], "shapes": [{"type": "sphere", "radius": 0.1}]}],
             "cameras": [{"name": "down", "position": [0.05, 0.02, 1.5], "look_at": [0, 0, 0], "fov_deg": 40,
                          "width": 24, "height": 18}]}
    world = dp.parse_world(json.dumps(scene))
    look = world.camera_appearance("down")
    look.textures = [dp.checker_texture(4, 2, [0.9, 0.8, 0.7], [0.2, 0.3, 0.25])]
    shapes = look.shapes
    shapes[0].texture, shapes[0].texture_size = 0, 0.5  # the ground plane
    look.shapes = shapes
    return world, look


def test_render_differentiates_the_textures_texels():
    """L = Σ w · colour of one frame: its torch gradient w.r.t. the texture's texels is
    WorldCamera.backward's, and matches central differences (the image is linear in the texels,
    so a difference is exact up to rounding); textures of the wrong count or shape are refused
    naming them."""
    world, look = textured_ground_world()
    x, theta = torch.tensor(world.initial_state()), torch.tensor(world.default_params())
    texels = torch.tensor(look.textures[0].texels, requires_grad=True)
    weights = torch.from_numpy(np.random.default_rng(11).uniform(-1, 1, (18, 24, 3)))
    colour, _ = dpt.render(world, x, theta, "down", appearance=look, textures=[texels])
    (colour * weights).sum().backward()
    analytic = texels.grad.numpy()
    # The same image and gradient as the scene's look (the texels given are the look's own).
    plain, _ = dpt.render(world, x, theta, "down", appearance=look)
    assert torch.equal(plain, colour.detach())
    camera = dp.WorldCamera(world, "down")
    camera.appearance = look
    numpy_gradient = camera.backward(x.numpy(), colour_gradient=weights.numpy())["textures"][0]
    np.testing.assert_array_equal(analytic, numpy_gradient)
    assert np.count_nonzero(analytic) > 20  # the plane fills most of the frame
    h = 1e-3
    for a, b, c in ((0, 0, 0), (3, 5, 1), (7, 2, 2), (4, 4, 0)):
        values = []
        for sign in (1, -1):
            moved = texels.detach().clone()
            moved[a, b, c] += sign * h
            values.append((dpt.render(world, x, theta, "down", appearance=look, textures=[moved])[0] * weights)
                          .sum().item())
        numeric = (values[0] - values[1]) / (2 * h)
        assert analytic[a, b, c] == pytest.approx(numeric, rel=1e-9, abs=1e-10), (a, b, c)
    with pytest.raises(dp.Error, match=r"textures must list one \(H, W, 3\) tensor per texture of the appearance "
                                       r"\(1\), got 2"):
        dpt.render(world, x, theta, "down", appearance=look, textures=[texels, texels])
    with pytest.raises(dp.Error, match=r"textures\[0\] must have shape \(H, W, 3\), got \(8, 8\)"):
        dpt.render(world, x, theta, "down", appearance=look, textures=[texels[..., 0]])


def test_same_bits_on_one_and_two_threads():
    world = cart_world(48, 16)
    states = torch.from_numpy(moving_states(world, 5)).requires_grad_()
    params = torch.tensor(world.default_params(), requires_grad=True)
    results = []
    for threads in (1, 2):
        colour, depth = dpt.render(world, states, params, "side", threads=threads)
        (colour.square().sum() + depth.sum()).backward()
        results.append((colour.detach().clone(), depth.detach().clone(), states.grad.clone(), params.grad.clone()))
        states.grad, params.grad = None, None
    for one, two in zip(*results):
        assert torch.equal(one, two)


def test_batched_world_rollout_frames_are_those_of_separate_calls():
    """States (B, T + 1, state_size) of a batched world_rollout with θ (B, param_count): each
    world's θ draws its frames, whose bits and x0 and control gradients are those of B separate
    calls (θ's gradient to rounding: its frames are summed in another order)."""
    world = cart_world()
    x0 = torch.from_numpy(np.stack([world.initial_state()] * 2))
    controls = torch.from_numpy(np.stack([np.full((5, 1), 2.0), np.full((5, 1), -3.0)]))
    theta = torch.from_numpy(np.stack([world.default_params()] * 2))
    theta[1, world.layout.param_slice("shape/pole/0/radius").range] = 0.06
    weights = torch.from_numpy(np.random.default_rng(5).uniform(-1, 1, (2, 6, 12, 36, 3)))

    inputs = [t.clone().requires_grad_() for t in (x0, controls, theta)]
    colour, depth = dpt.render(world, dpt.world_rollout(world, *inputs), inputs[2], "side")
    ((colour * weights).sum() + depth.sum()).backward()
    colour, gradients = colour.detach(), [t.grad for t in inputs]
    assert colour.shape == (2, 6, 12, 36, 3)
    for index in range(2):
        inputs = [t[index].clone().requires_grad_() for t in (x0, controls, theta)]
        alone, depth = dpt.render(world, dpt.world_rollout(world, *inputs), inputs[2], "side")
        ((alone * weights[index]).sum() + depth.sum()).backward()
        assert torch.equal(alone.detach(), colour[index])
        assert torch.equal(gradients[0][index], inputs[0].grad) and torch.equal(gradients[1][index], inputs[1].grad)
        # θ's frames are summed by autograd (the expanded θ) here, by NumPy (a shared θ) there:
        # another order of the same sum.
        torch.testing.assert_close(gradients[2][index], inputs[2].grad, rtol=1e-12, atol=1e-12)


def test_bad_input_is_refused_naming_the_item_and_value():
    world = cart_world()
    x = torch.tensor(world.initial_state())
    theta = torch.tensor(world.default_params())
    with pytest.raises(dp.Error, match=r"world 'pendulum_cart' has no camera 'top' \(its cameras: 'side'\)"):
        dpt.render(world, x, theta, "top")
    with pytest.raises(dp.Error, match=r"states must have shape \(\.\.\., 39\) .* got \(38,\)"):
        dpt.render(world, x[:-1], theta, "side")
    with pytest.raises(dp.Error, match=r"params must have shape \(41,\), \(2, 41\) \(one θ per frame\) .* "
                                       r"got \(40,\)"):
        dpt.render(world, x.repeat(2, 1), theta[:-1], "side")
    with pytest.raises(dp.Error, match=r"params must have shape .* got \(3, 41\)"):
        dpt.render(world, x.repeat(2, 1), theta.repeat(3, 1), "side")
    with pytest.raises(dp.Error, match=r"states must be floating-point, got dtype torch.int64"):
        dpt.render(world, x.long(), theta, "side")
    with pytest.raises(dp.Error, match=r"camera_orientation must have shape \(4,\), got \(3,\)"):
        dpt.render(world, x, theta, "side", camera_orientation=torch.zeros(3, dtype=torch.float64))
    with pytest.raises(dp.Error, match=r"camera 'side': vertical field of view must be in \(0, 180\) degrees, got 180"):
        dpt.render(world, x, theta, "side", vertical_fov=torch.tensor(math.pi, dtype=torch.float64))
    with pytest.raises(dp.Error, match=r"camera_position must be floating-point, got dtype torch.int64"):
        dpt.render(world, x, theta, "side", camera_position=torch.tensor([0, -3, 1]))
