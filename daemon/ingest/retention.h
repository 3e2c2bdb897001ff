// Retention in the daemon: passes of Store::ApplyRetention on a thread of their own, one bounded
// step (write transaction) at a time between the ingest pipeline's commits, every
// `store.retention_every_s` (store/FORMAT.md, "Forgetting").
#ifndef SHINGLED_DAEMON_INGEST_RETENTION_H_
#define SHINGLED_DAEMON_INGEST_RETENTION_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "daemon/metrics/metrics.h"
#include "store/store.h"

namespace shingled::daemon {

struct RetentionSchedule {
  // The rules and the step size; `now` is taken at the start of each pass.
  store::RetentionOptions rules;
  std::chrono::seconds every{3600};
};

// The rules of the settings `store.retention_version_days`, `store.retention_gone_days` and
// `store.retention_step_urls` (0 days: that rule is off).
inline store::RetentionOptions RetentionRules(int64_t version_days, int64_t gone_days,
                                              int64_t step_urls) {
  store::RetentionOptions rules;
  rules.max_version_age = version_days * 86400;
  rules.max_gone_age = gone_days * 86400;
  rules.max_urls = static_cast<size_t>(step_urls);
  return rules;
}

// Whether `rules` forget anything (an age above 0).
inline bool RetentionIsOn(const store::RetentionOptions& rules) {
  return rules.max_version_age > 0 || rules.max_gone_age > 0;
}

// Runs one pass of retention to its end, step after step, or until `keep_going` answers false
// (between steps; the pass resumes there next time: the cursor is in the store). Counts each
// step in `metrics` (may be null) and gives `on_step` (may be null) the sums so far after each.
// Returns the steps' sums (pass_done when the pass ended).
StatusOr<store::RetentionStep> RunRetentionPass(
    store::Store& store, const store::RetentionOptions& rules,
    const std::function<bool()>& keep_going, Metrics* metrics,
    const std::function<void(const store::RetentionStep&)>& on_step = nullptr);

// A pass at start-up, then one every `every`, on a thread of its own, until Stop. A failed step
// (a full disk, say) is logged and the pass tried again at the next period.
class RetentionRunner {
 public:
  RetentionRunner(store::Store* store, Metrics* metrics, RetentionSchedule schedule);
  ~RetentionRunner() { Stop(); }
  RetentionRunner(const RetentionRunner&) = delete;
  RetentionRunner& operator=(const RetentionRunner&) = delete;

  void Start();
  // Stops after the step in flight; returns once the thread ended.
  void Stop();

 private:
  void Run();

  store::Store* store_;
  Metrics* metrics_;
  const RetentionSchedule schedule_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_INGEST_RETENTION_H_
