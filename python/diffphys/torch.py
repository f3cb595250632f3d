"""diffphys.torch — rollouts and single steps as differentiable PyTorch functions.

* ``world_rollout(world, x0, controls, params)`` runs T = len(controls) world steps of any world
  (rigid, soft or both coupled: ``diffphys.load_world``) and returns every flat world state
  x_0 … x_T as a (T + 1, state_size) tensor; a loss on it backpropagates to x0, controls and
  params through ``WorldRollout.backward`` (exact gradients, docs/gradients.md).
* ``rollout(model, x0, controls, params)`` is the same on the rigid world of a Model: states
  (T + 1, 13 nbody), controls (T, nactuator).
* ``step(model, x, u, params)`` is one step, x_t → x_{t+1}: a torch policy (``nn.Module``) can
  act in closed loop and be trained by backpropagation through time.
* ``render(world, states, params, camera=NAME)`` is what a world's camera sees of states
  (…, state_size): colour (…, H, W, 3) and depth (…, H, W), differentiable w.r.t. the states,
  θ and optionally the camera's pose and field of view; ``render(world_rollout(...))``
  backpropagates through the camera into x0, controls and θ (docs/camera.md).

Everything is float64 (the engine's precision); inputs are converted to it. Rigid state vectors
are 13 per body, body 0 (the world) included, ``[p, q (w, x, y, z), v, ω]`` (``diffphys.layout``);
a world's state has its rigid slices first, then its soft ones (``soft/positions``,
``soft/velocities``: 3 per node, plain coordinates), as ``world.layout`` names them.
The quaternions of x0 are normalised inside (by torch operations, so that the gradient is
that of the normalised input and finite differences of any quaternion component agree with
it); the engine's tangent gradients (12 per body, a world-frame rotation increment) are
converted to quaternion gradients by the chain rule of ``diffphys.layout``.

Static bodies (the world, fixed obstacles) are scenery, not differentiated state: their
rows of x0 get a zero gradient (and should not be changed). The backward pass holds the
forward pass's contact set and active set fixed (docs/gradients.md); double backward is not
supported.
"""

import weakref

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from . import _core
from . import layout

__all__ = ["rollout", "world_rollout", "step", "render", "normalize_quaternions", "state_tensor", "params_tensor",
           "positions", "orientations", "linear_velocities", "angular_velocities", "RolloutFunction",
           "WorldRolloutFunction", "WorldBatchRolloutFunction", "StepFunction", "RenderFunction"]

VECTOR = layout.VECTOR


def _as_double(value):
    if isinstance(value, torch.Tensor):
        return value.to(torch.float64)
    return torch.as_tensor(np.asarray(value, dtype=np.float64))


def state_tensor(state):
    """The flat state vector (13 nbody) of a diffphys.State, as a float64 tensor."""
    return torch.from_numpy(state.to_vector())


def params_tensor(params):
    """θ of a diffphys.Params as a float64 tensor (a copy)."""
    return torch.from_numpy(np.array(params.values, dtype=np.float64))


