// python/src/bindings.hpp — what every binding file shares: the bind_* entry points (one per
// public header), the conversions of Vec3 and Quat to and from NumPy arrays, helpers for
// zero-copy NumPy views of the library's contiguous buffers, copies and shape checks, the
// keyword arguments of the scene-file loaders and the binding of a named slice.
//
// Vec3 and Quat cross the boundary as NumPy arrays of 3 and 4 doubles (copies: they are
// values). Buffers that live inside a C++ object (Params::values, State::position, ...) are
// handed out as NumPy *views* whose base is the owning Python object, so they stay valid as
// long as the view does — unless the C++ object is resized (State.resize), which the
// docstrings say.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "diffphys/error.hpp"
#include "diffphys/math.hpp"
#include "diffphys/robot_loaders.hpp"

namespace diffphys::python {

namespace py = pybind11;

// Contiguous double arrays, converted (not copied when already float64 and C-contiguous).
using DoubleArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

void bind_error(py::module_& module);
void bind_model(py::module_& module);
void bind_params(py::module_& module);
void bind_state(py::module_& module);
void bind_model_builder(py::module_& module);
void bind_scene(py::module_& module);
void bind_simulator(py::module_& module);
void bind_trajectory(py::module_& module);
void bind_rollout(py::module_& module);
void bind_world(py::module_& module);
void bind_world_batch(py::module_& module);
void bind_gradcheck(py::module_& module);
void bind_jacobians(py::module_& module);
void bind_ilqr(py::module_& module);
void bind_least_squares(py::module_& module);

// "(2, 3)", or "(3,)" for one axis — for error messages about shapes.
inline std::string shape_text(std::span<const py::ssize_t> shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

inline std::string shape_text(const py::array& array) {
  return shape_text({array.shape(), static_cast<std::size_t>(array.ndim())});
}

// A writable view of the doubles at `data`, shaped `shape`, kept alive by `owner`.
inline py::array view(double* data, std::vector<py::ssize_t> shape, py::handle owner) {
  return py::array_t<double>(shape, data, owner);
}

// A writable 1-D view of `values`, kept alive by `owner`.
inline py::array vector_view(std::span<double> values, py::handle owner) {
  return view(values.data(), {static_cast<py::ssize_t>(values.size())}, owner);
}

// A fresh array holding a copy of `values`, shaped `shape`.
inline py::array copy_of(std::span<const double> values, std::vector<py::ssize_t> shape) {
  py::array_t<double> array(shape);
  std::copy(values.begin(), values.end(), array.mutable_data());
  return array;
}

// A fresh 1-D array holding a copy of `values`.
inline py::array vector_of(std::span<const double> values) {
  return copy_of(values, {static_cast<py::ssize_t>(values.size())});
}

// The values of an optional array (empty for None), whatever its shape.
inline std::span<const double> optional_span(const std::optional<DoubleArray>& array) {
  if (!array) return {};
  return {array->data(), static_cast<std::size_t>(array->size())};
}

// `array` as a span after checking it has exactly `expected` elements, whatever its shape; `what` names it.
inline std::span<const double> checked_span(const DoubleArray& array, std::size_t expected, const std::string& what) {
  if (static_cast<std::size_t>(array.size()) != expected)
    throw Error(message(what, ": expected ", expected, " values, got an array of shape ", shape_text(array)));
  return {array.data(), static_cast<std::size_t>(array.size())};
}

// `array` as a span after checking that its shape is `expected`; the error names the array
// (`what`), the meaning of its axes (`axes`, if given) and both shapes.
inline std::span<const double> shaped(const DoubleArray& array, const std::vector<py::ssize_t>& expected,
                                      const std::string& what, const char* axes = nullptr) {
  if (!std::ranges::equal(std::span(array.shape(), static_cast<std::size_t>(array.ndim())), expected))
    throw Error(message(what, " must have shape ", axes ? message(axes, " = ") : std::string(), shape_text(expected),
                        ", got ", shape_text(array)));
  return {array.data(), static_cast<std::size_t>(array.size())};
}

// A scene-file loader (load_scene, load_world) as module.`name`(path, *, package_path=[],
// self_collision=False): the URDF options as keywords, the GIL released while reading.
template <typename Result>
void def_loader(py::module_& module, const char* name, Result (*load)(const std::filesystem::path&, const UrdfOptions&),
                const char* doc) {
  module.def(
      name,
      [load](const std::filesystem::path& path, std::vector<std::filesystem::path> package_path, bool self_collision) {
        UrdfOptions options;
        options.package_path = std::move(package_path);
        options.self_collision = self_collision;
        return load(path, options);
      },
      py::arg("path"), py::kw_only(), py::arg("package_path") = std::vector<std::filesystem::path>{},
      py::arg("self_collision") = false, py::call_guard<py::gil_scoped_release>(), doc);
}

// A named range of a flat vector (ParamLayout.Slice, NamedSlice): name, offset, size and a repr.
template <typename Slice>
py::class_<Slice> bind_slice(py::handle scope, const char* name, const char* doc) {
  return py::class_<Slice>(scope, name, doc)
      .def_readonly("name", &Slice::name)
      .def_readonly("offset", &Slice::offset)
      .def_readonly("size", &Slice::size)
      .def("__repr__", [name](const Slice& slice) {
        return message("<", name, " '", slice.name, "' [", slice.offset, ":", slice.offset + slice.size, "]>");
      });
}

}  // namespace diffphys::python

// Vec3 ↔ NumPy array of 3 doubles (any sequence of 3 numbers is accepted).
namespace pybind11::detail {

template <typename Value, int Size>
struct small_vector_caster {
  Value value;
  static constexpr auto name = const_name("numpy.ndarray[") + const_name<Size>() + const_name("]");
  template <typename T_, enable_if_t<std::is_same_v<Value, remove_cv_t<T_>>, int> = 0>
  static handle cast(T_* src, return_value_policy policy, handle parent) {
    if (!src) return none().release();
    return cast(*src, policy, parent);
  }
  operator Value*() { return &value; }
  operator Value&() { return value; }
  operator Value&&() && { return std::move(value); }
  template <typename T_>
  using cast_op_type = movable_cast_op_type<T_>;

  bool load(handle source, bool convert) {
    if (!convert && !isinstance<array>(source)) return false;
    if (isinstance<str>(source) || isinstance<bytes>(source)) return false;
    auto numbers = array_t<double, array::c_style | array::forcecast>::ensure(source);
    if (!numbers) return false;
    if (numbers.size() != Size)
      throw diffphys::Error(diffphys::message("expected ", Size, " numbers, got an array of shape ",
                                              diffphys::python::shape_text(numbers)));
    const double* data = numbers.data();
    if constexpr (Size == 3) {
      value = Value{data[0], data[1], data[2]};
    } else {
      value = Value{data[0], data[1], data[2], data[3]};
    }
    return true;
  }
  static handle cast(const Value& source, return_value_policy, handle) {
    array_t<double> result(Size);
    double* data = result.mutable_data();
    if constexpr (Size == 3) {
      data[0] = source.x, data[1] = source.y, data[2] = source.z;
    } else {
      data[0] = source.w, data[1] = source.x, data[2] = source.y, data[3] = source.z;
    }
    return result.release();
  }
};

template <>
struct type_caster<diffphys::Vec3> : small_vector_caster<diffphys::Vec3, 3> {};
template <>
struct type_caster<diffphys::Quat> : small_vector_caster<diffphys::Quat, 4> {};

}  // namespace pybind11::detail
