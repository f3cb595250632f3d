// python/src/bind_scene.cpp — diffphys/scene.hpp: scene files (JSON, docs/scene-format.md).
#include <pybind11/stl/filesystem.h>

#include "bindings.hpp"
#include "diffphys/scene.hpp"

namespace diffphys::python {

void bind_scene(py::module_& module) {
  module.def("load_scene", &load_scene, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
             "Loads a scene file (str or os.PathLike). Raises diffphys.Error naming the file, the field "
             "(a JSON path such as bodies[2].mass) and the value.");
  module.def("parse_scene", &parse_scene, py::arg("json_text"), py::arg("source_name") = "<string>",
             py::call_guard<py::gil_scoped_release>(),
             "Parses a scene from JSON text; `source_name` is used in error messages.");
}

}  // namespace diffphys::python
