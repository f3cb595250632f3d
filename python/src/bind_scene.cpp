// python/src/bind_scene.cpp — diffphys/scene.hpp: scene files in (JSON, docs/scene-format.md; robot
// files, docs/robot-formats.md) and out (scene_json_text, save_scene).
#include "bindings.hpp"
#include "diffphys/scene.hpp"

namespace diffphys::python {

void bind_scene(py::module_& module) {
  def_loader(module, "load_scene", &load_scene,
             "Loads a scene file (str or os.PathLike): JSON, URDF (.urdf) or MJCF (.xml, .mjcf). Raises "
             "diffphys.Error naming the file, the field (a JSON path such as bodies[2].mass) and the value.\n\n"
             "URDF only (UrdfOptions): `package_path`, directories searched first for package://NAME mesh paths "
             "(then ROS_PACKAGE_PATH, then the file's directory and ancestors); `self_collision`, let links of the "
             "robot that no joint joins collide (off unless the file asks: docs/robot-formats.md).");
  module.def("parse_scene", &parse_scene, py::arg("json_text"), py::arg("source_name") = "<string>",
             py::call_guard<py::gil_scoped_release>(),
             "Parses a scene from JSON text; `source_name` is used in error messages.");
  module.def("scene_json_text", &scene_json_text, py::arg("scene"), py::call_guard<py::gil_scoped_release>(),
             "The scene (any rigid Scene: loaded, built or stepped) as JSON scene text that parse_scene reads back "
             "to the same model, params, state and controls, bit for bit (docs/scene-format.md, \"Writing "
             "scenes\"). Raises diffphys.Error naming the item the format cannot hold (a state whose time is not "
             "0, a static body with a velocity, ...).");
  module.def("save_scene", &save_scene, py::arg("scene"), py::arg("path"), py::call_guard<py::gil_scoped_release>(),
             "Writes scene_json_text(scene) to `path` (str or os.PathLike); load_scene reads it back.");
}

}  // namespace diffphys::python
