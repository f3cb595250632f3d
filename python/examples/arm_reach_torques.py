#!/usr/bin/env python3
"""Trajectory optimisation in joint coordinates: a 3-link arm reaches a point and stops there.

Three 1 m links (1 kg each) hang from a hinge at the origin, each hinge about y with a torque
motor; the arm is simulated in reduced (joint) coordinates ("coordinates": "reduced",
docs/simulation.md), where the joints hold exactly and a step and its gradient cost a few
microseconds. Choose the 3 torques of each of the 100 steps (1 s) so that at the end the last
link's centre of mass is at (1.2, 0, -1.0) m and the arm is at rest, with a small penalty on
the torques: 300 numbers, whose gradient comes from one backward pass through the rollout
(diffphys.torch.rollout, dL/dθ skipped); L-BFGS does the rest. The result is checked with a
plain simulation of the optimised torques.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/arm_reach_torques.py [--quick]
"""

import argparse
import sys
import time

import torch

import diffphys as dp
from diffphys import torch as dpt

TARGET = (1.2, 0.0, -1.0)
STEPS, DT, LINKS = 100, 0.01, 3


def build_scene():
    builder = dp.ModelBuilder()
    builder.name = "arm_reach_torques"
    builder.dt = DT
    builder.solver.coordinates = dp.Coordinates.Reduced
    for k in range(LINKS):
        builder.add_body(name=f"link{k}", position=(0, 0, -0.5 - k), mass=1.0,
                         shapes=[dp.ShapeSpec(type="box", half_extents=(0.05, 0.05, 0.5), collision_mask=0)])
        builder.add_joint(name=f"hinge{k}", type="revolute", parent="world" if k == 0 else f"link{k - 1}",
                          child=f"link{k}", anchor=(0, 0, -k), axis=(0, 1, 0), damping=0.1)
        builder.add_actuator(name=f"motor{k}", joint=f"hinge{k}")
    return builder.build()


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="few iterations (CI)")
    arguments.add_argument("--iterations", type=int, default=None)
    options = arguments.parse_args(argv)
    iterations = options.iterations or (20 if options.quick else 100)

    scene = build_scene()
    model = scene.model
    tip = model.body_index(f"link{LINKS - 1}")
    theta = dpt.params_tensor(scene.params)
    x0 = dpt.state_tensor(scene.state)
    target = torch.tensor(TARGET, dtype=torch.float64)
    rollout_options = dp.RolloutOptions()
    rollout_options.parameter_gradients = False  # only dL/du is wanted

    torques = torch.zeros(STEPS, LINKS, dtype=torch.float64, requires_grad=True)
    # A smooth problem (no contacts): L-BFGS with a strong-Wolfe line search, on exact gradients.
    optimizer = torch.optim.LBFGS([torques], lr=1.0, max_iter=1, history_size=20, line_search_fn="strong_wolfe")
    terms = {}

    def closure():
        optimizer.zero_grad()
        states = dpt.rollout(model, x0, torques, theta, rollout_options)
        terms["miss"] = (dpt.positions(states)[-1, tip] - target).norm()
        terms["speed"] = states[-1].reshape(-1, 13)[1:, 7:13].norm()  # every link's velocities
        loss = terms["miss"] ** 2 + 0.1 * terms["speed"] ** 2 + 1e-7 * (torques ** 2).sum()
        loss.backward()
        return loss

    start = time.perf_counter()
    closure()
    first_miss = terms["miss"].item()
    for iteration in range(iterations + 1):
        if iteration % 10 == 0 or iteration == iterations:
            print(f"iteration {iteration:4d}  miss {terms['miss'].item():.5f} m  final speed "
                  f"{terms['speed'].item():.5f}  largest torque {torques.abs().max().item():.2f} N·m", flush=True)
        if iteration == iterations:
            break
        optimizer.step(closure)
    miss, speed = terms["miss"], terms["speed"]
    elapsed = time.perf_counter() - start
    # The optimised torques in a plain simulation (no torch): the arm must end at the target.
    trajectory, _ = dp.Simulator(model, scene.params, scene.state).run(STEPS, torques.detach().numpy())
    simulated = trajectory[-1, 13 * tip:13 * tip + 3]
    result = {"iterations": iterations, "seconds": elapsed, "first_miss": first_miss, "miss": miss.item(),
              "final_speed": speed.item(),
              "simulated_miss": float(((simulated - target.numpy()) ** 2).sum() ** 0.5)}
    print(f"after {iterations} L-BFGS iterations ({elapsed:.2f} s): the last link ends "
          f"{100 * result['simulated_miss']:.2f} cm from the target (it started {100 * first_miss:.0f} cm away), "
          f"speed {result['final_speed']:.3f}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
