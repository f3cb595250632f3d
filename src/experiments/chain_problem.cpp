// experiments/chain_problem.cpp — see chain_problem.hpp.
//
// The push is the ball's `force` parameter, 15 N for 3 steps and 0 afterwards: two Rollouts,
// the second started from the first's final state, their gradients chained through dL/dx₃.
// A link's gravity force −m g ẑ and inertia I₁·m follow its mass, so dL/dm collects
// dL/dm + I₁·dL/dI − g·dL/dF_z (I₁ the inertia per kilogram).
#include "experiments/chain_problem.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "experiments/experiment_io.hpp"

namespace diffphys::experiments {
namespace {

constexpr double kChainTimeStep = 1.0 / 30.0;  // s
constexpr int kPushSteps = 3;                  // 0.1 s
constexpr double kPushForce = 15.0;            // N
constexpr double kLinkGravity = 1.0;           // m/s²
constexpr double kChainHingeHeight = 5.0;      // m: the chain hangs above z = 0 (no ground)
// Continuous contacts: the contact rows' time constant, 3 steps (docs/simulation.md: "softer
// contact (τ of a few steps) is what learning through contact wants"), critically damped.
constexpr double kLearningContactTimeConstant = 0.1;  // s

// The loss measures positions in centimetres — the pixels of lcp-physics, whose scene is 1 px
// = 1 cm — and angles in radians, so that the paper's learning rate (0.01) and clipping (±100)
// apply unchanged: in metres the gradient would be 10⁴ times smaller.
constexpr double kPositionUnit = 100.0;  // cm per m

// Per step and body, what is observed: x and z (cm) and the angle about y (rad; the motion is
// planar).
void observe(const State& state, std::span<double> out) {
  for (int b = 1; b < state.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    const Quat& q = state.orientation[i];
    out[3 * (i - 1) + 0] = kPositionUnit * state.position[i].x;
    out[3 * (i - 1) + 1] = kPositionUnit * state.position[i].z;
    out[3 * (i - 1) + 2] = 2.0 * std::atan2(q.y, q.w);  // rotation about y, continuous to ±2π
  }
}

std::string link_slice(int i, const char* what) {
  return "body/link" + std::to_string(i) + "/" + what;
}

}  // namespace

std::string chain_scene_json(int links, double link_mass, ChainContacts contacts, double speculative_factor) {
  using nlohmann::json;
  const bool paper = contacts == ChainContacts::Paper;
  json bodies = json::array(), joints = json::array();
  auto link_z = [](int i) { return kChainHingeHeight - 0.2 - 0.5 * i; };
  for (int i = 0; i < links; ++i) {
    const std::string name = "link" + std::to_string(i);
    bodies.push_back({{"name", name},
                      {"position", {0.0, 0.0, link_z(i)}},
                      {"mass", link_mass},
                      {"friction", 0.9},
                      {"restitution", paper ? 0.5 : 0.0},
                      {"force", {0.0, 0.0, -kLinkGravity * link_mass}},
                      {"shapes", {{{"type", "box"}, {"half_extents", {0.1, 0.1, 0.3}}}}}});
    joints.push_back({{"name", "hinge" + std::to_string(i)},
                      {"type", "revolute"},
                      {"parent", i == 0 ? "world" : "link" + std::to_string(i - 1)},
                      {"child", name},
                      {"anchor", {0.0, 0.0, i == 0 ? kChainHingeHeight : link_z(i) + 0.25}},
                      {"axis", {0.0, 1.0, 0.0}}});
  }
  bodies.push_back({{"name", "ball"},
                    {"position", {-2.5, 0.0, link_z(links - 1)}},
                    {"mass", 1.0},
                    {"friction", 0.9},
                    {"restitution", paper ? 1.0 : 0.0},
                    {"force", {kPushForce, 0.0, 0.0}},
                    {"shapes", {{{"type", "sphere"}, {"radius", 0.2}}}}});
  const json scene = {
      {"name", "chain of " + std::to_string(links) + " links hit by a ball (de Avila Belbute-Peres et al. 2018, 4.1)"},
      {"dt", kChainTimeStep},
      {"gravity", {0.0, 0.0, 0.0}},
      {"solver",
       paper ? json{{"formulation", "complementarity"}, {"speculative_factor", speculative_factor}}
             : json{{"formulation", "convex"},
                    {"speculative_factor", speculative_factor},
                    {"compliance",
                     {{"contact", {{"time_constant", kLearningContactTimeConstant}, {"damping_ratio", 1.0}}}}}}},
      {"bodies", bodies},
      {"joints", joints}};
  return scene.dump(1);
}

ChainProblem::ChainProblem(int links, ChainContacts contacts, double speculative_factor)
    : links_(links),
      scene_(parse_scene(chain_scene_json(links, 1.0, contacts, speculative_factor), "chain-mass scene")),
      push_params_(scene_.params),
      coast_params_(scene_.params),
      push_(scene_.model, push_params_),
      coast_(scene_.model, coast_params_),
      observation_size_(3 * (scene_.model.body_count() - 1)) {
  coast_params_.slice(scene_.model, "body/ball/force")[0] = 0.0;
  for (int i = 0; i < links_; ++i) {
    const auto inertia = scene_.params.slice(scene_.model, link_slice(i, "inertia"));
    unit_inertia_.push_back({inertia[0], inertia[1], inertia[2]});  // at 1 kg
  }
}

void ChainProblem::set_masses(std::span<const double> masses) {
  for (Params* params : {&push_params_, &coast_params_})
    for (int i = 0; i < links_; ++i) {
      const double m = masses[static_cast<std::size_t>(i)];
      params->slice(scene_.model, link_slice(i, "mass"))[0] = m;
      const auto inertia = params->slice(scene_.model, link_slice(i, "inertia"));
      for (int k = 0; k < 3; ++k)
        inertia[static_cast<std::size_t>(k)] = m * unit_inertia_[static_cast<std::size_t>(i)][k];
      params->slice(scene_.model, link_slice(i, "force"))[2] = -kLinkGravity * m;
    }
}

std::vector<double> ChainProblem::simulate(std::span<const double> masses) {
  set_masses(masses);
  std::vector<double> observed(static_cast<std::size_t>(kChainObservedSteps * observation_size_));
  State current = scene_.state, next;
  for (int t = 0; t < kChainObservedSteps; ++t) {
    step(scene_.model, t < kPushSteps ? push_params_ : coast_params_, current, {}, next, workspace_);
    std::swap(current, next);
    observe(current, std::span(observed).subspan(static_cast<std::size_t>(t * observation_size_),
                                                 static_cast<std::size_t>(observation_size_)));
  }
  return observed;
}

double ChainProblem::mse(std::span<const double> simulated, std::span<const double> observed) const {
  double sum = 0.0;
  for (std::size_t k = 0; k < simulated.size(); ++k) sum += (simulated[k] - observed[k]) * (simulated[k] - observed[k]);
  return sum / static_cast<double>(simulated.size());
}

double ChainProblem::loss_and_gradient(std::span<const double> masses, std::span<const double> observed,
                                       std::span<double> dL_dmass) {
  set_masses(masses);
  push_.run(scene_.state, {}, kPushSteps);
  coast_.run(push_.final_state(), {}, kChainObservedSteps - kPushSteps);
  const double scale = 2.0 / static_cast<double>(kChainObservedSteps * observation_size_);
  std::vector<double> simulated(static_cast<std::size_t>(observation_size_));
  double sum = 0.0;
  // dL/dx_t (tangent layout): x → entry 0, z → entry 2, the angle about y → entry 4
  // (a world-frame rotation increment δθ_y adds δθ_y to the planar angle).
  auto add_loss_gradient = [&](int t, const State& state, std::span<double> dL_dx) {
    observe(state, simulated);
    const std::span<const double> target = observed.subspan(static_cast<std::size_t>((t - 1) * observation_size_),
                                                            static_cast<std::size_t>(observation_size_));
    for (int b = 1; b < state.body_count(); ++b) {
      double* body = dL_dx.data() + kStateTangentPerBody * b;
      const auto o = static_cast<std::size_t>(3 * (b - 1));
      const double ex = simulated[o] - target[o], ez = simulated[o + 1] - target[o + 1],
                   ea = simulated[o + 2] - target[o + 2];
      sum += ex * ex + ez * ez + ea * ea;
      body[0] += scale * kPositionUnit * ex;
      body[2] += scale * kPositionUnit * ez;
      body[4] += scale * ea;
    }
  };
  const Gradients coast_gradient = coast_.backward([&](int t, const State& state, std::span<double> dL_dx) {
    add_loss_gradient(t + kPushSteps, state, dL_dx);  // t = 0 is x₃, observed once, here
  });
  const Gradients push_gradient = push_.backward([&](int t, const State& state, std::span<double> dL_dx) {
    if (t == kPushSteps) {
      for (std::size_t k = 0; k < dL_dx.size(); ++k) dL_dx[k] += coast_gradient.initial_state[k];
    } else if (t > 0) {
      add_loss_gradient(t, state, dL_dx);
    }
  });
  for (int i = 0; i < links_; ++i) {
    double gradient = 0.0;
    for (const Gradients* g : {&push_gradient, &coast_gradient}) {
      gradient += g->param(scene_.model, link_slice(i, "mass"))[0];
      const auto dL_dinertia = g->param(scene_.model, link_slice(i, "inertia"));
      for (int k = 0; k < 3; ++k)
        gradient += dL_dinertia[static_cast<std::size_t>(k)] * unit_inertia_[static_cast<std::size_t>(i)][k];
      gradient -= kLinkGravity * g->param(scene_.model, link_slice(i, "force"))[2];
    }
    dL_dmass[static_cast<std::size_t>(i)] = gradient;
  }
  return sum / static_cast<double>(kChainObservedSteps * observation_size_);
}

void ChainProblem::record(std::span<const double> masses, const std::filesystem::path& path) {
  set_masses(masses);
  const ParamsSegment segments[] = {{&push_params_, kPushSteps}, {&coast_params_, kChainObservedSteps - kPushSteps}};
  record_trajectory(scene_.model, segments, scene_.state, path);
}

std::vector<double> chain_mass_losses(std::span<const double> total_masses, double speculative_factor) {
  ChainProblem chain(kChainMassLinks, ChainContacts::Continuous, speculative_factor);
  const auto even = [](double total) { return std::vector<double>(kChainMassLinks, total / kChainMassLinks); };
  const std::vector<double> observed = chain.simulate(even(kChainTrueMass));
  std::vector<double> losses;
  losses.reserve(total_masses.size());
  for (const double total : total_masses) losses.push_back(chain.mse(chain.simulate(even(total)), observed));
  return losses;
}

}  // namespace diffphys::experiments
