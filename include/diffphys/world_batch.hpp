// diffphys/world_batch.hpp — many worlds at once: B copies of one World with their own
// initial states, controls and parameters, rolled out and differentiated in one call on a
// pool of threads started once (docs/gradients.md, "Many worlds at once").
//
//   WorldBatchOptions options;
//   options.threads = 2;
//   WorldBatch batch(world, B, options);
//   batch.run(x0, controls, params, T);   // x0: B × state_size; controls: B × T × control_count;
//                                          // params: B × param_count (empty: the world's defaults)
//   batch.backward(dL_dstates, dx0, du, dtheta);   // dL_dstates: B × (T+1) × tangent_size
//
// Each world is one WorldRollout, kept between calls (its buffers reused); the worlds do not
// interact, so world b's states and gradients are the bits a lone WorldRollout gives,
// whatever the thread count and however the worlds are spread over the threads (the soft
// steps' calls into CHOLMOD are serialised for it: docs/gradients.md, "Many worlds at once").
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "diffphys/world.hpp"

namespace diffphys {

namespace batch {
class ThreadPool;
}

struct WorldBatchOptions {
  int threads = 1;                  // the calling thread included
  WorldRolloutOptions rollout;      // every world's
};

class WorldBatch {
 public:
  // Copies the world. Throws Error for size < 1 or threads < 1.
  WorldBatch(const World& world, int size, WorldBatchOptions options = {});
  ~WorldBatch();
  WorldBatch(const WorldBatch&) = delete;
  WorldBatch& operator=(const WorldBatch&) = delete;

  int size() const { return static_cast<int>(lanes_.size()); }
  int threads() const;
  const World& world() const { return world_; }

  // Runs every world `steps` world steps. initial_states: B × state_size (flat world states,
  // pack_state); controls: B × steps × control_count, or empty for the world's default
  // controls held; params: B × param_count, or empty for the world's defaults. Throws Error
  // for wrong sizes, or the first world's (lowest index) error, naming the world.
  void run(std::span<const double> initial_states, std::span<const double> controls, std::span<const double> params,
           int steps);
  int steps() const { return steps_; }

  // Every world's states x_0 … x_T: B × (T+1) × state_size.
  std::vector<double> states() const;
  bool converged(int world) const;
  const WorldRollout& rollout(int world) const;

  // Gradients of L = Σ_b Σ_t ⟨dL/dx_t^b, x_t^b⟩ given the loss's dL/dx_t of every world
  // (B × (T+1) × tangent_size, tangent layout): dL/dx_0 (B × tangent_size), dL/du (B × T ×
  // control_count) and dL/dθ (B × param_count; empty when the rollout options turn parameter
  // gradients off) are written to the spans, each world's to its own rows.
  void backward(std::span<const double> state_gradients, std::span<double> initial_state_gradients,
                std::span<double> control_gradients, std::span<double> param_gradients) const;

 private:
  struct Lane {
    WorldParams params;
    std::unique_ptr<WorldRollout> rollout;
  };
  World world_;
  WorldBatchOptions options_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<batch::ThreadPool> pool_;
  int steps_ = 0;
};

}  // namespace diffphys
