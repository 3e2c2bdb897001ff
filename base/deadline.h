// A time budget for the work of the current thread: the daemon sets one around each read it
// answers (a report, a listing, a query), and the long walks over the store (the change reports,
// the repository reports) check it between blocks, so that a read past its budget stops with a
// reason instead of holding a reader for minutes. Without a budget set, CheckDeadline is always
// OK (the command line's reports run to the end).
#ifndef SHINGLED_BASE_DEADLINE_H_
#define SHINGLED_BASE_DEADLINE_H_

#include <chrono>
#include <string>
#include <utility>

#include "base/status.h"

namespace shingled {

namespace deadline_internal {
struct Budget {
  std::chrono::steady_clock::time_point at;
  std::string what;  // names the budget in the error, e.g. "server.read_budget_ms = 60000"
};
inline thread_local const Budget* current = nullptr;
}  // namespace deadline_internal

// Sets the current thread's budget for its lifetime (and restores the one before).
class ScopedDeadline {
 public:
  ScopedDeadline(std::chrono::steady_clock::time_point at, std::string what)
      : budget_{at, std::move(what)}, previous_(deadline_internal::current) {
    deadline_internal::current = &budget_;
  }
  ~ScopedDeadline() { deadline_internal::current = previous_; }
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

 private:
  deadline_internal::Budget budget_;
  const deadline_internal::Budget* previous_;
};

// ResourceExhausted, naming the budget, once the current thread's budget is spent; else OK.
inline Status CheckDeadline() {
  const deadline_internal::Budget* b = deadline_internal::current;
  if (b == nullptr || std::chrono::steady_clock::now() < b->at) return OkStatus();
  return ResourceExhaustedError("this read took longer than its time budget (" + b->what +
                                "); narrow it, or retry when the server is less busy");
}

}  // namespace shingled

#endif  // SHINGLED_BASE_DEADLINE_H_
