// experiments/chain_mass.cpp — `diffphys experiment chain-mass` and `chain-mass-scaling`:
// de Avila Belbute-Peres et al. 2018, §4.1 and Fig. 1 (the chain and its loss:
// experiments/chain_problem.hpp).
//
// chain-mass infers the chain's total mass (7 kg) from the observed motion, from 10 starts
// evenly spaced over 0.5–5 kg and one drawn from U(0, 1) kg (the public code's random start),
// with two optimisers: the paper's (gradient descent, rate 0.01, gradient clipped to ±100, on
// the mass) and one without clipping, L-BFGS on the log-mass. The chain's
// contacts are the Continuous ones (convex formulation, speculative contacts, impacts without
// restitution), in which the loss is continuous in the mass; the loss along the mass and its
// analytic and central-difference gradients are written beside the curves, with a fine scan
// across 4.80–4.90 kg, where the paper's contacts made the loss jump.
#include "experiments/chain_mass.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>

#include "diffphys/lbfgs.hpp"
#include "diffphys/optimizer.hpp"
#include "experiments/chain_problem.hpp"
#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kInitialGuessForViewer = 1.0;  // kg: the paper's starting mass
constexpr double kSmallestMass = 0.05;          // kg: gradient descent's steps are kept above this

std::vector<double> even_masses(double total) {
  return std::vector<double>(kChainMassLinks, total / kChainMassLinks);
}

bool within_one_percent(double mass) {
  return std::abs(mass - kChainTrueMass) < 0.01 * kChainTrueMass;
}

// The CSV's `method` column: 0 gradient descent, 1 L-BFGS.
enum class Method { GradientDescent, Lbfgs };
constexpr Method kMethods[] = {Method::GradientDescent, Method::Lbfgs};
const char* method_name(Method method) {
  return method == Method::GradientDescent ? "gradient descent (rate 0.01, clip ±100, on the mass)"
                                           : "L-BFGS (strong Wolfe line search, on the log-mass, no clipping)";
}
const char* method_key(Method method) {
  return method == Method::GradientDescent ? "gradient_descent" : "lbfgs_log_mass";
}

struct Run {
  double start = 0.0, mass = 0.0, first_mse = 0.0, last_mse = 0.0;
  int iterations = 0;              // iterations run
  int within_one_percent = -1;     // first iteration from which every iterate is within 1% of 7 kg
  int evaluations_to_within = -1;  // loss-and-gradient evaluations up to that iterate
  int evaluations = 0;
};

// Median and worst of the iterations to within 1% over the runs that got there.
nlohmann::json distribution_json(const std::vector<Run>& runs) {
  std::vector<int> reached, evaluations;
  nlohmann::json per_start = nlohmann::json::array();
  for (const Run& run : runs) {
    per_start.push_back({{"start_kg", run.start},
                         {"final_mass_kg", run.mass},
                         {"iterations_to_within_1_percent", run.within_one_percent},
                         {"evaluations_to_within_1_percent", run.evaluations_to_within},
                         {"initial_mse", run.first_mse},
                         {"final_mse", run.last_mse}});
    if (run.within_one_percent >= 0) {
      reached.push_back(run.within_one_percent);
      evaluations.push_back(run.evaluations_to_within);
    }
  }
  const auto median = [](std::vector<int> values) -> nlohmann::json {
    if (values.empty()) return nullptr;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? double(values[n / 2]) : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  };
  const auto worst = [](const std::vector<int>& values) -> nlohmann::json {
    if (values.empty()) return nullptr;
    return *std::max_element(values.begin(), values.end());
  };
  return {{"starts", runs.size()},
          {"failures", runs.size() - reached.size()},
          {"median_iterations", median(reached)},
          {"worst_iterations", worst(reached)},
          {"median_evaluations", median(evaluations)},
          {"worst_evaluations", worst(evaluations)},
          {"runs", per_start}};
}

