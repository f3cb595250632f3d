// python/src/bind_least_squares.cpp — diffphys/least_squares.hpp: Levenberg–Marquardt for
// min_x ½‖r(x)‖² with a Python function for the residuals and their Jacobian. The C++ solver
// asks for the residuals alone (at trial points) or for the Jacobian alone (at accepted
// points, always right after the residuals at the same x); the Python function is called as
// residuals(x, want_jacobian) and returns (r, J or None), so it may cache its forward pass
// for the Jacobian. The GIL is held throughout (the work is in the Python function).
#include <functional>

#include "bindings.hpp"
#include "diffphys/least_squares.hpp"

namespace diffphys::python {
namespace {

// The C++ callback of a Python `residuals(x, want_jacobian) -> (r, J or None)`.
ResidualsAndJacobian residuals_of(py::function function, std::size_t residual_count) {
  return [function = std::move(function), residual_count](std::span<const double> x, std::span<double> residuals,
                                                          std::span<double> jacobian) {
    const bool want_jacobian = !jacobian.empty();
    const py::object returned = function(vector_of(x), want_jacobian);
    if (!py::isinstance<py::tuple>(returned) || py::len(returned) != 2)
      throw Error(message("minimize_least_squares: residuals(x, ", want_jacobian ? "True" : "False",
                          ") must return a tuple (r, J or None), got ",
                          py::str(py::type::handle_of(returned).attr("__name__")).cast<std::string>()));
    const auto pair = returned.cast<py::tuple>();
    if (!residuals.empty()) {
      if (pair[0].is_none()) throw Error("minimize_least_squares: residuals(x, want_jacobian) returned r = None");
      const auto r = pair[0].cast<DoubleArray>();
      const auto values =
          shaped(r, {static_cast<py::ssize_t>(residual_count)}, "minimize_least_squares: r", "(residual_count,)");
      std::copy(values.begin(), values.end(), residuals.begin());
    }
    if (want_jacobian) {
      if (pair[1].is_none())
        throw Error("minimize_least_squares: residuals(x, True) returned J = None; the Jacobian was asked for");
      const auto J = pair[1].cast<DoubleArray>();
      const auto values = shaped(J, {static_cast<py::ssize_t>(residual_count), static_cast<py::ssize_t>(x.size())},
                                 "minimize_least_squares: J", "(residual_count, len(x))");
      std::copy(values.begin(), values.end(), jacobian.begin());
    }
  };
}

}  // namespace

void bind_least_squares(py::module_& module) {
  py::class_<LeastSquaresSettings>(module, "LeastSquaresSettings", "Levenberg–Marquardt settings.")
      .def(py::init([](int max_iterations, double initial_damping, double gradient_tolerance, double step_tolerance,
                       int max_rejections) {
             return LeastSquaresSettings{max_iterations, initial_damping, gradient_tolerance, step_tolerance,
                                         max_rejections};
           }),
           py::arg("max_iterations") = 100, py::arg("initial_damping") = 1e-3, py::arg("gradient_tolerance") = 1e-12,
           py::arg("step_tolerance") = 1e-12, py::arg("max_rejections") = 30)
      .def_readwrite("max_iterations", &LeastSquaresSettings::max_iterations, "Accepted steps (one Jacobian each).")
      .def_readwrite("initial_damping", &LeastSquaresSettings::initial_damping,
                     "μ₀, relative: the first step solves (JᵀJ + μ₀ D) h = −Jᵀr, D ≈ diag(JᵀJ).")
      .def_readwrite("gradient_tolerance", &LeastSquaresSettings::gradient_tolerance, "Stop when ‖Jᵀr‖∞ ≤ this.")
      .def_readwrite("step_tolerance", &LeastSquaresSettings::step_tolerance, "Stop when ‖h‖ ≤ this · (‖x‖ + this).")
      .def_readwrite("max_rejections", &LeastSquaresSettings::max_rejections,
                     "Give up at this many consecutive rejected steps.");

  py::class_<LeastSquaresResult>(module, "LeastSquaresResult", "The outcome of minimize_least_squares (copies).")
      .def_property_readonly(
          "x", [](const LeastSquaresResult& result) { return vector_of(result.x); }, "The last accepted point.")
      .def_property_readonly(
          "residuals", [](const LeastSquaresResult& result) { return vector_of(result.residuals); },
          "(residual_count) r at x.")
      .def_readonly("cost", &LeastSquaresResult::cost, "½‖r(x)‖².")
      .def_readonly("iterations", &LeastSquaresResult::iterations, "Accepted steps.")
      .def_readonly("evaluations", &LeastSquaresResult::evaluations, "Residual evaluations (trial points included).")
      .def_readonly("jacobians", &LeastSquaresResult::jacobians, "Jacobian evaluations.")
      .def_readonly("converged", &LeastSquaresResult::converged,
                    "Met a tolerance, or the progress callback asked to stop.")
      .def_readonly("stop_reason", &LeastSquaresResult::stop_reason)
      .def("__repr__", [](const LeastSquaresResult& result) {
        return message("<LeastSquaresResult cost=", result.cost, " iterations=", result.iterations,
                       " converged=", result.converged ? "True" : "False", " '", result.stop_reason, "'>");
      });

  module.def(
      "minimize_least_squares",
      [](py::function residuals, int residual_count, const DoubleArray& x0, const LeastSquaresSettings& settings,
         std::optional<py::function> progress) {
        if (x0.ndim() != 1) throw Error(message("minimize_least_squares: x0 must be 1-D, got shape ", shape_text(x0)));
        LeastSquaresProgress on_progress;
        if (progress)
          on_progress = [progress = *progress](int iteration, std::span<const double> x, double cost,
                                               std::span<const double> r) {
            const py::object go_on = (*progress)(iteration, vector_of(x), cost, vector_of(r));
            return go_on.is_none() || go_on.cast<bool>();
          };
        const std::size_t count = residual_count > 0 ? static_cast<std::size_t>(residual_count) : 0;
        return minimize_least_squares(residuals_of(std::move(residuals), count), residual_count,
                                      {x0.data(), static_cast<std::size_t>(x0.size())}, settings, on_progress);
      },
      py::arg("residuals"), py::arg("residual_count"), py::arg("x0"), py::arg("settings") = LeastSquaresSettings{},
      py::arg("progress") = py::none(),
      "Levenberg–Marquardt (Marquardt's scaling, Nielsen's damping update) for min_x ½‖r(x)‖² from x0 (n). "
      "residuals(x, want_jacobian) returns (r, J or None): r (residual_count) the residuals at x, and when "
      "want_jacobian is True, J (residual_count, n) = ∂r/∂x. The Jacobian is asked for alone (r may then be None) "
      "and only at accepted points, right after the residuals at the same x, so the function may reuse its last "
      "forward pass. progress(iteration, x, cost, r), if given, is called at x0 and after each accepted step; "
      "returning False stops. Returns a LeastSquaresResult. Raises diffphys.Error for invalid settings, "
      "residual_count < 1, an empty x0, non-finite residuals at x0 or a non-finite Jacobian entry, or a wrongly "
      "shaped r or J; exceptions of the functions propagate.");
}

}  // namespace diffphys::python
