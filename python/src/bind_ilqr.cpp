// python/src/bind_ilqr.cpp — diffphys/ilqr.hpp: iterative LQR and receding-horizon MPC over
// the diffphys step (SimulatorDynamics, exact Jacobians) or a linear system, with the
// quadratic cost, or dynamics and costs written in Python (subclasses of IlqrDynamics and
// IlqrCost, through the trampolines below). Flat states are the 13-per-body vectors of
// State.to_vector(), perturbed in the 12-per-body tangent layout; matrices are NumPy arrays,
// row-major as in C++. The GIL is released while planning and taken back for Python methods.
#include "bindings.hpp"
#include "diffphys/ilqr.hpp"

namespace diffphys::python {
namespace {

std::size_t size_of(int size) {
  return static_cast<std::size_t>(size);
}

std::vector<double> vector_from(std::span<const double> values) {
  return {values.begin(), values.end()};
}

// An iLQR result with the sizes that give its arrays their shapes: T = horizon steps from a
// flat state of `state_size`; the control and tangent sizes follow from the arrays.
struct IlqrPlan {
  IlqrResult result;
  py::ssize_t horizon = 0, state_size = 0, control_size = 0, tangent_size = 0;
};

IlqrPlan plan_of(IlqrResult result, int horizon, std::size_t state_size) {
  IlqrPlan plan{std::move(result), horizon, static_cast<py::ssize_t>(state_size), 0, 0};
  plan.control_size = static_cast<py::ssize_t>(plan.result.controls.size()) / plan.horizon;
  if (plan.control_size > 0)
    plan.tangent_size = static_cast<py::ssize_t>(plan.result.feedback.size()) / (plan.horizon * plan.control_size);
  return plan;
}

// The name of `object`'s type, for error messages.
std::string type_name(py::handle object) {
  return py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>();
}

// Copies what a Python method returned into `out` after checking that it is an array of numbers
// of `shape`; `what` names the method and the value.
void copy_returned(py::handle returned, const std::vector<py::ssize_t>& shape, std::span<double> out,
                   const std::string& what) {
  const auto array = DoubleArray::ensure(returned);
  if (!array) throw Error(message(what, " must be an array of numbers, got ", type_name(returned)));
  const auto values = shaped(array, shape, what);
  std::copy(values.begin(), values.end(), out.begin());
}

// The override `name` of a Python subclass, or an Error saying the subclass must define it.
template <typename Base>
py::function required_override(const Base* self, const char* name, const char* signature) {
  py::function override = py::get_override(self, name);
  if (!override) throw Error(message(signature, ": a Python subclass must define it"));
  return override;
}

// IlqrDynamics written in Python: state_size(), control_size(), step(state, controls) -> next and
// linearize(state, controls) -> (next, A, B); tangent_size() and difference() are optional
// (default: the state itself, x − x_ref).
class PythonIlqrDynamics : public IlqrDynamics {
 public:
  int state_size() const override { return size("state_size"); }
  int control_size() const override { return size("control_size"); }
  int tangent_size() const override {
    py::gil_scoped_acquire gil;
    if (py::function override = py::get_override(static_cast<const IlqrDynamics*>(this), "tangent_size"))
      return override().cast<int>();
    return state_size();
  }
  void step(std::span<const double> state, std::span<const double> controls, std::span<double> next) override {
    py::gil_scoped_acquire gil;
    const py::object returned = required_override<IlqrDynamics>(this, "step", "IlqrDynamics.step(state, controls)")(
        vector_of(state), vector_of(controls));
    copy_returned(returned, {static_cast<py::ssize_t>(next.size())}, next, "IlqrDynamics.step: the next state");
  }
  void linearize(std::span<const double> state, std::span<const double> controls, std::span<double> next,
                 std::span<double> A, std::span<double> B) override {
    py::gil_scoped_acquire gil;
    const py::object returned = required_override<IlqrDynamics>(
        this, "linearize", "IlqrDynamics.linearize(state, controls)")(vector_of(state), vector_of(controls));
    if (!py::isinstance<py::tuple>(returned) || py::len(returned) != 3)
      throw Error(message("IlqrDynamics.linearize must return a tuple (next, A, B), got ", type_name(returned)));
    const auto parts = returned.cast<py::tuple>();
    const auto n = static_cast<py::ssize_t>(next.size()), tangent = static_cast<py::ssize_t>(tangent_size()),
               m = static_cast<py::ssize_t>(controls.size());
    copy_returned(parts[0], {n}, next, "IlqrDynamics.linearize: next");
    copy_returned(parts[1], {tangent, tangent}, A, "IlqrDynamics.linearize: A (tangent, tangent)");
    copy_returned(parts[2], {tangent, m}, B, "IlqrDynamics.linearize: B (tangent, control)");
  }
  void difference(std::span<const double> state, std::span<const double> reference,
                  std::span<double> tangent) override {
    py::gil_scoped_acquire gil;
    if (py::function override = py::get_override(static_cast<const IlqrDynamics*>(this), "difference")) {
      copy_returned(override(vector_of(state), vector_of(reference)), {static_cast<py::ssize_t>(tangent.size())},
                    tangent, "IlqrDynamics.difference");
      return;
    }
    IlqrDynamics::difference(state, reference, tangent);
  }

