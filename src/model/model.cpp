// model/model.cpp — name lookups of the Model, the named slices of Params, and the
// validation of Params and State against a Model.
#include <algorithm>
#include <cmath>
#include <string>

#include "diffphys/error.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"
#include "model/nearest_name.hpp"

namespace diffphys {
namespace {

template <typename Item>
int find_by_name(const std::vector<Item>& items, std::string_view name, const char* kind) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return static_cast<int>(i);
  std::vector<std::string_view> known;
  for (const Item& item : items) known.push_back(item.name);
  throw Error(message("unknown ", kind, " '", name, "'", did_you_mean(name, known)));
}

}  // namespace

int ParamLayout::find(std::string_view name) const {
  for (std::size_t i = 0; i < slices.size(); ++i)
    if (slices[i].name == name) return static_cast<int>(i);
  return -1;
}

int Model::body_index(std::string_view body_name) const { return find_by_name(bodies, body_name, "body"); }
int Model::joint_index(std::string_view joint_name) const { return find_by_name(joints, joint_name, "joint"); }
int Model::actuator_index(std::string_view actuator_name) const {
  return find_by_name(actuators, actuator_name, "actuator");
}

std::string unknown_parameter_message(const ParamLayout& layout, std::string_view name) {
  std::vector<std::string_view> known;
  for (const ParamLayout::Slice& slice : layout.slices) known.push_back(slice.name);
  return message("unknown parameter '", name, "'", did_you_mean(name, known));
}

int ParamLayout::index(std::string_view name) const {
  const int found = find(name);
  if (found < 0) throw Error(unknown_parameter_message(*this, name));
  return found;
}

std::span<double> Params::slice(const Model& model, std::string_view name) {
  const int index = model.layout.index(name);
  // A vector of another length has no such slice (a view into it would reach past its end).
  if (static_cast<int>(values.size()) != model.param_count())
    throw Error(message("parameter '", name, "': the parameter vector has ", values.size(), " values, the model '", model.name,
                        "' expects ", model.param_count()));
  const auto& s = model.layout.slices[static_cast<std::size_t>(index)];
  return {values.data() + s.offset, static_cast<std::size_t>(s.size)};
}

std::span<const double> Params::slice(const Model& model, std::string_view name) const {
  return const_cast<Params&>(*this).slice(model, name);
}

void validate_params(const Model& model, const Params& params) {
  if (static_cast<int>(params.values.size()) != model.param_count())
    throw Error(message("parameter vector has ", params.values.size(), " values, the model '", model.name,
                        "' expects ", model.param_count()));
  const auto name_at = [&](int offset) -> std::string {
    for (const auto& s : model.layout.slices)
      if (offset >= s.offset && offset < s.offset + s.size) return s.name;
    return "?";
  };
  const auto refuse = [&](int offset, const char* requirement) {
    throw Error(message("parameter '", name_at(offset), "' ", requirement, ", got ", params.at(offset)));
  };
  for (int i = 0; i < model.param_count(); ++i)
    if (!std::isfinite(params.at(i))) refuse(i, "must be finite");
  const auto positive = [&](int offset, int size) {
    for (int k = 0; k < size && offset >= 0; ++k)
      if (!(params.at(offset + k) > 0)) refuse(offset + k, "must be positive");
  };
  const auto non_negative = [&](int offset) {
    if (offset >= 0 && !(params.at(offset) >= 0)) refuse(offset, "must be non-negative");
  };
  const auto& layout = model.layout;
  for (int b = 0; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    positive(layout.body_mass[i], 1);
    if (layout.body_inertia[i] >= 0) {
      const int o = layout.body_inertia[i];
      positive(o, 3);
      const double i1 = params.at(o), i2 = params.at(o + 1), i3 = params.at(o + 2);
      // Principal moments of a real mass distribution obey the triangle inequality.
      const double slack = 1e-9 * (i1 + i2 + i3);
      if (i1 + i2 < i3 - slack || i2 + i3 < i1 - slack || i1 + i3 < i2 - slack)
        throw Error(message("parameter '", name_at(o), "' = (", i1, ", ", i2, ", ", i3,
                            ") violates the triangle inequality of principal moments"));
    }
    non_negative(layout.body_friction[i]);
    if (const int o = layout.body_restitution[i]; o >= 0 && !(params.at(o) >= 0 && params.at(o) <= 1))
      refuse(o, "must lie in [0, 1]");
    non_negative(layout.body_linear_damping[i]);
    non_negative(layout.body_angular_damping[i]);
  }
  for (int c = 0; c < kRowClassCount; ++c) {
    positive(layout.compliance_time_constant[c], 1);
    positive(layout.compliance_damping_ratio[c], 1);
  }
  for (std::size_t e = 0; e < layout.equality_time_constant.size(); ++e) {
    positive(layout.equality_time_constant[e], 1);
    positive(layout.equality_damping_ratio[e], 1);
  }
  for (int s = 0; s < model.shape_count(); ++s) {
    positive(layout.shape_size[static_cast<std::size_t>(s)], shape_size_count(model.shapes[static_cast<std::size_t>(s)].type));
  }
  for (int j = 0; j < model.joint_count(); ++j) non_negative(layout.joint_damping[static_cast<std::size_t>(j)]);
  for (int a = 0; a < model.actuator_count(); ++a) {
    const auto i = static_cast<std::size_t>(a);
    if (model.actuators[i].type == ActuatorType::Servo) {
      positive(layout.actuator_gain[i], 1);
      positive(layout.actuator_max_torque[i], 1);
      positive(layout.actuator_max_velocity[i], 1);
    } else {
      non_negative(layout.actuator_max_torque[i]);
    }
  }
}

