#!/usr/bin/env python3
"""The ball-throw task of Degrave et al. 2019 (§2.1.1), solved with CMA-ES through diffphys.

A ball of 1 m diameter (density 1000 kg/m³), friction 1.0, restitution 0.5, starts at (0, 0)
with its centre 1.5 m up (the public code's robotmodel/ball.json) and falls. Choose its
initial linear and angular velocity (6 numbers) so that after 5 s (5,000 steps of 1 ms) it
rests at (10, 0) with zero linear and angular velocity. The paper reports 88 iterations /
16.3 s for gradient descent through the physics and 2,422 iterations / 59.9 s for CMA-ES;
this is the CMA-ES side of that comparison, run with Debian's python3-cmaes on
diffphys.Simulator.run (each evaluation one 5,000-step simulation in C++). The scene (the
convex contact formulation, each body pushed at its own surface point, bounces at their time
of impact), the objective and the stopping rule are those of `diffphys experiment
ball-throw` (src/experiments/ball_throw.cpp, whose scene.json is this SCENE), so the
optimisers are compared on one task: the objective is |p − (10, 0, r)|² + |v|² + |r ω|², and
the run stops when the position error, the speed |v| and the surface speed r|ω| at 5 s are
all below 0.01 (m, m/s) — or 0.1 with --quick.

Prints the best objective per generation, then one JSON line:
{"evaluations", "generations", "seconds", "position_error", "linear_speed", "surface_speed", ...}

    PYTHONPATH=build/python /usr/bin/python3 python/examples/ball_throw_cmaes.py [--quick] [--seed N]
"""

import argparse
import json
import sys
import time

import numpy as np
from cmaes import CMA

import diffphys as dp

RADIUS, START_HEIGHT = 0.5, 1.5
TARGET = np.array([10.0, 0.0, RADIUS])
STEPS, DT = 5000, 0.001
SCENE = {
    "name": "ball throw (Degrave et al. 2019, 2.1.1)",
    "dt": DT,
    "solver": {"formulation": "convex", "contact_point": "surfaces"},
    "ground": True,
    "world": {"friction": 1.0, "restitution": 0.5},
    "bodies": [{"name": "ball", "position": [0.0, 0.0, START_HEIGHT], "density": 1000.0, "friction": 1.0,
                "restitution": 0.5, "shapes": [{"type": "sphere", "radius": RADIUS}]}],
}


def build_scene():
    return dp.parse_scene(json.dumps(SCENE), "ball-throw scene")


class Task:
    def __init__(self):
        self.scene = build_scene()
        self.ball = self.scene.model.body_index("ball")
        self.evaluations = 0

    def final_state(self, velocities):
        """The ball's flat state (p, q, v, ω) after 5 s from initial velocities (v, ω)."""
        state = self.scene.state.copy()
        state.linear_velocity[self.ball] = velocities[:3]
        state.angular_velocity[self.ball] = velocities[3:]
        trajectory, _ = dp.Simulator(self.scene.model, self.scene.params, state).run(STEPS)
        self.evaluations += 1
        return trajectory[-1, 13 * self.ball:13 * (self.ball + 1)]

    @staticmethod
    def errors(final):
        """Position error (m), speed (m/s) and surface speed r|ω| (m/s) at 5 s."""
        return (float(np.linalg.norm(final[0:3] - TARGET)), float(np.linalg.norm(final[7:10])),
                RADIUS * float(np.linalg.norm(final[10:13])))

    def objective(self, velocities):
        final = self.final_state(velocities)
        position, linear, angular = self.errors(final)
        return position ** 2 + linear ** 2 + angular ** 2


def main(argv=None):
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--quick", action="store_true", help="tolerance 0.1 instead of 0.01 (CI)")
    arguments.add_argument("--max-evaluations", type=int, default=None)
    arguments.add_argument("--seed", type=int, default=1)
    options = arguments.parse_args(argv)
    tolerance = 0.1 if options.quick else 0.01
    max_evaluations = options.max_evaluations or (4000 if options.quick else 20000)

    task = Task()
    optimizer = CMA(mean=np.zeros(6), sigma=3.0, seed=options.seed)
    start = time.perf_counter()
    best_value, best_velocities, generation, solved = np.inf, np.zeros(6), 0, False
    while task.evaluations < max_evaluations and not solved:
        solutions = []
        for _ in range(optimizer.population_size):
            velocities = optimizer.ask()
            value = task.objective(velocities)
            solutions.append((velocities, value))
            if value < best_value:
                best_value, best_velocities = value, velocities
        optimizer.tell(solutions)
        generation += 1
        position, linear, angular = task.errors(task.final_state(best_velocities))
        task.evaluations -= 1  # that check is bookkeeping, not a search evaluation
        solved = position < tolerance and linear < tolerance and angular < tolerance
        if generation % 10 == 0 or solved:
            print(f"generation {generation:4d}  evaluations {task.evaluations:6d}  best objective {best_value:.3e}  "
                  f"(position error {position:.4f} m, |v| {linear:.4f} m/s, r|ω| {angular:.4f} m/s)", flush=True)
    elapsed = time.perf_counter() - start
    position, linear, angular = task.errors(task.final_state(best_velocities))
    result = {"experiment": "ball-throw", "method": "CMA-ES", "solved": bool(solved), "tolerance": tolerance,
              "evaluations": task.evaluations - 1, "generations": generation, "seconds": round(elapsed, 3),
              "position_error": position, "linear_speed": linear, "surface_speed": angular,
              "initial_linear_velocity": best_velocities[:3].tolist(),
              "initial_angular_velocity": best_velocities[3:].tolist(),
              "paper_cmaes": {"iterations": 2422, "seconds": 59.9}, "paper_bptt": {"iterations": 88, "seconds": 16.3}}
    print(("solved" if solved else "NOT solved") + f" after {result['evaluations']} evaluations "
          f"({generation} generations) in {elapsed:.1f} s")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
