// The daemon's crawler: a thread that runs crawler sweeps (daemon/crawl/crawl_sweep.h) on a
// schedule and on request (POST /v1/crawl), one at a time, while the HTTP API goes on serving.
//
// Schedule: a sweep every `every_s` seconds from the start of the previous one, whether that one
// was scheduled or requested. At Start() the last crawler sweep in the store (the latest one
// whose name has the sweep prefix) sets the first date: at once if it started `every_s` ago or
// more, or if there is none; otherwise `every_s` after its start. So a restart neither crawls
// again at once nor forgets the schedule. every_s = 0: no schedule, sweeps only on request.
//
// Sweeps are named prefix + their UTC start, "crawl-2024-05-01T12:00:00Z" ("-2", "-3" ... added
// if a closed sweep has that name already).
//
// Thread-safety: every method is safe to call from any thread.
#ifndef SHINGLED_DAEMON_CRAWL_SCHEDULER_H_
#define SHINGLED_DAEMON_CRAWL_SCHEDULER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/status.h"
#include "daemon/crawl/crawl_sweep.h"
#include "daemon/wire/json_codec.h"
#include "store/store.h"

namespace shingled::daemon {

struct CrawlScheduleOptions {
  int64_t every_s = 86400;  // 0: no schedule
  std::string sweep_prefix = "crawl-";
};

class CrawlScheduler {
 public:
  // `store` must outlive the scheduler; `runner` is owned.
  CrawlScheduler(store::Store* store, std::unique_ptr<SweepRunner> runner,
                 CrawlScheduleOptions options);
  // Stop() with no deadline.
  ~CrawlScheduler();
  CrawlScheduler(const CrawlScheduler&) = delete;
  CrawlScheduler& operator=(const CrawlScheduler&) = delete;

  // Plans the first sweep from the store's sweeps and starts the thread. Errors reading the
  // store's sweeps are returned (the thread is not started).
  [[nodiscard]] Status Start();

  // Starts a sweep now; returns its name. FailedPrecondition if a sweep is running or about to
  // start; Unavailable once stopping.
  [[nodiscard]] StatusOr<std::string> RequestSweep();

  // POST /v1/crawl/stop: stops the running sweep (SweepRunner::StopSweep: fetches in flight
  // finish, the pages handed over are committed, the sweep is left open "stopped on request");
  // returns its name ("" for a sweep being named at that instant). A sweep requested but not yet
  // started is stopped as it starts. The schedule goes on: the next scheduled or requested sweep
  // runs. FailedPrecondition when no sweep runs or is about to; Unavailable once stopping
  // (shutdown stops the sweep anyway). Logs nothing: the caller, who knows who asked, does.
  [[nodiscard]] StatusOr<std::string> StopSweep();

  // GET /v1/crawl: the schedule, and the running sweep's progress or the last sweep's report.
  Json StatusJson() const;

  // SIGHUP: a new `every_s` (0: no schedule). The next sweep is due `every_s` after the start of
  // the last one (at once if that is past, or if none ran); a running sweep goes on.
  void SetEvery(int64_t every_s);
  // SIGHUP: the settings of the sweeps that start from now on (SweepRunner::SetSetup).
  void SetSetup(CrawlSetup setup);

  // Stops scheduling and the running sweep (left open; its pages stored). Waits for the thread
  // until `deadline`, then cancels fetches in flight and pages not yet committed, and joins.
  // Idempotent.
  void Stop(std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());

 private:
  void Loop();
  // running_ = false, and the end of what StopSweep() stopped. REQUIRES: mu_ held.
  void NotRunningLocked();
  // A name no closed sweep has: prefix + the ISO date of `unix_seconds`, "-2"... if taken.
  StatusOr<std::string> FreshName(int64_t unix_seconds) const;

  store::Store* const store_;
  const std::unique_ptr<SweepRunner> runner_;
  const std::string sweep_prefix_;

  // State below is protected by mu_.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t every_s_;
  uint64_t schedule_version_ = 0;  // counts SetEvery() calls, to wake the loop
  // The start of the last crawler sweep (in the store at Start(), then the last one run).
  std::optional<std::chrono::system_clock::time_point> last_start_;
  bool stopping_ = false;
  bool running_ = false;             // a sweep runs, or is requested and about to
  std::string requested_;            // the name of a requested sweep not yet started
  std::string current_;              // the name of the sweep the runner runs, while it does
  std::optional<std::chrono::system_clock::time_point> next_due_;  // none: no schedule
  // The last crawler sweep in the store at Start(), until one runs here.
  std::optional<store::SweepInfo> last_in_store_;
  bool exited_ = false;  // the thread left its loop
  std::thread thread_;

  std::mutex stop_mu_;  // serializes Stop(): one joins the thread
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_CRAWL_SCHEDULER_H_
