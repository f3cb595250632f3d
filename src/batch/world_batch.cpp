// batch/world_batch.cpp — WorldBatch (diffphys/world_batch.hpp): one WorldRollout per world,
// built once, driven over a ThreadPool. Each world reads and writes only its own rows, so
// the results do not depend on the thread count or the order in which threads take worlds.
#include "diffphys/world_batch.hpp"

#include <algorithm>

#include "batch/thread_pool.hpp"
#include "diffphys/error.hpp"

namespace diffphys {

namespace {

void check_size(std::span<const double> values, std::size_t expected, const char* what) {
  if (values.size() != expected)
    throw Error(message("world batch: expected ", expected, " ", what, " values, got ", values.size()));
}

// Runs body(b) for every world, naming the world in an error.
void for_each_world(batch::ThreadPool& pool, int size, const std::function<void(int)>& body) {
  pool.parallel_for(size, [&](int b) {
    try {
      body(b);
    } catch (const Error& error) {
      throw Error(message("world ", b, ": ", error.what()));
    }
  });
}

}  // namespace

WorldBatch::WorldBatch(const World& world, int size, WorldBatchOptions options) : world_(world), options_(options) {
  if (size < 1) throw Error(message("world batch: the number of worlds must be ≥ 1, got ", size));
  pool_ = std::make_unique<batch::ThreadPool>(options.threads);
  lanes_.reserve(static_cast<std::size_t>(size));
  const WorldParams defaults = world_.default_params();
  for (int b = 0; b < size; ++b) {
    auto lane = std::make_unique<Lane>();
    lane->params = defaults;
    lane->rollout = std::make_unique<WorldRollout>(world_, lane->params, options_.rollout);
    lanes_.push_back(std::move(lane));
  }
}

WorldBatch::~WorldBatch() = default;

int WorldBatch::threads() const { return pool_->threads(); }

void WorldBatch::run(std::span<const double> initial_states, std::span<const double> controls, std::span<const double> params,
                     int steps) {
  if (steps < 0) throw Error(message("world batch: steps must be ≥ 0, got ", steps));
  const WorldLayout& layout = world_.layout();
  const auto worlds = lanes_.size();
  const auto state_size = static_cast<std::size_t>(layout.state_size);
  const auto per_world_controls = static_cast<std::size_t>(steps) * static_cast<std::size_t>(layout.control_count);
  const auto param_count = static_cast<std::size_t>(layout.param_count);
  check_size(initial_states, worlds * state_size, "initial state (worlds × state size)");
  if (!controls.empty()) check_size(controls, worlds * per_world_controls, "control (worlds × steps × controls per step)");
  if (!params.empty()) check_size(params, worlds * param_count, "parameter (worlds × parameters)");
  const std::vector<double> defaults = params.empty() ? world_.default_params().values : std::vector<double>();
  for_each_world(*pool_, size(), [&](int b) {
    const auto i = static_cast<std::size_t>(b);
    Lane& lane = *lanes_[i];
    if (params.empty()) {
      lane.params.values = defaults;
    } else {
      lane.params.values.assign(params.begin() + static_cast<std::ptrdiff_t>(i * param_count),
                                params.begin() + static_cast<std::ptrdiff_t>((i + 1) * param_count));
    }
    const WorldState initial = unpack_state(world_, initial_states.subspan(i * state_size, state_size));
    lane.rollout->run(initial, controls.empty() ? controls : controls.subspan(i * per_world_controls, per_world_controls), steps);
  });
  steps_ = steps;
}

std::vector<double> WorldBatch::states() const {
  const auto state_size = static_cast<std::size_t>(world_.layout().state_size);
  const auto per_world = static_cast<std::size_t>(steps_ + 1) * state_size;
  std::vector<double> all(lanes_.size() * per_world);
  pool_->parallel_for(size(), [&](int b) {
    const auto i = static_cast<std::size_t>(b);
    for (int t = 0; t <= steps_; ++t) {
      const std::vector<double> x = pack_state(world_, lanes_[i]->rollout->state(t));
      std::copy(x.begin(), x.end(), all.begin() + static_cast<std::ptrdiff_t>(i * per_world + static_cast<std::size_t>(t) * state_size));
    }
  });
  return all;
}

bool WorldBatch::converged(int world) const { return rollout(world).converged(); }

const WorldRollout& WorldBatch::rollout(int world) const {
  if (world < 0 || world >= size()) throw Error(message("world batch: world ", world, " outside [0, ", size(), ")"));
  return *lanes_[static_cast<std::size_t>(world)]->rollout;
}

void WorldBatch::backward(std::span<const double> state_gradients, std::span<double> initial_state_gradients,
                          std::span<double> control_gradients, std::span<double> param_gradients) const {
  const WorldLayout& layout = world_.layout();
  const auto worlds = lanes_.size();
  const auto tangent = static_cast<std::size_t>(layout.tangent_size);
  const auto per_world_states = static_cast<std::size_t>(steps_ + 1) * tangent;
  const auto per_world_controls = static_cast<std::size_t>(steps_) * static_cast<std::size_t>(layout.control_count);
  const auto param_count = static_cast<std::size_t>(layout.param_count);
  const bool with_params = options_.rollout.rollout.parameter_gradients;
  check_size(state_gradients, worlds * per_world_states, "state gradient (worlds × (steps + 1) × tangent size)");
  check_size(initial_state_gradients, worlds * tangent, "initial state gradient (worlds × tangent size)");
  check_size(control_gradients, worlds * per_world_controls, "control gradient (worlds × steps × controls per step)");
  check_size(param_gradients, with_params ? worlds * param_count : 0, "parameter gradient (worlds × parameters)");
  for_each_world(*pool_, size(), [&](int b) {
    const auto i = static_cast<std::size_t>(b);
    const std::span<const double> mine = state_gradients.subspan(i * per_world_states, per_world_states);
    const WorldGradients g = lanes_[i]->rollout->backward([&](int t, const WorldState&, WorldStateGradient& gradient) {
      const std::span<const double> at = mine.subspan(static_cast<std::size_t>(t) * tangent, tangent);
      for (std::size_t k = 0; k < tangent; ++k) gradient.all[k] += at[k];
    });
    std::copy(g.initial_state.begin(), g.initial_state.end(), initial_state_gradients.begin() + static_cast<std::ptrdiff_t>(i * tangent));
    std::copy(g.controls.begin(), g.controls.end(), control_gradients.begin() + static_cast<std::ptrdiff_t>(i * per_world_controls));
    if (with_params) std::copy(g.params.begin(), g.params.end(), param_gradients.begin() + static_cast<std::ptrdiff_t>(i * param_count));
  });
}

}  // namespace diffphys
