// python/src/bind_simulator.cpp — diffphys/simulator.hpp and contact.hpp: StepStatus, Contact,
// Workspace, the free function step(), energies, joint coordinates and the Simulator. The GIL
// is released while stepping. Simulator.run() (a Python addition) steps many times in C++ and
// returns the trajectory as one array, so no Python loop is needed to simulate.
#include "bindings.hpp"
#include "diffphys/contact.hpp"
#include "diffphys/simulator.hpp"
#include "state_vector.hpp"

namespace diffphys::python {
namespace {

std::vector<Contact> copies(std::span<const Contact> contacts) {
  return {contacts.begin(), contacts.end()};
}

}  // namespace

void bind_simulator(py::module_& module) {
  py::class_<StepStatus>(module, "StepStatus", "How a step's solve went (non-convergence is reported, not raised).")
      .def(py::init<>())
      .def_readonly("converged", &StepStatus::converged)
      .def_readonly("iterations", &StepStatus::iterations)
      .def_readonly("residual", &StepStatus::residual)
      .def_readonly("contact_count", &StepStatus::contact_count)
      .def_readonly("row_count", &StepStatus::row_count)
      .def_readonly("joint_error", &StepStatus::joint_error)
      .def_property_readonly(
          "health", [](const StepStatus& status) { return std::string(to_string(status.health)); },
          "'ok', 'non_finite' or 'too_fast': the state the step wrote (docs/robustness.md, State health)")
      .def_readonly("health_body", &StepStatus::health_body)
      .def_readonly("health_value", &StepStatus::health_value)
      .def_readonly("health_angular", &StepStatus::health_angular)
      .def("__repr__", [](const StepStatus& status) {
        return message("<StepStatus converged=", status.converged ? "True" : "False", " iterations=", status.iterations,
                       " residual=", status.residual, " contacts=", status.contact_count,
                       " health=", to_string(status.health), ">");
      });

  py::class_<Contact>(module, "Contact", "A contact point with its solved impulses (world frame).")
      .def(py::init<>())
      .def_readonly("body_a", &Contact::body_a)
      .def_readonly("body_b", &Contact::body_b)
      .def_readonly("shape_a", &Contact::shape_a)
      .def_readonly("shape_b", &Contact::shape_b)
      .def_readonly("position", &Contact::position)
      .def_readonly("normal", &Contact::normal, "Unit, from b towards a.")
      .def_readonly("gap", &Contact::gap, "Signed distance, m (< 0: penetration).")
      .def_readonly("margin", &Contact::margin,
                    "Distance the pair was searched within, m: the contact margin, or a fast pair's speculative reach.")
      .def_readonly("feature", &Contact::feature)
      .def_readonly("normal_impulse", &Contact::normal_impulse, "N·s.")
      .def_readonly("friction_impulse", &Contact::friction_impulse, "N·s, world frame.");

  py::class_<Workspace>(module, "Workspace", "Scratch memory of step(); one per thread, reused without allocation.")
      .def(py::init<>())
      .def(
          "contacts", [](const Workspace& workspace) { return copies(workspace.contacts()); },
          "Contacts of the most recent step (copies).");

  module.def(
      "step",
      [](const Model& model, const Params& params, const State& state_in, const std::optional<DoubleArray>& controls,
         State& state_out, Workspace& workspace) {
        const auto span = optional_span(controls);
        py::gil_scoped_release release;
        return step(model, params, state_in, span, state_out, workspace);
      },
      py::arg("model"), py::arg("params"), py::arg("state_in"), py::arg("controls"), py::arg("state_out"),
      py::arg("workspace"),
      "Advances state_in by model.dt into state_out (controls: (nactuator) or None for none); returns "
      "the StepStatus. Raises diffphys.Error on mismatched sizes.");

  module.def("kinetic_energy", &kinetic_energy, py::arg("model"), py::arg("params"), py::arg("state"), "J.");
  module.def("potential_energy", &potential_energy, py::arg("model"), py::arg("params"), py::arg("state"),
             "Gravitational potential energy, J.");
  module.def("joint_position", &joint_position, py::arg("model"), py::arg("state"), py::arg("joint"),
             py::arg("dof") = 0, "Coordinate `dof` of joint `joint` (index), rad or m.");
  module.def("joint_velocity", &joint_velocity, py::arg("model"), py::arg("state"), py::arg("joint"),
             py::arg("dof") = 0, "Velocity of coordinate `dof` of joint `joint` (index), rad/s or m/s.");

  py::class_<Simulator>(module, "Simulator", "Owns a Model, Params, the current State and a Workspace.")
      .def(py::init<Model, Params, State>(), py::arg("model"), py::arg("params"), py::arg("initial_state"))
      .def_property_readonly("model", &Simulator::model, py::return_value_policy::reference_internal)
      .def_property_readonly(
          "params", [](const Simulator& simulator) { return simulator.params(); }, "A copy of θ.")
      .def_property(
          "state", [](const Simulator& simulator) { return simulator.state(); },
          [](Simulator& simulator, State state) { simulator.set_state(std::move(state)); },
          "A copy of the current state; assigning one replaces it (validated), e.g. to drive a kinematic "
          "body between steps: s = sim.state; s.linear_velocity[b] = v; sim.state = s.")
      .def(
          "contacts", [](const Simulator& simulator) { return copies(simulator.contacts()); },
          "Contacts of the most recent step (copies).")
      .def(
          "step",
          [](Simulator& simulator, const std::optional<DoubleArray>& controls) {
            const auto span = optional_span(controls);
            py::gil_scoped_release release;
            return simulator.step(span);
          },
          py::arg("controls") = py::none(), "One step with the given controls (None: all zero).")
      .def(
          "run",
          [](Simulator& simulator, int steps, const std::optional<DoubleArray>& controls) {
            if (steps < 0) throw Error(message("Simulator.run: steps must be non-negative, got ", steps));
            const auto actuators = static_cast<std::size_t>(simulator.model().actuator_count());
            const auto total = static_cast<std::size_t>(steps);
            const std::span<const double> all_controls = optional_span(controls);
            const bool per_step = controls && controls->ndim() == 2;
            if (per_step)
              checked_span(*controls, total * actuators, "Simulator.run: controls (steps × actuators)");
            else if (controls)
              checked_span(*controls, actuators, "Simulator.run: controls (actuators)");
            const auto width = static_cast<std::size_t>(kStateVectorPerBody * simulator.model().body_count());
            py::array_t<double> trajectory({static_cast<py::ssize_t>(steps) + 1, static_cast<py::ssize_t>(width)});
            double* out = trajectory.mutable_data();
            bool converged = true;
            {
              py::gil_scoped_release release;
              write_state_vector(simulator.state(), {out, width});
              for (std::size_t t = 0; t < total; ++t) {
                const auto controls_t = per_step ? all_controls.subspan(t * actuators, actuators) : all_controls;
                converged = simulator.step(controls_t).converged && converged;
                write_state_vector(simulator.state(), {out + (t + 1) * width, width});
              }
            }
            return py::make_tuple(trajectory, converged);
          },
          py::arg("steps"), py::arg("controls") = py::none(),
          "Steps `steps` times in C++ (controls: (nactuator) held, (steps, nactuator) per step, or None) and "
          "returns (trajectory, converged): the (steps + 1, 13 nbody) flat states (p, q, v, ω per body, "
          "docs/python.md) and whether every step converged.");
}

}  // namespace diffphys::python
