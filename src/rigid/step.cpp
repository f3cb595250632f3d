// rigid/step.cpp — one step of the rigid pipeline (DESIGN.md §1) and the Simulator.
//
// The step reads as its stages: body quantities → contacts → free velocity → rows (joints,
// limits, servos, contacts) → mixed-LCP solve → integrate (bounces at their time of impact,
// rigid/time_of_impact.hpp) → joint projection → state health (rigid/state_health.hpp).
// Buffers live in the Workspace and are reused, so after the first steps of a scene nothing
// allocates.
#include <algorithm>
#include <cmath>

#include "collision/detect_contacts.hpp"
#include "diffphys/error.hpp"
#include "diffphys/simulator.hpp"
#include "rigid/articulated.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/compliance.hpp"
#include "rigid/equality_rows.hpp"
#include "rigid/forces.hpp"
#include "rigid/inequality_rows.hpp"
#include "rigid/integrate.hpp"
#include "rigid/joints.hpp"
#include "rigid/state_health.hpp"
#include "rigid/step_workspace.hpp"
#include "solve/convex.hpp"
#include "solve/mlcp.hpp"
#include "solve/polish.hpp"

namespace diffphys {

Workspace::Workspace() : impl_(std::make_unique<Impl>()) {}
Workspace::~Workspace() = default;
Workspace::Workspace(Workspace&&) noexcept = default;
Workspace& Workspace::operator=(Workspace&&) noexcept = default;
std::span<const Contact> Workspace::contacts() const { return impl_->contacts; }

namespace {

// Solved impulses back onto the contacts, for the trajectory and the user.
void store_contact_impulses(const Model& model, std::span<const solve::ConstraintRow> rows,
                            std::span<const double> lambda, std::size_t first_contact_row,
                            std::vector<Contact>& contacts) {
  std::size_t row = first_contact_row;
  for (Contact& contact : contacts) {
    contact.normal_impulse = lambda[row];
    contact.friction_impulse = {};
    ++row;
    if (row < rows.size() && rows[row].type == solve::RowType::Direction) {
      for (int k = 0; k < rigid::friction_row_count(model.solver); ++k, ++row)
        contact.friction_impulse += rows[row].linear_a * lambda[row];
      ++row;  // the Bound row
    }
  }
}

// The convex formulation: each row's softness κ from its class's compliance (rigid/compliance.hpp).
// (Not the equality rows after `rows`: each has its own, set as they are appended.)
void assign_softness(const Model& model, const Params& params, std::span<solve::ConstraintRow> rows,
                     const rigid::RowBlocks& blocks) {
  double kappa[kRowClassCount];
  for (int c = 0; c < kRowClassCount; ++c)
    kappa[c] = rigid::softness(model.dt, rigid::row_compliance(model, params, static_cast<RowClass>(c))).value;
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].softness = kappa[static_cast<int>(
        rigid::row_class(blocks.joint_rows, blocks.limit_rows_end, blocks.first_contact_row, i))];
}

}  // namespace

