// python/src/bind_world.cpp — diffphys/world.hpp: one world for any scene file (rigid, soft,
// both coupled, or a fluid): World (load_world, parse_world, its layout of named slices), WorldRollout,
// WorldController (subclassable from Python: closed loop), WorldGradients (with each part's health: rigid, soft,
// fluid) and WorldSimulator (stepping without a tape), everything as
// flat NumPy vectors in the layouts of World.layout — the state (state_size), its gradients in
// the tangent layout (tangent_size), θ (param_count) and the controls (T, control_count).
//
// The Python WorldRollout owns its World, θ (the C++ one references θ) and the controller of
// its last run, so nothing can dangle; run() may replace θ. Step statuses are copies (the C++
// ones are spans into the rollout). The GIL is released while loading, running and
// differentiating; Python callbacks (a controller, a loss-gradient function) take it back for
// each call and get fresh arrays, never views into C++ buffers. backward() takes dL/dx_t for
// every t as one (T + 1, tangent_size) array — the fast path, no Python call per step — or a
// callable. The rigid Rollout, Controller and Gradients of the Python API are a thin layer over
// these (python/diffphys/_rollout.py).
#include <sstream>

#include "bindings.hpp"
#include "diffphys/gradient_health.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_simulator.hpp"

namespace diffphys::python {
namespace {

// One world step's status, copied out of the rollout.
struct BoundStepStatus {
  std::vector<StepStatus> rigid;
  std::optional<soft::SoftStepStatus> soft;
  std::optional<fluid::FluidStepStatus> fluid;
  bool converged = true;
};

struct BoundWorldGradients : WorldGradients {
  int steps = 0;
  int control_count = 0;
};

// What a Python WorldRollout owns besides the C++ one: its World, θ (referenced by the C++
// rollout) and the WorldController of its last run (closed loop), kept alive for backward().
struct RolloutInputs {
  World world;
  WorldParams params;
  py::object controller;
};

// A WorldRollout that owns its inputs (constructed first, as the first base).
struct BoundWorldRollout : RolloutInputs, WorldRollout {
  BoundWorldRollout(const World& world_in, WorldParams params_in, const RolloutOptions& options)
      : RolloutInputs{world_in, std::move(params_in), py::none()},
        WorldRollout(world, params, WorldRolloutOptions{options}) {}
};

// Calls function(arguments..., out), `out` a fresh zeroed array of target.size() values, and
// writes (or adds, with `add`) what it returns — or `out` when it returns None — into
// `target`. The GIL must be held; `what` names the call in a size error.
template <typename... Arguments>
void call_into(const py::object& function, std::span<double> target, bool add, const std::string& what,
               Arguments&&... arguments) {
  py::array_t<double> out(static_cast<py::ssize_t>(target.size()));
  std::fill_n(out.mutable_data(), target.size(), 0.0);
  const py::object result = function(std::forward<Arguments>(arguments)..., out);
  const DoubleArray values = py::cast<DoubleArray>(result.is_none() ? py::object(out) : result);
  const auto source = checked_span(values, target.size(), what);
  for (std::size_t i = 0; i < target.size(); ++i) target[i] = add ? target[i] + source[i] : source[i];
}

WorldParams params_argument(const World& world, const DoubleArray& values, const char* what) {
  const auto span = shaped(values, {world.layout().param_count}, message(what, ": params"));
  return WorldParams{{span.begin(), span.end()}};
}

// A Python subclass of diffphys.WorldController: act() and act_backward() are looked up on the
// Python object at each call (the GIL taken for it), with x_t as a fresh (state_size) array.
class PythonWorldController : public WorldController {
 public:
  const World* world = nullptr;  // the world of the rollout running it, set by WorldRollout.run

  void act(int step, const WorldState& state, std::span<double> controls) override {
    py::gil_scoped_acquire gil;
    const py::function override = py::get_override(static_cast<const WorldController*>(this), "act");
    if (!override) throw Error("WorldController: a subclass must define act(step, x, controls)");
    call_into(override, controls, false, "WorldController.act", step, vector_of(pack_state(*world, state)));
  }