def normalize_quaternions(x):
    """x (…, 13 nbody) with every body's quaternion divided by its norm (differentiable)."""
    per_body = x.reshape(x.shape[:-1] + (x.shape[-1] // VECTOR, VECTOR))
    q = per_body[..., 3:7]
    q = q * (q * q).sum(dim=-1, keepdim=True).rsqrt()
    return torch.cat([per_body[..., 0:3], q, per_body[..., 7:13]], dim=-1).reshape(x.shape)


def _field(x, first, last):
    per_body = x.reshape(x.shape[:-1] + (x.shape[-1] // VECTOR, VECTOR))
    return per_body[..., first:last]


def positions(x):
    """(…, nbody, 3) centres of mass from state vectors (…, 13 nbody)."""
    return _field(x, 0, 3)


def orientations(x):
    """(…, nbody, 4) quaternions (w, x, y, z)."""
    return _field(x, 3, 7)


def linear_velocities(x):
    """(…, nbody, 3) m/s."""
    return _field(x, 7, 10)


def angular_velocities(x):
    """(…, nbody, 3) rad/s, world frame."""
    return _field(x, 10, 13)


def _static_rows(model, width_per_body):
    """Indices of the entries of static bodies (the world included) in a per-body layout."""
    static = [index for index, body in enumerate(model.bodies) if body.type == _core.BodyType.Static]
    return np.concatenate([np.arange(width_per_body * b, width_per_body * (b + 1)) for b in static]).astype(int) \
        if static else np.zeros(0, dtype=int)


def _normalize_rigid(x, rigid):
    """x (…, state_size) with the quaternions of its first `rigid` entries (13 per body) normalised."""
    if rigid == 0:
        return x
    return torch.cat([normalize_quaternions(x[..., :rigid]), x[..., rigid:]], dim=-1)


def _tangent_gradient(state_gradient, states, rigid):
    """dL/dx in the tangent layout from dL/d(flat world state): the rigid slices' quaternion
    gradients become rotation increments (diffphys.layout); the soft slices are taken as they are."""
    if rigid == 0:
        return state_gradient
    rigid_part = layout.tangent_gradient_from_quaternion(state_gradient[..., :rigid], states[..., :rigid])
    return np.concatenate([rigid_part, state_gradient[..., rigid:]], axis=-1)


def _state_gradient(tangent_gradient, states, rigid):
    """dL/d(flat world state) from dL/dx in the tangent layout (the inverse direction)."""
    if rigid == 0:
        return np.array(tangent_gradient)
    rigid_tangent = rigid // VECTOR * layout.TANGENT
    rigid_part = layout.quaternion_gradient_from_tangent(tangent_gradient[..., :rigid_tangent], states[..., :rigid])
    return np.concatenate([rigid_part, tangent_gradient[..., rigid_tangent:]], axis=-1)


def _world_static_rows(world):
    return _static_rows(world.rigid.model, VECTOR) if world.has_rigid() else np.zeros(0, dtype=int)


class _Engine:
    """An engine (a WorldRollout or a WorldBatch) and the number of forward passes it has run,
    so that a backward pass can tell whether a later call has reused it since its own."""

    def __init__(self, engine):
        self.engine, self.runs = engine, 0


class _EnginePool:
    """Engines kept between calls, per world object and per kind of call, so that the calls of a
    training loop reuse the engines' buffers: an engine's first run allocates every step's
    records (for 64 arms over 50 steps, the first run of a WorldBatch takes 1.5–10× its later
    ones). A forward pass takes an idle engine (or makes one); its backward pass gives it back,
    and so does a forward pass that no gradient can reach. A World cannot be changed from
    Python, so an engine made for a world object stays right for it; the entry holds the world
    weakly and is dropped with it."""

    def __init__(self, keep=2):
        self._idle, self._keep = {}, keep

    def take(self, world, key, make):
        idle = self._idle.get((id(world),) + key, [])
        while idle:
            owner, handle = idle.pop()
            if owner() is world:
                handle.runs += 1
                return handle
        handle = _Engine(make())
        handle.runs = 1
        return handle

    def give(self, world, key, handle):
        full_key = (id(world),) + key
        idle = [(owner, h) for owner, h in self._idle.get(full_key, []) if owner() is world]
        if len(idle) < self._keep:
            idle.append((weakref.ref(world), handle))
        self._idle[full_key] = idle
        for stale in [k for k, entries in self._idle.items() if entries and entries[0][0]() is None]:
            del self._idle[stale]


_engines = _EnginePool()


def _options_key(options):
    return (options.checkpoint_interval, options.memory_budget, options.gradient_decay, options.gradient_clip,
            options.parameter_gradients)


def _backward_possible(*inputs):
    """Whether a backward pass can reach the rollout's inputs (grad mode on, some input requiring a
    gradient); decided outside the Function, where grad mode is still the caller's."""
    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in inputs)


def _rollout_forward(ctx, handle, key, states, world, static, backward_possible):
    """Keeps what the backward pass needs: the engine (a WorldRollout or a WorldBatch, from the
    pool) and its states; gives the engine back at once when no backward pass can come."""
    ctx.handle, ctx.runs, ctx.key, ctx.world = handle, handle.runs, key, world
    ctx.static, ctx.rigid = static, world.layout.soft_state_offset
    if not backward_possible:
        _engines.give(world, key, handle)
    states = torch.from_numpy(states)
    ctx.save_for_backward(states)
    return states


def _world_rollout_forward(ctx, x0, controls, params, world, options, static, backward_possible):
    key = ("rollout", _options_key(options))
    theta = params.detach().cpu().numpy()
    handle = _engines.take(world, key, lambda: _core.WorldRollout(world, theta, options))
    handle.engine.run(x0.detach().cpu().numpy(), controls.detach().cpu().numpy(), controls.shape[0], params=theta)
    return _rollout_forward(ctx, handle, key, handle.engine.states(), world, static, backward_possible)


def _rollout_backward(ctx, states_gradient):
    """(dL/dx0, dL/dcontrols, dL/dθ) through WorldRollout.backward or WorldBatch.backward."""
    (states,) = ctx.saved_tensors
    if ctx.handle.runs != ctx.runs:
        raise _core.Error("diffphys.torch: this rollout's engine has run a later call since its forward pass, so its "
                          "tape is gone; a graph is reversed once (call backward before the next rollout, or do not "
                          "rely on retain_graph for diffphys rollouts)")
    states_numpy = states.numpy()
    tangent = _tangent_gradient(states_gradient.detach().cpu().numpy(), states_numpy, ctx.rigid)
    gradients = ctx.handle.engine.backward(tangent)
    _engines.give(ctx.world, ctx.key, ctx.handle)
    if not isinstance(gradients, tuple):
        gradients = gradients.initial_state, gradients.controls, gradients.params
    x0_gradient = _state_gradient(np.array(gradients[0]), states_numpy[..., 0, :], ctx.rigid)
    x0_gradient[..., ctx.static] = 0.0  # static bodies are scenery, not differentiated state
    params_gradient = None
    if gradients[2].size > 0:
        params_gradient = torch.from_numpy(np.array(gradients[2]))
    elif ctx.needs_input_grad[2]:
        raise _core.Error("diffphys.torch: params require a gradient, but the RolloutOptions have "
                          "parameter_gradients off")
    return torch.from_numpy(x0_gradient), torch.from_numpy(np.array(gradients[1])), params_gradient


class WorldRolloutFunction(torch.autograd.Function):
    """(x0 with unit quaternions, controls (T, control_count), θ) → states (T + 1, state_size) of
    any world. Use ``world_rollout()``, which checks shapes and normalises the quaternions first."""

    @staticmethod
    def forward(ctx, x0, controls, params, world, options, static, backward_possible):
        return _world_rollout_forward(ctx, x0, controls, params, world, options, static, backward_possible)

    @staticmethod
    @once_differentiable
    def backward(ctx, states_gradient):
        return _rollout_backward(ctx, states_gradient) + (None, None, None, None)


class WorldBatchRolloutFunction(torch.autograd.Function):
    """(x0 (B, state_size) with unit quaternions, controls (B, T, control_count), θ (B,
    param_count)) → states (B, T + 1, state_size) of B copies of a world, through WorldBatch on
    `threads` threads. Use ``world_rollout()``, which checks shapes and normalises first."""

    @staticmethod
    def forward(ctx, x0, controls, params, world, options, static, threads, backward_possible):
        key = ("batch", x0.shape[0], threads, _options_key(options))
        handle = _engines.take(world, key, lambda: _core.WorldBatch(world, x0.shape[0], threads=threads, options=options))
        handle.engine.run(x0.detach().cpu().numpy(), controls.detach().cpu().numpy(), params.detach().cpu().numpy(),
                          controls.shape[1])
        return _rollout_forward(ctx, handle, key, handle.engine.states(), world, static, backward_possible)

    @staticmethod
    @once_differentiable
    def backward(ctx, states_gradient):
        return _rollout_backward(ctx, states_gradient) + (None, None, None, None, None)


class RolloutFunction(torch.autograd.Function):
    """(x0 with unit quaternions, controls (T, nactuator), θ) → states (T + 1, 13 nbody): the
    world rollout of the rigid world of `model`. Use ``rollout()``, which normalises the
    quaternions first."""

    @staticmethod
    def forward(ctx, x0, controls, params, model, options, backward_possible=True):
        return _world_rollout_forward(ctx, x0, controls, params, _rigid_world(model, params), options,
                                      _static_rows(model, VECTOR), backward_possible)

    @staticmethod
    @once_differentiable
    def backward(ctx, states_gradient):
        return _rollout_backward(ctx, states_gradient) + (None, None, None)


def _check_shape(what, name, tensor, expected, meaning):
    if tuple(tensor.shape) != expected:
        raise _core.Error(f"diffphys.torch.{what}: {name} must have shape {expected} ({meaning}), "
                          f"got {tuple(tensor.shape)}")


def world_rollout(world, x0, controls, params, options=None, threads=1):
    """States x_0 … x_T (T + 1, state_size) of any world (rigid, soft or coupled) from x0
    (state_size) under controls (T, control_count) with θ (param_count), differentiable w.r.t.
    x0, controls and params (world.layout names their slices; docs/python.md).

    Batched: x0 (B, state_size), controls (B, T, control_count) and params (B, param_count) run
    B copies of the world, each with its own inputs, in one ``diffphys.WorldBatch`` call on
    ``threads`` threads, and give states (B, T + 1, state_size) and each world's gradients — the
    bits of B separate calls, whatever the thread count.

    The rigid slices' quaternions are normalised and their gradients converted as in
    ``rollout()``; the soft slices (positions, velocities, forces) are plain. ``options``: a
    diffphys.RolloutOptions, applied to every part of the world."""
    x0, controls, params = _as_double(x0), _as_double(controls), _as_double(params)
    sizes = world.layout
    batch = (x0.shape[0],) if x0.dim() == 2 else ()
    what, axes = "world_rollout", ("B, " if batch else "")
    _check_shape(what, "x0", x0, batch + (sizes.state_size,), f"{axes}the state_size of world '{world.name}'")
    if controls.dim() != len(batch) + 2:
        raise _core.Error(f"diffphys.torch.world_rollout: controls must have shape ({axes}T, {sizes.control_count}), "
                          f"got {tuple(controls.shape)}")
    _check_shape(what, "controls", controls, batch + (controls.shape[-2], sizes.control_count),
                 f"{axes}T, control_count {sizes.control_count} per step")
    _check_shape(what, "params", params, batch + (sizes.param_count,), f"{axes}param_count")
    options = options if options is not None else _core.RolloutOptions()
    arguments = (_normalize_rigid(x0, sizes.soft_state_offset), controls, params, world, options,
                 _world_static_rows(world))
    possible = _backward_possible(x0, controls, params)
    if batch:
        return WorldBatchRolloutFunction.apply(*arguments, threads, possible)
    return WorldRolloutFunction.apply(*arguments, possible)


def _rigid_world(model, params):
    """The rigid World of `model` with θ `params` (a tensor); its initial state is a placeholder."""
    return _core.World(model, _core.Params(params.detach().cpu().numpy()), _core.State(model.body_count()))


def rollout(model, x0, controls, params, options=None):
    """States x_0 … x_T (T + 1, 13 nbody) of a rollout from x0 (13 nbody) under controls
    (T, nactuator) with parameters θ (nparam), differentiable w.r.t. x0, controls and params:
    ``world_rollout`` on the rigid world of `model`.

    For a model without actuators pass ``torch.zeros(T, 0)`` as controls. ``options``: a
    diffphys.RolloutOptions (checkpointing, gradient decay and clipping; parameter_gradients
    off when params need no gradient, which skips their work)."""
    x0 = _as_double(x0)
    controls = _as_double(controls)
    params = _as_double(params)
    width = VECTOR * model.body_count()
    if x0.shape != (width,):
        raise _core.Error(f"diffphys.torch.rollout: x0 must have shape ({width},) = 13 × {model.body_count()} "
                          f"bodies, got {tuple(x0.shape)}")
    if controls.dim() != 2 or controls.shape[1] != model.actuator_count():
        raise _core.Error(f"diffphys.torch.rollout: controls must have shape (T, {model.actuator_count()}), "
                          f"got {tuple(controls.shape)}")
    if params.shape != (model.param_count(),):
        raise _core.Error(f"diffphys.torch.rollout: params must have shape ({model.param_count()},), "
                          f"got {tuple(params.shape)}")
    return RolloutFunction.apply(normalize_quaternions(x0), controls, params, model,
                                 options if options is not None else _core.RolloutOptions(),
                                 _backward_possible(x0, controls, params))


class StepFunction(torch.autograd.Function):
    """(x (B, 13 nbody) with unit quaternions, u (B, nactuator), θ) → x' (B, 13 nbody): one step
    of each of B independent worlds sharing θ, as one WorldBatch of one step. Use ``step()``."""

    @staticmethod
    def forward(ctx, x, u, params, model):
        x_numpy, values = x.detach().cpu().numpy(), params.detach().cpu().numpy()
        engine = _core.WorldBatch(_rigid_world(model, params), x_numpy.shape[0])
        engine.run(x_numpy, u.detach().cpu().numpy()[:, None, :], np.broadcast_to(values, (len(x_numpy), len(values))))
        next_states = torch.from_numpy(engine.states()[:, 1])
        ctx.engine, ctx.static = engine, _static_rows(model, VECTOR)
        ctx.save_for_backward(x, next_states)
        return next_states

    @staticmethod
    @once_differentiable
    def backward(ctx, next_gradient):
        x, next_states = ctx.saved_tensors
        x_numpy = x.detach().cpu().numpy()
        tangent = layout.tangent_gradient_from_quaternion(next_gradient.detach().cpu().numpy(), next_states.numpy())
        loss_gradient = np.zeros((tangent.shape[0], 2, tangent.shape[1]))
        loss_gradient[:, 1] = tangent
        x_gradient, u_gradient, params_gradient = ctx.engine.backward(loss_gradient)
        x_gradient = layout.quaternion_gradient_from_tangent(x_gradient, x_numpy)
        x_gradient[:, ctx.static] = 0.0
        return (torch.from_numpy(x_gradient), torch.from_numpy(u_gradient[:, 0]),
                torch.from_numpy(params_gradient.sum(axis=0)), None)


def step(model, x, u, params):
    """x_{t+1} from x_t (13 nbody) and the controls u_t (nactuator), differentiable w.r.t. x, u
    and params — the building block of closed-loop BPTT with a torch policy.

    Batched: x (B, 13 nbody) and u (B, nactuator) step B independent worlds of the same model
    and θ (one C++ rollout each; the θ gradient is summed over the batch)."""
    x, u, params = _as_double(x), _as_double(u), _as_double(params)
    width, actuators = VECTOR * model.body_count(), model.actuator_count()
    batched = x.dim() == 2
    if x.shape[-1] != width or x.dim() not in (1, 2):
        raise _core.Error(f"diffphys.torch.step: x must have shape ({width},) or (B, {width}), got {tuple(x.shape)}")
    expected_u = (x.shape[0], actuators) if batched else (actuators,)
    if tuple(u.shape) != expected_u:
        raise _core.Error(f"diffphys.torch.step: u must have shape {expected_u}, got {tuple(u.shape)}")
    if params.shape != (model.param_count(),):
        raise _core.Error(f"diffphys.torch.step: params must have shape ({model.param_count()},), "
                          f"got {tuple(params.shape)}")
    result = StepFunction.apply(normalize_quaternions(x if batched else x.unsqueeze(0)),
                                u if batched else u.unsqueeze(0), params, model)
    return result if batched else result.squeeze(0)


class _CameraPool:
    """One diffphys.WorldCamera per (world object, camera name, thread count), kept between calls
    so that a training loop's frames reuse its buffers; held weakly by the world, as _EnginePool.
    A call sets the camera's pose and look before each use, so sharing it between calls is safe."""

    def __init__(self):
        self._cameras = {}

    def get(self, world, name, threads):
        key = (id(world), name, threads)
        entry = self._cameras.get(key)
        if entry is not None and entry[0]() is world:
            return entry[1]
        camera = _core.WorldCamera(world, name, threads=threads)
        for stale in [k for k, (owner, _) in self._cameras.items() if owner() is None]:
            del self._cameras[stale]
        self._cameras[key] = (weakref.ref(world), camera)
        return camera


_cameras = _CameraPool()


def _rotation_matrices(q):
    """(…, 3, 3) rotation matrices of unit quaternions q (…, 4), (w, x, y, z)."""
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)], axis=-2)


