// python/src/module.cpp — the extension module diffphys._core: calls each header's binding
// function in dependency order (a type must be registered before a signature mentions it).
// The pure-Python package python/diffphys/ re-exports everything from here.
#include "bindings.hpp"

namespace diffphys::python {
// diffphys/camera.hpp, diffphys/world_camera.hpp (bind_camera.cpp). Declared here rather than in
// bindings.hpp, which every binding file includes: adding it there would recompile them all.
void bind_camera(py::module_& module);
}  // namespace diffphys::python

PYBIND11_MODULE(_core, module) {
  using namespace diffphys::python;
  module.doc() =
      "diffphys: a differentiable physics engine (C++) for rigid and soft bodies, with exact gradients of whole "
      "trajectories. See docs/python.md.";
  bind_error(module);
  bind_model(module);
  bind_params(module);
  bind_state(module);
  bind_model_builder(module);
  bind_scene(module);
  bind_simulator(module);
  bind_trajectory(module);
  bind_rollout(module);
  bind_world(module);
  bind_world_batch(module);
  bind_camera(module);  // after bind_world: it adds World.cameras
  bind_gradcheck(module);
  bind_jacobians(module);
  bind_ilqr(module);
  bind_least_squares(module);
}
