// experiments/cartpole_physics.cpp — the diffphys cart–pole shared by the cart–pole
// experiments (cartpole_physics.hpp): data of the true system, the model and its system
// identification, iLQR MPC on it, and the balancing run on the true system.
//
// The diffphys model: a box cart on a prismatic joint along x (a force motor on it) and a box
// pole on a revolute joint about y at the top of the cart. Learned, as logarithms (positive):
// the cart mass m_c, the pole mass m_p and the pole length L, the pole's inertia about its
// centre being the box's m_p (L² + w²)/12. The hinge-to-centre distance d of the model stays
// at the first guess: joint anchors are part of the Model, not of θ (docs/gradients.md).
// Rigid-body dynamics are linear in the inertial parameters, and the cart–pole's depend on
// three combinations only — m_c + m_p, m_p d and I + m_p d² — which (m_c, m_p, L) span; so
// the model can match the true system exactly, with individual values that differ from the
// true ones wherever d does.
#include "experiments/cartpole_physics.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include "diffphys/error.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/optimizer.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys::experiments::cartpole {
namespace {

constexpr double kPoleWidth = 0.05;   // m, the model pole's square section
constexpr double kHingeHeight = 0.1;  // m, hinge above the cart's centre

// The diffphys cart–pole; `hinge_offset` is the hinge-to-centre distance d of the pole.
Scene build_model(const PhysicsGuess& guess, double hinge_offset, double dt) {
  ModelBuilder builder;
  builder.name = "cartpole";
  builder.dt = dt;
  builder.gravity = {0, 0, -9.8};
  BodySpec cart;
  cart.name = "cart";
  cart.mass = guess.cart_mass;
  cart.inertia = Vec3{0.01, 0.01, 0.01};  // the prismatic joint forbids rotation: irrelevant
  ShapeSpec cart_box;
  cart_box.type = ShapeType::Box;
  cart_box.half_extents = {0.25, 0.15, kHingeHeight};
  cart.shapes.push_back(cart_box);
  builder.add_body(cart);
  BodySpec pole;
  pole.name = "pole";
  pole.position = {0, 0, kHingeHeight + hinge_offset};
  pole.mass = guess.pole_mass;
  const double inertia = pole_inertia(guess.pole_mass, guess.pole_length);
  pole.inertia = Vec3{inertia, inertia, inertia};  // see set_model_guess
  ShapeSpec pole_box;
  pole_box.type = ShapeType::Box;
  pole_box.half_extents = {0.5 * kPoleWidth, 0.5 * kPoleWidth, 0.5 * guess.pole_length};
  pole.shapes.push_back(pole_box);
  builder.add_body(pole);
  JointSpec slide;
  slide.name = "slide";
  slide.type = JointType::Prismatic;
  slide.child = "cart";
  slide.axis = {1, 0, 0};
  builder.add_joint(slide);
  JointSpec hinge;
  hinge.name = "hinge";
  hinge.type = JointType::Revolute;
  hinge.parent = "cart";
  hinge.child = "pole";
  hinge.anchor = {0, 0, kHingeHeight};
  hinge.axis = {0, 1, 0};
  builder.add_joint(hinge);
  ActuatorSpec motor;
  motor.name = "push";
  motor.joint = "slide";
  builder.add_actuator(motor);
  return builder.build();
}

void set_model_guess(const Model& model, const PhysicsGuess& guess, Params& params) {
  params.slice(model, "body/cart/mass")[0] = guess.cart_mass;
  params.slice(model, "body/pole/mass")[0] = guess.pole_mass;
  // The hinge lets the pole turn about y only, so only I_y enters the dynamics. All three
  // principal moments get the box's I_y: equal moments keep the builder from reordering the
  // principal axes, so the slice's entries need no bookkeeping.
  const std::span<double> inertia = params.slice(model, "body/pole/inertia");
  std::fill(inertia.begin(), inertia.end(), pole_inertia(guess.pole_mass, guess.pole_length));
}

// (x, ẋ, θ, θ̇) → the model's maximal-coordinate state (bodies: world, cart, pole).
void to_model_state(const StateVector& s, double hinge_offset, State& state) {
  const double sin_theta = std::sin(s[2]), cos_theta = std::cos(s[2]);
  state.position[1] = {s[0], 0, 0};
  state.orientation[1] = Quat::identity();
  state.linear_velocity[1] = {s[1], 0, 0};
  state.angular_velocity[1] = {0, 0, 0};
  state.position[2] = {s[0] + hinge_offset * sin_theta, 0, kHingeHeight + hinge_offset * cos_theta};
  state.orientation[2] = Quat::from_axis_angle({0, 1, 0}, s[2]);
  state.linear_velocity[2] = {s[1] + hinge_offset * s[3] * cos_theta, 0, -hinge_offset * s[3] * sin_theta};
  state.angular_velocity[2] = {0, s[3], 0};
}

// The model's state → (x, ẋ, θ, θ̇). For a rotation about y, θ = (log q)_y has derivative 1
// with respect to δθ_y and 0 with respect to δθ_x, δθ_z (tangent layout, docs/gradients.md).
StateVector from_model_state(const State& state) {
  return {state.position[1].x, state.linear_velocity[1].x, rotation_vector(state.orientation[2]).y,
          state.angular_velocity[2].y};
}
// Tangent index of each reduced coordinate's source (cart p_x, cart v_x, pole θ_y, pole ω_y).
constexpr int kReducedTangent[4] = {12 + 0, 12 + 6, 24 + 4, 24 + 10};

struct Evaluation {
  double mse = 0.0;  // one-step prediction MSE over (x, ẋ, θ, θ̇), SI units
  double normalized_loss = 0.0;
};

// One-step prediction of every transition with the model; with `gradient` non-null, also the
// gradient of the normalised loss with respect to log(m_c, m_p, L), through Rollout::backward.
class OneStepLearner {
 public:
  OneStepLearner(const std::vector<Transition>& data, double hinge_offset, int substeps, double dt,
                 const PhysicsGuess& guess)
      : data_(data),
        hinge_offset_(hinge_offset),
        substeps_(substeps),
        scene_(build_model(guess, hinge_offset, dt)),
        params_(scene_.params) {
    // Normalise each coordinate by the spread of its one-step change in the data.
    for (int j = 0; j < 4; ++j) {
      double mean = 0.0, squares = 0.0;
      for (const Transition& d : data_) mean += d.next[j] - d.state[j];
      mean /= static_cast<double>(data_.size());
      for (const Transition& d : data_) squares += std::pow(d.next[j] - d.state[j] - mean, 2);
      scale_[j] = std::sqrt(squares / static_cast<double>(data_.size()));
    }
  }

