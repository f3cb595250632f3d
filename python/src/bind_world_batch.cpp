// python/src/bind_world_batch.cpp — diffphys/world_batch.hpp: WorldBatch, B copies of one World
// with their own initial states, controls and θ, run and differentiated in one call on a pool
// of threads. Arrays carry a leading batch axis: x0 (B, state_size), controls (B, T,
// control_count), θ (B, param_count), states (B, T + 1, state_size), dL/dx_t (B, T + 1,
// tangent_size). The GIL is released while the C++ runs; world b's results are the bits of a
// lone WorldRollout with its inputs, whatever the thread count.
#include "bindings.hpp"
#include "diffphys/world_batch.hpp"

namespace diffphys::python {
namespace {

struct BoundWorldBatch {
  WorldBatch batch;
  bool parameter_gradients;  // the options' (WorldBatch does not say)
  BoundWorldBatch(const World& world, int size, int threads, const RolloutOptions& options)
      : batch(world, size, WorldBatchOptions{threads, WorldRolloutOptions{options}}),
        parameter_gradients(options.parameter_gradients) {}
};

}  // namespace

void bind_world_batch(py::module_& module) {
  py::class_<BoundWorldBatch>(module, "WorldBatch",
                              "B copies of a World with their own initial states, controls and θ, run and "
                              "differentiated in one call on `threads` threads (the caller's included). World b's "
                              "states and gradients are those of a lone WorldRollout with its inputs, bit for bit, "
                              "whatever the thread count.")
      .def(py::init<const World&, int, int, const RolloutOptions&>(), py::arg("world"), py::arg("size"), py::kw_only(),
           py::arg("threads") = 1, py::arg("options") = RolloutOptions{},
           "size: B ≥ 1 worlds; options: RolloutOptions, every world's.")
      .def("size", [](const BoundWorldBatch& self) { return self.batch.size(); })
      .def("threads", [](const BoundWorldBatch& self) { return self.batch.threads(); })
      .def("steps", [](const BoundWorldBatch& self) { return self.batch.steps(); })
      .def(
          "converged", [](const BoundWorldBatch& self, int world) { return self.batch.converged(world); },
          py::arg("world"), "Every step of every part of world `world` converged in the last run.")
      .def(
          "run",
          [](BoundWorldBatch& self, const DoubleArray& x0, const std::optional<DoubleArray>& controls,
             const std::optional<DoubleArray>& params, std::optional<int> steps) {
            const WorldLayout& layout = self.batch.world().layout();
            const py::ssize_t worlds = self.batch.size();
            if (!steps && (!controls || controls->ndim() != 3))
              throw Error("WorldBatch.run: give steps, or controls as a (B, steps, control_count) array");
            if (!steps) steps = static_cast<int>(controls->shape(1));
            const auto states = shaped(x0, {worlds, layout.state_size}, "WorldBatch.run: x0", "(B, state_size)");
            std::span<const double> control_values, param_values;
            if (controls)
              control_values = shaped(*controls, {worlds, *steps, layout.control_count}, "WorldBatch.run: controls",
                                      "(B, steps, control_count)");
            if (params)
              param_values =
                  shaped(*params, {worlds, layout.param_count}, "WorldBatch.run: params", "(B, param_count)");
            py::gil_scoped_release release;
            self.batch.run(states, control_values, param_values, *steps);
          },
          py::arg("x0"), py::arg("controls") = py::none(), py::arg("params") = py::none(),
          py::arg("steps") = py::none(),
          "Runs every world: x0 (B, state_size); controls (B, steps, control_count), or None for the world's default "
          "controls held (then `steps` is required); params (B, param_count), or None for the world's θ. Raises "
          "diffphys.Error naming the argument and the sizes, or the first failing world.")
      .def(
          "states",
          [](const BoundWorldBatch& self) {
            std::vector<double> states;
            {
              py::gil_scoped_release release;
              states = self.batch.states();
            }
            return copy_of(states, {self.batch.size(), self.batch.steps() + 1, self.batch.world().layout().state_size});
          },
          "(B, T + 1, state_size) every world's states x_0 … x_T.")
      .def(
          "backward",
          [](const BoundWorldBatch& self, const DoubleArray& state_gradients) {
            const WorldLayout& layout = self.batch.world().layout();
            const py::ssize_t worlds = self.batch.size(), steps = self.batch.steps();
            const auto loss = shaped(state_gradients, {worlds, steps + 1, layout.tangent_size},
                                     "WorldBatch.backward: state_gradients", "(B, T + 1, tangent_size)");
            py::array_t<double> initial({worlds, static_cast<py::ssize_t>(layout.tangent_size)});
            py::array_t<double> controls({worlds, steps, static_cast<py::ssize_t>(layout.control_count)});
            py::array_t<double> params(
                {worlds, static_cast<py::ssize_t>(self.parameter_gradients ? layout.param_count : 0)});
            const auto span = [](py::array_t<double>& array) {
              return std::span<double>(array.mutable_data(), static_cast<std::size_t>(array.size()));
            };
            const std::span<double> initial_out = span(initial), controls_out = span(controls),
                                    params_out = span(params);
            {
              py::gil_scoped_release release;
              self.batch.backward(loss, initial_out, controls_out, params_out);
            }
            return py::make_tuple(initial, controls, params);
          },
          py::arg("state_gradients"),
          "Gradients of L = Σ_b Σ_t ⟨dL/dx_t^b, x_t^b⟩ from state_gradients (B, T + 1, tangent_size), dL/dx_t in the "
          "tangent layout: the tuple (dL/dx_0 (B, tangent_size), dL/du (B, T, control_count), dL/dθ (B, "
          "param_count); (B, 0) with parameter_gradients off).");
}

}  // namespace diffphys::python