void State::resize(int body_count) {
  const auto n = static_cast<std::size_t>(body_count);
  position.resize(n);
  orientation.resize(n);
  linear_velocity.resize(n);
  angular_velocity.resize(n);
}

void validate_state(const Model& model, const State& state) {
  const auto n = static_cast<std::size_t>(model.body_count());
  if (state.position.size() != n || state.orientation.size() != n || state.linear_velocity.size() != n ||
      state.angular_velocity.size() != n)
    throw Error(message("state has ", state.position.size(), " bodies, the model '", model.name, "' has ", n));
  if (!std::isfinite(state.time)) throw Error(message("state time must be finite, got ", state.time));
  for (std::size_t b = 0; b < n; ++b) {
    const std::string& name = model.bodies[b].name;
    if (!is_finite(state.position[b])) throw Error(message("body '", name, "': position is not finite"));
    if (!is_finite(state.orientation[b])) throw Error(message("body '", name, "': orientation is not finite"));
    if (std::abs(state.orientation[b].squared_norm() - 1.0) > 1e-6)
      throw Error(message("body '", name, "': orientation is not a unit quaternion (norm² ",
                          state.orientation[b].squared_norm(), ")"));
    if (!is_finite(state.linear_velocity[b])) throw Error(message("body '", name, "': linear velocity is not finite"));
    if (!is_finite(state.angular_velocity[b]))
      throw Error(message("body '", name, "': angular velocity is not finite"));
  }
}

const char* type_name(BodyType type) {
  switch (type) {
    case BodyType::Static: return "static";
    case BodyType::Dynamic: return "dynamic";
    case BodyType::Kinematic: return "kinematic";
  }
  return "unknown";
}

const char* type_name(ShapeType type) {
  switch (type) {
    case ShapeType::Sphere: return "sphere";
    case ShapeType::Box: return "box";
    case ShapeType::Capsule: return "capsule";
    case ShapeType::Plane: return "plane";
    case ShapeType::ConvexMesh: return "mesh";
    case ShapeType::Cylinder: return "cylinder";
    case ShapeType::Ellipsoid: return "ellipsoid";
  }
  return "unknown";
}

const char* row_class_name(RowClass row_class) {
  switch (row_class) {
    case RowClass::Contact: return "contact";
    case RowClass::Joint: return "joint";
    case RowClass::Limit: return "limit";
    case RowClass::Servo: return "servo";
  }
  return "unknown";
}

const char* type_name(EqualityType type) {
  switch (type) {
    case EqualityType::Connect: return "connect";
    case EqualityType::Distance: return "distance";
    case EqualityType::Weld: return "weld";
  }
  return "?";
}

const char* type_name(JointType type) {
  switch (type) {
    case JointType::Fixed: return "fixed";
    case JointType::Revolute: return "revolute";
    case JointType::Prismatic: return "prismatic";
    case JointType::Ball: return "ball";
    case JointType::Universal: return "universal";
    case JointType::Planar: return "planar";
  }
  return "unknown";
}

}  // namespace diffphys
