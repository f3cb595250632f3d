"""Soft-body system identification through diffphys.torch: recover a hanging rubber beam's
Young's modulus from an observed trajectory.

The beam of examples/soft/hanging_beam.json (neo-Hookean tetrahedra, 0.6 m long, pinned at
x = 0) is released straight and sags under gravity. The observation is its node trajectory
simulated at the scene's modulus, E = 2e5 Pa (noise-free). The fit starts 4× too soft and
minimises the mean squared distance between simulated and observed node positions, relative
to the observed motion, over log E with L-BFGS (strong Wolfe line search); every evaluation's
gradient is one WorldRollout.backward, through diffphys.torch.world_rollout.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/fit_soft_stiffness.py [--quick]

--quick: a coarser beam (6 × 1 × 1 cells instead of 12 × 2 × 2) over 20 steps instead of 40,
for the test suite. Returns (and prints as a JSON line) the true, starting and fitted moduli.
"""

import argparse
import json
import math
import pathlib
import time

import torch

import diffphys as dp
from diffphys import torch as dpt

SCENE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "soft" / "hanging_beam.json"
MODULUS = "soft/tet_material/rubber/youngs_modulus"


def load_beam(quick):
    """The hanging beam as a World; --quick coarsens its mesh."""
    scene = json.loads(SCENE.read_text())
    if quick:
        scene["soft"]["tet_boxes"][0]["cells"] = [6, 1, 1]
    return dp.parse_world(json.dumps(scene), str(SCENE), str(SCENE.parent))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="coarse beam, 20 steps (the test suite's run)")
    parser.add_argument("--start", type=float, default=5e4, help="initial guess of Young's modulus, Pa")
    parser.add_argument("--evaluations", type=int, default=30, help="most loss and gradient evaluations")
    args = parser.parse_args(argv)

    world = load_beam(args.quick)
    layout = world.layout
    steps = 20 if args.quick else 40
    x0 = torch.from_numpy(world.initial_state())
    controls = torch.zeros(steps, layout.control_count, dtype=torch.float64)  # no applied forces
    theta = torch.from_numpy(world.default_params())
    modulus_index = torch.tensor([layout.param_slice(MODULUS).offset])
    true_modulus = theta[modulus_index].item()
    positions = layout.state_slice("soft/positions").range

    def simulate(log_modulus):
        """(T + 1, 3 nnode) node positions with E = exp(log_modulus); differentiable."""
        params = theta.index_put((modulus_index,), log_modulus.exp().reshape(1))
        return dpt.world_rollout(world, x0, controls, params)[:, positions]

    with torch.no_grad():
        observed = simulate(torch.tensor(math.log(true_modulus), dtype=torch.float64))
    motion = (observed - observed[0]).square().mean()  # the observed motion's mean square, m²

    log_modulus = torch.tensor(math.log(args.start), dtype=torch.float64, requires_grad=True)
    optimiser = torch.optim.LBFGS([log_modulus], lr=1.0, max_iter=args.evaluations, max_eval=args.evaluations,
                                  tolerance_grad=1e-12, tolerance_change=1e-16, line_search_fn="strong_wolfe")
    losses = []

    def closure():
        optimiser.zero_grad()
        loss = (simulate(log_modulus) - observed).square().mean() / motion
        loss.backward()
        losses.append(loss.item())
        print(f"evaluation {len(losses):2d}: E = {log_modulus.exp().item():12.2f} Pa, loss {loss.item():.3e}, "
              f"dL/dlogE {log_modulus.grad.item():+.3e}")
        return loss

    start = time.process_time()
    optimiser.step(closure)
    seconds = time.process_time() - start
    fitted = log_modulus.exp().item()
    result = {"nodes": layout.state_slice("soft/positions").size // 3, "steps": steps, "true_modulus": true_modulus,
              "start_modulus": args.start, "fitted_modulus": fitted,
              "relative_error": abs(fitted - true_modulus) / true_modulus, "first_loss": losses[0],
              "final_loss": losses[-1], "evaluations": len(losses), "cpu_seconds": seconds}
    print(f"E: {args.start:.0f} Pa → {fitted:.2f} Pa (true {true_modulus:.0f} Pa, relative error "
          f"{result['relative_error']:.1e}) in {len(losses)} evaluations, {seconds:.1f} s of CPU")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