// On a uniform grid of masses: the largest step of the loss between neighbours, and the
// median step. A jump stands out as a step many times the median; a kink (a contact that
// starts to push within a step) changes the slope only.
struct GridSteps {
  double largest = 0.0, median = 0.0, at_mass = 0.0;
};
GridSteps grid_steps(std::span<const double> masses, std::span<const double> losses) {
  std::vector<double> steps;
  GridSteps result;
  for (std::size_t k = 0; k + 1 < losses.size(); ++k) {
    const double step = std::abs(losses[k + 1] - losses[k]);
    steps.push_back(step);
    if (step > result.largest) {
      result.largest = step;
      result.at_mass = masses[k];
    }
  }
  std::sort(steps.begin(), steps.end());
  result.median = steps.empty() ? 0.0 : steps[steps.size() / 2];
  return result;
}

}  // namespace

ExperimentResult run_chain_mass(const ExperimentOptions& options) {
  const std::filesystem::path folder = experiment_folder(options, "chain-mass");
  std::ostream* progress = options.progress;
  const int iterations = options.quick ? 30 : 60;
  ChainProblem chain(kChainMassLinks, ChainContacts::Continuous);
  write_text_file(folder / "scene.json",
                  chain_scene_json(kChainMassLinks, kChainTrueMass / kChainMassLinks, ChainContacts::Continuous));
  const std::vector<double> observed = chain.simulate(even_masses(kChainTrueMass));

  // Starts: evenly spaced over 0.5–5 kg (10; --quick 3), and one from U(0, 1) kg.
  std::vector<double> starts;
  const int evenly = options.quick ? 3 : 10;
  for (int k = 0; k < evenly; ++k) starts.push_back(0.5 + 4.5 * k / (evenly - 1));
  std::mt19937_64 random(options.seed);
  starts.push_back(std::uniform_real_distribution<double>(0.0, 1.0)(random));

  double gradient_seconds = 0.0, gradient_cpu_seconds = 0.0;
  int gradient_count = 0;
  // The MSE and dMSE/dM at total mass M (each link's mass is M/10).
  std::vector<double> link_gradient(kChainMassLinks);
  const auto loss_at = [&](double mass, double& gradient) {
    const Stopwatch clock;
    const double mse = chain.loss_and_gradient(even_masses(mass), observed, link_gradient);
    gradient_seconds += clock.seconds();
    gradient_cpu_seconds += clock.cpu_seconds();
    ++gradient_count;
    gradient = 0.0;
    for (const double g : link_gradient) gradient += g / kChainMassLinks;
    return mse;
  };

  CsvTable curve({"method", "start_kg", "iteration", "evaluations", "mass_kg", "mse", "gradient", "elapsed_s"});
  // Records an iterate; `within` bookkeeping: the first iteration from which all stay within 1%.
  const auto note = [&](Method method, Run& run, int iteration, double mass, double mse, double gradient,
                        double seconds) {
    if (iteration == 0) run.first_mse = mse;
    run.last_mse = mse;
    run.mass = mass;
    run.iterations = iteration;
    if (within_one_percent(mass)) {
      if (run.within_one_percent < 0) {
        run.within_one_percent = iteration;
        run.evaluations_to_within = run.evaluations;
      }
    } else {
      run.within_one_percent = run.evaluations_to_within = -1;
    }
    curve.add_row({double(static_cast<int>(method)), run.start, double(iteration), double(run.evaluations), mass, mse,
                   gradient, seconds});
    if (progress)
      *progress << method_key(method) << " from " << run.start << " kg, iteration " << iteration << ": mass " << mass
                << " kg (true 7), MSE " << mse << ", dMSE/dM " << gradient << std::endl;
  };

  // The paper's optimiser: gradient descent on M, one evaluation per iteration.
  const auto descend = [&](double start) {
    Run run;
    run.start = start;
    GradientDescent descent{OptimizerSettings(0.01, {}, GradientClip::value(100.0))};
    std::vector<double> mass{start}, gradient(1);
    const Stopwatch clock;
    for (int iteration = 0; iteration <= iterations; ++iteration) {
      const double mse = loss_at(mass[0], gradient[0]);
      ++run.evaluations;
      note(Method::GradientDescent, run, iteration, mass[0], mse, gradient[0], clock.seconds());
      if (iteration == iterations) break;
      descent.step(mass, gradient);
      mass[0] = std::max(mass[0], kSmallestMass);
    }
    return run;
  };
  // L-BFGS on log M (dL/d(log M) = M dL/dM), to its own convergence or `iterations` iterations.
  const auto lbfgs = [&](double start) {
    Run run;
    run.start = start;
    const Stopwatch clock;
    const LossAndGradient loss = [&](std::span<const double> x, std::span<double> gradient_x) {
      const double mass = std::exp(x[0]);
      double gradient = 0.0;
      const double mse = loss_at(mass, gradient);
      ++run.evaluations;
      if (run.evaluations == 1) note(Method::Lbfgs, run, 0, mass, mse, gradient, clock.seconds());  // at the start
      gradient_x[0] = mass * gradient;
      return mse;
    };
    LbfgsSettings settings;
    settings.max_iterations = iterations;
    settings.gradient_tolerance = 1e-6;
    minimize_lbfgs(loss, std::vector<double>{std::log(start)}, settings,
                   [&](int iteration, std::span<const double> x, double value, std::span<const double> gradient_x) {
                     const double mass = std::exp(x[0]);
                     note(Method::Lbfgs, run, iteration, mass, value, gradient_x[0] / mass, clock.seconds());
                     return true;
                   });
    return run;
  };

  nlohmann::json methods = nlohmann::json::object();
  bool every_start_converges = true;
  std::vector<double> paper_masses;  // gradient descent's final estimates, for the viewer
  for (const Method method : kMethods) {
    std::vector<Run> runs;
    for (const double start : starts) runs.push_back(method == Method::Lbfgs ? lbfgs(start) : descend(start));
    for (const Run& run : runs) every_start_converges = every_start_converges && run.within_one_percent >= 0;
    if (method == Method::GradientDescent) paper_masses.push_back(runs.front().mass);
    methods[method_key(method)] = distribution_json(runs);
    methods[method_key(method)]["optimizer"] = method_name(method);
  }
  curve.write(folder / "mass_and_mse.csv");
  chain.record(even_masses(kChainTrueMass), folder / "trajectory_observed.json");
  chain.record(even_masses(kInitialGuessForViewer), folder / "trajectory_initial.json");
  chain.record(even_masses(paper_masses.front()), folder / "trajectory_learned.json");

  // The loss along the mass, with the analytic and the central-difference gradient, and a
  // fine scan of 4.80–4.90 kg (where the paper's contacts jumped at 4.8515 kg).
  nlohmann::json landscape_json = nullptr;
  if (!options.quick) {
    CsvTable landscape({"mass_kg", "mse", "analytic_gradient", "finite_difference_gradient"});
    std::vector<double> masses, losses;
    double worst_difference = 0.0;
    for (int k = 0; k <= 150; ++k) {
      const double mass = 0.5 + 0.05 * k, step = 1e-5;
      double gradient = 0.0;
      const double mse = loss_at(mass, gradient);
      const double plus = chain.mse(chain.simulate(even_masses(mass + step)), observed);
      const double minus = chain.mse(chain.simulate(even_masses(mass - step)), observed);
      const double finite_difference = (plus - minus) / (2.0 * step);
      landscape.add_row({mass, mse, gradient, finite_difference});
      masses.push_back(mass);
      losses.push_back(mse);
      if (std::abs(mass - kChainTrueMass) > 1e-9)  // at 7 kg both are round-off around 0
        worst_difference = std::max(
            worst_difference, std::abs(gradient - finite_difference) / std::max(1.0, std::abs(finite_difference)));
    }
    landscape.write(folder / "loss_landscape.csv");
    const GridSteps coarse = grid_steps(masses, losses);
    CsvTable fine({"mass_kg", "mse"});
    std::vector<double> fine_masses;
    for (int k = 0; k <= 200; ++k) fine_masses.push_back(4.80 + 0.0005 * k);
    const std::vector<double> fine_losses = chain_mass_losses(fine_masses);
    for (std::size_t k = 0; k < fine_masses.size(); ++k) fine.add_row({fine_masses[k], fine_losses[k]});
    fine.write(folder / "loss_4_80_to_4_90.csv");
    const GridSteps fine_steps = grid_steps(fine_masses, fine_losses);
    landscape_json = {{"worst_gradient_difference", worst_difference},
                      {"grid_0_5_to_8_kg",
                       {{"spacing_kg", 0.05},
                        {"largest_step", coarse.largest},
                        {"median_step", coarse.median},
                        {"largest_step_at_kg", coarse.at_mass}}},
                      {"grid_4_80_to_4_90_kg",
                       {{"spacing_kg", 0.0005},
                        {"largest_step", fine_steps.largest},
                        {"median_step", fine_steps.median},
                        {"largest_step_at_kg", fine_steps.at_mass}}}};
    if (progress)
      *progress << "loss landscape 0.5..8 kg: analytic vs finite-difference gradient, worst relative difference "
                << worst_difference << "; 4.80..4.90 kg: largest step " << fine_steps.largest << ", median "
                << fine_steps.median << std::endl;
  }

  const nlohmann::json result = {{"experiment", "chain-mass"},
                                 {"quick", options.quick},
                                 {"links", kChainMassLinks},
                                 {"steps", kChainObservedSteps},
                                 {"true_mass_kg", kChainTrueMass},
                                 {"contacts", "convex formulation, speculative contacts, impacts without restitution"},
                                 {"iterations", iterations},
                                 {"starts_kg", starts},
                                 {"methods", methods},
                                 {"landscape", landscape_json},
                                 {"seconds_per_gradient_iteration", gradient_seconds / gradient_count},
                                 {"cpu_seconds_per_gradient_iteration", gradient_cpu_seconds / gradient_count},
                                 {"loss", "MSE over 300 steps of every body's x and z (cm) and angle about y (rad)"},
                                 {"paper", {{"lcp_physics_seconds_per_iteration_here", 4.0}}},
                                 {"out", folder.string()}};
  return {result.dump(), every_start_converges};
}

