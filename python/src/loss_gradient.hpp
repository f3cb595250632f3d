// python/src/loss_gradient.hpp — what the two rollout bindings (bind_rollout.cpp for the rigid
// Rollout, bind_world.cpp for WorldRollout) share: the argument of backward() and the NumPy
// views of a gradient's three arrays.
//
// backward(loss_gradient) takes dL/dx_t for every t either as one (T + 1, width) array — the
// fast path: no Python call per step, no GIL — or as a callable f(t, state, gradient) that
// adds dL/dx_t into the (width) array `gradient` or returns it; the callable takes the GIL
// for each call and gets fresh arrays, never views into C++ buffers.
#pragma once

#include <string>
#include <utility>

#include "bindings.hpp"

namespace diffphys::python {

class LossGradientInput {
 public:
  // `what` names the caller in errors ("Rollout.backward"), `width_text` the row's layout
  // ("12 nbody"). Throws Error for an array of the wrong shape.
  LossGradientInput(const py::object& loss_gradient, int steps, std::size_t width, std::string what,
                    const char* width_text)
      : width_(width), what_(std::move(what)) {
    if (PyCallable_Check(loss_gradient.ptr())) {
      callback_ = loss_gradient;
      return;
    }
    array_ = py::cast<DoubleArray>(loss_gradient);
    if (array_.ndim() != 2 || array_.shape(0) != steps + 1 || static_cast<std::size_t>(array_.shape(1)) != width)
      throw Error(message(what_, ": loss gradients must have shape (T + 1, ", width_text, ") = (", steps + 1, ", ",
                          width, "), got ", shape_text(array_)));
  }

  // Adds dL/dx_t into `out` (width). `state()` makes the state the callable receives; it is
  // called with the GIL held, and only for a callable.
  template <typename MakeState>
  void add(int step, const MakeState& state, std::span<double> out) const {
    if (!callback_) {
      const double* row = array_.data() + static_cast<std::size_t>(step) * width_;
      for (std::size_t i = 0; i < width_; ++i) out[i] += row[i];
      return;
    }
    py::gil_scoped_acquire gil;
    py::array_t<double> gradient(static_cast<py::ssize_t>(width_));
    std::fill_n(gradient.mutable_data(), width_, 0.0);
    const py::object result = callback_(step, state(), gradient);
    const DoubleArray values = py::cast<DoubleArray>(result.is_none() ? py::object(gradient) : result);
    const auto source = checked_span(values, width_, message(what_, ": loss gradient at step ", step));
    for (std::size_t i = 0; i < width_; ++i) out[i] += source[i];
  }

 private:
  std::size_t width_;
  std::string what_;
  py::object callback_;
  DoubleArray array_;
};

// The views `initial_state` (n), `controls` (T, ncontrol) and `params` (nparam) of a bound
// gradient type with the members initial_state, controls, params, steps and `Width` (the
// number of controls per step), each kept alive by the gradient object.
template <typename Bound, int Bound::*Width>
void bind_gradient_arrays(py::class_<Bound>& gradients, const char* initial_state_doc, const char* controls_doc,
                          const char* params_doc) {
  gradients
      .def_property_readonly(
          "initial_state",
          [](py::object self) {
            auto& g = self.cast<Bound&>();
            return view(g.initial_state.data(), {static_cast<py::ssize_t>(g.initial_state.size())}, self);
          },
          initial_state_doc)
      .def_property_readonly(
          "controls",
          [](py::object self) {
            auto& g = self.cast<Bound&>();
            return view(g.controls.data(), {g.steps, g.*Width}, self);
          },
          controls_doc)
      .def_property_readonly(
          "params",
          [](py::object self) {
            auto& g = self.cast<Bound&>();
            return view(g.params.data(), {static_cast<py::ssize_t>(g.params.size())}, self);
          },
          params_doc);
}

}  // namespace diffphys::python