  Evaluation evaluate(const PhysicsGuess& guess, std::array<double, 3>* gradient) {
    set_model_guess(scene_.model, guess, params_);
    Rollout rollout(scene_.model, params_);
    State initial = scene_.state;
    std::vector<double> controls(static_cast<std::size_t>(substeps_));
    Evaluation result;
    std::array<double, 3> total{0, 0, 0};
    const double count = static_cast<double>(data_.size());
    for (const Transition& d : data_) {
      to_model_state(d.state, hinge_offset_, initial);
      std::fill(controls.begin(), controls.end(), d.force);
      rollout.run(initial, controls, substeps_);
      const StateVector predicted = from_model_state(rollout.final_state());
      std::array<double, 4> weighted{};
      for (int j = 0; j < 4; ++j) {
        const double error = predicted[j] - d.next[j];
        result.mse += error * error / (4.0 * count);
        result.normalized_loss += std::pow(error / scale_[j], 2) / count;
        weighted[j] = 2.0 * error / (scale_[j] * scale_[j] * count);
      }
      if (!gradient) continue;
      const Gradients g = rollout.backward([&](int t, const State&, std::span<double> dL_dx) {
        if (t != substeps_) return;
        for (int j = 0; j < 4; ++j) dL_dx[static_cast<std::size_t>(kReducedTangent[j])] += weighted[j];
      });
      const double dm_c = g.param(scene_.model, "body/cart/mass")[0];
      const std::span<const double> dI = g.param(scene_.model, "body/pole/inertia");
      const double dI_total = dI[0] + dI[1] + dI[2];
      const double dm_p = g.param(scene_.model, "body/pole/mass")[0] + dI_total * pole_inertia(1.0, guess.pole_length);
      const double dL = dI_total * guess.pole_mass * guess.pole_length / 6.0;
      // Chain rule to logarithms: ∂/∂log a = a ∂/∂a.
      total[0] += dm_c * guess.cart_mass;
      total[1] += dm_p * guess.pole_mass;
      total[2] += dL * guess.pole_length;
    }
    if (gradient) *gradient = total;
    return result;
  }

