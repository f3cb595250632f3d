// adjoint/gradient_health.cpp — the gradient health report (diffphys/gradient_health.hpp):
// terminal sensitivities by random-probe backward passes, their growth over the horizon, the
// onset of an explosion and the backward stage that drives it.
#include "diffphys/gradient_health.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <optional>
#include <random>

#include "diffphys/error.hpp"
#include "rigid/body_dynamics.hpp"
#include "rigid/joints.hpp"
#include "solve/dense_cholesky.hpp"
#include "solve/row_algebra.hpp"

namespace diffphys {
namespace {

const char* const kStageNames[3] = {"joint projection and integration", "velocity solve",
                                    "constraint rows, contact geometry, forces and masses"};

constexpr double kExplodingTotal = 1e6, kNoticeableTotal = 1e3, kTenfoldPerSecond = 10.0;
constexpr int kOnsetWindow = 20;  // steps before the onset whose stage gains are compared

bool usable(double s) { return std::isfinite(s) && s > 0; }

// u ← u − Jᵀ(J M⁻¹ Jᵀ)⁻¹ J M⁻¹ u on the pose half (p̄, θ̄) and the velocity half (v̄, ω̄) of each
// body's 12 state components, J the joint rows at `state` (J = ∂φ/∂q, rigid/joints.hpp).
void restrict_to_joint_tangent(const Model& model, const Params& params, const State& state, std::span<double> u) {
  if (model.joint_count() == 0 || model.solver.coordinates == Coordinates::Reduced) return;
  rigid::BodyDynamics bodies;
  rigid::compute_body_dynamics(model, params, state, bodies);
  std::vector<solve::ConstraintRow> rows;
  rigid::append_joint_rows(model, state, bodies, rows);
  const solve::MassBlocks mass = bodies.mass_blocks();
  const std::size_t m = rows.size();
  std::vector<solve::RowResponse> responses(m);  // M⁻¹J_iᵀ
  for (std::size_t i = 0; i < m; ++i) responses[i] = solve::row_response(rows[i], mass);
  std::vector<double> matrix(m * m);  // A = J M⁻¹ Jᵀ
  double trace = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m; ++j) matrix[i * m + j] = solve::delassus_entry(rows[i], rows[j], responses[j]);
    trace += matrix[i * m + i];
  }
  for (std::size_t i = 0; i < m; ++i) matrix[i * m + i] += 1e-12 * trace / static_cast<double>(m);  // redundant rows
  if (!solve::cholesky_factorize(matrix.data(), m, m)) return;
  const auto body_count = static_cast<std::size_t>(model.body_count());
  std::vector<double> half(6 * body_count), scaled(6 * body_count), y(m);
  for (const std::size_t offset : {std::size_t{0}, std::size_t{6}}) {
    for (std::size_t b = 0; b < body_count; ++b)
      for (std::size_t k = 0; k < 6; ++k) half[6 * b + k] = u[12 * b + offset + k];
    solve::apply_inverse_mass(mass, half, scaled);
    for (std::size_t i = 0; i < m; ++i) y[i] = solve::row_times_velocity(rows[i], scaled);
    solve::cholesky_solve(matrix.data(), m, m, y.data());
    for (std::size_t i = 0; i < m; ++i) solve::add_row_transpose(rows[i], -y[i], half);
    for (std::size_t b = 0; b < body_count; ++b)
      for (std::size_t k = 0; k < 6; ++k) u[12 * b + offset + k] = half[6 * b + k];
  }
}

}  // namespace

TerminalSensitivity terminal_sensitivity(const World& world, const WorldParams& params, const WorldRollout& rollout,
                                         int probes, std::uint32_t seed) {
  if (probes < 1) throw Error(message("terminal_sensitivity: probes must be at least 1, got ", probes));
  const int steps = rollout.steps();
  if (steps < 1) throw Error("terminal_sensitivity: the rollout has not run");
  std::optional<Params> rigid;
  if (world.has_rigid()) rigid = rigid_params(world, params);
  std::mt19937 random(seed);
  std::normal_distribution<double> gaussian;
  TerminalSensitivity result;
  result.values.assign(static_cast<std::size_t>(steps) + 1, 0.0);
  std::vector<double> direction;
  for (int probe = 0; probe < probes; ++probe) {
    bool drawn = false;
    const WorldGradients g = rollout.backward([&](int t, const WorldState& state, WorldStateGradient& gradient) {
      if (t != steps) return;
      if (!drawn) {
        direction.resize(gradient.all.size());
        for (double& d : direction) d = gaussian(random);
        if (world.has_rigid()) {
          // The rigid bodies' 12-per-body block sits where the gradient's rigid span does.
          const auto offset = static_cast<std::size_t>(gradient.rigid.data() - gradient.all.data());
          restrict_to_joint_tangent(world.rigid->model, *rigid, state.rigid,
                                    std::span(direction).subspan(offset, gradient.rigid.size()));
        }
        drawn = true;
      }
      for (std::size_t k = 0; k < gradient.all.size(); ++k) gradient.all[k] += direction[k];
    });
    const GradientHealth health = combined_health(g);
    if (!health.per_step_kept)
      throw Error(message("terminal_sensitivity: the ", steps, "-step rollout did not keep its per-step logs (",
                          kRolloutLogBytesPerStep, " bytes a step exceed a quarter of RolloutOptions::memory_budget); "
                          "raise the budget to read the gradient's health per step"));
    // Relative to this probe's own |x̄_T|, after what the backward pass masks (static bodies,
    // pinned nodes).
    const double at_end = health.state_gradient_norm.back();
    for (std::size_t t = 0; t < result.values.size(); ++t) {
      const double norm = at_end > 0 ? health.state_gradient_norm[t] / at_end : health.state_gradient_norm[t];
      result.values[t] = std::isfinite(norm) ? std::max(result.values[t], norm) : norm;
    }
    if (probe == 0) result.probe_health = g.rigid_health;
  }
  return result;
}

