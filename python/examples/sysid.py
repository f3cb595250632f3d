#!/usr/bin/env python3
"""System identification: recover a ball's mass and friction from an observed trajectory.

A ball (radius 0.1 m) rests on the ground and is pushed along x by a known constant force of
40 N. The force is large enough that the ball slides rather than rolls, so both unknowns
leave their mark: the linear acceleration is F/m − μ g and the friction torque spins the ball
up at μ m g r / I. (μ here is the pair's Coulomb coefficient √(μ_ball μ_ground); the ground's
is 1.) The ball's inertia is tied to its mass, I = 0.4 m r², inside the torch graph, so the
gradient reaches the mass through both parameter slices.

The "observed" trajectory is simulated with the true values (m = 2 kg, μ_ball = 0.2); the
fit starts from m = 1 kg, μ_ball = 0.5 and runs Adam on log m and log μ_ball, the loss being
the mean squared error of the ball's position and angular velocity over all steps,
backpropagated through diffphys.torch.rollout.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/sysid.py [--quick]
"""

import argparse
import math
import sys
import time

import torch

import diffphys as dp
from diffphys import torch as dpt

RADIUS = 0.1
FORCE = 40.0
TRUE_MASS, TRUE_FRICTION = 2.0, 0.2
STEPS, DT = 100, 0.005


def build_scene():
    builder = dp.ModelBuilder()
    builder.name = "pushed ball"
    builder.dt = DT
    builder.world_friction = 1.0
    builder.add_ground_plane()
    builder.add_body(name="ball", position=(0, 0, RADIUS), mass=1.0, friction=0.5, force=(FORCE, 0, 0),
                     shapes=[dp.ShapeSpec(type="sphere", radius=RADIUS)])
    return builder.build()


def parameters(scene, base, mass, friction):
    """θ with the ball's mass, inertia 0.4 m r² and friction set (differentiably)."""
    layout = {s.name: s for s in scene.model.layout.slices}
    theta = base.clone()
    theta = theta.index_put((torch.tensor([layout["body/ball/mass"].offset]),), mass.reshape(1))
    inertia_slice = layout["body/ball/inertia"]
    theta = theta.index_put((torch.arange(inertia_slice.offset, inertia_slice.offset + 3),),
                            (0.4 * mass * RADIUS ** 2).expand(3))
    return theta.index_put((torch.tensor([layout["body/ball/friction"].offset]),), friction.reshape(1))


def observed_features(states, ball):
    return torch.cat([dpt.positions(states)[:, ball], 0.1 * dpt.angular_velocities(states)[:, ball]], dim=1)


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="few iterations (CI)")
    arguments.add_argument("--iterations", type=int, default=None)
    options = arguments.parse_args(argv)
    iterations = options.iterations or (60 if options.quick else 150)

    scene = build_scene()
    model = scene.model
    ball = model.body_index("ball")
    base = dpt.params_tensor(scene.params)
    x0 = dpt.state_tensor(scene.state)
    controls = torch.zeros(STEPS, 0, dtype=torch.float64)

    with torch.no_grad():
        truth = dpt.rollout(model, x0, controls,
                            parameters(scene, base, torch.tensor(TRUE_MASS, dtype=torch.float64),
                                       torch.tensor(TRUE_FRICTION, dtype=torch.float64)))
    observed = observed_features(truth, ball)
    print(f"observed: ball pushed by {FORCE} N for {STEPS * DT} s, slid "
          f"{truth[-1, 13 * ball].item():.3f} m, spin {truth[-1, 13 * ball + 11].item():.2f} rad/s")

    log_mass = torch.tensor(math.log(1.0), dtype=torch.float64, requires_grad=True)
    log_friction = torch.tensor(math.log(0.5), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([log_mass, log_friction], lr=0.05)
    start = time.perf_counter()
    first_loss = None
    for iteration in range(iterations + 1):
        optimizer.zero_grad()
        states = dpt.rollout(model, x0, controls, parameters(scene, base, log_mass.exp(), log_friction.exp()))
        loss = ((observed_features(states, ball) - observed) ** 2).mean()
        first_loss = loss.item() if first_loss is None else first_loss
        if iteration % 10 == 0 or iteration == iterations:
            print(f"iteration {iteration:4d}  loss {loss.item():.3e}  mass {log_mass.exp().item():.4f} kg  "
                  f"friction {log_friction.exp().item():.4f}", flush=True)
        if iteration == iterations:
            break
        loss.backward()
        optimizer.step()
    elapsed = time.perf_counter() - start
    mass, friction = log_mass.exp().item(), log_friction.exp().item()
    result = {"iterations": iterations, "seconds": elapsed, "first_loss": first_loss, "final_loss": loss.item(),
              "mass": mass, "friction": friction, "true_mass": TRUE_MASS, "true_friction": TRUE_FRICTION,
              "mass_error": abs(mass - TRUE_MASS) / TRUE_MASS,
              "friction_error": abs(friction - TRUE_FRICTION) / TRUE_FRICTION}
    print(f"recovered mass {mass:.4f} kg (true {TRUE_MASS}, error {100 * result['mass_error']:.2f}%), "
          f"friction {friction:.4f} (true {TRUE_FRICTION}, error {100 * result['friction_error']:.2f}%) "
          f"in {iterations} Adam iterations, {elapsed:.1f} s")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