 private:
  const std::vector<Transition>& data_;
  double hinge_offset_;
  int substeps_;
  Scene scene_;
  Params params_;
  std::array<double, 4> scale_{1, 1, 1, 1};
};

}  // namespace

double pole_inertia(double pole_mass, double pole_length) {
  return pole_mass * (pole_length * pole_length + kPoleWidth * kPoleWidth) / 12.0;
}

std::vector<Transition> collect(const TrueCartPole& truth, int episodes, int max_steps, double max_angle,
                                std::mt19937& random, int first_episode) {
  std::uniform_real_distribution<double> start(-0.05, 0.05), force(-kForceLimit, kForceLimit);
  std::vector<Transition> data;
  for (int e = 0; e < episodes; ++e) {
    StateVector s{start(random), start(random), start(random), start(random)};
    for (int t = 0; t < max_steps && std::abs(s[2]) < max_angle; ++t) {
      const double f = force(random);
      const StateVector next = truth.step(s, f);
      data.push_back({s, next, f, first_episode + e});
      s = next;
    }
  }
  return data;
}

struct PhysicsCartPole::Impl {
  Impl(const PhysicsGuess& guess, double offset, int steps, double dt)
      : hinge_offset(offset),
        substeps(steps),
        scene(build_model(guess, offset, dt)),
        rollout(scene.model, scene.params),
        initial(scene.state),
        controls(static_cast<std::size_t>(steps)) {}
  double hinge_offset;
  int substeps;
  Scene scene;
  Rollout rollout;  // references scene.params, which set_guess changes between runs
  State initial;
  std::vector<double> controls;
};

PhysicsCartPole::PhysicsCartPole(const PhysicsGuess& guess, double hinge_offset, int substeps, double dt)
    : impl_(std::make_unique<Impl>(guess, hinge_offset, substeps, dt)) {}
PhysicsCartPole::~PhysicsCartPole() = default;

void PhysicsCartPole::set_guess(const PhysicsGuess& guess) {
  set_model_guess(impl_->scene.model, guess, impl_->scene.params);
}

StateVector PhysicsCartPole::predict(const StateVector& state, double force) {
  to_model_state(state, impl_->hinge_offset, impl_->initial);
  std::fill(impl_->controls.begin(), impl_->controls.end(), force);
  impl_->rollout.run(impl_->initial, impl_->controls, impl_->substeps);
  return from_model_state(impl_->rollout.final_state());
}

PhysicsFit fit_physics(const std::vector<Transition>& train, const PhysicsFitSettings& settings,
                       std::ostream* progress) {
  if (train.empty()) throw Error("cartpole: no training transitions to learn the physical parameters from");
  const double dt = settings.time_step / settings.substeps;
  PhysicsFit fit;
  fit.hinge_offset = 0.5 * settings.initial.pole_length;  // the first guess's d, kept
  OneStepLearner learner(train, fit.hinge_offset, settings.substeps, dt, settings.initial);
  std::array<double, 3> log_params{std::log(settings.initial.cart_mass), std::log(settings.initial.pole_mass),
                                   std::log(settings.initial.pole_length)};
  auto guess_of = [](const std::array<double, 3>& logs) {
    return PhysicsGuess{std::exp(logs[0]), std::exp(logs[1]), std::exp(logs[2])};
  };
  // Adam on log(m_c, m_p, L), full batch, learning rate 0.05 cosine-decayed.
  Adam adam(OptimizerSettings(0.05, LearningRateSchedule::cosine(settings.iterations, 0.005)));
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < settings.iterations; ++i) {
    std::array<double, 3> gradient{};
    const PhysicsGuess guess = guess_of(log_params);
    const Evaluation e = learner.evaluate(guess, &gradient);
    fit.loss_curve.push_back(e.normalized_loss);
    fit.mse_curve.push_back(e.mse);
    fit.param_curve.push_back({guess.cart_mass, guess.pole_mass, guess.pole_length});
    adam.step(log_params, gradient);
    if (progress && (i % 10 == 0 || i + 1 == settings.iterations))
      *progress << "learn " << i + 1 << "/" << settings.iterations << ": one-step MSE " << e.mse << ", normalised loss "
                << e.normalized_loss << ", m_c " << guess.cart_mass << " kg, m_p " << guess.pole_mass << " kg, L "
                << guess.pole_length << " m" << std::endl;
  }
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  fit.learned = guess_of(log_params);
  return fit;
}