 private:
  int size(const char* name) const {
    py::gil_scoped_acquire gil;
    return required_override<IlqrDynamics>(this, name, message("IlqrDynamics.", name, "()").c_str())().cast<int>();
  }
};

// IlqrCost written in Python: stage(step, state, controls, derivatives) and final(state,
// derivatives) return the cost and, when `derivatives` is not None, add their derivatives into
// its arrays (views of the C++ buffers, valid during the call).
class PythonIlqrCost : public IlqrCost {
 public:
  double stage(int step, std::span<const double> state, std::span<const double> controls,
               CostDerivatives* derivatives) override {
    py::gil_scoped_acquire gil;
    return value_of(required_override<IlqrCost>(this, "stage", "IlqrCost.stage(step, state, controls, derivatives)")(
                        step, vector_of(state), vector_of(controls), derivatives_object(derivatives)),
                    "IlqrCost.stage");
  }
  double final(std::span<const double> state, CostDerivatives* derivatives) override {
    py::gil_scoped_acquire gil;
    return value_of(required_override<IlqrCost>(this, "final", "IlqrCost.final(state, derivatives)")(
                        vector_of(state), derivatives_object(derivatives)),
                    "IlqrCost.final");
  }

 private:
  static py::object derivatives_object(CostDerivatives* derivatives) {
    if (!derivatives) return py::none();
    return py::cast(derivatives, py::return_value_policy::reference);
  }
  static double value_of(const py::object& returned, const char* what) {
    try {
      return returned.cast<double>();
    } catch (const py::cast_error&) {
      throw Error(message(what, " must return a number, got ", type_name(returned)));
    }
  }
};

template <typename DynamicsClass>
void bind_dynamics_methods(DynamicsClass& dynamics) {
  dynamics.def("state_size", &IlqrDynamics::state_size, "Length of a flat state.")
      .def("tangent_size", &IlqrDynamics::tangent_size, "Length of a state perturbation (rows of A).")
      .def("control_size", &IlqrDynamics::control_size, "Length of a control vector.")
      .def(
          "step",
          [](IlqrDynamics& self, const DoubleArray& state, const DoubleArray& controls) {
            const auto x = checked_span(state, size_of(self.state_size()), "step: state");
            const auto u = checked_span(controls, size_of(self.control_size()), "step: controls");
            py::array_t<double> next(self.state_size());
            py::gil_scoped_release release;
            self.step(x, u, {next.mutable_data(), size_of(self.state_size())});
            return next;
          },
          py::arg("state"), py::arg("controls"), "x_{t+1} = f(x_t, u_t), (state_size).")
      .def(
          "linearize",
          [](IlqrDynamics& self, const DoubleArray& state, const DoubleArray& controls) {
            const auto x = checked_span(state, size_of(self.state_size()), "linearize: state");
            const auto u = checked_span(controls, size_of(self.control_size()), "linearize: controls");
            const py::ssize_t n = self.tangent_size(), m = self.control_size();
            py::array_t<double> next(self.state_size()), A({n, n}), B({n, m});
            {
              py::gil_scoped_release release;
              self.linearize(x, u, {next.mutable_data(), size_of(self.state_size())},
                             {A.mutable_data(), static_cast<std::size_t>(A.size())},
                             {B.mutable_data(), static_cast<std::size_t>(B.size())});
            }
            return py::make_tuple(next, A, B);
          },
          py::arg("state"), py::arg("controls"),
          "(next, A, B): f(x, u), A = ∂f/∂x (tangent × tangent) and B = ∂f/∂u (tangent × control).")
      .def(
          "difference",
          [](IlqrDynamics& self, const DoubleArray& state, const DoubleArray& reference) {
            const auto x = checked_span(state, size_of(self.state_size()), "difference: state");
            const auto r = checked_span(reference, size_of(self.state_size()), "difference: reference");
            py::array_t<double> tangent(self.tangent_size());
            self.difference(x, r, {tangent.mutable_data(), size_of(self.tangent_size())});
            return tangent;
          },
          py::arg("state"), py::arg("reference"), "state ⊖ reference, (tangent_size).");
}

IlqrSettings make_settings(int max_iterations, double tolerance, double initial_regularization,
                           double min_regularization, double max_regularization, double regularization_factor,
                           int line_search_steps, double acceptance_ratio, const std::optional<DoubleArray>& lower,
                           const std::optional<DoubleArray>& upper) {
  IlqrSettings settings;
  settings.max_iterations = max_iterations;
  settings.tolerance = tolerance;
  settings.initial_regularization = initial_regularization;
  settings.min_regularization = min_regularization;
  settings.max_regularization = max_regularization;
  settings.regularization_factor = regularization_factor;
  settings.line_search_steps = line_search_steps;
  settings.acceptance_ratio = acceptance_ratio;
  settings.control_lower = vector_from(optional_span(lower));
  settings.control_upper = vector_from(optional_span(upper));
  return settings;
}

}  // namespace

void bind_ilqr(py::module_& module) {
  py::class_<IlqrDynamics, PythonIlqrDynamics> dynamics_class(
      module, "IlqrDynamics",
      "x_{t+1} = f(x_t, u_t) with its Jacobians in a tangent space: the base of SimulatorDynamics and "
      "LinearDynamics, and of dynamics written in Python — a subclass calls super().__init__() and defines "
      "state_size(), control_size(), step(state, controls) -> next (state_size) and linearize(state, controls) -> "
      "(next, A (tangent, tangent), B (tangent, control)); tangent_size() and difference(state, reference) are "
      "optional (default: state_size() and state − reference).");
  dynamics_class.def(py::init<>());
  bind_dynamics_methods(dynamics_class);

  py::class_<LinearDynamics, IlqrDynamics>(module, "LinearDynamics", "x_{t+1} = A x_t + B u_t + c.")
      .def(py::init([](const DoubleArray& A, const DoubleArray& B, const std::optional<DoubleArray>& offset) {
             if (A.ndim() != 2 || A.shape(0) != A.shape(1))
               throw Error(message("LinearDynamics: A must be square (n, n), got shape ", shape_text(A)));
             const py::ssize_t n = A.shape(0);
             if (B.ndim() != 2 || B.shape(0) != n)
               throw Error(message("LinearDynamics: B must have shape (n, m) with n = ", n, ", got ", shape_text(B)));
             return LinearDynamics(static_cast<int>(n), static_cast<int>(B.shape(1)),
                                   vector_from({A.data(), static_cast<std::size_t>(A.size())}),
                                   vector_from({B.data(), static_cast<std::size_t>(B.size())}),
                                   vector_from(optional_span(offset)));
           }),
           py::arg("A"), py::arg("B"), py::arg("offset") = py::none(),
           "A: (n, n), B: (n, m), offset c: (n) or None (zero).");

  py::class_<SimulatorDynamics, IlqrDynamics>(
      module, "SimulatorDynamics",
      "The diffphys step as iLQR dynamics: one control step is `substeps` steps of model.dt with the control "
      "held, its Jacobians the exact step Jacobians chained. Flat states: State.to_vector() (13 nbody); tangent: "
      "12 nbody (state_difference). The model is copied; `params` is referenced (kept alive) and may be changed "
      "between calls.")
      .def(py::init<const Model&, const Params&, int>(), py::arg("model"), py::arg("params"), py::arg("substeps") = 1,
           py::keep_alive<1, 3>())
      .def(
          "pack",
          [](const SimulatorDynamics& self, const State& state) {
            py::array_t<double> flat(self.state_size());
            self.pack(state, {flat.mutable_data(), size_of(self.state_size())});
            return flat;
          },
          py::arg("state"), "The flat state (13 nbody) of a State.")
      .def(
          "unpack",
          [](const SimulatorDynamics& self, const DoubleArray& flat) {
            State state;
            state.resize(self.model().body_count());
            self.unpack({flat.data(), static_cast<std::size_t>(flat.size())}, state);
            return state;
          },
          py::arg("flat"), "The State of a flat state (13 nbody).")
      .def_property_readonly("model", &SimulatorDynamics::model, py::return_value_policy::reference_internal);

  py::class_<CostDerivatives>(module, "CostDerivatives",
                              "Derivatives of a cost term with respect to the state tangent (n) and the controls "
                              "(m), handed to a Python IlqrCost: writable views, valid during the call that "
                              "receives them. Add into them.")
      .def_property_readonly(
          "x", [](py::object self) { return vector_view(self.cast<CostDerivatives&>().x, self); }, "(n) ∂ℓ/∂x.")
      .def_property_readonly(
          "u", [](py::object self) { return vector_view(self.cast<CostDerivatives&>().u, self); }, "(m) ∂ℓ/∂u.")
      .def_property_readonly(
          "xx",
          [](py::object self) {
            CostDerivatives& d = self.cast<CostDerivatives&>();
            const auto n = static_cast<py::ssize_t>(d.x.size());
            return view(d.xx.data(), {n, n}, self);
          },
          "(n, n) ∂²ℓ/∂x².")
      .def_property_readonly(
          "uu",
          [](py::object self) {
            CostDerivatives& d = self.cast<CostDerivatives&>();
            const auto m = static_cast<py::ssize_t>(d.u.size());
            return view(d.uu.data(), {m, m}, self);
          },
          "(m, m) ∂²ℓ/∂u².")
      .def_property_readonly(
          "ux",
          [](py::object self) {
            CostDerivatives& d = self.cast<CostDerivatives&>();
            return view(d.ux.data(), {static_cast<py::ssize_t>(d.u.size()), static_cast<py::ssize_t>(d.x.size())},
                        self);
          },
          "(m, n) ∂²ℓ/∂u∂x.");

  py::class_<IlqrCost, PythonIlqrCost>(
      module, "IlqrCost",
      "Stage costs ℓ_t(x, u) and a final cost ℓ_T(x): the base of QuadraticCost and of costs written in Python — a "
      "subclass calls super().__init__() and defines stage(step, state, controls, derivatives) and final(state, "
      "derivatives), each returning the cost and, when derivatives (a CostDerivatives) is not None, adding the "
      "derivatives with respect to the state tangent and the controls into its arrays.")
      .def(py::init<>())
      .def(
          "stage",
          [](IlqrCost& self, int step, const DoubleArray& state, const DoubleArray& controls) {
            return self.stage(step, {state.data(), static_cast<std::size_t>(state.size())},
                              {controls.data(), static_cast<std::size_t>(controls.size())}, nullptr);
          },
          py::arg("step"), py::arg("state"), py::arg("controls"), "ℓ_t(x, u).")
      .def(
          "final",
          [](IlqrCost& self, const DoubleArray& state) {
            return self.final({state.data(), static_cast<std::size_t>(state.size())}, nullptr);
          },
          py::arg("state"), "ℓ_T(x).");

  py::class_<QuadraticCost, IlqrCost>(
      module, "QuadraticCost",
      "ℓ_t = ½ dᵀ Q d + ½ (u − u_ref)ᵀ R (u − u_ref), ℓ_T = ½ dᵀ Q_final d, d = x ⊖ x_ref (the dynamics' "
      "difference). The dynamics are referenced (kept alive).")
      .def(py::init([](IlqrDynamics& dynamics, const DoubleArray& Q, const DoubleArray& R, const DoubleArray& Q_final,
                       const DoubleArray& state_reference, const std::optional<DoubleArray>& control_reference) {
             const py::ssize_t n = dynamics.tangent_size(), m = dynamics.control_size();
             const char* tangent = "(tangent, tangent)";
             return QuadraticCost(dynamics, vector_from(shaped(Q, {n, n}, "QuadraticCost: Q", tangent)),
                                  vector_from(shaped(R, {m, m}, "QuadraticCost: R", "(control, control)")),
                                  vector_from(shaped(Q_final, {n, n}, "QuadraticCost: Q_final", tangent)),
                                  vector_from(shaped(state_reference, {dynamics.state_size()},
                                                     "QuadraticCost: state_reference", "(state_size,)")),
                                  vector_from(optional_span(control_reference)));
           }),
           py::arg("dynamics"), py::arg("Q"), py::arg("R"), py::arg("Q_final"), py::arg("state_reference"),
           py::arg("control_reference") = py::none(), py::keep_alive<1, 2>(),
           "Q, Q_final: (tangent, tangent); R: (control, control); state_reference: (state_size); "
           "control_reference: (control) or None (zero).");

  py::class_<IlqrSettings>(module, "IlqrSettings", "iLQR settings (Tassa, Erez & Todorov 2012's μ schedule).")
      .def(py::init(&make_settings), py::arg("max_iterations") = 100, py::arg("tolerance") = 1e-10,
           py::arg("initial_regularization") = 0.0, py::arg("min_regularization") = 1e-8,
           py::arg("max_regularization") = 1e10, py::arg("regularization_factor") = 2.0,
           py::arg("line_search_steps") = 10, py::arg("acceptance_ratio") = 1e-4, py::arg("control_lower") = py::none(),
           py::arg("control_upper") = py::none())
      .def_readwrite("max_iterations", &IlqrSettings::max_iterations)
      .def_readwrite("tolerance", &IlqrSettings::tolerance,
                     "Stop when a step lowers the cost by less than this, relative.")
      .def_readwrite("initial_regularization", &IlqrSettings::initial_regularization, "μ on the first backward pass.")
      .def_readwrite("min_regularization", &IlqrSettings::min_regularization, "A μ lowered below this becomes 0.")
      .def_readwrite("max_regularization", &IlqrSettings::max_regularization, "Give up (not converged) above this.")
      .def_readwrite("regularization_factor", &IlqrSettings::regularization_factor)
      .def_readwrite("line_search_steps", &IlqrSettings::line_search_steps, "α = 1, ½, ¼, …")
      .def_readwrite("acceptance_ratio", &IlqrSettings::acceptance_ratio,
                     "Accept when the actual decrease is at least this × the predicted one.")
      .def_property(
          "control_lower", [](const IlqrSettings& settings) { return vector_of(settings.control_lower); },
          [](IlqrSettings& settings, const DoubleArray& values) {
            settings.control_lower = vector_from({values.data(), static_cast<std::size_t>(values.size())});
          },
          "(control) lower bounds, or empty: unbounded.")
      .def_property(
          "control_upper", [](const IlqrSettings& settings) { return vector_of(settings.control_upper); },
          [](IlqrSettings& settings, const DoubleArray& values) {
            settings.control_upper = vector_from({values.data(), static_cast<std::size_t>(values.size())});
          },
          "(control) upper bounds, or empty: unbounded.");

  py::class_<IlqrPlan>(module, "IlqrResult", "An iLQR plan (copies).")
      .def_property_readonly(
          "states",
          [](const IlqrPlan& plan) {
            return copy_of(plan.result.states, {plan.horizon + 1, plan.state_size});
          },
          "(T + 1, state_size) the final nominal trajectory.")
      .def_property_readonly(
          "controls",
          [](const IlqrPlan& plan) {
            return copy_of(plan.result.controls, {plan.horizon, plan.control_size});
          },
          "(T, control_size).")
      .def_property_readonly(
          "feedback",
          [](const IlqrPlan& plan) {
            return copy_of(plan.result.feedback, {plan.horizon, plan.control_size, plan.tangent_size});
          },
          "(T, control_size, tangent_size) K_t of the last backward pass: δu = K_t (x ⊖ x̄_t).")
      .def_property_readonly(
          "feedforward",
          [](const IlqrPlan& plan) {
            return copy_of(plan.result.feedforward, {plan.horizon, plan.control_size});
          },
          "(T, control_size) k_t of the last backward pass.")
      .def_property_readonly(
          "cost_history", [](const IlqrPlan& plan) { return vector_of(plan.result.cost_history); },
          "The cost before the first iteration and after each accepted one.")
      .def_property_readonly("cost", [](const IlqrPlan& plan) { return plan.result.cost; })
      .def_property_readonly(
          "iterations", [](const IlqrPlan& plan) { return plan.result.iterations; }, "Backward passes.")
      .def_property_readonly("converged", [](const IlqrPlan& plan) { return plan.result.converged; })
      .def_property_readonly(
          "regularization", [](const IlqrPlan& plan) { return plan.result.regularization; }, "μ at the end.")
      .def("__repr__", [](const IlqrPlan& plan) {
        return message("<IlqrResult T=", plan.horizon, " cost=", plan.result.cost,
                       " iterations=", plan.result.iterations, " converged=", plan.result.converged ? "True" : "False",
                       ">");
      });

  py::class_<Ilqr>(module, "Ilqr",
                   "Iterative LQR (Li & Todorov 2004) with Levenberg–Marquardt regularisation, a backtracking line "
                   "search and control bounds. The dynamics and cost are referenced (kept alive).")
      .def(py::init<IlqrDynamics&, IlqrCost&, IlqrSettings>(), py::arg("dynamics"), py::arg("cost"),
           py::arg("settings") = IlqrSettings{}, py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def(
          "solve",
          [](Ilqr& self, const DoubleArray& initial_state, const std::optional<DoubleArray>& initial_controls,
             int horizon) {
            const std::span<const double> x0{initial_state.data(), static_cast<std::size_t>(initial_state.size())};
            const std::span<const double> u0 = optional_span(initial_controls);
            IlqrResult result;
            {
              py::gil_scoped_release release;
              result = self.solve(x0, u0, horizon);
            }
            return plan_of(std::move(result), horizon, x0.size());
          },
          py::arg("initial_state"), py::arg("initial_controls"), py::arg("horizon"),
          "Optimises T = horizon controls from the flat initial_state (state_size), starting from "
          "initial_controls ((T, control_size), or None for zeros; clamped to the bounds). Returns an IlqrResult.");

  py::class_<Mpc>(
      module, "Mpc",
      "Receding-horizon control: each control(x) plans `horizon` steps ahead from x with iLQR, warm-started "
      "from the previous plan shifted by one step, and returns the plan's first control. The dynamics "
      "and cost are referenced (kept alive).")
      .def(py::init<IlqrDynamics&, IlqrCost&, int, IlqrSettings>(), py::arg("dynamics"), py::arg("cost"),
           py::arg("horizon"), py::arg("settings") = IlqrSettings{}, py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def(
          "control",
          [](Mpc& self, const DoubleArray& state) {
            const std::span<const double> x{state.data(), static_cast<std::size_t>(state.size())};
            std::span<const double> controls;
            {
              py::gil_scoped_release release;
              controls = self.control(x);
            }
            return vector_of(controls);
          },
          py::arg("state"), "The controls (control_size) to apply now from the flat state (state_size).")
      .def(
          "last_plan",
          [](const Mpc& self) {
            const IlqrResult& plan = self.last_plan();
            if (plan.states.empty()) throw Error("Mpc.last_plan: no plan yet (call control(state) first)");
            const std::size_t state_size = plan.states.size() / static_cast<std::size_t>(self.horizon() + 1);
            return plan_of(plan, self.horizon(), state_size);
          },
          "The plan of the last control() call (a copy).")
      .def("horizon", &Mpc::horizon)
      .def("reset", &Mpc::reset, "Forget the warm start.");
}

}  // namespace diffphys::python
