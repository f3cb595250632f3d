// experiments/ball_throw.cpp — `diffphys experiment ball-throw`: Degrave et al. 2019, §2.1.1.
//
// A ball of 1 m diameter (friction 1.0, restitution 0.5) rests on the ground at (0, 0). Its
// initial linear and angular velocity (6 numbers) are optimised so that after 5 s it lies at
// (10, 0) with zero linear and angular velocity (errors < 0.01 m and 0.01 m/s; the angular
// velocity's error is measured as the surface speed r|ω|). The gradient comes from
// backpropagation through time (Rollout::backward) through rolling and sliding contact and
// drives Adam, a gradient-descent method; L-BFGS on the same loss runs afterwards for comparison.
//
// The task needs the contact: a ball that rolls keeps rolling, so the only way to stop at
// t = 5 s is to slide with backspin so that friction brings v and ω to zero together
// (ω r = 5/2 v for a solid sphere: both decelerate at μg and 5μg/2r), or to land so.
#include "experiments/ball_throw.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "diffphys/lbfgs.hpp"
#include "diffphys/optimizer.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kRadius = 0.5;    // m (1 m diameter)
constexpr double kDuration = 5.0;  // s
// 10 ms: 500 steps per rollout. The ball slides for about 1.4 s on the solution, so the
// stop is resolved to 1% of the sliding time; halving dt changes the optimal initial speed
// by < 0.5% (documented in docs/EXPERIMENTS.md).
constexpr double kTimeStep = 0.01;
constexpr double kTargetX = 10.0, kTargetY = 0.0;  // m
constexpr double kPositionTolerance = 0.01;        // m
constexpr double kVelocityTolerance = 0.01;        // m/s and rad/s

std::string scene_json() {
  // Bounces act over their whole step, as in the paper's engine: with the default time of
  // impact (docs/simulation.md) the landscape differs and Adam at this rate ends in the
  // thrown-into-the-ground local minimum (loss 296; docs/EXPERIMENTS.md).
  nlohmann::json scene = {{"name", "ball throw (Degrave et al. 2019, 2.1.1)"},
                          {"dt", kTimeStep},
                          {"solver", {{"time_of_impact", false}}},
                          {"ground", true},
                          {"world", {{"friction", 1.0}, {"restitution", 0.5}}},
                          {"bodies",
                           {{{"name", "ball"},
                             {"position", {0.0, 0.0, kRadius}},
                             {"mass", 1.0},
                             {"friction", 1.0},
                             {"restitution", 0.5},
                             {"shapes", {{{"type", "sphere"}, {"radius", kRadius}}}}}}}};
  return scene.dump(2);
}

struct Errors {
  double position = 0.0;          // |p(T) − (10, 0, r)|, m
  double velocity = 0.0;          // |v(T)|, m/s
  double angular_velocity = 0.0;  // |ω(T)|, rad/s
  bool reached() const {
    return position < kPositionTolerance && velocity < kVelocityTolerance &&
           kRadius * angular_velocity < kVelocityTolerance;
  }
};

// The loss ½(|p(T) − target|² + |v(T)|² + |ω(T)|²) of an initial velocity, where the target
// is the ball resting on the ground at (10, 0) (centre at height r),
// (v₀, ω₀) = x[0..2], x[3..5], with its gradient by BPTT.
class BallThrowProblem {
 public:
  BallThrowProblem()
      : scene_(parse_scene(scene_json(), "ball-throw scene")),
        rollout_(scene_.model, scene_.params),
        steps_(static_cast<int>(std::lround(kDuration / kTimeStep))) {}

  const Scene& scene() const { return scene_; }
  int steps() const { return steps_; }

  State initial_state(std::span<const double> x) const {
    State state = scene_.state;
    state.linear_velocity[kBall] = {x[0], x[1], x[2]};
    state.angular_velocity[kBall] = Vec3{x[3], x[4], x[5]} / kRadius;
    return state;
  }

