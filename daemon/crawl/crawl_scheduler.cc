#include "daemon/crawl/crawl_scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "daemon/wire/unix_time.h"

namespace shingled::daemon {
namespace {

using SystemClock = std::chrono::system_clock;

}  // namespace

CrawlScheduler::CrawlScheduler(store::Store* store, std::unique_ptr<SweepRunner> runner,
                               CrawlScheduleOptions options)
    : store_(store),
      runner_(std::move(runner)),
      sweep_prefix_(std::move(options.sweep_prefix)),
      every_s_(options.every_s) {}

CrawlScheduler::~CrawlScheduler() { Stop(); }

Status CrawlScheduler::Start() {
  StatusOr<std::vector<store::SweepInfo>> sweeps = store_->Sweeps();
  if (!sweeps.ok()) return sweeps.status();
  std::optional<store::SweepInfo> last;
  for (const store::SweepInfo& sweep : *sweeps) {
    if (!sweep.name.starts_with(sweep_prefix_)) continue;
    if (!last || sweep.start >= last->start) last = sweep;
  }
  const SystemClock::time_point now = SystemClock::now();
  std::lock_guard<std::mutex> lock(mu_);
  last_in_store_ = last;
  if (last) last_start_ = SystemClock::time_point(std::chrono::seconds(last->start));
  if (every_s_ > 0) {
    const auto every = std::chrono::seconds(every_s_);
    next_due_ = now;
    if (last) {
      const SystemClock::time_point due = SystemClock::time_point(std::chrono::seconds(last->start)) + every;
      if (due > now) next_due_ = due;
    }
    spdlog::info("crawler: next sweep at {}", FormatIsoTime(UnixSeconds(*next_due_)));
  } else {
    spdlog::info("crawler: no schedule; sweeps start on POST /v1/crawl");
  }
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

StatusOr<std::string> CrawlScheduler::FreshName(int64_t unix_seconds) const {
  const std::string base = sweep_prefix_ + FormatIsoTime(unix_seconds);
  for (int i = 1; i <= 100; ++i) {
    const std::string name = i == 1 ? base : base + "-" + std::to_string(i);
    StatusOr<store::SweepInfo> found = store_->FindSweep(name);
    if (!found.ok() && found.status().code() == StatusCode::kNotFound) return name;
    if (!found.ok()) return found.status();
    if (found->open) return name;  // an interrupted sweep of that second: continue it
  }
  return AlreadyExistsError("no free sweep name after " + base + "-100");
}

StatusOr<std::string> CrawlScheduler::RequestSweep() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return UnavailableError("shutting down");
    if (running_) {
      return FailedPreconditionError("a crawler sweep is running; GET /v1/crawl shows its progress");
    }
    running_ = true;  // from here on, a second request gets 409
  }
  StatusOr<std::string> name = FreshName(UnixSeconds(SystemClock::now()));
  std::lock_guard<std::mutex> lock(mu_);
  if (!name.ok() || stopping_) {
    NotRunningLocked();
    if (!name.ok()) return name.status();
    return UnavailableError("shutting down");
  }
  requested_ = *name;
  cv_.notify_all();
  return *name;
}

void CrawlScheduler::NotRunningLocked() {
  running_ = false;
  current_.clear();
  runner_->ClearSweepStop();  // a StopSweep() meant the sweep that ended; the next one runs
}

StatusOr<std::string> CrawlScheduler::StopSweep() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return UnavailableError("shutting down");
  if (!running_) return FailedPreconditionError("no crawler sweep is running");
  // Under mu_: Loop() clears the stop under mu_ too, when the sweep ends and running_ falls, so
  // the stop can never outlive its sweep and hit the next one.
  runner_->StopSweep();
  // running_ is also set while a sweep is being named (requested_ and current_ still
  // empty); the stop then applies to that sweep, whose name is not known yet.
  // The caller logs the stop: it knows who asked (the API names the request).
  return !requested_.empty() ? requested_ : current_;
}