  void act_backward(int step, const WorldState& state, std::span<const double> control_gradient,
                    WorldStateGradient& state_gradient) override {
    py::gil_scoped_acquire gil;
    const py::function override = py::get_override(static_cast<const WorldController*>(this), "act_backward");
    if (!override)
      throw Error(
          "WorldController: closed-loop backward needs act_backward(step, x, control_gradient, state_gradient) "
          "adding (∂π/∂x)ᵀ ū into state_gradient (tangent_size)");
    call_into(override, state_gradient.all, true, "WorldController.act_backward", step,
              vector_of(pack_state(*world, state)), vector_of(control_gradient));
  }
};

// backward()'s argument as the rollout's loss: dL/dx_t of every t as one (T + 1, tangent_size)
// array (`array` keeps it), or a callable f(t, x_t, gradient) called with the GIL taken.
WorldLossGradient loss_gradient_of(const py::object& loss_gradient, const World& world, int steps, DoubleArray& array) {
  const auto width = static_cast<std::size_t>(world.layout().tangent_size);
  if (PyCallable_Check(loss_gradient.ptr()))
    return [&loss_gradient, &world](int t, const WorldState& state, WorldStateGradient& gradient) {
      py::gil_scoped_acquire gil;
      call_into(loss_gradient, gradient.all, true, message("WorldRollout.backward: loss gradient at step ", t), t,
                vector_of(pack_state(world, state)));
    };
  array = py::cast<DoubleArray>(loss_gradient);
  shaped(array, {steps + 1, world.layout().tangent_size}, "WorldRollout.backward: loss gradients",
         "(T + 1, tangent_size)");
  return [data = array.data(), width](int t, const WorldState&, WorldStateGradient& gradient) {
    const double* row = data + static_cast<std::size_t>(t) * width;
    for (std::size_t i = 0; i < width; ++i) gradient.all[i] += row[i];
  };
}

BoundStepStatus bound_status(const WorldStepStatus& status) {
  BoundStepStatus result{{status.rigid.begin(), status.rigid.end()}, std::nullopt, std::nullopt, status.converged()};
  if (status.soft != nullptr) result.soft = *status.soft;
  if (status.fluid != nullptr) result.fluid = *status.fluid;
  return result;
}

BoundStepStatus step_status(const WorldRollout& rollout, int step) { return bound_status(rollout.status(step)); }

void bind_soft_reports(py::module_& module) {
  py::class_<soft::SoftStepStatus>(module, "SoftStepStatus", "How a soft step's Newton solve went.")
      .def_readonly("converged", &soft::SoftStepStatus::converged)
      .def_readonly("iterations", &soft::SoftStepStatus::iterations)
      .def_readonly("residual", &soft::SoftStepStatus::residual, "‖∇Φ‖∞ over free DOFs, N.")
      .def_readonly("step_norm", &soft::SoftStepStatus::step_norm, "Last ‖Δx‖∞, m.")
      .def_readonly("regularised", &soft::SoftStepStatus::regularised)
      .def_readonly("line_search_failures", &soft::SoftStepStatus::line_search_failures)
      .def_readonly("objective", &soft::SoftStepStatus::objective, "Φ at the returned positions, J.")
      .def_readonly("message", &soft::SoftStepStatus::message, "Empty when converged; otherwise why not.")
      .def_property_readonly(
          "health",
          [](const soft::SoftStepStatus& status) {
            switch (status.health) {
              case soft::SoftStepStatus::Health::NonFinite: return "non_finite";
              case soft::SoftStepStatus::Health::TooFast: return "too_fast";
              default: return "ok";
            }
          },
          "'ok', 'non_finite' or 'too_fast': the state the step wrote (docs/robustness.md, State health)")
      .def_readonly("health_node", &soft::SoftStepStatus::health_node, "The first unhealthy free node, -1 if none.")
      .def_readonly("health_value", &soft::SoftStepStatus::health_value,
                    "Its non-finite component or its speed (m/s).");
  using Health = soft::SoftGradientHealth;
  py::class_<Health>(module, "SoftGradientHealth", "What the soft part's backward pass saw.")
      .def_readonly("state_gradient_norm", &Health::state_gradient_norm, "(T + 1) |(dL/dx_t, dL/dv_t)|.")
      .def_readonly("first_non_finite_step", &Health::first_non_finite_step, "-1 if none.")
      .def_readonly("first_non_finite_stage", &Health::first_non_finite_stage)
      .def_readonly("clipped_steps", &Health::clipped_steps)
      .def_readonly("non_converged_steps", &Health::non_converged_steps)
      .def_readonly("indefinite_steps", &Health::indefinite_steps)
      .def_readonly("solver_converged", &Health::solver_converged)
      .def_readonly("refactorised_steps", &Health::refactorised_steps);
}

void bind_fluid_reports(py::module_& module) {
  using Status = fluid::FluidStepStatus;
  py::class_<Status>(module, "FluidStepStatus", "How a fluid step's solves went (docs/fluids.md).")
      .def_readonly("converged", &Status::converged, "False: a solve missed its tolerance, or the state failed.")
      .def_readonly("pressure_iterations", &Status::pressure_iterations, "PCG iterations of the projection.")
      .def_readonly("pressure_residual", &Status::pressure_residual, "‖b − A p‖₂ / ‖b‖₂ at exit.")
      .def_readonly("viscosity_iterations", &Status::viscosity_iterations,
                    "PCG iterations of the viscous solve (0 when ν = 0).")
      .def_readonly("divergence_before", &Status::divergence_before, "RMS of ∇·u* before projection, 1/s.")
      .def_readonly("divergence_after", &Status::divergence_after, "RMS of ∇·u_{t+1} after projection, 1/s.")
      .def_readonly("cfl", &Status::cfl, "max|u_t| h / Δx of the input.")
      .def_readonly("message", &Status::message, "Empty when converged; otherwise why not.");
  using Health = fluid::FluidGradientHealth;
  py::class_<Health>(module, "FluidGradientHealth", "What the fluid's backward pass saw.")
      .def_readonly("state_gradient_norm", &Health::state_gradient_norm,
                    "(T + 1) ‖x̄_t‖₂ of the fluid's slices, after clipping.")
      .def_readonly("clipped_steps", &Health::clipped_steps)
      .def_readonly("first_non_finite_step", &Health::first_non_finite_step, "-1 if none.")
      .def_readonly("first_non_finite_stage", &Health::first_non_finite_stage)
      .def_readonly("unconverged_adjoint_steps", &Health::unconverged_adjoint_steps,
                    "Steps whose adjoint solves missed their tolerance.")
      .def_readonly("solver_converged", &Health::solver_converged,
                    "Every forward step and adjoint solve converged.");
}

void bind_layout(py::module_& module) {
  bind_slice<NamedSlice>(module, "NamedSlice",
                         "A named range of one of a world's flat vectors; `range` is slice(offset, offset + size).")
      .def_property_readonly("range", [](const NamedSlice& s) { return py::slice(s.offset, s.offset + s.size, 1); });

  py::class_<WorldLayout> layout(
      module, "WorldLayout",
      "The named slices of a world's flat vectors: state (13 per body [p, q (w, x, y, z), v, ω], then "
      "soft/positions and soft/velocities, then fluid/velocity_u, fluid/velocity_v and fluid/scalar/<name>), tangent (12 "
      "per body [p, θ, v, ω], then the soft and fluid slices as in the state), params and controls (one world step's). "
      "The rigid part's slices come first; soft_*_offset and fluid_*_offset are where the soft and fluid ones start.");
  layout.def_readonly("state_size", &WorldLayout::state_size)
      .def_readonly("tangent_size", &WorldLayout::tangent_size)
      .def_readonly("param_count", &WorldLayout::param_count)
      .def_readonly("control_count", &WorldLayout::control_count, "Controls per world step.")
      .def_readonly("soft_state_offset", &WorldLayout::soft_state_offset)
      .def_readonly("soft_tangent_offset", &WorldLayout::soft_tangent_offset)
      .def_readonly("soft_param_offset", &WorldLayout::soft_param_offset)
      .def_readonly("soft_control_offset", &WorldLayout::soft_control_offset)
      .def_readonly("fluid_state_offset", &WorldLayout::fluid_state_offset)
      .def_readonly("fluid_tangent_offset", &WorldLayout::fluid_tangent_offset)
      .def_readonly("fluid_param_offset", &WorldLayout::fluid_param_offset)
      .def_readonly("fluid_control_offset", &WorldLayout::fluid_control_offset);
  // Each part's ranges, whatever its kind (the registry of part kinds, docs/architecture.md).
  using Range = WorldLayout::PartRange;
  const auto range = [](int offset, int size) { return py::slice(offset, offset + size, 1); };
  py::class_<Range>(layout, "PartRange", "One part's range of each flat vector: slices, in the world's order.")
      .def_readonly("kind", &Range::kind, "'rigid', 'soft' or 'fluid'.")
      .def_property_readonly("state", [range](const Range& r) { return range(r.state_offset, r.state_size); })
      .def_property_readonly("tangent", [range](const Range& r) { return range(r.tangent_offset, r.tangent_size); })
      .def_property_readonly("params", [range](const Range& r) { return range(r.param_offset, r.param_count); })
      .def_property_readonly("controls", [range](const Range& r) { return range(r.control_offset, r.control_count); });
  layout.def_readonly("parts", &WorldLayout::parts, "The parts the world holds, in order (PartRange each).");
  // Each vector's slices (a list, in order) and the lookup of one by name.
  const auto slices = [&layout](const char* list, const char* lookup, std::vector<NamedSlice> WorldLayout::*member,
                                const char* vector) {
    layout.def_readonly(list, member);
    layout.def(
        lookup,
        [member, vector](const WorldLayout& self, std::string_view name) {
          return WorldLayout::find(self.*member, name, vector);
        },
        py::arg("name"), "The slice `name`; raises diffphys.Error naming the nearest known one if unknown.");
  };
  slices("state", "state_slice", &WorldLayout::state, "state");
  slices("tangent", "tangent_slice", &WorldLayout::tangent, "tangent");
  slices("params", "param_slice", &WorldLayout::params, "parameter");
  slices("controls", "control_slice", &WorldLayout::controls, "control");
}

}  // namespace

void bind_world(py::module_& module) {
  bind_soft_reports(module);
  bind_fluid_reports(module);
  bind_layout(module);

  py::class_<WorldCoupling>(module, "WorldCoupling", "How a world's parts act on each other.")
      .def_readonly("frame_bodies", &WorldCoupling::frame_bodies, "The rigid body moving each soft frame.")
      .def_readonly("substeps", &WorldCoupling::substeps, "Rigid steps per soft step.")
      .def_readonly("two_way", &WorldCoupling::two_way, "The soft bodies' reactions act on the rigid bodies.");

  py::class_<World>(module, "World",
                    "One world: rigid bodies, soft bodies or both, with one flat state, θ and control vector "
                    "(layout). Read from any scene file by load_world, or made from a rigid scene.")
      .def(py::init([](const Scene& scene) { return World(scene.model.name, "<scene>", scene, std::nullopt); }),
           py::arg("scene"), "The rigid world of a Scene (ModelBuilder.build(), load_scene).")
      .def(py::init([](const Model& model, const Params& params, const State& state) {
             validate_params(model, params);
             validate_state(model, state);
             Scene scene{
                 model, params, state, std::vector<double>(static_cast<std::size_t>(model.actuator_count())), {}};
             return World(model.name, "<model>", std::move(scene), std::nullopt);
           }),
           py::arg("model"), py::arg("params"), py::arg("state"),
           "The rigid world of a Model with default θ `params`, initial `state` (both validated) and zero controls.")
      .def_readonly("name", &World::name)
      .def_readonly("source", &World::source, "The file it was read from, or '<string>'.")
      .def_property_readonly(
          "rigid", [](const World& world) { return world.rigid; }, "The rigid part as a Scene (a copy), or None.")
      .def_readonly("coupling", &World::coupling)
      .def("kind", &World::kind, "'rigid', 'soft', 'rigid + soft' or 'fluid'.")
      .def("dt", &World::dt, "The world step, s (the soft step when the world holds soft bodies).")
      .def("has_rigid", &World::has_rigid)
      .def("has_soft", &World::has_soft)
      .def("has_fluid", &World::has_fluid)
      .def("rigid_steps_per_step", &World::rigid_steps_per_step)
      .def_property_readonly("layout", &World::layout, py::return_value_policy::reference_internal)
      .def(
          "initial_state", [](const World& world) { return vector_of(pack_state(world, world.initial_state())); },
          "(state_size) the scene's initial state.")
      .def(
          "default_params", [](const World& world) { return vector_of(world.default_params().values); },
          "(param_count) the scene's θ.")
      .def(
          "default_controls", [](const World& world) { return vector_of(world.default_controls()); },
          "(control_count) one world step's default controls (the rigid defaults, zero soft forces).")
      .def("__repr__", [](const World& world) {
        const WorldLayout& layout = world.layout();
        return message("<World '", world.name, "' (", world.kind(), "): ", layout.state_size, " states, ",
                       layout.param_count, " parameters, ", layout.control_count, " controls per step>");
      });

  def_loader(module, "load_world", &load_world,
             "Any scene file: JSON with sections 'rigid', 'soft', 'coupling', a rigid JSON scene, a URDF or MJCF "
             "robot (package_path and self_collision as in load_scene). Raises diffphys.Error naming the file, item "
             "and value.");
  module.def("parse_world", &parse_world, py::arg("json_text"), py::arg("source_name") = "<string>",
             py::arg("base_directory") = ".", py::call_guard<py::gil_scoped_release>(),
             "A world from JSON text; files it names (meshes) are found from `base_directory`.");

  py::class_<BoundStepStatus>(module, "WorldStepStatus", "One world step's status, per part (copies).")
      .def_readonly("rigid", &BoundStepStatus::rigid, "The step's rigid substeps' StepStatus (empty: no rigid part).")
      .def_readonly("soft", &BoundStepStatus::soft, "The soft step's SoftStepStatus, or None.")
      .def_readonly("fluid", &BoundStepStatus::fluid, "The fluid step's FluidStepStatus, or None.")
      .def_readonly("converged", &BoundStepStatus::converged, "Every part's solve converged.");

  py::class_<BoundWorldGradients> gradients_class(module, "WorldGradients",
                                                  "dL/dx_0, dL/du_t and dL/dθ in the world's layouts, with each part's "
                                                  "health report. Arrays are views kept alive by this object.");
  const auto gradient_array = [&gradients_class](const char* name, std::vector<double> WorldGradients::*member,
                                                 bool per_step, const char* doc) {
    gradients_class.def_property_readonly(
        name,
        [member, per_step](py::object self) {
          auto& g = self.cast<BoundWorldGradients&>();
          std::vector<double>& values = g.*member;
          return per_step ? view(values.data(), {g.steps, g.control_count}, self) : vector_view(values, self);
        },
        doc);
  };
  gradient_array("initial_state", &WorldGradients::initial_state, false,
                 "(tangent_size) dL/dx_0 in the tangent layout.");
  gradient_array("controls", &WorldGradients::controls, true, "(T, control_count) dL/du_t.");
  gradient_array("params", &WorldGradients::params, false, "(param_count) dL/dθ (empty with parameter_gradients off).");
  gradients_class
      .def(
          "param",
          [](py::object self, const World& world, std::string_view name) {
            const auto slice = self.cast<BoundWorldGradients&>().param(world, name);
            return view(const_cast<double*>(slice.data()), {static_cast<py::ssize_t>(slice.size())}, self);
          },
          py::arg("world"), py::arg("name"), "dL/dθ of one named slice; raises diffphys.Error for an unknown name.")
      .def_readonly("rigid_health", &BoundWorldGradients::rigid_health)
      .def_readonly("soft_health", &BoundWorldGradients::soft_health)
      .def_readonly("fluid_health", &BoundWorldGradients::fluid_health)
      .def_readonly("solver_converged", &BoundWorldGradients::solver_converged)
      .def_readonly("not_differentiable", &BoundWorldGradients::not_differentiable,
                    "Parameter slices at a value where the loss is not differentiable, and x0/<body> for each static "
                    "body (fixed scenery: its rows of initial_state are zero).");

  py::class_<WorldController, PythonWorldController>(
      module, "WorldController",
      "Feedback inside a world rollout (closed loop) of any world: rigid, soft or both. Subclass it and "
      "define act(step, x, controls): from x_t (state_size), write the (control_count) controls into `controls` or "
      "return them; and, for backward, act_backward(step, x, control_gradient, state_gradient): add (∂π/∂x_t)ᵀ ū_t "
      "(tangent layout) into the (tangent_size) `state_gradient` or return it, and accumulate the gradient of the "
      "controller's own parameters. act_backward is called once per step, for t = T−1 down to 0.")
      .def(py::init<>());

  py::class_<BoundWorldRollout>(module, "WorldRollout",
                                "A differentiable trajectory of any world: run T world steps, then backward() gives "
                                "exact gradients of a loss on the states w.r.t. x_0, every control and θ.")
      .def(py::init([](const World& world, const std::optional<DoubleArray>& params, const RolloutOptions& options) {
             return std::make_unique<BoundWorldRollout>(
                 world, params ? params_argument(world, *params, "WorldRollout") : world.default_params(), options);
           }),
           py::arg("world"), py::arg("params") = py::none(), py::arg("options") = RolloutOptions{},
           "θ: (param_count), None for the world's defaults. options: RolloutOptions, applied to every part.")
      .def(
          "run",
          [](BoundWorldRollout& self, const DoubleArray& x0, const py::object& controls, std::optional<int> steps,
             const std::optional<DoubleArray>& params) {
            const WorldLayout& layout = self.world.layout();
            const auto state = shaped(x0, {layout.state_size}, "WorldRollout.run: x0");
            const bool closed_loop = py::isinstance<WorldController>(controls);
            const bool given = !controls.is_none() && !closed_loop;  // controls as an array
            const DoubleArray control_array = given ? py::cast<DoubleArray>(controls) : DoubleArray();
            if (!steps && given && control_array.ndim() == 2) steps = static_cast<int>(control_array.shape(0));
            if (!steps) throw Error("WorldRollout.run: give steps, or controls as a (steps, control_count) array");
            std::span<const double> values;
            if (given)
              values = shaped(control_array, {*steps, layout.control_count}, "WorldRollout.run: controls",
                              "(steps, control_count)");
            if (params) {
              WorldParams replaced = params_argument(self.world, *params, "WorldRollout.run");
              if (self.world.has_rigid()) validate_params(self.world.rigid->model, rigid_params(self.world, replaced));
              self.params = std::move(replaced);  // the same object: the rollout's reference stays valid
            }
            const WorldState initial = unpack_state(self.world, state);
            self.controller = closed_loop ? controls : py::none();
            if (closed_loop) {
              auto& controller = dynamic_cast<PythonWorldController&>(controls.cast<WorldController&>());
              controller.world = &self.world;
              py::gil_scoped_release release;
              self.run(initial, controller, *steps);
            } else {
              py::gil_scoped_release release;
              self.run(initial, values, *steps);
            }
          },
          py::arg("x0"), py::arg("controls") = py::none(), py::arg("steps") = py::none(),
          py::arg("params") = py::none(),
          "From x0 (state_size) under controls: a (steps, control_count) array, None (the world's defaults held) or "
          "a WorldController (closed loop); `steps` is required unless the controls are an array. `params` "
          "(param_count) replaces θ for this and later runs.")
      .def("steps", &WorldRollout::steps)
      .def(
          "params", [](const BoundWorldRollout& self) { return vector_of(self.params.values); }, "θ (a copy).")
      .def(
          "controls",
          [](const BoundWorldRollout& self) {
            return copy_of(self.controls(), {self.steps(), self.world.layout().control_count});
          },
          "(T, control_count) the controls used (given, the defaults held, or the controller's), a copy.")
      .def(
          "state",
          [](const BoundWorldRollout& self, int step) { return vector_of(pack_state(self.world, self.state(step))); },
          py::arg("step"), "x_t (state_size), from storage or recomputed from the nearest checkpoint.")
      .def("final_state",
           [](const BoundWorldRollout& self) { return vector_of(pack_state(self.world, self.final_state())); })
      .def(
          "states",
          [](const BoundWorldRollout& self) {
            const int steps = self.steps();
            const auto width = static_cast<std::size_t>(self.world.layout().state_size);
            py::array_t<double> result({static_cast<py::ssize_t>(steps) + 1, static_cast<py::ssize_t>(width)});
            double* out = result.mutable_data();
            py::gil_scoped_release release;
            for (int t = 0; t <= steps; ++t) {
              const std::vector<double> x = pack_state(self.world, self.state(t));
              std::copy(x.begin(), x.end(), out + static_cast<std::size_t>(t) * width);
            }
            return result;
          },
          "(T + 1, state_size) every state x_0 … x_T.")
      .def(
          "status", [](const BoundWorldRollout& self, int step) { return step_status(self, step); }, py::arg("step"),
          "World step `step`'s WorldStepStatus.")
      .def(
          "statuses",
          [](const BoundWorldRollout& self) {
            if (!self.statuses_kept())
              throw Error(message("world rollout: the statuses of these ", self.steps(),
                                  " steps were not kept (their per-step logs would exceed a quarter of memory_budget): "
                                  "read status(t), which recomputes step t, or converged()"));
            std::vector<BoundStepStatus> statuses;
            for (int t = 0; t < self.steps(); ++t) statuses.push_back(step_status(self, t));
            return statuses;
          },
          "(T) WorldStepStatus; refused when the budget did not keep them (status(t) recomputes one).")
      .def("statuses_kept", &WorldRollout::statuses_kept,
           "Whether the last run kept every step's status (per-step logs within a quarter of memory_budget).")
      .def("converged", &WorldRollout::converged, "Every step of every part converged.")
      .def(
          "gradient_health",
          [](const BoundWorldRollout& self, const py::object& gradients, int probes, unsigned seed) {
            TerminalSensitivity sensitivity;
            {
              py::gil_scoped_release release;  // the probes' backward passes call no Python
              sensitivity = terminal_sensitivity(self.world, self.params, self, probes, seed);
            }
            const GradientHealth health = gradients.is_none()
                                              ? sensitivity.probe_health
                                              : combined_health(gradients.cast<const BoundWorldGradients&>());
            const GradientHealthReport report = analyze_gradient_health(health, sensitivity, self.world.dt());
            std::ostringstream text;
            print_gradient_health(text, report, health, sensitivity);
            py::dict out;
            out["verdict"] = report.verdict;
            out["growth_per_step"] = report.growth_per_step;
            out["growth_per_second"] = report.growth_per_second;
            out["total_growth"] = report.total_growth;
            out["smallest"] = report.smallest;
            out["largest_step_gain"] = report.largest_step_gain;
            out["largest_step"] = report.largest_step;
            out["onset_step"] = report.onset_step;
            out["onset_stage"] = report.onset_stage;
            out["onset_stage_gain"] = report.onset_stage_gain;
            out["first_non_finite_step"] = report.first_non_finite_step;
            out["first_non_finite_stage"] = report.first_non_finite_stage;
            out["contact_changes"] = report.contact_changes;
            out["clipped_steps"] = report.clipped_steps;
            out["solver_converged"] = report.solver_converged;
            out["sensitivity"] = vector_of(sensitivity.values);
            out["state_gradient_norm"] = vector_of(health.state_gradient_norm);
            out["text"] = text.str();
            return out;
          },
          py::arg("gradients") = py::none(), py::arg("probes") = 4, py::arg("seed") = 1,
          "The gradient's health over the last run (docs/gradients.md, \"Gradient health\"): the final state's "
          "sensitivity s_t to each x_t by `probes` exact backward passes from random unit cotangents at x_T, its "
          "growth, the verdict ('stable', 'exploding', 'vanishing', 'non-finite'), the largest one-step "
          "amplification, an explosion's onset step and amplifying stage; with `gradients` (a WorldGradients of "
          "this rollout's backward) also its |dL/dx_t| and first NaN. A dict; 'text' is the printed report.")
      .def("checkpoint_interval", &WorldRollout::checkpoint_interval, "A state kept every k steps by the last run.")
      .def("stored_state_bytes", &WorldRollout::stored_state_bytes,
           "Bytes of the states the last run kept (a coupled world's: both parts').")
      .def("stored_record_bytes", &WorldRollout::stored_record_bytes,
           "Bytes of the step records the last run kept (a coupled world's: both parts').")
      .def(
          "backward",
          [](const BoundWorldRollout& self, const py::object& loss_gradient) {
            DoubleArray array;
            const WorldLossGradient loss = loss_gradient_of(loss_gradient, self.world, self.steps(), array);
            BoundWorldGradients gradients;
            gradients.steps = self.steps();
            gradients.control_count = self.world.layout().control_count;
            py::gil_scoped_release release;
            static_cast<WorldGradients&>(gradients) = self.backward(loss);
            return gradients;
          },
          py::arg("loss_gradient"),
          "Exact gradients. loss_gradient: a (T + 1, tangent_size) array of dL/dx_t in the tangent layout, or a "
          "callable f(t, x_t, gradient) (x_t: (state_size)) that adds dL/dx_t into the (tangent_size) array "
          "`gradient` or returns it. Returns WorldGradients.");

  py::class_<WorldSimulator>(module, "WorldSimulator",
                                  "Any world stepped one world step at a time, keeping no history (what 'diffphys "
                                  "simulate' runs; WorldRollout keeps the tape a gradient needs). The same steps as "
                                  "a WorldRollout of the world, bit for bit, unless the rigid solver is PGS with "
                                  "warm_start (a simulation keeps it, a rollout turns it off).")
      .def(py::init([](const World& world, const std::optional<DoubleArray>& x0, const std::optional<DoubleArray>& params) {
             WorldState initial = x0 ? unpack_state(world, shaped(*x0, {world.layout().state_size}, "WorldSimulator: x0"))
                                     : world.initial_state();
             WorldParams theta = params ? params_argument(world, *params, "WorldSimulator") : world.default_params();
             return std::make_unique<WorldSimulator>(world, std::move(theta), std::move(initial));
           }),
           py::arg("world"), py::arg("x0") = py::none(), py::arg("params") = py::none(),
           "x0: (state_size), None for the scene's initial state; params: (param_count), None for its θ.")
      .def(
          "step",
          [](WorldSimulator& self, const std::optional<DoubleArray>& controls) {
            const auto values = controls ? shaped(*controls, {self.world().layout().control_count}, "WorldSimulator.step: controls")
                                         : std::span<const double>();
            py::gil_scoped_release release;
            return bound_status(self.step(values));
          },
          py::arg("controls") = py::none(),
          "One world step; controls: (control_count), None for the scene's defaults and no soft forces. Returns "
          "the step's WorldStepStatus.")
      .def(
          "run",
          [](WorldSimulator& self, int steps, const std::optional<DoubleArray>& controls) {
            if (steps < 0) throw Error(message("WorldSimulator.run: steps must be >= 0, got ", steps));
            const WorldLayout& layout = self.world().layout();
            const auto values =
                controls ? shaped(*controls, {steps, layout.control_count}, "WorldSimulator.run: controls", "(steps, control_count)")
                         : std::span<const double>();
            py::array_t<double> states({static_cast<py::ssize_t>(steps) + 1, static_cast<py::ssize_t>(layout.state_size)});
            double* out = states.mutable_data();
            const auto width = static_cast<std::size_t>(layout.state_size);
            {
              py::gil_scoped_release release;
              const auto write = [&](int row) {
                const std::vector<double> x = pack_state(self.world(), self.state());
                std::copy(x.begin(), x.end(), out + static_cast<std::size_t>(row) * width);
              };
              write(0);
              for (int t = 0; t < steps; ++t) {
                self.step(values.empty() ? values : values.subspan(static_cast<std::size_t>(t) * layout.control_count,
                                                                   static_cast<std::size_t>(layout.control_count)));
                write(t + 1);
              }
            }
            return states;
          },
          py::arg("steps"), py::arg("controls") = py::none(),
          "`steps` world steps; returns the states (steps + 1, state_size), the current one first. controls: "
          "(steps, control_count), None for the defaults.")
      .def(
          "state", [](const WorldSimulator& self) { return vector_of(pack_state(self.world(), self.state())); },
          "(state_size) the current state.")
      .def(
          "set_state",
          [](WorldSimulator& self, const DoubleArray& x) {
            self.set_state(unpack_state(self.world(), shaped(x, {self.world().layout().state_size}, "WorldSimulator.set_state: x")));
          },
          py::arg("x"),
          "Replaces the current state (state_size), checked as x0 is: how a program drives a kinematic body "
          "between steps (write its pose and velocity into state(), set it back).")
      .def("time", [](const WorldSimulator& self) { return self.state().time; }, "Seconds simulated.")
      .def("steps", &WorldSimulator::steps, "World steps taken.");
}

}  // namespace diffphys::python
