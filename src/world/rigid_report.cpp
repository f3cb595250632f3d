// world/rigid_report.cpp — the rigid part's PartReport (world/part_report.hpp): its
// description for `diffphys info` (settings, bodies, shapes, joints, actuators, the named
// slices of θ with their values) and its lines of the `diffphys simulate` summary (contacts,
// solver, final state; the non-converged steps on stderr; an unhealthy state stops the run).
#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <span>

#include "diffphys/error.hpp"
#include "world/part_report.hpp"

namespace diffphys::report {

namespace {

// Components below 1e-12 in magnitude (round-off of quantities that are zero) print as 0.
std::string format_vec3(const Vec3& v) {
  std::string text = "(";  // appended (GCC 12's -Wrestrict misfires on "(" + std::string)
  text.append(number_or_zero(v.x)).append(", ").append(number_or_zero(v.y)).append(", ").append(number_or_zero(v.z));
  return text.append(")");
}

std::string format_values(std::span<const double> values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += number(values[i], 10);
  }
  return text + "]";
}

const char* solver_type_name(SolverType type) { return type == SolverType::InteriorPoint ? "interior_point" : "pgs"; }

// The step's solver as a user set it: joint coordinates need none (rigid/articulated.hpp).
const char* solver_name(const SolverSettings& solver) {
  if (solver.coordinates == Coordinates::Reduced) return "none (reduced coordinates: joints exact, no contacts)";
  return solver.formulation == Formulation::Convex ? "newton (convex formulation)" : solver_type_name(solver.type);
}

const char* body_type_name(BodyType type) { return type_name(type); }

const char* actuator_type_name(ActuatorType type) { return type == ActuatorType::Motor ? "motor" : "servo"; }

// The parameter slot at layout index `item` of a per-item offset table, or nullopt when the
// slot does not apply (offset -1) or the table is shorter than expected.
std::optional<std::span<const double>> param_slot(const Params& params, const std::vector<int>& offsets, std::size_t item,
                                                  int size) {
  if (item >= offsets.size() || offsets[item] < 0) return std::nullopt;
  const auto offset = static_cast<std::size_t>(offsets[item]);
  if (offset + static_cast<std::size_t>(size) > params.values.size()) return std::nullopt;
  return std::span<const double>(params.values).subspan(offset, static_cast<std::size_t>(size));
}

struct NonConvergedStep {
  long long step = 0;  // world step
  int substep = 0;     // rigid substep within it
  double time = 0.0;   // at the world step's end
  StepStatus status;
};

class RigidReport final : public PartReport {
 public:
  RigidReport(const World& world, const WorldParams& params) : world_(world), params_(rigid_params(world, params)) {}

  std::string name() const override { return "rigid"; }
  std::string single_heading() const override { return "scene"; }
  void describe(std::ostream& out, const std::string& heading) const override;

  std::string scene_summary() const override {
    const Model& model = world_.rigid->model;
    const auto dynamic = std::count_if(model.bodies.begin(), model.bodies.end(),
                                       [](const Body& body) { return body.type == BodyType::Dynamic; });
    const auto kinematic = std::count_if(model.bodies.begin(), model.bodies.end(),
                                         [](const Body& body) { return body.type == BodyType::Kinematic; });
    return plural(model.body_count() - 1, "body", "bodies") + " (" + std::to_string(dynamic) + " dynamic" +
           (kinematic > 0 ? ", " + std::to_string(kinematic) + " kinematic" : std::string()) + "), " +
           plural(model.joint_count(), "joint", "joints") + ", " + plural(model.actuator_count(), "actuator", "actuators");
  }

  void observe(long long step, const WorldState& state, const WorldStepStatus& status) override {
    const int substeps = static_cast<int>(status.rigid.size());
    for (int k = 0; k < substeps; ++k) {
      const StepStatus& s = status.rigid[static_cast<std::size_t>(k)];
      // An unhealthy state is not a result (docs/robustness.md, "State health"): stop here;
      // the outputs are written only after the run, so none is left behind.
      if (s.health != StateHealth::Ok)
        throw Error(message("step ", step,
                            substeps == 1 ? std::string() : message(" (rigid substep ", k + 1, " of ", substeps, ")"),
                            " (t = ", number(state.time), " s): ", health_message(world_.rigid->model, s),
                            "; stopped, nothing written"));
      ++rigid_steps_;
      if (s.contact_count > 0) ++contact_steps_;
      max_contacts_ = std::max(max_contacts_, s.contact_count);
      max_residual_ = std::max(max_residual_, s.residual);
      max_iterations_ = std::max(max_iterations_, s.iterations);
      max_joint_error_ = std::max(max_joint_error_, s.joint_error);
      if (!s.converged) {
        ++non_converged_;
        if (listed_.size() < kListed) listed_.push_back({step, k, state.time, s});
      }
    }
  }

