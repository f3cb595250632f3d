// python/src/bind_rollout.cpp — diffphys/rollout.hpp: RolloutOptions, GradientHealth,
// Gradients, Controller (subclassable from Python: closed-loop rollouts) and Rollout.
//
// The Python Rollout owns what the C++ one only references (its Params, the controller), so
// nothing can dangle. The GIL is released during run() and backward(); Python callbacks (a
// controller, a loss-gradient function) take it back for the duration of each call and get
// fresh arrays, never views into C++ buffers. backward() takes the per-step loss gradients
// as one (T + 1, 12 nbody) array — the fast path, no Python call per step — or a callback.
#include "bindings.hpp"
#include "diffphys/rollout.hpp"
#include "loss_gradient.hpp"
#include "state_vector.hpp"

namespace diffphys::python {
namespace {

// A Python subclass of diffphys.Controller: act() and act_backward() are looked up on the
// Python object at each call (the GIL is taken for it).
class PythonController : public Controller {
 public:
  void act(int step, const State& state, std::span<double> controls) override {
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Controller*>(this), "act");
    if (!override) throw Error("Controller: a subclass must define act(step, state, controls)");
    py::array_t<double> controls_out(static_cast<py::ssize_t>(controls.size()));
    std::fill_n(controls_out.mutable_data(), controls.size(), 0.0);
    py::object result = override(step, state, controls_out);
    copy_result(result.is_none() ? py::object(controls_out) : result, controls, "Controller.act", false);
  }

  void act_backward(int step, const State& state, std::span<const double> control_gradient,
                    std::span<double> state_gradient) override {
    py::gil_scoped_acquire gil;
    py::function override = py::get_override(static_cast<const Controller*>(this), "act_backward");
    if (!override)
      throw Error(
          "Controller: closed-loop backward needs act_backward(step, state, control_gradient, state_gradient) "
          "adding (∂π/∂x)ᵀ ū into state_gradient (12 per body)");
    py::array control_gradient_copy = copy_of(control_gradient, {static_cast<py::ssize_t>(control_gradient.size())});
    py::array_t<double> state_gradient_out(static_cast<py::ssize_t>(state_gradient.size()));
    std::fill_n(state_gradient_out.mutable_data(), state_gradient.size(), 0.0);
    py::object result = override(step, state, control_gradient_copy, state_gradient_out);
    copy_result(result.is_none() ? py::object(state_gradient_out) : result, state_gradient, "Controller.act_backward",
                true);
  }

 private:
  // Writes (or adds) a Python array into a C++ span, checking its size.
  static void copy_result(const py::object& result, std::span<double> target, const char* what, bool add) {
    const DoubleArray array = py::cast<DoubleArray>(result);
    const auto source = checked_span(array, target.size(), what);
    for (std::size_t i = 0; i < target.size(); ++i) target[i] = add ? target[i] + source[i] : source[i];
  }
};

// Gradients plus the shapes NumPy needs.
struct BoundGradients : Gradients {
  int steps = 0;
  int actuator_count = 0;
};

// The Python-side Rollout: owns the Params it references and the controller of the last run.
struct BoundRollout {
  Model model;  // the caller's, warm start off, as inside Rollout (for states())
  py::object params_owner;
  const Params& params;
  Rollout rollout;
  py::object controller_owner;

  BoundRollout(const Model& model_in, py::object params_object, const RolloutOptions& options)
      : model(model_in),
        params_owner(std::move(params_object)),
        params(params_owner.cast<const Params&>()),
        rollout(model_in, params, options) {
    model.solver.warm_start = false;
  }
};

std::size_t body_tangent(const Model& model) {
  return static_cast<std::size_t>(kStateTangentPerBody * model.body_count());
}

}  // namespace

