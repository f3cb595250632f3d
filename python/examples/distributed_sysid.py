"""Data-parallel system identification across processes with torch.distributed (gloo).

A triangle of masses on three springs (examples/soft/mass_spring.json) is observed in B
trajectories, each from its own initial velocities, with the true spring stiffnesses (50 N/m).
Starting from wrong ones, the stiffnesses are fitted (Adam on log-stiffness) to the observed
positions through diffphys.torch.world_rollout. The B worlds are shared among the processes
(world b on process b mod P); every process computes the gradients of its worlds, the
per-world gradients are gathered (all_gather) and summed in world order on every process, so
the update — and the result, bit for bit — is the same for any number of processes,
including one.

    /usr/bin/python3 python/examples/distributed_sysid.py                 # one process
    /usr/bin/python3 python/examples/distributed_sysid.py --processes 2   # two, on this machine
    RANK=r WORLD_SIZE=n MASTER_ADDR=HOST MASTER_PORT=29500 \\
        /usr/bin/python3 python/examples/distributed_sysid.py             # process r of n, on any machine

Processes meet through torch.distributed's env:// rendezvous (the four variables above), the
variables torchrun sets; --processes P starts P local processes with them. (Debian 12's
torchrun, torch 1.13 on Python 3.11, fails in its own option handling before starting any
process, so the example does not rely on it.)

Options: --worlds B, --steps T, --iterations K, --quick (a shorter run), --processes P, --out FILE
(writes the fitted stiffnesses and the loss history as JSON, for the test that compares
process counts).
"""

import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import torch
import torch.distributed as dist

import diffphys as dp
import diffphys.torch as dpt

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENE = ROOT / "examples" / "soft" / "mass_spring.json"
TRUE_STIFFNESS = 50.0
START_STIFFNESS = [20.0, 80.0, 35.0]


def initial_states(world, worlds):
    """Each world's x0: the scene's rest positions with seeded random velocities (world b: seed b)."""
    x0 = world.initial_state()
    velocities = world.layout.state_slice("soft/velocities").range
    states = []
    for b in range(worlds):
        x = x0.copy()
        x[velocities] = np.random.default_rng(b).uniform(-0.5, 0.5, size=x[velocities].shape)
        states.append(torch.from_numpy(x))
    return states


def world_loss(world, x0, params, controls, observed):
    """Σ_t ‖positions_t − observed_t‖² of one world."""
    positions = world.layout.state_slice("soft/positions").range
    states = dpt.world_rollout(world, x0, controls, params)
    return ((states[:, positions] - observed[:, positions]) ** 2).sum()


def launch(processes):
    """Starts `processes` copies of this script on this machine, as torchrun would; the exit
    status is the first failure's, or 0."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    children = []
    for rank in range(processes):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(processes),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        children.append(subprocess.Popen([sys.executable, __file__] + sys.argv[1:], env=env))
    codes = [child.wait() for child in children]
    return next((code for code in codes if code != 0), 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--quick", action="store_true", help="4 worlds, 30 steps, 15 iterations")
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--processes", type=int, default=1, help="start this many local processes")
    args = parser.parse_args()
    if args.quick:
        args.worlds, args.steps, args.iterations = 4, 30, 15
    if args.processes > 1 and "RANK" not in os.environ:
        return launch(args.processes)

    distributed = "WORLD_SIZE" in os.environ  # one of several processes (env:// rendezvous)
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    processes = dist.get_world_size() if distributed else 1

    world = dp.load_world(str(SCENE))
    layout = world.layout
    stiffness = layout.param_slice("soft/spring_stiffness").range
    truth = torch.from_numpy(world.default_params())
    truth[stiffness] = TRUE_STIFFNESS
    controls = torch.zeros(args.steps, layout.control_count, dtype=torch.float64)
    states = initial_states(world, args.worlds)
    with torch.no_grad():
        observed = [dpt.world_rollout(world, x0, controls, truth) for x0 in states]

    log_k = torch.log(torch.tensor(START_STIFFNESS, dtype=torch.float64)).requires_grad_(True)
    optimiser = torch.optim.Adam([log_k], lr=0.1)
    mine = list(range(rank, args.worlds, processes))
    slots = len(range(0, args.worlds, processes))  # worlds per process, the first processes' count
    history = []
    for _ in range(args.iterations):
        optimiser.zero_grad()
        # Every world's (loss, dL/dlog k) on its process; the others' rows stay 0.
        local = torch.zeros(slots, 1 + log_k.numel(), dtype=torch.float64)
        for slot, b in enumerate(mine):
            params = truth.clone()
            params[stiffness] = torch.exp(log_k)
            loss = world_loss(world, states[b], params, controls, observed[b])
            (gradient,) = torch.autograd.grad(loss, log_k)
            local[slot, 0] = loss.detach()
            local[slot, 1:] = gradient
        if distributed:
            gathered = [torch.zeros_like(local) for _ in range(processes)]
            dist.all_gather(gathered, local)
        else:
            gathered = [local]
        # World b sits in process b mod P, slot b div P: sum in world order, the same on every process.
        total = torch.zeros(1 + log_k.numel(), dtype=torch.float64)
        for b in range(args.worlds):
            total = total + gathered[b % processes][b // processes]
        history.append(total[0].item() / args.worlds)
        log_k.grad = total[1:] / args.worlds
        optimiser.step()

    fitted = torch.exp(log_k).detach().numpy().tolist()
    if rank == 0:
        print(f"processes {processes}, worlds {args.worlds}, steps {args.steps}, iterations {args.iterations}")
        print(f"loss {history[0]:.6g} -> {history[-1]:.6g}; stiffness {START_STIFFNESS} -> "
              f"[{', '.join(f'{k:.6g}' for k in fitted)}] N/m (truth {TRUE_STIFFNESS})")
        if args.out is not None:
            args.out.write_text(json.dumps({"processes": processes, "stiffness": fitted, "loss": history}))
    if distributed:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
