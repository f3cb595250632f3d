// python/src/bind_gradcheck.cpp — diffphys/gradcheck.hpp: every analytic gradient of a rollout
// against central finite differences (the check behind `diffphys gradcheck`).
#include "bindings.hpp"
#include "diffphys/gradcheck.hpp"

namespace diffphys::python {

void bind_gradcheck(py::module_& module) {
  py::class_<GradientCheckEntry>(module, "GradientCheckEntry")
      .def_readonly("name", &GradientCheckEntry::name)
      .def_readonly("analytic", &GradientCheckEntry::analytic)
      .def_readonly("numeric", &GradientCheckEntry::numeric)
      .def_readonly("relative_error", &GradientCheckEntry::relative_error)
      .def_readonly("uncertainty", &GradientCheckEntry::uncertainty)
      .def_readonly("step", &GradientCheckEntry::step)
      .def("__repr__", [](const GradientCheckEntry& entry) {
        return message("<GradientCheckEntry '", entry.name, "' analytic=", entry.analytic, " numeric=", entry.numeric,
                       " relative_error=", entry.relative_error, ">");
      });

  py::class_<GradientCheckReport>(module, "GradientCheckReport")
      .def_readonly("entries", &GradientCheckReport::entries)
      .def_readonly("worst_relative_error", &GradientCheckReport::worst_relative_error)
      .def_readonly("passed", &GradientCheckReport::passed)
      .def_readonly("skipped", &GradientCheckReport::skipped);

  py::class_<GradientCheckOptions> options_class(module, "GradientCheckOptions",
                                                 "Steps, tolerance and finite-difference steps.");
  options_class
      .def(py::init([](int steps, double tolerance, double state_epsilon, double param_epsilon, std::uint32_t seed,
                       int control_samples) {
             return GradientCheckOptions{steps, tolerance, state_epsilon, param_epsilon, seed, control_samples};
           }),
           py::arg("steps") = 100, py::arg("tolerance") = 1e-5, py::arg("state_epsilon") = 1e-6,
           py::arg("param_epsilon") = 1e-6, py::arg("seed") = 1, py::arg("control_samples") = 8)
      .def_readwrite("steps", &GradientCheckOptions::steps)
      .def_readwrite("tolerance", &GradientCheckOptions::tolerance)
      .def_readwrite("state_epsilon", &GradientCheckOptions::state_epsilon)
      .def_readwrite("param_epsilon", &GradientCheckOptions::param_epsilon)
      .def_readwrite("seed", &GradientCheckOptions::seed)
      .def_readwrite("control_samples", &GradientCheckOptions::control_samples);

  module.def(
      "check_gradients",
      [](const Scene& scene, const std::optional<DoubleArray>& controls, const GradientCheckOptions& options) {
        const auto span = optional_span(controls);
        py::gil_scoped_release release;
        return check_gradients(scene, span, options);
      },
      py::arg("scene"), py::arg("controls") = py::none(), py::arg("options") = GradientCheckOptions{},
      "Compares every analytic gradient of a rollout of `scene` with fourth-order central differences. "
      "controls: (steps, nactuator) or None for the scene's default controls held.");
}

}  // namespace diffphys::python
