"""State layouts of diffphys and the conversions between them (NumPy; docs/python.md).

* **State vector** (what ``State.to_vector``, ``Rollout.states`` and ``diffphys.torch`` use):
  13 numbers per body, body 0 (the world) included, in model order:
  ``[p (3), q (w, x, y, z) (4), v (3), ω (3)]`` — centre of mass (m), unit quaternion body →
  world, linear velocity (m/s), angular velocity (world frame, rad/s).
* **Tangent layout** (what the engine's gradients use, docs/gradients.md): 12 numbers per
  body, ``[dL/dp, dL/dθ, dL/dv, dL/dω]``, where θ is a world-frame rotation increment,
  ``q' = exp(δθ) ⊗ q``.

For a unit q, ``δq = ½ (0, δθ) ⊗ q`` and conversely ``δθ = 2 vec(δq ⊗ q*)``. Hence, with
g = dL/dθ and q = (w, u):

* quaternion gradient from the tangent one: ``dL/dw = −2 g·u``, ``dL/du = 2 (w g + g × u)``
  (orthogonal to q, as it must be for a loss defined on unit quaternions);
* tangent gradient from a quaternion one G = (G_w, G_u): ``g = ½ (−G_w u + w G_u + u × G_u)``
  (the component of G along q, which cannot move a unit quaternion, drops out).

Every function works on arrays whose last axis is the per-body layout times the body count,
with any leading batch axes (e.g. (T + 1, 13 nbody)).
"""

import numpy as np

VECTOR = 13   # numbers per body in a state vector
TANGENT = 12  # numbers per body in the tangent layout


def _per_body(array, width):
    array = np.asarray(array, dtype=np.float64)
    if array.shape[-1] % width != 0:
        raise ValueError(f"last axis of length {array.shape[-1]} is not a multiple of {width}")
    return array.reshape(array.shape[:-1] + (array.shape[-1] // width, width))


def quaternion_gradient_from_tangent(tangent_gradient, state_vector):
    """dL/d(state vector) (13 per body) from dL/dx in the tangent layout (12 per body).

    ``state_vector`` gives the quaternions at which to convert; both arrays share their
    leading axes."""
    g = _per_body(tangent_gradient, TANGENT)
    x = _per_body(state_vector, VECTOR)
    w, u = x[..., 3:4], x[..., 4:7]
    g_rotation = g[..., 3:6]
    out = np.empty(g.shape[:-1] + (VECTOR,))
    out[..., 0:3] = g[..., 0:3]
    out[..., 3:4] = -2.0 * np.sum(g_rotation * u, axis=-1, keepdims=True)
    out[..., 4:7] = 2.0 * (w * g_rotation + np.cross(g_rotation, u))
    out[..., 7:13] = g[..., 6:12]
    return out.reshape(out.shape[:-2] + (-1,))


def tangent_gradient_from_quaternion(vector_gradient, state_vector):
    """dL/dx in the tangent layout (12 per body) from dL/d(state vector) (13 per body)."""
    G = _per_body(vector_gradient, VECTOR)
    x = _per_body(state_vector, VECTOR)
    w, u = x[..., 3:4], x[..., 4:7]
    G_w, G_u = G[..., 3:4], G[..., 4:7]
    out = np.empty(G.shape[:-1] + (TANGENT,))
    out[..., 0:3] = G[..., 0:3]
    out[..., 3:6] = 0.5 * (-G_w * u + w * G_u + np.cross(u, G_u))
    out[..., 6:12] = G[..., 7:13]
    return out.reshape(out.shape[:-2] + (-1,))
