// python/src/bind_error.cpp — diffphys/error.hpp: diffphys::Error becomes the Python
// exception diffphys.Error, a subclass of ValueError, carrying the same message.
#include "bindings.hpp"

namespace diffphys::python {

void bind_error(py::module_& module) {
  auto& error = py::register_exception<Error>(module, "Error", PyExc_ValueError);
  error.attr("__module__") = "diffphys";
  error.attr("__doc__") =
      "Bad input refused by diffphys (a negative mass, an unknown name, a malformed scene file, an "
      "array of the wrong shape, ...). The message names the item and the value.";
}

}  // namespace diffphys::python
