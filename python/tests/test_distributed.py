"""Data-parallel training across processes (python/examples/distributed_sysid.py): the same
fit run as one process and as two processes on this machine (torch.distributed, gloo, env://
rendezvous) gives the same stiffnesses and loss history, bit for bit, and the loss falls."""

import json
import os
import subprocess
import sys

from conftest import EXAMPLES


def run_example(tmp_path, processes):
    out = tmp_path / f"fit_{processes}.json"
    env = dict(os.environ)
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    subprocess.run([sys.executable, str(EXAMPLES / "distributed_sysid.py"), "--quick", "--processes", str(processes),
                    "--out", str(out)], check=True, env=env, timeout=300)
    return json.loads(out.read_text())


def test_two_processes_give_the_one_process_fit_bit_for_bit(tmp_path):
    one = run_example(tmp_path, 1)
    two = run_example(tmp_path, 2)
    assert one["processes"] == 1 and two["processes"] == 2
    assert two["stiffness"] == one["stiffness"]
    assert two["loss"] == one["loss"]
    assert one["loss"][-1] < 0.1 * one["loss"][0]
