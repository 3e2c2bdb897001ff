#include "daemon/ingest/task_pool.h"

#include <pthread.h>

#include <algorithm>

namespace shingled::daemon {

TaskPool::TaskPool(size_t threads, size_t capacity) : capacity_(capacity) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i)
    threads_.emplace_back([this] { Run(); });
}

TaskPool::~TaskPool() { Stop(); }

bool TaskPool::TrySubmit(std::function<void()> task) { return Push(std::move(task), true); }

bool TaskPool::SubmitAdmitted(std::function<void()> task) { return Push(std::move(task), false); }

bool TaskPool::Push(std::function<void()> task, bool bounded) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (bounded && queue_.size() >= capacity_)) return false;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void TaskPool::Run() {
  pthread_setname_np(pthread_self(), "pool");
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void TaskPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void TaskPool::Cancel() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  dropped.clear();  // outside the lock: destructors may post replies
  Stop();
}

size_t TaskPool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace shingled::daemon
