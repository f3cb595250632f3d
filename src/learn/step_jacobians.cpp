// learn/step_jacobians.cpp — exact step Jacobians [A B P] from the step VJP, one output row
// per VJP (diffphys/jacobians.hpp), and the tangent-space ⊖ / ⊕ of states they live in.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "adjoint/step_vjp.hpp"
#include "diffphys/error.hpp"
#include "diffphys/jacobians.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys {

int state_tangent_size(const Model& model) {
  return kStateTangentPerBody * model.body_count();
}

namespace {

void check_state_size(const Model& model, const State& state, const char* what) {
  const int bodies = model.body_count();
  if (state.body_count() != bodies || static_cast<int>(state.orientation.size()) != bodies ||
      static_cast<int>(state.linear_velocity.size()) != bodies ||
      static_cast<int>(state.angular_velocity.size()) != bodies)
    throw Error(message(what, ": state has ", state.body_count(), " bodies, the model has ", bodies));
}

void check_span_size(std::size_t size, std::size_t expected, const char* what) {
  if (size != expected) throw Error(message("step Jacobians: ", what, " has ", size, " entries, expected ", expected));
}

}  // namespace

void state_difference(const Model& model, const State& state, const State& reference, std::span<double> difference) {
  check_state_size(model, state, "state_difference");
  check_state_size(model, reference, "state_difference (reference)");
  check_span_size(difference.size(), static_cast<std::size_t>(state_tangent_size(model)), "difference");
  for (int b = 0; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    double* d = difference.data() + kStateTangentPerBody * i;
    const Vec3 dp = state.position[i] - reference.position[i];
    const Vec3 dtheta = rotation_vector(state.orientation[i] * reference.orientation[i].conjugate());
    const Vec3 dv = state.linear_velocity[i] - reference.linear_velocity[i];
    const Vec3 dw = state.angular_velocity[i] - reference.angular_velocity[i];
    for (int k = 0; k < 3; ++k) {
      d[k] = dp[k];
      d[3 + k] = dtheta[k];
      d[6 + k] = dv[k];
      d[9 + k] = dw[k];
    }
  }
}

void state_retract(const Model& model, const State& state, std::span<const double> tangent, State& out) {
  check_state_size(model, state, "state_retract");
  check_span_size(tangent.size(), static_cast<std::size_t>(state_tangent_size(model)), "tangent");
  if (&out != &state) out = state;
  for (int b = 0; b < model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    const double* d = tangent.data() + kStateTangentPerBody * i;
    out.position[i] += Vec3{d[0], d[1], d[2]};
    out.orientation[i] = (Quat::from_rotation_vector(Vec3{d[3], d[4], d[5]}) * out.orientation[i]).normalized();
    out.linear_velocity[i] += Vec3{d[6], d[7], d[8]};
    out.angular_velocity[i] += Vec3{d[9], d[10], d[11]};
  }
}

State state_perturbed(State state, int body, int component, double epsilon) {
  const auto b = static_cast<std::size_t>(body);
  Vec3 e;
  e[component % 3] = epsilon;
  switch (component / 3) {
    case 0: state.position[b] += e; break;
    case 1: state.orientation[b] = (Quat::from_rotation_vector(e) * state.orientation[b]).normalized(); break;
    case 2: state.linear_velocity[b] += e; break;
    case 3: state.angular_velocity[b] += e; break;
    default: throw Error(message("state_perturbed: tangent component ", component, " is not in 0–11"));
  }
  return state;
}

struct StepJacobians::Impl {
  Model model;
  Workspace workspace;
  adjoint::StepVjpWorkspace vjp;
  std::vector<double> seed, state_row, control_row, param_row;
};

StepJacobians::StepJacobians(const Model& model) : impl_(std::make_unique<Impl>()) {
  impl_->model = model;
  impl_->model.solver.warm_start = false;  // each call a function of its inputs only
}
StepJacobians::~StepJacobians() = default;
StepJacobians::StepJacobians(StepJacobians&&) noexcept = default;
StepJacobians& StepJacobians::operator=(StepJacobians&&) noexcept = default;

const Model& StepJacobians::model() const {
  return impl_->model;
}

StepStatus StepJacobians::compute(const Params& params, const State& state, std::span<const double> controls,
                                  State& next, std::span<double> A, std::span<double> B, std::span<double> P) {
  Impl& s = *impl_;
  const Model& model = s.model;
  const auto n = static_cast<std::size_t>(state_tangent_size(model));
  const auto m = static_cast<std::size_t>(model.actuator_count());
  const auto np = static_cast<std::size_t>(model.param_count());
  check_state_size(model, state, "step Jacobians");
  check_span_size(controls.size(), m, "controls");
  check_span_size(params.values.size(), np, "params");
  check_span_size(A.size(), n * n, "A (n × n)");
  check_span_size(B.size(), n * m, "B (n × nactuator)");
  if (!P.empty()) check_span_size(P.size(), n * np, "P (n × nparam)");

  next = state;
  const StepStatus status = step(model, params, state, controls, next, s.workspace);

  s.seed.assign(n, 0.0);
  s.state_row.resize(n);
  s.control_row.resize(m);
  s.param_row.resize(np);
  std::fill(A.begin(), A.end(), 0.0);
  std::fill(B.begin(), B.end(), 0.0);
  std::fill(P.begin(), P.end(), 0.0);
  for (std::size_t row = 0; row < n; ++row) {
    // A static body's next state is its current one whatever the inputs: a zero row.
    const auto body = static_cast<int>(row / kStateTangentPerBody);
    if (model.bodies[static_cast<std::size_t>(body)].type == BodyType::Static) continue;
    std::fill(s.state_row.begin(), s.state_row.end(), 0.0);
    std::fill(s.control_row.begin(), s.control_row.end(), 0.0);
    std::fill(s.param_row.begin(), s.param_row.end(), 0.0);
    s.seed[row] = 1.0;
    adjoint::step_vjp(model, params, state, controls, s.workspace, next, s.seed, s.state_row, s.control_row,
                      s.param_row, s.vjp);
    s.seed[row] = 0.0;
    // Static bodies are fixed scenery (docs/gradients.md): their columns are zero, not the
    // partial derivative the contacts and joint anchors alone would give.
    for (std::size_t b = 0; b < model.bodies.size(); ++b)
      if (model.bodies[b].type == BodyType::Static)
        std::fill_n(s.state_row.begin() + static_cast<std::ptrdiff_t>(kStateTangentPerBody * b), kStateTangentPerBody, 0.0);
    std::copy(s.state_row.begin(), s.state_row.end(), A.begin() + static_cast<std::ptrdiff_t>(row * n));
    std::copy(s.control_row.begin(), s.control_row.end(), B.begin() + static_cast<std::ptrdiff_t>(row * m));
    if (!P.empty())
      std::copy(s.param_row.begin(), s.param_row.end(), P.begin() + static_cast<std::ptrdiff_t>(row * np));
  }
  return status;
}

StepStatus step_jacobians(const Model& model, const Params& params, const State& state,
                          std::span<const double> controls, std::span<double> A, std::span<double> B,
                          std::span<double> P) {
  StepJacobians jacobians(model);
  State next;
  return jacobians.compute(params, state, controls, next, A, B, P);
}

}  // namespace diffphys