  double evaluate(std::span<const double> x, std::span<double> gradient) {
    rollout_.run(initial_state(x), {}, steps_);
    const State& last = rollout_.final_state();
    const Vec3 p = last.position[kBall], v = last.linear_velocity[kBall], w = last.angular_velocity[kBall];
    const double dx = p.x - kTargetX, dy = p.y - kTargetY, dz = p.z - kRadius;
    errors_ = {std::sqrt(dx * dx + dy * dy + dz * dz), norm(v), norm(w)};
    const Gradients g = rollout_.backward([&](int t, const State&, std::span<double> dL_dx) {
      if (t != steps_) return;
      double* body = dL_dx.data() + kStateTangentPerBody * kBall;
      body[0] += dx;
      body[1] += dy;
      body[2] += dz;
      body[6] += v.x, body[7] += v.y, body[8] += v.z;
      body[9] += w.x, body[10] += w.y, body[11] += w.z;
    });
    const double* dx0 = g.initial_state.data() + kStateTangentPerBody * kBall;
    for (int i = 0; i < 3; ++i) {
      gradient[i] = dx0[6 + i];                // dL/dv₀
      gradient[3 + i] = dx0[9 + i] / kRadius;  // dL/d(r ω₀)
    }
    return 0.5 * (dx * dx + dy * dy + dz * dz + dot(v, v) + dot(w, w));
  }
  const Errors& errors() const { return errors_; }

 private:
  static constexpr int kBall = 1;
  Scene scene_;
  Rollout rollout_;
  int steps_;
  Errors errors_;
};

struct RunSummary {
  int iterations = 0;  // gradient evaluations until the target was reached (or the budget)
  double seconds = 0.0;
  double cpu_seconds = 0.0;
  bool reached = false;
  std::vector<double> x;
  double loss = 0.0;
  Errors errors;
};

void print_line(std::ostream* progress, std::string_view method, int iteration, double loss, const Errors& errors,
                std::span<const double> x) {
  if (!progress) return;
  *progress << method << " iteration " << iteration << ": loss " << loss << ", errors " << errors.position << " m, "
            << errors.velocity << " m/s, " << errors.angular_velocity << " rad/s; v0 (" << x[0] << ", " << x[1] << ", "
            << x[2] << ") m/s, w0 (" << x[3] / kRadius << ", " << x[4] / kRadius << ", " << x[5] / kRadius << ") rad/s"
            << std::endl;
}

nlohmann::json summary_json(const RunSummary& run) {
  return {{"iterations", run.iterations},
          {"wall_time_s", run.seconds},
          {"cpu_time_s", run.cpu_seconds},
          {"reached_target", run.reached},
          {"loss", run.loss},
          {"position_error_m", run.errors.position},
          {"velocity_error_m_s", run.errors.velocity},
          {"angular_velocity_error_rad_s", run.errors.angular_velocity},
          {"initial_linear_velocity", {run.x[0], run.x[1], run.x[2]}},
          {"initial_angular_velocity", {run.x[3] / kRadius, run.x[4] / kRadius, run.x[5] / kRadius}}};
}

}  // namespace

