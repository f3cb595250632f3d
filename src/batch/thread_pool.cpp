// batch/thread_pool.cpp — ThreadPool (thread_pool.hpp): workers sleep on a condition variable
// between loops; a loop hands out indices one at a time under the mutex (the bodies are whole
// rollouts, milliseconds each, so the lock is not what limits the speed-up).
#include "batch/thread_pool.hpp"

#include "diffphys/error.hpp"

namespace diffphys::batch {

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) throw Error(message("thread pool: the number of threads must be ≥ 1, got ", threads));
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int k = 1; k < threads; ++k) workers_.emplace_back([this](std::stop_token stop) { work(stop); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  workers_.clear();  // joins
}

void ThreadPool::drain() {
  std::unique_lock lock(mutex_);
  while (next_ < count_) {
    const int index = next_++;
    const std::function<void(int)>& body = *body_;
    lock.unlock();
    std::exception_ptr failure;
    try {
      body(index);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure) failures_[static_cast<std::size_t>(index)] = failure;
    if (++finished_ == count_) work_done_.notify_all();
  }
}

void ThreadPool::work(std::stop_token stop) {
  std::size_t seen = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || stop.stop_requested() || generation_ != seen; });
      if (stopping_ || stop.stop_requested()) return;
      seen = generation_;
    }
    drain();
  }
}

void ThreadPool::parallel_for(int count, const std::function<void(int index)>& body) {
  if (count <= 0) return;
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    count_ = count;
    next_ = 0;
    finished_ = 0;
    failures_.assign(static_cast<std::size_t>(count), nullptr);
    ++generation_;
  }
  if (!workers_.empty() && count > 1) work_ready_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  work_done_.wait(lock, [&] { return finished_ == count_; });
  body_ = nullptr;
  count_ = 0;
  for (const std::exception_ptr& failure : failures_)
    if (failure) std::rethrow_exception(failure);
}

}  // namespace diffphys::batch
