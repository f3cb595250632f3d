// python/src/bind_jacobians.cpp — diffphys/jacobians.hpp: the exact Jacobians of one step,
// A = ∂x_{t+1}/∂x_t, B = ∂x_{t+1}/∂u_t and optionally P = ∂x_{t+1}/∂θ, as NumPy matrices, and
// the state ⊖ / ⊕ of the tangent layout they are written in (12 per body: δp, δθ, δv, δω,
// q' = exp(δθ) ⊗ q in the world frame; docs/gradients.md). The GIL is released while computing.
#include "bindings.hpp"
#include "diffphys/jacobians.hpp"

namespace diffphys::python {
namespace {

// (next_state, A, B[, P]) of one step; `jacobians` is reused (its buffers and model copy).
py::tuple compute(StepJacobians& jacobians, const Params& params, const State& state,
                  const std::optional<DoubleArray>& controls, bool with_params) {
  const Model& model = jacobians.model();
  const auto n = static_cast<py::ssize_t>(state_tangent_size(model));
  const auto m = static_cast<py::ssize_t>(model.actuator_count());
  const auto nparam = static_cast<py::ssize_t>(model.param_count());
  const std::span<const double> control_values = optional_span(controls);
  py::array_t<double> A({n, n}), B({n, m}), P({with_params ? n : 0, with_params ? nparam : 0});
  State next;
  {
    py::gil_scoped_release release;
    jacobians.compute(params, state, control_values, next, {A.mutable_data(), static_cast<std::size_t>(A.size())},
                      {B.mutable_data(), static_cast<std::size_t>(B.size())},
                      {P.mutable_data(), static_cast<std::size_t>(P.size())});
  }
  if (with_params) return py::make_tuple(next, A, B, P);
  return py::make_tuple(next, A, B);
}

}  // namespace

void bind_jacobians(py::module_& module) {
  module.def("state_tangent_size", &state_tangent_size, py::arg("model"),
             "12 nbody: the length of a state tangent [δp, δθ, δv, δω] per body (world included), the size of "
             "StepJacobians' A.");
  module.def(
      "state_difference",
      [](const Model& model, const State& state, const State& reference) {
        py::array_t<double> difference(static_cast<py::ssize_t>(state_tangent_size(model)));
        state_difference(model, state, reference,
                         {difference.mutable_data(), static_cast<std::size_t>(difference.size())});
        return difference;
      },
      py::arg("model"), py::arg("state"), py::arg("reference"),
      "state ⊖ reference, (12 nbody): per body δp = p − p_ref (m), δθ = log(q ⊗ q_refᵀ) (world-frame rotation "
      "vector, rad, angle in (−π, π]), δv = v − v_ref (m/s), δω = ω − ω_ref (rad/s).");
  module.def(
      "state_retract",
      [](const Model& model, const State& state, const DoubleArray& tangent) {
        State out;
        state_retract(
            model, state,
            checked_span(tangent, static_cast<std::size_t>(state_tangent_size(model)), "state_retract: tangent"), out);
        return out;
      },
      py::arg("model"), py::arg("state"), py::arg("tangent"),
      "state ⊕ tangent, a new State: p + δp, exp(δθ) ⊗ q, v + δv, ω + δω — the perturbation every state gradient "
      "and A's columns measure. tangent: (12 nbody).");

  py::class_<StepJacobians>(module, "StepJacobians",
                            "Exact Jacobians of one step (vector–Jacobian products of the step with unit seeds, no "
                            "finite differences), with reusable buffers; one per thread. The model is copied with "
                            "PGS warm start off, so each call depends on its inputs only.")
      .def(py::init<const Model&>(), py::arg("model"))
      .def_property_readonly("model", &StepJacobians::model, py::return_value_policy::reference_internal,
                             "The (copied) model.")
      .def("compute", &compute, py::arg("params"), py::arg("state"), py::arg("controls") = py::none(), py::kw_only(),
           py::arg("with_params") = false,
           "Steps `state` with `controls` ((nactuator) or None when the model has no actuators) and returns "
           "(next_state, A, B) — or (next_state, A, B, P) with with_params=True — in the tangent layout "
           "(n = 12 nbody, see state_difference): A (n, n) = ∂x_{t+1}/∂x_t, B (n, nactuator) = ∂x_{t+1}/∂u_t, "
           "P (n, nparam) = ∂x_{t+1}/∂θ (Params layout). Rows and columns of static bodies are zero. Raises "
           "diffphys.Error naming the argument whose size does not match.");

  module.def(
      "step_jacobians",
      [](const Model& model, const Params& params, const State& state, const std::optional<DoubleArray>& controls,
         bool with_params) {
        StepJacobians jacobians(model);
        const py::tuple result = compute(jacobians, params, state, controls, with_params);
        return py::tuple(result[py::slice(1, static_cast<py::ssize_t>(result.size()), 1)]);
      },
      py::arg("model"), py::arg("params"), py::arg("state"), py::arg("controls") = py::none(), py::kw_only(),
      py::arg("with_params") = false,
      "One-off StepJacobians(model).compute(...) without the next state: (A, B) or (A, B, P).");
}

}  // namespace diffphys::python
