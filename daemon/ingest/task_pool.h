// A fixed set of worker threads running closures from one bounded queue. The daemon's CPU work
// (sketching, store queries) runs here so that the I/O threads only move bytes.
//
// Thread-safety: every method is safe to call from any thread.
#ifndef SHINGLED_DAEMON_TASK_POOL_H_
#define SHINGLED_DAEMON_TASK_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace shingled::daemon {

class TaskPool {
 public:
  // `threads` >= 1 workers; at most `capacity` queued closures for TrySubmit.
  TaskPool(size_t threads, size_t capacity);
  // Runs what is queued, then joins (Stop()).
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Queues `task`. false (and `task` is destroyed) when the queue holds `capacity` closures or
  // the pool is stopping.
  bool TrySubmit(std::function<void()> task);
  // Queues `task` whatever the queue length, for work already admitted by a bound elsewhere
  // (the ingest queue). false only when stopping.
  bool SubmitAdmitted(std::function<void()> task);

  // Accepts nothing more, runs what is queued, joins the workers. Idempotent.
  void Stop();
  // Accepts nothing more and destroys the queued closures without running them (their captured
  // replies then answer 503); running ones finish. Then joins.
  void Cancel();

  size_t queued() const;

 private:
  bool Push(std::function<void()> task, bool bounded);
  void Run();

  const size_t capacity_;
  std::vector<std::thread> threads_;

  // State below is protected by mu_.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_TASK_POOL_H_
