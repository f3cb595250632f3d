// diffphys/simulator.hpp — one step of the rigid-body pipeline, and a Simulator around it.
//
// step() is the pipeline of DESIGN.md §1 as free functions over (Model, Params, State):
// detect contacts → assemble rows → solve the mixed LCP → integrate → stabilise joints.
// It reads state_in and writes state_out (never in place), reuses the Workspace's buffers
// (no allocation once they have grown to the scene's size) and returns a StepStatus that
// says whether the solver converged and how well. Same inputs, same bits.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "diffphys/contact.hpp"
#include "diffphys/model.hpp"
#include "diffphys/params.hpp"
#include "diffphys/state.hpp"

namespace diffphys {

// Whether the state a step wrote is one a caller may use (docs/robustness.md, "State health").
enum class StateHealth {
  Ok,         // every body's pose and velocity finite, speeds within solver.max_speed / max_angular_speed
  NonFinite,  // a position, orientation or velocity component is NaN or infinite
  TooFast,    // a body's linear speed above solver.max_speed or angular speed above max_angular_speed
};

struct StepStatus {
  bool converged = true;        // the velocity solve met solver.tolerance and the state is healthy
  int iterations = 0;           // interior-point Newton iterations or PGS sweeps
  double residual = 0.0;        // mixed-LCP residual at the returned solution (solve/mlcp.hpp)
  int contact_count = 0;
  int row_count = 0;            // rows of the velocity problem (joints, limits, servos, contacts)
  double joint_error = 0.0;     // max joint position error after stabilisation, m or rad
  // The first unhealthy body (lowest index) of state_out; health_body is -1 when Ok.
  // health_value: the offending component (NonFinite) or speed (TooFast: m/s, or rad/s when
  // health_angular).
  StateHealth health = StateHealth::Ok;
  int health_body = -1;
  double health_value = 0.0;
  bool health_angular = false;
};

// "ok", "non_finite" or "too_fast".
const char* to_string(StateHealth health);
// A sentence naming the body, the quantity and the value, e.g. "body 'ball': linear speed
// 1017 m/s above solver.max_speed 1000 m/s"; empty when the status is Ok. Allocates: for
// reports, not for the step.
std::string health_message(const Model& model, const StepStatus& status);

// Scratch memory of the step: constraint rows, the solver's matrices, contacts. Opaque;
// one per thread. Grows on the first steps of a scene, then is reused without allocation.
class Workspace {
 public:
  Workspace();
  ~Workspace();
  Workspace(Workspace&&) noexcept;
  Workspace& operator=(Workspace&&) noexcept;

  // Contacts of the most recent step, with their solved impulses.
  std::span<const Contact> contacts() const;

  struct Impl;  // rigid/step_workspace.hpp
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Advances state_in by model.dt into state_out. controls: (nactuator) motor torques/forces
// or servo targets. Throws Error if the sizes do not match the model; reports solver
// trouble in the status instead of throwing.
StepStatus step(const Model& model, const Params& params, const State& state_in,
                std::span<const double> controls, State& state_out, Workspace& workspace);

// Mechanical energy: kinetic + gravitational potential (J). For conservation tests. Dynamic
// bodies only: static and kinematic bodies have no mass (a kinematic body's motion is
// prescribed, and the work it does on the others is not counted either).
double kinetic_energy(const Model& model, const Params& params, const State& state);
double potential_energy(const Model& model, const Params& params, const State& state);

// Current position (rad or m) and velocity of coordinate `dof` of joint `joint`.
double joint_position(const Model& model, const State& state, int joint, int dof);
double joint_velocity(const Model& model, const State& state, int joint, int dof);
// Their reverse mode, for a joint coordinate read as a feature (a policy's observation):
// ADD value_adjoint · ∂(value)/∂x into state_gradient (the tangent layout of
// docs/gradients.md, 12 per body). Where the position wraps (an angle crossing ±π), the
// derivative of the branch the value is on. Throws Error for an unknown joint or dof, or a
// state_gradient of the wrong size.
void joint_position_vjp(const Model& model, const State& state, int joint, int dof, double value_adjoint,
                        std::span<double> state_gradient);
void joint_velocity_vjp(const Model& model, const State& state, int joint, int dof, double value_adjoint,
                        std::span<double> state_gradient);

// Convenience owner of a Model, Params, the current State and a Workspace.
class Simulator {
 public:
  Simulator(Model model, Params params, State initial_state);

  const Model& model() const { return model_; }
  const Params& params() const { return params_; }
  const State& state() const { return state_; }
  std::span<const Contact> contacts() const { return workspace_.contacts(); }

  // One step with the given controls (empty: all zero).
  StepStatus step(std::span<const double> controls = {});

  // Replaces the current state (validate_state: sizes, finite entries, unit quaternions; throws
  // Error naming the body and field). How a program drives a kinematic body between steps:
  // copy state(), write the body's pose and velocity, set it back (MuJoCo's mocap_pos/quat).
  void set_state(State state);

 private:
  Model model_;
  Params params_;
  State state_;
  State next_;
  std::vector<double> zero_controls_;
  Workspace workspace_;
};

}  // namespace diffphys
