// learn/batch.cpp — several robots per update (Degrave et al. 2019, §3.1–3.2.2: batches of
// robots, gradients averaged): episodes run in waves of `threads` on a pool of threads started
// once per call (batch/thread_pool.hpp), each into its own gradient buffer, then summed in
// episode order so the bits do not depend on the thread count (STYLE.md practice 8).
#include <algorithm>
#include <exception>
#include <vector>

#include "batch/thread_pool.hpp"

#include "diffphys/error.hpp"
#include "diffphys/neural.hpp"

namespace diffphys {

double average_over_batch(int episodes, int threads, std::span<double> average_gradient,
                          const std::function<double(int episode, std::span<double> gradient)>& episode) {
  if (episodes <= 0) throw Error(message("batch: the number of episodes must be positive, got ", episodes));
  if (threads <= 0) throw Error(message("batch: the number of threads must be positive, got ", threads));
  const int lanes = std::min(threads, episodes);
  const std::size_t size = average_gradient.size();
  std::vector<std::vector<double>> gradients(static_cast<std::size_t>(lanes), std::vector<double>(size, 0.0));
  std::vector<double> losses(static_cast<std::size_t>(lanes), 0.0);
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(lanes));
  std::fill(average_gradient.begin(), average_gradient.end(), 0.0);
  double loss_sum = 0.0;
  const auto run_one = [&](int lane, int index) {
    const auto slot = static_cast<std::size_t>(lane);
    try {
      losses[slot] = episode(index, gradients[slot]);
    } catch (...) {
      failures[slot] = std::current_exception();
    }
  };
  batch::ThreadPool pool(lanes);
  for (int first = 0; first < episodes; first += lanes) {
    const int count = std::min(lanes, episodes - first);
    pool.parallel_for(count, [&](int lane) { run_one(lane, first + lane); });
    for (int lane = 0; lane < count; ++lane) {
      const auto slot = static_cast<std::size_t>(lane);
      if (failures[slot]) std::rethrow_exception(failures[slot]);
      loss_sum += losses[slot];
      for (std::size_t k = 0; k < size; ++k) average_gradient[k] += gradients[slot][k];
    }
  }
  const double inverse = 1.0 / episodes;
  for (double& g : average_gradient) g *= inverse;
  return loss_sum * inverse;
}

}  // namespace diffphys
