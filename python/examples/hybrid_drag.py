#!/usr/bin/env python3
"""Hybrid learned physics: the analytic step plus a learned residual, against each alone.

A ball (0.5 kg) flies through air with quadratic drag, F = −c |v| v (c = 0.02 N s²/m²); the
analytic model knows gravity and the ball but not the drag. From 16 observed 2-s trajectories
(thrown at random velocities) three models of the motion are fitted and compared on 8 held-out
trajectories by their position error after 1, 10 and 100 steps (dt = 0.02 s) from a true state:

* analytic:  x_{t+1} = step(x_t; θ), the engine alone (no fitting);
* learned:   s_{t+1} = s_t + MLP(s_t), s = (position, velocity): an MLP dynamics model
             trained on one-step transitions;
* hybrid:    x_{t+1} = step(x_t; θ) + r_φ(s_t): the engine plus a residual MLP r_φ (a
             velocity change, and its h·Δv of position), trained on 10-step windows through
             the simulator (backpropagation through diffphys.torch.step).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/hybrid_drag.py [--quick] [--csv FILE]
"""

import argparse
import sys

import torch

import diffphys as dp
from diffphys import torch as dpt

DT, STEPS, MASS, DRAG = 0.02, 100, 0.5, 0.02
TRAIN, TEST, WINDOW = 16, 8, 10
BALL = 1  # body 0 is the world
POSITION = slice(13 * BALL, 13 * BALL + 3)
VELOCITY = slice(13 * BALL + 7, 13 * BALL + 10)


def build_scene():
    builder = dp.ModelBuilder()
    builder.name = "drag"
    builder.dt = DT
    builder.add_body(name="ball", position=(0, 0, 0), mass=MASS, shapes=[dp.ShapeSpec(type="sphere", radius=0.1)])
    return builder.build()


def slice_of(model, name):
    found = [s for s in model.layout.slices if s.name == name]
    if not found:
        raise dp.Error(f"no parameter slice '{name}'")
    return slice(found[0].offset, found[0].offset + found[0].size)


def observe(model, theta, x_start, throws):
    """True trajectories (len(throws), STEPS + 1, 13 nbody): the drag applied as the ball's
    external force, recomputed from the velocity at every step."""
    force = slice_of(model, "body/ball/force")
    no_controls = torch.zeros(0, dtype=torch.float64)
    trajectories = []
    with torch.no_grad():
        for velocity in throws:
            x = x_start.clone()
            x[VELOCITY] = velocity
            states = [x]
            for _ in range(STEPS):
                v = x[VELOCITY]
                params = theta.clone()
                params[force] = -DRAG * v.norm() * v
                x = dpt.step(model, x, no_controls, params)
                states.append(x)
            trajectories.append(torch.stack(states))
    return torch.stack(trajectories)


def features(x):
    """s = (position, velocity) of the ball, scaled to order 1."""
    return torch.cat([x[..., POSITION] / 5.0, x[..., VELOCITY] / 5.0], dim=-1)


def state_error(x, y):
    """Mean squared difference of the ball's (position, velocity) in units of what drag changes
    in one step (≈ 0.03 m/s, h × that in position): losses of order 1, whose gradients sit well
    above Adam's ε (in metres and m/s they would not, and learning would stall)."""
    scale_v = 0.03
    return ((((x[..., VELOCITY] - y[..., VELOCITY]) / scale_v) ** 2).sum(dim=-1) +
            (((x[..., POSITION] - y[..., POSITION]) / (DT * scale_v)) ** 2).sum(dim=-1)).mean()


def mlp(outputs):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                               torch.nn.Linear(64, outputs)).double()


class Models:
    def __init__(self, model, theta):
        self.model, self.theta = model, theta
        self.learned = mlp(6)    # Δs (position, velocity), scaled
        self.residual = mlp(3)   # Δv, m/s (scaled by 0.1)

    def analytic(self, x):
        return dpt.step(self.model, x, torch.zeros(x.shape[0], 0, dtype=torch.float64), self.theta)

    def learned_step(self, x):
        delta = self.learned(features(x))
        out = x.clone()
        out[..., POSITION] = x[..., POSITION] + 0.1 * delta[..., :3]
        out[..., VELOCITY] = x[..., VELOCITY] + 0.1 * delta[..., 3:]
        return out

    def hybrid_step(self, x):
        dv = 0.1 * self.residual(features(x))
        out = self.analytic(x).clone()
        out[..., VELOCITY] = out[..., VELOCITY] + dv
        out[..., POSITION] = out[..., POSITION] + DT * dv
        return out


