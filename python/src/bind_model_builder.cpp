// python/src/bind_model_builder.cpp — diffphys/model_builder.hpp: the specs (ShapeSpec,
// BodySpec, JointSpec, ActuatorSpec), ModelBuilder and Scene. Specs take their fields as
// keyword arguments (BodySpec(name="ball", mass=1.0, shapes=[ShapeSpec(type="sphere",
// radius=0.1)])); an unknown keyword is a TypeError. Validation is build()'s, as in C++.
#include "bindings.hpp"
#include "diffphys/model_builder.hpp"

namespace diffphys::python {
namespace {

// Spec(**fields): a default spec, then each field set through its Python property.
template <typename Spec>
void init_from_keywords(py::class_<Spec>& spec_class, const char* type_name) {
  spec_class.def(py::init([type_name](const py::kwargs& fields) {
    Spec spec;
    py::object proxy = py::cast(&spec, py::return_value_policy::reference);
    for (const auto& [key, value] : fields) {
      const std::string field = py::cast<std::string>(key);
      if (field.empty() || field[0] == '_' || !py::hasattr(proxy, key) ||
          py::isinstance<py::function>(proxy.attr(key)) || py::hasattr(proxy.attr(key), "__func__"))
        throw py::type_error(message(type_name, " has no field '", field, "'"));
      // An enum field given by name: convert here, so that a misspelt name gets the enum's
      // own message (the implicit conversion would only say "incompatible arguments").
      py::object current = proxy.attr(key);
      if (py::isinstance<py::str>(value) && py::hasattr(current, "__members__"))
        py::setattr(proxy, key, current.get_type()(value));
      else
        py::setattr(proxy, key, value);
    }
    return spec;
  }));
}

// builder.`name`(spec) and builder.`name`(**fields): a Spec, or its fields as keywords.
template <typename Spec>
void def_add(py::class_<ModelBuilder>& builder, const char* name, int (ModelBuilder::*add)(Spec)) {
  builder.def(name, add, py::arg("spec")).def(name, [add](ModelBuilder& self, const py::kwargs& fields) {
    return (self.*add)(py::type::of<Spec>()(**fields).template cast<Spec>());
  });
}

}  // namespace

void bind_model_builder(py::module_& module) {
  py::class_<ShapeSpec> shape_spec(
      module, "ShapeSpec",
      "A collision shape in its body's frame. Fields: name, type (ShapeType or "
      "'sphere'/'box'/'capsule'/'cylinder'/'plane'), position, orientation (w, x, y, z), radius, "
      "half_extents, half_length, collision_group, collision_mask.");
  init_from_keywords(shape_spec, "ShapeSpec");
  shape_spec.def_readwrite("name", &ShapeSpec::name)
      .def_readwrite("type", &ShapeSpec::type)
      .def_readwrite("position", &ShapeSpec::position, "In the body frame, m.")
      .def_readwrite("orientation", &ShapeSpec::orientation, "In the body frame (w, x, y, z).")
      .def_readwrite("radius", &ShapeSpec::radius, "Sphere, capsule, cylinder, m.")
      .def_readwrite("half_extents", &ShapeSpec::half_extents, "Box, m.")
      .def_readwrite("half_length", &ShapeSpec::half_length,
                     "Capsule: half the segment along local z; cylinder: half its length along local z, m.")
      .def_readwrite("collision_group", &ShapeSpec::collision_group)
      .def_readwrite("collision_mask", &ShapeSpec::collision_mask);

  py::class_<BodySpec> body_spec(
      module, "BodySpec",
      "A rigid body in the user's terms (world frame at t = 0). mass, inertia and center_of_mass are "
      "optional (None: from the shapes at `density`). Vector fields are copies: assign a whole vector "
      "(spec.position = (0, 0, 1)); likewise assign the whole `shapes` list.");
  init_from_keywords(body_spec, "BodySpec");
  body_spec.def_readwrite("name", &BodySpec::name)
      .def_readwrite("type", &BodySpec::type)
      .def_readwrite("position", &BodySpec::position, "Body frame origin in world, m.")
      .def_readwrite("orientation", &BodySpec::orientation, "Body frame → world (w, x, y, z).")
      .def_readwrite("linear_velocity", &BodySpec::linear_velocity, "m/s.")
      .def_readwrite("angular_velocity", &BodySpec::angular_velocity, "World frame, rad/s.")
      .def_readwrite("mass", &BodySpec::mass, "kg, or None.")
      .def_readwrite("inertia", &BodySpec::inertia, "Principal moments, kg·m², or None.")
      .def_readwrite("center_of_mass", &BodySpec::center_of_mass, "Body frame, m, or None.")
      .def_readwrite("density", &BodySpec::density, "kg/m³.")
      .def_readwrite("friction", &BodySpec::friction)
      .def_readwrite("restitution", &BodySpec::restitution)
      .def_readwrite("linear_damping", &BodySpec::linear_damping, "1/s.")
      .def_readwrite("angular_damping", &BodySpec::angular_damping, "1/s.")
      .def_readwrite("force", &BodySpec::force, "Constant external force, world frame, N.")
      .def_readwrite("torque", &BodySpec::torque, "Constant external torque, world frame, N·m.")
      .def_readwrite("shapes", &BodySpec::shapes, "List of ShapeSpec.");

  py::class_<EqualitySpec> equality_spec(
      module, "EqualitySpec",
      "A soft equality constraint (docs/simulation.md, \"Equality constraints\"; built in the convex formulation). "
      "Points in the world frame at build time: connect and weld hold body_b's point `anchor` on body_a's "
      "(body_a default 'world'); distance holds anchor_a and anchor_b at `length` (None: as built); a weld "
      "with separate_anchors takes anchor_a and anchor_b, and holds body_b's orientation at `relative` to "
      "body_a's (None: as built). time_constant τ (s) and damping_ratio ζ: the spring's (MuJoCo's solref).");
  init_from_keywords(equality_spec, "EqualitySpec");
  equality_spec.def_readwrite("name", &EqualitySpec::name)
      .def_readwrite("type", &EqualitySpec::type)
      .def_readwrite("body_a", &EqualitySpec::body_a)
      .def_readwrite("body_b", &EqualitySpec::body_b)
      .def_readwrite("anchor", &EqualitySpec::anchor, "Connect, weld: world frame, m.")
      .def_readwrite("anchor_a", &EqualitySpec::anchor_a, "Distance (and a weld with separate_anchors): world frame, m.")
      .def_readwrite("anchor_b", &EqualitySpec::anchor_b, "Distance (and a weld with separate_anchors): world frame, m.")
      .def_readwrite("length", &EqualitySpec::length, "Distance: m, or None (as built).")
      .def_readwrite("separate_anchors", &EqualitySpec::separate_anchors)
      .def_readwrite("relative", &EqualitySpec::relative, "Weld: (w, x, y, z), or None (as built).")
      .def_readwrite("time_constant", &EqualitySpec::time_constant, "s.")
      .def_readwrite("damping_ratio", &EqualitySpec::damping_ratio);

  py::class_<JointSpec> joint_spec(module, "JointSpec",
                                   "A joint; anchor and axes in the world frame at build time. lower_limit and "
                                   "upper_limit: both or neither (None).");
  init_from_keywords(joint_spec, "JointSpec");
  joint_spec.def_readwrite("name", &JointSpec::name)
      .def_readwrite("type", &JointSpec::type)
      .def_readwrite("parent", &JointSpec::parent)
      .def_readwrite("child", &JointSpec::child)
      .def_readwrite("anchor", &JointSpec::anchor, "World frame, m.")
      .def_readwrite("axis", &JointSpec::axis,
                     "World frame: hinge/slide axis; universal's first axis; planar: the plane's normal.")
      .def_readwrite("axis2", &JointSpec::axis2,
                     "World frame: universal's second axis; planar: the in-plane direction of dof 0.")
      .def_readwrite("axis3", &JointSpec::axis3,
                     "World frame, planar only: the in-plane direction of dof 1 (None: axis x axis2).")
      .def_readwrite("lower_limit", &JointSpec::lower_limit)
      .def_readwrite("upper_limit", &JointSpec::upper_limit)
      .def_readwrite("damping", &JointSpec::damping)
      .def_readwrite("collide_connected", &JointSpec::collide_connected);

  py::class_<ActuatorSpec> actuator_spec(module, "ActuatorSpec",
                                         "A motor (control: torque/force) or servo (control: target position) "
                                         "on one coordinate of a joint.");
  init_from_keywords(actuator_spec, "ActuatorSpec");
  actuator_spec.def_readwrite("name", &ActuatorSpec::name)
      .def_readwrite("type", &ActuatorSpec::type)
      .def_readwrite("joint", &ActuatorSpec::joint)
      .def_readwrite("dof", &ActuatorSpec::dof)
      .def_readwrite("gain", &ActuatorSpec::gain, "Servo, 1/s.")
      .def_readwrite("max_torque", &ActuatorSpec::max_torque, "Servo: torque bound; motor: control clip (0: none).")
      .def_readwrite("max_velocity", &ActuatorSpec::max_velocity, "Servo, rad/s or m/s.")
      .def_readwrite("control", &ActuatorSpec::control, "Initial control.");

  py::class_<Scene>(module, "Scene", "What a builder or a scene file produces: model, params, state, controls.")
      .def(py::init<>())
      .def_readwrite("model", &Scene::model)
      .def_readonly("warnings", &Scene::warnings,
                    "What a robot-file loader (URDF, MJCF) ignored or approximated, with file and line.")
      .def_property(
          "params", [](Scene& scene) -> Params& { return scene.params; },
          [](Scene& scene, const Params& params) {
            if (params.values.size() != scene.params.values.size())
              throw Error(message("Scene.params: ", params.values.size(), " values given, the model has ",
                                  scene.params.values.size()));
            std::copy(params.values.begin(), params.values.end(), scene.params.values.begin());
          },
          py::return_value_policy::reference_internal, "Default θ (writable in place).")
      .def_property(
          "state", [](Scene& scene) -> State& { return scene.state; },
          [](Scene& scene, const State& state) {
            if (state.body_count() != scene.state.body_count())
              throw Error(message("Scene.state: ", state.body_count(), " bodies given, the model has ",
                                  scene.state.body_count()));
            scene.state = state;  // into the same vectors: views of the old state stay valid
          },
          py::return_value_policy::reference_internal, "Initial state (writable in place).")
      .def_property(
          "controls", [](const Scene& scene) { return vector_of(scene.controls); },
          [](Scene& scene, const DoubleArray& controls) {
            const auto source = checked_span(controls, scene.controls.size(), "Scene.controls");
            std::copy(source.begin(), source.end(), scene.controls.begin());
          },
          "(nactuator) default control held by every step (a copy; assign to change).");

  module.def("set_formulation", &set_formulation, py::arg("scene"), py::arg("formulation"),
             "Switches a built scene's formulation in place; Convex adds θ's compliance slices "
             "('compliance/<class>/time_constant', '.../damping_ratio') at the end of θ if it has none.");

  py::class_<ModelBuilder> builder_class(
      module, "ModelBuilder",
      "Builds a Model with its default Params and initial State. Each add_* returns the "
      "index of what it added and accepts a spec or the spec's fields as keywords.");
  builder_class.def(py::init<>())
      .def_readwrite("name", &ModelBuilder::name)
      .def_readwrite("dt", &ModelBuilder::dt, "Time step, s.")
      .def_readwrite("gravity", &ModelBuilder::gravity, "m/s².")
      .def_readwrite("solver", &ModelBuilder::solver)
      .def_readwrite("world_friction", &ModelBuilder::world_friction)
      .def_readwrite("world_restitution", &ModelBuilder::world_restitution)
      .def(
          "set_compliance",
          [](ModelBuilder& builder, const std::string& row_class, double time_constant, double damping_ratio) {
            for (int c = 0; c < kRowClassCount; ++c)
              if (row_class == row_class_name(static_cast<RowClass>(c))) {
                builder.compliance[c] = {time_constant, damping_ratio};
                return;
              }
            throw Error("set_compliance: unknown row class '" + row_class + "' (contact, joint, limit, servo)");
          },
          py::arg("row_class"), py::arg("time_constant"), py::arg("damping_ratio") = 1.0,
          "Initial compliance of a row class of the convex formulation (contact, joint, limit, servo): time "
          "constant τ (s) and damping ratio ζ, θ's 'compliance/<class>/…' (docs/simulation.md).")
      .def("add_ground_plane", &ModelBuilder::add_ground_plane, py::arg("normal") = Vec3{0, 0, 1},
           py::arg("offset") = 0.0, "A plane n·x = offset on the world body.")
      .def("build", &ModelBuilder::build, py::call_guard<py::gil_scoped_release>(),
           "Validates everything and builds a Scene; raises diffphys.Error naming the offending item and value.");
  def_add(builder_class, "add_body", &ModelBuilder::add_body);
  def_add(builder_class, "add_joint", &ModelBuilder::add_joint);
  def_add(builder_class, "add_actuator", &ModelBuilder::add_actuator);
  def_add(builder_class, "add_equality", &ModelBuilder::add_equality);
}

}  // namespace diffphys::python
