"""Shared fixtures of the pytest suite: paths and small scenes built in code.

Run with the module on the path: PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
(ctest does this: `make test`)."""

import os
import pathlib
import sys

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("DIFFPHYS_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
SCENES = SOURCE_DIR / "examples" / "scenes"
EXAMPLES = SOURCE_DIR / "python" / "examples"
sys.path.insert(0, str(EXAMPLES))

import diffphys as dp  # noqa: E402


def tighten(model):
    """Solver and joint-projection tolerances far below the finite-difference steps, so that
    central differences measure the dynamics and not the solvers' stopping noise."""
    model.solver.tolerance = 1e-13
    model.solver.max_iterations = 200
    model.solver.stabilization_tolerance = 1e-15
    model.solver.stabilization_iterations = 50
    return model


@pytest.fixture
def falling_ball():
    """A 2 kg ball in free fall from 10 m, dt 10 ms, no ground."""
    builder = dp.ModelBuilder()
    builder.dt = 0.01
    builder.add_body(name="ball", position=(0, 0, 10), mass=2.0, shapes=[dp.ShapeSpec(type="sphere", radius=0.1)])
    return builder.build()


@pytest.fixture
def sliding_ball():
    """A ball on the ground, sliding along x and spinning (friction active every step)."""
    builder = dp.ModelBuilder()
    builder.dt = 0.01
    builder.add_ground_plane()
    builder.add_body(name="ball", position=(0, 0, 0.1), linear_velocity=(1.0, 0.2, 0), angular_velocity=(2.0, 0, 0),
                     mass=1.0, friction=0.4, shapes=[dp.ShapeSpec(type="sphere", radius=0.1)])
    return builder.build()


@pytest.fixture
def motor_pendulum():
    """A 1 kg bob 0.5 m from a hinge (axis y) at 1 m, driven by a motor, tilted 0.3 rad."""
    import math
    builder = dp.ModelBuilder()
    builder.dt = 0.01
    angle = 0.3
    builder.add_body(name="bob", position=(0.5 * math.sin(angle), 0, 1 + 0.5 * math.cos(angle)), mass=1.0,
                     shapes=[dp.ShapeSpec(type="sphere", radius=0.05)])
    builder.add_joint(name="hinge", type="revolute", child="bob", anchor=(0, 0, 1), axis=(0, 1, 0))
    builder.add_actuator(name="motor", type="motor", joint="hinge")
    return builder.build()