  void print_summary(std::ostream& out, const WorldState& final_state) const override {
    const Model& model = world_.rigid->model;
    out << "contacts    " << contact_steps_ << " of " << plural(rigid_steps_, "step", "steps") << " had contacts (at most "
        << max_contacts_ << " at once)\n";
    out << "solver      " << solver_name(model.solver) << ": "
        << (non_converged_ == 0 ? std::string("converged at every step")
                                : "did not converge at " + plural(non_converged_, "step", "steps"))
        << "; max residual " << number(max_residual_, 3) << ", max " << plural(max_iterations_, "iteration", "iterations")
        << ", max joint error " << number(max_joint_error_, 3) << "\n";
    out << "final state (centre of mass position, m; linear velocity, m/s)\n";
    for (int body = 1; body < model.body_count(); ++body) {
      const auto i = static_cast<std::size_t>(body);
      if (model.bodies[i].type == BodyType::Static) continue;
      out << "  " << model.bodies[i].name << ": position " << format_vec3(final_state.rigid.position[i]) << ", velocity "
          << format_vec3(final_state.rigid.linear_velocity[i]) << "\n";
    }
  }

  bool print_failures(std::ostream& err) const override {
    if (non_converged_ == 0) return false;
    const Model& model = world_.rigid->model;
    err << "diffphys: the solver did not converge at " << plural(non_converged_, "step", "steps") << " (tolerance "
        << number(model.solver.tolerance, 3) << ", max " << plural(model.solver.max_iterations, "iteration", "iterations")
        << "):\n";
    for (const NonConvergedStep& entry : listed_) {
      err << "  step " << entry.step;
      if (world_.rigid_steps_per_step() > 1) err << " (rigid substep " << entry.substep + 1 << ")";
      err << " (t = " << number(entry.time) << " s): " << plural(entry.status.iterations, "iteration", "iterations")
          << ", residual " << number(entry.status.residual, 3) << ", "
          << plural(entry.status.contact_count, "contact", "contacts") << "\n";
    }
    if (non_converged_ > static_cast<long long>(listed_.size()))
      err << "  ... and " << non_converged_ - static_cast<long long>(listed_.size()) << " more\n";
    return true;
  }

 private:
  static constexpr std::size_t kListed = 10;  // non-converged steps listed
  const World& world_;
  Params params_;
  long long rigid_steps_ = 0, contact_steps_ = 0, non_converged_ = 0;
  int max_contacts_ = 0, max_iterations_ = 0;
  double max_residual_ = 0.0, max_joint_error_ = 0.0;
  std::vector<NonConvergedStep> listed_;
};

void RigidReport::describe(std::ostream& out, const std::string& heading) const {
  const Model& model = world_.rigid->model;
  const Params& params = params_;
  const Scene& scene = *world_.rigid;
  const ParamLayout& layout = model.layout;
  const SolverSettings& solver = model.solver;

  out << heading << ": \"" << model.name << "\", dt "
            << number(model.dt) << " s\n";
  out << "coordinates " << (solver.coordinates == Coordinates::Reduced ? "reduced" : "maximal")
            << "; formulation " << (solver.formulation == Formulation::Convex ? "convex" : "complementarity")
            << "; solver " << solver_name(solver) << ": max_iterations "
            << solver.max_iterations << ", tolerance " << number(solver.tolerance)
            << ", friction_directions " << solver.friction_directions << " ("
            << (solver.slip_aligned_friction ? "slip-aligned" : "fixed") << "), contact_margin "
            << number(solver.contact_margin) << " m, speculative_factor " << number(solver.speculative_factor)
            << ", contact_point " << (solver.contact_point == ContactPoint::Surfaces ? "surfaces" : "midpoint")
            << ", contact_erp "
            << number(solver.contact_erp) << ", penetration_slop "
            << number(solver.penetration_slop) << " m, restitution_threshold "
            << number(solver.restitution_threshold) << " m/s, stabilization "
            << solver.stabilization_iterations << " iterations to "
            << number(solver.stabilization_tolerance) << ", time_of_impact "
            << (solver.time_of_impact ? "on" : "off") << "\n";

  out << "\nbodies (" << model.body_count() << ", body 0 is the world):\n";
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    const Body& body = model.bodies[i];
    out << "  [" << i << "] " << body.name << "  " << body_type_name(body.type);
    if (const auto mass = param_slot(params, layout.body_mass, i, 1))
      out << "  mass " << number((*mass)[0]) << " kg";
    if (const auto inertia = param_slot(params, layout.body_inertia, i, 3))
      out << "  inertia " << format_values(*inertia) << " kg·m²";
    if (i < scene.state.position.size())
      out << "  at " << format_vec3(scene.state.position[i]);
    out << "  " << plural(body.shape_count, "shape", "shapes") << "\n";
  }

