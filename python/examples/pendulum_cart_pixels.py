#!/usr/bin/env python3
"""A pixel loss through physics: the pendulum-cart filmed at 288 × 96 (the seed of issue 20's
pendulum-cart-pixels experiment, Degrave et al. 2019 §3.4).

The scene (examples/scenes/pendulum_cart.json) is a cart on a motor-driven rail with a hinged
pole, seen by its camera "side". A reference push u*(t) makes the target film: the frames of
x_0 … x_T. Starting from no push, the loss is the mean squared difference between the film of
the current push and the target film; its gradient with respect to every control (and θ)
runs back through the camera (diffphys.torch.render) and the physics
(diffphys.torch.world_rollout). The script checks that gradient along its own direction
against a central difference of the whole loss, then takes one gradient step (step size
halved until the loss falls) and reports the loss and the distance to u* before and after.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/pendulum_cart_pixels.py [--quick]
"""

import argparse
import pathlib
import time

import torch

import diffphys as dp
from diffphys import torch as dpt

SCENE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "scenes" / "pendulum_cart.json"


def film(world, controls, theta, threads):
    """(T + 1, 96, 288, 3) colour frames of the rollout under `controls`."""
    states = dpt.world_rollout(world, torch.from_numpy(world.initial_state()), controls, theta)
    colour, _ = dpt.render(world, states, theta, "side", threads=threads)
    return colour


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="a shorter film (CI)")
    arguments.add_argument("--steps", type=int, default=None, help="world steps filmed (default 60, quick 20)")
    arguments.add_argument("--threads", type=int, default=2)
    options = arguments.parse_args(argv)
    steps = options.steps or (20 if options.quick else 60)

    world = dp.load_world(SCENE)
    camera = world.cameras[0]
    theta = torch.from_numpy(world.default_params())
    times = torch.arange(steps, dtype=torch.float64) * world.dt()
    reference = (4.0 * torch.sin(2 * torch.pi * times / (steps * world.dt()))).reshape(steps, 1)
    with torch.no_grad():
        target = film(world, reference, theta, options.threads)

    def loss_of(controls):
        return ((film(world, controls, theta, options.threads) - target) ** 2).mean()

    controls = torch.zeros(steps, world.layout.control_count, dtype=torch.float64, requires_grad=True)
    start = time.perf_counter()
    loss = loss_of(controls)
    loss.backward()
    seconds = time.perf_counter() - start
    gradient = controls.grad.detach().clone()
    frames = steps + 1
    print(f"{frames} frames of {camera.width} × {camera.height} through camera '{camera.name}': loss "
          f"{loss.item():.6f}, forward and backward (physics and camera) in {seconds:.2f} s "
          f"({frames / seconds:.0f} frames/s)")

    # The gradient along its own direction, d = ĝ: dL/dε at ε = 0 is |g|; central difference of
    # the whole loss with ε = 1e-4 N (the cart moves ~1e-6 m per step: far inside the pixels).
    direction = gradient / gradient.norm()
    epsilon = 1e-4
    with torch.no_grad():
        numeric = (loss_of(controls + epsilon * direction) - loss_of(controls - epsilon * direction)) / (2 * epsilon)
    analytic = gradient.norm().item()
    print(f"directional derivative along the gradient: backward {analytic:.8e}, central difference "
          f"{numeric.item():.8e} (relative difference {abs(numeric.item() - analytic) / analytic:.1e})")

    # One gradient step, halved until the loss falls (Armijo's sufficient decrease, c = 1e-4).
    step = 8.0 / analytic  # a first step moving the controls by 8 N along −g
    with torch.no_grad():
        while True:
            moved = controls - step * gradient
            new_loss = loss_of(moved)
            if new_loss <= loss - 1e-4 * step * analytic ** 2 or step < 1e-12:
                break
            step /= 2
    distance_before = (controls.detach() - reference).norm().item()
    distance_after = (moved - reference).norm().item()
    print(f"one gradient step ({step * analytic:.3f} N along −g): loss {loss.item():.6f} → {new_loss.item():.6f}; "
          f"distance to the reference push {distance_before:.3f} → {distance_after:.3f} N")
    return {"frames": frames, "width": camera.width, "height": camera.height, "seconds": seconds,
            "loss_before": loss.item(), "loss_after": new_loss.item(), "directional_backward": analytic,
            "directional_numeric": numeric.item(), "distance_before": distance_before,
            "distance_after": distance_after}


if __name__ == "__main__":
    main()
