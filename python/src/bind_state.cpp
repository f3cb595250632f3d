// python/src/bind_state.cpp — diffphys/state.hpp: State x_t as NumPy arrays. Each field is a
// zero-copy (nbody × 3) or (nbody × 4) view of the C++ vector (Vec3 and Quat are plain
// doubles, packed); assigning an array copies into it. Also the flat 13-per-body vector
// (p, q(w,x,y,z), v, ω) that diffphys.torch and Rollout.states() use (docs/python.md).
#include "bindings.hpp"
#include "diffphys/model.hpp"
#include "diffphys/state.hpp"
#include "state_vector.hpp"

namespace diffphys::python {
namespace {

static_assert(sizeof(Vec3) == 3 * sizeof(double) && sizeof(Quat) == 4 * sizeof(double),
              "Vec3 and Quat must be packed doubles for the NumPy views");

template <typename Value, int Width>
void bind_field(py::class_<State>& state_class, const char* name, std::vector<Value> State::*field, const char* doc) {
  state_class.def_property(
      name,
      [field](py::object self) {
        State& state = self.cast<State&>();
        std::vector<Value>& values = state.*field;
        return view(reinterpret_cast<double*>(values.data()), {static_cast<py::ssize_t>(values.size()), Width}, self);
      },
      [field, name](State& state, const DoubleArray& array) {
        std::vector<Value>& values = state.*field;
        if (array.ndim() != 2 || array.shape(0) != static_cast<py::ssize_t>(values.size()) || array.shape(1) != Width)
          throw Error(message("State.", name, ": expected an array of shape (", values.size(), ", ", Width, "), got ",
                              shape_text(array)));
        std::copy(array.data(), array.data() + array.size(), reinterpret_cast<double*>(values.data()));
      },
      doc);
}

}  // namespace

void bind_state(py::module_& module) {
  py::class_<State> state_class(
      module, "State",
      "x_t: positions (centre of mass, world, m), orientations (unit quaternions w, x, y, z, body → "
      "world), linear velocities (m/s) and angular velocities (world frame, rad/s), one row per body "
      "(body 0, the world, included). The fields are writable NumPy views; resize() invalidates them.");
  state_class.def(py::init<>())
      .def(py::init([](int body_count) {
             if (body_count < 0) throw Error(message("State: body count must be non-negative, got ", body_count));
             State state;
             state.resize(body_count);
             return state;
           }),
           py::arg("body_count"), "A state of `body_count` bodies at the origin, identity orientation, at rest.")
      .def_readwrite("time", &State::time, "s");
  bind_field<Vec3, 3>(state_class, "position", &State::position, "(nbody, 3) centre of mass in world, m.");
  bind_field<Quat, 4>(state_class, "orientation", &State::orientation, "(nbody, 4) unit quaternion (w, x, y, z).");
  bind_field<Vec3, 3>(state_class, "linear_velocity", &State::linear_velocity, "(nbody, 3) m/s.");
  bind_field<Vec3, 3>(state_class, "angular_velocity", &State::angular_velocity, "(nbody, 3) rad/s, world frame.");
  state_class
      .def("resize", &State::resize, py::arg("body_count"),
           "Resizes every field (invalidates NumPy views taken before).")
      .def("body_count", &State::body_count)
      .def(
          "to_vector",
          [](const State& state) {
            py::array_t<double> result(static_cast<py::ssize_t>(kStateVectorPerBody) * state.body_count());
            write_state_vector(state, {result.mutable_data(), static_cast<std::size_t>(result.size())});
            return result;
          },
          "The flat state vector (13 nbody): per body p (3), q (w, x, y, z), v (3), ω (3).")
      .def_static(
          "from_vector",
          [](const DoubleArray& vector) {
            if (vector.ndim() != 1 || vector.size() % kStateVectorPerBody != 0)
              throw Error(message("State.from_vector: expected a 1-D array of 13 values per body, got shape ",
                                  shape_text(vector)));
            State state;
            state.resize(static_cast<int>(vector.size() / kStateVectorPerBody));
            read_state_vector({vector.data(), static_cast<std::size_t>(vector.size())}, state);
            return state;
          },
          py::arg("vector"), "The State of a flat vector (13 per body); quaternions are taken as given.")
      .def("copy", [](const State& state) { return state; })
      .def("__copy__", [](const State& state) { return state; })
      .def(
          "__deepcopy__", [](const State& state, py::dict) { return state; }, py::arg("memo"))
      .def("__repr__", [](const State& state) {
        return "<State: " + std::to_string(state.body_count()) + " bodies, t = " + std::to_string(state.time) + " s>";
      });

  module.attr("STATE_VECTOR_PER_BODY") = kStateVectorPerBody;
  module.def("validate_state", &validate_state, py::arg("model"), py::arg("state"),
             "Raises diffphys.Error naming the body and field of the first non-finite or non-unit entry, or a "
             "size mismatch with the model.");
}

}  // namespace diffphys::python
