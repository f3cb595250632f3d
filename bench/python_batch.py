"""The batched torch call against a Python loop over single worlds (issue #22's throughput
target: ≥ 5× for B = 64), forward + backward through diffphys.torch.world_rollout.

Each repetition times, back to back (A B A B …, so that load on a shared machine falls on
both alike): one batched call for B worlds (x0 (B, state_size), controls (B, T, control_count),
params (B, param_count), `threads` threads) with loss.backward(); and B single-world calls in a
Python loop, each with its own backward. Both compute the same numbers (checked once). Prints
each repetition's ratio and the minimum, median and maximum.

    /usr/bin/python3 bench/python_batch.py [--scene examples/scenes/servo_arm.json]
        [--worlds 64] [--steps 100] [--threads 2] [--repeats 7]

Needs the module built (PYTHONPATH=build/python, as scripts/bench sets it).
"""

import argparse
import pathlib
import statistics
import time

import torch

import diffphys as dp
import diffphys.torch as dpt

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=str(ROOT / "examples/scenes/servo_arm.json"))
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    world = dp.load_world(args.scene)
    layout = world.layout
    generator = torch.Generator().manual_seed(1)
    x0 = torch.tensor(world.initial_state(), dtype=torch.float64).repeat(args.worlds, 1)
    controls = 0.1 * torch.randn(args.worlds, args.steps, layout.control_count, generator=generator, dtype=torch.float64)
    params = torch.tensor(world.default_params(), dtype=torch.float64).repeat(args.worlds, 1)
    weights = torch.randn(args.steps + 1, layout.state_size, generator=generator, dtype=torch.float64)

    def batched():
        c, p = controls.clone().requires_grad_(), params.clone().requires_grad_()
        states = dpt.world_rollout(world, x0, c, p, threads=args.threads)
        (states * weights).sum().backward()
        return c.grad, p.grad

    def loop():
        grads_c, grads_p = [], []
        for b in range(args.worlds):
            c, p = controls[b].clone().requires_grad_(), params[b].clone().requires_grad_()
            states = dpt.world_rollout(world, x0[b], c, p)
            (states * weights).sum().backward()
            grads_c.append(c.grad)
            grads_p.append(p.grad)
        return torch.stack(grads_c), torch.stack(grads_p)

    got, expected = batched(), loop()
    assert all(torch.equal(a, b) for a, b in zip(got, expected)), "the batched call must give the loop's bits"

    ratios, batched_seconds, loop_seconds = [], [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        batched()
        middle = time.perf_counter()
        loop()
        end = time.perf_counter()
        batched_seconds.append(middle - start)
        loop_seconds.append(end - middle)
        ratios.append((end - middle) / (middle - start))
        print(f"batched {middle - start:.3f} s, loop {end - middle:.3f} s, ratio {ratios[-1]:.2f}")
    print(f"{pathlib.Path(args.scene).name}: B = {args.worlds}, T = {args.steps}, {args.threads} threads, forward + backward: "
          f"loop / batched = {min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f} (min / median / max of "
          f"{args.repeats}); batched median {statistics.median(batched_seconds) * 1e3:.1f} ms, loop median "
          f"{statistics.median(loop_seconds) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