void bind_rollout(py::module_& module) {
  module.attr("STATE_TANGENT_PER_BODY") = kStateTangentPerBody;

  py::class_<RolloutOptions>(module, "RolloutOptions",
                             "Memory and long-horizon options of a Rollout (docs/gradients.md).")
      .def(
          py::init([](int checkpoint_interval, std::size_t memory_budget, double gradient_decay, double gradient_clip) {
            return RolloutOptions{checkpoint_interval, memory_budget, gradient_decay, gradient_clip};
          }),
          py::arg("checkpoint_interval") = 0, py::arg("memory_budget") = std::size_t{256} << 20,
          py::arg("gradient_decay") = 1.0, py::arg("gradient_clip") = 0.0)
      .def_readwrite("checkpoint_interval", &RolloutOptions::checkpoint_interval,
                     "Keep one state every k steps (0: every state if they fit in memory_budget, else ⌈√T⌉).")
      .def_readwrite("memory_budget", &RolloutOptions::memory_budget, "Bytes of stored states.")
      .def_readwrite("gradient_decay", &RolloutOptions::gradient_decay, "α ∈ (0, 1]: x̄_t ← α x̄_t per step back.")
      .def_readwrite("gradient_clip", &RolloutOptions::gradient_clip, "Clip |x̄_t| to this norm per step (0: off).")
      .def_readwrite("parameter_gradients", &RolloutOptions::parameter_gradients,
                     "dL/dθ too (False: Gradients.params stays empty; dL/dx_0 and dL/du_t only, faster).");

  py::class_<GradientHealth>(module, "GradientHealth", "What the backward pass saw.")
      .def_property_readonly(
          "state_gradient_norm",
          [](const GradientHealth& health) {
            return copy_of(health.state_gradient_norm, {static_cast<py::ssize_t>(health.state_gradient_norm.size())});
          },
          "(T + 1) |dL/dx_t|.")
      .def_readonly("first_non_finite_step", &GradientHealth::first_non_finite_step, "-1 if none.")
      .def_readonly("first_non_finite_stage", &GradientHealth::first_non_finite_stage)
      .def_readonly("contact_changes", &GradientHealth::contact_changes,
                    "Steps whose contact set differs from the previous.")
      .def_readonly("clipped_steps", &GradientHealth::clipped_steps)
      .def_readonly("solver_converged", &GradientHealth::solver_converged);

  py::class_<BoundGradients> gradients_class(
      module, "Gradients",
      "dL/dx_0 (12 per body, tangent layout), dL/du_t (T, nactuator), dL/dθ (Params layout), the health report. "
      "Arrays are views kept alive by this object.");
  bind_gradient_arrays<BoundGradients, &BoundGradients::actuator_count>(
      gradients_class, "(12 nbody) dL/dx_0: per body dL/dp, dL/dθ (world rotation increment), dL/dv, dL/dω.",
      "(T, nactuator) dL/du_t.", "(nparam) dL/dθ in the layout of Params.values.");
  gradients_class.def_readonly("health", &BoundGradients::health)
      .def_readonly("not_differentiable", &BoundGradients::not_differentiable,
                    "Parameter slices at a value where the loss is not differentiable, and x0/<body> for each static "
                    "body (fixed scenery: its rows of initial_state are zero).")
      .def(
          "param",
          [](py::object self, const Model& model, std::string_view name) {
            auto& g = self.cast<BoundGradients&>();
            const auto slice = g.param(model, name);
            return view(const_cast<double*>(slice.data()), {static_cast<py::ssize_t>(slice.size())}, self);
          },
          py::arg("model"), py::arg("name"), "dL/dθ of one named slice; raises diffphys.Error for an unknown name.");

  py::class_<Controller, PythonController>(
      module, "Controller",
      "Feedback inside a rollout (closed loop). Subclass it and define act(step, state, controls), writing "
      "the (nactuator) controls into `controls` or returning them, and, for backward, "
      "act_backward(step, state, control_gradient, state_gradient), adding (∂π/∂x_t)ᵀ ū_t (12 per body, "
      "tangent layout) into `state_gradient` or returning it, and accumulating the gradient of its own "
      "parameters. act_backward is called once per step, for t = T−1 down to 0.")
      .def(py::init<>());

  py::class_<BoundRollout>(module, "Rollout",
                           "A differentiable trajectory: run T steps, then backward() gives exact gradients of a "
                           "loss on the states w.r.t. x_0, every control and every parameter. Keeps `params` "
                           "alive and reads it at each run(): change it only between runs.")
      .def(py::init([](const Model& model, py::object params, const RolloutOptions& options) {
             params.cast<const Params&>();  // a TypeError here rather than later
             return std::make_unique<BoundRollout>(model, std::move(params), options);
           }),
           py::arg("model"), py::arg("params"), py::arg("options") = RolloutOptions{})
      .def(
          "run",
          [](BoundRollout& self, const State& initial, Controller& controller, int steps) {
            // The registered Python instance of `controller`, kept alive until the next run.
            self.controller_owner = py::cast(&controller, py::return_value_policy::reference);
            py::gil_scoped_release release;
            self.rollout.run(initial, controller, steps);
          },
          py::arg("initial"), py::arg("controller"), py::arg("steps"),
          "Closed loop: the controls of step t are controller.act(t, x_t).")
      .def(
          "run",
          [](BoundRollout& self, const State& initial, const std::optional<DoubleArray>& controls,
             std::optional<int> steps) {
            const auto actuators = self.model.actuator_count();
            if (!steps) {
              if (!controls || controls->ndim() != 2)
                throw Error("Rollout.run: give steps, or controls as a (steps, nactuator) array");
              steps = static_cast<int>(controls->shape(0));
            }
            std::span<const double> span;
            if (controls) {
              if (controls->ndim() == 2 && (controls->shape(0) != *steps || controls->shape(1) != actuators))
                throw Error(message("Rollout.run: controls must have shape (steps, nactuator) = (", *steps, ", ",
                                    actuators, "), got ", shape_text(*controls)));
              span = {controls->data(), static_cast<std::size_t>(controls->size())};
            }
            self.controller_owner = py::none();
            py::gil_scoped_release release;
            self.rollout.run(initial, span, *steps);
          },
          py::arg("initial"), py::arg("controls") = py::none(), py::arg("steps") = py::none(),
          "Open loop: controls (steps, nactuator) or None (all zero, then `steps` is required).")
      .def("steps", [](const BoundRollout& self) { return self.rollout.steps(); })
      .def(
          "controls",
          [](const BoundRollout& self) {
            const auto controls = self.rollout.controls();
            const py::ssize_t width = self.model.actuator_count();
            return copy_of(controls, {self.rollout.steps(), width});
          },
          "(T, nactuator) the controls used (given or the controller's), a copy.")
      .def("final_state", [](const BoundRollout& self) { return self.rollout.final_state(); })
      .def("statuses",
           [](const BoundRollout& self) {
             const auto statuses = self.rollout.statuses();
             return std::vector<StepStatus>(statuses.begin(), statuses.end());
           })
      .def(
          "state", [](const BoundRollout& self, int step) { return self.rollout.state(step); }, py::arg("step"),
          "x_t, from storage or recomputed from the nearest checkpoint.")
      .def(
          "states",
          [](const BoundRollout& self) {
            const int steps = self.rollout.steps();
            const int interval = self.rollout.checkpoint_interval();
            const auto width = static_cast<std::size_t>(kStateVectorPerBody * self.model.body_count());
            const auto actuators = static_cast<std::size_t>(self.model.actuator_count());
            py::array_t<double> result({static_cast<py::ssize_t>(steps) + 1, static_cast<py::ssize_t>(width)});
            double* out = result.mutable_data();
            {
              py::gil_scoped_release release;
              // Each checkpoint, then its segment stepped forward (warm start off: bit-identical).
              State current, next;
              Workspace workspace;
              const auto controls = self.rollout.controls();
              for (int t = 0; t <= steps; ++t) {
                if (t % interval == 0 || t == steps) {
                  current = self.rollout.state(t);
                } else {
                  step(self.model, self.params, current,
                       controls.subspan(static_cast<std::size_t>(t - 1) * actuators, actuators), next, workspace);
                  std::swap(current, next);
                }
                write_state_vector(current, {out + static_cast<std::size_t>(t) * width, width});
              }
            }
            return result;
          },
          "(T + 1, 13 nbody) every state x_0 … x_T as flat vectors (p, q(w,x,y,z), v, ω per body).")
      .def("checkpoint_interval", [](const BoundRollout& self) { return self.rollout.checkpoint_interval(); })
      .def("stored_state_bytes", [](const BoundRollout& self) { return self.rollout.stored_state_bytes(); })
      .def(
          "backward",
          [](const BoundRollout& self, const py::object& loss_gradient) {
            const int steps = self.rollout.steps();
            const LossGradientInput input(loss_gradient, steps, body_tangent(self.model), "Rollout.backward",
                                          "12 nbody");
            BoundGradients gradients;
            gradients.steps = steps;
            gradients.actuator_count = self.model.actuator_count();
            const LossGradient adapter = [&input](int t, const State& state, std::span<double> out) {
              input.add(
                  t, [&state] { return py::cast(state); }, out);
            };
            py::gil_scoped_release release;
            static_cast<Gradients&>(gradients) = self.rollout.backward(adapter);
            return gradients;
          },
          py::arg("loss_gradient"),
          "Exact gradients. loss_gradient: a (T + 1, 12 nbody) array of dL/dx_t (tangent layout: per body "
          "dL/dp, dL/dθ, dL/dv, dL/dω), or a callable f(t, state, gradient) that adds dL/dx_t into the "
          "(12 nbody) array `gradient` or returns it. Returns Gradients.");
}

}  // namespace diffphys::python
