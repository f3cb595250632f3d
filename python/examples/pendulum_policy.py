#!/usr/bin/env python3
"""A torch MLP policy trained in closed loop, through the physics, to balance a pendulum.

The pendulum is a 1 kg bob 0.5 m from a hinge (axis y), driven by a motor whose torque the
policy sets; upright is θ = 0. The policy π(sin θ, cos θ, θ̇) = 3 tanh(MLP) N·m (3 → 32 → 32 → 1)
can hold 3 N·m, less than the 4.9 N·m that gravity exerts horizontally, so it must act early.
Each training iteration rolls out a batch of pendulums from angles spread over ±0.6 rad for
1.5 s, calling diffphys.torch.step once per step (batched) with the policy's torque, and backpropagates
the average cost (1 − cos θ) + 0.01 θ̇² + 0.001 u² through every step into the network
(backpropagation through time, Adam).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/pendulum_policy.py [--quick]
"""

import argparse
import math
import sys
import time

import torch

import diffphys as dp
from diffphys import torch as dpt

LENGTH, MAX_TORQUE = 0.5, 3.0
DT = 0.01
HINGE_HEIGHT = 1.0


def build_scene():
    builder = dp.ModelBuilder()
    builder.name = "pendulum on a motor"
    builder.dt = DT
    builder.add_body(name="bob", position=(0, 0, HINGE_HEIGHT + LENGTH), mass=1.0,
                     shapes=[dp.ShapeSpec(type="sphere", radius=0.05)])
    builder.add_joint(name="hinge", type="revolute", parent="world", child="bob",
                      anchor=(0, 0, HINGE_HEIGHT), axis=(0, 1, 0))
    builder.add_actuator(name="motor", type="motor", joint="hinge")
    return builder.build()


class Policy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.network = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                                           torch.nn.Tanh(), torch.nn.Linear(32, 1)).double()

    def forward(self, angle, angular_velocity):
        """(B,) angles and rates → (B, 1) torques."""
        features = torch.stack([torch.sin(angle), torch.cos(angle), angular_velocity], dim=-1)
        return MAX_TORQUE * torch.tanh(self.network(features))


def angle_and_rate(x, bob):
    """Joint angle about +y (0 upright) and its rate, from flat state vectors (B, 13 nbody)."""
    position = dpt.positions(x)[:, bob]
    angle = torch.atan2(position[:, 0], position[:, 2] - HINGE_HEIGHT)
    return angle, dpt.angular_velocities(x)[:, bob, 1]


def initial_states(scene, bob, angles):
    """x0 (B, 13 nbody) with the pendulum at each angle (rad about +y), at rest."""
    x0 = dpt.state_tensor(scene.state).repeat(len(angles), 1)
    for row, angle in enumerate(angles):
        x0[row, 13 * bob:13 * bob + 3] = torch.tensor([LENGTH * math.sin(angle), 0.0,
                                                       HINGE_HEIGHT + LENGTH * math.cos(angle)])
        x0[row, 13 * bob + 3:13 * bob + 7] = torch.tensor([math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0])
    return x0


def episodes(scene, policy, bob, theta, angles, steps):
    """Average cost over the batch and time, and the final angles, of closed-loop rollouts from
    `angles` (differentiable): one batched diffphys.torch.step per time step."""
    x = initial_states(scene, bob, angles)
    cost = 0.0
    for _ in range(steps):
        angle_t, rate_t = angle_and_rate(x, bob)
        torque = policy(angle_t, rate_t)
        x = dpt.step(scene.model, x, torque, theta)
        cost = cost + ((1 - torch.cos(angle_t)) + 0.01 * rate_t ** 2 + 0.001 * torque[:, 0] ** 2).mean()
    final_angle, _ = angle_and_rate(x, bob)
    return cost / steps, final_angle


def evaluate(scene, policy, bob, theta, angles, steps):
    with torch.no_grad():
        cost, final_angle = episodes(scene, policy, bob, theta, angles, steps)
    return cost.item(), final_angle.abs().max().item()


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="few iterations (CI)")
    arguments.add_argument("--iterations", type=int, default=None)
    options = arguments.parse_args(argv)
    iterations = options.iterations or (8 if options.quick else 40)
    batch, horizon = (2, 100) if options.quick else (4, 150)

    torch.manual_seed(0)
    scene = build_scene()
    bob = scene.model.body_index("bob")
    theta = dpt.params_tensor(scene.params)
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=0.02)
    test_angles = [-0.5, 0.3, 0.55]
    test_steps = 200
    cost_before, angle_before = evaluate(scene, policy, bob, theta, test_angles, test_steps)
    print(f"before training: test cost {cost_before:.4f}, worst final |θ| {angle_before:.3f} rad after "
          f"{test_steps * DT:.0f} s", flush=True)
    start = time.perf_counter()
    for iteration in range(1, iterations + 1):
        optimizer.zero_grad()
        # Stratified start angles over ±0.6 rad, jittered each iteration.
        angles = ((torch.arange(batch) + torch.rand(batch)) / batch * 1.2 - 0.6).tolist()
        loss, _ = episodes(scene, policy, bob, theta, angles, horizon)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        if iteration % (2 if options.quick else 5) == 0 or iteration == 1:
            print(f"iteration {iteration:3d}  training cost {loss.item():.4f}  "
                  f"({time.perf_counter() - start:.1f} s)", flush=True)
    elapsed = time.perf_counter() - start
    cost_after, angle_after = evaluate(scene, policy, bob, theta, test_angles, test_steps)
    print(f"after {iterations} iterations ({batch} × {horizon} steps each, {elapsed:.1f} s): test cost "
          f"{cost_after:.4f} (was {cost_before:.4f}), worst final |θ| {angle_after:.4f} rad (was {angle_before:.3f})")
    return {"iterations": iterations, "seconds": elapsed, "cost_before": cost_before, "cost_after": cost_after,
            "final_angle_before": angle_before, "final_angle_after": angle_after}


if __name__ == "__main__":
    main(sys.argv[1:])
