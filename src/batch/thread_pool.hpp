// batch/thread_pool.hpp — a fixed set of worker threads, started once and reused for every
// parallel loop (starting threads per call cost the old batch code most of its speed-up).
// Which thread runs which index is not fixed; callers keep results deterministic by writing
// each index's result to its own slot and reducing in index order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace diffphys::batch {

class ThreadPool {
 public:
  // `threads` ≥ 1 in all, the calling thread included (threads − 1 workers are started).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls body(i) for every i in [0, count), spread over the threads, and returns when all
  // are done. If calls throw, the exception of the lowest such index is rethrown (the others
  // still run). Not reentrant: one loop at a time per pool.
  void parallel_for(int count, const std::function<void(int index)>& body);

 private:
  std::vector<std::jthread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  const std::function<void(int)>* body_ = nullptr;
  int count_ = 0, next_ = 0, finished_ = 0;
  std::size_t generation_ = 0;
  bool stopping_ = false;
  std::vector<std::exception_ptr> failures_;

  void work(std::stop_token stop);
  // Runs indices until none is left; returns when this thread found no more.
  void drain();
};

}  // namespace diffphys::batch