ExperimentResult run_chain_mass_scaling(const ExperimentOptions& options) {
  const std::filesystem::path folder = experiment_folder(options, "chain-mass-scaling");
  std::ostream* progress = options.progress;
  // Fig. 1 right: 30 updates of one mass per link, analytic gradients (one forward and one
  // backward pass) against central finite differences (2n forward passes), as n grows.
  const std::vector<int> sizes =
      options.quick
          ? std::vector<int>{1, 2, 4}
          : (options.full ? std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
                          : std::vector<int>{1, 2, 4, 8, 12, 16, 20});
  const int updates = 30;
  const double epsilon = 1e-6;  // kg, central differences
  // With a mass per link some gradients are positive and a clipped step (1 kg) would make a
  // mass negative: masses are projected back onto m ≥ 0.05 kg.
  auto keep_positive = [](std::vector<double>& masses) {
    for (double& m : masses) m = std::max(m, 0.05);
  };
  CsvTable table({"links", "analytic_s", "finite_differences_s", "analytic_cpu_s", "finite_differences_cpu_s",
                  "worst_relative_gradient_difference"});
  nlohmann::json rows = nlohmann::json::array();
  double worst_difference_overall = 0.0;
  bool analytic_faster_at_largest = false;
  for (const int links : sizes) {
    ChainProblem chain(links, ChainContacts::Paper);
    const std::vector<double> true_masses(static_cast<std::size_t>(links), 0.7);
    const std::vector<double> observed = chain.simulate(true_masses);
    const std::vector<double> start(static_cast<std::size_t>(links), 0.1);

    // Analytic.
    std::vector<double> masses = start, gradient(static_cast<std::size_t>(links));
    GradientDescent analytic_descent{OptimizerSettings(0.01, {}, GradientClip::value(100.0))};
    const Stopwatch analytic_clock;
    std::vector<double> first_analytic;
    for (int u = 0; u < updates; ++u) {
      chain.loss_and_gradient(masses, observed, gradient);
      if (u == 0) first_analytic = gradient;
      analytic_descent.step(masses, gradient);
      keep_positive(masses);
    }
    const double analytic_seconds = analytic_clock.seconds(), analytic_cpu = analytic_clock.cpu_seconds();

    // Finite differences.
    masses = start;
    GradientDescent fd_descent{OptimizerSettings(0.01, {}, GradientClip::value(100.0))};
    const Stopwatch fd_clock;
    std::vector<double> first_fd;
    for (int u = 0; u < updates; ++u) {
      for (int i = 0; i < links; ++i) {
        std::vector<double> plus = masses, minus = masses;
        plus[static_cast<std::size_t>(i)] += epsilon;
        minus[static_cast<std::size_t>(i)] -= epsilon;
        gradient[static_cast<std::size_t>(i)] =
            (chain.mse(chain.simulate(plus), observed) - chain.mse(chain.simulate(minus), observed)) / (2 * epsilon);
      }
      if (u == 0) first_fd = gradient;
      fd_descent.step(masses, gradient);
      keep_positive(masses);
    }
    const double fd_seconds = fd_clock.seconds(), fd_cpu = fd_clock.cpu_seconds();
    double worst = 0.0;  // the two gradients at the start, relative to the largest entry
    double largest = 0.0;
    for (const double g : first_fd) largest = std::max(largest, std::abs(g));
    for (int i = 0; i < links; ++i)
      worst = std::max(worst,
                       std::abs(first_analytic[static_cast<std::size_t>(i)] - first_fd[static_cast<std::size_t>(i)]) /
                           std::max(largest, 1e-300));
    worst_difference_overall = std::max(worst_difference_overall, worst);
    analytic_faster_at_largest = analytic_cpu < fd_cpu;
    table.add_row({double(links), analytic_seconds, fd_seconds, analytic_cpu, fd_cpu, worst});
    rows.push_back({{"links", links},
                    {"analytic_s", analytic_seconds},
                    {"finite_differences_s", fd_seconds},
                    {"analytic_cpu_s", analytic_cpu},
                    {"finite_differences_cpu_s", fd_cpu},
                    {"worst_relative_gradient_difference", worst}});
    if (progress)
      *progress << links << " links: 30 updates take " << analytic_seconds << " s with analytic gradients, "
                << fd_seconds << " s with finite differences (" << fd_seconds / analytic_seconds
                << "x); gradients agree to " << worst << " (relative)" << std::endl;
  }
  table.write(folder / "timing.csv");
  const nlohmann::json result = {{"experiment", "chain-mass-scaling"},
                                 {"quick", options.quick},
                                 {"updates", updates},
                                 {"finite_differences", "central, 2n forward rollouts per update, step 1e-6 kg"},
                                 {"rows", rows},
                                 {"worst_relative_gradient_difference", worst_difference_overall},
                                 {"out", folder.string()}};
  // The two gradients differ by up to ~1e-3 (relative) where a perturbation moves an impact
  // across a step (docs/gradients.md, "Known limits"); more than 1e-2 would be a defect.
  return {result.dump(), analytic_faster_at_largest && worst_difference_overall < 1e-2};
}

}  // namespace diffphys::experiments