void CrawlScheduler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t version = schedule_version_;
  auto woken = [&] { return stopping_ || !requested_.empty() || schedule_version_ != version; };
  while (!stopping_) {
    version = schedule_version_;
    if (requested_.empty()) {
      if (next_due_ && !running_) {
        cv_.wait_until(lock, *next_due_, woken);
      } else {
        cv_.wait(lock, woken);
      }
      if (stopping_) break;
      if (requested_.empty()) {
        if (!next_due_ || SystemClock::now() < *next_due_ || running_) continue;
        running_ = true;
        lock.unlock();
        StatusOr<std::string> name = FreshName(UnixSeconds(SystemClock::now()));
        lock.lock();
        if (!name.ok()) {
          spdlog::error("crawler: cannot name the scheduled sweep: {}", name.status().ToString());
          NotRunningLocked();
          if (every_s_ > 0) next_due_ = SystemClock::now() + std::chrono::seconds(every_s_);
          continue;
        }
        requested_ = *name;
        if (stopping_) break;
      }
    }
    const std::string name = std::move(requested_);
    requested_.clear();
    current_ = name;
    // The schedule counts from the start of the last sweep, requested or scheduled.
    last_start_ = SystemClock::now();
    if (every_s_ > 0) next_due_ = *last_start_ + std::chrono::seconds(every_s_);
    lock.unlock();
    const SweepReport report = runner_->Run(name);
    lock.lock();
    NotRunningLocked();
    last_in_store_.reset();
    if (!report.status.ok()) {
      spdlog::error("crawler sweep {} failed: {}", name, report.status.ToString());
    }
  }
  NotRunningLocked();
  exited_ = true;
  cv_.notify_all();
}

Json CrawlScheduler::StatusJson() const {
  const SweepReport report = runner_->Snapshot();
  std::lock_guard<std::mutex> lock(mu_);
  Json out{{"enabled", true},
           {"running", running_},
           {"every_s", every_s_},
           {"next_sweep", next_due_ ? Json(FormatIsoTime(UnixSeconds(*next_due_))) : Json()}};
  if (!report.name.empty()) {
    out["sweep"] = SweepReportJson(report);
  } else if (last_in_store_) {
    // Nothing ran since start-up: what the store knows of the last crawler sweep.
    const store::SweepInfo& s = *last_in_store_;
    out["sweep"] = Json{{"sweep", s.name},
                        {"running", false},
                        {"started", FormatIsoTime(s.start)},
                        {"finished", s.open ? Json() : Json(FormatIsoTime(s.end))},
                        {"closed", !s.open},
                        {"pages", s.pages}};
  } else {
    out["sweep"] = nullptr;
  }
  return out;
}

void CrawlScheduler::SetEvery(int64_t every_s) {
  std::lock_guard<std::mutex> lock(mu_);
  every_s_ = every_s;
  if (every_s > 0) {
    const SystemClock::time_point now = SystemClock::now();
    next_due_ = last_start_ ? std::max(now, *last_start_ + std::chrono::seconds(every_s)) : now;
    spdlog::info("crawler: next sweep at {}", FormatIsoTime(UnixSeconds(*next_due_)));
  } else {
    next_due_.reset();
    spdlog::info("crawler: no schedule; sweeps start on POST /v1/crawl");
  }
  ++schedule_version_;
  cv_.notify_all();
}

void CrawlScheduler::SetSetup(CrawlSetup setup) { runner_->SetSetup(std::move(setup)); }

void CrawlScheduler::Stop(std::chrono::steady_clock::time_point deadline) {
  std::lock_guard<std::mutex> stop_lock(stop_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  runner_->Stop();
  if (!thread_.joinable()) return;
  bool exited;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto done = [&] { return exited_; };
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock, done);
    } else {
      cv_.wait_until(lock, deadline, done);
    }
    exited = exited_;
  }
  if (!exited) {
    spdlog::warn("crawler: shutdown deadline passed; cancelling fetches in flight");
    runner_->Cancel();
  }
  thread_.join();
}

}  // namespace shingled::daemon
