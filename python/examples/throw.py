#!/usr/bin/env python3
"""Open-loop trajectory optimisation: throw a ball into a basket.

A ball (radius 0.1 m, 0.5 kg) leaves the point (0, 0, 1) with an initial velocity v0 that
we choose; air drag is a linear damping of 0.3 /s and gravity pulls it down. Find v0 so that
after 1.2 s the ball is at the basket (4, 1, 2) m, preferring slow throws (a small penalty
on |v0|²). The gradient of the miss distance with respect to v0 comes from
diffphys.torch.rollout (backpropagation through all 120 steps); Adam does the rest.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/throw.py [--quick]
"""

import argparse
import sys
import time

import torch

import diffphys as dp
from diffphys import torch as dpt

TARGET = (4.0, 1.0, 2.0)
STEPS, DT = 120, 0.01


def build_scene():
    builder = dp.ModelBuilder()
    builder.name = "throw"
    builder.dt = DT
    builder.add_ground_plane()
    builder.add_body(name="ball", position=(0, 0, 1), mass=0.5, linear_damping=0.3,
                     shapes=[dp.ShapeSpec(type="sphere", radius=0.1)])
    return builder.build()


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="few iterations (CI)")
    arguments.add_argument("--iterations", type=int, default=None)
    options = arguments.parse_args(argv)
    iterations = options.iterations or (60 if options.quick else 200)

    scene = build_scene()
    model = scene.model
    ball = model.body_index("ball")
    theta = dpt.params_tensor(scene.params)
    x_start = dpt.state_tensor(scene.state)
    controls = torch.zeros(STEPS, 0, dtype=torch.float64)
    target = torch.tensor(TARGET, dtype=torch.float64)
    velocity_slots = torch.arange(13 * ball + 7, 13 * ball + 10)

    velocity = torch.tensor([2.0, 0.0, 5.0], dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([velocity], lr=0.2)
    start = time.perf_counter()
    for iteration in range(iterations + 1):
        optimizer.zero_grad()
        x0 = x_start.index_put((velocity_slots,), velocity)
        states = dpt.rollout(model, x0, controls, theta)
        miss = (dpt.positions(states)[-1, ball] - target).norm()
        loss = miss ** 2 + 1e-4 * (velocity ** 2).sum()
        if iteration % 20 == 0 or iteration == iterations:
            print(f"iteration {iteration:4d}  miss {miss.item():.4f} m  v0 = "
                  f"({velocity[0].item():.3f}, {velocity[1].item():.3f}, {velocity[2].item():.3f}) m/s", flush=True)
        if iteration == iterations:
            break
        loss.backward()
        optimizer.step()
    elapsed = time.perf_counter() - start
    # Check the optimum with a plain simulation (no torch): the ball must pass the basket.
    state = scene.state
    state.linear_velocity[ball] = velocity.detach().numpy()  # a NumPy view of the C++ state
    trajectory, converged = dp.Simulator(model, scene.params, state).run(STEPS)
    final_position = trajectory[-1, 13 * ball:13 * ball + 3]
    result = {"iterations": iterations, "seconds": elapsed, "miss": miss.item(),
              "speed": velocity.norm().item(), "velocity": velocity.tolist(),
              "simulated_miss": float(((final_position - target.numpy()) ** 2).sum() ** 0.5),
              "converged": bool(converged)}
    print(f"throw v0 = ({velocity[0].item():.3f}, {velocity[1].item():.3f}, {velocity[2].item():.3f}) m/s "
          f"(|v0| = {result['speed']:.3f} m/s) lands {100 * result['simulated_miss']:.2f} cm from the basket "
          f"after {STEPS * DT:.1f} s; {iterations} Adam iterations, {elapsed:.1f} s")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
