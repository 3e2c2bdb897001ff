// Clock: the crawler's seam for time (docs/DEVELOPMENT.md, "Seams for time and the network").
// Production code always asks a Clock, even for a 1 ms delay, so tests run politeness schedules
// without sleeping.
//
// A Clock must be safe for concurrent use; RealClock is, and FakeClock locks.
#ifndef SHINGLED_CRAWLER_CLOCK_H_
#define SHINGLED_CRAWLER_CLOCK_H_

#include <chrono>
#include <mutex>
#include <thread>

namespace shingled::crawler {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time, for delays and rates.
  virtual std::chrono::steady_clock::time_point Now() = 0;
  // Wall-clock time, for the dates recorded on fetched pages.
  virtual std::chrono::system_clock::time_point WallNow() = 0;
  // Blocks until Now() >= t (returns at once when t is past).
  virtual void SleepUntil(std::chrono::steady_clock::time_point t) = 0;
};

class RealClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() override {
    return std::chrono::system_clock::now();
  }
  void SleepUntil(std::chrono::steady_clock::time_point t) override {
    std::this_thread::sleep_until(t);
  }
  // A process-wide instance; it has no state.
  static RealClock* Get() {
    static RealClock clock;
    return &clock;
  }
};

// A clock that moves only when slept on or advanced: SleepUntil jumps to t at once. Both
// Now() and WallNow() move together; WallNow starts at 2024-01-01T00:00:00Z.
class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::steady_clock::time_point(elapsed_);
  }
  std::chrono::system_clock::time_point WallNow() override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::system_clock::time_point(std::chrono::seconds(1704067200)) +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed_);
  }
  void SleepUntil(std::chrono::steady_clock::time_point t) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (t.time_since_epoch() > elapsed_) elapsed_ = t.time_since_epoch();
  }
  void Advance(std::chrono::steady_clock::duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    elapsed_ += d;
  }

 private:
  std::mutex mu_;
  std::chrono::steady_clock::duration elapsed_{std::chrono::hours(1)};
};

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_CLOCK_H_