GradientHealthReport analyze_gradient_health(const GradientHealth& health, const TerminalSensitivity& terminal,
                                             double dt) {
  const std::vector<double>& sensitivity = terminal.values;
  const auto& stage_gain = terminal.probe_health.stage_gain;
  GradientHealthReport report;
  report.steps = sensitivity.empty() ? 0 : static_cast<int>(sensitivity.size()) - 1;
  report.dt = dt;
  report.first_non_finite_step = health.first_non_finite_step;
  report.first_non_finite_stage = health.first_non_finite_stage;
  report.contact_changes = health.contact_change_count;
  report.clipped_steps = health.clipped_steps;
  report.solver_converged = health.solver_converged;
  report.first_unhealthy_step = health.first_unhealthy_step;
  report.state_health_message = health.state_health_message;
  report.largest_state_gradient = health.largest_state_gradient_norm;
  if (report.steps < 1) return report;

  const int T = report.steps;
  const double final_value = sensitivity[static_cast<std::size_t>(T)];
  bool finite = usable(final_value);
  // Least squares of ln s_t on k = T − t over the usable entries.
  double n = 0, sum_k = 0, sum_y = 0, sum_kk = 0, sum_ky = 0;
  for (int t = 0; t <= T && finite; ++t) {
    const double s = sensitivity[static_cast<std::size_t>(t)];
    if (!std::isfinite(s)) {
      finite = false;
      break;
    }
    if (s <= 0) continue;
    const double k = T - t, y = std::log(s / final_value);
    n += 1;
    sum_k += k;
    sum_y += y;
    sum_kk += k * k;
    sum_ky += k * y;
    report.total_growth = std::max(report.total_growth, s / final_value);
    report.smallest = std::min(report.smallest, s / final_value);
    const double next = t < T ? sensitivity[static_cast<std::size_t>(t) + 1] : 0.0;
    if (usable(next) && s / next > report.largest_step_gain) {
      report.largest_step_gain = s / next;
      report.largest_step = t;
    }
  }
  if (!finite || report.first_non_finite_step >= 0) {
    report.verdict = "non-finite";
    return report;
  }
  const double denominator = n * sum_kk - sum_k * sum_k;
  const double slope = denominator > 0 ? (n * sum_ky - sum_k * sum_y) / denominator : 0.0;
  report.growth_per_step = std::exp(slope);
  report.growth_per_second = std::exp(slope / dt);
  if (report.total_growth >= kExplodingTotal ||
      (report.total_growth >= kNoticeableTotal && report.growth_per_second >= kTenfoldPerSecond))
    report.verdict = "exploding";
  else if (report.smallest <= 1.0 / kExplodingTotal ||
           (report.smallest <= 1.0 / kNoticeableTotal && report.growth_per_second <= 1.0 / kTenfoldPerSecond))
    report.verdict = "vanishing";

  if (report.verdict == "exploding") {
    for (int t = T; t >= 0; --t)
      if (sensitivity[static_cast<std::size_t>(t)] >= 10.0 * final_value) {
        report.onset_step = t;
        break;
      }
    // The stage that raised the adjoint most over the steps reversed just before the onset:
    // stage k is credited with log max(1, c_k) − log max(1, c_{k−1}) of the cumulative gains
    // c (c_{−1} = 1). A stage that shrinks the velocity adjoint while the positions' adjoint
    // passes around it, and the one after it that merely restores it, earn nothing.
    if (report.onset_step >= 0 && !stage_gain.empty()) {
      double mean_log[3] = {0, 0, 0};
      int counted = 0;
      for (int t = report.onset_step; t < std::min(T, report.onset_step + kOnsetWindow); ++t) {
        const auto& gain = stage_gain[static_cast<std::size_t>(t)];
        if (!(usable(gain[0]) && usable(gain[1]) && usable(gain[2]))) continue;
        double below = 0.0;  // log max(1, c_{k−1})
        for (int k = 0; k < 3; ++k) {
          const double level = std::log(std::max(1.0, gain[static_cast<std::size_t>(k)]));
          mean_log[k] += std::max(0.0, level - below);
          below = std::max(below, level);
        }
        ++counted;
      }
      if (counted > 0) {
        const int stage = static_cast<int>(std::max_element(mean_log, mean_log + 3) - mean_log);
        report.onset_stage_gain = std::exp(mean_log[stage] / counted);
        report.onset_stage = mean_log[stage] > 0 ? kStageNames[stage] : "none (no stage raised the adjoint above its input)";
      }
    }
  }
  return report;
}