def _camera_frame_gradients(gradients, states, body):
    """The camera's position and rotation gradients summed over the frames, in the frame its pose
    is given in: the world's, or body B's for a carried camera — p_WC = p_WB + R_WB p_BC gives
    dL/dp_BC = R_WBᵀ dL/dp_WC, and q_BC' = exp(δφ) ⊗ q_BC turns C by δθ = R_WB δφ in the world,
    so dL/dδφ = R_WBᵀ dL/dδθ (R_WB of each frame's state)."""
    position, rotation = gradients["camera_position"], gradients["camera_rotation"]
    if body >= 0:
        to_body = _rotation_matrices(states[:, VECTOR * body + 3:VECTOR * body + 7])
        position = np.einsum("nji,nj->ni", to_body, position)
        rotation = np.einsum("nji,nj->ni", to_body, rotation)
    return position.sum(axis=0), rotation.sum(axis=0)


def _rotation_gradient_to_quaternion(rotation_gradient, q):
    """dL/dq (w, x, y, z) of a unit q from dL/dδθ, q' = exp(δθ) ⊗ q (diffphys.layout's formula)."""
    w, u = q[0], q[1:4]
    return np.concatenate([[-2.0 * rotation_gradient @ u],
                           2.0 * (w * rotation_gradient + np.cross(rotation_gradient, u))])


