// python/src/bind_trajectory.cpp — diffphys/trajectory.hpp: recording a trajectory and writing
// it as JSON (the format of `diffphys simulate --out`, read by the viewer).
#include "bindings.hpp"
#include "diffphys/trajectory.hpp"

namespace diffphys::python {

void bind_trajectory(py::module_& module) {
  py::class_<TrajectoryRecorder>(module, "TrajectoryRecorder",
                                 "Records states, contacts and statuses; write() saves the trajectory file "
                                 "(docs/scene-format.md). Keeps its Model alive.")
      .def(py::init<const Model&>(), py::arg("model"), py::keep_alive<1, 2>())
      .def(py::init<const Model&, const Params&>(), py::arg("model"), py::arg("params"), py::keep_alive<1, 2>(),
           "With params the file also carries the model block (shapes, masses) and the energies that "
           "the replay page (diffphys view) draws and plots.")
      .def(
          "record",
          [](TrajectoryRecorder& recorder, const State& state, const std::vector<Contact>& contacts,
             const StepStatus& status) { recorder.record(state, contacts, status); },
          py::arg("state"), py::arg("contacts") = std::vector<Contact>{}, py::arg("status") = StepStatus{})
      .def("frame_count", &TrajectoryRecorder::frame_count)
      .def(
          "set_loss_curve",
          [](TrajectoryRecorder& recorder, const std::vector<double>& loss) { recorder.set_loss_curve(loss); },
          py::arg("loss_per_iteration"), "A loss per optimisation iteration, plotted by the replay page.")
      .def(
          "write", [](const TrajectoryRecorder& recorder, const std::filesystem::path& path) { recorder.write(path); },
          py::arg("path"), "Raises diffphys.Error if the file cannot be written.");
}

}  // namespace diffphys::python