void print_gradient_health(std::ostream& out, const GradientHealthReport& report, const GradientHealth& health,
                           const TerminalSensitivity& terminal, int rows) {
  const std::vector<double>& sensitivity = terminal.values;
  const auto& stage_gain = terminal.probe_health.stage_gain;
  char line[256];
  out << "gradient health over " << report.steps << " steps (" << report.steps * report.dt << " s): "
      << report.verdict << "\n";
  std::snprintf(line, sizeof line,
                "  sensitivity of x_T to x_t: growth %.4g per step back (%.4g per second), largest %.3g, smallest %.3g"
                " (of its value at T)\n",
                report.growth_per_step, report.growth_per_second, report.total_growth, report.smallest);
  out << line;
  if (report.largest_step >= 0 && report.largest_step_gain > 2.0) {
    std::snprintf(line, sizeof line, "  largest one-step amplification: x%.4g at step %d\n", report.largest_step_gain,
                  report.largest_step);
    out << line;
  }
  if (report.onset_step >= 0) {
    out << "  exploding from step " << report.onset_step << " back (10x at T); the stage amplifying there: "
        << (report.onset_stage.empty() ? std::string("not recorded") : report.onset_stage);
    if (!report.onset_stage.empty()) {
      std::snprintf(line, sizeof line, " (x%.4g per step)", report.onset_stage_gain);
      out << line;
    }
    out << "\n";
  }
  if (report.first_non_finite_step >= 0)
    out << "  first NaN/Inf at step " << report.first_non_finite_step << ", stage: " << report.first_non_finite_stage
        << "\n";
  std::snprintf(line, sizeof line, "  largest |dL/dx_t| %.4g; contact set changes at %d steps; %d steps clipped\n",
                report.largest_state_gradient, report.contact_changes, report.clipped_steps);
  out << line;
  out << "  forward steps: " << (report.solver_converged ? "every one converged" : "some did not converge");
  if (report.first_unhealthy_step >= 0)
    out << "; unhealthy from step " << report.first_unhealthy_step << ": " << report.state_health_message;
  out << "\n";
  if (report.steps < 1 || rows < 1) return;
  std::snprintf(line, sizeof line, "  %8s %14s %14s %12s %12s %12s\n", "step", "s_t", "|dL/dx_t|", "gain:integr.",
                "gain:solve", "gain:step");
  out << line;
  const int count = std::min(rows, report.steps + 1);
  for (int r = 0; r < count; ++r) {
    const int t = count == 1 ? report.steps : static_cast<int>(std::lround(static_cast<double>(r) * report.steps / (count - 1)));
    const auto i = static_cast<std::size_t>(t);
    const double norm = i < health.state_gradient_norm.size() ? health.state_gradient_norm[i] : NAN;
    if (i < stage_gain.size()) {
      const auto& gain = stage_gain[i];
      std::snprintf(line, sizeof line, "  %8d %14.6g %14.6g %12.4g %12.4g %12.4g\n", t, sensitivity[i], norm, gain[0],
                    gain[1], gain[2]);
    } else {
      std::snprintf(line, sizeof line, "  %8d %14.6g %14.6g\n", t, sensitivity[i], norm);
    }
    out << line;
  }
}

void write_gradient_health_csv(std::ostream& out, const GradientHealth& health, const TerminalSensitivity& terminal) {
  const std::vector<double>& sensitivity = terminal.values;
  const auto& stage_gain = terminal.probe_health.stage_gain;
  out << "step,terminal_sensitivity,state_gradient_norm,gain_integration,gain_solve,gain_step\n";
  char line[192];
  for (std::size_t t = 0; t < sensitivity.size(); ++t) {
    const double norm = t < health.state_gradient_norm.size() ? health.state_gradient_norm[t] : NAN;
    if (t < stage_gain.size())
      std::snprintf(line, sizeof line, "%zu,%.9g,%.9g,%.9g,%.9g,%.9g\n", t, sensitivity[t], norm, stage_gain[t][0],
                    stage_gain[t][1], stage_gain[t][2]);
    else
      std::snprintf(line, sizeof line, "%zu,%.9g,%.9g,,,\n", t, sensitivity[t], norm);
    out << line;
  }
}

}  // namespace diffphys