class RenderFunction(torch.autograd.Function):
    """(states (N, state_size) with unit quaternions, θ ((P,) or (N, P)), camera position (3),
    orientation (4, unit), vertical_fov (), shape colours (nshape, 3), then the appearance's
    textures, each (H_t, W_t, 3)) → colour (N, H, W, 3), depth (N, H, W) through a
    diffphys.WorldCamera. Use ``render()``, which checks and flattens the inputs."""

    @staticmethod
    def forward(ctx, states, params, position, orientation, fov, colours, engine, camera, appearance, rigid,
                *textures):
        camera.position = position.detach().cpu().numpy()
        camera.orientation = orientation.detach().cpu().numpy()
        camera.vertical_fov = float(fov.detach())
        looks = appearance.shapes
        for look, colour in zip(looks, colours.detach().cpu().numpy()):
            look.colour = colour
        appearance.shapes = looks
        appearance.textures = [_core.Texture(np.ascontiguousarray(t.detach().cpu().numpy())) for t in textures]
        engine.camera, engine.appearance = camera, appearance
        states_numpy, params_numpy = states.detach().cpu().numpy(), params.detach().cpu().numpy()
        colour, depth = engine.render(states_numpy, params_numpy)
        ctx.engine, ctx.camera, ctx.appearance, ctx.rigid = engine, camera, appearance, rigid
        ctx.save_for_backward(states, params, orientation)
        return torch.from_numpy(colour), torch.from_numpy(depth)

    @staticmethod
    @once_differentiable
    def backward(ctx, colour_gradient, depth_gradient):
        states, params, orientation = ctx.saved_tensors
        engine = ctx.engine
        engine.camera, engine.appearance = ctx.camera, ctx.appearance  # another call may have moved it
        states_numpy = states.numpy()
        gradients = engine.backward(states_numpy, params.numpy(),
                                    None if colour_gradient is None else colour_gradient.detach().cpu().numpy(),
                                    None if depth_gradient is None else depth_gradient.detach().cpu().numpy())
        states_gradient = _state_gradient(gradients["state"], states_numpy, ctx.rigid)
        params_gradient = gradients["params"]
        if params.dim() == 1:
            params_gradient = params_gradient.sum(axis=0)
        position, rotation = _camera_frame_gradients(gradients, states_numpy, ctx.camera.body)
        textures = tuple(torch.from_numpy(np.ascontiguousarray(t.sum(axis=0))) for t in gradients["textures"])
        return (torch.from_numpy(states_gradient), torch.from_numpy(np.ascontiguousarray(params_gradient)),
                torch.from_numpy(position),
                torch.from_numpy(_rotation_gradient_to_quaternion(rotation, orientation.numpy())),
                torch.tensor(gradients["vertical_fov"].sum(), dtype=torch.float64),
                torch.from_numpy(gradients["colours"].sum(axis=0)), None, None, None, None) + textures


