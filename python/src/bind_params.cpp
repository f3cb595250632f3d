// python/src/bind_params.cpp — diffphys/params.hpp: Params θ, one flat vector of every
// differentiable constant. `values` and `slice()` are zero-copy NumPy views of the C++ vector;
// its length is fixed once built, so the views stay valid.
#include "bindings.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"

namespace diffphys::python {

void bind_params(py::module_& module) {
  py::class_<Params>(module, "Params",
                     "θ: the values of every differentiable physical constant, in the layout of "
                     "model.layout (named slices such as 'body/ball/mass'). Gradients come back in the "
                     "same layout.")
      .def(py::init<>())
      .def(py::init([](const DoubleArray& values) {
             if (values.ndim() != 1) throw Error(message("Params: values must be 1-D, got shape ", shape_text(values)));
             Params params;
             params.values.assign(values.data(), values.data() + values.size());
             return params;
           }),
           py::arg("values"), "Params holding a copy of `values`.")
      .def_property(
          "values", [](py::object self) { return vector_view(self.cast<Params&>().values, self); },
          [](Params& params, const DoubleArray& values) {
            const auto source = checked_span(values, params.values.size(), "Params.values");
            std::copy(source.begin(), source.end(), params.values.begin());
          },
          "(nparam) writable NumPy view of θ; assigning copies into it (same length).")
      .def(
          "slice",
          [](py::object self, const Model& model, std::string_view name) {
            return vector_view(self.cast<Params&>().slice(model, name), self);
          },
          py::arg("model"), py::arg("name"),
          "Writable NumPy view of the slice `name` (e.g. 'body/ball/mass'); raises diffphys.Error for an "
          "unknown name.")
      .def(
          "get",
          [](const Params& params, const Model& model, std::string_view name) {
            return vector_of(params.slice(model, name));
          },
          py::arg("model"), py::arg("name"), "A copy of the slice `name`.")
      .def(
          "set",
          [](Params& params, const Model& model, std::string_view name, const DoubleArray& values) {
            const std::span<double> slice = params.slice(model, name);
            const auto source = checked_span(values, slice.size(), message("parameter '", name, "'"));
            std::copy(source.begin(), source.end(), slice.begin());
          },
          py::arg("model"), py::arg("name"), py::arg("values"),
          "Sets the slice `name` (a number for a 1-value slice, or an array of its size).")
      .def(
          "as_dict",
          [](const Params& params, const Model& model) {
            py::dict result;
            for (const auto& slice : model.layout.slices)
              result[py::str(slice.name)] = vector_of(params.slice(model, slice.name));
            return result;
          },
          py::arg("model"), "{slice name: copy of its values} in layout order.")
      .def("copy", [](const Params& params) { return params; })
      .def("__copy__", [](const Params& params) { return params; })
      .def(
          "__deepcopy__", [](const Params& params, py::dict) { return params; }, py::arg("memo"))
      .def("__len__", [](const Params& params) { return params.values.size(); })
      .def("__repr__",
           [](const Params& params) { return "<Params: " + std::to_string(params.values.size()) + " values>"; });

  module.def("validate_params", &validate_params, py::arg("model"), py::arg("params"),
             "Raises diffphys.Error naming the first slice whose value is invalid (negative mass, NaN, ...).");
}

}  // namespace diffphys::python