  out << "\nshapes (" << model.shape_count() << "):\n";
  for (std::size_t i = 0; i < model.shapes.size(); ++i) {
    const Shape& shape = model.shapes[i];
    const auto body = static_cast<std::size_t>(shape.body);
    out << "  [" << i << "] " << shape.name << "  " << type_name(shape.type) << " on "
              << (body < model.bodies.size() ? model.bodies[body].name : "?");
    const int size_count = shape_size_count(shape.type);
    if (size_count > 0) {
      if (const auto size = param_slot(params, layout.shape_size, i, size_count)) {
        if (shape.type == ShapeType::ConvexMesh) {
          const ConvexMesh& mesh = model.meshes[static_cast<std::size_t>(shape.mesh)];
          out << "  scale " << format_values(*size) << " of " << mesh.source << " ("
                    << mesh.vertex_count() << " hull vertices, " << mesh.face_count() << " faces)";
        } else {
          const char* meaning = shape.type == ShapeType::Sphere ? "radius"
                                : shape.type == ShapeType::Box  ? "half extents"
                                : shape.type == ShapeType::Ellipsoid ? "radii"
                                                                : "radius, half length";
          out << "  " << meaning << " " << format_values(*size) << " m";
        }
      }
    }
    out << "  at " << format_vec3(shape.local_position) << " in the body frame\n";
  }

  out << "\njoints (" << model.joint_count() << "):\n";
  for (std::size_t i = 0; i < model.joints.size(); ++i) {
    const Joint& joint = model.joints[i];
    const auto name_of = [&](int body) {
      const auto index = static_cast<std::size_t>(body);
      return index < model.bodies.size() ? model.bodies[index].name : std::string("?");
    };
    out << "  [" << i << "] " << joint.name << "  " << type_name(joint.type) << "  "
              << name_of(joint.parent) << " -> " << name_of(joint.child);
    if (joint.has_limits)
      out << "  limits [" << number(joint.lower_limit) << ", "
                << number(joint.upper_limit) << "]";
    if (const auto damping = param_slot(params, layout.joint_damping, i, 1))
      out << "  damping " << number((*damping)[0]);
    if (joint.collide_connected) out << "  collide_connected";
    out << "\n";
  }

  out << "\nactuators (" << model.actuator_count() << "):\n";
  for (std::size_t i = 0; i < model.actuators.size(); ++i) {
    const Actuator& actuator = model.actuators[i];
    const auto joint = static_cast<std::size_t>(actuator.joint);
    out << "  [" << i << "] " << actuator.name << "  " << actuator_type_name(actuator.type)
              << " on " << (joint < model.joints.size() ? model.joints[joint].name : "?") << " dof "
              << actuator.dof;
    if (const auto gain = param_slot(params, layout.actuator_gain, i, 1))
      out << "  gain " << number((*gain)[0]) << " 1/s";
    if (const auto max_torque = param_slot(params, layout.actuator_max_torque, i, 1))
      out << "  max_torque " << number((*max_torque)[0]);
    if (const auto max_velocity = param_slot(params, layout.actuator_max_velocity, i, 1))
      out << "  max_velocity " << number((*max_velocity)[0]);
    if (i < scene.controls.size()) out << "  control " << number(scene.controls[i]);
    out << "\n";
  }

  out << "\nparameters θ (" << model.param_count() << " values in " << layout.slices.size()
            << " slices):\n";
  std::size_t name_width = 0;
  for (const ParamLayout::Slice& slice : layout.slices)
    name_width = std::max(name_width, slice.name.size());
  for (const ParamLayout::Slice& slice : layout.slices) {
    std::string padded = slice.name;
    padded.resize(name_width, ' ');
    out << "  " << padded << "  @" << slice.offset << "  ";
    if (slice.offset >= 0 && slice.size >= 0 &&
        static_cast<std::size_t>(slice.offset + slice.size) <= params.values.size()) {
      out << format_values(std::span<const double>(params.values)
                                     .subspan(static_cast<std::size_t>(slice.offset),
                                              static_cast<std::size_t>(slice.size)));
    }
    out << "\n";
  }
}

}  // namespace

std::unique_ptr<PartReport> make_rigid_report(const World& world, const WorldParams& params) {
  return std::make_unique<RigidReport>(world, params);
}

}  // namespace diffphys::report
