"""The rigid ``Rollout``, ``Controller`` and ``Gradients`` of diffphys (diffphys/rollout.hpp's
API, docs/python.md), as a thin layer over the world binding: a Rollout of a Model is a
``WorldRollout`` of the rigid world of that Model, whose flat state is the 13-per-body state
vector and whose tangent is the 12-per-body gradient layout, so its states and gradients are
the rigid engine's, bit for bit.

The Rollout keeps ``params`` (a Params) and copies its values into the world's θ at each
run() — change it only between runs, as in C++. States come back as ``State`` objects whose
time is the initial state's plus one ``model.dt`` per step, added as the engine adds it.
"""

import numpy as np

from . import _core


class Controller:
    """Feedback inside a rollout (closed loop). Subclass it and define act(step, state,
    controls), writing the (nactuator) controls into ``controls`` or returning them, and, for
    backward, act_backward(step, state, control_gradient, state_gradient), adding
    (∂π/∂x_t)ᵀ ū_t (12 per body, tangent layout) into ``state_gradient`` or returning it, and
    accumulating the gradient of its own parameters. act_backward is called once per step, for
    t = T−1 down to 0."""

    def act(self, step, state, controls):
        raise _core.Error("Controller: a subclass must define act(step, state, controls)")

    def act_backward(self, step, state, control_gradient, state_gradient):
        raise _core.Error("Controller: closed-loop backward needs act_backward(step, state, control_gradient, "
                          "state_gradient) adding (∂π/∂x)ᵀ ū into state_gradient (12 per body)")


class _Feedback(_core.WorldController):
    """A Controller seen by the world rollout: its flat x_t become States."""

    def __init__(self, controller, rollout):
        super().__init__()
        self.controller, self.rollout = controller, rollout

    def act(self, step, x, controls):
        return self.controller.act(step, self.rollout._state_of(step, x), controls)

    def act_backward(self, step, x, control_gradient, state_gradient):
        return self.controller.act_backward(step, self.rollout._state_of(step, x), control_gradient, state_gradient)


class Gradients:
    """dL/dx_0 (12 per body, tangent layout), dL/du_t (T, nactuator), dL/dθ (Params layout), the
    health report and the slices that are not differentiable (a WorldGradients' views)."""

    def __init__(self, world_gradients):
        self.world_gradients = world_gradients
        self.initial_state = world_gradients.initial_state
        self.controls = world_gradients.controls
        self.params = world_gradients.params
        self.health = world_gradients.rigid_health
        self.not_differentiable = world_gradients.not_differentiable

    def param(self, model, name):
        """dL/dθ of one named slice (a copy); raises diffphys.Error for an unknown name."""
        if len(self.params) != model.param_count():
            raise _core.Error(f"no gradient for '{name}': {len(self.params)} parameter gradients, the model has "
                              f"{model.param_count()} parameters (was RolloutOptions.parameter_gradients off?)")
        return _core.Params(self.params).slice(model, name)


class Rollout:
    """A differentiable trajectory: run T steps, then backward() gives exact gradients of a loss
    on the states w.r.t. x_0, every control and every parameter. Keeps ``params`` and reads it
    at each run(): change it only between runs."""

    def __init__(self, model, params, options=None):
        self.model, self.params = model, params
        self.world = _core.World(model, params, _core.State(model.body_count()))
        self.engine = _core.WorldRollout(self.world, params.values, options or _core.RolloutOptions())
        self._times = np.zeros(1)

    def run(self, initial, controls=None, steps=None):
        """Open loop: controls (steps, nactuator) or None (all zero; then ``steps`` is required).
        Closed loop: run(initial, controller, steps), the controls of step t being
        controller.act(t, x_t)."""
        actuators = self.model.actuator_count()
        if isinstance(controls, Controller):
            controls = _Feedback(controls, self)
        elif controls is not None:
            controls = np.asarray(controls, dtype=np.float64)
            if steps is None and controls.ndim == 2:
                steps = controls.shape[0]
        if steps is None:
            raise _core.Error("Rollout.run: give steps, or controls as a (steps, nactuator) array")
        if isinstance(controls, np.ndarray):
            if controls.shape != (steps, actuators) and (controls.ndim == 2 or controls.size != steps * actuators):
                raise _core.Error(f"Rollout.run: controls must have shape (steps, nactuator) = ({steps}, {actuators}), "
                                  f"got {controls.shape}")
            controls = controls.reshape(steps, actuators)
        # Each state's time, added one step at a time as the engine does (add.accumulate is sequential).
        self._times = np.add.accumulate(np.concatenate([[initial.time], np.full(max(steps, 0), self.model.dt)]))
        self.engine.run(initial.to_vector(), controls, steps, self.params.values)

    def _state_of(self, step, x):
        state = _core.State.from_vector(x)
        state.time = float(self._times[step])
        return state

    def steps(self):
        return self.engine.steps()

    def controls(self):
        """(T, nactuator) the controls used (given or the controller's), a copy."""
        return self.engine.controls()

    def final_state(self):
        return self._state_of(self.steps(), self.engine.final_state())

    def state(self, step):
        """x_t, from storage or recomputed from the nearest checkpoint."""
        return self._state_of(step, self.engine.state(step))

    def states(self):
        """(T + 1, 13 nbody) every state x_0 … x_T as flat vectors (p, q(w,x,y,z), v, ω per body)."""
        return self.engine.states()

    def statuses(self):
        return [status.rigid[0] for status in self.engine.statuses()]

    def checkpoint_interval(self):
        return self.engine.checkpoint_interval()

    def stored_state_bytes(self):
        return self.engine.stored_state_bytes()

    def gradient_health(self, gradients=None, probes=4, seed=1):
        """The gradient's health over the last run (WorldRollout.gradient_health; docs/gradients.md):
        a dict with the verdict, the growth of the final state's sensitivity, the largest
        one-step amplification, an explosion's onset and stage; pass the Gradients of a
        backward() for its |dL/dx_t| and first NaN."""
        world_gradients = gradients.world_gradients if gradients is not None else None
        return self.engine.gradient_health(world_gradients, probes, seed)

    def backward(self, loss_gradient):
        """Exact gradients. loss_gradient: a (T + 1, 12 nbody) array of dL/dx_t (tangent layout:
        per body dL/dp, dL/dθ, dL/dv, dL/dω), or a callable f(t, state, gradient) that adds
        dL/dx_t into the (12 nbody) array ``gradient`` or returns it. Returns Gradients."""
        if callable(loss_gradient):
            function = loss_gradient
            loss_gradient = lambda t, x, gradient: function(t, self._state_of(t, x), gradient)  # noqa: E731
        else:
            loss_gradient = np.asarray(loss_gradient, dtype=np.float64)
            expected = (self.steps() + 1, _core.STATE_TANGENT_PER_BODY * self.model.body_count())
            if loss_gradient.shape != expected:
                raise _core.Error(f"Rollout.backward: loss gradients must have shape (T + 1, 12 nbody) = {expected}, "
                                  f"got {loss_gradient.shape}")
        return Gradients(self.engine.backward(loss_gradient))