ExperimentResult run_ball_throw(const ExperimentOptions& options) {
  const std::filesystem::path folder = experiment_folder(options, "ball-throw");
  std::ostream* progress = options.progress;
  BallThrowProblem problem;
  write_text_file(folder / "scene.json", scene_json());
  const int max_iterations = options.quick ? 300 : 1000;

  // Gradient descent from rest (v₀ = ω₀ = 0) on x = (v₀, r ω₀), both in m/s.
  CsvTable curve({"iteration", "loss", "position_error_m", "velocity_error_m_s", "angular_velocity_error_rad_s", "v0_x",
                  "v0_y", "v0_z", "w0_x", "w0_y", "w0_z", "elapsed_s"});  // m/s, rad/s
  // Adam (Kingma & Ba 2015) at a constant rate of 2.5 m/s per step: the solution lies ~34 m/s
  // away in r·ω₀, and smaller rates wander into the ballistic local minima (see
  // docs/EXPERIMENTS.md).
  const double learning_rate = 2.5;
  Adam adam{OptimizerSettings(learning_rate)};
  RunSummary descent_run;
  descent_run.x.assign(6, 0.0);
  std::vector<double> gradient(6);
  double first_loss = 0.0;
  const Stopwatch descent_clock;
  for (int iteration = 0;; ++iteration) {
    const double loss = problem.evaluate(descent_run.x, gradient);
    if (iteration == 0) first_loss = loss;
    const Errors& errors = problem.errors();
    const std::span<const double> x = descent_run.x;
    curve.add_row({double(iteration), loss, errors.position, errors.velocity, errors.angular_velocity, x[0], x[1], x[2],
                   x[3] / kRadius, x[4] / kRadius, x[5] / kRadius, descent_clock.seconds()});
    print_line(progress, "gradient descent", iteration, loss, errors, x);
    descent_run.iterations = iteration;
    descent_run.loss = loss;
    descent_run.errors = errors;
    descent_run.reached = errors.reached();
    if (descent_run.reached || iteration == max_iterations) break;
    adam.step(descent_run.x, gradient);
  }
  descent_run.seconds = descent_clock.seconds();
  descent_run.cpu_seconds = descent_clock.cpu_seconds();
  curve.write(folder / "gradient_descent.csv");

  // L-BFGS on the same loss, stopped as soon as the same target is met.
  CsvTable lbfgs_curve({"iteration", "evaluations", "loss", "position_error_m", "velocity_error_m_s",
                        "angular_velocity_error_rad_s", "elapsed_s"});
  RunSummary lbfgs_run;
  int evaluations = 0;
  const Stopwatch lbfgs_clock;
  auto loss = [&](std::span<const double> x, std::span<double> g) {
    ++evaluations;
    return problem.evaluate(x, g);
  };
  LbfgsSettings settings;
  settings.max_iterations = options.quick ? 10 : 100;
  settings.gradient_tolerance = 1e-12;
  Errors lbfgs_errors;
  const std::vector<double> start(6, 0.0);
  std::vector<double> start_gradient(6);
  lbfgs_curve.add_row({0.0, 0.0, problem.evaluate(start, start_gradient), problem.errors().position,
                       problem.errors().velocity, problem.errors().angular_velocity, 0.0});
  const LbfgsResult lbfgs = minimize_lbfgs(
      loss, start, settings, [&](int iteration, std::span<const double> x, double value, std::span<const double>) {
        // The line search's last evaluation is the accepted iterate, so the problem's errors
        // are this iterate's.
        lbfgs_errors = problem.errors();
        lbfgs_curve.add_row({double(iteration), double(evaluations), value, lbfgs_errors.position,
                             lbfgs_errors.velocity, lbfgs_errors.angular_velocity, lbfgs_clock.seconds()});
        print_line(progress, "L-BFGS", iteration, value, lbfgs_errors, x);
        return !lbfgs_errors.reached();
      });
  lbfgs_run.seconds = lbfgs_clock.seconds();
  lbfgs_run.cpu_seconds = lbfgs_clock.cpu_seconds();
  lbfgs_run.iterations = lbfgs.iterations;
  lbfgs_run.x = lbfgs.x;
  lbfgs_run.loss = lbfgs.loss;
  lbfgs_run.errors = lbfgs_errors;
  lbfgs_run.reached = lbfgs_errors.reached();
  lbfgs_curve.write(folder / "lbfgs.csv");

  // The trajectory of the gradient-descent result, for the viewer.
  const ParamsSegment segment{&problem.scene().params, problem.steps()};
  record_trajectory(problem.scene().model, std::span(&segment, 1), problem.initial_state(descent_run.x),
                    folder / "trajectory.json");

  nlohmann::json lbfgs_json = summary_json(lbfgs_run);
  lbfgs_json["loss_evaluations"] = evaluations;
  lbfgs_json["stop_reason"] = lbfgs_run.reached ? std::string("reached the target") : lbfgs.stop_reason;
  nlohmann::json result = {{"experiment", "ball-throw"},
                           {"quick", options.quick},
                           {"dt", kTimeStep},
                           {"steps", problem.steps()},
                           {"optimizer", {{"method", "Adam"}, {"learning_rate", learning_rate}}},
                           {"initial_loss", first_loss},
                           {"loss_reduction", first_loss / std::max(descent_run.loss, 1e-300)},
                           {"gradient_descent", summary_json(descent_run)},
                           {"lbfgs", lbfgs_json},
                           {"paper",
                            {{"gradient_descent_iterations", 88},
                             {"gradient_descent_wall_time_s", 16.3},
                             {"cmaes_iterations", 2422},
                             {"cmaes_wall_time_s", 59.9}}},
                           {"out", folder.string()}};
  return {result.dump(), descent_run.reached};
}

}  // namespace diffphys::experiments