StepStatus step(const Model& model, const Params& params, const State& state_in, std::span<const double> controls,
                State& state_out, Workspace& workspace) {
  if (static_cast<int>(controls.size()) != model.actuator_count())
    throw Error(message("step: ", controls.size(), " controls given, the model '", model.name, "' has ",
                        model.actuator_count(), " actuators"));
  if (state_in.body_count() != model.body_count())
    throw Error(message("step: the state has ", state_in.body_count(), " bodies, the model '", model.name, "' has ",
                        model.body_count()));
  for (std::size_t a = 0; a < controls.size(); ++a)
    if (!std::isfinite(controls[a]))
      throw Error(message("step: control of actuator '", model.actuators[a].name, "' must be finite, got ", controls[a]));
  if (&state_in == &state_out) throw Error("step: state_in and state_out must be different objects");
  if (model.solver.coordinates == Coordinates::Reduced && !model.equalities.empty())
    throw Error(message("step: equality '", model.equalities.front().name,
                        "' needs maximal coordinates (reduced coordinates have no constraint rows)"));
  Workspace::Impl& ws = workspace.impl();
  if (model.solver.coordinates == Coordinates::Reduced) {
    // Joint coordinates (rigid/articulated.hpp): no contacts, no rows, joints exact.
    ws.contacts.clear();
    ws.rows.clear();
    StepStatus status = rigid::step_reduced(model, params, state_in, controls, state_out, ws.articulated);
    rigid::check_state_health(model, state_out, status);
    return status;
  }
  if (model.solver.formulation != Formulation::Convex && !model.equalities.empty())
    throw Error(message("step: equality '", model.equalities.front().name, "' of the model '", model.name,
                        "' is a soft row of the convex formulation; set solver.formulation to convex"));
  if (model.solver.formulation == Formulation::Convex && model.layout.compliance_time_constant[0] < 0)
    throw Error(message("step: the model '", model.name,
                        "' was built for the complementarity formulation and has no compliance parameters in θ; set "
                        "solver.formulation to convex before building it"));
  const auto dof = static_cast<std::size_t>(6 * model.body_count());
  ws.free_velocity.resize(dof);
  ws.velocity.resize(dof);
  state_out.resize(model.body_count());

  rigid::compute_body_dynamics(model, params, state_in, ws.bodies);
  collision::detect_contacts(model, params, state_in, ws.collision, ws.contacts);
  rigid::compute_free_velocity(model, params, state_in, controls, ws.bodies, ws.free_velocity);

  ws.rows.clear();
  rigid::append_joint_rows(model, state_in, ws.bodies, ws.rows);
  const std::size_t joint_row_count = ws.rows.size();
  rigid::append_limit_rows(model, params, state_in, ws.bodies, ws.rows, ws.limit_sources);
  ws.limit_rows_end = ws.rows.size();
  rigid::append_servo_rows(model, params, state_in, controls, ws.bodies, ws.rows);
  const std::size_t first_contact_row = ws.rows.size();
  ws.joint_rows = joint_row_count;
  ws.first_contact_row = first_contact_row;
  rigid::append_contact_rows(model, params, state_in, ws.contacts, ws.free_velocity, ws.rows, ws.impacts);
  rigid::assign_body_impact_times(model, ws.contacts, ws.impacts);
  // Soft equality constraints last, with their own targets and softness (rigid/equality_rows.hpp).
  ws.equality_rows_begin = ws.rows.size();
  rigid::append_equality_rows(model, params, state_in, ws.bodies, ws.rows);

  ws.lambda.assign(ws.rows.size(), 0.0);
  // PGS starts from the previous step's impulses (rigid/warm_start.hpp); the interior point
  // from zero, so that its answer depends on this step's inputs only.
  const rigid::RowBlocks row_blocks{ws.joint_rows, ws.limit_rows_end, ws.first_contact_row};
  const bool convex = model.solver.formulation == Formulation::Convex;
  if (convex) assign_softness(model, params, std::span(ws.rows.data(), ws.equality_rows_begin), row_blocks);
  const bool project_joints = rigid::projects_joints(model, params);
  if (!project_joints)
    rigid::set_joint_spring_targets(
        model, state_in, ws.bodies,
        rigid::spring_target_slope(model.dt, rigid::row_compliance(model, params, RowClass::Joint)).value,
        std::span(ws.rows.data(), joint_row_count));
  const bool warm_start =
      !convex && model.solver.type == SolverType::ProjectedGaussSeidel && model.solver.warm_start;
  if (warm_start)
    rigid::apply_warm_start(ws.warm_start, state_in, ws.rows, row_blocks, ws.limit_sources, ws.contacts, ws.lambda);
  const solve::MassBlocks mass = ws.bodies.mass_blocks();
  const SolverSettings& settings = model.solver;
  // (Not for a problem of joint rows only: its solve also leaves the factorisation that the
  // joint projection and the backward pass reuse.)
  const bool replay = ws.replay_lambda.data() != nullptr && ws.rows.size() > joint_row_count &&
                      ws.replay_lambda.size() == ws.rows.size() && ws.replay_velocity.size() == dof;
  solve::MlcpResult solved;
  ws.convex_problem_current = false;
  if (replay) {
    std::copy(ws.replay_lambda.begin(), ws.replay_lambda.end(), ws.lambda.begin());
    std::copy(ws.replay_velocity.begin(), ws.replay_velocity.end(), ws.velocity.begin());
    solved.converged = true;
    solved.exact = true;
  } else if (convex) {
    // Newton from the state's velocities (the previous step's solution: a warm start that
    // depends on this step's inputs only, so that Rollout's recomputed segments are identical).
    ws.initial_velocity.resize(dof);
    for (int b = 0; b < model.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      for (int d = 0; d < 3; ++d) {
        ws.initial_velocity[6 * i + static_cast<std::size_t>(d)] = state_in.linear_velocity[i][d];
        ws.initial_velocity[6 * i + 3 + static_cast<std::size_t>(d)] = state_in.angular_velocity[i][d];
      }
    }
    solved = solve::solve_convex(ws.rows, mass, ws.free_velocity, ws.initial_velocity, settings.max_iterations,
                                 settings.tolerance, ws.convex, ws.lambda, ws.velocity);
    ws.convex_problem_current = true;
  } else {
    solved = settings.type == SolverType::InteriorPoint
                 ? solve::solve_interior_point(ws.rows, mass, ws.free_velocity, settings.max_iterations,
                                               settings.tolerance, ws.solver, ws.lambda, ws.velocity)
                 : solve::solve_projected_gauss_seidel(ws.rows, mass, ws.free_velocity, settings.max_iterations,
                                                       settings.tolerance, ws.solver, ws.lambda, ws.velocity);
  }
  ws.replay_lambda = {};
  ws.replay_velocity = {};
  if (!convex && settings.type == SolverType::InteriorPoint && ws.rows.size() > joint_row_count && !solved.exact) {
    // The exact solution of the interior point's active set (solve/polish.hpp).
    solved.residual = solve::polish_solution(ws.rows, ws.free_velocity, solved.residual, ws.solver, ws.lambda, ws.velocity);
    solved.converged = solved.residual <= settings.tolerance;
  }
  store_contact_impulses(model, ws.rows, ws.lambda, first_contact_row, ws.contacts);

  rigid::integrate(model, state_in, ws.velocity, ws.free_velocity, ws.impacts, state_out);
  const std::span<const solve::ConstraintRow> joint_rows(ws.rows.data(), joint_row_count);
  // A velocity problem of joint rows only was solved by the very factorisation the joint
  // projection needs (J_t M⁻¹ J_tᵀ at the start of the step): reuse it.
  const bool joint_rows_only = !convex && ws.rows.size() == joint_row_count &&
                               settings.type == SolverType::InteriorPoint && solved.iterations > 0;
  ws.joint_factorization_valid = joint_rows_only;
  const double joint_error =
      rigid::stabilize_joints(model, joint_rows, mass, joint_rows_only ? &ws.solver : nullptr,
                              project_joints, state_out, ws.stabilization);

  if (warm_start)
    rigid::store_warm_start(ws.warm_start, state_out, ws.rows, row_blocks, ws.limit_sources, ws.contacts, ws.lambda);

  StepStatus status;
  status.converged = solved.converged;
  status.iterations = solved.iterations;
  status.residual = solved.residual;
  status.contact_count = static_cast<int>(ws.contacts.size());
  status.row_count = static_cast<int>(ws.rows.size());
  status.joint_error = joint_error;
  rigid::check_state_health(model, state_out, status);
  return status;
}