def train(models, data, iterations):
    """The learned model on one-step transitions; the hybrid residual on WINDOW-step windows
    through the simulator. Both with Adam, full batch."""
    inputs = data[:, :-1].reshape(-1, data.shape[-1])
    targets = data[:, 1:].reshape(-1, data.shape[-1])

    def fit_one_step(module, step):
        optimiser = torch.optim.Adam(module.parameters(), lr=3e-3)
        for _ in range(iterations):
            optimiser.zero_grad()
            loss = state_error(step(inputs), targets)
            loss.backward()
            optimiser.step()
        return optimiser

    fit_one_step(models.learned, models.learned_step)
    # The hybrid: first on one-step transitions, then on WINDOW-step windows through the simulator.
    optimiser = fit_one_step(models.residual, models.hybrid_step)
    # Fine-tuning on windows, where each step's error reaches the earlier residuals through the
    # simulator's step (its VJP): a smaller rate, the one-step fit being close already.
    for group in optimiser.param_groups:
        group["lr"] = 3e-4
    starts = list(range(0, STEPS - WINDOW + 1, WINDOW))
    windows = torch.stack([data[:, start:start + WINDOW + 1] for start in starts], dim=1).reshape(-1, WINDOW + 1, data.shape[-1])
    for _ in range(iterations // 4):
        optimiser.zero_grad()
        x = windows[:, 0]
        loss = 0.0
        for k in range(1, WINDOW + 1):
            x = models.hybrid_step(x)
            loss = loss + state_error(x, windows[:, k]) / WINDOW
        loss.backward()
        optimiser.step()


def prediction_errors(step, data, horizon):
    """RMS position error (m) after `horizon` steps from every true state that has a truth
    `horizon` steps later."""
    errors = []
    with torch.no_grad():
        for start in range(0, STEPS - horizon + 1, max(1, horizon)):
            x = data[:, start]
            for _ in range(horizon):
                x = step(x)
            errors.append(((x[:, POSITION] - data[:, start + horizon, POSITION]) ** 2).sum(dim=-1))
    return torch.cat(errors).mean().sqrt().item()


def run(iterations, csv=None):
    scene = build_scene()
    model = scene.model
    theta = dpt.params_tensor(scene.params)
    x_start = dpt.state_tensor(scene.state)
    generator = torch.Generator().manual_seed(1)
    throws = torch.rand(TRAIN + TEST, 3, generator=generator, dtype=torch.float64) * torch.tensor([6.0, 6.0, 6.0],
                                                                                                  dtype=torch.float64)
    throws = throws - torch.tensor([3.0, 3.0, -2.0], dtype=torch.float64)  # vx, vy in ±3, vz in 2..8 m/s
    data = observe(model, theta, x_start, throws)
    train_data, test_data = data[:TRAIN], data[TRAIN:]
    models = Models(model, theta)
    train(models, train_data, iterations)
    table = {}
    for name, step in (("analytic", models.analytic), ("learned", models.learned_step), ("hybrid", models.hybrid_step)):
        table[name] = [prediction_errors(step, test_data, horizon) for horizon in (1, 10, 100)]
    print("held-out position error (m, RMS) after   1 step   10 steps   100 steps")
    for name, errors in table.items():
        print(f"  {name:9s}                              {errors[0]:.2e}   {errors[1]:.2e}   {errors[2]:.2e}")
    if csv is not None:
        with open(csv, "w") as out:
            out.write("model,steps_1,steps_10,steps_100\n")
            for name, errors in table.items():
                out.write(f"{name},{errors[0]:.6g},{errors[1]:.6g},{errors[2]:.6g}\n")
    return table


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="fewer training iterations (CI)")
    arguments.add_argument("--csv", help="write the table here")
    options = arguments.parse_args(argv)
    run(200 if options.quick else 2000, options.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
