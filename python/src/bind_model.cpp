// python/src/bind_model.cpp — diffphys/model.hpp: the Model (bodies, shapes, joints, actuators,
// solver settings, the parameter layout θ) and its enums. The Model's structure is read-only
// from Python (it is immutable once built); dt and the solver settings may be changed, as in C++.
#include <cctype>

#include "bindings.hpp"
#include "diffphys/model.hpp"

namespace diffphys::python {
namespace {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// An enum of `values` whose constructor also takes a value's name as a string,
// case-insensitively: ShapeType("sphere"); `what` names the enum in the error for an unknown name.
template <typename Enum>
void bind_enum(py::module_& module, const char* name, const char* doc, const char* what,
               std::vector<std::pair<const char*, Enum>> values) {
  py::enum_<Enum> enumeration(module, name, doc);
  for (const auto& [value_name, value] : values) enumeration.value(value_name, value);
  enumeration.def(py::init([values, what](const std::string& wanted) {
                    std::string known;
                    for (const auto& [value_name, value] : values) {
                      if (lowercase(value_name) == lowercase(wanted)) return value;
                      known += (known.empty() ? "" : ", ") + lowercase(value_name);
                    }
                    throw Error(message("unknown ", what, " '", wanted, "' (known: ", known, ")"));
                  }),
                  py::arg("name"));
  py::implicitly_convertible<py::str, Enum>();
}

}  // namespace

void bind_model(py::module_& module) {
  bind_enum<BodyType>(module, "BodyType",
                      "A body that moves under forces and constraints (Dynamic), never moves (Static), or moves "
                      "by the velocity its state holds, written by the program between steps (Kinematic: "
                      "MuJoCo's mocap bodies; infinitely massive to every constraint row, but moving).",
                      "body type",
                      {{"Static", BodyType::Static}, {"Dynamic", BodyType::Dynamic}, {"Kinematic", BodyType::Kinematic}});
  bind_enum<ShapeType>(module, "ShapeType",
                       "Collision shape: Sphere (radius), Box (half extents), Capsule (radius, "
                       "half length along local z), Cylinder (radius, half length along local z), "
                       "Plane (static bodies only, normal +z), ConvexMesh (a hull from an OBJ or STL "
                       "file in a scene file; its scale is the size parameter), Ellipsoid (semi-axes along local "
                       "x, y, z, in ShapeSpec.half_extents).",
                       "shape type",
                       {{"Sphere", ShapeType::Sphere},
                        {"Box", ShapeType::Box},
                        {"Capsule", ShapeType::Capsule},
                        {"Cylinder", ShapeType::Cylinder},
                        {"Plane", ShapeType::Plane},
                        {"ConvexMesh", ShapeType::ConvexMesh},
                        {"Ellipsoid", ShapeType::Ellipsoid}});
  bind_enum<JointType>(module, "JointType", "Joint kinds and their degrees of freedom.", "joint type",
                       {{"Fixed", JointType::Fixed},
                        {"Revolute", JointType::Revolute},
                        {"Prismatic", JointType::Prismatic},
                        {"Ball", JointType::Ball},
                        {"Universal", JointType::Universal},
                        {"Planar", JointType::Planar}});
  bind_enum<EqualityType>(module, "EqualityType",
                          "Soft equality constraints (docs/simulation.md, \"Equality constraints\"): Connect (a point of "
                          "body_b held on a point of body_a, 3 rows), Distance (two points held at a length, 1 row), Weld "
                          "(Connect plus body_b's orientation held relative to body_a's, 6 rows).",
                          "equality type",
                          {{"Connect", EqualityType::Connect}, {"Distance", EqualityType::Distance}, {"Weld", EqualityType::Weld}});
  bind_enum<ActuatorType>(
      module, "ActuatorType",
      "Motor: the control is a torque or force. Servo: the control is a target position (Degrave et al. 2019).",
      "actuator type", {{"Motor", ActuatorType::Motor}, {"Servo", ActuatorType::Servo}});
  py::enum_<Coordinates>(module, "Coordinates",
                         "Maximal (6 per body, joints as constraint rows) or Reduced (one per joint: contact-free "
                         "trees of revolute and prismatic joints with motors and servos; docs/simulation.md).")
      .value("Maximal", Coordinates::Maximal)
      .value("Reduced", Coordinates::Reduced);
  bind_enum<Formulation>(
      module, "Formulation",
      "Complementarity (the hard mixed LCP, pyramid friction) or Convex (compliant rows, elliptic friction cone, "
      "Newton; a unique step and smooth gradients; docs/simulation.md). Fixed when the model is built.",
      "formulation", {{"Complementarity", Formulation::Complementarity}, {"Convex", Formulation::Convex}});
  bind_enum<ContactPoint>(
      module, "ContactPoint",
      "Where a contact's impulse acts: Midpoint (both bodies midway between the surfaces, MuJoCo's contact frame) or "
      "Surfaces (each body at its own surface point; conserves a sphere's angular momentum about its lowest point; "
      "docs/simulation.md).",
      "contact point", {{"Midpoint", ContactPoint::Midpoint}, {"Surfaces", ContactPoint::Surfaces}});
  bind_enum<SolverType>(
      module, "SolverType", "Solver of the velocity-level mixed LCP.", "solver type",
      {{"InteriorPoint", SolverType::InteriorPoint}, {"ProjectedGaussSeidel", SolverType::ProjectedGaussSeidel}});

  module.def("shape_size_count", &shape_size_count, py::arg("type"), "Size parameters of a shape type.");
  module.def("joint_dof_count", &joint_dof_count, py::arg("type"), "Coordinates (degrees of freedom) of a joint type.");
  module.def("joint_constraint_count", &joint_constraint_count, py::arg("type"),
             "Equality rows a joint type contributes to the velocity problem.");

  py::class_<Body>(module, "Body", "A body of a built Model (read-only).")
      .def_readonly("name", &Body::name)
      .def_readonly("type", &Body::type)
      .def_readonly("principal_frame", &Body::principal_frame,
                    "Rotation (w, x, y, z) from the principal-axes frame to the body frame.")
      .def_readonly("first_shape", &Body::first_shape)
      .def_readonly("shape_count", &Body::shape_count)
      .def("__repr__", [](const Body& body) {
        return "<Body '" + body.name + "' " + type_name(body.type) + ">";
      });

  py::class_<Shape>(module, "Shape", "A collision shape of a built Model (read-only).")
      .def_readonly("name", &Shape::name)
      .def_readonly("type", &Shape::type)
      .def_readonly("body", &Shape::body)
      .def_readonly("local_position", &Shape::local_position,
                    "Shape origin in the body frame (origin = centre of mass), m.")
      .def_readonly("local_orientation", &Shape::local_orientation)
      .def_readonly("collision_group", &Shape::collision_group)
      .def_readonly("collision_mask", &Shape::collision_mask)
      .def("__repr__", [](const Shape& shape) { return "<Shape '" + shape.name + "'>"; });

  py::class_<Joint>(module, "Joint", "A joint of a built Model (read-only); anchors and axes in body frames.")
      .def_readonly("name", &Joint::name)
      .def_readonly("type", &Joint::type)
      .def_readonly("parent", &Joint::parent)
      .def_readonly("child", &Joint::child)
      .def_readonly("anchor_parent", &Joint::anchor_parent)
      .def_readonly("anchor_child", &Joint::anchor_child)
      .def_readonly("axis_parent", &Joint::axis_parent)
      .def_readonly("axis_child", &Joint::axis_child)
      .def_readonly("axis2_child", &Joint::axis2_child)
      .def_readonly("axis2_parent", &Joint::axis2_parent)
      .def_readonly("axis3_parent", &Joint::axis3_parent)
      .def_readonly("rest_relative", &Joint::rest_relative)
      .def_readonly("has_limits", &Joint::has_limits)
      .def_readonly("lower_limit", &Joint::lower_limit)
      .def_readonly("upper_limit", &Joint::upper_limit)
      .def_readonly("collide_connected", &Joint::collide_connected)
      .def("__repr__", [](const Joint& joint) { return "<Joint '" + joint.name + "'>"; });

  py::class_<Equality>(module, "Equality",
                       "A soft equality constraint of a built Model (read-only); anchors in body frames (origin at "
                       "the centre of mass). Its time constant and damping ratio are θ's equality/NAME/time_constant "
                       "and .../damping_ratio.")
      .def_readonly("name", &Equality::name)
      .def_readonly("type", &Equality::type)
      .def_readonly("body_a", &Equality::body_a)
      .def_readonly("body_b", &Equality::body_b)
      .def_readonly("anchor_a", &Equality::anchor_a, "In body_a's frame, m.")
      .def_readonly("anchor_b", &Equality::anchor_b, "In body_b's frame, m.")
      .def_readonly("length", &Equality::length, "Distance: the held length, m.")
      .def_readonly("relative", &Equality::relative, "Weld: body_b's orientation relative to body_a's held (w, x, y, z).")
      .def("__repr__", [](const Equality& equality) {
        return "<Equality '" + equality.name + "' (" + type_name(equality.type) + ")>";
      });

  py::class_<Actuator>(module, "Actuator", "An actuator of a built Model (read-only).")
      .def_readonly("name", &Actuator::name)
      .def_readonly("type", &Actuator::type)
      .def_readonly("joint", &Actuator::joint)
      .def_readonly("dof", &Actuator::dof)
      .def("__repr__", [](const Actuator& actuator) { return "<Actuator '" + actuator.name + "'>"; });

  py::class_<SolverSettings>(module, "SolverSettings", "Velocity-solver settings (docs/scene-format.md, Solver).")
      .def(py::init<>())
      .def_readwrite("coordinates", &SolverSettings::coordinates)
      .def_readwrite("formulation", &SolverSettings::formulation)
      .def_readwrite("type", &SolverSettings::type)
      .def_readwrite("max_iterations", &SolverSettings::max_iterations)
      .def_readwrite("tolerance", &SolverSettings::tolerance)
      .def_readwrite("friction_directions", &SolverSettings::friction_directions)
      .def_readwrite("slip_aligned_friction", &SolverSettings::slip_aligned_friction)
      .def_readwrite("contact_margin", &SolverSettings::contact_margin)
      .def_readwrite("speculative_factor", &SolverSettings::speculative_factor)
      .def_readwrite("contact_point", &SolverSettings::contact_point)
      .def_readwrite("contact_erp", &SolverSettings::contact_erp)
      .def_readwrite("penetration_slop", &SolverSettings::penetration_slop)
      .def_readwrite("restitution_threshold", &SolverSettings::restitution_threshold)
      .def_readwrite("warm_start", &SolverSettings::warm_start)
      .def_readwrite("time_of_impact", &SolverSettings::time_of_impact)
      .def_readwrite("stabilization_iterations", &SolverSettings::stabilization_iterations)
      .def_readwrite("stabilization_tolerance", &SolverSettings::stabilization_tolerance);

  py::class_<ParamLayout> layout(module, "ParamLayout",
                                 "Where each physical constant sits in the flat parameter vector θ (Params.values).");
  bind_slice<ParamLayout::Slice>(layout, "Slice", "A named slice of θ: name, offset, size.");
  layout.def_readonly("slices", &ParamLayout::slices, "The slices in layout order; they tile [0, size).")
      .def_readonly("size", &ParamLayout::size)
      .def_readonly("gravity", &ParamLayout::gravity)
      .def_readonly("body_mass", &ParamLayout::body_mass, "(nbody) offsets, -1 where absent (static bodies).")
      .def_readonly("body_inertia", &ParamLayout::body_inertia)
      .def_readonly("body_friction", &ParamLayout::body_friction)
      .def_readonly("body_restitution", &ParamLayout::body_restitution)
      .def_readonly("body_linear_damping", &ParamLayout::body_linear_damping)
      .def_readonly("body_angular_damping", &ParamLayout::body_angular_damping)
      .def_readonly("body_force", &ParamLayout::body_force)
      .def_readonly("body_torque", &ParamLayout::body_torque)
      .def_readonly("shape_size", &ParamLayout::shape_size)
      .def_readonly("joint_damping", &ParamLayout::joint_damping)
      .def_readonly("actuator_gain", &ParamLayout::actuator_gain)
      .def_readonly("actuator_max_torque", &ParamLayout::actuator_max_torque)
      .def_readonly("actuator_max_velocity", &ParamLayout::actuator_max_velocity)
      .def("find", &ParamLayout::index, py::arg("name"),
           "Index of the slice with this name; an unknown name raises diffphys.Error with the nearest known one.")
      .def(
          "names",
          [](const ParamLayout& self) {
            std::vector<std::string> names;
            for (const auto& slice : self.slices) names.push_back(slice.name);
            return names;
          },
          "Slice names in layout order.");

  py::class_<Model>(module, "Model",
                    "Everything constant during a rollout: bodies (body 0 is the world), shapes, joints, "
                    "actuators, the time step, solver settings and the layout of θ. Built by ModelBuilder "
                    "or load_scene; its structure is read-only.")
      .def_readonly("name", &Model::name)
      .def_readwrite("dt", &Model::dt, "Time step, s.")
      .def_readwrite("solver", &Model::solver)
      .def_readonly("bodies", &Model::bodies)
      .def_readonly("shapes", &Model::shapes)
      .def_readonly("joints", &Model::joints)
      .def_readonly("actuators", &Model::actuators)
      .def_readonly("equalities", &Model::equalities)
      .def_readonly("layout", &Model::layout)
      .def("body_count", &Model::body_count)
      .def("shape_count", &Model::shape_count)
      .def("joint_count", &Model::joint_count)
      .def("actuator_count", &Model::actuator_count)
      .def("param_count", &Model::param_count)
      .def("body_index", &Model::body_index, py::arg("name"), "Index of a body; raises diffphys.Error if unknown.")
      .def("joint_index", &Model::joint_index, py::arg("name"))
      .def("actuator_index", &Model::actuator_index, py::arg("name"))
      .def("__repr__", [](const Model& model) {
        return "<Model '" + model.name + "': " + std::to_string(model.body_count()) + " bodies, " +
               std::to_string(model.joint_count()) + " joints, " + std::to_string(model.actuator_count()) +
               " actuators, " + std::to_string(model.param_count()) + " parameters>";
      });
}

}  // namespace diffphys::python