double kinetic_energy(const Model& model, const Params& params, const State& state) {
  rigid::BodyDynamics bodies;
  rigid::compute_body_dynamics(model, params, state, bodies);
  double energy = 0.0;
  for (std::size_t b = 0; b < bodies.inverse_mass.size(); ++b) {
    if (model.bodies[b].type != BodyType::Dynamic) continue;
    const double mass = params.at(model.layout.body_mass[b]);
    const Vec3& omega = state.angular_velocity[b];
    energy += 0.5 * mass * squared_norm(state.linear_velocity[b]) + 0.5 * dot(omega, bodies.inertia_world[b] * omega);
  }
  return energy;
}

double potential_energy(const Model& model, const Params& params, const State& state) {
  const Vec3 gravity = params.vec3_at(model.layout.gravity);
  double energy = 0.0;
  for (std::size_t b = 0; b < model.bodies.size(); ++b)
    if (model.bodies[b].type == BodyType::Dynamic)
      energy -= params.at(model.layout.body_mass[b]) * dot(gravity, state.position[b]);
  return energy;
}

double joint_position(const Model& model, const State& state, int joint, int dof) {
  rigid::BodyDynamics bodies;
  bodies.rotation.resize(state.orientation.size());
  for (std::size_t b = 0; b < state.orientation.size(); ++b) bodies.rotation[b] = state.orientation[b].to_matrix();
  return rigid::coordinate_value(model, state, bodies, joint, dof);
}

double joint_velocity(const Model& model, const State& state, int joint, int dof) {
  rigid::BodyDynamics bodies;
  bodies.rotation.resize(state.orientation.size());
  for (std::size_t b = 0; b < state.orientation.size(); ++b) bodies.rotation[b] = state.orientation[b].to_matrix();
  return rigid::coordinate_rate(rigid::coordinate_row(model, state, bodies, joint, dof), state);
}

Simulator::Simulator(Model model, Params params, State initial_state)
    : model_(std::move(model)), params_(std::move(params)), state_(std::move(initial_state)) {
  validate_params(model_, params_);
  validate_state(model_, state_);
  if (model_.solver.coordinates == Coordinates::Reduced) rigid::validate_reduced_coordinates(model_);
  next_ = state_;
  zero_controls_.assign(static_cast<std::size_t>(model_.actuator_count()), 0.0);
}

void Simulator::set_state(State state) {
  validate_state(model_, state);
  state_ = std::move(state);
}

StepStatus Simulator::step(std::span<const double> controls) {
  const StepStatus status =
      diffphys::step(model_, params_, state_, controls.empty() ? std::span<const double>(zero_controls_) : controls,
                     next_, workspace_);
  std::swap(state_, next_);
  return status;
}

}  // namespace diffphys
