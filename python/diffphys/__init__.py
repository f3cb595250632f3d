"""diffphys — a differentiable physics engine (C++) for rigid and soft bodies, from Python.

Everything of the C++ API is here under the same names (``ModelBuilder``, ``load_scene``,
``Simulator``, ``Rollout``, ``Params``, ``State``, ...), with NumPy arrays in and out.
``diffphys.torch`` (imported on demand) wraps rollouts and single steps as
``torch.autograd.Function``s. The layouts (flat state vectors, tangent gradients) are in
``diffphys.layout`` and docs/python.md.

Errors: bad input raises ``diffphys.Error`` (a ``ValueError``) with the C++ message, which
names the item and the value.
"""

from ._core import *  # noqa: F401,F403 — the bindings, one file per C++ header (python/src/)
from ._core import Error, STATE_TANGENT_PER_BODY, STATE_VECTOR_PER_BODY  # noqa: F401
from ._rollout import Controller, Gradients, Rollout  # noqa: F401 — the rigid rollout, over WorldRollout
from . import layout  # noqa: F401

__all__ = [name for name in dir() if not name.startswith("_")]
