"""The `diffphys` command from Python (diffphys._cli, the wheel's console script, and
`python -m diffphys`): it runs the C++ command-line program, whose output it must give
unchanged; without the program it says where it looked."""

import os
import pathlib
import subprocess
import sys

import pytest

import diffphys as dp
from diffphys import _cli
from conftest import SCENES

PACKAGE_PARENT = str(pathlib.Path(dp.__file__).resolve().parent.parent)


def without_wall_time(output):
    return [line for line in output.splitlines() if "wall time" not in line]


def run(arguments):
    environment = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    return subprocess.run(arguments, capture_output=True, text=True, env=environment, timeout=60)


def test_python_m_diffphys_runs_the_command_line_program():
    program = _cli.executable()
    for arguments in (["--version"], ["simulate", str(SCENES / "pendulum.json"), "-n", "20"]):
        direct = run([str(program), *arguments])
        through_python = run([sys.executable, "-m", "diffphys", *arguments])
        assert direct.returncode == 0 and len(without_wall_time(direct.stdout)) > 0
        assert through_python.returncode == 0
        assert without_wall_time(through_python.stdout) == without_wall_time(direct.stdout)
    failing = run([sys.executable, "-m", "diffphys", "simulate", "no_such_scene.json", "-n", "1"])
    assert failing.returncode != 0 and "no_such_scene.json" in failing.stderr


def test_a_package_without_the_program_says_where_it_looked(tmp_path):
    with pytest.raises(SystemExit, match=r"not part of this installation \(looked for .*bin/diffphys\)"):
        _cli.executable(tmp_path / "diffphys")