def _floating(what, name, value):
    """`value` as a float64 tensor; refuses a tensor or array that is not of a floating type."""
    dtype = value.dtype if isinstance(value, (torch.Tensor, np.ndarray)) else None
    if dtype is not None and not (dtype.is_floating_point if isinstance(dtype, torch.dtype)
                                  else np.issubdtype(dtype, np.floating)):
        raise _core.Error(f"diffphys.torch.{what}: {name} must be floating-point, got dtype {dtype}")
    return _as_double(value)


def render(world, states, params, camera, *, threads=1, camera_position=None, camera_orientation=None,
           vertical_fov=None, colours=None, textures=None, appearance=None):
    """What camera ``camera`` (a name in ``world.cameras``) sees of each state: colour (…, H, W, 3)
    and depth (…, H, W) float64 tensors from states (…, state_size) — any leading axes, e.g. the
    (T + 1, state_size) of ``world_rollout`` — under θ ``params``: (param_count) for every frame,
    (…, param_count) one per frame, or with leading axes that begin the states' — e.g.
    (B, param_count) for the (B, T + 1, state_size) of a batched ``world_rollout``, each world's
    θ for its frames.

    Differentiable w.r.t. the states (the rigid bodies' positions and quaternions, which are
    normalised inside as in ``world_rollout``; velocities and soft slices do not change the
    image) and θ (the shape sizes), so that a loss on ``render(world, world_rollout(...), ...)``
    backpropagates into x0, controls and θ. ``camera_position`` (3), ``camera_orientation`` (4,
    w, x, y, z; normalised inside) and ``vertical_fov`` (rad) replace the scene camera's and are
    differentiated when they require a gradient — X_WC, or X_BC for a camera carried by body B,
    each in the frame the scene gives it in. ``colours`` (nshape, 3) replaces the shapes' albedos
    and is differentiated likewise (a textured plane's colour tints its texture). ``textures``, a
    list of (H_t, W_t, 3) tensors, one per texture of the appearance (a ShapeLook's ``texture``
    indexes it), replaces the appearance's texels and is differentiated likewise: the image is
    linear in each texel (bilinear sampling). ``appearance``: a
    diffphys.Appearance (light, textures, background and the colours ``colours`` does not give),
    else the scene's look for the camera. Frames are drawn one after the
    other, each on ``threads`` threads (bands of rows: the same bits for any thread count).
    Static bodies' rows get their true gradient (moving scenery moves the image)."""
    what = "render"
    states = _floating(what, "states", states)
    params = _floating(what, "params", params)
    names = [c.name for c in world.cameras]
    if camera not in names:
        raise _core.Error(f"diffphys.torch.render: world '{world.name}' has no camera {camera!r} "
                          f"({'its cameras: ' + ', '.join(repr(n) for n in names) if names else 'no cameras'})")
    sizes = world.layout
    if states.dim() < 1 or states.shape[-1] != sizes.state_size:
        raise _core.Error(f"diffphys.torch.render: states must have shape (..., {sizes.state_size}) (state_size of "
                          f"world '{world.name}'), got {tuple(states.shape)}")
    leading = tuple(states.shape[:-1])
    params_leading = tuple(params.shape[:-1])
    if params.dim() < 1 or params.shape[-1] != sizes.param_count or params_leading != leading[:len(params_leading)]:
        raise _core.Error(f"diffphys.torch.render: params must have shape ({sizes.param_count},), "
                          f"{leading + (sizes.param_count,)} (one θ per frame) or a prefix of the states' leading "
                          f"axes before param_count (e.g. (B, {sizes.param_count}) for states (B, T + 1, "
                          f"{sizes.state_size})), got {tuple(params.shape)}")
    if 0 < len(params_leading) < len(leading):  # one θ per leading index: the same θ for its frames
        extra = len(leading) - len(params_leading)
        params = params.reshape(params_leading + (1,) * extra + (sizes.param_count,)).expand(
            leading + (sizes.param_count,))
    engine = _cameras.get(world, camera, threads)
    scene_camera = world.cameras[names.index(camera)]  # a copy: this call's pose goes into it
    given = [value is not None for value in (camera_position, camera_orientation, vertical_fov)]
    position = _floating(what, "camera_position", camera_position if given[0] else scene_camera.position)
    orientation = _floating(what, "camera_orientation",
                            camera_orientation if given[1] else scene_camera.orientation)
    fov = _floating(what, "vertical_fov", vertical_fov if given[2] else scene_camera.vertical_fov)
    for name, value, shape in (("camera_position", position, (3,)), ("camera_orientation", orientation, (4,)),
                               ("vertical_fov", fov, ())):
        if tuple(value.shape) != shape:
            raise _core.Error(f"diffphys.torch.render: {name} must have shape {shape}, got {tuple(value.shape)}")
    orientation = orientation * (orientation * orientation).sum().rsqrt()
    flat_states = _normalize_rigid(states.reshape(-1, sizes.state_size), sizes.soft_state_offset)
    flat_params = params if params.dim() == 1 else params.reshape(-1, sizes.param_count)
    look = _core.Appearance(appearance) if appearance is not None else world.camera_appearance(camera)
    shape_count = len(look.shapes)
    albedos = _floating(what, "colours", colours if colours is not None
                        else np.array([shape.colour for shape in look.shapes]).reshape(shape_count, 3))
    if tuple(albedos.shape) != (shape_count, 3):
        raise _core.Error(f"diffphys.torch.render: colours must have shape ({shape_count}, 3) (one RGB albedo per "
                          f"shape), got {tuple(albedos.shape)}")
    given_textures = look.textures if textures is None else textures
    if textures is not None and len(textures) != len(look.textures):
        raise _core.Error(f"diffphys.torch.render: textures must list one (H, W, 3) tensor per texture of the "
                          f"appearance ({len(look.textures)}), got {len(textures)}")
    texels = []
    for index, texture in enumerate(given_textures):
        values = _floating(what, f"textures[{index}]", texture if textures is not None else texture.texels)
        if values.dim() != 3 or values.shape[2] != 3 or values.shape[0] < 1 or values.shape[1] < 1:
            raise _core.Error(f"diffphys.torch.render: textures[{index}] must have shape (H, W, 3), "
                              f"got {tuple(values.shape)}")
        texels.append(values)
    colour, depth = RenderFunction.apply(flat_states, flat_params, position, orientation, fov, albedos, engine,
                                         scene_camera, look, sizes.soft_state_offset, *texels)
    height, width = engine.height, engine.width
    return colour.reshape(leading + (height, width, 3)), depth.reshape(leading + (height, width))