IlqrSettings mpc_settings() {
  IlqrSettings settings;
  settings.max_iterations = 10;
  settings.tolerance = 1e-6;
  settings.control_lower = {-kForceLimit};
  settings.control_upper = {kForceLimit};
  return settings;
}

struct PhysicsMpc::Impl {
  Impl(const PhysicsGuess& guess, double offset, int substeps, double dt)
      : hinge_offset(offset),
        scene(build_model(guess, offset, dt)),
        dynamics(scene.model, scene.params, substeps),
        model_state(scene.state),
        goal(static_cast<std::size_t>(dynamics.state_size())),
        packed(goal.size()),
        cost(make_cost()),
        mpc(dynamics, *cost, kMpcHorizon, mpc_settings()) {}

  std::unique_ptr<QuadraticCost> make_cost() {
    const int n = dynamics.tangent_size();
    to_model_state({0, 0, 0, 0}, hinge_offset, model_state);
    dynamics.pack(model_state, goal);
    std::vector<double> Q(static_cast<std::size_t>(n * n), 0.0);
    Q[static_cast<std::size_t>(kReducedTangent[2] * n + kReducedTangent[2])] = kAngleWeight;
    return std::make_unique<QuadraticCost>(dynamics, Q, std::vector<double>{kForceWeight}, Q, goal);
  }

  double hinge_offset;
  Scene scene;
  SimulatorDynamics dynamics;  // references scene.params
  State model_state;
  std::vector<double> goal, packed;
  std::unique_ptr<QuadraticCost> cost;
  Mpc mpc;
};

PhysicsMpc::PhysicsMpc(const PhysicsGuess& guess, double hinge_offset, int substeps, double dt)
    : impl_(std::make_unique<Impl>(guess, hinge_offset, substeps, dt)) {}
PhysicsMpc::~PhysicsMpc() = default;

double PhysicsMpc::force(const StateVector& state) {
  to_model_state(state, impl_->hinge_offset, impl_->model_state);
  impl_->dynamics.pack(impl_->model_state, impl_->packed);
  return impl_->mpc.control(impl_->packed)[0];
}

int PhysicsMpc::last_iterations() const {
  return impl_->mpc.last_plan().iterations;
}

BalanceResult balance(const TrueCartPole& truth, BalancingController& controller, int max_steps, unsigned seed,
                      std::ostream* progress, const char* label) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> start(-0.05, 0.05);
  StateVector s{start(random), start(random), start(random), start(random)};
  BalanceResult result;
  const auto begin = std::chrono::steady_clock::now();
  long iterations = 0;
  while (result.steps_balanced < max_steps && std::abs(s[2]) < kAngleLimit && std::abs(s[0]) < kPositionLimit) {
    const double force = std::clamp(controller.force(s), -kForceLimit, kForceLimit);
    iterations += controller.last_iterations();
    result.trajectory.push_back({s[0], s[1], s[2], s[3], force});
    result.mean_squared_angle += s[2] * s[2];
    s = truth.step(s, force);
    ++result.steps_balanced;
    if (progress && result.steps_balanced % 100 == 0)
      *progress << "  " << label << " MPC step " << result.steps_balanced << ": x " << s[0] << " m, θ " << s[2]
                << " rad, F " << force << " N" << std::endl;
  }
  if (std::abs(s[2]) >= kAngleLimit)
    result.ended_by = "angle";
  else if (std::abs(s[0]) >= kPositionLimit)
    result.ended_by = "position";
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  result.seconds_per_step = seconds / std::max(1, result.steps_balanced);
  result.mean_ilqr_iterations = static_cast<double>(iterations) / std::max(1, result.steps_balanced);
  result.mean_squared_angle /= std::max(1, result.steps_balanced);
  return result;
}

}  // namespace diffphys::experiments::cartpole
